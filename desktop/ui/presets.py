"""Named system prompts the user saved, kept in ``prompt_presets.json`` in the config folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

from desktop.errors import ConfigError

PRESETS_FILE = "prompt_presets.json"


class PresetStore:
    """Save, list and delete named system prompts; a damaged file is reported, never lost."""

    def __init__(self, config_dir: Path) -> None:
        self.path = config_dir / PRESETS_FILE

    def all(self) -> dict[str, str]:
        """Every preset by name, in name order (empty if none were saved)."""
        if not self.path.exists():
            return {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{self.path}: cannot read the prompt presets ({exc}); "
                              "fix or delete the file") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{self.path}: expected an object of name → prompt; "
                              "fix or delete the file")
        return {str(k): str(v) for k, v in sorted(raw.items())}

    def save(self, name: str, prompt: str) -> None:
        """Store ``prompt`` under ``name`` (replacing a preset of that name)."""
        name = " ".join(name.split())
        if not name:
            raise ConfigError("a preset needs a name")
        presets = self.all()
        presets[name] = prompt
        self._write(presets)

    def delete(self, name: str) -> bool:
        """Forget preset ``name``; True if it existed."""
        presets = self.all()
        if presets.pop(name, None) is None:
            return False
        self._write(presets)
        return True

    def _write(self, presets: dict[str, str]) -> None:
        # Write a sibling file and rename it: a crash mid-write keeps the old presets.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(presets, ensure_ascii=False, indent=2),
                             encoding="utf-8")
        os.replace(temporary, self.path)
