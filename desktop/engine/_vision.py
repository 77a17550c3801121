"""A vision projector (mmproj GGUF) beside a loaded model, through llama.cpp's ``mtmd``.

A prompt with images becomes one token list in which each image is a run of
placeholder ids, one per position it takes: negative numbers derived from the image's
SHA-256, which no real token has (M-RoPE models give an image fewer positions than
tokens; the slot engine counts the difference as ``Request.extra_cells``). The slot
engine treats them as tokens for prefix matching (a slot that holds the same picture at
the same place reuses it, a different picture ends the shared prefix) and asks the
``ImageTokens`` stored at the run's start to decode the image's embeddings into the
request's own sequence when its turn comes (``decode``, on the decode loop thread).

The image encoder (the ViT: the expensive part) runs before the request joins the
loop (``encode``), on a thread of the projector's own. While other requests are
generating it runs on a thread of lower CPU priority (Linux: nice +10), so their text
keeps its speed and the encoder takes the CPU they leave; otherwise at normal priority,
with the whole machine. Its output is kept in a small LRU by SHA-256, so the next turn
of a conversation does not encode its pictures again.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import secrets
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from desktop.base.errors import ImageRejected, InvalidRequest, ModelLoadError
from desktop.engine._images import HARD_LIMITS, inspect_image
from desktop.engine._llama_cpp import llama_cpp, mtmd
from desktop.engine._native import on_a_passing_thread
from desktop.engine._types import MEDIA_MARKER, Image, Message

EMBEDDING_CACHE_BYTES = 64 * 1024 * 1024  # encoded pictures kept for the next turn
ENCODER_NICE = 10  # how much lower the encoder thread's CPU priority is (Linux)


def _lower_priority(step: int) -> None:
    """Make the calling thread (and the OpenMP threads it will start) yield the CPU to
    the decode loop's; Linux only (nice is per thread there), best effort."""
    if step <= 0 or not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + step))


@llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]
def _quiet(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    """mtmd logs every encode to stderr; the app reports failures itself."""


def placeholder_id(sha256: str) -> int:
    """The (negative) id that stands for every position of one image in a token list."""
    return -1 - int(sha256[:7], 16)


@dataclass(eq=False)
class ImageTokens:
    """One tokenized image of a prompt (its span of positions), freed when this is collected."""

    span: Any  # llama.cpp's image chunk, mtmd_input_chunk_p (a copy this object owns)
    n_tokens: int
    n_pos: int  # positions it advances the sequence by (M-RoPE: fewer than n_tokens)
    sha256: str
    _projector: Projector = field(repr=False)
    embeddings: Any = None  # the encoder's output (c_float array), once ``encode`` ran

    def __post_init__(self) -> None:
        weakref.finalize(self, mtmd.mtmd_input_chunk_free, self.span)

    def decode(self, ctx: llama_cpp.llama_context_p, pos: int, seq: int, n_batch: int) -> int:
        """Decode the image's embeddings into ``seq`` from ``pos`` (decode loop thread;
        encodes first if ``encode`` did not); 0 on success, else llama.cpp's error code."""
        return self._projector.decode(self, ctx, pos, seq, n_batch)


@dataclass(frozen=True)
class MediaPrompt:
    """A prompt's tokens (images as placeholder runs) and its images by start index."""

    tokens: list[int]
    media: dict[int, ImageTokens]


class Projector:
    """An mtmd context for one loaded model.

    Threads: ``tokenize`` and ``encode`` from any thread (tokenize serialised here,
    encodes run one at a time, each on a thread of its own that ends with it: a thread
    kept for encodes would keep an OpenMP pool beside the decode loop's, and libgomp then
    cuts every spin of the loop's decodes short; ``_native.on_a_passing_thread``);
    ``decode`` only on the decode loop thread; ``close`` once, after the loop stopped.
    """

    def __init__(
        self,
        model: llama_cpp.llama_model_p,
        path: Path,
        *,
        threads: int,
        use_gpu: bool,
        cache_bytes: int = EMBEDDING_CACHE_BYTES,
    ) -> None:
        mtmd.mtmd_log_set(_quiet, ctypes.c_void_p(0))
        mtmd.mtmd_helper_log_set(_quiet, ctypes.c_void_p(0))
        params = mtmd.mtmd_context_params_default()
        params.use_gpu = use_gpu
        params.n_threads = threads
        params.print_timings = False
        params.warmup = True
        # A marker of our own, so text that happens to contain "<__media__>" stays text.
        self.marker = f"<__media_{secrets.token_hex(8)}__>"
        self._marker_bytes = self.marker.encode()
        params.media_marker = self._marker_bytes
        self.path = path
        self._lock = threading.Lock()
        self._n_embd = int(llama_cpp.llama_model_n_embd_inp(model))
        self._cache: OrderedDict[str, Any] = OrderedDict()  # sha256 -> embeddings
        self._cache_bytes = cache_bytes
        self.encodes = 0  # images actually encoded (not found in the cache)
        self._nice = ENCODER_NICE  # how much lower an encode beside text runs
        # Its warm-up encode too runs on a passing thread, not the loading one (which may
        # live on, in-process, and would keep a pool of its own).
        ctx = on_a_passing_thread(
            lambda: mtmd.mtmd_init_from_file(str(path).encode(), model, params),
            "edgedesk-vision-load",
        )
        if not ctx:
            raise ModelLoadError(
                f"llama.cpp could not load the vision projector "
                f"{path.name}: not an mmproj GGUF for this model?"
            )
        self._ctx: Any = ctx
        if not mtmd.mtmd_support_vision(ctx):
            self.close()
            raise ModelLoadError(f"{path.name} is not a vision projector (no image encoder)")
        self.mrope = bool(mtmd.mtmd_decode_use_mrope(ctx))

    def prompt_with_markers(self, messages: Sequence[Message]) -> tuple[list[Message], list[Image]]:
        """Messages whose images are this projector's markers in their text, and the
        images in prompt order (those without a marker go before the message's text)."""
        out: list[Message] = []
        images: list[Image] = []
        for message in messages:
            if not message.images:
                out.append(message)
                continue
            content = message.content.replace(MEDIA_MARKER, self.marker, len(message.images))
            missing = len(message.images) - content.count(self.marker)
            if missing > 0:
                content = self.marker * missing + ("\n" + content if content else "")
            out.append(
                Message(
                    message.role,
                    content,
                    message.name,
                    message.tool_call_id,
                    message.tool_calls,
                    message.reasoning,
                )
            )
            images.extend(message.images)
        return out, images

    def tokenize(self, prompt: str, images: Sequence[Image], *, add_bos: bool) -> MediaPrompt:
        """Tokens for ``prompt`` with each marker replaced by its image's placeholder run;
        raises ImageRejected when an image cannot be decoded."""
        images = list(images)
        shown = prompt.count(self.marker)
        if shown != len(images):
            # The template dropped (or repeated) a turn that holds a picture.
            raise InvalidRequest(
                f"the chat template shows {shown} of the {len(images)} images (it leaves "
                "out some turns, such as system turns); send the pictures in user turns",
                param="messages",
            )
        bitmaps = []
        try:
            for index, given in enumerate(images):
                name = f"image {index + 1}"
                image = given
                if not image.checked:  # load_image's own were checked and hashed
                    inspect_image(image.data, HARD_LIMITS, name)  # never decode a bomb
                    digest = hashlib.sha256(image.data).hexdigest()
                    if digest != image.sha256:
                        # The hash keys the prefix cache: a wrong one would reuse another
                        # picture's cache for this one.
                        image = images[index] = replace(image, sha256=digest)
                # llama.cpp reads the bytes where they are (no copy); ``image`` keeps
                # them alive until the call returns.
                buffer = ctypes.cast(ctypes.c_char_p(image.data), ctypes.POINTER(ctypes.c_uint8))
                bitmap = mtmd.mtmd_helper_bitmap_init_from_buf(
                    self._ctx,
                    buffer,  # type: ignore[arg-type]  # C takes a pointer
                    len(image.data),
                    False,
                )
                if not bitmap:
                    raise ImageRejected(f"{name} could not be decoded ({image.mime})")
                bitmaps.append(bitmap)
                mtmd.mtmd_bitmap_set_id(bitmap, image.sha256.encode())
            return self._tokenize(prompt, images, bitmaps, add_bos)
        finally:
            for bitmap in bitmaps:
                mtmd.mtmd_bitmap_free(bitmap)

    def _tokenize(
        self, prompt: str, images: Sequence[Image], bitmaps: list[Any], add_bos: bool
    ) -> MediaPrompt:
        text = prompt.encode("utf-8")
        entry = mtmd.mtmd_input_text()
        entry.text = text
        entry.text_len = len(text)
        entry.add_special = add_bos
        entry.parse_special = True
        array = (mtmd.mtmd_bitmap_p_ctypes * max(1, len(bitmaps)))(*bitmaps)
        chunks = mtmd.mtmd_input_chunks_init()
        try:
            with self._lock:
                code = mtmd.mtmd_tokenize(
                    self._ctx, chunks, ctypes.byref(entry), array, len(bitmaps)
                )
            if code != 0:
                raise ImageRejected(
                    f"the images could not be prepared for the model "
                    f"(llama.cpp mtmd_tokenize error {code})"
                )
            tokens: list[int] = []
            media: dict[int, ImageTokens] = {}
            by_sha = iter(images)
            for index in range(mtmd.mtmd_input_chunks_size(chunks)):
                chunk = mtmd.mtmd_input_chunks_get(chunks, index)
                kind = mtmd.mtmd_input_chunk_get_type(chunk)
                if kind == mtmd.MTMD_INPUT_CHUNK_TYPE_TEXT:
                    count = ctypes.c_size_t(0)
                    ids = mtmd.mtmd_input_chunk_get_tokens_text(chunk, ctypes.byref(count))
                    tokens.extend(ids[i] for i in range(count.value))
                    continue
                if kind != mtmd.MTMD_INPUT_CHUNK_TYPE_IMAGE:
                    raise InvalidRequest("only images are supported, not audio", param="messages")
                image = next(by_sha)
                n_pos = int(mtmd.mtmd_input_chunk_get_n_pos(chunk))
                piece = ImageTokens(
                    mtmd.mtmd_input_chunk_copy(chunk),
                    int(mtmd.mtmd_input_chunk_get_n_tokens(chunk)),
                    n_pos,
                    image.sha256,
                    self,
                )
                media[len(tokens)] = piece
                tokens.extend([placeholder_id(image.sha256)] * n_pos)
            return MediaPrompt(tokens, media)
        finally:
            mtmd.mtmd_input_chunks_free(chunks)

    def encode(self, piece: ImageTokens, *, background: bool = False) -> None:
        """Run the image encoder for ``piece`` (any thread; blocks until done), unless its
        picture's embeddings are cached; ``background``: at a lower CPU priority, as
        other requests are generating. Raises ImageRejected if it fails."""
        if piece.embeddings is not None:
            return
        step = self._nice if background else 0

        def run() -> None:
            _lower_priority(step)  # this thread and the OpenMP threads it starts
            self._encode(piece)

        on_a_passing_thread(run, "edgedesk-vision")

    def _encode(self, piece: ImageTokens) -> None:
        with self._lock:
            cached = self._cache.get(piece.sha256)
            if cached is not None and len(cached) == piece.n_tokens * self._n_embd:
                self._cache.move_to_end(piece.sha256)
                piece.embeddings = cached
                return
            code = mtmd.mtmd_encode_chunk(self._ctx, piece.span)
            if code != 0:
                raise ImageRejected(f"the vision encoder failed on an image (code {code})")
            count = piece.n_tokens * self._n_embd
            out = (ctypes.c_float * count)()
            ctypes.memmove(
                out, mtmd.mtmd_get_output_embd(self._ctx), count * ctypes.sizeof(ctypes.c_float)
            )
            self.encodes += 1
            piece.embeddings = out
            self._cache[piece.sha256] = out
            while (
                sum(ctypes.sizeof(e) for e in self._cache.values()) > self._cache_bytes
                and len(self._cache) > 1
            ):
                self._cache.popitem(last=False)

    def decode(
        self, piece: ImageTokens, ctx: llama_cpp.llama_context_p, pos: int, seq: int, n_batch: int
    ) -> int:
        """Decode ``piece``'s embeddings into ``seq`` at ``pos`` (loop thread)."""
        new_pos = llama_cpp.llama_pos(0)
        if piece.embeddings is None:
            # Not encoded ahead (its cells seemed to be cached, and were not): encode
            # here, holding up the loop for it.
            try:
                self._encode(piece)
            except ImageRejected:
                return -1
        return int(
            mtmd.mtmd_helper_decode_image_chunk(
                self._ctx,
                ctx,
                piece.span,
                piece.embeddings,
                pos,
                seq,
                n_batch,
                ctypes.byref(new_pos),
                mtmd.mtmd_helper_post_decode_callback(),
                None,
            )
        )

    def close(self) -> None:
        """Free the projector's memory (after the decode loop stopped, no encode running)."""
        if self._ctx:
            mtmd.mtmd_free(self._ctx)
            self._ctx = None
