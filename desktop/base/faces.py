"""A package's public face, exported lazily: the one ``__getattr__``/``__dir__`` pair every
face's ``__init__.py`` installs.

A face lists its names in ``__all__`` and, for each, the inside module that defines it
(``where``: ``{"Scheduler": "_scheduler"}``, or ``("_worker.child", "main")`` where the
face renames). A name is imported from its module when first read, so importing the face
loads none of its insides (no llama_cpp, numpy, httpx, uvicorn...). Nothing is cached in
the face: each read is the inside module's attribute as it is now, so a test that
replaces it there (monkeypatch) is seen through the face too.

The face also imports the same names under ``if TYPE_CHECKING:`` so that mypy and readers
see them; ``tests/architecture/test_faces.py`` checks the two lists agree.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, where: Mapping[str, str | tuple[str, str]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the face ``package``, whose names live in ``where``."""

    def __getattr__(name: str) -> object:
        place = where.get(name)
        if place is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, inner = place if isinstance(place, tuple) else (place, name)
        return getattr(importlib.import_module(f"{package}.{module}"), inner)

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
