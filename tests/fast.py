"""The fast subset (``pytest -m fast``, ``./scripts/test.sh --fast``): which files, and how.

A developer's minute-long check between edits: pure logic, wire formats, contracts and
the store, no model decode beyond the tiny random ones, no window, no child process.
Every test of a file listed in ``FAST_FILES`` is marked ``fast`` unless it is marked
``slow``, ``gpu`` or ``packaging``. With ``-m fast`` (alone, or ``-m "fast and ..."``)
only those files are collected: importing the rest of the suite (Qt, the servers) takes
longer than running the subset. A file joins the list when its tests together take well
under a second; ``tests/suite/test_fast_subset.py`` fails when a listed file is gone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# Paths from the repository root, sorted.
FAST_FILES = frozenset(
    {
        "tests/catalog/test_bundle.py",
        "tests/catalog/test_entries.py",
        "tests/catalog/test_gguf_info.py",
        "tests/catalog/test_installed.py",
        "tests/catalog/test_shards.py",
        "tests/chat/test_conversation.py",
        "tests/chat/test_parameters.py",
        "tests/engine/hardware/test_amx.py",
        "tests/engine/test_broken_file.py",
        "tests/engine/hardware/test_cpu_features.py",
        "tests/engine/test_defaults.py",
        "tests/engine/hardware/test_devices.py",
        "tests/engine/chat/test_grammar.py",
        "tests/engine/test_images.py",
        "tests/engine/hardware/test_placement.py",
        "tests/engine/batching/test_slot_logic.py",
        "tests/engine/chat/test_template_corpus.py",
        "tests/engine/chat/test_templates.py",
        "tests/engine/worker/test_worker_wire.py",
        "tests/remote/test_models.py",
        "tests/remote/test_wire.py",
        "tests/retrieval/test_vectors.py",
        "tests/server/protocols/anthropic/test_anthropic_wire.py",
        "tests/server/test_error_responses.py",
        "tests/server/protocols/test_images_wire.py",
        "tests/server/protocols/ollama/test_ollama_wire.py",
        "tests/server/protocols/openai/test_openai.py",
        "tests/server/protocols/responses/test_responses_wire.py",
        "tests/server/protocols/openai/test_sse.py",
        "tests/server/test_strict_json.py",
        "tests/store/test_attachments_store.py",
        "tests/store/test_chats.py",
        "tests/store/test_grounding_store.py",
        "tests/store/test_responses_store.py",
        "tests/store/test_think_store.py",
        "tests/store/test_usage_store.py",
        "tests/base/test_config.py",
        "tests/architecture/test_contracts.py",
        "tests/suite/test_fast_subset.py",
        "tests/base/test_filebytes.py",
        "tests/architecture/test_import_cycles.py",
        "tests/base/test_keychain.py",
        "tests/root/test_lazy.py",
        "tests/suite/test_near_tie.py",
        "tests/resolve/test_resolve.py",
    }
)
_NOT_FAST = ("slow", "gpu", "packaging")


def _fast_only(config: pytest.Config) -> bool:
    """Whether ``-m`` selects nothing but fast tests (then the rest need not be imported)."""
    expression = " ".join(str(config.getoption("markexpr") or "").split())
    return expression == "fast" or expression.startswith("fast and ")


def _relative(path: Path, config: pytest.Config) -> str:
    try:
        return path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return path.as_posix()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``-m fast``: skip every folder without a listed file, and every unlisted file."""
    if not _fast_only(config):
        return None
    name = _relative(collection_path, config)
    if name in (".", "tests"):
        return None
    if collection_path.is_dir():
        return not any(listed.startswith(f"{name}/") for listed in FAST_FILES) or None
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return name not in FAST_FILES or None
    return None


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``fast`` every test of a listed file that is not slow, gpu or packaging."""
    for item in items:
        if _relative(item.path, config) not in FAST_FILES:
            continue
        if not any(item.get_closest_marker(name) for name in _NOT_FAST):
            item.add_marker(pytest.mark.fast)
