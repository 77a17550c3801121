"""Moving the data folder: chats and models arrive whole, failures leave everything in place."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from desktop.base.config import ConfigError, NoPolicy, Paths, load_settings
from desktop.datafolder import _relocate as relocate
from desktop.datafolder._relocate import (
    DataFolderLock,
    move_data,
    pending_move,
    request_move,
)
from desktop.root.context import AppContext, build_context
from desktop.store._chat_records import ChatMessage


class _Pinned:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def forced(self) -> Mapping[str, Any]:
        return {"data_location": str(self.folder)}


def _context(policy: Any = None, **options: Any) -> AppContext:
    """A start of the window: it carries out a requested move."""
    return build_context(
        environ=dict(os.environ), policy=policy or NoPolicy(), apply_moves=True, **options
    )


def _with_a_chat_and_a_model(ctx: AppContext) -> tuple[int, Path]:
    chat = ctx.chat_store.create_conversation("budget notes")
    ctx.chat_store.add_message(chat.id, ChatMessage("user", "where did the 2024 numbers go?"))
    ctx.chat_store.close()
    model = ctx.paths.models_dir / "org" / "repo" / "model.gguf"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"GGUF" + bytes(4096))
    return chat.id, model


def _quit(ctx: AppContext) -> None:
    ctx.data_lock.release()


def test_move_takes_chats_and_models_to_the_new_folder(tmp_path: Path) -> None:
    ctx = _context()
    old_dir = ctx.paths.data_dir
    chat_id, model = _with_a_chat_and_a_model(ctx)
    target = tmp_path / "encrypted-volume" / "EdgeDesk"
    request_move(ctx.paths, ctx.effective, target, move=True)
    assert pending_move(ctx.paths) is not None
    _quit(ctx)

    moved = _context()
    assert moved.paths.data_dir == target
    assert moved.notice is not None and str(target) in moved.notice
    assert [c.title for c in moved.chat_store.list_conversations()] == ["budget notes"]
    assert moved.chat_store.get_messages(chat_id)[0].content.startswith("where did")
    assert (target / model.relative_to(old_dir)).read_bytes()[:4] == b"GGUF"
    assert not model.exists() and not (old_dir / "edgedesk.db").exists()
    assert pending_move(moved.paths) is None
    assert moved.effective.settings.data_location == str(target)
    moved.chat_store.close()
    _quit(moved)
    again = _context()  # the move happens once; later starts simply use the folder
    assert again.paths.data_dir == target and again.notice is None
    _quit(again)


def test_move_waits_while_another_edgedesk_uses_the_folder(tmp_path: Path) -> None:
    ctx = _context()
    target = tmp_path / "elsewhere"
    request_move(ctx.paths, ctx.effective, target, move=True)
    still_running = _context()  # e.g. `edgedesk serve` started before the window quit
    assert still_running.paths.data_dir == ctx.paths.data_dir
    assert still_running.notice is not None and "once every other" in still_running.notice
    assert pending_move(ctx.paths) is not None
    _quit(ctx)
    _quit(still_running)
    assert _context().paths.data_dir == target


def test_a_failed_copy_leaves_the_data_where_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _context()
    _, model = _with_a_chat_and_a_model(ctx)
    source = ctx.paths.data_dir
    before = sorted(p.relative_to(source) for p in source.rglob("*") if p.name != ".in-use")
    target = tmp_path / "usb-stick"
    target.mkdir()
    real_copy = shutil.copy2
    calls = []

    def disk_fills_up(src: str, dst: str, **kwargs: Any) -> Any:
        calls.append(src)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_copy(src, dst, **kwargs)

    monkeypatch.setattr(relocate.shutil, "copy2", disk_fills_up)
    with pytest.raises(ConfigError, match="nothing was moved"):
        relocate._copy_all(relocate._entries(source), target, 1, None)  # across drives
    assert sorted(p.relative_to(source) for p in source.rglob("*") if p.name != ".in-use") == before
    assert list(target.iterdir()) == []
    assert model.read_bytes()[:4] == b"GGUF"
    _quit(ctx)


def test_copy_across_drives_reports_progress_and_removes_the_originals(tmp_path: Path) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    (source / "models" / "org").mkdir(parents=True)
    (source / "models" / "org" / "m.gguf").write_bytes(bytes(3000))
    (source / "edgedesk.db").write_bytes(bytes(1000))
    target.mkdir()
    seen: list[tuple[int, int]] = []
    moved = relocate._copy_all(
        relocate._entries(source), target, 4000, lambda done, total: seen.append((done, total))
    )
    assert moved.size == 4000 and seen[-1] == (4000, 4000)
    assert (target / "models" / "org" / "m.gguf").stat().st_size == 3000
    assert len(list(source.iterdir())) == 2  # originals stay until the move is committed
    assert moved.finish() == []
    assert list(source.iterdir()) == []


def test_a_failed_start_move_keeps_the_old_folder_and_says_why(tmp_path: Path) -> None:
    ctx = _context()
    _with_a_chat_and_a_model(ctx)
    target = tmp_path / "target"
    request_move(ctx.paths, ctx.effective, target, move=True)
    _quit(ctx)
    (target / "models").mkdir(parents=True)  # meanwhile something else claimed the target
    after = _context()
    assert after.paths.data_dir == ctx.paths.data_dir
    assert after.notice is not None and after.notice.startswith("Your data stays in")
    assert "already holds models" in after.notice
    assert [c.title for c in after.chat_store.list_conversations()] == ["budget notes"]
    assert after.effective.settings.data_location is None
    after.chat_store.close()
    _quit(after)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("relative/folder", "absolute path"),
        ("{data}/inside", "contain each other"),
        ("{data}", "already keeps its data"),
    ],
)
def test_moves_that_would_tangle_data_are_refused(target: str, message: str) -> None:
    ctx = _context()
    with pytest.raises(ConfigError, match=message):
        request_move(
            ctx.paths, ctx.effective, Path(target.format(data=ctx.paths.data_dir)), move=True
        )
    assert pending_move(ctx.paths) is None
    _quit(ctx)


def test_moving_onto_existing_edgedesk_data_is_refused(tmp_path: Path) -> None:
    ctx = _context()
    _with_a_chat_and_a_model(ctx)
    other = tmp_path / "colleague-data"
    (other / "models").mkdir(parents=True)
    with pytest.raises(ConfigError, match="already holds"):
        move_data(ctx.paths.data_dir, other)
    request_move(ctx.paths, ctx.effective, other, move=False)  # switching to it is fine
    _quit(ctx)
    switched = _context()
    assert switched.paths.data_dir == other and (ctx.paths.models_dir / "org").exists()
    _quit(switched)


def test_a_policy_location_wins_and_cannot_be_moved(tmp_path: Path) -> None:
    pinned = tmp_path / "srv" / "edgedesk-data"
    ctx = _context(_Pinned(pinned))
    assert ctx.paths.data_dir == pinned and ctx.paths.database.parent == pinned
    assert ctx.effective.is_locked("data_location")
    with pytest.raises(ConfigError, match="set by your organization"):
        request_move(ctx.paths, ctx.effective, tmp_path / "mine", move=True)
    _quit(ctx)


def test_a_relative_location_in_settings_names_the_key(tmp_path: Path) -> None:
    paths = Paths.from_env({"EDGEDESK_HOME": str(tmp_path)})
    paths.ensure()
    paths.settings_file.write_text('data_location = "my data"\n')
    with pytest.raises(ConfigError, match="data_location.*absolute"):
        load_settings(paths, environ={})


def test_the_folder_lock_is_shared_until_someone_wants_it_alone(tmp_path: Path) -> None:
    first, second, mover = (DataFolderLock(tmp_path) for _ in range(3))
    first.share()
    second.share()
    assert not mover.try_exclusive()
    first.release()
    second.release()
    assert mover.try_exclusive()
    mover.release()


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop", "data", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "EDGEDESK_HOME": str(home)},
    )


def test_cli_data_move_and_show(tmp_path: Path, edgedesk_home: Path) -> None:
    ctx = _context()
    _, model = _with_a_chat_and_a_model(ctx)
    _quit(ctx)
    target = tmp_path / "new-home"
    moved = _cli("move", str(target), home=edgedesk_home)
    assert moved.returncode == 0, moved.stderr
    assert "Moved your data" in moved.stderr
    shown = json.loads(_cli("show", "--json", home=edgedesk_home).stdout)
    assert shown["data_dir"] == str(target) and shown["set_by"] == "user"
    assert Path(shown["models_dir"], "org", "repo", "model.gguf").exists()
    assert not model.exists()
    refused = _cli("move", str(target / "sub"), home=edgedesk_home)
    assert refused.returncode == 2 and "contain each other" in refused.stderr
    assert "Traceback" not in refused.stderr


def _across_drives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every folder report its own device, as two drives do, forcing the copy."""
    real_stat = os.stat

    class _Device:
        def __init__(self, result: os.stat_result, device: int) -> None:
            self._result, self.st_dev = result, device

        def __getattr__(self, name: str) -> Any:
            return getattr(self._result, name)

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        result = real_stat(path, *args, **kwargs)
        return _Device(result, hash(str(path)) & 0xFFFF)  # every folder its own "drive"

    monkeypatch.setattr(relocate.os, "stat", stat)


def test_pulled_models_are_still_installed_after_a_move(tmp_path: Path) -> None:
    from desktop.catalog._installed import InstalledModel

    ctx = _context()
    model_file = ctx.paths.models_dir / "someone" / "Other-GGUF" / "Other-Q8_0.gguf"
    model_file.parent.mkdir(parents=True)
    model_file.write_bytes(b"GGUF" + bytes(64))
    ctx.installed.add(
        InstalledModel(
            id="Other-Q8_0",
            files=(str(model_file),),
            size=68,
            sha256=("ab" * 32,),
            source="hub",
            repo="someone/Other-GGUF",
            managed=True,
        )
    )
    request_move(ctx.paths, ctx.effective, tmp_path / "new", move=True)
    _quit(ctx)
    moved = _context()
    found = moved.installed.lookup("Other-Q8_0")  # REPO:FILE pulls keep absolute paths
    assert found == [tmp_path / "new" / "models" / "someone" / "Other-GGUF" / "Other-Q8_0.gguf"]
    _quit(moved)


def test_originals_that_cannot_be_removed_are_reported_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _context()
    _with_a_chat_and_a_model(ctx)
    request_move(ctx.paths, ctx.effective, tmp_path / "usb", move=True)
    _quit(ctx)
    _across_drives(monkeypatch)
    real_rmtree = shutil.rmtree

    def busy(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).name == "models" and Path(path).parent == ctx.paths.data_dir:
            raise PermissionError(13, "in use by another program")
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(relocate.shutil, "rmtree", busy)
    moved = _context()
    assert moved.paths.data_dir == tmp_path / "usb"  # committed: the copy is complete
    assert [c.title for c in moved.chat_store.list_conversations()] == ["budget notes"]
    assert moved.notice is not None and "could not be removed" in moved.notice
    assert str(ctx.paths.models_dir) in moved.notice
    moved.chat_store.close()
    _quit(moved)


def test_a_failed_commit_puts_renamed_data_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _context()
    _with_a_chat_and_a_model(ctx)
    request_move(ctx.paths, ctx.effective, tmp_path / "same-drive", move=True)
    _quit(ctx)

    def read_only(*_args: Any, **_kwargs: Any) -> None:
        raise PermissionError(13, "settings.toml is read-only")

    monkeypatch.setattr(relocate, "save_user_settings", read_only)
    after = _context()
    assert after.paths.data_dir == ctx.paths.data_dir
    assert after.notice is not None and after.notice.startswith("Your data stays in")
    assert (ctx.paths.data_dir / "edgedesk.db").exists()
    assert not (tmp_path / "same-drive" / "edgedesk.db").exists()
    _quit(after)


def test_a_linked_models_folder_stays_a_link_across_drives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    big_disk = tmp_path / "big-disk"
    (big_disk / "org").mkdir(parents=True)
    (big_disk / "org" / "m.gguf").write_bytes(bytes(100))
    source.mkdir()
    (source / "models").symlink_to(big_disk)
    (source / "edgedesk.db").write_bytes(bytes(10))
    _across_drives(monkeypatch)
    moved = move_data(source, target)
    assert (target / "models").is_symlink()
    assert (target / "models").resolve() == big_disk.resolve()
    moved.finish()
    assert (big_disk / "org" / "m.gguf").exists()  # the link went, not what it points at


def test_a_user_data_folder_that_is_gone_is_not_recreated_empty(tmp_path: Path) -> None:
    ctx = _context()
    drive = tmp_path / "usb-drive"
    request_move(ctx.paths, ctx.effective, drive / "EdgeDesk", move=True)
    _quit(ctx)
    _quit(_context())
    shutil.rmtree(drive)  # the drive is not connected
    with pytest.raises(ConfigError, match="not available.*edgedesk data use"):
        _context()
    assert not drive.exists()
    rescue = _context(require_data=False)  # what 'edgedesk data use' builds
    request_move(rescue.paths, rescue.effective, tmp_path / "local", move=False)
    _quit(rescue)
    assert _context().paths.data_dir == tmp_path / "local"


def test_a_policy_location_may_name_a_per_user_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEDESK_TEST_PROFILE", str(tmp_path / "profile"))
    ctx = _context(_Pinned(Path("$EDGEDESK_TEST_PROFILE/EdgeDesk")))
    assert ctx.paths.data_dir == tmp_path / "profile" / "EdgeDesk"
    _quit(ctx)


def test_other_commands_leave_a_requested_move_waiting(tmp_path: Path) -> None:
    ctx = _context()
    request_move(ctx.paths, ctx.effective, tmp_path / "later", move=True)
    _quit(ctx)
    listing = build_context(environ=dict(os.environ), policy=NoPolicy())  # e.g. models list
    assert listing.paths.data_dir == ctx.paths.data_dir and listing.notice is None
    assert pending_move(ctx.paths) is not None
    _quit(listing)
