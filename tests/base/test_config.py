"""Paths honour EDGEDESK_HOME; settings layer and validate with clear errors."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from desktop.base.config import Paths, load_settings, save_user_settings
from desktop.base.errors import ConfigError

pytestmark = pytest.mark.fast


def test_edgedesk_home_puts_every_path_under_one_folder(tmp_path: Path) -> None:
    paths = Paths.from_env({"EDGEDESK_HOME": str(tmp_path)})
    for folder in (
        paths.config_dir,
        paths.data_dir,
        paths.cache_dir,
        paths.log_dir,
        paths.models_dir,
        paths.database,
    ):
        assert folder.is_relative_to(tmp_path)


def test_defaults_user_file_env_and_cli_layer_in_order(tmp_path: Path) -> None:
    paths = Paths.from_env({"EDGEDESK_HOME": str(tmp_path)})
    paths.ensure()
    paths.settings_file.write_text("[server]\nport = 9000\n[engine]\nkeep_alive_s = 60\n")
    eff = load_settings(paths, environ={"EDGEDESK_OFFLINE": "1"}, cli={"engine.keep_alive_s": 5})
    assert eff.settings.server.port == 9000 and eff.sources["server.port"] == "user"
    assert eff.settings.offline is True and eff.sources["offline"] == "environment"
    assert eff.settings.engine.keep_alive_s == 5
    assert eff.settings.server.host == "127.0.0.1"  # safe default


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[server]\nport = 70000\n", r"'server.port'.*less than or equal to 65535.*70000"),
        ("[server]\nprot = 1\n", r"'server.prot'.*Extra inputs are not permitted"),
        ("offline = \n", r"not valid TOML"),
    ],
)
def test_bad_settings_name_file_key_and_value(tmp_path: Path, text: str, message: str) -> None:
    paths = Paths.from_env({"EDGEDESK_HOME": str(tmp_path)})
    paths.ensure()
    paths.settings_file.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings(paths, environ={})


class _Policy:
    def forced(self) -> Mapping[str, Any]:
        return {"offline": True, "server.port": 8443}


def test_policy_overrides_everything_and_locks(tmp_path: Path) -> None:
    paths = Paths.from_env({"EDGEDESK_HOME": str(tmp_path)})
    paths.ensure()
    paths.settings_file.write_text("offline = false\n[server]\nport = 9000\n")
    eff = load_settings(paths, environ={"EDGEDESK_OFFLINE": "0"}, policy=_Policy())
    assert eff.settings.offline is True and eff.settings.server.port == 8443
    assert eff.is_locked("offline") and eff.sources["offline"] == "policy"
    with pytest.raises(ConfigError, match="set by your organization.*server.port"):
        save_user_settings(paths, {"server.port": 1234}, eff)


def test_saving_settings_round_trips_and_keeps_other_keys(tmp_path: Path) -> None:
    paths = Paths.from_env({"EDGEDESK_HOME": str(tmp_path)})
    paths.ensure()
    paths.settings_file.write_text('theme = "dark"\n')
    save_user_settings(paths, {"engine.keep_alive_s": 30}, load_settings(paths, environ={}))
    eff = load_settings(paths, environ={})
    assert eff.settings.theme == "dark" and eff.settings.engine.keep_alive_s == 30
    with pytest.raises(ConfigError):
        save_user_settings(paths, {"server.port": -1}, eff)
    assert load_settings(paths, environ={}).settings.server.port == 8765  # nothing saved
