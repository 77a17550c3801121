"""The local API server as the window and ``edgedesk serve`` see it: one small handle.

The context holds one server runner (its lazy member ``api_server``: rebuilt when the
server settings change while it is stopped, kept while it runs, stopped at close);
``ServerHandle`` is the only way to it: start, stop, whether it runs, its address, and
the runner to subscribe to or serve in the foreground.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the runner pulls in uvicorn and FastAPI: imported when first built
    from desktop.base.config import ServerSettings
    from desktop.engine import ImageLimits
    from desktop.root.members import Lazy
    from desktop.server import ServerRunner


class ServerHandle:
    """Start, stop and ask about the app's local API server; built by the context.

    ``running`` and ``url`` never build the runner. A stopped runner whose settings (or
    picture caps) differ from those in force is rebuilt by ``to_start``/``start``; a
    running one keeps its settings until it is started again. Threads: ``running`` and
    ``url`` from any thread; the rest from one owning thread at a time (the window's
    workers, ``serve``'s main thread), as ``ServerRunner``.
    """

    def __init__(
        self,
        held: Lazy[ServerRunner],
        in_force: Callable[[], tuple[ServerSettings, ImageLimits]],
    ) -> None:
        self._held = held
        self._in_force = in_force

    @property
    def running(self) -> bool:
        """Whether the server accepts connections."""
        runner = self._held.if_built()
        return runner is not None and runner.running

    @property
    def url(self) -> str:
        """The base URL clients use (``…/v1``): the runner's, else the settings in force'."""
        runner = self._held.if_built()
        if runner is not None:
            return runner.url
        settings, _ = self._in_force()
        return f"http://{settings.host}:{settings.port}/v1"

    @property
    def runner(self) -> ServerRunner:
        """The server runner held now (built on first use; not started)."""
        return self._held.get()

    def to_start(self) -> ServerRunner:
        """The runner to start: rebuilt first if it is stopped and settings changed since."""
        runner = self._held.if_built()
        if runner is not None and not runner.running:
            settings, limits = self._in_force()
            if runner.settings != settings or runner.image_limits != limits:
                self._held.reset()
        return self._held.get()

    def start(self) -> ServerRunner:
        """Start serving on a background thread (blocking until it accepts); the runner."""
        runner = self.to_start()
        runner.start()
        return runner

    def stop(self) -> None:
        """Stop serving, if it does (nothing is built to answer)."""
        runner = self._held.if_built()
        if runner is not None:
            runner.stop()
