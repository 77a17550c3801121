"""Members built on first use, each declaring beside its builder how it lives and dies.

The composition root (``desktop.root.context``) holds its services this way. Each member
declares, in one place: the settings it is rebuilt on (``rebuilt_on``), the settings it
takes in place (``applied_on`` with ``apply``), the settings that need a restart while
it exists (``restart_on``), the members it is built from (``needs``: rebuilt when they
are) and the members it calls later (``uses``), how it is closed (``close``) and the
database connection it holds (``database``). From those, ``Lazies`` answers the three
questions the root used to answer by hand: what a settings change rebuilds (following
``needs`` edges), what it asks a restart for, and in which order the app closes
(dependents first, then reverse build order). The declarations are the one source of
truth: nothing is recorded while the app runs (``tests/root/test_apply_settings.py`` builds
every member and checks that each read of another member is declared).

Whether a member is built, dropping it, and which settings drop it are asked of a typed
holder, never of an object's ``__dict__`` by a string name, so renaming a member cannot
silently stop its rebuild.
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
        on_built: Callable[[], None] | None = None,
    ) -> None:
        self._build = build
        self.rebuilt_on = frozenset(rebuilt_on)
        self._kept_while = kept_while
        self._on_built = on_built
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
                if self._on_built is not None:
                    self._on_built()
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
        return _matches(changes, self.rebuilt_on)

    def kept(self) -> bool:
        """Whether the value is built and its ``kept_while`` says it must stay for now."""
        value = self._value
        return (
            not isinstance(value, _Unset)
            and self._kept_while is not None
            and self._kept_while(value)
        )

    def reset_for(self, changes: Iterable[str]) -> bool:
        """Drop the value if it is built, ``changes`` touch it and nothing keeps it."""
        if not self.built or not self.rebuilt_by(changes) or self.kept():
            return False
        return self.reset()


def _matches(keys: Iterable[str], patterns: Iterable[str]) -> bool:
    """Whether a settings key of ``keys`` matches one of ``patterns`` (``fnmatch``)."""
    pats = tuple(patterns)
    return any(fnmatchcase(key, pattern) for key in keys for pattern in pats)


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
        needs: Iterable[str] = (),
        uses: Iterable[str] = (),
        applied_on: Iterable[str] = (),
        apply: Callable[[Owner, T], None] | None = None,
        restart_on: Iterable[str] = (),
        close: Callable[[T], None] | None = None,
        database: Callable[[T], object] | None = None,
    ) -> None:
        if bool(applied_on) != (apply is not None):
            raise TypeError("applied_on and apply go together")
        self.build = build
        self.rebuilt_on = frozenset(rebuilt_on)
        self.kept_while = kept_while
        self.needs = frozenset(needs)
        self.uses = frozenset(uses)
        self.applied_on = frozenset(applied_on)
        self.apply = apply
        self.restart_on = frozenset(restart_on)
        self.close = close
        self.database = database
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
        return self if obj is None else obj.lazies.value(self)

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

    Threads: ``holder`` and the members' values from any thread (as ``Lazy``);
    ``apply``, ``reset_for`` and ``close`` from one thread at a time (the owner's
    ``apply_settings`` and ``close``). The set of holders never changes after
    construction.
    """

    def __init__(self, owner: object) -> None:
        members: dict[str, LazyMember[Any, Any]] = {}
        for cls in reversed(type(owner).__mro__):  # a subclass's declaration wins
            members.update((m.name, m) for m in vars(cls).values() if isinstance(m, LazyMember))
        for m in members.values():
            unknown = sorted((m.needs | m.uses) - members.keys())
            if unknown:
                raise TypeError(f"{m.name} needs or uses members that do not exist: {unknown}")
        # Weakly: holders that kept their owner alive would make every owner part of a
        # reference cycle, so a dropped one (and the data-folder lock it holds) would wait
        # for the cycle collector instead of going at once.
        me = weakref.ref(owner)
        self._owner = me
        self._members = members
        self._order: list[str] = []  # names in the order their current values were built
        self._order_lock = threading.Lock()  # guards _order
        self._holders: dict[LazyMember[Any, Any], Lazy[Any]] = {
            m: Lazy(
                functools.partial(self._build, me, m),
                rebuilt_on=m.rebuilt_on,
                kept_while=m.kept_while,
                on_built=functools.partial(self._built, m.name),
            )
            for m in members.values()
        }

    def holder(self, member: LazyMember[Any, T]) -> Lazy[T]:
        """The holder of ``member`` (KeyError for a member of another class)."""
        return cast(Lazy[T], self._holders[member])

    def value(self, member: LazyMember[Any, T]) -> T:
        """``member``'s value, built now if need be."""
        return self.holder(member).get()

    def names(self) -> list[str]:
        """Every lazy member's name, sorted."""
        return sorted(m.name for m in self._holders)

    def built_order(self) -> list[str]:
        """The built members' names, in the order their values were built."""
        with self._order_lock:
            return [n for n in self._order if self._held(n).built]

    def needs(self, name: str) -> frozenset[str]:
        """The members ``name`` is built from, as it declares."""
        return self._members[name].needs

    def uses(self, name: str) -> frozenset[str]:
        """The members ``name`` calls later, as it declares."""
        return self._members[name].uses

    def rebuilt_by(self, changes: Iterable[str]) -> list[str]:
        """The members a change of the settings ``changes`` drops (those declared, and
        those built from them), sorted by name."""
        return sorted(self._rebuilt(list(changes), keep=False)[0])

    def reset_for(self, changes: Iterable[str]) -> list[str]:
        """Drop every built member ``changes`` touch (unless kept); their names, sorted."""
        return sorted(self._rebuilt(list(changes), keep=True)[1])

    def apply(self, changes: Iterable[str]) -> list[str]:
        """Settle a change of the settings ``changes``; the keys that need a restart.

        Built members the change touches are dropped (rebuilt on next use), those built
        from them too; a member its ``kept_while`` keeps stays, and the keys that reach
        it need a restart. Built members that take ``changes`` in place get them; those
        with matching ``restart_on`` ask for a restart.
        """
        keys = list(changes)
        _, _, restart = self._rebuilt(keys, keep=True)
        owner = self._owner()
        for m, held in self._holders.items():
            value = held.if_built()
            if value is None and not held.built:
                continue
            if m.apply is not None and _matches(keys, m.applied_on) and owner is not None:
                m.apply(owner, value)
            restart.update(k for k in keys if _matches((k,), m.restart_on))
        return sorted(restart)

    def close(self) -> None:
        """Close every built member that declares how: a member before those it needs or
        uses, otherwise the last built first. Every one is closed even if one fails; the
        first failure is raised after."""
        first: BaseException | None = None
        for name in self._closing_order():
            m = self._members[name]
            value = self._held(name).if_built()
            if m.close is None or (value is None and not self._held(name).built):
                continue
            try:
                m.close(value)
            except Exception as exc:  # the rest still close; the first is raised below
                first = first or exc
        if first is not None:
            raise first

    def databases(self) -> list[object]:
        """The database connections the built members hold, in build order."""
        held = []
        for name in self.built_order():
            m = self._members[name]
            value = self._held(name).if_built()
            if m.database is not None and value is not None:
                held.append(m.database(value))
        return held

    # ------------------------------------------------------------ internals

    def _held(self, name: str) -> Lazy[Any]:
        return self._holders[self._members[name]]

    def _dependents(self) -> dict[str, set[str]]:
        """member -> the members built from it (declared ``needs``)."""
        out: dict[str, set[str]] = {n: set() for n in self._members}
        for name, member in self._members.items():
            for dep in member.needs:
                out[dep].add(name)
        return out

    def _rebuilt(self, keys: list[str], *, keep: bool) -> tuple[set[str], set[str], set[str]]:
        """(members touched, members dropped, keys needing a restart) for ``keys``.

        With ``keep`` off nothing is dropped and ``kept_while`` is not asked: the
        declared answer, whatever is built now.
        """
        dependents = self._dependents()
        touched: set[str] = set()
        dropped: set[str] = set()
        restart: set[str] = set()
        # Each key on its own: a kept member asks a restart for exactly the keys reaching it.
        for key in keys:
            todo = [m.name for m in self._members.values() if _matches((key,), m.rebuilt_on)]
            seen: set[str] = set()
            while todo:
                name = todo.pop()
                if name in seen:
                    continue
                seen.add(name)
                held = self._held(name)
                if keep and held.kept():
                    restart.add(key)
                    continue  # what was built from it still matches it
                touched.add(name)
                todo.extend(dependents[name])
        if keep:
            for name in sorted(touched):
                if self._held(name).reset():
                    dropped.add(name)
        return touched, dropped, restart

    def _closing_order(self) -> list[str]:
        """Built members, each before what it needs or uses; else the last built first."""
        order = list(reversed(self.built_order()))
        after = {n: (self.needs(n) | self._members[n].uses) for n in order}
        result: list[str] = []
        remaining = order[:]
        while remaining:
            # The first (latest built) member nothing remaining needs or uses.
            for name in remaining:
                if not any(name in after[other] for other in remaining if other != name):
                    break
            else:  # a cycle of declarations: fall back to reverse build order
                name = remaining[0]
            remaining.remove(name)
            result.append(name)
        return result

    def _built(self, name: str) -> None:
        with self._order_lock:
            if name in self._order:
                self._order.remove(name)
            self._order.append(name)

    def _build(self, owner: weakref.ref[Any], member: LazyMember[Any, T]) -> T:
        """``member.build(owner)``: a holder is asked only through its owner, so the owner
        is alive."""
        alive = owner()
        if alive is None:
            raise ReferenceError("a lazy member's owner is gone")
        return member.build(alive)


class HasLazies(Protocol):
    """An object with lazy members: it makes ``self.lazies = Lazies(self)`` when built."""

    lazies: Lazies


def lazy(
    *,
    rebuilt_on: Iterable[str] = (),
    kept_while: Callable[[Any], bool] | None = None,
    needs: Iterable[str] = (),
    uses: Iterable[str] = (),
    applied_on: Iterable[str] = (),
    apply: Callable[[Any, Any], None] | None = None,
    restart_on: Iterable[str] = (),
    close: Callable[[Any], None] | None = None,
    database: Callable[[Any], object] | None = None,
) -> Callable[[Callable[[Owner], T]], LazyMember[Owner, T]]:
    """Decorate a builder method into a lazy member with its declarations (``LazyMember``).

    (The callables take the member's value; they are typed loosely here so that the
    member's type is inferred from the builder.)
    """

    def declare(build: Callable[[Owner], T]) -> LazyMember[Owner, T]:
        return LazyMember(
            build,
            rebuilt_on=rebuilt_on,
            kept_while=kept_while,
            needs=needs,
            uses=uses,
            applied_on=applied_on,
            apply=apply,
            restart_on=restart_on,
            close=close,
            database=database,
        )

    return declare
