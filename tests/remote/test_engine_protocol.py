"""A remote model refuses what only a local model can do, with the API's own 400."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from desktop.base.config import ServerSettings
from desktop.remote import keyring_set
from desktop.root.context import AppContext
from desktop.server._runner import ServerRunner
from tests.remote.fake_openai import Fake


@pytest.fixture
def runner(fake: Fake, context: AppContext) -> Iterator[ServerRunner]:
    context.remote_registry.add("gpu", fake.url)
    keyring_set("gpu", "sk-remote")
    served = context.new_api_server(
        settings=ServerSettings(require_key=False).model_copy(update={"port": 0})
    )
    served.start()
    try:
        yield served
    finally:
        served.stop()


def test_token_id_prompts_to_a_remote_model_are_a_clear_400(runner: ServerRunner) -> None:
    reply = httpx.post(
        f"{runner.url}/completions",
        timeout=30,
        json={"model": "gpu/echo", "prompt": [1, 2, 3], "max_tokens": 2},
    )
    assert reply.status_code == 400
    assert "cannot take token ids; send text" in reply.json()["error"]["message"]


def test_counting_chat_tokens_of_a_remote_model_is_a_clear_400(runner: ServerRunner) -> None:
    reply = httpx.post(
        f"{runner.url}/messages/count_tokens",
        timeout=30,
        json={"model": "gpu/echo", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert reply.status_code == 400
    assert "gpu/echo cannot count chat tokens" in reply.text
