"""The model catalog: parse and validate ``models.toml`` into typed entries."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from desktop.base.errors import ConfigError, ModelNotFound

Family = Literal["glm", "kimi", "bge", "other"]
Kind = Literal["chat", "embedding", "reranker"]
Tier = Literal["laptop", "desktop", "workstation"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Quant(_Strict):
    """One quantization of a model: its file(s) in the repo (several for split GGUFs)."""

    name: str = Field(min_length=1)
    files: tuple[str, ...] = Field(min_length=1)
    size: int | None = Field(default=None, gt=0)
    sha256: tuple[str, ...] | None = None

    @field_validator("files")
    @classmethod
    def _gguf_only(cls, files: tuple[str, ...]) -> tuple[str, ...]:
        for name in files:
            if not name.endswith(".gguf"):
                raise ValueError(f"'{name}' is not a .gguf file")
        return files

    @field_validator("sha256")
    @classmethod
    def _hex_digests(cls, digests: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for digest in digests or ():
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise ValueError(f"'{digest}' is not a lowercase SHA-256 hex digest")
        return digests


class ModelEntry(_Strict):
    """One catalogued model: where it lives on the Hub and how to run it."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")
    name: str
    family: Family
    kind: Kind
    repo: str = Field(pattern=r"^[\w.\-]+/[\w.\-]+$")
    context_length: int = Field(gt=0)
    license: str
    tier: Tier
    reasoning: Literal["none", "think"] = "none"
    chat_template: str | None = None
    embedding_dim: int | None = Field(default=None, gt=0)
    # The languages an embedding model was trained for ("en", "zh"); empty: many
    # (multilingual) or not stated. The window hints at a multilingual model when a
    # folder's text is in a language its collection's model does not know.
    languages: tuple[str, ...] = ()
    default_quant: str
    notes: str | None = None
    quants: tuple[Quant, ...] = Field(min_length=1)
    # A vision model's projector (llama.cpp's mmproj GGUF), one file in the same repo
    # for every quant; size and SHA-256 are hints like the quants' own.
    mmproj: str | None = None
    mmproj_size: int | None = Field(default=None, gt=0)
    mmproj_sha256: str | None = None
    # A mixture of experts: the share of the file's bytes that are routed experts (a
    # hint for the fit before download; once downloaded, the header says exactly).
    experts_share: float | None = Field(default=None, gt=0, lt=1)

    @model_validator(mode="after")
    def _default_quant_exists(self) -> ModelEntry:
        names = [q.name for q in self.quants]
        if self.default_quant not in names:
            raise ValueError(f"default_quant '{self.default_quant}' is not one of {names}")
        if len(set(names)) != len(names):
            raise ValueError("quant names must be unique")
        for quant in self.quants:
            if quant.sha256 is not None and len(quant.sha256) != len(quant.files):
                raise ValueError(f"quant {quant.name}: one sha256 per file is required")
        if self.kind == "embedding" and self.embedding_dim is None:
            raise ValueError("embedding models must state embedding_dim")
        if self.mmproj is not None and (
            not self.mmproj.endswith(".gguf") or "/" in self.mmproj or self.kind != "chat"
        ):
            raise ValueError(
                f"mmproj '{self.mmproj}' must be a .gguf file at the top of the "
                "repo, for a chat model"
            )
        if (self.mmproj_size or self.mmproj_sha256) and self.mmproj is None:
            raise ValueError("mmproj_size and mmproj_sha256 need mmproj")
        digest = self.mmproj_sha256
        if digest is not None and (len(digest) != 64 or digest.strip("0123456789abcdef")):
            raise ValueError(f"mmproj_sha256 '{digest}' is not a lowercase SHA-256 hex digest")
        return self

    def quant(self, name: str | None = None) -> Quant:
        """The named quant (case-insensitive), or the default one."""
        wanted = (name or self.default_quant).upper()
        for quant in self.quants:
            if quant.name.upper() == wanted:
                return quant
        available = ", ".join(q.name for q in self.quants)
        raise ModelNotFound(f"{self.id} has no quant '{name}'; available: {available}")


class Catalog(_Strict):
    """All catalogued models, by id."""

    schema_version: Literal[1]
    model: tuple[ModelEntry, ...]

    @model_validator(mode="after")
    def _unique_ids(self) -> Catalog:
        ids = [m.id for m in self.model]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate model ids: {duplicates}")
        return self

    def __iter__(self) -> Iterator[ModelEntry]:  # type: ignore[override]
        return iter(self.model)

    def __len__(self) -> int:
        return len(self.model)

    def get(self, model_id: str) -> ModelEntry:
        """The entry for ``model_id``, or ModelNotFound with close matches."""
        for entry in self.model:
            if entry.id == model_id:
                return entry
        close = [m.id for m in self.model if model_id.lower() in m.id or m.id in model_id.lower()]
        hint = f"; did you mean {', '.join(close)}?" if close else "; see 'edgedesk models list'"
        raise ModelNotFound(
            f"unknown model '{model_id}'{hint}", kind="unknown_model", params={"model": model_id}
        )

    def find(self, model_id: str) -> ModelEntry | None:
        """The entry for ``model_id`` or None."""
        return next((m for m in self.model if m.id == model_id), None)


def default_catalog_path() -> Path:
    """The ``models.toml`` shipped with the app (a packaged copy of the repo's file)."""
    return Path(__file__).resolve().parent.parent / "data" / "models.toml"


def load_catalog(path: Path | None = None) -> Catalog:
    """Read and validate a catalog file; problems name the entry and field."""
    source = path or default_catalog_path()
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"model catalog not found at {source}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc})") from None
    try:
        return Catalog.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = list(first["loc"])
        where = ".".join(str(p) for p in loc)
        if len(loc) >= 2 and loc[0] == "model" and isinstance(loc[1], int):
            entry = raw.get("model", [])[loc[1]]
            where = f"model '{entry.get('id', loc[1])}' " + ".".join(str(p) for p in loc[2:])
        raise ConfigError(f"{source}: {where}: {first['msg']}") from None
