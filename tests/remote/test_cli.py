"""``edgedesk remotes`` and remote models in ``models list`` / ``run``, against a fake remote."""

from __future__ import annotations

import io
import json
import os
import socket
from pathlib import Path

import pytest

from desktop.base.net import read_log
from desktop.cli import main
from tests.fixtures.pictures import png
from tests.fixtures.vision import data_url
from tests.remote.conftest import MemoryKeyring
from tests.remote.fake_openai import Fake


def _add(
    fake: Fake, monkeypatch: pytest.MonkeyPatch, url: str | None = None, key: str = "sk-remote"
) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(key + "\n"))
    return main(["remotes", "add", "gpu", url or fake.url, "--api-key-stdin"])


def test_add_keeps_key_in_keyring_only(
    fake: Fake,
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
    edgedesk_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given without /v1, as some engines print it: stored with /v1.
    assert _add(fake, monkeypatch, url=fake.url.removesuffix("/v1")) == 0
    assert memory_keyring.store[("EdgeDesk remote engine", "gpu")] == "sk-remote"
    files = [p for p in edgedesk_home.rglob("*") if p.is_file()]
    assert files and all("sk-remote" not in p.read_text(errors="ignore") for p in files)
    capsys.readouterr()
    assert main(["remotes", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["remotes"] == [
        {"name": "gpu", "url": fake.url, "source": "user", "key_stored": True}
    ]


def test_test_lists_models_and_logs_the_call(
    fake: Fake,
    monkeypatch: pytest.MonkeyPatch,
    edgedesk_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _add(fake, monkeypatch)
    capsys.readouterr()
    assert main(["remotes", "test", "gpu"]) == 0
    assert "gpu/echo" in capsys.readouterr().out
    assert main(["models", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["models"]
    echo = next(r for r in rows if r["id"] == "gpu/echo")
    assert echo["location"] == "runs on gpu — leaves this device"
    log = read_log(edgedesk_home / "logs" / "network.jsonl")
    assert log[-1].host == "127.0.0.1" and log[-1].path == "/v1/models"
    assert log[-1].purpose == "remote engine" and log[-1].bytes_received > 0


def test_run_streams_a_remote_answer(
    fake: Fake,
    monkeypatch: pytest.MonkeyPatch,
    edgedesk_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _add(fake, monkeypatch)
    capsys.readouterr()
    assert main(["run", "gpu/echo", "secret words here"]) == 0
    assert capsys.readouterr().out.strip() == "secret words here"
    log_text = (edgedesk_home / "logs" / "network.jsonl").read_text()
    entry = json.loads(log_text.splitlines()[-1])
    assert entry["path"] == "/v1/chat/completions" and entry["bytes_sent"] > 0
    assert "secret" not in log_text  # the log holds no content


def test_run_image_passes_the_picture_on_to_a_remote(
    fake: Fake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _add(fake, monkeypatch)
    picture = tmp_path / "red.png"
    picture.write_bytes(png(rgb=(255, 0, 0)))
    assert main(["run", "gpu/echo", "What is this?", "--image", str(picture)]) == 0
    parts = fake.bodies[-1]["messages"][-1]["content"]
    assert [p["image_url"]["url"] for p in parts if p["type"] == "image_url"] == [
        data_url(picture.read_bytes())
    ]
    assert "cannot see" not in capsys.readouterr().err


def test_wrong_key_is_a_clear_error(
    fake: Fake, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _add(fake, monkeypatch, key="sk-wrong")
    capsys.readouterr()
    assert main(["run", "gpu/echo", "hello"]) == 10
    err = capsys.readouterr().err
    assert "remote 'gpu' refused the API key" in err and "--api-key-stdin" in err


def test_rm_forgets_remote_and_key(
    fake: Fake,
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _add(fake, monkeypatch)
    assert main(["remotes", "rm", "gpu"]) == 0
    assert memory_keyring.store == {}
    capsys.readouterr()
    assert main(["run", "gpu/echo", "hello"]) != 0
    assert "gpu/echo" in capsys.readouterr().err


def test_bad_url_and_name_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["remotes", "add", "gpu", "gpu-01:8000"]) == 2
    assert "not an http(s) URL" in capsys.readouterr().err
    assert main(["remotes", "add", "a/b", "http://x/v1"]) == 2
    assert "not a usable remote name" in capsys.readouterr().err


def test_unreachable_remote_is_named_in_models_list(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:  # a port nobody listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        assert main(["remotes", "add", "down", f"http://127.0.0.1:{port}"]) == 0
        capsys.readouterr()
        assert main(["models", "list"]) == 0
        out = capsys.readouterr().out
    assert "down/*" in out and "cannot connect to 127.0.0.1" in out
    assert main(["remotes", "test", "down"]) == 10
    assert "remote 'down': cannot connect" in capsys.readouterr().err


def test_a_remote_that_does_not_answer_times_out_with_the_reason(
    fake: Fake, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _add(fake, monkeypatch)
    (Path(os.environ["EDGEDESK_HOME"]) / "config" / "settings.toml").write_text(
        "[server]\ngeneration_timeout_s = 0.5\n"
    )
    capsys.readouterr()
    fake.release.clear()
    try:
        assert main(["run", "gpu/stall", "hello"]) == 10
    finally:
        fake.release.set()
    assert "remote 'gpu' (127.0.0.1) did not answer in time" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("model", "cause"),
    [
        ("fails", "remote 'gpu' failed mid-answer: the GPU node fell over"),
        ("drop", "remote 'gpu'"),
        ("halts", "remote 'gpu' (127.0.0.1) did not answer in time"),
    ],
)
def test_run_keeps_the_words_and_then_says_why_the_answer_broke_off(
    fake: Fake,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    model: str,
    cause: str,
) -> None:
    _add(fake, monkeypatch)
    (Path(os.environ["EDGEDESK_HOME"]) / "config" / "settings.toml").write_text(
        "[server]\ngeneration_timeout_s = 1\n"
    )
    capsys.readouterr()
    fake.release.clear()
    try:
        assert main(["run", f"gpu/{model}", "hi"]) == 10
    finally:
        fake.release.set()
    out, err = capsys.readouterr()
    assert out == "hi again \n"  # the words that came, ended so the error has its own line
    assert err.startswith("edgedesk: error: ") and cause in err
