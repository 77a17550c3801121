"""The lazy holder behind the composition root: built once, reset, rebuilt on its settings."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from desktop.root.members import Lazies, Lazy, lazy
from tests.fixtures.lazy_reads import reads_while_building, undeclared

pytestmark = pytest.mark.fast


class Counter:
    """A builder that counts its builds and hands out a new object each time."""

    def __init__(self) -> None:
        self.builds = 0

    def __call__(self) -> object:
        self.builds += 1
        return object()


def test_get_builds_on_first_use_and_keeps_the_value_until_reset() -> None:
    build = Counter()
    held = Lazy(build)
    assert not held.built and held.if_built() is None and build.builds == 0
    first = held.get()
    assert held.built and held.get() is first and held.if_built() is first
    assert build.builds == 1
    assert held.reset() is True
    assert not held.built and build.builds == 1  # nothing is built to answer
    assert held.reset() is False  # nothing was held
    second = held.get()
    assert second is not first and build.builds == 2


def test_none_is_a_built_value() -> None:
    build = Counter()

    def nothing() -> None:
        build()

    held = Lazy(nothing)
    assert held.get() is None and held.built
    held.get()
    assert build.builds == 1


def test_set_holds_a_stand_in_as_if_built() -> None:
    build = Counter()
    held = Lazy(build)
    stand_in = object()
    held.set(stand_in)
    assert held.built and held.get() is stand_in and build.builds == 0


def test_two_threads_asking_at_once_share_one_build() -> None:
    started, release = threading.Event(), threading.Event()
    builds: list[object] = []

    def slow() -> object:
        started.set()
        assert release.wait(10)
        builds.append(object())
        return builds[-1]

    held = Lazy(slow)
    got: list[object] = []
    first = threading.Thread(target=lambda: got.append(held.get()))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=lambda: got.append(held.get()))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert len(builds) == 1 and got == [builds[0], builds[0]]


def test_a_value_built_across_a_reset_is_returned_but_not_kept() -> None:
    started, release = threading.Event(), threading.Event()
    build = Counter()

    def slow() -> object:
        started.set()
        assert release.wait(10)
        return build()

    held = Lazy(slow)
    got: list[object] = []
    worker = threading.Thread(target=lambda: got.append(held.get()))
    worker.start()
    assert started.wait(10)
    held.reset()  # settings changed while it was being built from the old ones
    release.set()
    worker.join(10)
    assert got and not held.built
    again = threading.Thread(target=lambda: got.append(held.get()))
    again.start()
    again.join(10)
    assert got[1] is not got[0] and held.get() is got[1] and build.builds == 2


def test_a_builder_that_needs_its_own_value_fails_instead_of_recursing() -> None:
    held: Lazy[int] = Lazy(lambda: held.get() + 1)
    with pytest.raises(RuntimeError, match="asked for the member itself"):
        held.get()
    assert not held.built


@pytest.mark.parametrize(
    ("patterns", "changes", "rebuilt"),
    [
        (("proxy", "ca_bundle"), ["proxy"], True),
        (("proxy", "ca_bundle"), ["offline", "language"], False),
        (("server.*",), ["server.port"], True),
        (("server.*",), ["server_port", "engine.parallel"], False),
        (("*",), ["engine.keep_alive_s"], True),
        (("*",), [], False),
        ((), ["proxy"], False),
    ],
)
def test_rebuilt_by_matches_keys_and_patterns(
    patterns: tuple[str, ...], changes: list[str], rebuilt: bool
) -> None:
    assert Lazy(object, rebuilt_on=patterns).rebuilt_by(changes) is rebuilt


def test_reset_for_drops_a_built_value_its_keys_touch_unless_kept() -> None:
    serving = [True]
    held = Lazy(Counter(), rebuilt_on=("server.*",), kept_while=lambda _value: serving[0])
    assert held.reset_for(["server.port"]) is False  # not built: nothing to drop
    value = held.get()
    assert held.reset_for(["offline"]) is False and held.get() is value
    assert held.reset_for(["server.port"]) is False and held.get() is value  # kept
    serving[0] = False
    assert held.reset_for(["server.port"]) is True and not held.built


class Box:
    """A small owner of lazy members, declared as the composition root declares its own."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.lazies = Lazies(self)

    @lazy(rebuilt_on=("prefix",))
    def label(self) -> str:
        """A label built from the prefix."""
        return self.prefix + "-label"

    @lazy()
    def fixed(self) -> list[str]:
        """Built once, never rebuilt by settings."""
        return [self.prefix]


class BigBox(Box):
    """Redeclares a member: its own declaration is the one held."""

    @lazy(rebuilt_on=("size",))
    def fixed(self) -> list[str]:
        """Rebuilt on size here."""
        return [self.prefix, "big"]


def test_members_are_values_on_the_object_and_holders_on_the_class() -> None:
    box = Box("a")
    assert not Box.label.of(box).built
    assert box.label == "a-label"
    assert Box.label.of(box).built and not Box.fixed.of(box).built
    box.prefix = "b"
    assert box.label == "a-label"  # kept until reset
    assert box.lazies.reset_for(["prefix", "other"]) == ["label"]
    assert box.label == "b-label"
    other = Box("c")
    assert other.label == "c-label" and box.label == "b-label"  # one holder per object
    assert Box.label.__doc__ == "A label built from the prefix."


def test_a_member_cannot_be_assigned_over() -> None:
    box = Box("a")
    with pytest.raises(AttributeError, match=r"Box\.label\.of\(obj\)\.set"):
        box.label = "x"  # type: ignore[misc]
    assert box.label == "a-label"


def test_lazies_name_what_each_key_rebuilds_and_a_subclass_redeclares() -> None:
    box, big = Box("a"), BigBox("a")
    assert box.lazies.names() == ["fixed", "label"]
    assert box.lazies.rebuilt_by(["prefix"]) == ["label"]
    assert box.lazies.rebuilt_by(["size"]) == []
    assert big.lazies.rebuilt_by(["size"]) == ["fixed"]
    assert big.fixed == ["a", "big"]
    with pytest.raises(KeyError):
        Box.fixed.of(big)  # the base class's declaration is not BigBox's member


def test_an_owner_goes_with_its_last_reference() -> None:
    # Without a cycle through its holders: the composition root's data-folder lock is
    # released the moment a dropped context goes, as it was before the holders.
    gc.disable()
    try:
        box = Box("a")
        assert box.label == "a-label"
        gone = weakref.ref(box)
        del box
        assert gone() is None
    finally:
        gc.enable()


class Resource:
    """Something a member holds that must be closed, noting the order it was closed in."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log, self.open = name, log, True

    def close(self) -> None:
        self.log.append(self.name)
        self.open = False


class House:
    """A small composition root: a store, a model built from the store and a setting, a
    server built from the model and kept while it runs, a clock that only calls the store
    later, and a gate that takes its setting in place."""

    def __init__(self) -> None:
        self.settings = {"mode": "a", "limit": 1}
        self.closed: list[str] = []
        self.running = False
        self.lazies = Lazies(self)

    @lazy(close=lambda r: r.close(), database=lambda r: r)
    def store(self) -> Resource:
        return Resource("store", self.closed)

    @lazy(rebuilt_on=("mode",), needs=("store",), close=lambda r: r.close())
    def model(self) -> Resource:
        self.store  # noqa: B018 - built from it
        return Resource(f"model-{self.settings['mode']}", self.closed)

    @lazy(
        needs=("model",),
        kept_while=lambda r: r.owner.running,
        restart_on=("limit",),
        close=lambda r: r.close(),
    )
    def server(self) -> Resource:
        self.model  # noqa: B018
        server = Resource("server", self.closed)
        server.owner = self  # type: ignore[attr-defined]
        return server

    @lazy(uses=("store",), close=lambda r: r.close())
    def clock(self) -> Resource:
        return Resource("clock", self.closed)

    @lazy(
        applied_on=("limit",),
        apply=lambda house, gate: gate.update(limit=house.settings["limit"]),
    )
    def gate(self) -> dict[str, object]:
        return {"limit": self.settings["limit"]}

    @lazy()
    def sneaky(self) -> Resource:
        """Reads the store without declaring it."""
        self.store  # noqa: B018
        return Resource("sneaky", self.closed)


def test_a_change_rebuilds_what_is_built_from_the_member_it_names() -> None:
    house = House()
    model, server, store = house.model, house.server, house.store
    assert house.lazies.rebuilt_by(["mode"]) == ["model", "server"]
    house.settings["mode"] = "b"
    assert house.lazies.apply(["mode"]) == []
    assert house.server is not server and house.model is not model
    assert house.model.name == "model-b" and house.store is store


def test_a_kept_member_stays_and_the_keys_reaching_it_need_a_restart() -> None:
    house = House()
    server = house.server
    house.running = True
    house.settings["mode"] = "b"
    assert house.lazies.apply(["mode", "other"]) == ["mode"]
    assert house.server is server  # kept while it runs
    assert house.model.name == "model-b"  # the rest follows the change at once
    assert house.lazies.apply(["limit"]) == ["limit"]  # read once into a built server


def test_a_member_takes_its_settings_in_place_when_it_declares_how() -> None:
    house = House()
    gate = house.gate
    house.settings["limit"] = 5
    house.lazies.apply(["limit"])
    assert house.gate is gate and gate == {"limit": 5}


def test_a_read_left_out_of_needs_is_named_by_the_tests_recorder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The declarations are the one source of truth: the app records nothing, so a read
    # left out of ``needs`` does not rebuild; the tests' recorder names it instead.
    house = House()
    with reads_while_building(monkeypatch) as reads:
        house.sneaky  # noqa: B018
        house.model  # noqa: B018
    assert reads == {("sneaky", "store"), ("model", "store")}
    assert undeclared(house.lazies, reads) == [("sneaky", "store")]
    assert house.lazies.needs("sneaky") == set() and house.lazies.needs("model") == {"store"}
    assert house.lazies.rebuilt_by(["mode"]) == ["model", "server"]  # not the sneaky one


def test_close_goes_dependents_first_then_last_built_first() -> None:
    house = House()
    house.clock  # noqa: B018 - built first, but it uses the store: closed before it
    house.server  # noqa: B018
    assert house.lazies.databases() == [house.store]
    house.lazies.close()
    assert house.closed == ["server", "model-a", "clock", "store"]


def test_one_failing_close_does_not_keep_the_others_open() -> None:
    house = House()
    store, server = house.store, house.server

    def broken() -> None:
        raise OSError("disk gone")

    server.close = broken  # type: ignore[method-assign]
    with pytest.raises(OSError, match="disk gone"):
        house.lazies.close()
    assert not store.open and not house.model.open


def test_a_declaration_naming_a_member_that_does_not_exist_is_refused() -> None:
    class Typo:
        def __init__(self) -> None:
            self.lazies = Lazies(self)

        @lazy(needs=("stor",))
        def model(self) -> int:
            return 1

    with pytest.raises(TypeError, match=r"\['stor'\]"):
        Typo()
