"""Whether this computer has a font for Chinese, and what to install when it has none.

Without one, every Chinese word of the window is drawn as boxes (□□□□); the words that
say so are English on purpose, since Chinese could not be read. Window's thread only
(QFontDatabase needs the QGuiApplication).
"""

from __future__ import annotations

import sys

from PySide6.QtGui import QFontDatabase

CJK_LANGUAGES = frozenset({"zh_CN"})


def cjk_font_missing() -> bool:
    """Whether no installed font covers Simplified Chinese."""
    return not QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)


def install_hint() -> str:
    """What to install for Chinese on this system (English: readable without one)."""
    if sys.platform.startswith("linux"):
        how = (
            "Debian/Ubuntu: sudo apt install fonts-noto-cjk; "
            "Fedora: sudo dnf install google-noto-sans-cjk-fonts"
        )
    else:
        how = "e.g. Noto Sans CJK SC"
    return (
        "Chinese needs a font with Chinese characters and this computer has none, so the "
        f"window's words would show as boxes. Install one ({how}), then restart EdgeDesk."
    )


def font_warning(language: str) -> str:
    """The warning for ``language`` on this computer ("" when its font is there)."""
    return install_hint() if language in CJK_LANGUAGES and cjk_font_missing() else ""
