"""The core's most common errors said in the window's language.

``EdgeDeskError`` carries an English ``message`` (what the CLI and the API show) and,
for the errors people meet most (offline, not downloaded, no disk space, a failed
download, a policy refusal), a ``kind`` with ``params``. Here each kind has a sentence
in Qt's translation ("ErrorText" context); every other error gets its class's translated
lead ("The model could not be loaded: …") before the core's own detail. Without a
translation (an English window) the core's own message is shown, word for word, so
English is unchanged.
Callable from any thread: ``QCoreApplication.translate`` is thread-safe, and workers
word their failures before they signal them.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from desktop.base.errors import (
    AuthRequired,
    ConfigError,
    ContextOverflow,
    DownloadError,
    EdgeDeskError,
    EngineCrashed,
    InvalidRequest,
    ModelFileError,
    ModelLoadError,
    ModelNotAllowed,
    ModelNotFound,
    NetworkBlocked,
    QueueFull,
    RemoteError,
    StoreError,
    TemplateFailed,
    TemplateMissing,
)

# kind -> (English sentence with %1…, the params that fill %1, %2… in order)
SENTENCES: dict[str, tuple[object, tuple[str, ...]]] = {
    "offline": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "Cannot connect: EdgeDesk is offline, so it makes no network connection. To go "
            "online, untick “Offline” in Settings (Network).",
        ),
        (),
    ),
    "downloads_off": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "Cannot download: model downloads are turned off on this computer. Import a "
            ".gguf file you already have on the Models screen instead.",
        ),
        (),
    ),
    "no_disk_space": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "Not enough free disk space in %1: the download needs %2 (+%3 headroom), only %4 "
            "is free.",
        ),
        ("folder", "need", "headroom", "free"),
    ),
    "download_busy": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "%1 is still being downloaded (another window or a terminal); stop that download "
            "first.",
        ),
        ("file",),
    ),
    "download_gave_up": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "The download of %1 from %2 gave up after %3 tries; what came is kept, download "
            "again to resume.",
        ),
        ("file", "repo", "tries"),
    ),
    "download_corrupt": (
        QT_TRANSLATE_NOOP(
            "ErrorText", "%1 from %2 arrived corrupt and was moved aside to %3; download it again."
        ),
        ("file", "repo", "moved_to"),
    ),
    "hub_refused": (
        QT_TRANSLATE_NOOP(
            "ErrorText", "%1 refused access to %2 (%3): sign in with a Hugging Face token first."
        ),
        ("endpoint", "repo", "status"),
    ),
    "hub_status": (
        QT_TRANSLATE_NOOP("ErrorText", "%1 answered %2 for %3; try again later."),
        ("endpoint", "status", "repo"),
    ),
    "hub_unreachable": (
        QT_TRANSLATE_NOOP(
            "ErrorText", "Cannot reach %1; check the network connection and try again."
        ),
        ("endpoint",),
    ),
    "policy_blocked": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "%1 is blocked by your organization's policy (AllowedModels); ask IT to allow it "
            "or pick an allowed model.",
        ),
        ("model",),
    ),
    "cannot_see": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "%1 cannot see pictures (it has no vision projector); choose a vision model for "
            "this chat, or remove the picture.",
        ),
        ("model",),
    ),
    "unknown_model": (
        QT_TRANSLATE_NOOP(
            "ErrorText", "There is no model called %1; the Models screen lists them."
        ),
        ("model",),
    ),
    "not_installed": (
        QT_TRANSLATE_NOOP("ErrorText", "%1 is not installed; the Models screen lists what is."),
        ("model",),
    ),
    "not_downloaded": (
        QT_TRANSLATE_NOOP(
            "ErrorText", "%1 is not downloaded yet; download it on the Models screen first."
        ),
        ("model",),
    ),
    "file_not_found": (QT_TRANSLATE_NOOP("ErrorText", "Model file not found: %1"), ("path",)),
    "gguf_damaged": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "“%1” is not a complete model file: it is damaged or only partly downloaded. "
            "Download it again (or copy it again from where it came from), then import it.",
        ),
        ("file",),
    ),
    "not_gguf": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "“%1” is not a model EdgeDesk can run: it is not a GGUF file. Choose a file "
            "ending in .gguf (the Models screen can download one).",
        ),
        ("file",),
    ),
    "model_crashed": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "The model stopped unexpectedly (%1) and is reloading; send your message "
            "again. EdgeDesk and your other chats were not affected.",
        ),
        ("how",),
    ),
    "model_crashed_on_load": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "The model %1 crashed while loading (%2); EdgeDesk was not affected. The file "
            "may be damaged or made for another version of llama.cpp.",
        ),
        ("model", "how"),
    ),
    "model_broken": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "%1 crashed every time it loaded (%2), so it is not loaded again. Fix or replace "
            "the file, then press Retry on the Models screen.",
        ),
        ("model", "reason"),
    ),
    "prompt_too_long": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "This chat is too long for the model: %1 tokens, and it reads at most %2. Start "
            "a new chat, or shorten or remove a long message or attachment.",
        ),
        ("size", "limit"),
    ),
    "prompt_far_too_long": (
        QT_TRANSLATE_NOOP(
            "ErrorText",
            "This chat is far too long for the model: about %1 tokens, and it reads at most "
            "%2. Start a new chat, or shorten or remove the long message or attachment.",
        ),
        ("size", "limit"),
    ),
}

# Kinds whose core message speaks the terminal's language (flags, settings.toml keys):
# the window says its own sentence, in English too.
WINDOW_WORDED = frozenset(
    {
        "offline",
        "downloads_off",
        "gguf_damaged",
        "not_gguf",
        "model_crashed",
        "model_crashed_on_load",
        "model_broken",
        # The core says "load the model with a larger context": a flag, for the window.
        "prompt_too_long",
        "prompt_far_too_long",
    }
)
CRASH_LOG_LINES = 3  # of the worker's log, under a crash's sentence

# Errors without a sentence of their own: a translated lead naming what went wrong, then
# the core's detail (file names, llama.cpp's or a remote's words) as it was written.
# Most specific class first: the first isinstance match wins.
LEADS: tuple[tuple[type[EdgeDeskError], object], ...] = (
    (ModelLoadError, QT_TRANSLATE_NOOP("ErrorText", "The model could not be loaded")),
    (ModelFileError, QT_TRANSLATE_NOOP("ErrorText", "The model file cannot be used")),
    (TemplateMissing, QT_TRANSLATE_NOOP("ErrorText", "The model has no chat template")),
    (TemplateFailed, QT_TRANSLATE_NOOP("ErrorText", "The model's chat template failed")),
    (
        ContextOverflow,
        QT_TRANSLATE_NOOP("ErrorText", "The conversation is too long for this model"),
    ),
    (QueueFull, QT_TRANSLATE_NOOP("ErrorText", "The model is busy")),
    (RemoteError, QT_TRANSLATE_NOOP("ErrorText", "The remote model failed")),
    (ModelNotAllowed, QT_TRANSLATE_NOOP("ErrorText", "Your organization's policy blocks this")),
    (ModelNotFound, QT_TRANSLATE_NOOP("ErrorText", "Model not found")),
    (NetworkBlocked, QT_TRANSLATE_NOOP("ErrorText", "No network connection is allowed")),
    (DownloadError, QT_TRANSLATE_NOOP("ErrorText", "The download failed")),
    (AuthRequired, QT_TRANSLATE_NOOP("ErrorText", "A Hugging Face sign-in is needed")),
    (StoreError, QT_TRANSLATE_NOOP("ErrorText", "Your saved data could not be read or written")),
    (ConfigError, QT_TRANSLATE_NOOP("ErrorText", "A setting is not valid")),
    (InvalidRequest, QT_TRANSLATE_NOOP("ErrorText", "This cannot be done")),
)


def _with_lead(exc: EdgeDeskError) -> str:
    """The class's translated lead and the core's message; the message alone in English."""
    for cls, source in LEADS:
        if isinstance(exc, cls):
            lead = QCoreApplication.translate("ErrorText", str(source))
            if lead == str(source):  # an English window: the core's words are enough
                return exc.message
            return (
                QCoreApplication.translate("ErrorText", "%1: %2")
                .replace("%1", lead)
                .replace("%2", exc.message)
            )
    return exc.message


def error_text(exc: BaseException) -> str:
    """What the window says about ``exc``: its kind's sentence translated, else its message."""
    if not isinstance(exc, EdgeDeskError):
        return QCoreApplication.translate("ErrorText", "unexpected error: %1").replace(
            "%1", str(exc)
        )
    sentence = SENTENCES.get(exc.kind or "")
    if sentence is None:
        return _with_lead(exc)
    source, names = sentence
    translated = QCoreApplication.translate("ErrorText", str(source))
    if translated == str(source) and exc.kind not in WINDOW_WORDED:
        return exc.message  # no translation (an English window): the core's words
    for number, name in enumerate(names, 1):
        translated = translated.replace(f"%{number}", exc.params.get(name, "?"))
    if isinstance(exc, EngineCrashed) and exc.log_tail:
        lines = "\n".join(exc.log_tail[-CRASH_LOG_LINES:])
        lead = QCoreApplication.translate("ErrorText", "llama.cpp's last words:")
        translated = f"{translated}\n{lead}\n{lines}"
    return translated
