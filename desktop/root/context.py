"""The composition root: the one place that builds the app's objects and wires them.

Nothing else constructs settings, the catalog, the resolver or the scheduler; commands,
the server and the GUI receive them from an ``AppContext``. Tests build their own
context with fakes where needed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from desktop.base.audit import Auditor
from desktop.base.config import (
    EffectiveSettings,
    Paths,
    PolicySource,
    ServerSettings,
    Settings,
    apply_changes,
    load_settings,
    save_user_settings,
)
from desktop.base.defaults import DEFAULT_EMBEDDING_MODEL
from desktop.base.errors import EdgeDeskError
from desktop.base.net import NetGate, log_path_in, quiet_libraries
from desktop.base.private import repair_tree, restrict_new_files
from desktop.catalog import GPU, Catalog, Hardware, InstalledIndex, detect_hardware, load_catalog
from desktop.datafolder import (
    DataFolderLock,
    check_passphrase,
    data_alone,
    open_data_folder,
    relocate_at_start,
    settled_key,
    switch_open,
)
from desktop.datafolder import ProgressFn as MoveProgress
from desktop.engine import ImageLimits, RemotePlan, Scheduler, image_limits
from desktop.policy import MachinePolicy, load_machine_policy, open_audit, remote_call_observer
from desktop.resolve import ModelResolver
from desktop.root.members import Lazies, lazy
from desktop.root.server_handle import ServerHandle
from desktop.upkeep import Housekeeping, MaintenanceReport, maintain, retained_at_open

if TYPE_CHECKING:  # heavy modules are imported on first use: start-up stays fast
    from desktop.base.net import Transport
    from desktop.catalog import Downloader, HubClient
    from desktop.chat import DocumentTools
    from desktop.engine import BrokenFile, Engine, ModelSpec
    from desktop.remote import RemoteModels, RemoteRegistry
    from desktop.retrieval import Library, Searcher
    from desktop.server import KeyStore, ServerRunner
    from desktop.store import (
        AtRest,
        ChatStore,
        Database,
        DatabaseKey,
        ResponseStore,
        UsageRecorder,
        UsageRow,
        UsageStore,
    )
    from desktop.tools import McpClients, ServerList, ToolBox


# Settings read once at start by what is not a member (the window's language, the data
# folder): they apply at the next start.
RESTART_KEYS = frozenset({"language", "data_location"})
IMAGES = ("image_max_mb", "image_max_megapixels")


def engine_gpus() -> list[GPU]:
    """The GPUs llama.cpp's backend will offload to, with the memory it reports free."""
    from desktop.engine import GPU_BACKENDS, gpu_devices

    return [
        GPU(
            d.description or d.name,
            d.total_bytes,
            d.free_bytes,
            backend=GPU_BACKENDS.get(d.backend, d.backend.lower()),
        )
        for d in gpu_devices()
    ]


def probe_hardware() -> Hardware:
    """This machine's RAM and GPUs, GPU memory as the llama.cpp backend reports it."""
    from desktop.engine import repack_types

    return detect_hardware(gpu_probe=engine_gpus, repack_probe=repack_types)


# What members take in place when their settings change (declared with ``apply``).
def _net_mode(ctx: AppContext, net: NetGate) -> None:
    """The gate's offline and download switches follow the settings at once."""
    net.offline = ctx.settings.offline
    net.allow_downloads = ctx.settings.allow_downloads


def _keep_alive(ctx: AppContext, scheduler: Scheduler) -> None:
    """The keep-alive clock of models loaded from now on."""
    scheduler.keep_alive_s = ctx.settings.engine.keep_alive_s


def _default_embedding(ctx: AppContext, library: Library) -> None:
    """The embedding model new collections get."""
    library.default_model = ctx.settings.embedding_model or DEFAULT_EMBEDDING_MODEL


@dataclass
class AppContext:
    """Everything a command, the server or the window needs, built lazily and once.

    Each ``@lazy`` member declares beside its builder the settings it is rebuilt on or
    takes in place, the members it is built from (``needs``) or calls later (``uses``),
    and how it closes (``desktop.root.members``): ``apply_settings`` and ``close`` follow
    those declarations and nothing else. Threads: members may be built and used from any
    thread (a first build runs once); ``apply_settings``, ``unlock``, ``switch_encryption``
    and ``close`` from one thread at a time (the window's, or the command's).
    """

    paths: Paths
    effective: EffectiveSettings
    catalog: Catalog
    hardware_probe: Callable[[], Hardware] = probe_hardware
    policy_problem: str | None = None  # set when the machine policy is invalid (fail closed)
    notice: str | None = None  # what happened to a requested data move, shown once
    # Held for the context's life so a move waits for this process.
    data_lock: DataFolderLock | None = None
    # The database passphrase `edgedesk unlock` asked for (held in memory only).
    passphrase: str | None = None
    # Where a one-time note for the user goes (a command's stderr); None: nowhere.
    tell: Callable[[str], None] | None = None
    lazies: Lazies = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.lazies = Lazies(self)  # one holder per @lazy member below

    @property
    def settings(self) -> Settings:
        """The settings in force (user, environment, flags and policy merged)."""
        return self.effective.settings

    @property
    def image_limits(self) -> ImageLimits:
        """The caps on one attached picture in force (settings, forced by the ImageMaxMB /
        ImageMaxMegapixels policy; never above the engine's ``HARD_LIMITS``): the one
        value the server, the chat core (window, ``edgedesk chat``) and ``run`` check."""
        return image_limits(self.settings.image_max_mb, self.settings.image_max_megapixels)

    @lazy()
    def hardware(self) -> Hardware:
        """This machine's RAM and GPUs (probed once)."""
        return self.hardware_probe()

    @lazy()
    def gpu_offload(self) -> bool:
        """Whether the installed llama.cpp can offload to a GPU."""
        from desktop.engine import gpu_offload_supported

        return gpu_offload_supported()

    @lazy(
        needs=("hardware", "gpu_offload", "installed"),
        uses=("remote_directory",),
        applied_on=("*",),
        apply=lambda ctx, resolver: resolver.apply(ctx.settings),  # the next load's plan
    )
    def resolver(self) -> ModelResolver:
        """Model reference -> fitted load plan."""
        resolver = ModelResolver(
            catalog=self.catalog,
            paths=self.paths,
            engine_settings=self.settings.engine,
            hardware=self.hardware,
            gpu_offload=self.gpu_offload,
            installed=self.installed.lookup,
            projectors=self.installed.projector_of,
            remote=lambda ref: self.remote_directory.spec(ref),  # noqa: PLW0108 - late: uses
        )
        resolver.apply(self.settings)
        return resolver

    @lazy(rebuilt_on=("remote_endpoints", "allow_user_remotes"))
    def remote_registry(self) -> RemoteRegistry:
        """Remote engines: IT's (policy RemoteEndpoints) and the user's own."""
        from desktop.remote import RemoteRegistry

        return RemoteRegistry(
            self.paths.config_dir / "remotes.json",
            policy_entries=self.settings.remote_endpoints,
            allow_user=self.settings.allow_user_remotes,
        )

    @lazy(rebuilt_on=("mcp_servers", "allow_user_mcp", "mcp_require_approval", "offline"))
    def tool_servers(self) -> ServerList:
        """MCP tool servers: IT's (policy McpServers) and the user's own (mcp.json)."""
        from desktop.tools import SERVERS_FILE, McpPolicy, ServerList

        settings = self.settings
        return ServerList(
            self.paths.config_dir / SERVERS_FILE,
            McpPolicy(
                tuple(settings.mcp_servers),
                settings.allow_user_mcp,
                settings.mcp_require_approval,
                settings.offline,
            ),
        )

    @lazy(needs=("net",), close=lambda clients: clients.close())  # their processes end too
    def mcp_clients(self) -> McpClients:
        """Running MCP sessions (their own asyncio thread, started on first use)."""
        from desktop.tools import McpClients

        return McpClients(gate=self.net, log_dir=self.paths.log_dir)

    @lazy(needs=("tool_servers", "mcp_clients"), uses=("searcher", "library"))
    def toolbox(self) -> ToolBox:
        """The tools chats may call: the document tools, then allowed MCP servers'."""
        from desktop.tools import APPROVALS_FILE, LOG_NAME, Approvals, ToolAudit, ToolBox

        return ToolBox(
            self.tool_servers,
            self.mcp_clients,
            ToolAudit(self.paths.log_dir / LOG_NAME),
            self.document_tools().builtins(),
            approvals=Approvals(self.paths.config_dir / APPROVALS_FILE),
        )

    def document_tools(self) -> DocumentTools:
        """search_documents, read_document_passage and list_collections over the library."""
        from desktop.chat import DocumentAccess, DocumentTools

        return DocumentTools(
            DocumentAccess(
                lambda q, cols, k, cancel: self.searcher.search(q, list(cols), k=k, cancel=cancel),
                lambda ids: self.searcher.fetch(ids),  # noqa: PLW0108 - late: the current one
                lambda: self.library.collections(),  # noqa: PLW0108 - late
            )
        )

    @lazy(rebuilt_on=("ca_bundle", "proxy"))
    def transport(self) -> Transport:
        """TLS roots (OS store + CaBundle) and proxy for outbound HTTPS."""
        from desktop.base.net import Transport

        return Transport(ca_bundle=self.settings.ca_bundle, proxy=self.settings.proxy)

    # Its cached listing goes with a change of remotes (needs), offline or allowed models.
    @lazy(
        rebuilt_on=("allowed_models", "server.generation_timeout_s", "offline"),
        needs=("remote_registry", "net", "transport"),
    )
    def remote_directory(self) -> RemoteModels:
        """Remote models under the settings in force: resolve, list and open NAME/MODEL."""
        from desktop.remote import RemoteModels

        return RemoteModels(
            self.remote_registry,
            self.net,
            self.transport,
            allowed_models=self.settings.allowed_models,
            timeout_s=self.settings.server.generation_timeout_s,
        )

    def remote_models(self, *, max_age_s: float | None = None) -> dict[str, list[str] | str]:
        """Each remote's NAME/MODEL ids, or why it could not be listed (cached a while)."""
        return self.remote_directory.listed(max_age_s=max_age_s)

    def remote_model_ids(self) -> list[str]:
        """Every NAME/MODEL the reachable remotes list (none offline: nothing is asked)."""
        return self.remote_directory.ids()

    def load_model(self, spec: ModelSpec) -> Engine:
        """The scheduler's load function: a local GGUF, or a remote engine's model."""
        if isinstance(spec.plan, RemotePlan):
            return self.remote_directory.engine(spec, spec.plan)
        from desktop.engine import require_llama_cpp

        require_llama_cpp()  # a library that cannot load is said as such, not as a bad model
        from desktop.engine import load_engine

        key: bytes | None = None
        on_disk = not self.settings.ephemeral_only  # EphemeralOnly: nothing on disk
        if on_disk:
            try:
                key = self.prompt_cache_key
            except EdgeDeskError:
                # The encrypted database's key is not at hand (no passphrase given to this
                # command): the model still runs, its conversations kept in memory only.
                on_disk = False
        if not on_disk and spec.local is not None:
            spec = replace(spec, plan=replace(spec.local, prompt_cache_dir=None))
        links = self.paths.cache_dir / "model-links"
        if not self.settings.engine.worker_process:
            return load_engine(spec, links_dir=links, prompt_cache_key=key)
        from desktop.engine import start_worker, worker_log

        return start_worker(
            spec,
            log_path=worker_log(self.paths.log_dir, spec.model_id),
            links_dir=links,
            prompt_cache_key=key,
            # The watchdog's call deadline (streams carry their own timeout).
            call_timeout_s=self.settings.server.generation_timeout_s,
        )

    @lazy(needs=("database_key", "chat_store"))
    def prompt_cache_key(self) -> bytes | None:
        """The key sealing the disk prompt cache (AES-GCM): derived from the encrypted
        database's key (HKDF), None while the database is plaintext. The engine gets it
        from here and never reads the keyring; KeyMissing when the key is gone."""
        from desktop.store import derived_key

        key = self.database_key
        if key is None:
            return None
        if key.passphrase:
            _ = self.chat_store  # the derivation reads the salt of the (created) file
        return derived_key(key, self.paths.database, "prompt cache")

    def forget_saved_conversations(self) -> None:
        """Drop every copy of a conversation kept for reuse outside the database: loaded
        models' saved states (through the scheduler, before their next request) and the
        disk prompt cache. After a deletion, a retention pass or an encryption change:
        saved states are keyed by tokens, not by conversation, so all of them go (the
        next turn of each chat reads its prompt again, once)."""
        if (scheduler := AppContext.scheduler.of(self).if_built()) is not None:
            scheduler.forget_saved()
        shutil.rmtree(self.paths.prompt_cache_dir, ignore_errors=True)

    @lazy()
    def audit(self) -> Auditor:
        """The audit log (``NoAudit`` when off); notes a policy change since it last looked."""
        return open_audit(self.effective, self.paths.log_dir / "audit", self.policy_problem)

    @lazy(needs=("audit",), applied_on=("offline", "allow_downloads"), apply=_net_mode)
    def net(self) -> NetGate:
        """The one gate for outbound connections (offline mode, policy, network log)."""
        gate = NetGate(
            log_path_in(self.paths.log_dir),
            offline=self.settings.offline,
            allow_downloads=self.settings.allow_downloads,
        )
        gate.observer = remote_call_observer(self.audit)  # remote.call audit events
        return gate

    @lazy()
    def installed(self) -> InstalledIndex:
        """The index of downloaded and imported models."""
        return InstalledIndex(
            self.paths.data_dir / "installed.json",
            self.paths.models_dir,
            reserved_ids={entry.id for entry in self.catalog},
        )

    @lazy(rebuilt_on=("hub_endpoint",), needs=("net", "transport"))
    def hub(self) -> HubClient:
        """Hub metadata (the configured mirror, else HF_ENDPOINT, else huggingface.co)."""
        from desktop.catalog import HubClient, resolve_endpoint

        return HubClient(
            self.net,
            resolve_endpoint(self.settings.hub_endpoint, os.environ),
            transport=self.transport,
        )

    def downloader(self, **options: Any) -> Downloader:
        """A downloader carrying the Hub token (read from the keyring only now)."""
        from desktop.catalog import Downloader

        return Downloader(
            self.net,
            quarantine_dir=self.paths.models_dir / ".quarantine",
            lock_dir=self.paths.cache_dir / "locks",
            token=self.hub.token(),
            **{"transport": self.transport, **options},
        )

    @lazy(
        needs=("resolver",),
        uses=("remote_directory", "prompt_cache_key"),  # its load function's
        applied_on=("engine.keep_alive_s",),
        apply=_keep_alive,
        # Read once into a scheduler that exists: memory limits and the queue's length.
        restart_on=("engine.memory_budget_gb", "engine.max_loaded_models", "server.queue_max"),
        close=lambda scheduler: scheduler.close(),  # the models
    )
    def scheduler(self) -> Scheduler:
        """The single gate in front of llama.cpp."""
        # The resolver may probe the hardware first (a second or more, often on a worker):
        # read the settings after it, so a change applied meanwhile is not lost.
        resolver = self.resolver
        engine = self.settings.engine
        budget = int(engine.memory_budget_gb * 1024**3) if engine.memory_budget_gb else None
        return Scheduler(
            self.load_model,
            resolver,
            budget_bytes=budget,
            max_loaded=engine.max_loaded_models,
            keep_alive_s=engine.keep_alive_s,
            queue_max=self.settings.server.queue_max,
            broken=self.broken_models,
        )

    @property
    def broken_models(self) -> BrokenFile:
        """Models that crashed their worker on every load (``models info``, Models page)."""
        from desktop.engine import BrokenFile

        return BrokenFile(self.paths.data_dir / "broken-models.json")

    def preload(self) -> dict[str, str]:
        """Load ``engine.preload``'s models (blocking); returns failures: model -> message.

        A bad preload entry must not stop the app from starting.
        """
        failures: dict[str, str] = {}
        for model in self.settings.engine.preload:
            try:
                self.scheduler.load(model)
            except EdgeDeskError as exc:
                failures[model] = exc.message
        return failures

    @lazy(needs=("audit",))
    def at_rest(self) -> AtRest:
        """The database's encryption: its state, its key, switching it on and off."""
        from desktop.store import AtRest

        return AtRest(
            self.paths.database, passphrase=self.passphrase, audit=self.audit, tell=self.tell
        )

    @lazy(needs=("at_rest",))
    def database_key(self) -> DatabaseKey | None:
        """The key of the encrypted database (None: plaintext), settled before it opens.

        Finishes a switch a killed ``data encrypt|decrypt`` left half done, encrypts a new
        install where the OS keyring works, and under policy EncryptAtRest encrypts a
        plaintext database or refuses to start saying why. KeyMissing when the key is gone.
        """
        before = self.at_rest.state()
        key = settled_key(self.at_rest, self.settings.encrypt_at_rest, self.data_lock)
        if key is not None and before == "plaintext":
            # Encrypted just now (policy EncryptAtRest): what was saved in the clear goes.
            self.forget_saved_conversations()
        return key

    def unlock(self, passphrase: str) -> None:
        """Use ``passphrase`` for the database from now on, once it is checked to open it.

        KeyRejected (nothing changed) when it does not; call before the database opens.
        """
        check_passphrase(self.paths.database, passphrase)
        self.passphrase = passphrase
        self._rekeyed()

    def choose_passphrase(self, passphrase: str) -> None:
        """Encrypt with this new ``passphrase`` where no keyring keeps a key (policy
        EncryptAtRest at start); it takes effect when the database key is next settled."""
        self.passphrase = passphrase
        self._rekeyed()

    def _rekeyed(self) -> None:
        """The database's key changed (a passphrase given, a switch): what was built
        from the old one is built again on next use, the prompt cache's key included."""
        for member in (AppContext.at_rest, AppContext.database_key, AppContext.prompt_cache_key):
            member.of(self).reset()

    def switch_encryption(
        self,
        encrypt: bool,
        *,
        passphrase: str | None = None,
        step: Callable[[str], None] = lambda name: None,
    ) -> None:
        """Encrypt (a keyring key, or ``passphrase``) or decrypt the database in place.

        What ``edgedesk data encrypt|decrypt`` do, while this process has the database
        open: every open connection is closed for the switch (their callers wait) and
        opened again with the new key (``desktop.datafolder``). Blocking: the window
        calls it on a worker. ConfigError when policy EncryptAtRest forbids decrypting or
        another EdgeDesk uses the data; the database is then unchanged.
        """
        open_dbs = self.databases()  # kept API responses included (the chat store's)

        def new_key() -> DatabaseKey | None:
            AppContext.database_key.of(self).reset()
            AppContext.prompt_cache_key.of(self).reset()
            return self.database_key

        # Loaded models keep their (old) key until reloaded: they and the disk cache
        # forget what they saved, before and after, so nothing outlives the switch
        # sealed under the old key or in the clear.
        self.forget_saved_conversations()
        switch_open(
            self.at_rest,
            encrypt,
            required=self.settings.encrypt_at_rest is True,
            open_dbs=open_dbs,
            new_key=new_key,
            lock=self.data_lock,
            passphrase=passphrase,
            step=step,
        )
        self.forget_saved_conversations()
        if passphrase is not None:
            self.passphrase = passphrase

    def data_alone(self) -> contextlib.AbstractContextManager[None]:
        """This process alone on the data folder for the block (a database conversion).

        ConfigError when another EdgeDesk window or server uses it; shared again after.
        """
        return data_alone(self.data_lock)

    @lazy(
        needs=("database_key", "audit"),
        close=lambda store: store.close(),
        database=lambda store: store.database,
    )
    def chat_store(self) -> ChatStore:
        """Saved conversations; the retention period is applied when it is first opened."""
        from desktop.store import open_chat_store

        store = open_chat_store(
            self.paths.database,
            ephemeral_only=self.settings.ephemeral_only,
            key=None if self.settings.ephemeral_only else self.database_key,
        )
        store.on_deleted = self.forget_saved_conversations
        return retained_at_open(store, self.settings.retention_days, self.audit, "conversations")

    @lazy(needs=("chat_store", "audit"))  # its connection is the chat store's
    def response_store(self) -> ResponseStore:
        """Responses kept by the Responses API (none under EphemeralOnly); retention applied.

        Hidden conversations of ``chat_store``, over its connection: closing, encrypting
        or decrypting the chat store's database covers them.
        """
        from desktop.store import ResponseStore

        store = ResponseStore.over(self.chat_store)
        store.on_deleted = self.forget_saved_conversations
        return retained_at_open(store, self.settings.retention_days, self.audit, "responses")

    @lazy(needs=("database_key",), close=lambda db: db.close(), database=lambda db: db)
    def documents_db(self) -> Database:
        """The database connection used for document collections and their search."""
        from desktop.store import open_database

        return open_database(self.paths.database, key=self.database_key)

    @lazy(
        needs=("database_key",),
        close=lambda store: store.database.close(),
        database=lambda store: store.database,
    )
    def usage_store(self) -> UsageStore:
        """Content-free usage of the API, over a connection of its own to the app database."""
        from desktop.store import UsageStore, open_database

        return UsageStore(open_database(self.paths.database, key=self.database_key))

    @lazy(needs=("usage_store",), close=lambda recorder: recorder.close())
    def usage_recorder(self) -> UsageRecorder:
        """Writes usage rows on a thread of its own, in batches (``record_usage``, servers)."""
        from desktop.store import UsageRecorder

        return UsageRecorder(self.usage_store)

    def usage_sink(self) -> UsageRecorder | None:
        """The recorder while usage is collected (setting ``collect_usage``, policy
        CollectUsage); None when it is off."""
        return self.usage_recorder if self.settings.collect_usage else None

    def record_usage(self, row: UsageRow) -> None:
        """Queue one usage row (the window's own chats) unless collection is off."""
        sink = self.usage_sink()
        if sink is not None:
            sink.record(row)

    @lazy(
        needs=("documents_db",),
        uses=("scheduler", "resolver"),
        applied_on=("embedding_model",),
        apply=_default_embedding,
    )
    def library(self) -> Library:
        """Document collections and their (incremental) indexing."""
        from desktop.retrieval import Library, SchedulerEmbedder

        return Library(
            self.documents_db,
            lambda m: SchedulerEmbedder(self.scheduler, m),
            default_model=self.settings.embedding_model or DEFAULT_EMBEDDING_MODEL,
            lock_dir=self.paths.data_dir / "locks",
            check_model=lambda m: self.resolver.check_embedding(m),  # noqa: PLW0108 - late
            allow_hard_links=lambda: self.settings.documents.allow_hard_links,
        )

    @lazy(rebuilt_on=("reranker_model",), needs=("documents_db",), uses=("scheduler",))
    def searcher(self) -> Searcher:
        """Hybrid search over the document collections."""
        from desktop.retrieval import Searcher

        model = self.settings.reranker_model
        # Late-bound: making a searcher must not build the scheduler (and llama.cpp).
        return Searcher(
            self.documents_db,
            lambda m, t, cancel: self.scheduler.embed(m, t, cancel),  # noqa: PLW0108 - late
            reranker=(lambda q, passages: self.scheduler.rerank(model, q, passages))
            if model
            else None,
        )

    @lazy(needs=("audit",), close=lambda keys: keys.flush())
    def key_store(self) -> KeyStore:
        """The local API's keys, in the data folder in use (it moves with the data)."""
        from desktop.server import key_store

        return key_store(
            self.paths.data_dir,
            max_lifetime_days=self.settings.server.max_key_lifetime_days,
            audit=self.audit,
        )

    # Stopped first at close: a maintenance pass uses the stores and the library.
    @lazy(
        uses=("scheduler", "chat_store", "response_store", "library", "audit", "usage_store"),
        close=lambda housekeeping: housekeeping.stop(),
    )
    def housekeeping(self) -> Housekeeping:
        """Keep-alive reaping and hourly maintenance; started by the window or ``serve``."""

        def reap() -> list[str]:
            # A context that never built the scheduler has no model to unload.
            return self.scheduler.reap_idle() if self.scheduler_built else []

        return Housekeeping(reap, self.maintenance)

    def maintenance(self, cancel: threading.Event | None = None) -> MaintenanceReport:
        """Apply the retention periods (chats, usage), roll usage up, rescan (blocking)."""
        return maintain(
            self.chat_store,
            self.response_store,
            self.library,
            self.settings.retention_days,
            cancel,
            audit=self.audit,
            usage=self.usage_store,
            usage_retention_days=self.settings.usage_retention_days,
        )

    @property
    def scheduler_built(self) -> bool:
        """Whether the scheduler exists (asking it now neither probes nor loads llama.cpp)."""
        return AppContext.scheduler.of(self).built

    @property
    def resolver_built(self) -> bool:
        """Whether the resolver exists (asking it now does not probe the hardware)."""
        return AppContext.resolver.of(self).built

    @lazy(
        rebuilt_on=("server.*", "collect_usage", *IMAGES),
        kept_while=lambda runner: runner.running,
        needs=(
            "scheduler",
            "resolver",
            "installed",
            "key_store",
            "response_store",
            "audit",
            "tool_servers",
            "toolbox",
            "usage_recorder",
        ),
        uses=("remote_directory", "searcher", "library"),
        close=lambda runner: runner.stop(),
    )
    def api_server(self) -> ServerRunner:
        """The window's local API server runner, held for ``server`` (not started).

        A stopped one is rebuilt when server settings change; a running one keeps its
        settings until it is started again (``ServerHandle.to_start``).
        """
        return self.new_api_server()

    @property
    def server(self) -> ServerHandle:
        """The app's local API server: start, stop, whether it runs, its address."""
        return ServerHandle(
            AppContext.api_server.of(self), lambda: (self.settings.server, self.image_limits)
        )

    def new_api_server(
        self, *, settings: ServerSettings | None = None, model_paths: Sequence[Path] = ()
    ) -> ServerRunner:
        """A new server runner over this context, not held by it (``edgedesk serve``, bench).

        Housekeeping is ``self.housekeeping``'s.
        """
        from desktop.server import (
            ACCESS_LOG_FILE,
            AccessLog,
            McpEndpoint,
            ResolverDirectory,
            ServerRunner,
            services_for,
        )

        server = settings or self.settings.server
        for path in model_paths:
            self.resolver.register(path)
        keys = self.key_store if server.require_key else None
        models = ResolverDirectory(
            self.resolver,
            lambda: [m.id for m in self.installed.all()],
            remote_ids=self.remote_model_ids,
        )
        return ServerRunner(
            services_for(
                self.scheduler,
                models,
                server,
                keys,
                access_log=AccessLog(self.paths.log_dir / ACCESS_LOG_FILE),
                response_store=self.response_store,
                audit=self.audit,
                mcp=McpEndpoint(self.document_tools()),
                tool_servers=self.tool_servers,
                toolbox=self.toolbox,
                image_limits=self.image_limits,
                usage=self.usage_sink(),
            )
        )

    def apply_settings(self, changes: Mapping[str, Any]) -> list[str]:
        """Save ``changes`` (dotted keys) and apply them now; returns the keys needing a restart.

        The one place settings change while the app runs (window, server screen): every
        member built from settings takes the new values in place or is rebuilt on next
        use, as it declares (so, for one, ticking Offline stops Hub searches and
        downloads before the next request). A running API server keeps its settings: the
        keys reaching it need a restart (see ``api_server``). Raises ConfigError for
        locked keys (nothing is saved then). Call from one thread at a time (the
        window's); workers pick the new objects up on their next call.
        """
        save_user_settings(self.paths, changes, self.effective)
        self.effective = apply_changes(self.effective, changes)
        restart = set(RESTART_KEYS.intersection(changes))
        restart.update(self.lazies.apply(changes))
        return sorted(restart)

    def databases(self) -> list[Database]:
        """The open database connections (what an encryption switch closes and reopens)."""
        return cast("list[Database]", self.lazies.databases())

    def close(self) -> None:
        """Release what the members hold, as they declare: each before what it needs or
        uses (housekeeping and the server before the models and stores), models before
        the database connections."""
        self.lazies.close()


def build_context(
    *,
    environ: Mapping[str, str] | None = None,
    cli_settings: Mapping[str, Any] | None = None,
    policy: PolicySource | None = None,
    apply_moves: bool = False,
    move_progress: MoveProgress | None = None,
    require_data: bool = True,
    passphrase: str | None = None,
    tell: Callable[[str], None] | None = None,
) -> AppContext:
    """Build the app's context from the environment (``EDGEDESK_HOME``), flags and policy.

    Without an explicit ``policy`` the OS's managed policy is read (it always wins). With
    ``apply_moves`` (the window, ``edgedesk data move|use``) a data move the user asked for
    happens here, before anything opens the data folder. A user-chosen data folder that
    is missing raises ConfigError, unless ``require_data`` is off (to choose another).
    """
    if environ is None:
        quiet_libraries(os.environ)  # before any library that phones home is imported
    restrict_new_files()  # chats, documents, logs and exports are the owner's alone
    base = Paths.from_env(environ)
    base.ensure(data=False)
    chosen: PolicySource = load_machine_policy() if policy is None else policy

    def settings() -> EffectiveSettings:
        return load_settings(base, environ=environ, cli=cli_settings, policy=chosen)

    effective, notice = settings(), None
    if apply_moves:
        start = relocate_at_start(
            base.located(effective.settings.data_location), effective, settings, move_progress
        )
        effective, notice = start.effective, start.notice
    paths, effective, lock = open_data_folder(base, effective, settings, require_data=require_data)
    # Checked and repaired at every start: data from an older version, a copy or a
    # restore may still be readable by other local users.
    repair_tree((paths.data_dir, paths.log_dir, paths.config_dir, paths.cache_dir))
    problem = chosen.problem if isinstance(chosen, MachinePolicy) else None
    return AppContext(
        paths=paths,
        effective=effective,
        catalog=load_catalog(),
        policy_problem=problem,
        notice=notice,
        data_lock=lock,
        passphrase=passphrase,
        tell=tell,
    )
