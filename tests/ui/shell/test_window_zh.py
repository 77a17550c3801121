"""Text the core makes, shown in the Chinese window: answer footers, the hardware report
and the most common errors read in Chinese; in English they read as the terminal says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from desktop.base.config import NoPolicy
from desktop.base.errors import (
    ContextOverflow,
    EdgeDeskError,
    InvalidRequest,
    ModelLoadError,
    RemoteError,
    TemplateFailed,
)
from desktop.base.net import NetGate
from desktop.catalog._fit import Verdict
from desktop.chat import Turn
from desktop.engine._hardware.backend import BackendInfo, why_no_gpu
from desktop.engine._types import Usage
from desktop.machine._doctor import doctor_report, format_report, why_not_kind
from desktop.root.context import AppContext, build_context
from desktop.ui.chat.answer_footer import footer_text
from desktop.ui.common.error_text import SENTENCES, WINDOW_WORDED, error_text
from desktop.ui.settings.hardware_report import report_lines, why_not_gpu
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.fake_hub import FakeHub

pytestmark = pytest.mark.qt

FOOTER_ENGLISH = ("prompt", "tokens", "tok/s", "stopped", "token limit", "broken off")


def _answers() -> list[Turn]:
    usage = Usage(prompt_tokens=12, completion_tokens=48)
    return [
        Turn("assistant", "hi", usage=usage, tokens_per_s=31.5, finish_reason=reason, error=error)
        for reason, error in (
            ("stop", None),
            ("cancelled", None),
            ("length", None),
            ("error", None),
            ("error", "设备已断开"),
        )
    ]


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


# ------------------------------------------------------------------ hardware report
REPORT_ENGLISH = (
    "backend:",
    "machine:",
    "devices:",
    "GPU:  ",
    "why:",
    "installed models",
    "compiled in",
    "free of",
    "CPU threads",
    "no GPU detected",
    "found no device",
    "built for the CPU",
    "layers on the GPU",
    "runs on the CPU",
    "needs ~",
    "offload",
    "host",
    "driver:",
    "none",
    "unknown",
    "unused",
    "fits",
    "won't",
)
GIB = 1024**3


def report_english_in(lines: list[str]) -> list[tuple[str, str]]:
    return [(line, word) for line in lines for word in REPORT_ENGLISH if word in line]


def _synthetic_report(kind: dict[str, str]) -> dict[str, Any]:
    model = {
        "id": "m",
        "path": "m.gguf",
        "gpu_layers": 10,
        "total_layers": 29,
        "context_length": 4096,
        "estimated_bytes": 3 * GIB,
    }
    return {
        "version": "1",
        "hardware": "RAM …",
        "backend": {
            "name": "vulkan",
            "describe": "vulkan",
            "compiled": ["Vulkan", "CPU"],
            "compiled_gpu": "vulkan",
            "gpu_offload": False,
        },
        "devices": [
            {
                "name": "Vulkan0",
                "description": "Radeon",
                "kind": "gpu",
                "offload": True,
                "memory_free_bytes": 2 * GIB,
                "memory_total_bytes": 8 * GIB,
                "driver": None,
            }
        ],
        "machine": {
            "ram_total_bytes": 16 * GIB,
            "ram_available_bytes": 8 * GIB,
            "cpu_count": 4,
            "gpus": [{"name": "Radeon", "total_bytes": 8 * GIB, "free_bytes": 2 * GIB}],
        },
        "gpu_used": False,
        "why_not_gpu": "English words",
        "why_not_gpu_kind": kind,
        "models": [
            {**model, "id": f"m{n}", "fit": str(verdict)} for n, verdict in enumerate(Verdict)
        ]
        + [{"id": "broken", "path": "b.gguf", "fit": "unreadable", "reason": "坏文件"}],
    }


def test_the_hardware_report_in_chinese_has_no_english_words(chinese) -> None:
    for kind in (
        {"kind": "cpu_build"},
        {"kind": "vulkan_no_device"},
        {"kind": "vulkan_selected_none", "value": "7"},
        {"kind": "cuda_no_device"},
        {"kind": "metal_no_device"},
        {"kind": "no_device", "backend": "sycl"},
        {"kind": "gpu_layers_zero"},
    ):
        lines = report_lines(_synthetic_report(kind))
        assert report_english_in(lines) == [], kind
        text = "\n".join(lines)
        assert "后端" in text and "未使用" in text and "原因" in text
        assert "2.0 GiB" in text and "8.0 GiB" in text and "Radeon" in text
        assert "10/29" in text and "3.0 GiB" in text and "坏文件" in text


@pytest.mark.parametrize(
    "backend,environ",
    [
        (BackendInfo("cpu", None, False), {}),
        (BackendInfo("cpu", "vulkan", False), {}),
        (BackendInfo("cpu", "vulkan", False), {"GGML_VK_VISIBLE_DEVICES": "3"}),
        (BackendInfo("cpu", "cuda", False), {}),
        (BackendInfo("cpu", "metal", False), {}),
        (BackendInfo("cpu", "sycl", False), {}),
    ],
)
def test_in_english_the_window_gives_the_terminals_reason_for_no_gpu(
    qapp, backend: BackendInfo, environ: dict[str, str]
) -> None:
    report = {
        "why_not_gpu_kind": why_not_kind(backend, None, environ),
        "backend": {"gpu_offload": False},
        "machine": {"gpus": []},
    }
    assert why_not_gpu(report) == why_no_gpu(backend, environ)


def test_in_english_the_window_shows_what_edgedesk_doctor_prints(qapp, context: AppContext) -> None:
    report = doctor_report(context)
    assert report_lines(report) == format_report(report)


def test_the_chinese_settings_dialog_shows_the_hardware_report_in_chinese(
    qtbot, chinese, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    dialog = win.open_settings()
    panel = dialog.hardware.text
    qtbot.waitUntil(lambda: "后端" in panel.toPlainText(), timeout=60_000)
    lines = panel.toPlainText().splitlines()
    assert report_english_in(lines) == []
    assert any("本机" in line and "GiB" in line for line in lines)
    dialog.reject()
    win.close()


# ------------------------------------------------------------------ common errors
DESKTOP = Path(__file__).resolve().parents[3] / "desktop"
ENGLISH_PHRASE = re.compile(r"\b[A-Za-z]{2,} [a-z]{2,} [a-z]{2,}\b")  # three English words


def _common_errors(tmp_path: Path) -> list[EdgeDeskError]:
    """The core's own refusals, raised the way the window meets them."""
    context = build_context(policy=NoPolicy())
    resolver = context.resolver
    resolver.allowed_models = ["some-other-model"]
    calls = [
        lambda: NetGate(tmp_path / "a.log", offline=True).ensure_online("search the Hub"),
        lambda: NetGate(tmp_path / "b.log", allow_downloads=False).ensure_online(
            "download glm-edge-1.5b", download=True
        ),
        lambda: context.catalog.get("no-such-model"),
        lambda: resolver.locate("glm-edge-1.5b"),
        lambda: resolver.locate("./missing-model.gguf"),
        lambda: context.installed.remove("nothing-here"),
        lambda: resolver.check_allowed("glm-edge-1.5b", []),
    ]
    errors: list[EdgeDeskError] = []
    for call in calls:
        with pytest.raises(EdgeDeskError) as raised:
            call()
        errors.append(raised.value)
    context.close()
    return errors


def test_common_core_errors_read_in_chinese(chinese, tmp_path: Path) -> None:
    errors = _common_errors(tmp_path)
    kinds = [error.kind for error in errors]
    assert kinds == [
        "offline",
        "downloads_off",
        "unknown_model",
        "not_downloaded",
        "file_not_found",
        "not_installed",
        "policy_blocked",
    ]
    for error in errors:
        text = error_text(error)
        assert re.search(r"[\u4e00-\u9fff]", text), text
        assert not ENGLISH_PHRASE.search(text), text
        for value in error.params.values():
            if value != "search the Hub" and not value.startswith("download "):
                assert value in text  # the names and numbers stay


def test_in_english_the_window_shows_the_cores_own_words(qapp, tmp_path: Path) -> None:
    for error in _common_errors(tmp_path):
        if error.kind in WINDOW_WORDED:  # the terminal's words (flags) get window words
            assert "--" not in error_text(error) and "EDGEDESK_" not in error_text(error)
            continue
        assert error_text(error) == error.message


def test_every_error_kind_the_core_raises_has_a_chinese_sentence(chinese) -> None:
    raised = {
        m
        for path in DESKTOP.rglob("*.py")
        for m in re.findall(r'\bkind="(\w+)",\s*params=', path.read_text(encoding="utf-8"))
    }
    raised |= {"offline", "downloads_off"}  # NetGate._refused_kind
    assert raised - set(SENTENCES) == set()
    for kind, (_source, names) in SENTENCES.items():
        error = EdgeDeskError("English", kind=kind, params={n: "X1" for n in names})
        text = error_text(error)
        assert text != "English" and not ENGLISH_PHRASE.search(text), (kind, text)
        assert text.count("X1") == len(names), (kind, text)


def _errors_without_a_sentence() -> list[EdgeDeskError]:
    return [
        ModelLoadError("llama.cpp failed to load model.gguf (out of memory)"),
        RemoteError("gpu-01: 401 Unauthorized"),
        TemplateFailed("template line 3: 'tools' is undefined"),
        ContextOverflow("prompt is 9000 tokens; the context holds 8192"),
        InvalidRequest("--max-tokens must be at least 1"),
    ]


def test_errors_without_a_sentence_lead_in_chinese_then_keep_the_cores_detail(chinese) -> None:
    for error in _errors_without_a_sentence():
        text = error_text(error)
        lead, _, detail = text.partition("：")
        assert re.search(r"[\u4e00-\u9fff]", lead) and not re.search(r"[A-Za-z]", lead), text
        assert detail == error.message  # file names, llama.cpp's and a remote's own words


def test_in_english_errors_without_a_sentence_are_the_cores_words(qapp) -> None:
    for error in _errors_without_a_sentence():
        assert error_text(error) == error.message


def test_the_chinese_window_refuses_an_offline_hub_search_in_chinese(
    qtbot, chinese, hub: FakeHub
) -> None:
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"offline": True}))
    qtbot.addWidget(win)
    search = win.models.hub_search
    search.query.setText("glm")
    with qtbot.waitSignal(search.error, timeout=2000) as error:
        assert search.search() is None
    assert "离线" in error.args[0] and "离线" in search.status.text()
    assert "offline mode" not in search.status.text()
    assert hub.log == []
    win.close()


def test_a_string_not_translated_yet_shows_in_english_not_blank(chinese) -> None:
    # New words reach the catalog at the next lupdate; until then a Chinese window must
    # show them in English, as Qt does, not as empty labels and buttons.
    from PySide6.QtCore import QCoreApplication

    assert (
        QCoreApplication.translate("Nowhere", "A sentence no catalog has")
        == "A sentence no catalog has"
    )
    assert QCoreApplication.translate("Composer", "Send") == "发送"  # translated ones still are
