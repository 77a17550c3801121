"""Text the core makes, shown in the Chinese window: answer footers, the hardware report
and the most common errors read in Chinese; in English they read as the terminal says."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from desktop.chat.conversation import Turn
from desktop.engine.types import Usage
from desktop.ui.answer_footer import footer_text
from desktop.ui.look import install_translator

pytestmark = pytest.mark.qt

FOOTER_ENGLISH = ("prompt", "tokens", "tok/s", "stopped", "token limit", "broken off")


@pytest.fixture
def chinese(qapp) -> Iterator[None]:
    translator = install_translator(qapp, "zh_CN")
    assert translator is not None
    yield
    qapp.removeTranslator(translator)


def _answers() -> list[Turn]:
    usage = Usage(prompt_tokens=12, completion_tokens=48)
    return [Turn("assistant", "hi", usage=usage, tokens_per_s=31.5, finish_reason=reason,
                 error=error)
            for reason, error in (("stop", None), ("cancelled", None), ("length", None),
                                  ("error", None), ("error", "设备已断开"))]


def test_answer_footers_in_chinese_keep_the_numbers_and_lose_the_english(chinese) -> None:
    footers = [footer_text(turn) for turn in _answers()]
    for footer in footers:
        assert "12" in footer and "48" in footer and "31.5" in footer
        assert [w for w in FOOTER_ENGLISH if w in footer] == [], footer
    assert "已停止" in footers[1] and "已达词元上限" in footers[2]
    assert "已中断" in footers[3] and "设备已断开" in footers[4]


def test_answer_footers_in_english(qapp) -> None:
    footers = [footer_text(turn) for turn in _answers()]
    assert footers[0] == "12 prompt · 48 tokens · 31.5 tok/s"
    assert footers[1].endswith(" · stopped") and footers[2].endswith(" · hit the token limit")
    assert footers[3].endswith(" · broken off")
    assert footers[4].endswith(" · broken off: 设备已断开")
    assert not re.search(r"[\u4e00-\u9fff]", "".join(footers[:4]))
