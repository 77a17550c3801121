"""Remote models as the app sees them: ``NAME/MODEL`` to a load plan, listings, engines.

The composition root builds one ``RemoteModels`` from the settings in force and drops it
when they change; the resolver's ``remote`` hook and the scheduler's load function call it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from desktop.base.errors import ConfigError, EdgeDeskError, ModelNotAllowed
from desktop.base.net import NetGate, Transport
from desktop.engine import ModelSpec, RemotePlan
from desktop.remote._engine import RemoteEngine, list_models, remote_spec
from desktop.remote._registry import RemoteRegistry

REMOTE_LIST_TTL_S = 30.0  # how long a remote's model list is reused


class RemoteModels:
    """The remotes of one settings state: resolve, list (cached) and open their models.

    Any thread may call it: the listing cache is replaced whole, so a reader sees an old
    list or a new one; two threads listing at once both ask the remotes.
    """

    def __init__(
        self,
        registry: RemoteRegistry,
        net: NetGate,
        transport: Transport,
        *,
        allowed_models: Sequence[str] | None,
        timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.registry = registry
        self._net = net
        self._transport = transport
        self._allowed = allowed_models
        self._timeout_s = timeout_s
        self._clock = clock
        self._listed: tuple[float, dict[str, list[str] | str]] | None = None

    def spec(self, ref: str) -> ModelSpec | None:
        """The load plan of ``NAME/MODEL`` on a configured remote, else None."""
        if "/" not in ref:
            return None  # cheap: most names are local and need no registry read
        found = self.registry.split(ref)
        if found is None:
            return None
        allowed = self._allowed
        if found[0].source == "user" and allowed is not None and ref not in allowed:
            # IT's own endpoints are allowed by naming them; a user's are not.
            raise ModelNotAllowed(
                f"{ref} is blocked by your organization's policy (AllowedModels); use a "
                "remote your organization provides, or ask IT to allow it"
            )
        return remote_spec(*found)

    def listed(self, *, max_age_s: float | None = None) -> dict[str, list[str] | str]:
        """Each remote's NAME/MODEL ids, or why it could not be listed (one call each).

        Kept for ``max_age_s`` (default ``REMOTE_LIST_TTL_S``): every /v1/models (and
        every unknown-model error, which lists the models) would otherwise call every
        remote, each up to its timeout.
        """
        cached = self._listed
        age = REMOTE_LIST_TTL_S if max_age_s is None else max_age_s
        if cached is not None and self._clock() - cached[0] < age:
            return cached[1]
        listed: dict[str, list[str] | str] = {}
        for remote in self.registry.all():
            try:
                ids = list_models(
                    remote,
                    key=self.registry.key(remote.name),
                    net=self._net,
                    transport=self._transport,
                )
                listed[remote.name] = [f"{remote.name}/{m}" for m in ids]
            except EdgeDeskError as exc:
                listed[remote.name] = exc.message
        self._listed = (self._clock(), listed)
        return listed

    def ids(self) -> list[str]:
        """Every NAME/MODEL the reachable remotes list (none offline: nothing is asked)."""
        if self._net.refusal() is not None:
            return []
        return [m for ids in self.listed().values() if isinstance(ids, list) for m in ids]

    def engine(self, spec: ModelSpec, plan: RemotePlan) -> RemoteEngine:
        """The engine for ``spec`` planned as ``plan`` (the remote must still be configured)."""
        endpoint = self.registry.get(plan.name)
        if endpoint is None:
            raise ConfigError(f"the remote '{plan.name}' is no longer configured")
        return RemoteEngine(
            spec,
            endpoint,
            plan.model,
            key=self.registry.key(endpoint.name),
            net=self._net,
            transport=self._transport,
            timeout_s=self._timeout_s,
        )
