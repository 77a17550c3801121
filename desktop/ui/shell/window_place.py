"""Where the window was, so that it opens there again (size, place, maximized).

Kept in one small file of the configuration folder (``window.json``: Qt's own
``saveGeometry`` bytes, base64), written when the app shuts down and read at start. No
user content. A missing, damaged or foreign file is ignored: the window then takes its
first size for the screen. Qt's ``restoreGeometry`` moves a window whose screen is gone
back onto one that is there.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path

from PySide6.QtCore import QByteArray

FILE_NAME = "window.json"
_KEY = "geometry"


def load_geometry(config_dir: Path) -> QByteArray | None:
    """The geometry saved in ``config_dir``; None when there is none worth using."""
    try:
        data = json.loads((config_dir / FILE_NAME).read_text(encoding="utf-8"))
        raw = base64.b64decode(data[_KEY], validate=True)
    except (OSError, ValueError, KeyError, TypeError, binascii.Error):
        return None
    return QByteArray(raw) if raw else None


def save_geometry(config_dir: Path, geometry: QByteArray) -> bool:
    """Keep ``geometry`` in ``config_dir`` (written whole, then renamed: a crash mid-way
    leaves the old file); False when the folder cannot be written."""
    text = json.dumps({_KEY: base64.b64encode(bytes(geometry.data())).decode("ascii")})
    target = config_dir / FILE_NAME
    temporary = target.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, target)
    except OSError:
        temporary.unlink(missing_ok=True)
        return False
    return True
