"""``edgedesk serve`` flags are checked by name before anything binds."""

from __future__ import annotations

import pytest

from tests.robustness.cli import assert_clean, edgedesk


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--port", "70000"], "--port 70000 is out of range; use 1 to 65535"),
        (["--host", ""], "--host is empty"),
        (["--host", "999.1.1.1"], "--host 999.1.1.1 is not an IP address or host name"),
        (["--host", "bad host!"], "is not an IP address or host name"),
        (["--host", "203.0.113.7"], "--host 203.0.113.7 is not an address of this machine"),
    ],
)
def test_serve_flags_are_checked_with_their_own_names(flags: list[str], message: str) -> None:
    result = edgedesk("serve", "--no-auth", *flags)
    assert_clean(result, failed=True)
    assert message in result.stderr
    assert "settings.toml" not in result.stderr
