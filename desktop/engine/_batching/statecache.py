"""RAM (and disk) copies of KV-cache sequences pushed out of every slot.

When a slot is handed to an unrelated request, the conversation it held is copied out
with ``llama_state_seq_get_data``; a later request that starts the same way gets it
copied back into its slot (``llama_state_seq_set_data``) and decodes only the rest.
Bounded by bytes, least recently used out first. A sliding-window model's saved
sequence can be continued only from its end (restored, those layers hold the last
``n_swa`` positions), so the decode loop saves those as of their prompt's end and
``best`` offers them only to a prompt that continues them whole.

With a disk folder, ``persist`` writes the saved sequences there when the model is
unloaded (shutdown, keep-alive, swap) and the next load lists them, so an agent
session resumes after a restart without re-reading its prompt. A file is read back
only when a request continues it. Files are checked (magic, length, SHA-256) before
llama.cpp sees them; a bad one is deleted and counts as a miss.

With a ``disk_key`` (the composition root derives it from the encrypted database's key;
the engine never reads a keyring) the files are sealed with AES-256-GCM (``EDKV2``): the
tokens and the state each under their own nonce, so listing decrypts only the tokens,
and the name is a keyed hash, so it confirms no guessed prompt. A file in the other
format (plaintext left from before encryption, or sealed under a key that is gone) is
deleted when it is listed: it is never read. ``cryptography`` is imported only then (a
cache with a ``disk_key``), not by every worker that loads a model.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import hmac
import os
import secrets
import struct
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.engine._batching.slots import common_prefix
from desktop.engine._llama_cpp import llama_cpp

# Saving costs a copy of the sequence's KV cells; below this many tokens recomputing
# is as cheap, so short sequences are not kept.
MIN_SAVED_TOKENS = 32
_MAGIC = b"EDKV1\0"
_HEADER = struct.Struct("<6sI32s")  # magic, token count, SHA-256 of tokens + state
_SUFFIX = ".kv"
_SEALED = b"EDKV2\0"
_SEALED_HEADER = struct.Struct("<6s12sI")  # magic, the tokens' nonce, their sealed length
_NONCE = 12


@dataclass(eq=False)
class _Entry:
    """One saved sequence: in RAM (``buffer``), on disk (``path``), or both."""

    buffer: ctypes.Array[ctypes.c_uint8] | None = None
    path: Path | None = None


class StateCache:
    """Saved sequences keyed by their tokens.

    Every method but ``longest_prefix`` is the decode loop thread's (``persist`` also
    after that thread ended): it alone changes the cache, so it reads it without a lock.
    ``longest_prefix`` may be called from any thread: it copies the keys under
    ``_keys_lock``, which the loop holds whenever it adds, removes or reorders one.
    """

    def __init__(
        self,
        ctx: llama_cpp.llama_context_p,
        capacity_bytes: int,
        disk: Path | None = None,
        disk_bytes: int = 0,
        *,
        n_swa: int = 0,
        disk_key: bytes | None = None,
    ) -> None:
        self._ctx = ctx
        self._seal = _Seal(disk_key) if disk_key is not None else _Plain()
        self._n_swa = n_swa  # the model's sliding window; 0: none
        self._capacity = capacity_bytes
        self._entries: OrderedDict[tuple[int, ...], _Entry] = OrderedDict()
        # Held while the loop changes ``_entries``' keys, and while another thread copies
        # them (an OrderedDict cannot be iterated while it changes).
        self._keys_lock = threading.Lock()
        self._bytes = 0
        self._disk = disk if disk is not None and disk_bytes > 0 else None
        self._disk_bytes = disk_bytes
        self.restores = 0  # sequences copied back into a slot since load
        self.disk_restores = 0  # of which read from disk
        # This load's mark in the disk folder: a deletion in any process (``chats rm`` in
        # a terminal while ``serve`` runs) removes the folder, and so the mark; a cache
        # that finds its mark gone forgets everything instead of writing it back.
        self._mark: Path | None = None
        if self._disk is not None:
            self._list_disk(self._disk)
            self._place_mark()

    # ------------------------------------------------------------------ RAM
    @property
    def keeps(self) -> bool:
        """Whether ``save`` keeps anything (a RAM budget was given)."""
        return self._capacity > 0

    def save(self, seq: int, tokens: list[int]) -> bool:
        """Copy sequence ``seq`` (holding ``tokens``) out, if it is worth it and fits;
        whether nothing worth keeping is lost when it is emptied now (a copy is kept, or
        it is too short to be worth one)."""
        if len(tokens) < MIN_SAVED_TOKENS:
            return True  # recomputing it is as cheap as a copy
        if self._capacity <= 0:
            return False
        key = tuple(tokens)
        entry = self._entries.get(key)
        if entry is not None and entry.buffer is not None:
            with self._keys_lock:
                self._entries.move_to_end(key)
            return True
        size = int(llama_cpp.llama_state_seq_get_size(self._ctx, seq))
        if size <= 0 or size > self._capacity:
            return False
        buffer = (ctypes.c_uint8 * size)()
        if int(llama_cpp.llama_state_seq_get_data(self._ctx, buffer, size, seq)) != size:
            return False
        self._evict_ram(size)
        with self._keys_lock:
            if entry is None:
                entry = self._entries[key] = _Entry()
            self._entries.move_to_end(key)
        entry.buffer = buffer
        self._bytes += size
        return True

    def _evict_ram(self, size: int) -> None:
        """Free RAM for ``size`` bytes: least recently used first (a copy on disk stays)."""
        for key in list(self._entries):
            if self._bytes + size <= self._capacity:
                return
            entry = self._entries[key]
            if entry.buffer is None:
                continue
            self._bytes -= len(entry.buffer)
            entry.buffer = None
            if entry.path is None:
                with self._keys_lock:
                    del self._entries[key]

    def best(self, prompt: list[int]) -> tuple[tuple[int, ...], int] | None:
        """The saved sequence sharing the longest prefix with ``prompt`` that can be
        continued from there, and that length."""
        found: tuple[tuple[int, ...], int] | None = None
        for key in self._entries:
            shared = self._usable(key, prompt)
            if shared > 0 and (found is None or shared > found[1]):
                found = (key, shared)
        return found

    def _usable(self, key: tuple[int, ...], prompt: Sequence[int]) -> int:
        """How many leading ``prompt`` tokens the saved ``key`` serves once restored: 0
        when that needs a cut its sliding-window layers cannot make (restored, they hold
        only the last ``n_swa`` positions, so it continues only from its end)."""
        shared = common_prefix(key, prompt)
        # The decode loop keeps at most len(prompt) - 1 (one token is decoded for logits).
        keep = min(shared, len(prompt) - 1)
        if self._n_swa > 0 and len(key) > self._n_swa and keep < len(key) - 1:
            return 0
        return shared

    def restore(self, key: tuple[int, ...], seq: int) -> bool:
        """Copy the saved ``key`` into (emptied) sequence ``seq``; False if llama.cpp refused."""
        with self._keys_lock:
            entry = self._entries.pop(key)
        buffer = entry.buffer
        from_disk = buffer is None
        if buffer is not None:
            self._bytes -= len(buffer)
        elif entry.path is not None:
            buffer = self._seal.read(entry.path, key)
        if entry.path is not None:
            # The slot holds it now; what it grows into is written at the next persist.
            entry.path.unlink(missing_ok=True)
        memory = llama_cpp.llama_get_memory(self._ctx)
        llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
        if (
            buffer is None
            or int(llama_cpp.llama_state_seq_set_data(self._ctx, buffer, len(buffer), seq)) == 0
        ):
            llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
            return False
        self.restores += 1
        self.disk_restores += int(from_disk)
        return True

    def longest_prefix(self, tokens: Sequence[int]) -> int:
        """How many leading ``tokens`` the longest matching saved sequence holds. Any
        thread, as a hint: the cache may change as soon as the keys are copied."""
        with self._keys_lock:
            keys = list(self._entries)
        return max((self._usable(key, tokens) for key in keys), default=0)

    def clear(self) -> None:
        """Forget every saved sequence, in RAM and the files listed (a conversation was
        deleted or the data's encryption changed: what is saved may be theirs)."""
        for entry in self._entries.values():
            if entry.path is not None:
                entry.path.unlink(missing_ok=True)
        with self._keys_lock:
            self._entries.clear()
        self._bytes = 0
        if self._disk is not None and self.deleted_elsewhere():
            self._place_mark()  # what is saved from now on may be written back again

    def deleted_elsewhere(self) -> bool:
        """Whether a deletion removed the disk folder since this cache last looked (its
        mark is gone): what it holds may be deleted content, never to be written back."""
        return self._mark is not None and not self._mark.exists()

    def unmark(self) -> None:
        """Remove this load's mark (at unload, after ``persist``)."""
        if self._mark is not None:
            self._mark.unlink(missing_ok=True)
            self._mark = None

    def _place_mark(self) -> None:
        assert self._disk is not None
        mark = self._disk / f".live-{os.getpid()}-{secrets.token_hex(6)}"
        try:
            self._disk.mkdir(parents=True, exist_ok=True)
            mark.touch(exist_ok=False)
        except OSError:
            self._mark = None  # an unwritable folder: nothing is written back there anyway
            return
        self._mark = mark

    # ------------------------------------------------------------------ disk
    def persist(self) -> int:
        """Write every sequence held only in RAM to the disk folder, newest first, within
        its byte budget (oldest files out); returns how many were written."""
        if self._disk is None or self.deleted_elsewhere():
            return 0  # the loop forgets first (``DecodeLoop.persist``); never write back
        with contextlib.suppress(OSError):
            self._disk.mkdir(parents=True, exist_ok=True)
        written = 0
        keys = list(self._entries)
        for key in reversed(keys):  # newest first: the budget keeps the latest sessions
            entry = self._entries[key]
            if entry.path is not None or entry.buffer is None:
                continue
            if self._n_swa <= 0 and any(
                len(other) > len(key) and other[: len(key)] == key for other in keys
            ):
                continue  # a longer saved sequence holds this one's tokens (and can be cut)
            path = self._disk / f"{self._seal.name(key)}{_SUFFIX}"
            if self._seal.write(path, key, bytes(entry.buffer)):
                entry.path = path
                written += 1
        self._prune_disk()
        return written

    def _list_disk(self, folder: Path) -> None:
        """Know the sequences saved in ``folder`` (oldest first), reading only their tokens."""
        try:
            files = sorted(folder.glob(f"*{_SUFFIX}"), key=lambda p: p.stat().st_mtime)
        except OSError:
            return
        for path in files:
            tokens = self._seal.read_tokens(path)
            if tokens is None:
                path.unlink(missing_ok=True)
                continue
            with self._keys_lock:
                self._entries[tokens] = _Entry(path=path)

    def _prune_disk(self) -> None:
        assert self._disk is not None
        try:
            files = sorted(
                self._disk.glob(f"*{_SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True
            )
            total = 0
            for path in files:
                total += path.stat().st_size
                if total > self._disk_bytes:
                    path.unlink(missing_ok=True)
                    for entry in self._entries.values():
                        if entry.path == path:
                            entry.path = None
        except OSError:
            return
        with self._keys_lock:
            for key in [k for k, e in self._entries.items() if e.path is None and e.buffer is None]:
                del self._entries[key]


def _token_bytes(tokens: tuple[int, ...]) -> bytes:
    return struct.pack(f"<{len(tokens)}i", *tokens)


def _replace_with(path: Path, parts: Sequence[bytes]) -> bool:
    """Write ``parts`` to ``path`` atomically (a crash leaves the old file or none)."""
    staged = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with staged.open("wb") as out:
            for part in parts:
                out.write(part)
        os.replace(staged, path)
    except OSError:
        staged.unlink(missing_ok=True)
        return False
    return True


def _as_buffer(state: bytes) -> ctypes.Array[ctypes.c_uint8]:
    return (ctypes.c_uint8 * len(state)).from_buffer_copy(state)


class _Plain:
    """``EDKV1``: tokens and state in the clear, checked by a SHA-256 (a plaintext database)."""

    def name(self, tokens: tuple[int, ...]) -> str:
        """The file name for ``tokens``."""
        return hashlib.sha256(_token_bytes(tokens)).hexdigest()[:32]

    def write(self, path: Path, tokens: tuple[int, ...], state: bytes) -> bool:
        """Write one sequence atomically."""
        body = _token_bytes(tokens)
        digest = hashlib.sha256(body + state).digest()
        return _replace_with(path, (_HEADER.pack(_MAGIC, len(tokens), digest), body, state))

    def read_tokens(self, path: Path) -> tuple[int, ...] | None:
        """The tokens saved in ``path``; None if it is not an intact ``EDKV1`` file."""
        return _read_tokens(path)

    def read(self, path: Path, tokens: tuple[int, ...]) -> ctypes.Array[ctypes.c_uint8] | None:
        """The state saved in ``path`` for ``tokens``; None if it is not intact."""
        return _read(path, tokens)


class _Seal:
    """``EDKV2``: tokens and state sealed with AES-256-GCM under the derived ``key``."""

    def __init__(self, key: bytes) -> None:
        # Imported here, not with the module: only a sealed cache needs cryptography.
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._invalid = InvalidTag
        self._aead = AESGCM(_subkey(key, b"edgedesk prompt cache EDKV2 seal"))
        self._name_key = _subkey(key, b"edgedesk prompt cache EDKV2 names")

    def name(self, tokens: tuple[int, ...]) -> str:
        """A keyed hash of ``tokens``: the same sequence overwrites its file, and the name
        confirms no guessed prompt to someone without the key."""
        return hmac.new(self._name_key, _token_bytes(tokens), hashlib.sha256).hexdigest()[:32]

    def write(self, path: Path, tokens: tuple[int, ...], state: bytes) -> bool:
        """Seal and write one sequence atomically."""
        body = _token_bytes(tokens)
        first, second = os.urandom(_NONCE), os.urandom(_NONCE)
        sealed_tokens = self._aead.encrypt(first, body, _SEALED)
        # The state is bound to its tokens: one file's state never restores under another's.
        sealed_state = self._aead.encrypt(second, state, _SEALED + hashlib.sha256(body).digest())
        header = _SEALED_HEADER.pack(_SEALED, first, len(sealed_tokens))
        return _replace_with(path, (header, sealed_tokens, second, sealed_state))

    def read_tokens(self, path: Path) -> tuple[int, ...] | None:
        """The tokens sealed in ``path`` (the state is not read); None if they do not open."""
        try:
            with path.open("rb") as data:
                magic, nonce, size = _SEALED_HEADER.unpack(data.read(_SEALED_HEADER.size))
                sealed = data.read(size)
        except (OSError, struct.error):
            return None
        if magic != _SEALED or len(sealed) != size:
            return None
        try:
            body = self._aead.decrypt(nonce, sealed, _SEALED)
        except self._invalid:
            return None
        count = len(body) // 4
        if len(body) % 4 or count < MIN_SAVED_TOKENS:
            return None
        return tuple(struct.unpack(f"<{count}i", body))

    def read(self, path: Path, tokens: tuple[int, ...]) -> ctypes.Array[ctypes.c_uint8] | None:
        """The state sealed in ``path`` for ``tokens``; None if it does not open or match."""
        try:
            raw = path.read_bytes()
            magic, nonce, size = _SEALED_HEADER.unpack_from(raw)
        except (OSError, struct.error):
            return None
        start = _SEALED_HEADER.size + size
        if magic != _SEALED or len(raw) <= start + _NONCE:
            return None
        body = _token_bytes(tokens)
        try:
            if self._aead.decrypt(nonce, raw[_SEALED_HEADER.size : start], _SEALED) != body:
                return None
            state = self._aead.decrypt(
                raw[start : start + _NONCE],
                raw[start + _NONCE :],
                _SEALED + hashlib.sha256(body).digest(),
            )
        except self._invalid:
            return None
        return _as_buffer(state)


def _subkey(key: bytes, purpose: bytes) -> bytes:
    from cryptography.hazmat.primitives.hashes import SHA256
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=SHA256(), length=32, salt=None, info=purpose).derive(key)


def _read_tokens(path: Path) -> tuple[int, ...] | None:
    try:
        with path.open("rb") as data:
            magic, count, _ = _HEADER.unpack(data.read(_HEADER.size))
            body = data.read(4 * count)
    except (OSError, struct.error):
        return None
    if magic != _MAGIC or len(body) != 4 * count or count < MIN_SAVED_TOKENS:
        return None
    return tuple(struct.unpack(f"<{count}i", body))


def _read(path: Path, tokens: tuple[int, ...]) -> ctypes.Array[ctypes.c_uint8] | None:
    """The state saved in ``path`` for ``tokens``, or None if the file is not intact."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    body = _token_bytes(tokens)
    start = _HEADER.size + len(body)
    if len(raw) <= start:
        return None
    magic, count, digest = _HEADER.unpack_from(raw)
    if (
        magic != _MAGIC
        or count != len(tokens)
        or raw[_HEADER.size : start] != body
        or hashlib.sha256(raw[_HEADER.size :]).digest() != digest
    ):
        return None
    return _as_buffer(raw[start:])
