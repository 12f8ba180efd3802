"""diagnose() on a twenty-third held-out set of public crash logs (tests/fixtures/diagnose/heldout23.jsonl), 8 logs
new to every test fixture, 2024-2026, in kinds the earlier sets held little of: ExLlamaV2's cache running out on a
Colab T4 with the cache already Q4, TabbyAPI loading a model onto a GPU its previous model still held, TGI's Gemma 3
warm-up chained into its re-raise under a pretty-printed Args block, AMD's RADV refusing a command submission (Jan's
llama.cpp loading weights, Ollama's llama-server runner on an iGPU, llama-bench's first graph on a Strix Point APU),
mlx_lm.server's Metal out-of-memory and oMLX's memory guard refusing a prompt. Each case is cited with the lines kept
verbatim and the fix its thread gives (where the thread confirms none, the answer is held to what the log shows and
the engine's own rule); `before` records what oomkit answered before:
before: 1 of 8 right (mlx_lm.server); after: 8 right.
The rules, each from the engine's own source: an ExLlama traceback is placed by its innermost exllama file (cache.py:
the cache, whose advice is max_seq_len / -l when the cache is already Q4; device.py ExLlamaV2DeviceContext.prepare,
which model.py get_device_context runs once per device at the model's first module there: a device this process
already mostly holds is held by a model loaded before, unloaded first); TGI's launcher Args read pretty-printed, and
a PyTorch out-of-memory chained into another exception in a TGI log is flash_causal_lm.py warmup's re-raise (the
prefill batch and the input limit both lowered); PyTorch's allocator settings dropped where the request is over free
plus unused reserve; Mesa RADV's 'Not enough memory for command submission' (amdgpu_cs_ioctl -ENOMEM) placed by what
follows it (the loader's error: weights; a graph run: compute), its advice the device's buffers together (-ngl), and on
an APU ('uma: 1') the kernel's GTT limits (amdgpu.gttsize, ttm.pages_limit); oMLX's preflight guard read as the
refusal it is, its own advice first with the prompt's length.
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 22."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout23.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def test_exllama_cache_in_fp16_keeps_the_cache_mode_advice():
    """Without -cq4 on the command line the cache is FP16: a quantized cache mode is still advice (exllamav2#761's
    lines with the flag removed)."""
    d = diagnose(_case("exllamav2-761")["text"].replace(" -cq4", ""))
    assert d.stage == "kv_cache", d.to_dict()
    assert any("cache_mode: Q8" in t for t in _texts(d)), _texts(d)


def test_exllama_scratch_on_a_free_device_is_not_another_model():
    """The scratch reservation on a device mostly free is no earlier model's doing: the device context's own buffer
    (tabbyAPI#304's traceback, its message for a 14 GiB scratch with 12 of 23.53 GiB free)."""
    text = _case("tabbyapi-304")["text"].split("torch.OutOfMemoryError")[0] + (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 14.00 GiB. GPU 1 has a total capacity of "
        "23.53 GiB of which 12.00 GiB is free.\n")
    d = diagnose(text)
    assert d.stage == "compute", d.to_dict()
    assert not any("unload" in t for t in _texts(d)), _texts(d)


def test_chained_oom_outside_tgi_is_not_tgi_warmup():
    """The chained-exception rule is TGI's warm-up: the same lines without TGI's launcher are not placed by it."""
    lines = [ln for ln in _case("tgi-3105")["text"].split("\n")
             if "text_generation_launcher" not in ln and "text-generation" not in ln]
    d = diagnose("\n".join(lines))
    assert not any("TGI's warm-up" in c for c in d.causes), d.causes


def test_tgi_pretty_args_read_as_the_compact_form():
    """The launcher's Args pretty-printed ({:#?}: 'max_batch_prefill_tokens: Some(' then '32000,') read as its one-line
    form."""
    d = diagnose("2025-03-13T08:36:37Z  INFO text_generation_launcher: Args { model_id: \"m\", "
                 "max_input_tokens: Some(32000), max_total_tokens: Some(64000), max_batch_prefill_tokens: Some(32000) }\n"
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 30.52 GiB. GPU 0 has a total capacity "
                 "of 79.10 GiB of which 14.37 GiB is free.\n")
    pretty = diagnose(_case("tgi-3105")["text"])
    for k in ("max_input_tokens", "max_total_tokens", "max_batch_prefill_tokens"):
        assert d.settings.get(k) == pretty.settings.get(k) == {"max_total_tokens": 64000}.get(k, 32000), k


def test_radv_refusal_alone_is_placed_by_its_context_only():
    """The driver's line names no buffer: with nothing after or before it the stage stays unknown, the advice still
    the device's buffers together."""
    d = diagnose("radv/amdgpu: Not enough memory for command submission.\n")
    assert (d.engine, d.backend, d.stage) == ("llama.cpp", "Vulkan", "unknown"), d.to_dict()


def test_device_lost_without_the_driver_refusal_is_no_shortage():
    """vk::Queue::submit: ErrorDeviceLost alone (a driver timeout, a bad shader) is not read as memory
    (llama.cpp#18962's kind of line)."""
    d = diagnose("llama_model_load: error loading model: vk::Queue::submit: ErrorDeviceLost\n")
    assert d.stage in ("unknown", "not_oom") and not d.fixes, d.to_dict()


def test_radv_on_discrete_gpu_has_no_gtt_advice():
    """The GTT advice is an APU's: without 'uma: 1' in the log (jan#6009) it is not given."""
    d = diagnose(_case("jan-6009")["text"])
    assert not any("gttsize" in t for t in _texts(d)), _texts(d)
