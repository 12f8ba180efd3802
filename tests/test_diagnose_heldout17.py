"""diagnose() on a seventeenth held-out set of public crash logs (tests/fixtures/diagnose/heldout17.jsonl), 8 logs new
to every test fixture, 2023-2026, one or more per engine: vLLM (Qwen2.5-VL-72B on four V100s with ten images and a
video a prompt; V0's OpenAI server failing a chat request at --gpu-memory-utilization 0.99), SGLang (a decode step cut in
flashinfer's sampler), Ollama on ROCm (0.1.32's pool on an RX 7900 XTX) and on Metal (num_ctx 16000 past the working
set), llama.cpp on iOS (Metal's buffer validation refusing the compute buffer), an MLX server (vllm-mlx's Metal abort
after hours of traffic) and transformers (OpenChatKit's generate(), the message cut after its first sentence). Each
case is cited with the lines kept verbatim and the fix its thread gives (where the thread confirms none, the answer is
held to what the log shows); `before` records what oomkit answered before:
before: 1 of 8 right (4 wrong in engine or stage, 3 in the fixes); after: 8 right.
The rules, each from the engine's own source: vllm-mlx is an MLX server whose name holds vLLM's (vllm_mlx/cli.py);
vLLM V1's engine client (v1/engine/core_client.py MPClient, 0.7-0.8: its '[core_client.py:N]' lines and 'Got fatal
signal from worker processes') names vLLM; the OpenAI server's request handlers (entrypoints/openai/serving_chat.py,
serving_completion.py) logging the failure mean vLLM was serving (the serving fixes, not --enforce-eager); a
commented-out argument in a pasted script ('# enforce_eager=True,') is not in force; limit_mm_per_prompt above one
item puts --limit-mm-per-prompt first (multimodal/profiling.py: every dummy sequence carries that many); a vLLM
traceback cut before its message inside the start-up profile run
(worker.py determine_num_available_blocks / gpu_worker.py determine_available_memory -> profile_run), in a text that
says it ran out, is the profile's dummy batch (--max-num-seqs first); an SGLang one cut inside a serving step
(tp_worker.py forward_decode_batch / forward_batch_generation) is the step's memory outside the KV pool
(--mem-fraction-static lower, fewer running requests); Metal's API validation 'newBufferWith*:length 0x... must not
exceed N MB' is one buffer over maxBufferLength, llama.cpp's compute buffer (-ub first); PyTorch's
'torch.cuda.OutOfMemoryError: CUDA out of memory.' with nothing after it is the allocator's message cut (the frames
place it); MLX keeps freed buffers cached (allocator.cpp, until mx.set_cache_limit); Ollama's runner takes num_ctx, not
llama-server's -c. The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 16."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from oomkit.diagnose.logread import host_of
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout17.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


def test_vllm_mlx_is_an_mlx_server():
    """vllm-mlx names vLLM inside its own name; vLLM's own lines still read as vLLM."""
    assert host_of("uv run python -u -m vllm_mlx.cli serve /models/Qwen3.5") == "mlx"
    assert host_of("vllm-mlx 0.2.9 aborted") == "mlx"
    assert host_of("INFO 03-13 09:00:43 [api_server.py:912] vLLM API server version 0.8.0") == "vllm"


def test_v1_engine_client_names_vllm():
    assert host_of("CRITICAL 03-13 09:00:43 [core_client.py:260] Got fatal signal from worker processes, shutting "
                   "down. See stack trace above for root cause issue.") == "vllm"


def test_metal_validation_reads_the_hex_length():
    d = diagnose("-[MTLDebugDevice newBufferWithBytesNoCopy:length:options:deallocator:]:700: failed assertion `Buffer "
                 "Validation\nnewBufferWith*:length 0x40000000 must not exceed 512 MB.\n")
    assert (d.stage, d.backend, d.numbers.get("requested_bytes")) == ("buffer_limit", "Metal", 1 << 30), d.to_dict()
    assert d.fixes and d.fixes[0].summary.startswith("-ub"), [f.summary for f in d.fixes]


def test_torch_message_cut_after_first_sentence():
    """Alone it is PyTorch's out-of-memory with nothing placing it; the full message still reads by its figures."""
    d = diagnose("torch.cuda.OutOfMemoryError: CUDA out of memory.\n")
    assert (d.engine, d.stage) == ("pytorch", "unknown"), d.to_dict()
    assert not any("expandable_segments" in f.summary for f in d.fixes), [f.summary for f in d.fixes]
    full = diagnose("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                    "capacity of 23.55 GiB of which 1.00 GiB is free.")
    assert full.signature == "torch_cuda_oom" and full.numbers.get("requested_bytes") == 2 << 30, full.to_dict()


def test_ollama_runner_gets_no_llama_server_flags():
    """Under Ollama no fix names llama-server's -c or -ub (the runner takes num_ctx / num_batch)."""
    d = diagnose("time=2023-08-15 level=INFO msg=\"ollama serve\"\nsize =   160.00 MB, (12018.69 / 10922.67), warning: "
                 "current allocated size is greater than the recommended max working set size\n"
                 "ggml_metal_graph_compute: command buffer 0 failed with status 5\n")
    texts = [f.summary for f in d.fixes]
    assert d.host == "ollama" and not any(t.startswith(("-c ", "-c smaller", "-ub ")) for t in texts), texts
    assert any("num_ctx" in t for t in texts), texts


_SGLANG_PREFILL = ("[Bug] CUDA out of memory with long prompts\nException in ModelTpServer:\nTraceback (most recent "
                   "call last):\n  File \"/env/lib/python3.10/site-packages/sglang/srt/managers/tp_worker.py\", line "
                   "234, in forward_step\n    self.forward_prefill_batch(new_batch)\n  File \"/env/lib/python3.10/"
                   "site-packages/sglang/srt/managers/tp_worker.py\", line 446, in forward_prefill_batch\n    output = "
                   "self.model_runner.forward(batch, ForwardMode.EXTEND)")


def test_sglang_prefill_step_cut_offers_chunked_prefill():
    d = diagnose(_SGLANG_PREFILL)
    assert (d.engine, d.stage) == ("sglang", "compute"), d.to_dict()
    assert any("--chunked-prefill-size" in f.summary for f in d.fixes), [f.summary for f in d.fixes]


def test_cut_tracebacks_need_the_text_to_say_out_of_memory():
    """Without an out-of-memory word anywhere a cut traceback is not read as one (it may be any error)."""
    d = diagnose(_SGLANG_PREFILL.replace("CUDA out of memory with long prompts", "crash with long prompts"))
    assert d.stage == "unknown", d.to_dict()
    d = diagnose(_VLLM_PROFILE.replace("OOM error", "error"))
    assert d.stage == "unknown", d.to_dict()


# V0's lines before and in a profile run (worker/model_runner.py, enc_dec_model_runner.py 0.6.x profile_run), a
# traceback cut before its exception, under an issue's title that says it ran out of memory
_VLLM_PROFILE = ("[Bug]: Llama-3.2-11B-Vision OOM error on one GPU\n"
                 "INFO 10-23 19:55:16 model_runner.py:1067] Loading model weights took 19.8557 GB\n"
                 "INFO 10-23 19:55:16 enc_dec_model_runner.py:301] Starting profile run for multi-modal models.\n"
                 "Traceback (most recent call last):\n"
                 "  File \"/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py\", line 483, in "
                 "_initialize_kv_caches\n    self.model_executor.determine_num_available_blocks())\n"
                 "  File \"/usr/local/lib/python3.10/dist-packages/vllm/executor/gpu_executor.py\", line 114, in "
                 "determine_num_available_blocks\n    return self.driver_worker.determine_num_available_blocks()")


def test_vllm_profile_run_cut_is_the_dummy_batch():
    d = diagnose(_VLLM_PROFILE)
    assert (d.engine, d.stage) == ("vllm", "compute"), d.to_dict()
    assert d.fixes and d.fixes[0].summary.startswith("--max-num-seqs"), [f.summary for f in d.fixes]
    assert any("--limit-mm-per-prompt" in f.summary for f in d.fixes), [f.summary for f in d.fixes]


def test_openai_handler_line_means_serving():
    """A PyTorch out-of-memory logged by the OpenAI server's chat handler: serving fixes, no --enforce-eager."""
    case = next(c for c in CASES if c["id"].startswith("vllm-13100"))
    texts = [f.summary for f in diagnose(case["text"]).fixes]
    assert texts and texts[0].startswith("--gpu-memory-utilization") and not any("enforce-eager" in t for t in texts)


def test_commented_out_argument_is_not_in_force():
    from oomkit.diagnose.logread import read_log
    from oomkit.diagnose.scan import Text

    text = "llm = LLM(\n    # enforce_eager=True,\n    gpu_memory_utilization=0.9,\n)\n"
    settings, _ = read_log(Text(text.encode()), 0, len(text))
    assert settings.get("gpu_memory_utilization") == 0.9 and "enforce_eager" not in settings, settings
    settings, _ = read_log(Text(b"vllm serve m --enforce-eager\nllm = LLM(enforce_eager=True)\n"), 0, 60)
    assert settings.get("enforce_eager") == "True", settings


def test_one_image_per_prompt_adds_no_limit_fix():
    from oomkit.diagnose.fixes import _mm_limit_fix
    from oomkit.diagnose.result import Diagnosis

    assert _mm_limit_fix(Diagnosis(engine="vllm", stage="unknown", settings={"limit_mm_per_prompt": '{"image": 1}'})) is None
    fix = _mm_limit_fix(Diagnosis(engine="vllm", stage="unknown", settings={"limit_mm_per_prompt": "image=4,video=1"}))
    assert fix is not None and "image 4" in fix.summary
