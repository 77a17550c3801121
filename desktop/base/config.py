"""Where EdgeDesk keeps its files, and the typed, validated settings it runs with.

Settings are layered, lowest first: built-in defaults, the user's ``settings.toml``,
environment variables, command-line flags, and finally the machine policy. The policy
layer is a seam (``PolicySource``) that a later module fills from the OS's managed
location; whatever it sets is *locked* and no lower layer can change it.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

import platformdirs
import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from desktop.base.defaults import (
    DEFAULT_PARALLEL,
    GENERATION_TIMEOUT_S,
    KEEP_ALIVE_S,
    MAX_LOADED_MODELS,
    MAX_TOKENS_LIMIT,
    QUEUE_MAX,
)
from desktop.base.errors import ConfigError
from desktop.base.private import private_folder

APP_NAME = "EdgeDesk"
HOME_ENV = "EDGEDESK_HOME"
OFFLINE_ENV = "EDGEDESK_OFFLINE"


def user_path(text: str | os.PathLike[str]) -> Path:
    """A path a person typed, with ``~`` and ``~name`` expanded where they name a home.

    A ``~name`` of no such user, or ``~`` with no home to find, stays as written (as
    shells leave it): pathlib's ``expanduser`` raises RuntimeError there, which took the
    whole command down (exit 70) for a file named ``~x``."""
    return Path(os.path.expanduser(os.fspath(text)))


def expand_path(value: str) -> Path:
    """A folder setting as a path: ``~`` and environment variables expanded, so one
    machine policy can name a per-user folder (``%LOCALAPPDATA%\\EdgeDesk``, ``$HOME/x``)."""
    return user_path(os.path.expandvars(value))


@dataclass(frozen=True)
class Paths:
    """Every folder the app writes to; ``EDGEDESK_HOME`` puts them all under one root."""

    config_dir: Path
    data_dir: Path
    cache_dir: Path
    log_dir: Path

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Paths:
        """Resolve the folders from ``EDGEDESK_HOME`` if set, else the OS conventions."""
        env = os.environ if environ is None else environ
        home = env.get(HOME_ENV)
        if home:
            root = user_path(home).resolve()
            return cls(root / "config", root / "data", root / "cache", root / "logs")
        dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
        return cls(
            Path(dirs.user_config_dir),
            Path(dirs.user_data_dir),
            Path(dirs.user_cache_dir),
            Path(dirs.user_log_dir),
        )

    @property
    def settings_file(self) -> Path:
        """The user's editable settings file."""
        return self.config_dir / "settings.toml"

    @property
    def models_dir(self) -> Path:
        """Where downloaded models live, in a readable ``repo/file`` layout."""
        return self.data_dir / "models"

    @property
    def prompt_cache_dir(self) -> Path:
        """Where loaded models keep conversations' KV caches for the next load (one
        folder per model file; sealed while the database is encrypted)."""
        return self.cache_dir / "prompt-cache"

    @property
    def database(self) -> Path:
        """The one SQLite database for conversations, documents and indexes."""
        return self.data_dir / "edgedesk.db"

    def located(self, data_location: str | None) -> Paths:
        """These paths with the data folder moved to ``data_location`` (None: unchanged)."""
        if not data_location:
            return self
        return replace(self, data_dir=expand_path(data_location))

    def ensure(self, *, data: bool = True) -> None:
        """Create the folders owner-only (idempotent); ``data=False`` skips the data folder."""
        for folder in (
            self.config_dir,
            self.cache_dir,
            self.log_dir,
            *((self.data_dir,) if data else ()),
        ):
            try:
                private_folder(folder)
            except OSError as exc:  # EDGEDESK_HOME naming a file, a read-only place…
                raise ConfigError(
                    f"cannot create the folder {folder} ({exc.strerror or exc}); check "
                    f"{HOME_ENV} or the data location, and that you may write there"
                ) from None


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


MIN_BODY_BYTES = 1024  # the smallest server.max_body_bytes (the settings and --max-body-bytes)


class ServerSettings(_Section):
    """The local OpenAI-compatible server."""

    enabled: bool = True  # IT can forbid the server entirely (policy ServerAllowed)
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=1, le=65535)
    require_key: bool = True
    allowed_origins: list[str] = Field(default_factory=list)
    start_with_app: bool = False
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=MIN_BODY_BYTES)
    max_tokens_limit: int = Field(default=MAX_TOKENS_LIMIT, ge=1)
    generation_timeout_s: float = Field(default=GENERATION_TIMEOUT_S, gt=0)
    queue_max: int = Field(default=QUEUE_MAX, ge=1)
    requests_per_minute: int | None = Field(default=None, ge=1)
    tokens_per_minute: int | None = Field(default=None, ge=1)
    # Policy MaxKeyLifetimeDays: every API key expires within this many days of creation.
    max_key_lifetime_days: int | None = Field(default=None, ge=1)
    response_cache: bool = False
    cache_entries: int = Field(default=256, ge=1)
    ollama_version: str = Field(
        default="0.13.5",
        pattern=r"^\d+\.\d+\.\d+$",
        description="What Ollama's /api/version answers; clients refuse older servers "
        "(Codex --oss needs 0.13.4 or newer)",
    )


class DocumentSettings(_Section):
    """How document collections are indexed (``desktop/retrieval``)."""

    # A file with other hard links may be a second name for a file outside the indexed
    # folder; such files are skipped (and reported) unless this is on.
    allow_hard_links: bool = False


class EngineSettings(_Section):
    """How models are loaded and kept."""

    keep_alive_s: float = Field(default=KEEP_ALIVE_S, ge=0)
    preload: list[str] = Field(default_factory=list)
    context_length: int | None = Field(
        default=None,
        ge=256,
        le=1_048_576,
        description="Context of the KV cache the slots share (one request may use it "
        "all); unset: the model's trained context where memory allows (KV "
        "cache q8_0 first, then a smaller context)",
    )
    gpu_layers: int | None = Field(default=None, ge=0)
    threads: int | None = Field(
        default=None,
        ge=1,
        le=512,
        description="CPU threads for generation; unset: every physical core (like llama-server)",
    )
    batch_threads: int | None = Field(
        default=None,
        ge=1,
        le=512,
        description="CPU threads for prompt processing; unset: the same as threads",
    )
    parallel: int = Field(
        default=DEFAULT_PARALLEL,
        ge=1,
        le=64,
        description="Requests one model serves at once (slots); they share one KV cache "
        "of context_length, so one request may use all of it",
    )
    max_parallel: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="Upper bound on parallel, set by the MaxParallel machine policy",
    )
    memory_budget_gb: float | None = Field(default=None, gt=0)
    max_loaded_models: int = Field(default=MAX_LOADED_MODELS, ge=1)
    cache_type: Literal["auto", "f16", "q8_0"] = Field(
        default="auto",
        description="KV cache element type; auto: f16, or q8_0 where the trained context "
        "does not fit in memory at f16 (before the context is lowered)",
    )
    prompt_lookup_tokens: int | None = Field(
        default=None,
        ge=0,
        le=64,
        description="Prompt-lookup (n-gram) speculative decoding: most tokens guessed "
        "from the prompt per step; 0: off. Unset: per model family, on only where the "
        "rewrite benchmark measured a gain (docs/benchmarks.md)",
    )
    prompt_cache_disk_mb: int = Field(
        default=1024,
        ge=0,
        le=1_048_576,
        description="Disk for conversations' KV caches kept across restarts (in the "
        "cache folder), so an agent session resumes without re-reading its "
        "prompt; 0: off",
    )
    state_cache_mb: int | None = Field(
        default=None,
        ge=0,
        le=1_048_576,
        description="RAM each loaded chat model keeps for conversations pushed out of its "
        "slots, so a conversation that comes back is not read again; unset: 1/32 of this "
        "machine's RAM, at least 64 MiB and at most 2 GiB; 0: off",
    )
    worker_process: bool = Field(
        default=True,
        description="Run each loaded model in a worker process of its own, so that a "
        "crash inside llama.cpp (an assert, out of memory) ends that model's requests "
        "with an error instead of the whole app; off: in this process (debugging)",
    )
    cpu_moe: (
        Literal["auto", "all", "none"] | Annotated[int, Field(ge=0, le=10_000, strict=True)]
    ) = Field(
        default="auto",
        description="Mixture-of-experts models: where their routed experts go. auto: "
        "everything else on the GPU first, then as many layers' experts as fit, the "
        "rest in RAM; all: every expert in RAM (llama-server --cpu-moe); a number N: "
        "the experts of the first N layers in RAM (--n-cpu-moe N); none: whole layers",
    )
    swa_full_cache: bool = Field(
        default=False,
        description="Sliding-window models (Gemma 3, gpt-oss, Mistral...): keep every "
        "position of their sliding-window layers, one full cache per slot, instead of "
        "only the window. Several times the memory; a conversation can then be cut back "
        "anywhere, not only at the end of a prompt (docs/models.md)",
    )


class Settings(_Section):
    """Everything a user can set; unknown keys are rejected so typos are caught."""

    offline: bool = False
    allow_downloads: bool = True
    hub_endpoint: str | None = None
    retention_days: int | None = Field(default=None, ge=1)
    ephemeral_only: bool = False
    # Encryption at rest: None encrypts new installs where the OS keyring works; True
    # (policy EncryptAtRest) requires it; False leaves new installs plaintext.
    encrypt_at_rest: bool | None = None
    # The audit log (desktop/base/audit.py; policy AuditLog, AuditLogPath): off by default;
    # its folder is LOG_DIR/audit unless IT names one.
    audit_log: bool = False
    audit_log_path: str | None = None
    # Content-free usage of the API, one row per request (desktop/store/_usage.py; policy
    # CollectUsage), kept this many days (single rows a week, then by the hour).
    collect_usage: bool = True
    usage_retention_days: int = Field(default=90, ge=1, le=36500)
    allowed_models: list[str] | None = None  # None: any; else ids or file SHA-256 digests
    shared_models_dir: str | None = None
    theme: Literal["system", "light", "dark"] = "system"
    language: Literal["en", "zh_CN"] = "en"
    embedding_model: str | None = None  # new document collections (None: the built-in default)
    reranker_model: str | None = None  # e.g. "bge-reranker-v2-m3": re-orders document hits
    keep_in_tray: bool = False  # closing the window hides it while the server runs
    # Chats, indexes, keys and models; None: the OS default (or EDGEDESK_HOME/data). The
    # window changes it through a move at the next start (desktop/datafolder/_relocate.py).
    data_location: str | None = None
    # Remote engines (desktop/remote): IT's endpoints as NAME=URL, whether users may add
    # their own; extra PEM roots and a proxy for every outbound HTTPS call.
    remote_endpoints: list[str] = Field(default_factory=list)
    allow_user_remotes: bool = True
    ca_bundle: str | None = None
    proxy: str | None = None
    # MCP tool servers (desktop/tools): IT's as NAME=COMMAND or NAME=URL (also the
    # allow-list), whether users' own servers run, whether every MCP call must be approved.
    mcp_servers: list[str] = Field(default_factory=list)
    allow_user_mcp: bool = True
    mcp_require_approval: bool = False
    # Caps on one attached picture (desktop/engine/_images.py), for the APIs, the window
    # and the CLI alike; policy ImageMaxMB / ImageMaxMegapixels. The upper bounds are the
    # engine's own ceiling (engine._images.HARD_LIMITS: 64 MiB, 200 megapixels).
    image_max_mb: int = Field(
        default=20, ge=1, le=64, description="Largest attached picture, in MiB (encoded file size)"
    )
    image_max_megapixels: int = Field(
        default=50,
        ge=1,
        le=200,
        description="Most pixels of an attached picture, in millions (read from its "
        "header before anything is decoded)",
    )
    engine: EngineSettings = Field(default_factory=EngineSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    documents: DocumentSettings = Field(default_factory=DocumentSettings)

    @field_validator("data_location")
    @classmethod
    def _absolute_location(cls, value: str | None) -> str | None:
        if value is not None and not expand_path(value).is_absolute():
            raise ValueError(
                "must be an absolute folder path (~, $HOME or %LOCALAPPDATA% may start it)"
            )
        return value


class PolicySource(Protocol):
    """The machine-wide policy: dotted keys (``server.port``) forced on every user."""

    def forced(self) -> Mapping[str, Any]:
        """Return the values the organisation enforces, by dotted key."""
        ...


@dataclass(frozen=True)
class NoPolicy:
    """No machine policy is in force."""

    def forced(self) -> Mapping[str, Any]:
        """Nothing is forced."""
        return {}


@dataclass(frozen=True)
class EffectiveSettings:
    """The settings in force, where each non-default value came from, and what is locked."""

    settings: Settings
    sources: dict[str, str] = field(default_factory=dict)
    locked: frozenset[str] = frozenset()

    def is_locked(self, key: str) -> bool:
        """Whether the machine policy fixes ``key`` (dotted) so the user cannot change it."""
        return key in self.locked


def _set_dotted(tree: dict[str, object], key: str, value: object) -> None:
    parts = key.split(".")
    node = tree
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"setting '{key}': '{part}' is not a section")
        node = child
    node[parts[-1]] = value


def flatten(tree: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """A nested settings mapping as dotted keys (``server.port``)."""
    flat: dict[str, object] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _validate(tree: Mapping[str, object], origin: str) -> Settings:
    try:
        return Settings.model_validate(tree)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        try:
            shown = repr(first.get("input"))
        except RecursionError:
            shown = "a value nested too deeply"
        if len(shown) > _MAX_ECHO:  # a pasted megabyte is named, not echoed whole
            shown = shown[:_MAX_ECHO] + f"… ({len(shown)} characters)"
        raise ConfigError(
            f"{origin}: '{where}': {first['msg']} (got {shown}); "
            "fix or remove that line and try again"
        ) from None


_MAX_ECHO = 80
MAX_SETTINGS_BYTES = 1024 * 1024  # a settings file is a few lines; refuse a stray huge file


def _settings_text(path: Path, data: bytes) -> str:
    """The file's text: UTF-8 (with or without a BOM) or UTF-16 with a BOM (as Windows
    Notepad saves it); anything else is named with how to fix it."""
    encoding = "utf-16" if data.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {exc.start + 1} cannot be read); "
            "save it as UTF-8 or delete it"
        ) from None


def read_user_file(path: Path) -> dict[str, object]:
    """Parse the user's settings TOML; a syntax error names the file and line."""
    if not path.exists():
        return {}
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SETTINGS_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read settings ({exc.strerror or exc})") from None
    if len(data) > MAX_SETTINGS_BYTES:
        raise ConfigError(
            f"{path}: larger than {MAX_SETTINGS_BYTES // 1024} KB, so not a "
            "settings file; move it away or delete it"
        )
    try:
        return tomllib.loads(_settings_text(path, data))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix the file or delete it") from None
    except RecursionError:
        raise ConfigError(
            f"{path}: nested too deeply to be EdgeDesk settings; fix the file or delete it"
        ) from None


def env_overrides(environ: Mapping[str, str]) -> dict[str, object]:
    """Settings named by environment variables (``EDGEDESK_OFFLINE=1``)."""
    overrides: dict[str, object] = {}
    value = environ.get(OFFLINE_ENV)
    if value is not None and value.strip() != "":
        overrides["offline"] = value.strip().lower() not in {"0", "false", "no", "off"}
    return overrides


def load_settings(
    paths: Paths,
    *,
    environ: Mapping[str, str] | None = None,
    cli: Mapping[str, Any] | None = None,
    policy: PolicySource | None = None,
) -> EffectiveSettings:
    """Merge defaults, user file, environment, CLI flags and machine policy, then validate."""
    env = os.environ if environ is None else environ
    tree: dict[str, object] = {}
    sources: dict[str, str] = {}
    user = read_user_file(paths.settings_file)
    _validate(user, str(paths.settings_file))  # report the user's own mistakes by file
    layers: list[tuple[str, Mapping[str, Any]]] = [
        ("user", flatten(user)),
        ("environment", env_overrides(env)),
        ("command line", dict(cli or {})),
    ]
    forced = dict((policy or NoPolicy()).forced())
    layers.append(("policy", forced))
    for origin, values in layers:
        for key, value in values.items():
            _set_dotted(tree, key, value)
            sources[key] = origin
    settings = _validate(tree, "machine policy" if forced else "settings")
    return EffectiveSettings(settings, sources, frozenset(forced))


def setting_value(settings: Settings, key: str) -> Any:
    """The value of dotted ``key`` (``server.port``) in ``settings``."""
    node: Any = settings
    for part in key.split("."):
        node = getattr(node, part)
    return node


def apply_changes(current: EffectiveSettings, changes: Mapping[str, Any]) -> EffectiveSettings:
    """The settings in force after ``save_user_settings(…, changes, current)``.

    Keys still overridden by the environment, a command-line flag or the policy keep
    their overriding value: the saved value takes effect once the override is gone.
    """
    tree = current.settings.model_dump()
    sources = dict(current.sources)
    for key, value in changes.items():
        if sources.get(key, "user") != "user":
            continue
        _set_dotted(tree, key, value if value is not None else setting_value(Settings(), key))
        sources[key] = "user"
    return EffectiveSettings(Settings.model_validate(tree), sources, current.locked)


def save_user_settings(
    paths: Paths, changes: Mapping[str, Any], current: EffectiveSettings
) -> None:
    """Write ``changes`` (dotted keys) to the user file; None removes a key (back to default).

    Locked keys are refused.
    """
    blocked = sorted(k for k in changes if current.is_locked(k))
    if blocked:
        raise ConfigError(f"set by your organization and cannot be changed: {', '.join(blocked)}")
    tree = read_user_file(paths.settings_file)
    for key, value in changes.items():
        if value is None:  # TOML has no null: "automatic" means the key is absent
            *parents, leaf = key.split(".")
            node: Any = tree
            for part in parents:
                node = node.get(part, {}) if isinstance(node, dict) else {}
            if isinstance(node, dict):
                node.pop(leaf, None)
            continue
        _set_dotted(tree, key, value)
    _validate(tree, str(paths.settings_file))
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    tmp = paths.settings_file.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(tree), encoding="utf-8")
    os.replace(tmp, paths.settings_file)
