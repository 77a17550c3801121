"""Rows 10, 11 and 12: broken settings and data files, and a mistyped folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.robustness.cli import assert_clean, edgedesk


def _settings(home: Path, content: bytes) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "settings.toml").write_bytes(content)


@pytest.mark.parametrize(
    "content",
    [
        "offline = true\n".encode("utf-16"),  # Windows Notepad's "Unicode", with its BOM
        b"\xef\xbb\xbfoffline = true\n",  # UTF-8 with a BOM
    ],
)
def test_settings_saved_by_windows_editors_are_read(edgedesk_home: Path, content: bytes) -> None:
    _settings(edgedesk_home, content)
    result = edgedesk("chats", "list")
    assert_clean(result, failed=False)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'theme = "caf\xe9"\n', "not UTF-8 text (byte 13 cannot be read)"),
        (b"x = " + b"[" * 1000 + b"]" * 1000 + b"\n", "settings.toml"),
        (b'theme = "' + b"x" * 100_000 + b'"\n', "(100002 characters)"),
        (b"a" * (2 << 20), "not a settings file"),
    ],
)
def test_a_broken_settings_file_is_one_short_line(
    edgedesk_home: Path, content: bytes, message: str
) -> None:
    _settings(edgedesk_home, content)
    result = edgedesk("chats", "list")
    assert_clean(result, failed=True)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr) < 600


def test_a_data_file_that_is_not_a_database_says_how_to_recover(edgedesk_home: Path) -> None:
    (edgedesk_home / "data").mkdir(parents=True)
    (edgedesk_home / "data" / "edgedesk.db").write_bytes(b"these are my notes, not SQLite" * 50)
    result = edgedesk("chats", "list")
    assert_clean(result, failed=True)
    assert result.returncode == 9
    assert "is not a readable EdgeDesk database" in result.stderr
    assert "move it away" in result.stderr


def test_data_use_of_a_missing_folder_changes_nothing(tmp_path: Path, edgedesk_home: Path) -> None:
    before = edgedesk("data", "show", "--json").stdout
    result = edgedesk("data", "use", str(tmp_path / "typo"))
    assert_clean(result, failed=True)
    assert "is not an existing folder" in result.stderr
    assert not (tmp_path / "typo").exists()
    assert edgedesk("data", "show", "--json").stdout == before


def test_edgedesk_home_naming_a_file_is_one_clear_line(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "home.txt"
    not_a_folder.write_text("oops")
    result = edgedesk("chats", "list", home=not_a_folder)
    assert_clean(result, failed=True)
    assert result.returncode == 2
    assert "cannot create the folder" in result.stderr and "EDGEDESK_HOME" in result.stderr


def test_data_move_while_a_server_runs_says_only_that_nothing_moved(
    tmp_path: Path, edgedesk_home: Path
) -> None:
    from desktop.datafolder import DataFolderLock

    assert_clean(edgedesk("data", "show"), failed=False)  # the data folder exists
    server = DataFolderLock(edgedesk_home / "data")  # what a running serve holds
    server.share()
    try:
        result = edgedesk("data", "move", str(tmp_path / "elsewhere"))
    finally:
        server.release()
    assert_clean(result, failed=True)
    assert "nothing was moved" in result.stderr
    assert "will move" not in result.stderr
    assert not (tmp_path / "elsewhere").exists() or not any((tmp_path / "elsewhere").iterdir())
    assert "waiting" not in edgedesk("data", "show").stdout  # no move left pending


def test_first_start_with_a_backend_that_cannot_load_carries_on(
    edgedesk_home: Path,
) -> None:
    # Issue 50, item 20: the first start used to fail with exit 70 ("unexpected error
    # (ModuleNotFoundError: No module named 'keyrings')"); it carries on as with no
    # keyring: a plaintext install, as on a headless server.
    broken = {"PYTHON_KEYRING_BACKEND": "keyrings.not_installed.Backend"}
    for args in (("chats", "list"), ("docs", "list"), ("data", "show")):
        done = edgedesk(*args, env=broken)
        assert_clean(done, failed=False)
        assert "unexpected error" not in done.stderr
    assert (edgedesk_home / "data" / "edgedesk.db").read_bytes().startswith(b"SQLite format 3")
