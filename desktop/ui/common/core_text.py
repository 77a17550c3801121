"""Words the core makes in English, said in the window's language.

The catalog describes the machine (``Hardware.describe``) and fits (``Verdict``) in
English for the terminal; the window formats the same numbers and enum values itself
through Qt's translation ("CoreText" context), so the Chinese window shows no English
verdict or machine summary. Callable from the window's thread only (Qt translators).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from desktop.base.filebytes import format_bytes
from desktop.catalog import Hardware, Verdict
from desktop.engine import Placement
from desktop.store import Source

VERDICTS = {
    str(Verdict.GPU): QT_TRANSLATE_NOOP("CoreText", "fits on GPU"),
    str(Verdict.PARTIAL): QT_TRANSLATE_NOOP("CoreText", "fits in RAM, slower"),
    str(Verdict.CPU): QT_TRANSLATE_NOOP("CoreText", "fits in RAM, slower (CPU)"),
    str(Verdict.NO): QT_TRANSLATE_NOOP("CoreText", "won't fit"),
}
KINDS = {
    "chat": QT_TRANSLATE_NOOP("CoreText", "chat"),
    "embedding": QT_TRANSLATE_NOOP("CoreText", "embedding"),
    "reranker": QT_TRANSLATE_NOOP("CoreText", "reranker"),
}
TIERS = {
    "laptop": QT_TRANSLATE_NOOP("CoreText", "laptop"),
    "desktop": QT_TRANSLATE_NOOP("CoreText", "desktop"),
    "workstation": QT_TRANSLATE_NOOP("CoreText", "workstation"),
    "local": QT_TRANSLATE_NOOP("CoreText", "local"),
    "hub": QT_TRANSLATE_NOOP("CoreText", "hub"),
    "remote": QT_TRANSLATE_NOOP("CoreText", "remote"),
}


def _translated(table: dict[str, object], value: str) -> str:
    source = table.get(value)  # QT_TRANSLATE_NOOP's stubs say object: it is the text
    return QCoreApplication.translate("CoreText", str(source)) if source else value


def verdict_text(fit: str) -> str:
    """A fit verdict (``Verdict`` value) in the window's language; other text as is."""
    return _translated(VERDICTS, fit)


def kind_text(kind: str) -> str:
    """A model kind (chat, embedding, reranker) in the window's language."""
    return _translated(KINDS, kind)


def tier_text(tier: str) -> str:
    """A catalog tier or row origin (laptop, hub, local…) in the window's language."""
    return _translated(TIERS, tier)


def machine_summary(hardware: Hardware) -> str:
    """RAM, CPU threads and GPUs as ``Hardware.describe`` says them, translated."""

    def memory(value: int) -> str:
        return format_bytes(value, memory=True)

    parts = [
        QCoreApplication.translate("CoreText", "RAM %1 free of %2")
        .replace("%1", memory(hardware.ram_available_bytes))
        .replace("%2", memory(hardware.ram_total_bytes)),
        QCoreApplication.translate("CoreText", "%1 CPU threads").replace(
            "%1", str(hardware.cpu_count)
        ),
    ]
    parts += [
        QCoreApplication.translate("CoreText", "%1 %2 free of %3")
        .replace("%1", gpu.name)
        .replace("%2", memory(gpu.free_bytes))
        .replace("%3", memory(gpu.total_bytes))
        for gpu in hardware.gpus
    ]
    if not hardware.gpus:
        parts.append(QCoreApplication.translate("CoreText", "no GPU detected"))
    return QCoreApplication.translate("CoreText", ", ").join(parts)


def source_place(source: Source) -> str:
    """Where a cited passage is (``Source.location``: file, page, lines), translated."""
    first, last = str(source.line_start), str(source.line_end)
    lines = (
        QCoreApplication.translate("CoreText", "line %1").replace("%1", first)
        if first == last
        else QCoreApplication.translate("CoreText", "lines %1-%2")
        .replace("%1", first)
        .replace("%2", last)
    )
    if source.page:
        lines = (
            QCoreApplication.translate("CoreText", "p. %1, %2")
            .replace("%1", str(source.page))
            .replace("%2", lines)
        )
    return f"{source.path} {lines}"


# Why indexing skipped a file (``retrieval._loaders.SkipFile`` reasons, English for the
# terminal), as patterns: the window says them in its language, details (a suffix, a
# size, an OS error) kept as they are. A reason not listed here is shown as it is.
SKIP_REASONS = (
    (r"unsupported file type '(.+)'", QT_TRANSLATE_NOOP("CoreText", "unsupported file type '%1'")),
    (
        r"too large \((.+); the limit is (.+)\)",
        QT_TRANSLATE_NOOP("CoreText", "too large (%1; the limit is %2)"),
    ),
    (
        r"too large when unpacked \((.+); the limit is (.+)\)",
        QT_TRANSLATE_NOOP("CoreText", "too large when unpacked (%1; the limit is %2)"),
    ),
    (r"empty file", QT_TRANSLATE_NOOP("CoreText", "empty file")),
    (r"cannot read \((.+)\)", QT_TRANSLATE_NOOP("CoreText", "cannot read (%1)")),
    (
        r"no text found \(a scanned PDF\?\)",
        QT_TRANSLATE_NOOP("CoreText", "no text found (a scanned PDF?)"),
    ),
    (r"no text found", QT_TRANSLATE_NOOP("CoreText", "no text found")),
    (r"binary file, not text", QT_TRANSLATE_NOOP("CoreText", "binary file, not text")),
    (r"not UTF-8 text", QT_TRANSLATE_NOOP("CoreText", "not UTF-8 text")),
    (
        r"encrypted PDF \(needs a password\)",
        QT_TRANSLATE_NOOP("CoreText", "encrypted PDF (needs a password)"),
    ),
    (
        r"encrypted PDF \(unsupported encryption\)",
        QT_TRANSLATE_NOOP("CoreText", "encrypted PDF (unsupported encryption)"),
    ),
    (r"not a readable PDF \((.+)\)", QT_TRANSLATE_NOOP("CoreText", "not a readable PDF (%1)")),
    (r"not a readable DOCX \((.+)\)", QT_TRANSLATE_NOOP("CoreText", "not a readable DOCX (%1)")),
)


def skip_reason_text(reason: str) -> str:
    """Why a file was not indexed, in the window's language (details kept as they are)."""
    for pattern, words in SKIP_REASONS:
        found = re.fullmatch(pattern, reason)
        if found:
            text = QCoreApplication.translate("CoreText", str(words))
            for n, detail in enumerate(found.groups(), 1):
                text = text.replace(f"%{n}", detail)
            return text
    return reason


def placement_text(placement: Placement) -> str:
    """``19/19 layers on Vulkan0 (llvmpipe)`` or ``CPU only``, in the window's language."""
    if placement.cpu_only:
        return QCoreApplication.translate("CoreText", "CPU only")
    text = (
        QCoreApplication.translate("CoreText", "%1/%2 layers on %3")
        .replace("%1", str(placement.layers_offloaded))
        .replace("%2", str(placement.layers_total))
        .replace("%3", ", ".join(placement.devices))
    )
    rest = placement.layers_total - placement.layers_offloaded
    if rest > 0:
        text += QCoreApplication.translate("CoreText", ", %1 on the CPU").replace("%1", str(rest))
    return text
