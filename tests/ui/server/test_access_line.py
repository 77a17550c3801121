"""The Server screen's live log says when a 200 stream failed mid-way."""

from __future__ import annotations

import pytest

from desktop.server._metrics import AccessRecord
from desktop.ui.server.request_list import log_line

pytestmark = pytest.mark.qt


def _record(error: str | None) -> AccessRecord:
    return AccessRecord(
        time="2026-12-01T06:00:00.000+00:00",
        request_id="req_1",
        key_name="ide",
        method="POST",
        route="/v1/chat/completions",
        status=200,
        model="gpu/glm",
        tokens_in=5,
        tokens_out=2,
        latency_ms=40.0,
        error=error,
    )


def test_a_stream_that_failed_mid_way_is_shown_as_failed() -> None:
    failed = log_line(_record("remote 'gpu' failed mid-answer: the GPU node fell over"))
    assert failed.endswith(
        "failed mid-stream: remote 'gpu' failed mid-answer: the GPU node fell over"
    )
    assert "failed" not in log_line(_record(None))
