"""Generated inputs (Hypothesis): file names, settings files and command lines.

Whatever is generated, EdgeDesk must answer with a result or one clear error: never a
traceback, never the bug exit code, a non-zero exit when it failed, and a database that
passes ``PRAGMA integrity_check``.
"""

from __future__ import annotations

import itertools
import os
import uuid
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from desktop.base.config import NoPolicy, Paths, load_settings
from desktop.base.crash import EXIT_BUG
from desktop.base.errors import ConfigError
from desktop.cli import main
from tests.robustness.cli import assert_clean, edgedesk, integrity_ok

FIXTURES_PER_RUN = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]

# ------------------------------------------------------------------ settings files
_keys = st.sampled_from(
    [
        "offline",
        "theme",
        "language",
        "retention_days",
        "data_location",
        "embedding_model",
        "server",
        "engine",
        "port",
        "host",
        "keep_alive_s",
        "context_length",
        "gpu_layers",
        "x",
        "",
    ]
)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=8,
)
_tables = st.dictionaries(_keys, _values, max_size=5)


def _toml(tree: dict[str, object]) -> bytes:
    def clean(value: object) -> object:  # TOML has no null
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [clean(v) for v in value if v is not None]
        return value

    try:
        return tomli_w.dumps(clean(tree)).encode()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return repr(tree).encode()


_files = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    _tables.map(_toml),
    st.tuples(_tables.map(_toml), st.sampled_from(["utf-8-sig", "utf-16", "latin-1"])).map(
        lambda pair: pair[0].decode().encode(pair[1], "replace")
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=FIXTURES_PER_RUN)
@given(content=_files)
def test_any_settings_file_loads_or_is_one_config_error(content: bytes) -> None:
    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_bytes(content)
    try:
        load_settings(paths, environ={}, policy=NoPolicy())
    except ConfigError as exc:
        assert "\n" not in exc.message and len(exc.message) < 800
        assert str(paths.settings_file) in exc.message or "settings" in exc.message


# ------------------------------------------------------------------ command lines
_words = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        [
            "",
            "-",
            "--",
            "0",
            "-1",
            "99999999999999999999999",
            "1e9",
            "nan",
            "*",
            '"',
            "../..",
            "/",
            "/dev/null",
            "\x1b[2J",
            "名前",
            "--json",
            "--all",
            "-k",
            "--collection",
            "--format",
            "json",
            "md",
            "-o",
        ]
    ),
    st.binary(min_size=1, max_size=8).map(os.fsdecode),
).filter(lambda word: "\x00" not in word)  # no OS can put NUL in an argument
_verbs = st.sampled_from(
    [
        ["chats", "list"],
        ["chats", "export"],
        ["chats", "rm"],
        ["chats", "import"],
        ["docs", "list"],
        ["docs", "search"],
        ["docs", "rm"],
        ["keys", "list"],
        ["keys", "create"],
        ["keys", "revoke"],
        ["models", "list"],
        ["models", "info"],
        ["data", "show"],
        ["run"],
        ["models", "import"],
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURES_PER_RUN)
@given(verb=_verbs, words=st.lists(_words, max_size=4))
# A path under the home of a user who does not exist: pathlib's expanduser raised, and
# the command crashed with exit 70 (found by this test).
@example(verb=["run"], words=["~no-such-user-edgedesk/m.gguf", "hi"])
@example(verb=["models", "import"], words=["~no-such-user-edgedesk/m.gguf"])
def test_any_command_line_is_a_result_or_one_clear_error(
    verb: list[str],
    words: list[str],
    capsys: pytest.CaptureFixture[str],
    edgedesk_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # "-o NAME" and relative paths land in the test's folder
    try:
        code = main([*verb, *words])
    except SystemExit as exit_:  # argparse: usage errors (2) and --help (0)
        code = exit_.code if isinstance(exit_.code, int) else 2
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out
    assert code != EXIT_BUG, err
    if code != 0:
        assert err.strip(), "a failure must say why"
    integrity_ok(edgedesk_home)


# ------------------------------------------------------------------ file names
_names = st.one_of(
    st.text(
        st.characters(exclude_characters="/\x00", exclude_categories=("Cs",)),
        min_size=1,
        max_size=40,
    ),
    st.binary(min_size=1, max_size=40).map(
        lambda b: os.fsdecode(b.replace(b"/", b"_").replace(b"\x00", b"_"))
    ),
).filter(lambda n: n not in (".", "..") and len(os.fsencode(n)) < 200)
_counter = itertools.count()


@pytest.mark.skipif(os.name != "posix", reason="file names are bytes on POSIX only")
@settings(max_examples=25, deadline=None, suppress_health_check=FIXTURES_PER_RUN)
@given(
    names=st.lists(_names, min_size=1, max_size=3, unique=True),
    suffix=st.sampled_from([".txt", ".md", ".py", ".html", ""]),
)
def test_any_file_name_is_indexed_or_skipped_and_shown_safely(
    names: list[str],
    suffix: str,
    tiny_embed: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edgedesk_home: Path,
) -> None:
    folder = tmp_path / f"docs-{next(_counter)}"
    folder.mkdir()
    for n, name in enumerate(names):
        (folder / (name + suffix)).write_text(f"note {n} about walruses\n")
    collection = f"c{uuid.uuid4().hex[:8]}"
    args = [
        "docs",
        "add",
        str(folder),
        "--collection",
        collection,
        "--embedding-model",
        str(tiny_embed),
    ]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert not any(c in first for c in "\x1b\x07\r"), first
    assert main(args) == 0
    again = capsys.readouterr().out
    assert " 0 added, 0 updated, " in again and " 0 removed, " in again
    integrity_ok(edgedesk_home)


@settings(max_examples=8, deadline=None, suppress_health_check=FIXTURES_PER_RUN)
@given(verb=_verbs, words=st.lists(_words, max_size=3))
def test_any_command_line_in_a_real_process_never_shows_a_traceback(
    verb: list[str], words: list[str], edgedesk_home: Path, tmp_path: Path
) -> None:
    result = edgedesk(*verb, *words, cwd=tmp_path)
    assert_clean(result)
    assert result.returncode != EXIT_BUG, result.stderr
    if result.returncode != 0:
        assert result.stderr.strip(), "a failure must say why"
    integrity_ok(edgedesk_home)
