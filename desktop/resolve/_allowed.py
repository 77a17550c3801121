"""Whether the machine policy (AllowedModels) lets a model run: by id or by SHA-256."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from desktop.base.errors import ModelNotAllowed
from desktop.base.filebytes import sha256_file


@dataclass
class Digests:
    """SHA-256 of model files, cached by path and modification time (hashing takes seconds)."""

    _cache: dict[tuple[Path, float], str] = field(default_factory=dict, repr=False)

    def __call__(self, path: Path) -> str:
        """The hex digest of ``path``'s bytes."""
        key = (path, path.stat().st_mtime)
        if key not in self._cache:
            self._cache[key] = sha256_file(path)
        return self._cache[key]


def check_allowed(
    model_id: str, files: list[Path], allowed: list[str] | None, digests: Digests
) -> None:
    """Refuse a model ``allowed`` does not list by id, nor every file by its SHA-256.

    ``allowed`` None means no policy: everything runs. Files are hashed only when the id
    is not listed and the policy names digests.
    """
    if allowed is None or model_id in allowed:
        return
    listed = {a.lower() for a in allowed if len(a) == 64}
    if listed and all(digests(f) in listed for f in files):
        return
    raise ModelNotAllowed(
        f"{model_id} is blocked by your organization's policy (AllowedModels); "
        "ask IT to allow it or pick an allowed model",
        kind="policy_blocked",
        params={"model": model_id},
    )
