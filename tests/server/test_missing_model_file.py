"""A model whose file was deleted leaves the API's listings and is refused like an unknown one."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import openai
import pytest

from desktop.root.context import build_context


def test_a_model_whose_file_is_deleted_is_no_longer_listed_and_gets_a_404(
    edgedesk_home: Path, tiny_chat: Path, tmp_path: Path
) -> None:
    # One file served with 'serve --model FILE', one imported ('models import FILE'),
    # one that stays: the two first are deleted while the server runs.
    served = Path(shutil.copy(tiny_chat, tmp_path / "served-chat.gguf"))
    imported = Path(shutil.copy(tiny_chat, tmp_path / "imported-chat.gguf"))
    kept = Path(shutil.copy(tiny_chat, tmp_path / "kept-chat.gguf"))
    ctx = build_context()
    ctx.installed.import_file(imported)
    settings = ctx.settings.server.model_copy(update={"port": 0, "require_key": False})
    runner = ctx.new_api_server(settings=settings, model_paths=[served, kept])
    runner.start()
    gone = ["served-chat", "imported-chat"]
    try:
        with openai.OpenAI(base_url=runner.url, api_key="none", max_retries=0) as client:
            listed = {m.id for m in client.models.list()}
            assert {*gone, "kept-chat"} <= listed
            served.unlink()
            imported.unlink()
            listed = {m.id for m in client.models.list()}
            assert "kept-chat" in listed
            assert not listed & set(gone)
            tags = httpx.get(runner.url.removesuffix("/v1") + "/api/tags", timeout=30).json()
            tagged = {m["name"] for m in tags["models"]}
            assert not {name + ":latest" for name in gone} & tagged and not set(gone) & tagged
            for model in gone:
                with pytest.raises(openai.NotFoundError) as refused:
                    client.chat.completions.create(
                        model=model, messages=[{"role": "user", "content": "hi"}], max_tokens=2
                    )
                assert refused.value.code == "model_not_found"
                assert f"'{model}'" in refused.value.message
                assert "kept-chat" in refused.value.message  # what it may use instead
                with pytest.raises(openai.NotFoundError):
                    client.models.retrieve(model)
            answer = client.chat.completions.create(
                model="kept-chat", messages=[{"role": "user", "content": "hi"}], max_tokens=2
            )
            assert answer.choices[0].message.content is not None
    finally:
        runner.stop()
        ctx.close()
