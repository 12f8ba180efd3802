"""diagnose() on a thirtieth held-out set of public crash logs (tests/fixtures/diagnose/heldout30.jsonl), 5 logs new
to every test fixture, 2024-2026, from the parts the earlier sets cover least: vLLM V0's KV-cache refusal under
LLaMA-Factory (llamafactory-cli api --infer_backend vllm), SGLang running out while it allocates its KV pool
(init_memory_pool, Gemma 3 12B on an RTX 4090), vLLM V1's refusal with its estimate (a DeepSeek-V4 fork on four
48 GB RTX 4090s), a PyTorch out-of-memory beside an SGLang server's process (MOSS-TTSD) and Metal's command-buffer
Insufficient Memory under vmlx. Each case is cited with the lines kept verbatim and the fix its thread gives (where
the thread confirms none, the answer is held to what the log shows and the program's own rule),
`expected_by_hand` the reading written before oomkit was run; `before` records what oomkit answered before: 2 of 5
right (vllm-deepseek-v4-sm89#54, MOSS-TTSD#71), 3 half (LlamaFactory#6473, sglang#12496, vmlx#89); after: 4 right,
vmlx#89 still half (nothing in its log shows the prompt length).
The rules, each from the program's own source: LLaMA-Factory passes --vllm_maxlen to vLLM as max_model_len,
--vllm_gpu_util as gpu_memory_utilization, --vllm_enforce_eager as enforce_eager, the visible GPU count as
tensor_parallel_size and --vllm_config's keys over them (chat/vllm_engine.py VllmEngine.__init__, v0.9.1-v0.9.4), so
its run gets those names; vLLM V0's refusal is max_seq_len > num_gpu_blocks x block_size (worker.py
raise_if_cache_size_invalid), so the printed count is the length that fits, and V1 prints its own estimate
(v1/core/kv_cache_utils.py check_enough_kv_cache_memory); SGLang sizes its pool as the free memory after the
weights less total x (1 - mem_fraction_static) (model_runner.py profile_max_num_token), so an out-of-memory while
the pool's buffers are created (memory_pool.py _create_buffers) takes a lower fraction, and a process that holds
nearly the whole GPU there takes its weights split over more ranks.
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 29."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout30.jsonl", minimum=5, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


V0_REFUSAL = ("ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be "
              "stored in KV cache (1216). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
              "initializing the engine.\n")


def test_plain_vllm_keeps_vllm_flags():
    """The same V0 refusal with no LLaMA-Factory in the text: vLLM's own flags (a count worth serving, 8192 here,
    named in the max-model-len fix)."""
    texts = _texts(diagnose(V0_REFUSAL))
    assert any("--max-model-len below the printed token count" in t for t in texts), texts
    texts = _texts(diagnose(V0_REFUSAL.replace("(4096)", "(32768)").replace("(1216)", "(8192)")))
    assert texts[0].startswith("--max-model-len 8192: the KV cache holds 8,192 tokens"), texts
    assert not any("--vllm_maxlen" in t or "--vllm_config" in t for t in texts), texts


def test_llamafactory_yaml_and_traceback_take_its_names():
    """LLaMA-Factory's YAML keys (vllm_maxlen, vllm_gpu_util) and its module in a traceback mark the run as its own:
    the settings read under vLLM's names, the fixes in its arguments (a KV cache dtype through --vllm_config)."""
    text = ("vllm_maxlen: 4096\nvllm_gpu_util: 0.7\n"
            '  File "/opt/LLaMA-Factory/src/llamafactory/chat/vllm_engine.py", line 95, in __init__\n' + V0_REFUSAL)
    d = diagnose(text)
    assert d.settings.get("llamafactory") == "True" and d.settings.get("gpu_memory_utilization") == 0.7, d.settings
    assert d.settings.get("max_model_len") == 4096, d.settings
    texts = _texts(d)
    assert any("""--vllm_config '{"kv_cache_dtype": "fp8"}'""" in t for t in texts), texts
    assert not any("--max-model-len" in t or "--kv-cache-dtype" in t for t in texts), texts


def test_vllm_enforce_eager_false_is_not_eager():
    """--vllm_enforce_eager false on LLaMA-Factory's command line leaves CUDA graphs on: not read as eager."""
    d = diagnose("llamafactory-cli api --infer_backend vllm --vllm_enforce_eager false\n" + V0_REFUSAL)
    assert d.settings.get("enforce_eager") != "True", d.settings


def test_sglang_pool_allocation_beside_another_process_frees_it_first():
    """The same pool allocation failing while this process holds 15 GiB of the 23.52 GiB GPU: the rest is other
    processes' (8.5 GiB by PyTorch's figures), so freeing them comes first, and no --tp-size (the weights do not fill the GPU)."""
    text = _case("sglang-12496")["text"].replace("this process has 23.48 GiB memory in use",
                                                 "this process has 15.00 GiB memory in use")
    d = diagnose(text)
    texts = _texts(d)
    assert d.stage in ("kv_cache", "other_process"), d.to_dict()
    assert texts[0].startswith("free the"), texts
    assert not any("--tp-size" in t for t in texts), texts


def test_sglang_pool_fix_stays_with_pool_frames():
    """A PyTorch out-of-memory in an SGLang log whose traceback is the forward pass (no pool frames) gets no
    KV-pool allocation advice."""
    d = diagnose("[2025-11-01 16:50:30] server_args=ServerArgs(model_path='m', mem_fraction_static=0.717, tp_size=1)\n"
                 "  File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py\", line 2000, in "
                 "forward_extend\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has "
                 "a total capacity of 23.52 GiB of which 13.00 MiB is free. Including non-PyTorch memory, this process "
                 "has 23.48 GiB memory in use.\n")
    assert not any("while its pool is still being allocated" in t for t in _texts(d)), _texts(d)
