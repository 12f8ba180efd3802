"""diagnose() on a twentieth held-out set of public crash logs (tests/fixtures/diagnose/heldout20.jsonl), 8 logs new
to every test fixture, 2023-2026: llama.cpp (an MTP draft context's CUDA_Host compute buffer over host RAM under
OpenClaw; an MTP fork's draft-context compute buffer on CUDA; llama-cpp-python's Metal command buffer failing with
status 5), Ollama's ROCm runner (a 573 MiB compute buffer after a 7 GiB KV cache), vLLM (Llama 3.1 405B FP8: 131,072
tokens against a 79,392-token KV cache; a V0 KV allocation on a GPU shared with other processes), TGI (a 405B shard
dying in its CUDA-graph warm-up) and SGLang (Qwen2.5-VL-72B on four 4090s: GPU 0 filled by SGLang's own processes).
Each case is cited with the lines kept verbatim and the fix its thread gives (where the thread confirms none, the
answer is held to what the log shows); `before` records what oomkit answered before:
before: 5 of 8 right (2 wrong in the fixes, 1 wrong in stage and fixes); after: 7 right, 1 strict xfail (SGLang's own
worker PIDs read as other programs).
The rules, each from the engine's own source: TGI's warm-up sizes its KV blocks from free memory less
(1 - --cuda-memory-fraction) of the device and then captures a decode graph per --cuda-graphs size
(server/text_generation_server/models/flash_causal_lm.py FlashCausalLM.warmup, catching only torch.cuda.OutOfMemoryError),
so a capture frame under TGI is the CUDA-graph phase with TGI's flags (--cuda-graphs, launcher/src/main.rs: 'Use "0" to
disable. Default = "1,2,4,8,16,32"'; --cuda-memory-fraction), not vLLM's or SGLang's; a host buffer that failed
(CUDA_Host or CPU, placed host_ram) gets no -ts advice, since --tensor-split only moves layers between GPUs. The checks:
tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 19."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout20.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)

_CAPTURE = ('  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/graphs.py", line 82, in capture_end\n'
            "    super().capture_end()\nRuntimeError: CUDA error: out of memory\n")
_TGI = ("2024-09-25T15:04:34.598137Z ERROR warmup{max_input_length=500 max_prefill_tokens=550 max_total_tokens=13107 "
        "max_batch_size=None}:warmup: text_generation_client: router/client/src/lib.rs:46: Server error: CANCELLED\n")


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags]) for f in d.fixes]


def test_tgi_graph_capture_takes_tgi_flags():
    d = diagnose(_CAPTURE + _TGI)
    assert (d.host, d.stage, d.phase) == ("tgi", "compute", "CUDA graph capture"), d.to_dict()
    texts = _texts(d)
    assert texts[0].startswith("--cuda-graphs") and any("--cuda-memory-fraction 0.9" in t for t in texts), texts
    assert not any("--enforce-eager" in t or "--disable-cuda-graph" in t for t in texts), texts


def test_capture_frame_without_tgi_is_no_tgi_phase():
    d = diagnose(_CAPTURE)
    assert d.host != "tgi" and not any("--cuda-graphs" in t for t in _texts(d)), d.to_dict()


def test_tgi_failure_outside_the_capture_keeps_no_phase():
    text = ('  File "/opt/conda/lib/python3.10/site-packages/text_generation_server/models/flash_causal_lm.py", '
            "line 717, in forward\n    return self.model.forward(\nRuntimeError: CUDA error: out of memory\n" + _TGI)
    d = diagnose(text)
    assert d.host == "tgi" and d.phase is None, d.to_dict()


def test_host_buffer_gets_no_tensor_split_advice():
    text = ("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 2315403296\n"
            "ggml_gallocr_reserve_n_impl: failed to allocate CUDA_Host buffer of size 2315403296\n")
    d = diagnose(text)
    assert d.stage == "host_ram" and not any("-ts" in t for t in _texts(d)), _texts(d)
    device = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 497.00 MiB on device 0: cudaMalloc failed: out of "
              "memory\nggml_gallocr_reserve_n_impl: failed to allocate CUDA0 buffer of size 521142272\n"
              "graph_reserve: failed to allocate compute buffers\n")
    assert any("rebalance -ts" in t for t in _texts(diagnose(device)))
