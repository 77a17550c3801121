"""Attached images checked before anything decodes them: type, size, pixel count, damage.

Pure functions of bytes (no llama.cpp, safe on any thread). The type is sniffed from
the bytes, never trusted from a name or a declared MIME type; the dimensions come from
the header (Pillow's ``Image.open`` reads only that), so a PNG that declares 50 000 x
50 000 pixels is refused before a single row is inflated. PNG and JPEG are walked
chunk by chunk / segment by segment, so a truncated file or a length field pointing
past the end is refused here rather than half-decoded later.

Nothing here holds more than the bytes it was given (at most ``max_bytes``), except a
WebP picture, which is decoded (within ``max_pixels``) and re-encoded as PNG because
llama.cpp's image reader (stb_image) does not read WebP.

Caps: ``DEFAULT_LIMITS`` (20 MiB, 50 megapixels: a 48 MP phone photo passes, a
decompression bomb does not). The composition root builds the caps in force from the
settings (``image_limits``; the ImageMaxMB / ImageMaxMegapixels machine policy forces
them) and hands that one value to the server, the window's attachments and the CLI;
they never exceed ``HARD_LIMITS``, which the engine itself enforces on every image.
"""

from __future__ import annotations

import hashlib
import io
import struct
import warnings
import zlib
from dataclasses import dataclass

from desktop.base.errors import ImageRejected
from desktop.engine._types import Image

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MIB = 1024 * 1024


@dataclass(frozen=True)
class ImageLimits:
    """Caps on one attached image: its encoded size and its decoded pixel count."""

    max_bytes: int = 20 * MIB
    max_pixels: int = 50_000_000


DEFAULT_LIMITS = ImageLimits()
HARD_LIMITS = ImageLimits(max_bytes=64 * MIB, max_pixels=200_000_000)


def image_limits(max_mb: int, max_megapixels: int) -> ImageLimits:
    """Caps of ``max_mb`` MiB and ``max_megapixels`` million pixels (the settings'
    ``image_max_mb`` / ``image_max_megapixels``, which the ImageMaxMB and
    ImageMaxMegapixels policy keys force), never above ``HARD_LIMITS``."""
    return ImageLimits(
        max_bytes=max(1, min(max_mb * MIB, HARD_LIMITS.max_bytes)),
        max_pixels=max(1, min(max_megapixels * 1_000_000, HARD_LIMITS.max_pixels)),
    )


@dataclass(frozen=True)
class ImageInfo:
    """What the header says: the sniffed type and the dimensions."""

    mime: str
    width: int
    height: int

    @property
    def pixels(self) -> int:
        """Width times height."""
        return self.width * self.height


_FORMATS = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/bmp": "BMP",
    "image/webp": "WEBP",
}


def sniff(data: bytes) -> str | None:
    """The image MIME type the bytes begin with (PNG, JPEG, GIF, BMP, WebP), else None."""
    if data.startswith(PNG_MAGIC):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data.startswith(b"BM") and len(data) >= 26:
        return "image/bmp"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _what_else(data: bytes) -> str:
    """A few words on what a non-image is, for the error message."""
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "a ZIP archive"
    if data.startswith(b"%PDF"):
        return "a PDF document"
    if data.startswith(b"GGUF"):
        return "a GGUF model file"
    return "not a picture"


def inspect_image(
    data: bytes, limits: ImageLimits = DEFAULT_LIMITS, name: str = "the image"
) -> ImageInfo:
    """Type and dimensions of ``data``, or ImageRejected (user-facing message, a 400).

    Refuses: empty or over ``limits.max_bytes``; not PNG/JPEG/GIF/BMP/WebP (a ``.png``
    that is a ZIP is "a ZIP archive"); a truncated or inconsistent PNG or JPEG; more
    pixels than ``limits.max_pixels`` (read from the header, nothing is decoded).
    """
    if not data:
        raise ImageRejected(f"{name} is empty")
    if len(data) > limits.max_bytes:
        raise ImageRejected(
            f"{name} is {len(data) / MIB:.1f} MiB; images may be at most "
            f"{limits.max_bytes / MIB:.0f} MiB",
            params={"bytes": len(data)},
        )
    mime = sniff(data)
    if mime is None:
        raise ImageRejected(
            f"{name} is {_what_else(data)}, not an image; send a PNG, "
            "JPEG, GIF, BMP or WebP picture"
        )
    if mime == "image/png":
        _check_png(data, name)
    elif mime == "image/jpeg":
        _check_jpeg(data, name)
    width, height = _dimensions(data, mime, name)
    if width <= 0 or height <= 0:
        raise ImageRejected(f"{name} declares no pixels ({width} x {height})")
    if width * height > limits.max_pixels:
        raise ImageRejected(
            f"{name} is {width} x {height} pixels ({width * height / 1e6:.0f} megapixels); "
            f"images may have at most {limits.max_pixels / 1e6:.0f} megapixels",
            params={"width": width, "height": height},
        )
    return ImageInfo(mime, width, height)


def load_image(data: bytes, limits: ImageLimits = DEFAULT_LIMITS, name: str = "the image") -> Image:
    """A checked ``Image`` for the engine (WebP re-encoded as PNG); raises ImageRejected.

    Within ``HARD_LIMITS`` the result is marked ``checked``: the engine takes it as is.
    """
    info = inspect_image(data, limits, name)
    mime = info.mime
    if mime == "image/webp":
        data, mime = _webp_to_png(data, name), "image/png"
    within = (
        limits.max_bytes <= HARD_LIMITS.max_bytes and limits.max_pixels <= HARD_LIMITS.max_pixels
    )
    return Image(data=data, mime=mime, sha256=hashlib.sha256(data).hexdigest(), checked=within)


def _dimensions(data: bytes, mime: str, name: str) -> tuple[int, int]:
    """Width and height from the header alone (Pillow opens lazily)."""
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            # Pillow warns (and over 2x its own cap raises) on huge headers; our cap is
            # the one that decides, below.
            warnings.simplefilter("ignore", PILImage.DecompressionBombWarning)
            with PILImage.open(io.BytesIO(data), formats=[_FORMATS[mime]]) as picture:
                width, height = picture.size
    except PILImage.DecompressionBombError:
        raise ImageRejected(
            f"{name} declares more pixels than any image may have (a decompression bomb?)"
        ) from None
    except (
        UnidentifiedImageError,
        OSError,
        ValueError,
        SyntaxError,
        struct.error,
        EOFError,
    ) as exc:
        raise ImageRejected(
            f"{name} is damaged: its {_FORMATS[mime]} header cannot be read ({type(exc).__name__})"
        ) from None
    return int(width), int(height)


def _check_png(data: bytes, name: str) -> None:
    """Walk the chunks: each length within the file, each CRC right, IHDR first,
    image data present, IEND reached."""
    pos = len(PNG_MAGIC)
    seen: list[bytes] = []
    while True:
        if pos + 8 > len(data):
            raise ImageRejected(f"{name} is a truncated PNG (it ends before IEND)")
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        end = pos + 12 + length
        if end > len(data):
            raise ImageRejected(
                f"{name} is a truncated PNG (a {kind!r} chunk runs past the end of the file)"
            )
        crc = struct.unpack(">I", data[end - 4 : end])[0]
        if zlib.crc32(data[pos + 4 : end - 4]) != crc:
            raise ImageRejected(f"{name} is a damaged PNG (bad checksum in a {kind!r} chunk)")
        if not seen and kind != b"IHDR":
            raise ImageRejected(f"{name} is a damaged PNG (it does not start with IHDR)")
        seen.append(kind)
        pos = end
        if kind == b"IEND":
            break
    if b"IDAT" not in seen:
        raise ImageRejected(f"{name} is a damaged PNG (it has no image data)")


_STANDALONE = {0x01, *range(0xD0, 0xD8)}  # markers without a length field


def _check_jpeg(data: bytes, name: str) -> None:
    """Walk the segments up to the scan: each length within the file, a frame header
    (SOF) before the scan, and an end-of-image marker after it."""
    pos = 2
    frame = False
    while True:
        if pos + 4 > len(data):
            raise ImageRejected(f"{name} is a truncated JPEG (it ends inside its header)")
        if data[pos] != 0xFF:
            raise ImageRejected(f"{name} is a damaged JPEG (a segment length is wrong)")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in _STANDALONE:
            pos += 2
            continue
        if marker == 0xD9:
            raise ImageRejected(f"{name} is a damaged JPEG (it ends before any image data)")
        length = struct.unpack(">H", data[pos + 2 : pos + 4])[0]
        if length < 2 or pos + 2 + length > len(data):
            raise ImageRejected(
                f"{name} is a damaged JPEG (a segment length runs past the end of the file)"
            )
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            frame = True
        pos += 2 + length
        if marker == 0xDA:  # start of scan: entropy-coded data follows
            break
    if not frame:
        raise ImageRejected(f"{name} is a damaged JPEG (no frame header before the scan)")
    if data.find(b"\xff\xd9", pos) < 0:
        raise ImageRejected(f"{name} is a truncated JPEG (no end-of-image marker)")


def _webp_to_png(data: bytes, name: str) -> bytes:
    """Decode a checked WebP (its pixels are within the cap) and write it as PNG."""
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(data), formats=["WEBP"]) as picture:
            picture.load()
            converted = picture.convert("RGBA" if "A" in picture.getbands() else "RGB")
        out = io.BytesIO()
        converted.save(out, format="PNG")
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ImageRejected(f"{name} is a damaged WebP ({type(exc).__name__})") from None
    return out.getvalue()
