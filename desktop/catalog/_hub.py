"""Model metadata from the Hugging Face Hub (or a mirror), through the network gate.

``huggingface_hub`` answers the questions (which files, how big, their SHA-256, which
commit); every HTTP request it sends passes the ``NetGate`` via an event hook on the
client we give it. The transfer itself is ``_download.py``'s job, pinned to the commit
resolved here so a repo updated mid-download cannot mix two versions.
"""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from desktop.base.errors import AuthRequired, DownloadError, ModelNotFound, NetworkBlocked
from desktop.base.keychain import Keychain
from desktop.base.net import NetGate, Transport, cannot_resolve, explain
from desktop.catalog._shards import shard_stem

DEFAULT_ENDPOINT = "https://huggingface.co"
KEYRING_SERVICE = "edgedesk"
KEYRING_USER = "huggingface"
HUB_TOKEN = Keychain(KEYRING_SERVICE, "token")
_COMMIT = re.compile(r"[0-9a-f]{40}")
QUANT_RE = re.compile(
    r"(?<![A-Za-z0-9])(I?Q\d(?:_[A-Z0-9]+)*|BF16|F16|F32|MXFP4(?:_MOE)?)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
TokenSource = Callable[[], str | None]
T = TypeVar("T")


@dataclass(frozen=True)
class RemoteFile:
    """One file on the Hub at a pinned commit, with what we must verify it against."""

    repo: str
    filename: str
    revision: str
    size: int
    sha256: str | None
    url: str


@dataclass(frozen=True)
class QuantFiles:
    """One quantization found in a Hub repo: its file(s) and total size."""

    quant: str
    files: tuple[str, ...]
    size: int


@dataclass(frozen=True)
class SearchHit:
    """A GGUF repository found by search, with its quant files."""

    repo: str
    downloads: int
    quants: tuple[QuantFiles, ...]


def resolve_endpoint(setting: str | None, environ: Mapping[str, str]) -> str:
    """The Hub to talk to: the ``hub_endpoint`` setting, else ``HF_ENDPOINT``, else the Hub."""
    chosen = setting or environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT
    return chosen.rstrip("/")


def stored_token() -> str | None:
    """The Hub token ``edgedesk auth login`` saved in the OS keyring, if any."""
    return HUB_TOKEN.get(KEYRING_USER)  # no usable keyring: behave as logged out


def save_token(token: str) -> None:
    """Store the Hub token in the OS keyring (never in a file of ours)."""
    HUB_TOKEN.set(KEYRING_USER, token, why_needed="gated models need a keyring")


def delete_token() -> bool:
    """Remove the stored Hub token; False if there was none."""
    return HUB_TOKEN.delete(KEYRING_USER)


def quant_of(filename: str) -> str:
    """The quantization named in a GGUF file name (Q4_K_M, IQ2_XXS, BF16…), or '?'."""
    found = QUANT_RE.findall(filename.rsplit("/", 1)[-1])
    return found[-1].upper() if found else "?"


def _quiet_hub_library() -> None:
    """Switch off huggingface_hub's unasked calls even if it was imported before our env."""
    from huggingface_hub import constants

    # With telemetry on, building the User-Agent runs detect_agent(), which GETs
    # {HF_ENDPOINT}/api/agent-harnesses: a call to the Hub (or the mirror) nobody asked for.
    constants.HF_HUB_DISABLE_TELEMETRY = True
    constants.HF_HUB_DISABLE_UPDATE_CHECK = True


# The gate of the HubClient call in progress on this thread/task. huggingface_hub keeps
# one HTTP client per process, so its requests cannot carry our gate directly; a request
# made outside any HubClient call (the library acting on its own) finds no gate here and
# is refused.
_CURRENT_GATE: contextvars.ContextVar[NetGate | None] = contextvars.ContextVar(
    "edgedesk_hub_gate", default=None
)


def _gate_request(request: Any) -> None:
    """httpx2 request hook on huggingface_hub's shared client: check and log via the gate."""
    gate = _CURRENT_GATE.get()
    if gate is None:
        raise NetworkBlocked(
            f"huggingface_hub tried to reach {request.url.host} on its own; "
            "EdgeDesk only lets through requests it made itself"
        )
    gate.check(request.method, str(request.url), "Hub metadata")


def _route_hub_library_through_gates(transport: Transport | None = None) -> None:
    """Make huggingface_hub's shared HTTP client send every request through a gate
    (verifying TLS and proxying as ``transport`` says; the first caller's wins)."""
    import httpx2
    from huggingface_hub import get_session, set_client_factory

    if _gate_request in get_session().event_hooks["request"]:
        return

    class Unreachable(httpx2.TransportError):
        """No connection could be made (no network, no DNS, refused): not retried."""

        unreachable = True

    class FailFast(httpx2.Client):
        """A connection that cannot be made is not retried by huggingface_hub.

        Its backoff retries network errors five times, and we asked up to four times: a
        search with no network showed "Searching…" for about 100 s (24 attempts).
        """

        def send(self, request: Any, **kwargs: Any) -> Any:
            try:
                return super().send(request, **kwargs)
            except httpx2.ConnectError as exc:
                raise Unreachable(str(exc), request=request) from exc

    def factory() -> httpx2.Client:
        tls = transport.httpx_options() if transport is not None else {}
        return FailFast(
            event_hooks={"request": [_gate_request]}, follow_redirects=True, timeout=30.0, **tls
        )

    set_client_factory(factory)


def _host(endpoint: str) -> str:
    return endpoint.split("://", 1)[-1].split("/", 1)[0]


class HubClient:
    """Metadata and search against one Hub endpoint; every request goes through the gate."""

    def __init__(
        self,
        gate: NetGate,
        endpoint: str,
        *,
        token_source: TokenSource = stored_token,
        timeout_s: float = 30.0,
        retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        transport: Transport | None = None,
    ) -> None:
        self.gate = gate
        self.transport = transport
        self.endpoint = endpoint.rstrip("/")
        self._token_source = token_source
        self._token: str | None = None
        self._token_read = False
        self.timeout_s = timeout_s
        self.retries = retries
        self._sleep = sleep
        self._api_obj: Any = None

    def token(self) -> str | None:
        """The Hub token (read from the keyring once, only when a request needs it)."""
        if not self._token_read:
            self._token = self._token_source()
            self._token_read = True
        return self._token

    def _api(self) -> Any:
        if self._api_obj is None:
            from huggingface_hub import HfApi

            _quiet_hub_library()
            _route_hub_library_through_gates(self.transport)
            # token=False, not None: never fall back to a token file another tool left.
            self._api_obj = HfApi(endpoint=self.endpoint, token=self.token() or False)
        return self._api_obj

    def url(self, repo: str, revision: str, filename: str) -> str:
        """The download URL of ``filename`` at ``revision``."""
        return f"{self.endpoint}/{repo}/resolve/{quote(revision, safe='')}/{quote(filename)}"

    @contextmanager
    def _errors(self, repo: str, filename: str | None = None) -> Iterator[None]:
        from huggingface_hub import errors as hf

        what = f"{filename} in {repo}" if filename else repo
        try:
            yield
        except hf.GatedRepoError:
            raise AuthRequired(
                f"{repo} is gated: accept its terms on the Hub, then run "
                "'edgedesk auth login' with a token that has access"
            ) from None
        except hf.RepositoryNotFoundError:
            hint = "" if self.token() else " (if it is private or gated, run 'edgedesk auth login')"
            raise ModelNotFound(f"repository {repo} not found on {self.endpoint}{hint}") from None
        except hf.RevisionNotFoundError:
            raise ModelNotFound(f"revision not found in {repo}") from None
        except hf.EntryNotFoundError:
            raise ModelNotFound(f"{what} not found on {self.endpoint}") from None

    def _call(self, repo: str, fn: Callable[[], T], filename: str | None = None) -> T:
        """Run one metadata call, retrying throttling, server errors and broken connections."""
        import httpx2
        from huggingface_hub import errors as hf

        self.gate.ensure_online(f"reach {self.endpoint}")
        delay = 1.0
        for attempt in range(self.retries + 1):
            scope = _CURRENT_GATE.set(self.gate)
            try:
                with self._errors(repo, filename):
                    return fn()
            except hf.HfHubHTTPError as exc:
                status = exc.response.status_code if exc.response is not None else 0
                if status in {401, 403}:
                    raise AuthRequired(
                        f"{self.endpoint} refused access to {repo} ({status}); "
                        "run 'edgedesk auth login'",
                        kind="hub_refused",
                        params={"endpoint": self.endpoint, "repo": repo, "status": status},
                    ) from None
                if (status != 429 and status < 500) or attempt == self.retries:
                    raise DownloadError(
                        f"{self.endpoint} answered {status} for {repo}; try again later",
                        kind="hub_status",
                        params={"endpoint": self.endpoint, "repo": repo, "status": status},
                    ) from None
            except httpx2.TransportError as exc:
                # A name that cannot be looked up or a refused connection is no flaky
                # line: asking again only kept "Searching…" up for minutes.
                final = (
                    isinstance(exc, httpx2.ConnectError)
                    or cannot_resolve(exc)
                    or getattr(exc, "unreachable", False)
                )
                if final or attempt == self.retries:
                    raise DownloadError(
                        f"cannot reach {self.endpoint}: {explain(exc, _host(self.endpoint))}",
                        kind="hub_unreachable",
                        params={"endpoint": self.endpoint},
                    ) from None
            finally:
                _CURRENT_GATE.reset(scope)
            self._sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def commit(self, repo: str, revision: str | None = None) -> str:
        """The commit SHA that ``revision`` (default: main) of ``repo`` points at now."""
        info = self._call(repo, lambda: self._api().model_info(repo, revision=revision))
        sha: str | None = info.sha
        if not sha:
            raise DownloadError(f"{self.endpoint} did not say which commit {repo} is at")
        return sha

    def list_files(self, repo: str, revision: str) -> list[str]:
        """Every file path in ``repo`` at ``revision``."""
        files: list[str] = self._call(
            repo, lambda: list(self._api().list_repo_files(repo, revision=revision))
        )
        return files

    def files(
        self,
        repo: str,
        filenames: list[str],
        revision: str | None = None,
    ) -> list[RemoteFile]:
        """Size, SHA-256 and pinned URL of each file (404 names the missing file).

        A ``revision`` that already is a commit SHA is used as it is (no second lookup).
        """
        sha = revision if revision and _COMMIT.fullmatch(revision) else self.commit(repo, revision)
        infos = self._call(
            repo, lambda: self._api().get_paths_info(repo, filenames, revision=sha), filenames[0]
        )
        by_path = {i.path: i for i in infos}
        remote = []
        for name in filenames:
            info = by_path.get(name)
            if info is None or not hasattr(info, "size"):
                raise ModelNotFound(
                    f"{name} not found in {repo} on {self.endpoint}; see 'edgedesk models search'"
                )
            lfs = getattr(info, "lfs", None)
            digest = lfs.sha256 if lfs is not None else None
            remote.append(
                RemoteFile(repo, name, sha, int(info.size), digest, self.url(repo, sha, name))
            )
        return remote

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """GGUF repos matching ``query`` with their quant files and sizes."""
        models = self._call(
            query,
            lambda: list(
                self._api().list_models(search=query, filter="gguf", limit=limit, sort="downloads")
            ),
        )
        hits = []
        for model in models:
            repo: str = model.id

            def details(repo: str = repo) -> Any:
                return self._api().model_info(repo, files_metadata=True)

            info = self._call(repo, details)
            hits.append(
                SearchHit(
                    repo,
                    int(model.downloads or 0),
                    group_quants([(s.rfilename, s.size or 0) for s in info.siblings or []]),
                )
            )
        return hits


def group_quants(files: list[tuple[str, int]]) -> tuple[QuantFiles, ...]:
    """GGUF files grouped into quants (split shards count as one), smallest first."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for name, size in files:
        if not name.endswith(".gguf"):
            continue
        key = shard_stem(name)
        groups.setdefault(key, []).append((name, size))
    quants = [
        QuantFiles(quant_of(key), tuple(sorted(n for n, _ in group)), sum(s for _, s in group))
        for key, group in groups.items()
    ]
    return tuple(sorted(quants, key=lambda q: q.size))
