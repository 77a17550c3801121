"""GGUF headers read once per file version (the fit, the model lists and the server ask often)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from desktop.base.config import user_path
from desktop.base.errors import ModelNotFound
from desktop.catalog import GGUFInfo, read_gguf


@dataclass
class HeaderCache:
    """``read_gguf`` cached by resolved path and modification time; any thread may call."""

    _cache: dict[tuple[Path, float], GGUFInfo] = field(default_factory=dict, repr=False)

    def __call__(self, path: Path) -> GGUFInfo:
        """The GGUF header of ``path``; ModelNotFound when there is no such file."""
        resolved = user_path(path).resolve()
        if not resolved.exists():
            raise ModelNotFound(
                f"model file not found: {path}", kind="file_not_found", params={"path": path}
            )
        key = (resolved, resolved.stat().st_mtime)
        if key not in self._cache:
            self._cache[key] = read_gguf(resolved)
        return self._cache[key]
