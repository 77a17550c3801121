"""The answer footer says where the model ran: layers on a device, or the CPU only."""

from __future__ import annotations

import pytest

from desktop.chat import Turn
from desktop.engine._types import Placement, Usage
from desktop.ui.chat.answer_footer import footer_text

pytestmark = pytest.mark.qt

USAGE = Usage(prompt_tokens=6, completion_tokens=4)
ON_VULKAN = Placement(19, 19, ("Vulkan0 (llvmpipe)",))
PART = Placement(19, 10, ("CUDA0 (NVIDIA GeForce RTX 4070)",))


def _footer(placement: Placement | None) -> str:
    return footer_text(
        Turn(
            "assistant",
            "hi",
            usage=USAGE,
            tokens_per_s=0.5,
            finish_reason="stop",
            placement=placement,
        )
    )


def test_the_footer_names_the_device_and_its_layers(qapp) -> None:
    assert (
        _footer(ON_VULKAN) == "6 prompt · 4 tokens · 0.5 tok/s · 19/19 layers on Vulkan0 (llvmpipe)"
    )
    assert _footer(Placement(3)).endswith(" · CPU only")
    assert _footer(PART).endswith(
        " · 10/19 layers on CUDA0 (NVIDIA GeForce RTX 4070), 9 on the CPU"
    )
    # An answer read back from the store, or from a remote model, says nothing of it.
    assert _footer(None) == "6 prompt · 4 tokens · 0.5 tok/s"


def test_the_footer_in_chinese_keeps_the_device_and_numbers(chinese) -> None:
    assert _footer(ON_VULKAN).endswith("Vulkan0 (llvmpipe) 上 19/19 层")
    assert _footer(Placement(3)).endswith("仅 CPU")
    assert "9 层在 CPU 上" in _footer(PART) and "layers" not in _footer(PART)
