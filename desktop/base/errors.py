"""One exception hierarchy whose messages are written for the person who hit them.

The CLI prints ``str(error)`` as a single line and exits with ``exit_code``; the HTTP
server maps ``http_status`` and ``code`` to an OpenAI-style error body. Nothing in the
product should surface a traceback for a problem the user can fix.

The most common errors also carry ``kind`` (a stable name for the sentence) and
``params`` (its values as text), so the window can say the same thing in its own
language; the English ``message`` is what the CLI and the API show.
"""

from __future__ import annotations

from collections.abc import Mapping


class EdgeDeskError(Exception):
    """A failure with a clear, actionable, one-line message for the user."""

    exit_code = 1
    http_status = 500
    code = "internal_error"
    error_type = "server_error"

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        kind: str | None = None,
        params: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.kind = kind  # None: no translated sentence; views show ``message``
        self.params = {key: str(value) for key, value in (params or {}).items()}


class ConfigError(EdgeDeskError):
    """A settings or policy file holds a value we cannot use."""

    exit_code = 2
    http_status = 500
    code = "config_error"


class InvalidRequest(EdgeDeskError):
    """The caller asked for something malformed or out of range."""

    exit_code = 2
    http_status = 400
    code = "invalid_request"
    error_type = "invalid_request_error"


class ModelNotFound(EdgeDeskError):
    """No catalog entry, installed model or file answers to the given name."""

    exit_code = 3
    http_status = 404
    code = "model_not_found"
    error_type = "invalid_request_error"


class ModelNotAllowed(EdgeDeskError):
    """The machine policy does not allow this model."""

    exit_code = 3
    http_status = 403
    code = "model_not_allowed"
    error_type = "permission_error"


class ModelFileError(EdgeDeskError):
    """The model file is missing, unreadable, truncated or not a GGUF."""

    exit_code = 3
    http_status = 422
    code = "model_file_error"
    error_type = "invalid_request_error"


class TemplateMissing(EdgeDeskError):
    """A chat was requested from a model whose prompt format we cannot know."""

    exit_code = 3
    http_status = 422
    code = "chat_template_missing"
    error_type = "invalid_request_error"


class ModelLoadError(EdgeDeskError):
    """llama.cpp could not load the model (memory, unsupported architecture, corrupt data)."""

    exit_code = 4
    http_status = 503
    code = "model_load_failed"


class EngineUnavailable(EdgeDeskError):
    """llama.cpp's own library cannot load on this machine (e.g. a CUDA build, no driver)."""

    exit_code = 4
    http_status = 503
    code = "engine_unavailable"


class EngineCrashed(EdgeDeskError):
    """A model's worker process ended unexpectedly: an abort inside llama.cpp (a failed
    ``GGML_ASSERT``), a signal, or the OS out of memory. The app lives on; the model
    reloads at its next request. ``log_tail`` holds the worker log's last lines."""

    exit_code = 4
    http_status = 500
    code = "model_crashed"

    def __init__(
        self,
        message: str,
        *,
        model: str,
        how: str,
        why: str = "",
        log_tail: tuple[str, ...] = (),
        on_load: bool = False,
    ) -> None:
        super().__init__(
            message,
            kind="model_crashed_on_load" if on_load else "model_crashed",
            params={"model": model, "how": how},
        )
        self.model = model
        self.how = how  # "aborted (SIGABRT)", "killed (SIGKILL)", "exit code 3"
        self.why = why  # the log line that says why ("GGML_ASSERT(...) failed"), or ""
        self.log_tail = log_tail
        self.on_load = on_load


class ModelBroken(ModelLoadError):
    """A model crashed its worker on every one of its last loads; not tried again until
    the user asks (``edgedesk models retry``, the Models page)."""

    code = "model_broken"


def prompt_size_params(
    prompt_tokens: int, n_ctx: int, shown: int | None = None
) -> dict[str, object]:
    """A too-long prompt's ``params``: its tokens and the context as numbers, and as the
    window's sentences show them (``size``: ``shown``, an estimate, where given)."""
    return {
        "prompt_tokens": prompt_tokens,
        "context": n_ctx,
        "size": f"{prompt_tokens if shown is None else shown:,}",
        "limit": f"{n_ctx:,}",
    }


class ContextOverflow(EdgeDeskError):
    """The prompt (plus requested output) does not fit the model's context window.

    ``prompt_tokens`` and ``n_ctx`` are the two numbers (0 where unknown), so a route can
    name both without parsing the message.
    """

    exit_code = 2
    http_status = 400
    code = "context_length_exceeded"
    error_type = "invalid_request_error"

    def __init__(
        self,
        message: str,
        *,
        prompt_tokens: int = 0,
        n_ctx: int = 0,
        param: str | None = None,
        kind: str | None = None,
        params: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(message, param=param, kind=kind, params=params)
        self.prompt_tokens = prompt_tokens
        self.n_ctx = n_ctx


class QueueFull(EdgeDeskError):
    """Too many requests are already waiting for the engine."""

    exit_code = 5
    http_status = 429
    code = "queue_full"
    error_type = "rate_limit_error"

    def __init__(self, message: str, *, retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Cancelled(EdgeDeskError):
    """The work was stopped on request; not a failure of the product."""

    exit_code = 130
    http_status = 499
    code = "cancelled"


class NetworkBlocked(EdgeDeskError):
    """An outbound connection was refused because offline mode or policy forbids it."""

    exit_code = 6
    http_status = 403
    code = "network_blocked"


class DownloadError(EdgeDeskError):
    """A model transfer failed after its retries; the partial file is kept for resume."""

    exit_code = 7
    http_status = 502
    code = "download_failed"


class AuthRequired(EdgeDeskError):
    """The Hub refused us: the repository is gated or private and needs a token."""

    exit_code = 8
    http_status = 401
    code = "auth_required"
    error_type = "authentication_error"


class StoreError(EdgeDeskError):
    """The local database cannot be opened, migrated or written."""

    exit_code = 9
    http_status = 500
    code = "store_error"


class TemplateFailed(EdgeDeskError):
    """The model's chat template could not render this conversation (its own fault)."""

    exit_code = 3
    http_status = 422
    code = "chat_template_error"
    error_type = "invalid_request_error"


class RemoteError(EdgeDeskError):
    """A remote engine failed, refused us, or could not be reached."""

    exit_code = 10
    http_status = 502
    code = "remote_error"

    def __init__(self, message: str, *, status: int = 502, code: str = "remote_error") -> None:
        super().__init__(message)
        self.http_status = status
        self.code = code
        if status == 429:
            self.error_type = "rate_limit_error"


class ImageRejected(InvalidRequest):
    """An attached image cannot be used: not an image, damaged, or over the size caps.

    Raised before any pixel is decoded (``engine._images.inspect_image``), and by the
    engine when llama.cpp cannot decode a picture; the APIs answer 400.
    """

    code = "invalid_image"


class VisionUnsupported(InvalidRequest):
    """Images were sent to a model that cannot see (no projector loaded with it).

    The one refusal for it, whoever finds out (the API's ``check_images`` before the
    engine, or the engine itself), so every route answers with the same code and words.
    """

    code = "model_cannot_see_images"

    def __init__(self, model: str) -> None:
        super().__init__(
            f"the model '{model}' cannot see images (it has no vision projector); send "
            "text only, or pick a vision model",
            param="model",
            kind="cannot_see",
            params={"model": model},
        )
        self.model = model
