"""``ResolverDirectory``: the models the server lists and serves, as the resolver finds them.

The server's ``ModelDirectory`` (``services``): which ids exist (registered, installed,
catalog models present on disk, remote ``NAME/MODEL`` ids), what each one is (kind,
pooling, header facts for Ollama's listings) and whether it takes pictures. A file path
is never an id here: a client must not name files on this disk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from desktop.base.errors import EdgeDeskError
from desktop.chat import known_to_see, takes_pictures
from desktop.engine import RemotePlan
from desktop.resolve import ModelResolver, looks_like_path
from desktop.server._services import ModelFacts


@dataclass
class ResolverDirectory:
    """Every model the resolver can serve: registered, downloaded or imported, catalog."""

    resolver: ModelResolver
    installed: Callable[[], list[str]] = list  # ids in the installed index (pulls, imports)
    remote_ids: Callable[[], list[str]] = list  # NAME/MODEL ids the remote engines list

    def ids(self) -> list[str]:
        """Registered ids, then installed ones, then catalog models present on disk."""
        found = list(dict.fromkeys([*self.resolver.registered, *self.installed()]))
        found = [ref for ref in found if self.has(ref)]
        for entry in self.resolver.catalog:
            if entry.id not in found and self.has(entry.id):
                found.append(entry.id)
        return found + [m for m in self.remote_ids() if m not in found]

    def has(self, model: str) -> bool:
        """Whether the scheduler could serve ``model``, by the resolver's own lookup.

        A file path is never a model id here: clients must not name files on this disk.
        """
        if self.resolver.remote is not None and self.resolver.remote(model) is not None:
            return True  # a known remote; the remote itself says if MODEL exists
        if looks_like_path(model) and model not in self.resolver.registered:
            return False
        try:
            self.resolver.locate(model)
        except EdgeDeskError:
            return False
        return True

    def kind(self, model: str) -> tuple[str, int | None]:
        """The resolved kind (catalog entry, else from the header) and the pooling type."""
        spec = self.resolver(model)
        if isinstance(spec.plan, RemotePlan):
            return spec.kind, None
        return spec.kind, self.resolver.info(spec.file).pooling_type

    def describe(self, model: str) -> ModelFacts:
        """Header facts about ``model`` for Ollama's listings; reads the header only."""
        spec = self.resolver(model)
        if isinstance(spec.plan, RemotePlan):
            return {"kind": spec.kind, "remote": spec.plan.name}
        info = self.resolver.info(spec.file)
        return {
            "kind": spec.kind,
            "architecture": info.architecture,
            "parameters": info.parameters,
            "file_bytes": info.file_bytes,
            "context_length": info.context_length,
            "embedding_length": info.embedding_length,
            "block_count": info.block_count,
            "file_type": info.file_type,
            "chat_template": spec.chat_template or info.chat_template,
            "reasoning": spec.reasoning_format == "think",
            "vision": known_to_see(spec),
            "modified": spec.file.stat().st_mtime,
        }

    def vision(self, model: str) -> bool:
        """Whether pictures may be sent to ``model`` (``chat.capabilities.takes_pictures``: a
        local model with a vision projector, or a remote one, whose server decides); a
        model that cannot be resolved (policy, a damaged file) raises that error."""
        return takes_pictures(self.resolver(model))
