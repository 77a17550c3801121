"""Pure translation of the protocols' image parts into ``Image`` values, with their checks.

Every protocol sends a picture as base64 (OpenAI and the Responses API in a ``data:``
URL, Anthropic and Ollama bare); this decodes it, tells what it is from its first bytes
(never from the name or the declared type: a client may be wrong, or lie) and refuses
what is not a picture, or is over the caps, with a 400 that says why — through
``engine._images``, the one checker the window and the CLI use too. No I/O: a URL is
never fetched for the client.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Sequence

from desktop.base.errors import ImageRejected, InvalidRequest, VisionUnsupported
from desktop.engine import DEFAULT_LIMITS, MEDIA_MARKER, Image, ImageLimits, Message, load_image

_DATA_URL = re.compile(
    r"^data:(?P<mime>[\w.+\-]+/[\w.+\-]+)?(?P<params>(;[^,;]*)*),", re.IGNORECASE
)
_WHITESPACE = re.compile(r"\s+")


def image_from_bytes(
    data: bytes, *, where: str, param: str, limits: ImageLimits = DEFAULT_LIMITS
) -> Image:
    """``data`` as a checked Image (type, and the size and pixel caps of ``limits`` read
    from the header: see ``engine._images``), or a 400 naming ``where`` and saying why."""
    try:
        return load_image(data, limits, name=f"{where}: the image")
    except ImageRejected as exc:
        raise ImageRejected(exc.message, param=param) from None


def image_from_base64(
    text: object, *, where: str, param: str, limits: ImageLimits = DEFAULT_LIMITS
) -> Image:
    """Base64 text (standard or URL-safe, padding optional) as an Image, else a 400."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidRequest(f"{where}: the image must be base64 text", param=param)
    data = _base64(text)
    if data is None:
        raise InvalidRequest(f"{where}: the image is not valid base64", param=param)
    return image_from_bytes(data, where=where, param=param, limits=limits)


def _base64(text: str) -> bytes | None:
    """The bytes of standard or URL-safe base64, line-wrapped or unpadded; None if not."""
    try:
        # What clients send: one padded line in the standard alphabet, decoded in C
        # straight away (the regex below costs ~7 ms a MiB: 26 of the 33 ms of a 3 MiB
        # PNG's data URL went there).
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        pass
    compact = _WHITESPACE.sub("", text)
    compact += "=" * (-len(compact) % 4)
    altchars = b"-_" if ("-" in compact or "_" in compact) else None
    try:
        return base64.b64decode(compact, altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None


def image_from_url(
    url: object, *, where: str, param: str, limits: ImageLimits = DEFAULT_LIMITS
) -> Image:
    """A ``data:`` URL as an Image; an ``http(s)`` URL is refused (nothing is fetched)."""
    if not isinstance(url, str) or not url:
        raise InvalidRequest(f"{where}: the image URL must be a non-empty string", param=param)
    head = url[:16].lower()
    if head.startswith(("http://", "https://")):
        raise InvalidRequest(
            f"{where}: image URLs are not fetched here (the server does not download "
            "anything for a client); send the picture inline as a data URL, e.g. "
            "'data:image/png;base64,...'",
            param=param,
        )
    match = _DATA_URL.match(url)
    if match is None:
        raise InvalidRequest(
            f"{where}: the image URL must be a data URL such as 'data:image/png;base64,...'",
            param=param,
        )
    if ";base64" not in match["params"].lower():
        raise InvalidRequest(
            f"{where}: the data URL must be base64 encoded ('data:image/png;base64,...')",
            param=param,
        )
    return image_from_base64(url[match.end() :], where=where, param=param, limits=limits)


def joined(pieces: Sequence[str | Image], separator: str = "") -> tuple[str, tuple[Image, ...]]:
    """Text pieces and images in their order as one content with a marker per image."""
    texts = [MEDIA_MARKER if isinstance(p, Image) else p for p in pieces]
    return separator.join(texts), tuple(p for p in pieces if isinstance(p, Image))


def check_images(messages: Sequence[Message], *, model: str, sees: Callable[[str], bool]) -> None:
    """Refuse pictures a model cannot see, and text that spells the image marker.

    A model without a projector would get the words around a picture and answer as if
    it had seen it: a 400 naming the model, never a silent drop (``sees`` is asked only
    when there are pictures: it resolves the model). The marker is how the
    engine finds where each picture goes, so text that contains it would shift them.
    """
    pictured = [m for m in messages if m.images]
    if not pictured:
        return
    if not sees(model):
        raise VisionUnsupported(model)
    for i, message in enumerate(messages):
        if message.content.count(MEDIA_MARKER) != len(message.images):
            raise InvalidRequest(
                f"message {i}: the text contains '{MEDIA_MARKER}', which stands for a "
                "picture here; remove it from the text",
                param="messages",
            )
