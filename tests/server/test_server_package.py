"""The server's face: ``desktop.server`` names what outside code uses, and importing it
loads none of the web stack (uvicorn, starlette, fastapi) until a name is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import desktop.server as server


@pytest.mark.fast
def test_every_name_of_the_face_resolves_to_its_inner_definition() -> None:
    from desktop.server import _client_setups, _security

    for name in server.__all__:
        assert getattr(server, name) is not None, name
    assert server.KeyStore is _security.KeyStore
    assert server.SETUP_KEY == _client_setups.KEY  # a clearer name for the same value
    with pytest.raises(AttributeError, match="no attribute 'leniency'"):
        _ = server.leniency


def test_importing_the_face_loads_no_web_stack() -> None:
    code = (
        "import sys, desktop.server as s\n"
        "assert not {'uvicorn', 'starlette', 'fastapi'} & set(sys.modules), sorted(sys.modules)\n"
        "s.KeyScope\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
