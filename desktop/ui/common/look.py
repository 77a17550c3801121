"""Icons, style sheets and translations from ``resources/``, applied to the application."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QLibraryInfo, QLocale, QObject, Qt, QTranslator
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication

RESOURCES = Path(__file__).resolve().parents[3] / "resources"


def icon(name: str) -> QIcon:
    """The SVG icon ``resources/icons/<name>.svg`` (an empty icon if it is missing)."""
    path = RESOURCES / "icons" / f"{name}.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


def resolve_theme(theme: str) -> str:
    """``light`` or ``dark``: ``system`` follows the desktop's colour scheme."""
    if theme in {"light", "dark"}:
        return theme
    hints = QGuiApplication.styleHints()
    return "dark" if hints.colorScheme() == Qt.ColorScheme.Dark else "light"


def apply_theme(app: QApplication, theme: str) -> str:
    """Load the light or dark style sheet onto ``app``; returns the one applied."""
    chosen = resolve_theme(theme)
    sheet = RESOURCES / "styles" / f"{chosen}.qss"
    text = sheet.read_text(encoding="utf-8") if sheet.exists() else ""
    # Images the sheets draw (spin box arrows) live in resources/, wherever that is.
    app.setStyleSheet(text.replace("%RES%", RESOURCES.as_posix()))
    return chosen


def install_translator(app: QApplication, language: str) -> QTranslator | None:
    """Load ``resources/translations/edgedesk_<language>.qm``; None for English or if absent.

    The returned translator must be kept alive by the caller (Qt does not own it).
    """
    if language == "en":
        return None
    # Qt's own words (file dialogs' "Look in", standard Save/Cancel buttons) come from
    # the qtbase translations PySide6 ships; ours fall back to them.
    qt = QTranslator(app)
    qt.load(
        QLocale(language),
        "qtbase",
        "_",
        QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath),
    )
    translator = _WithQt(qt, app)
    folder = str(RESOURCES / "translations")
    if not translator.load(QLocale(language), "edgedesk", "_", folder):
        return None
    app.installTranslator(translator)
    return translator


class _WithQt(QTranslator):
    """EdgeDesk's translations, then Qt's: one translator, so removing it removes both."""

    def __init__(self, qt: QTranslator, parent: QObject) -> None:
        super().__init__(parent)
        self._qt = qt

    def translate(
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str | None:
        """Our translation of ``source``, else Qt's, else None: the source is shown.

        None, not '': PySide hands '' to Qt as an empty (not null) string, which Qt takes
        for the translation, so a string not yet translated showed as nothing at all.
        """
        found = super().translate(context, source, disambiguation, n)
        return found or self._qt.translate(context, source, disambiguation, n) or None
