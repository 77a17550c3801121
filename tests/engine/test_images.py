"""Image limits: hostile and damaged pictures are refused from their headers, never decoded."""

from __future__ import annotations

import hashlib
import io
import struct
import tracemalloc
import zipfile
import zlib

import pytest
from PIL import Image as PILImage

from desktop.base.errors import ImageRejected, InvalidRequest
from desktop.engine._images import (
    DEFAULT_LIMITS,
    HARD_LIMITS,
    ImageLimits,
    inspect_image,
    load_image,
    sniff,
)
from desktop.engine._types import Image
from tests.fixtures.pictures import bomb_png

pytestmark = pytest.mark.fast


def picture(fmt: str, size: tuple[int, int] = (40, 30)) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", size, (200, 30, 30)).save(out, fmt)
    return out.getvalue()


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


@pytest.mark.parametrize(
    ("fmt", "mime"),
    [
        ("PNG", "image/png"),
        ("JPEG", "image/jpeg"),
        ("GIF", "image/gif"),
        ("BMP", "image/bmp"),
        ("WEBP", "image/webp"),
    ],
)
def test_good_pictures_pass_with_their_type_and_size(fmt: str, mime: str) -> None:
    info = inspect_image(picture(fmt))
    assert (info.mime, info.width, info.height) == (mime, 40, 30)


def test_a_checked_image_carries_its_sha256_and_sniffed_type() -> None:
    data = picture("JPEG")
    image = load_image(data)
    assert image.mime == "image/jpeg" and image.data == data
    assert image.sha256 == hashlib.sha256(data).hexdigest()


def test_only_images_checked_within_the_engines_caps_skip_its_own_check() -> None:
    # The engine checks and hashes again whatever is not marked (tests/engine/
    # test_vision.py: hostile pictures built by hand never reach llama.cpp).
    data = picture("PNG")
    assert load_image(data).checked
    assert load_image(data, HARD_LIMITS).checked
    looser = ImageLimits(HARD_LIMITS.max_bytes * 2, HARD_LIMITS.max_pixels)
    assert not load_image(data, looser).checked
    by_hand = Image(data, "image/png", hashlib.sha256(data).hexdigest())
    assert not by_hand.checked
    assert by_hand == load_image(data)  # the mark is no part of the picture's identity


def test_webp_is_handed_on_as_png_because_llama_cpp_cannot_read_webp() -> None:
    image = load_image(picture("WEBP"))
    assert image.mime == "image/png" and sniff(image.data) == "image/png"
    assert PILImage.open(io.BytesIO(image.data)).size == (40, 30)


def test_the_errors_are_400s() -> None:
    with pytest.raises(ImageRejected) as caught:
        inspect_image(b"hello")
    assert isinstance(caught.value, InvalidRequest) and caught.value.http_status == 400


def test_a_png_that_is_a_zip_is_named_as_such() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("a.txt", "hi")
    with pytest.raises(ImageRejected, match="ZIP archive, not an image"):
        inspect_image(out.getvalue(), name="photo.png")


@pytest.mark.parametrize("data", [b"", b"just text", b"%PDF-1.7 ...", b"\x00" * 100])
def test_non_images_are_refused(data: bytes) -> None:
    with pytest.raises(ImageRejected):
        inspect_image(data)


def test_a_50k_by_50k_header_is_refused_without_decoding() -> None:
    data = bomb_png()
    tracemalloc.start()
    try:
        with pytest.raises(ImageRejected, match="megapixels|decompression bomb"):
            inspect_image(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 50k x 50k RGB would be 7.5 GB; the check holds little more than the file itself.
    assert peak < 4 * 1024 * 1024 + 2 * len(data)


def test_the_pixel_cap_is_the_callers_to_choose() -> None:
    data = picture("PNG", (100, 100))
    assert inspect_image(data, ImageLimits(max_pixels=10_000)).pixels == 10_000
    with pytest.raises(ImageRejected, match="at most 0 megapixels"):
        inspect_image(data, ImageLimits(max_pixels=9_999))


def test_over_the_byte_cap_is_refused_before_looking_inside() -> None:
    data = picture("PNG")
    with pytest.raises(ImageRejected, match="MiB"):
        inspect_image(data, ImageLimits(max_bytes=len(data) - 1))
    assert DEFAULT_LIMITS.max_bytes == 20 * 1024 * 1024


@pytest.mark.parametrize("cut", [20, 40, -13, -1])
def test_a_truncated_png_is_refused(cut: int) -> None:
    data = picture("PNG")
    with pytest.raises(ImageRejected, match="PNG"):
        inspect_image(data[:cut])


def test_a_png_with_a_flipped_byte_is_refused() -> None:
    data = bytearray(picture("PNG"))
    data[60] ^= 0xFF  # inside the image data: its checksum no longer matches
    with pytest.raises(ImageRejected, match="checksum"):
        inspect_image(bytes(data))


def test_a_png_without_image_data_is_refused() -> None:
    ihdr = struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IEND", b"")
    with pytest.raises(ImageRejected, match="no image data"):
        inspect_image(data)


def _segments(data: bytes) -> list[int]:
    """Offsets of the JPEG's length-carrying segments before the scan."""
    offsets, pos = [], 2
    while data[pos + 1] != 0xDA:
        offsets.append(pos)
        pos += 2 + struct.unpack(">H", data[pos + 2 : pos + 4])[0]
    return offsets


def test_a_jpeg_with_a_wrong_segment_length_is_refused() -> None:
    data = bytearray(picture("JPEG"))
    first = _segments(bytes(data))[0]
    data[first + 2 : first + 4] = struct.pack(">H", 0xFFF0)  # runs past the end
    with pytest.raises(ImageRejected, match="segment length"):
        inspect_image(bytes(data))


def test_a_jpeg_with_a_short_segment_length_is_refused() -> None:
    data = bytearray(picture("JPEG"))
    first = _segments(bytes(data))[0]
    length = struct.unpack(">H", data[first + 2 : first + 4])[0]
    data[first + 2 : first + 4] = struct.pack(">H", length - 3)  # lands inside a segment
    with pytest.raises(ImageRejected, match="JPEG"):
        inspect_image(bytes(data))


@pytest.mark.parametrize("cut", [3, 10, 200, -2])
def test_a_truncated_jpeg_is_refused(cut: int) -> None:
    data = picture("JPEG")
    with pytest.raises(ImageRejected, match="JPEG"):
        inspect_image(data[:cut])


def test_garbage_after_a_valid_header_never_crashes() -> None:
    for magic in (b"GIF89a", b"BM" + b"\0" * 30, b"RIFF\0\0\0\0WEBPVP8 "):
        with pytest.raises(ImageRejected, match="damaged"):
            inspect_image(magic + b"\xff" * 40)
