"""From a model name to a load plan: where the file is found, the machine policy, the fit."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from desktop.base.config import EngineSettings, Paths
from desktop.base.defaults import WORKER_PROCESS_BYTES
from desktop.base.errors import InvalidRequest, ModelFileError, ModelNotAllowed, ModelNotFound
from desktop.catalog._entries import Catalog
from desktop.catalog._fit import Hardware
from desktop.catalog._gguf_info import read_gguf
from desktop.engine._types import LocalPlan
from desktop.resolve import ModelResolver
from desktop.resolve._locate import installed_from_mapping

pytestmark = pytest.mark.fast

GIB = 1024**3
ROOMY = Hardware(ram_total_bytes=64 * GIB, ram_available_bytes=64 * GIB, cpu_count=8)
CATALOG = Catalog.model_validate(
    {
        "schema_version": 1,
        "model": [
            {
                "id": "cat-chat",
                "name": "Cat Chat",
                "family": "other",
                "kind": "chat",
                "repo": "org/cat-chat-gguf",
                "context_length": 4096,
                "license": "mit",
                "tier": "laptop",
                "default_quant": "Q4_K_M",
                "quants": [{"name": "Q4_K_M", "files": ["cat-chat-Q4_K_M.gguf"]}],
            },
        ],
    }
)


def _resolver(
    tmp_path: Path,
    *,
    installed: dict[str, list[Path]] | None = None,
    settings: EngineSettings | None = None,
    hardware: Hardware = ROOMY,
    **fields: object,
) -> ModelResolver:
    root = tmp_path / "home"
    paths = Paths(root / "config", root / "data", root / "cache", root / "logs")
    return ModelResolver(
        catalog=CATALOG,
        paths=paths,
        engine_settings=settings or EngineSettings(),
        hardware=hardware,
        gpu_offload=False,
        installed=installed_from_mapping(installed or {}),
        **fields,
    )  # type: ignore[arg-type]


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def test_a_name_is_found_in_the_first_of_the_five_places_that_has_it(
    tmp_path: Path, tiny_chat: Path
) -> None:
    shared = tmp_path / "it-share"
    resolver = _resolver(tmp_path, shared_models_dir=shared)
    with pytest.raises(
        ModelNotFound,
        match="cat-chat is not downloaded yet; run 'edgedesk models pull cat-chat' first",
    ) as missing:
        resolver.locate("cat-chat")
    assert missing.value.kind == "not_downloaded"

    # 5. IT's read-only shared folder, in the same <repo>/<file> layout.
    in_shared = _copy(tiny_chat, shared / "org" / "cat-chat-gguf" / "cat-chat-Q4_K_M.gguf")
    assert resolver.locate("cat-chat") == (in_shared, CATALOG.get("cat-chat"), [in_shared])
    # 4. The catalog's own download folder comes before it.
    pulled = _copy(
        tiny_chat, resolver.paths.models_dir / "org" / "cat-chat-gguf" / "cat-chat-Q4_K_M.gguf"
    )
    assert resolver.locate("cat-chat")[0] == pulled
    # 3. The installed index (pulls of other quants, imports) comes before that.
    imported = _copy(tiny_chat, tmp_path / "mine" / "cat-chat-Q8_0.gguf")
    resolver.installed = installed_from_mapping({"cat-chat": [imported]})
    assert resolver.locate("cat-chat") == (imported, CATALOG.get("cat-chat"), [imported])
    # 1. A file registered under its stable id (`serve --model`) comes first of all.
    mine = _copy(tiny_chat, tmp_path / "elsewhere" / "cat-chat.gguf")
    assert resolver.register(mine) == "cat-chat"
    assert resolver.locate("cat-chat") == (mine, None, [mine])
    # 2. A path is a path, whatever the catalog holds.
    assert resolver.locate(str(imported)) == (imported, None, [imported])
    with pytest.raises(ModelNotFound, match="model file not found") as gone:
        resolver.locate(str(tmp_path / "absent.gguf"))
    assert gone.value.kind == "file_not_found"


def test_the_machine_policy_refuses_a_model_it_lists_neither_by_id_nor_by_digest(
    tmp_path: Path, tiny_chat: Path
) -> None:
    digest = hashlib.sha256(tiny_chat.read_bytes()).hexdigest()
    resolver = _resolver(tmp_path, allowed_models=["some-other-model", "0" * 64])
    with pytest.raises(
        ModelNotAllowed, match="tiny-chat is blocked by your organization's policy"
    ) as blocked:
        resolver(str(tiny_chat))
    assert blocked.value.kind == "policy_blocked"
    resolver.allowed_models = ["some-other-model", digest.upper()]  # IT may paste it so
    assert resolver(str(tiny_chat)).model_id == "tiny-chat"
    resolver.allowed_models = ["tiny-chat"]
    assert resolver(str(tiny_chat)).model_id == "tiny-chat"
    resolver.allowed_models = None  # no policy
    assert resolver(str(tiny_chat)).model_id == "tiny-chat"


def test_the_plan_carries_the_settings_and_the_kind_read_from_the_header(
    tmp_path: Path, tiny_chat: Path, tiny_embed: Path
) -> None:
    settings = EngineSettings(
        context_length=2048,
        parallel=6,
        max_parallel=3,
        threads=2,
        prompt_cache_disk_mb=5,
        prompt_lookup_tokens=8,
    )
    resolver = _resolver(tmp_path, settings=settings)
    spec = resolver(str(tiny_chat))
    plan = spec.local
    assert plan is not None
    assert (spec.model_id, spec.kind, spec.file) == ("tiny-chat", "chat", tiny_chat)
    assert (spec.context_length, spec.gpu_layers, spec.threads) == (2048, 0, 2)
    assert (plan.parallel, plan.batch_threads, plan.lookup_draft) == (3, 2, 8)  # policy cap
    assert plan.prompt_cache_dir == resolver.paths.cache_dir / "prompt-cache"
    assert plan.prompt_cache_disk_bytes == 5 * 1024 * 1024
    # llama.cpp's buffers, and the worker process the model runs in.
    llama = read_gguf(tiny_chat).estimate_bytes(2048, "f16", 3)
    assert plan.estimated_bytes == llama + WORKER_PROCESS_BYTES
    in_process = _resolver(tmp_path, settings=settings.model_copy(update={"worker_process": False}))
    assert in_process(str(tiny_chat)).local.estimated_bytes == llama  # type: ignore[union-attr]
    assert resolver(str(tiny_embed)).kind == "embedding"
    assert resolver(str(tiny_chat), context_length=1024).context_length == 1024
    with pytest.raises(InvalidRequest, match="context length 10 is out of range"):
        resolver(str(tiny_chat), context_length=10)


def test_a_catalog_id_holding_another_kind_of_model_is_refused_with_the_way_out(
    tmp_path: Path, tiny_embed: Path
) -> None:
    resolver = _resolver(tmp_path, installed={"cat-chat": [tiny_embed]})
    with pytest.raises(
        ModelFileError,
        match="installed as cat-chat but holds an embedding "
        "model, not a chat model; remove it with 'edgedesk models rm cat-chat'",
    ):
        resolver("cat-chat")


def test_a_sliding_window_model_is_planned_with_window_sized_layers(
    tmp_path: Path, gemma_path: Path
) -> None:
    # Gemma 3 270M: 15 of its 18 layers use a 512-token window and keep only that (the
    # slots' windows plus one micro-batch of cells, padded to 256), as llama.cpp
    # allocates them by default; the 3 global layers keep the whole shared context.
    gemma = read_gguf(gemma_path)
    assert (gemma.sliding_window, gemma.swa_layers, gemma.block_count) == (512, 15, 18)
    per_layer = gemma.kv_bytes_per_token() // 18  # 1 KV head x (256 + 256) x 2 bytes
    assert per_layer == 1024
    assert gemma.kv_bytes(32768, "f16", 4) == per_layer * (3 * 32768 + 15 * 2560)
    one = _resolver(tmp_path, settings=EngineSettings(context_length=8192, parallel=1))
    four = _resolver(tmp_path, settings=EngineSettings(context_length=8192, parallel=4))
    extra = four(str(gemma_path)).estimated_bytes - one(str(gemma_path)).estimated_bytes
    # Three more windows in the shared cache (1536 cells) and three more checkpoints of
    # a window and a micro-batch each (1024 cells): 37.5 MiB, not three more contexts.
    assert extra == per_layer * 15 * (1536 + 3 * 1024)

    # engine.swa_full_cache: every position, one cache per slot, counted so.
    full = _resolver(
        tmp_path, settings=EngineSettings(context_length=8192, parallel=4, swa_full_cache=True)
    )
    spec = full(str(gemma_path))
    assert isinstance(spec.plan, LocalPlan) and spec.plan.swa_full
    assert spec.plan.estimated_bytes == (
        gemma.estimate_bytes(8192, "f16", 4, swa_full=True) + WORKER_PROCESS_BYTES
    )
    assert gemma.kv_bytes(8192, "f16", 4, swa_full=True) == 4 * 18 * per_layer * 8192

    # Without sliding-window layers the slots share one cache: slots cost nothing more.
    shared = replace(gemma, sliding_window=0)
    assert shared.estimate_bytes(8192, "f16", 4) == shared.estimate_bytes(8192, "f16", 1)

    # Where four full caches of the trained context do not fit, the context shrinks (the
    # slots stay) until they do; window-sized, the trained context fits.
    budget = gemma.estimate_bytes(32768, "f16", 1, swa_full=True) + WORKER_PROCESS_BYTES
    tight = Hardware(
        ram_total_bytes=budget * 2, ram_available_bytes=int(budget / 0.85) + 1, cpu_count=8
    )
    fitted = _resolver(
        tmp_path,
        hardware=tight,
        settings=EngineSettings(parallel=4, cache_type="f16", swa_full_cache=True),
    ).fit(gemma)
    assert fitted.parallel == 4 and fitted.runs
    assert fitted.context_length == 8192
    four_full = gemma.estimate_bytes(8192, "f16", 4, swa_full=True) + WORKER_PROCESS_BYTES
    assert fitted.estimated_bytes == four_full <= budget
    sized = _resolver(
        tmp_path, hardware=tight, settings=EngineSettings(parallel=4, cache_type="f16")
    ).fit(gemma)
    assert sized.context_length == 32768 and sized.runs


@pytest.mark.parametrize(
    ("ram_gib", "cache_mib"),
    [(2, 64), (4, 128), (8, 256), (16, 512), (24, 768), (64, 2048), (512, 2048)],
)
def test_the_ram_state_cache_is_sized_to_the_machine(
    tmp_path: Path, tiny_chat: Path, ram_gib: int, cache_mib: int
) -> None:
    # 1/32 of the RAM, at least 64 MiB and at most 2 GiB: a 4 GiB laptop does not keep
    # 512 MiB of pushed-out conversations (swap), a workstation keeps long agent sessions.
    machine = Hardware(
        ram_total_bytes=ram_gib * GIB, ram_available_bytes=ram_gib * GIB // 2, cpu_count=4
    )
    plan = _resolver(tmp_path, hardware=machine)(str(tiny_chat)).local
    assert plan is not None
    assert plan.state_cache_bytes == cache_mib * 1024 * 1024


def test_the_state_cache_setting_overrides_the_machine_sized_budget(
    tmp_path: Path, tiny_chat: Path
) -> None:
    small = Hardware(ram_total_bytes=4 * GIB, ram_available_bytes=2 * GIB, cpu_count=2)
    for mib, expected in ((1536, 1536 * 1024 * 1024), (0, 0)):  # 0: no RAM state cache
        settings = EngineSettings(state_cache_mb=mib)
        plan = _resolver(tmp_path, settings=settings, hardware=small)(str(tiny_chat)).local
        assert plan is not None
        assert plan.state_cache_bytes == expected
    with pytest.raises(ValueError, match="state_cache_mb"):
        EngineSettings(state_cache_mb=-1)
