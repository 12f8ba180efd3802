"""The EAGLE-family draft worker when the draft is the checkpoint's own next-n (MTP) layers (engines/sglang/draft.py),
by release. No public start-up log with the draft worker's figures was found (corpus "issues", sgl-project/sglang:
the docs-CI EAGLE log of tests/test_sglang_heldout5.py has a separate draft checkpoint, which oomkit does not size),
so these are the expectations read from SGLang's source, each with where it was read:

- 0.5.14+ (scheduler.py init_model_worker: maybe_init_draft_worker before init_memory_pools; pool_configurator.py /
  model_runner_kv_cache_mixin.py): the draft's weights, with its own embedding and lm_head not yet freed
  (eagle_worker_v2.py init_lm_head runs from alloc_memory_pool), are counted before the target's pool is profiled,
  and the target's cell takes the draft's layers: cell += int(cell x draft_layers / num_layers). The draft's pool
  holds the target's token count (memory_pool_config shared).
- 0.5.7-0.5.13 (model_runner_kv_cache_mixin.py): the target's pool is sized as without a draft; the draft's
  weights and its pool of the target's token count come after it, out of the (1 - mem_fraction_static) share.
- 0.4.3.post4-0.5.6 (model_runner.py init_memory_pool): draft_runner_cache_size = the target's tokens +
  max_num_reqs x (num_steps x eagle_topk + num_draft_tokens) + 100, the target's pool raised to it too.
- before 0.4.10 an MHA draft's pool spans every layer of the model (MHATokenToKVPool(layer_num=
  num_effective_layers), 0.4.7.post1 read; sglang PR #8482, merged 2025-07-29: "when we create KV cache for the
  draft model, currently we for ALL model layers while we only needed the last MTP layer").
- server_args.py (0.5.4+): the EAGLE family sets max_running_requests to 48 when it is not given.
"""

from __future__ import annotations

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.cmdline import parse_command
from oomkit.engines.sglang.draft import draft_worker, speculative_params
from oomkit.engines.sglang.settings import parse_version
from oomkit.units import GiB, MiB
from tests.test_sglang_heldout4 import gpus
from tests.test_vllm_startup import spec_of

H200 = ("NVIDIA H200", 143771 * MiB)
FIXED = dict(mem_fraction_static=0.85, max_running_requests=64)  # the same fraction and rows with and without a draft


def run(model: str, tp: int, release: str, algo: str | None, **kw):
    s = sg.SGLangSettings(tp_size=tp, engine_version=release, speculative_algorithm=algo, **{**FIXED, **kw})
    return sg.ENGINE.estimate(spec_of(model), gpus(H200, tp), s)


def test_from_0_5_14_the_profile_counts_the_draft_weights_and_layers():
    spec = spec_of("deepseek-v3")
    base, mtp = run("deepseek-v3", 8, "0.5.23", None), run("deepseek-v3", 8, "0.5.23", "NEXTN")
    b, m = base.engine_view, mtp.engine_view
    # MLA: one latent row of 576 bf16 a layer; the draft's one layer priced as 61 target layers' cell / 61
    assert m["cell_size_bytes"] == b["cell_size_bytes"] + int(b["cell_size_bytes"] * 1 / 61)
    d = draft_worker(spec, sg.SGLangSettings(tp_size=8, engine_version="0.5.23", speculative_algorithm="NEXTN",
                                             **FIXED), parse_version("0.5.23"))
    assert d is not None and d.profiled and d.cell_in_profile and d.n_layers == spec.n_nextn_layers == 1
    # the rest after the target's and the draft's weights (the draft's vocabulary copies still held), / the cell
    rest = (b["load_weight_begin_avail_bytes"] - b["weights_bytes"] - d.weights_bytes - d.copies_bytes
            - b["load_weight_begin_avail_bytes"] * (1 - 0.85))
    assert abs(m["max_total_num_tokens"] - rest // m["cell_size_bytes"]) <= 2
    assert m["max_total_num_tokens"] < b["max_total_num_tokens"]
    # the draft's pool: the target's tokens, one MLA layer of (tokens + page) x 576 x 2 bytes
    assert m["draft_max_total_num_tokens"] == m["max_total_num_tokens"]
    page = m["page_size"]
    assert m["draft_k_bytes"] == (m["max_total_num_tokens"] + page) * 576 * 2 and m["draft_v_bytes"] == 0
    assert "KV Cache is allocated. #tokens: " + str(m["max_total_num_tokens"]) in m["log"]
    assert m["log"].count("KV Cache is allocated") == 2
    # the pools fill the profiled rest as without a draft: "Memory pool end" (printed by the draft worker before
    # init_lm_head) leaves what the target alone leaves; the draft's vocabulary copies, freed by init_lm_head just
    # after it, are left over at the capture (sglang PR #35996: "the freed ~2.5GB ... stayed idle")
    left = m["memory_pool_end_avail_bytes"] - b["memory_pool_end_avail_bytes"]
    assert abs(left) < 2 * m["cell_size_bytes"]
    left = (m["capture_begin_avail_bytes"] + m["attention_backend_init_bytes"]
            - b["capture_begin_avail_bytes"] - b["attention_backend_init_bytes"])
    assert abs(left - d.copies_bytes) < 2 * m["cell_size_bytes"]


def test_before_0_5_14_the_draft_comes_out_of_the_share_left_after_the_target_pool():
    base, mtp = run("glm-4.5-air", 4, "0.5.10", None), run("glm-4.5-air", 4, "0.5.10", "NEXTN")
    b, m = base.engine_view, mtp.engine_view
    # the target's pool is sized as without a draft (prefill graphs aside, off with speculative decoding: same
    # fraction given); the draft's pool holds the same tokens (draft_runner_cache_size = max_total_num_tokens)
    assert m["max_total_num_tokens"] == b["max_total_num_tokens"]
    assert m["draft_max_total_num_tokens"] == m["max_total_num_tokens"]
    assert m["draft_counted_in_profile"] is False
    # one MHA next-n layer: 8 KV heads of 128 over TP4 -> 2 a rank, K and V bf16
    page = m["page_size"]
    assert m["draft_k_bytes"] == m["draft_v_bytes"] == (m["max_total_num_tokens"] + page) * 2 * 128 * 2
    drop = b["memory_pool_end_avail_bytes"] - m["memory_pool_end_avail_bytes"]
    assert drop == m["draft_weights_bytes"] + m["draft_k_bytes"] + m["draft_v_bytes"]


def test_0_4_3_post4_to_0_5_6_raise_both_pools_by_the_tokens_in_flight():
    base, mtp = run("deepseek-v3", 8, "0.5.6", None), run("deepseek-v3", 8, "0.5.6", "NEXTN")
    b, m = base.engine_view, mtp.engine_view
    # DeepSeek: auto_choose_speculative_params (3, 1, 4); 64 requests: + 64 x (3 x 1 + 4) + 100 = 548 tokens
    assert (m["speculative_num_steps"], m["speculative_eagle_topk"], m["speculative_num_draft_tokens"]) == (3, 1, 4)
    assert m["max_total_num_tokens"] == b["max_total_num_tokens"] + 64 * (3 * 1 + 4) + 100
    assert m["draft_max_total_num_tokens"] == m["max_total_num_tokens"]
    # from 0.5.7 no headroom
    assert run("deepseek-v3", 8, "0.5.7", "NEXTN").engine_view["max_total_num_tokens"] == \
        run("deepseek-v3", 8, "0.5.7", None).engine_view["max_total_num_tokens"]


def test_max_total_tokens_caps_the_raised_pools():
    m = run("deepseek-v3", 8, "0.5.6", "NEXTN", max_total_tokens=20480).engine_view
    assert m["max_total_num_tokens"] == m["draft_max_total_num_tokens"] == 20480


def test_before_0_4_10_an_mha_draft_pool_spans_every_layer():
    # MiMo-7B (MiMoMTP, 0.4.7.post1): 36 layers of 8 KV heads of 128 in the draft's pool, not its one MTP layer
    old, new = run("mimo-7b-rl", 1, "0.4.7.post1", "NEXTN").engine_view, run("mimo-7b-rl", 1, "0.4.10", "NEXTN").engine_view
    page = old["page_size"]
    assert old["draft_k_bytes"] == (old["draft_max_total_num_tokens"] + page) * 36 * 8 * 128 * 2
    assert new["draft_k_bytes"] == (new["draft_max_total_num_tokens"] + page) * 1 * 8 * 128 * 2


def test_running_requests_default_to_48_from_0_5_4():
    for release, expected in (("0.5.3", None), ("0.5.4", 48), ("0.5.23", 48)):
        s = sg.SGLangSettings(tp_size=8, engine_version=release, speculative_algorithm="NEXTN")
        v = sg.ENGINE.estimate(spec_of("deepseek-v3"), gpus(H200, 8), s).engine_view
        if expected is None:
            assert v["max_running_requests"] > 48
        else:
            assert v["max_running_requests"] == expected


@pytest.mark.parametrize(("model", "release", "expected"), [
    ("deepseek-v3", "0.4.5", (5, 4, 8)), ("deepseek-v3", "0.4.7.post1", (3, 1, 4)),
    ("glm-4.5-air", "0.5.6", (5, 4, 8)), ("glm-4.5-air", "0.5.7", (3, 1, 4)),
    ("mimo-7b-rl", "0.5.7", (5, 4, 8)), ("mimo-7b-rl", "0.5.8", (3, 1, 4)),
    ("deepseek-v3", "0.4.2", (5, 8, 64)), ("deepseek-v3", "0.4.3.post4", (5, 4, 8)),
])
def test_auto_chosen_speculative_params(model, release, expected):
    s = sg.SGLangSettings(engine_version=release, speculative_algorithm="NEXTN")
    assert speculative_params(spec_of(model), s, parse_version(release)) == expected


def test_top_k_one_sets_draft_tokens_to_steps_plus_one():
    s = sg.SGLangSettings(engine_version="0.5.23", speculative_algorithm="EAGLE", speculative_num_steps=5,
                          speculative_eagle_topk=1, speculative_num_draft_tokens=8)
    assert speculative_params(spec_of("deepseek-v3"), s, parse_version("0.5.23")) == (5, 1, 6)


def test_a_separate_draft_checkpoint_is_not_sized():
    s = sg.SGLangSettings(tp_size=8, engine_version="0.5.23", speculative_algorithm="EAGLE",
                          speculative_draft_model_path="someone/DeepSeek-V3-Eagle3")
    assert draft_worker(spec_of("deepseek-v3"), s, parse_version("0.5.23")) is None
    # a dense model without next-n layers has no draft of its own
    s = sg.SGLangSettings(engine_version="0.5.23", speculative_algorithm="EAGLE")
    assert draft_worker(spec_of("qwen3-8b"), s, parse_version("0.5.23")) is None


def test_the_flags_parse_and_the_command_carries_them():
    argv = ["python", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8",
            "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", "4", "--speculative-draft-model-path", "deepseek-ai/DeepSeek-V3"]
    p = parse_command(argv, env={})
    s = p.settings
    assert (s.speculative_num_steps, s.speculative_eagle_topk, s.speculative_draft_model_path) == \
        (3, 1, "deepseek-ai/DeepSeek-V3")
    # the model's own path as the draft is its next-n layers, sized: no "not counted" note for the path
    assert not any(u.startswith("--speculative-draft-model-path") for u in s.unmodelled)
    out = sg.ENGINE.command("deepseek-ai/DeepSeek-V3", s)
    back = parse_command(out, env={}).settings
    assert (back.speculative_num_steps, back.speculative_eagle_topk, back.speculative_num_draft_tokens,
            back.speculative_draft_model_path) == (3, 1, 4, "deepseek-ai/DeepSeek-V3")


def test_the_draft_weights_are_the_next_n_layer_without_its_vocabulary_copies():
    spec = spec_of("deepseek-v3")
    s = sg.SGLangSettings(tp_size=8, engine_version="0.5.23", speculative_algorithm="NEXTN")
    d = draft_worker(spec, s, parse_version("0.5.23"))
    layer = [t for t in spec.weights.tensors if t.layer == spec.n_trunk_layers]
    copies = [t for t in layer if t.name.endswith((".nextn.embed_tokens.weight", ".nextn.shared_head_head.weight"))]
    assert len(copies) == 2
    # 256 fp8 experts over 8 ranks dominate; the vocabulary copies are shared with the target, not held
    assert 1.0 * GiB < d.weights_bytes < 1.6 * GiB
    assert d.weights_bytes == sg.ENGINE.estimate(spec, gpus(H200, 8), s).engine_view["draft_weights_bytes"]
    # the next-n model's own VocabParallelEmbedding and ParallelLMHead until init_lm_head: 129,280 x 7,168 bf16
    # each, split over the 8 ranks
    assert d.copies_bytes == 2 * (129280 // 8) * 7168 * 2


def test_the_target_verify_graphs_take_the_auto_chosen_draft_tokens():
    # server_args.py auto_choose_speculative_params: without --speculative-num-draft-tokens the verify graphs hold 4
    # rows a request for DeepSeek and (0.5.8+) most other models, 8 for Llama; a separate draft too (its size aside)
    assert run("deepseek-v3", 8, "0.5.23", "NEXTN").settings["speculative_num_draft_tokens"] == 4
    s = run("qwen3-8b", 1, "0.5.23", "EAGLE", speculative_draft_model_path="someone/Qwen3-8B-Eagle").settings
    assert s["speculative_num_draft_tokens"] == 4
    assert run("qwen3-8b", 1, "0.5.23", "EAGLE", speculative_num_draft_tokens=16).settings[
        "speculative_num_draft_tokens"] == 16
