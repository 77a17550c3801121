"""Following what another process (the CLI, a second EdgeDesk) changes on disk while the
window is open: installed models, API keys and their last use, document collections.

``QFileSystemWatcher`` tells of each change (no polling): the data folder itself, where
``installed.json`` and ``api_keys.json`` are replaced atomically (a rename into the
folder), and the database with its write-ahead log, which is written in place. A burst of
events is gathered for ``SETTLE_MS``; then each source whose files' size or time changed
is announced once. Window's thread only.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

SETTLE_MS = 250  # one announcement for a burst of writes (a rename, a WAL append, …)
MODELS_FILES = ("installed.json",)
KEYS_FILES = ("api_keys.json", "api_keys.used.json")


def _signature(paths: list[Path]) -> tuple[tuple[int, int], ...]:
    """Size and modification time of each path ((-1, -1) when it is not there)."""
    found = []
    for path in paths:
        try:
            st = path.stat()
            found.append((st.st_size, st.st_mtime_ns))
        except OSError:
            found.append((-1, -1))
    return tuple(found)


class DiskWatch(QObject):
    """Signals ``models_changed``, ``keys_changed`` and ``documents_changed`` when those
    files change on disk, whoever changed them (the window's own writes included)."""

    models_changed = Signal()
    keys_changed = Signal()
    documents_changed = Signal()

    def __init__(self, data_dir: Path, database: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._data_dir = data_dir
        self._sources: dict[str, list[Path]] = {
            "models": [data_dir / name for name in MODELS_FILES],
            "keys": [data_dir / name for name in KEYS_FILES],
            "documents": [database, Path(f"{database}-wal")],
        }
        self._seen = {name: _signature(paths) for name, paths in self._sources.items()}
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._changed)
        self._watcher.fileChanged.connect(self._changed)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._announce)
        self._stopped = False
        self._holds = 0  # switches under way that replace the database's file
        self._watch()

    def hold(self) -> None:
        """Announce nothing until ``release``: the window's own encryption switch closes
        and replaces the database, and a listing meanwhile would read a closed connection."""
        self._holds += 1
        self._settle.stop()

    def release(self) -> None:
        """End one ``hold``; what the switch itself wrote is taken as seen."""
        self._holds = max(0, self._holds - 1)
        if self._holds == 0:
            self._watch()
            self._seen = {name: _signature(paths) for name, paths in self._sources.items()}

    def stop(self) -> None:
        """Announce nothing more (the window is closing)."""
        self._settle.stop()
        self._stopped = True
        paths = self._watcher.files() + self._watcher.directories()
        if paths:
            self._watcher.removePaths(paths)

    def _watch(self) -> None:
        """Watch the folder and every file there is (a replaced file must be watched anew)."""
        with contextlib.suppress(OSError):
            self._data_dir.mkdir(parents=True, exist_ok=True)
        watched = set(self._watcher.files()) | set(self._watcher.directories())
        wanted = [str(self._data_dir)] + [
            str(p) for paths in self._sources.values() for p in paths if p.exists()
        ]
        missing = [p for p in wanted if p not in watched]
        if missing:
            self._watcher.addPaths(missing)

    def _changed(self, _path: str) -> None:
        if not self._stopped and not self._holds:
            self._settle.start()

    def _announce(self) -> None:
        if self._stopped or self._holds:
            return
        self._watch()
        signals = {
            "models": self.models_changed,
            "keys": self.keys_changed,
            "documents": self.documents_changed,
        }
        for name, paths in self._sources.items():
            now = _signature(paths)
            if now != self._seen[name]:
                self._seen[name] = now
                signals[name].emit()
