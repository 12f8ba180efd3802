"""diagnose() on a nineteenth held-out set of public crash logs (tests/fixtures/diagnose/heldout19.jsonl), 8 logs new
to every test fixture, 2023-2026: vLLM (a V1 worker dying on a multi-image chat request, Qwen3-VL-235B on eight GPUs;
GLM-OCR's image over the encoder cache, --limit-mm-per-prompt), SGLang (olmOCR's Qwen2-VL started by hand, without the
pipeline's --mem-fraction-static 0.80), llama.cpp on Metal (llama-cpp-python: the 33B weights as one buffer over
maxBufferLength) and on CUDA (LlamaEdge's WASI-NN plugin: the compute buffer), Ollama's 2026 memory check (behind the
Continue extension), transformers (text-generation-webui's 13B GPTQ on 8 GB) and MLX (mlx-vlm's MTP draft over Metal's
buffer limit). Each case is cited with the lines kept verbatim and the fix its thread gives (where the thread confirms
none, the answer is held to what the log shows); `before` records what oomkit answered before:
before: 4 of 8 right (2 wrong in the fixes, 1 in stage and fix order, 1 in host, stage and fixes); after: 6 right,
2 strict xfails (webui as a host and its offload flags; mlx-vlm's
draft-model fix).
The rules, each from the engine's own source: uvicorn's access line for an OpenAI route before a vLLM failure
('"POST /v1/chat/completions HTTP/1.1" 200', uvicorn's h11_impl.py / httptools_impl.py access log, as
entrypoints/openai/api_server.py serves that route) means vLLM had started and was serving (compute, the serving
fixes, not --enforce-eager); an SGLang out-of-memory with --mem-fraction-static unset offers it lower
(server_args.py's help: 'Use a smaller value if you see out-of-memory errors'). The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 18."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout19.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)

_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 48.00 MiB. GPU 7 has a total capacity of 79.19 "
        "GiB of which 43.00 MiB is free.")


def test_access_line_before_a_vllm_failure_means_serving():
    text = ("(APIServer pid=1) INFO:     10.0.0.1:4876 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n"
            f"(Worker_TP7 pid=641) ERROR 03-26 21:14:47 [multiproc_executor.py:949] {_OOM}\n")
    d = diagnose(text)
    assert (d.host, d.stage) == ("vllm", "compute"), d.to_dict()
    texts = [f.summary for f in d.fixes]
    assert texts and texts[0].startswith("--gpu-memory-utilization") and not any("enforce-eager" in t for t in texts)


def test_without_the_access_line_the_failure_stays_unplaced():
    d = diagnose(f"(Worker_TP7 pid=641) ERROR 03-26 21:14:47 [multiproc_executor.py:949] {_OOM}\n")
    assert (d.host, d.stage) == ("vllm", "unknown"), d.to_dict()


def test_access_line_under_sglang_is_not_read_as_vllm_serving():
    text = ("[2025-02-28 10:00:00] INFO:     127.0.0.1:4876 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n"
            "python -m sglang.launch_server --model-path allenai/olmOCR-7B-0225-preview\n" + _OOM + "\n")
    d = diagnose(text)
    assert d.host == "sglang" and not any("serving a scheduled step" in c for c in d.causes), d.to_dict()


def test_sglang_fraction_offered_when_unset_and_lowered_when_set():
    base = "python -m sglang.launch_server --model-path m\n" + _OOM + "\n"
    texts = [f.summary for f in diagnose(base).fixes]
    assert any(t.startswith("--mem-fraction-static lower") for t in texts), texts
    texts = [f.summary for f in diagnose(base.replace("--model-path m", "--model-path m --mem-fraction-static 0.9"))
             .fixes]
    assert any(t.startswith("--mem-fraction-static 0.85 (from 0.9)") for t in texts), texts

