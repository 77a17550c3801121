"""Named presets the user saved (a system prompt and, optionally, sampling parameters),
kept in ``prompt_presets.json`` in the config folder."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from desktop.base.errors import ConfigError

PRESETS_FILE = "prompt_presets.json"


@dataclass(frozen=True)
class Preset:
    """A system prompt, and the sampling parameters saved with it (None: none saved)."""

    prompt: str
    parameters: dict[str, object] | None = None


class PresetStore:
    """Save, list and delete named presets; a damaged file is reported, never lost.

    A preset is stored as its prompt alone (files from before presets kept parameters)
    or as ``{"system_prompt": ..., "parameters": {...}}``; both are read.
    """

    def __init__(self, config_dir: Path) -> None:
        self.path = config_dir / PRESETS_FILE

    def entries(self) -> dict[str, Preset]:
        """Every preset by name, in name order (empty if none were saved)."""
        if not self.path.exists():
            return {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"{self.path}: cannot read the prompt presets ({exc}); fix or delete the file"
            ) from None
        if not isinstance(raw, dict):
            raise ConfigError(
                f"{self.path}: expected an object of name → prompt; fix or delete the file"
            )
        return {str(k): _preset(v) for k, v in sorted(raw.items())}

    def all(self) -> dict[str, str]:
        """Every preset's system prompt by name, in name order."""
        return {name: preset.prompt for name, preset in self.entries().items()}

    def save(self, name: str, prompt: str, parameters: dict[str, object] | None = None) -> None:
        """Store ``prompt`` (and ``parameters``) under ``name``, replacing a preset of
        that name."""
        name = " ".join(name.split())
        if not name:
            raise ConfigError("a preset needs a name")
        presets = self.entries()
        presets[name] = Preset(prompt, parameters)
        self._write(presets)

    def delete(self, name: str) -> bool:
        """Forget preset ``name``; True if it existed."""
        presets = self.entries()
        if presets.pop(name, None) is None:
            return False
        self._write(presets)
        return True

    def _write(self, presets: dict[str, Preset]) -> None:
        # Write a sibling file and rename it: a crash mid-write keeps the old presets.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        data = {
            name: p.prompt
            if p.parameters is None
            else {"system_prompt": p.prompt, "parameters": p.parameters}
            for name, p in presets.items()
        }
        temporary.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        os.replace(temporary, self.path)


def _preset(value: object) -> Preset:
    if isinstance(value, dict):
        parameters = value.get("parameters")
        return Preset(
            str(value.get("system_prompt", "")),
            parameters if isinstance(parameters, dict) else None,
        )
    return Preset(str(value))
