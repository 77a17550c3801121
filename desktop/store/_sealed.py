"""Exports only a passphrase opens: AES-256-GCM with a scrypt-derived key, in a small file.

No crypto of our own: the ``cryptography`` package's AESGCM and Scrypt. The container
(all integers big-endian), documented in docs/privacy.md:

    magic   16 bytes  b"EDGEDESK-SEALED\\x01" (format version 1)
    log2 N   1 byte   scrypt cost (17: N = 131072), r 1 byte (8), p 1 byte (1)
    salt    16 bytes  random, for scrypt
    nonce   12 bytes  random, for AES-GCM
    sealed  the rest  AES-256-GCM ciphertext of the content, then its 16-byte tag

The 47-byte header is the AES-GCM associated data, so changing any byte of the file
(header included) makes opening fail rather than yield altered content. A new salt
and nonce per file: the same passphrase never reuses a key and nonce pair.
"""

from __future__ import annotations

import os

from desktop.base.errors import InvalidRequest

MAGIC = b"EDGEDESK-SEALED\x01"
SEALED_SUFFIX = ".edgedesk-sealed"  # what the window offers; any name works
LOG2_N, R, P = 17, 8, 1  # scrypt at OWASP's recommended cost (~0.4 s, 128 MiB)
_SALT, _NONCE = 16, 12
_HEADER = len(MAGIC) + 3 + _SALT + _NONCE
_MAX_LOG2_N = 18  # a file may not ask for more than 256 MiB of scrypt memory


def is_sealed(data: bytes) -> bool:
    """Whether ``data`` is a sealed export (judged by its first bytes)."""
    return data.startswith(MAGIC[:-1])


def _key(passphrase: str, salt: bytes, log2_n: int, r: int, p: int) -> bytes:
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    return Scrypt(salt=salt, length=32, n=2**log2_n, r=r, p=p).derive(passphrase.encode("utf-8"))


def seal(content: bytes, passphrase: str) -> bytes:
    """``content`` encrypted under ``passphrase`` (InvalidRequest when it is empty)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if not passphrase:
        raise InvalidRequest("the passphrase is empty")
    salt, nonce = os.urandom(_SALT), os.urandom(_NONCE)
    header = MAGIC + bytes((LOG2_N, R, P)) + salt + nonce
    return header + AESGCM(_key(passphrase, salt, LOG2_N, R, P)).encrypt(nonce, content, header)


def unseal(data: bytes, passphrase: str) -> bytes:
    """The content of a sealed export; InvalidRequest for a wrong passphrase or a bad file."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if not data.startswith(MAGIC[:-1]):
        raise InvalidRequest("this is not an encrypted EdgeDesk export")
    if data[len(MAGIC) - 1] != MAGIC[-1]:
        raise InvalidRequest(
            "this encrypted export was written by a newer EdgeDesk; update EdgeDesk to open it"
        )
    if len(data) < _HEADER + 16:
        raise InvalidRequest("this encrypted export is cut short")
    log2_n, r, p = data[len(MAGIC)], data[len(MAGIC) + 1], data[len(MAGIC) + 2]
    if not (1 <= log2_n <= _MAX_LOG2_N and 1 <= r <= 32 and 1 <= p <= 16):
        raise InvalidRequest("this encrypted export is damaged (its key parameters)")
    salt = data[len(MAGIC) + 3 : len(MAGIC) + 3 + _SALT]
    nonce = data[_HEADER - _NONCE : _HEADER]
    try:
        return AESGCM(_key(passphrase, salt, log2_n, r, p)).decrypt(
            nonce, data[_HEADER:], data[:_HEADER]
        )
    except InvalidTag:
        raise InvalidRequest(
            "the passphrase does not open this encrypted export (or the "
            "file was changed); nothing was imported"
        ) from None
