"""Members built on first use, each declaring beside its builder the settings it is rebuilt on.

The composition root (``desktop.root.context``) holds its services this way: whether a member is
built, dropping it, and which settings drop it are asked of a typed holder, never of an
object's ``__dict__`` by a string name, so renaming a member cannot silently stop its
rebuild.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase
from typing import Any, Generic, Protocol, TypeVar, cast, overload

T = TypeVar("T")
Owner = TypeVar("Owner", bound="HasLazies")


class _Unset:
    """The value of a holder that is not built (``None`` may be a built value)."""


_UNSET = _Unset()


class Lazy(Generic[T]):
    """One value, built by ``build`` on first ``get`` and kept until ``reset``.

    ``rebuilt_on`` holds settings keys (dotted, ``fnmatch`` patterns: ``server.*``, ``*``)
    whose change drops the value, unless ``kept_while`` says it must stay for now.
    Threads: any thread may call every method. A first build runs once, under the
    holder's lock (a second caller waits for it and gets the same value, as with
    ``functools.cached_property`` on Python 3.11); ``reset`` never waits for a build in
    flight, and a value built before a reset is handed to its caller but not kept.
    """

    def __init__(
        self,
        build: Callable[[], T],
        *,
        rebuilt_on: Iterable[str] = (),
        kept_while: Callable[[T], bool] | None = None,
    ) -> None:
        self._build = build
        self.rebuilt_on = frozenset(rebuilt_on)
        self._kept_while = kept_while
        self._value: T | _Unset = _UNSET
        self._lock = threading.RLock()
        self._building = False
        self._generation = 0  # bumped by reset: a build that straddles one is not kept

    @property
    def built(self) -> bool:
        """Whether the value exists (using it now costs nothing)."""
        return not isinstance(self._value, _Unset)

    def get(self) -> T:
        """The value, built now if it is not yet (RuntimeError if its builder needs it)."""
        value = self._value
        if not isinstance(value, _Unset):
            return value
        with self._lock:
            value = self._value
            if not isinstance(value, _Unset):
                return value  # built by another thread while this one waited
            if self._building:
                raise RuntimeError("a lazy member's builder asked for the member itself")
            generation = self._generation
            self._building = True
            try:
                built = self._build()
            finally:
                self._building = False
            if generation == self._generation:
                self._value = built
            return built

    def if_built(self) -> T | None:
        """The value if it is built, else None (nothing is built to answer)."""
        value = self._value
        return None if isinstance(value, _Unset) else value

    def reset(self) -> bool:
        """Drop the value so the next ``get`` builds it again; whether one was held."""
        self._generation += 1
        held, self._value = self.built, _UNSET
        return held

    def set(self, value: T) -> None:
        """Hold ``value`` as if built (a test's stand-in, e.g. a library with a tiny model)."""
        self._generation += 1
        self._value = value

    def rebuilt_by(self, changes: Iterable[str]) -> bool:
        """Whether a change of any of the settings ``changes`` drops this value."""
        return any(fnmatchcase(key, pattern) for key in changes for pattern in self.rebuilt_on)

    def reset_for(self, changes: Iterable[str]) -> bool:
        """Drop the value if it is built, ``changes`` touch it and nothing keeps it."""
        value = self._value
        if isinstance(value, _Unset) or not self.rebuilt_by(changes):
            return False
        if self._kept_while is not None and self._kept_while(value):
            return False
        return self.reset()


class LazyMember(Generic[Owner, T]):
    """A class attribute declaring a lazily built member: its builder and rebuild rules.

    ``obj.name`` is the member's value (built on first use), ``Class.name`` this
    declaration, and ``Class.name.of(obj)`` the holder of ``obj``'s value.
    """

    def __init__(
        self,
        build: Callable[[Owner], T],
        *,
        rebuilt_on: Iterable[str] = (),
        kept_while: Callable[[T], bool] | None = None,
    ) -> None:
        self.build = build
        self.rebuilt_on = frozenset(rebuilt_on)
        self.kept_while = kept_while
        self.name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type[Any] | None = None) -> LazyMember[Owner, T]: ...

    @overload
    def __get__(self, obj: Owner, owner: type[Any] | None = None) -> T: ...

    def __get__(
        self, obj: Owner | None, owner: type[Any] | None = None
    ) -> LazyMember[Owner, T] | T:
        return self if obj is None else self.of(obj).get()

    def __set__(self, obj: Owner, value: T) -> None:
        # A data descriptor, so that an assignment cannot hide the member from its holder.
        raise AttributeError(
            f"{self.name} is built by its owner; a test may hand it a "
            f"value with {type(obj).__name__}.{self.name}.of(obj).set(value)"
        )

    def of(self, obj: Owner) -> Lazy[T]:
        """``obj``'s holder of this member."""
        return obj.lazies.holder(self)


class Lazies:
    """The holders of one object's lazy members, made with the object (see ``HasLazies``).

    Threads: as ``Lazy``; the set of holders never changes after construction.
    """

    def __init__(self, owner: object) -> None:
        members: dict[str, LazyMember[Any, Any]] = {}
        for cls in reversed(type(owner).__mro__):  # a subclass's declaration wins
            members.update((m.name, m) for m in vars(cls).values() if isinstance(m, LazyMember))
        # Weakly: holders that kept their owner alive would make every owner part of a
        # reference cycle, so a dropped one (and the data-folder lock it holds) would wait
        # for the cycle collector instead of going at once.
        me = weakref.ref(owner)
        self._holders: dict[LazyMember[Any, Any], Lazy[Any]] = {
            m: Lazy(
                functools.partial(_build_for, me, m.build),
                rebuilt_on=m.rebuilt_on,
                kept_while=m.kept_while,
            )
            for m in members.values()
        }

    def holder(self, member: LazyMember[Any, T]) -> Lazy[T]:
        """The holder of ``member`` (KeyError for a member of another class)."""
        return cast(Lazy[T], self._holders[member])

    def names(self) -> list[str]:
        """Every lazy member's name, sorted."""
        return sorted(m.name for m in self._holders)

    def rebuilt_by(self, changes: Iterable[str]) -> list[str]:
        """The members a change of the settings ``changes`` drops, sorted by name."""
        keys = list(changes)
        return sorted(m.name for m, held in self._holders.items() if held.rebuilt_by(keys))

    def reset_for(self, changes: Iterable[str]) -> list[str]:
        """Drop every built member ``changes`` touch (unless kept); their names, sorted."""
        keys = list(changes)
        return sorted(m.name for m, held in self._holders.items() if held.reset_for(keys))


def _build_for(owner: weakref.ref[Any], build: Callable[[Any], T]) -> T:
    """``build(owner)``: a holder is asked only through its owner, so the owner is alive."""
    alive = owner()
    if alive is None:
        raise ReferenceError("a lazy member's owner is gone")
    return build(alive)


class HasLazies(Protocol):
    """An object with lazy members: it makes ``self.lazies = Lazies(self)`` when built."""

    lazies: Lazies


def lazy(
    *,
    rebuilt_on: Iterable[str] = (),
    kept_while: Callable[[Any], bool] | None = None,
) -> Callable[[Callable[[Owner], T]], LazyMember[Owner, T]]:
    """Decorate a builder method into a lazy member, rebuilt when ``rebuilt_on`` change.

    (``kept_while`` takes the member's value; it is typed loosely here so that the
    member's type is inferred from the builder.)
    """

    def declare(build: Callable[[Owner], T]) -> LazyMember[Owner, T]:
        return LazyMember(build, rebuilt_on=rebuilt_on, kept_while=kept_while)

    return declare
