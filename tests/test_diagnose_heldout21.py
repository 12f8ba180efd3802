"""diagnose() on a twenty-first held-out set of public crash logs (tests/fixtures/diagnose/heldout21.jsonl), 8 logs new
to every test fixture, 2023-2026, covering what set 20 lacked: transformers / accelerate (a Colab from_pretrained
reload, an InstructLab accelerated training run beside another process), Ollama's "model requires more system memory",
MLX on Metal (a command buffer failing with kIOGPUCommandBufferCallbackErrorOutOfMemory, an allocation over
maxBufferLength), the sleep modes RL trainers use (vLLM's CuMemAllocator wake_up, SGLang's torch_memory_saver resume)
and an LM Studio 0.2 load failure. Each case is cited with the lines kept verbatim and the fix its thread gives (where
the thread confirms none, the answer is held to what the log shows); `before` records what oomkit answered before:
before: 4 of 8 right (1 wrong in stage and fixes, 3 placed nowhere); after: 8 right (the LM Studio case after a second
change: its 'Error loading model.' JSON read as LM Studio's, stage unknown, with its exit code and figures).
The rules, each from the engine's own source: IPython's traceback (Jupyter, Colab) is read for its frames
("File /p/x.py:N, in f(", "/p/x.py in f(", Colab's "[/p/x.py](link) in f(") and its current lines ("---> N code"), so
a from_pretrained under accelerate's set_module_tensor_to_device is the weights stage; vLLM's csrc/cumem_allocator.cpp
CUDA_CHECK ("CUDA Error: out of memory at .../cumem_allocator.cpp:N", raised by python_create_and_map when
CuMemAllocator.wake_up maps the slept memory back) and torch_memory_saver's CURESULT_CHECK ("[torch_memory_saver.cpp]
CUresult error: 2 (out of memory)", cu_mem_create on resume) are the engine's share not fitting beside the trainer:
--gpu-memory-utilization / --mem-fraction-static lower; LM Studio 0.2's '"cause": "(Exit code: N)' JSON is its load
worker's exit with no message: LM Studio's, stage unknown, its figures read. The checks: tests/diagnose_heldout.py check_case; the garble
pass as in sets 6 to 20."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout21.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)

_TORCH = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 250.00 MiB (GPU 0; 14.75 GiB total capacity; "
          "13.52 GiB already allocated; 48.81 MiB free; 13.63 GiB reserved in total by PyTorch)\n")


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags]) for f in d.fixes]


def test_ipython8_frames_place_a_weights_load():
    text = ("File /usr/local/lib/python3.10/site-packages/transformers/modeling_utils.py:3502, in "
            "PreTrainedModel.from_pretrained(cls, pretrained_model_name_or_path)\n" + _TORCH)
    assert diagnose(text).stage == "weights", diagnose(text).to_dict()


def test_ipython_arrow_line_names_the_call():
    text = ("Cell In[8], line 2\n----> 2 base_model = AutoModelForCausalLM.from_pretrained(\n      3     model_name,\n"
            + _TORCH)
    d = diagnose(text)
    assert d.stage == "weights" and not any("batch" in t for t in _texts(d)), d.to_dict()


def test_ipython_frames_under_generate_stay_compute():
    text = ("----> 5 out = model.generate(**inputs, max_new_tokens=512)\n"
            "[/usr/local/lib/python3.10/dist-packages/transformers/generation/utils.py](https://localhost:8080/#) in "
            "generate(self, inputs)\n" + _TORCH)
    assert diagnose(text).stage == "compute", diagnose(text).to_dict()


def test_cumem_error_other_than_oom_is_no_wake_up_oom():
    d = diagnose("RuntimeError: CUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:64\n")
    assert not any("--gpu-memory-utilization lower" in t for t in _texts(d)), d.to_dict()


def test_memory_saver_old_form_and_other_codes():
    old = "[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=104\n"
    d = diagnose(old)
    assert (d.engine, d.stage) == ("sglang", "kv_cache"), d.to_dict()
    bad = diagnose("[torch_memory_saver.cpp] CUresult error: 1 (invalid argument) file=csrc/core.cpp func=free line=66\n")
    assert bad.stage != "kv_cache", bad.to_dict()


def test_lmstudio_exit_code_json_is_read_without_advice():
    text = ('{\n  "cause": "(Exit code: -1073740791). Unknown error. Try a different model and/or config.",\n'
            '  "data": {\n    "memory": {\n      "ram_capacity": "31.75 GB",\n      "ram_unused": "20.10 GB"\n    },\n'
            '    "gpu": {\n      "vram_recommended_capacity": "2.00 GB",\n      "vram_unused": "1.64 GB"\n    }\n  },\n'
            '  "title": "Error loading model."\n}\n')
    d = diagnose(text)
    assert (d.engine, d.stage) == ("lmstudio", "unknown") and not d.fixes, d.to_dict()
    assert d.numbers["exit_code"] == -1073740791 and d.numbers["free_bytes"] == 1_640_000_000, d.numbers
