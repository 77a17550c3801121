"""The database key as a recovery code a person can write down and type back.

A code is the 256-bit key plus 24 check bits, in base32 (letters and the digits 2-7),
14 groups of 4: ``ABCD-EFGH-…``. The check bits catch a mistyped or missing letter
before anything is tried against the database; 0, 1 and 8 are read as O, I and B, and
case, spaces and dashes do not matter. ``edgedesk data import-key`` and the window's
key backup (``desktop.ui.settings.key_backup``) use these.
"""

from __future__ import annotations

import base64
import hashlib
import string

from desktop.base.errors import InvalidRequest

KEY_BYTES = 32
CHECK_BYTES = 3  # 32 + 3 bytes are 280 bits: exactly 56 base32 letters, no padding
GROUP = 4
LETTERS = (KEY_BYTES + CHECK_BYTES) * 8 // 5
_ALPHABET = frozenset(string.ascii_uppercase + "234567")
_LOOKALIKES = str.maketrans({"0": "O", "1": "I", "8": "B"})
_TAG = b"edgedesk-recovery-code-v1"


def _check(key: bytes) -> bytes:
    return hashlib.sha256(_TAG + key).digest()[:CHECK_BYTES]


def encode(secret_hex: str) -> str:
    """The recovery code for a key given as 64 hex digits."""
    key = bytes.fromhex(secret_hex)
    if len(key) != KEY_BYTES:
        raise ValueError("a database key is 32 bytes")
    letters = base64.b32encode(key + _check(key)).decode("ascii")
    return "-".join(letters[i : i + GROUP] for i in range(0, len(letters), GROUP))


def decode(text: str) -> str:
    """The key (64 hex digits) a recovery code stands for; InvalidRequest if mistyped."""
    letters = _letters(text)
    if len(letters) != LETTERS or not set(letters) <= _ALPHABET:
        raise InvalidRequest(
            "this is neither a key file written by 'edgedesk data export-key' nor a "
            f"recovery code: a code is {LETTERS} letters and digits 2-7 in groups of "
            f"{GROUP} (this has {len(letters)} characters)"
        )
    raw = base64.b32decode(letters)
    key, check = raw[:KEY_BYTES], raw[KEY_BYTES:]
    if _check(key) != check:
        raise InvalidRequest(
            "this recovery code has a typo (its check letters do not match); compare it "
            "group by group with the one you kept"
        )
    return key.hex()


def _letters(text: str) -> str:
    return "".join(c for c in text.upper() if c not in " \t\r\n-").translate(_LOOKALIKES)
