"""diagnose() on a thirty-first held-out set of public crash logs (tests/fixtures/diagnose/heldout31.jsonl), 8 logs new
to every test fixture, 2023-2026: vLLM V1's KV-cache refusal from a script's LLM(...) (DeepSeek-V4-Flash on two
GH200) and from `vllm serve` (a DeepSeek-V4 fork on four 48 GB RTX 4090s), PyTorch's cudaMallocAsync refusals under
ComfyUI (with the device full, and with 5.00 GiB free), a HIP out-of-memory in ComfyUI's tiled VAE decode, a
Windows card lending system memory (16.16 GiB allocated on 11.99 GiB, then 27.12 GiB asked), and a 28.87 GiB tensor
inside scaled_dot_product_attention on a 15.83 GiB T4. Each case is cited with the lines kept verbatim and the fix
its thread gives (where the thread confirms none, the answer is held to the program's own rule),
`expected_by_hand` the reading written before oomkit was run; `before` records what oomkit answered before: 2 of 8
right (vllm-deepseek-v4-sm89#41, ComfyUI-Sharp#24), 4 half (vllm#44376, sd-webui-replacer#74, FramePack#608,
Fooocus#700), 2 wrong (ComfyUI#5886, ComfyUI#2431); after: 7 right, sd-webui-replacer#74 still half (its stage
stays unknown: the figures of a card lending system memory do not place the shortage).
The rules, each from the program's own source: vLLM's LLM(...) passes its keyword arguments to EngineArgs, whose
flags are the same names dashed (vllm/entrypoints/llm.py, vllm/engine/arg_utils.py), so the script's
kv_cache_dtype="fp8" and max_model_len=30_000 are read and the fixes take its names (vllm_python.py); PyTorch's
cudaMallocAsync backend raises after one cudaMallocAsync call with cudaMemGetInfo's free beside it
(c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync), so free at least the request is that allocator's refusal and
the native allocator is the fix (ComfyUI: --disable-cuda-malloc); ComfyUI's VAE decode retries a failed decode in
tiles (comfy/sd.py VAE.decode -> decode_tiled_), so an out-of-memory there takes smaller tiles or --cpu-vae;
SDPA materialises its scores only in its math fallback (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp
select_sdp_backend), so 'use SDPA' is no fix for a tensor raised inside it.
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 30."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout31.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def test_vllm_serve_keeps_its_flags():
    """The same V1 refusal from `vllm serve` (no LLM(...) in the text): vLLM's flags, and fp8 offered while the
    cache is not fp8."""
    text = _case("vllm-44376")["text"].split("(EngineCore", 1)[1]
    texts = _texts(diagnose("vllm serve deepseek-ai/DeepSeek-V4-Flash --max-model-len 30000\n(EngineCore" + text))
    assert texts[0].startswith("--max-model-len 13528"), texts
    assert any("--kv-cache-dtype fp8" in t for t in texts), texts
    assert not any("max_model_len=" in t for t in texts), texts


def test_python_api_switches_take_keyword_form():
    """A V0 refusal under LLM(...): the max-model-len fix as the call's keyword; a quoted kv_cache_dtype in force."""
    d = diagnose("llm = LLM(model='Qwen/Qwen2.5-7B', kv_cache_dtype='fp8_e5m2', max_model_len=32_768)\n"
                 "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
                 "stored in KV cache (8192). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` "
                 "when initializing the engine.\n")
    assert d.settings.get("kv_cache_dtype") == "fp8_e5m2" and d.settings.get("max_model_len") == 32768, d.settings
    texts = _texts(d)
    assert any("max_model_len=8192" in t for t in texts), texts
    assert not any("--max-model-len" in t or "--kv-cache-dtype" in t for t in texts), texts


def test_async_room_outside_comfyui_names_the_backend():
    """cudaMallocAsync refusing with the request free, no ComfyUI in the text: PyTorch's own allocator setting."""
    text = _case("comfyui-5886")["text"].replace("CheckpointLoaderSimple\n", "")
    d = diagnose(text)
    assert d.stage == "fragmentation", d.to_dict()
    assert d.fixes[0].env == (("PYTORCH_CUDA_ALLOC_CONF", "backend:native"),), _texts(d)


def test_async_full_device_is_not_the_allocator():
    """The same message with no room free (ComfyUI-Sharp#24): the device was full, not the allocator's refusal."""
    d = diagnose(_case("comfyui-sharp-24")["text"])
    assert d.stage == "other_process" and not any("backend:native" in t or "--disable-cuda-malloc" in t
                                                  for t in _texts(d)), _texts(d)


def test_sdpa_advice_stays_without_the_frame():
    """A tensor over the device with no SDPA frame: the eager attention matrix is still the advice."""
    text = _case("framepack-608")["text"].split("\n", 2)[2]  # the message alone, the frame and its source line cut
    texts = _texts(diagnose(text))
    assert any("use flash / SDPA attention" in t for t in texts), texts


def test_tiled_vae_fix_needs_the_tiled_frame():
    """A ComfyUI out-of-memory in another node (no decode_tiled_ frame) gets no tiled-VAE fix."""
    text = _case("comfyui-2431")["text"].replace("decode_tiled_", "decode")
    assert not any("VAE Decode (Tiled)" in t for t in _texts(diagnose(text)))
