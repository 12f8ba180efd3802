"""diagnose() on a twenty-fourth held-out set of public crash logs (tests/fixtures/diagnose/heldout24.jsonl), 8 logs
new to every test fixture, 2023-2026, in kinds the earlier sets held little of: llama.cpp (KoboldCpp) running out on
the smaller of two GPUs, a vLLM V0 worker loading a 70B model on 14.62 GiB GPUs, a Triton kernel over an MI300's
shared memory during SGLang's CUDA-graph capture, a transformers evaluation's eager attention, a QLoRA fine-tuning
run, KoboldAI's API error under SillyTavern, vLLM started with --gpu_memory_utilization 1 for a vision model, and
transformers' generate() asking for a size no device has. Each case is cited with the lines kept verbatim and the fix
its thread gives (where the thread confirms none, the answer is held to what the log shows and the engine's own
rule); `before` records what oomkit answered before:
before: 3 of 8 right (vllm#14092, LlamaFactory#3398, SillyTavern#233); after: 8 right.
The rules, each from the engine's own source: a llama.cpp buffer failing on one GPU of several gets -ts first, a
smaller share for that device (common/arg.cpp --tensor-split; llama-model.cpp load_tensors splits the layers by it,
else by each device's free memory); Triton's OutOfResources ("out of resource: shared memory, Required: N, Hardware
limit: M", triton/runtime/errors.py, raised by compiler.py when a kernel's shared memory is over the device's
per-block limit) is no out-of-memory; vLLM at --gpu-memory-utilization 0.98 or more gets vLLM's default first (the KV
cache takes total x utilization less the profiled peak, leaving nothing for what allocates after it); PyTorch asked
for over a thousand times the device is a size computed wrongly (no batch, quantization or GPU count helps); a
PyTorch failure in a training run (transformers' Trainer frames, a backward pass, PEFT / TRL, a fine-tuning script
named) gets gradient checkpointing and a smaller per-device batch with gradient accumulation.
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 23."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout24.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def test_one_gpu_gets_no_split_advice():
    """-ts is advice for several GPUs: the same two error lines without the device list (one GPU in sight) keep the
    single-device advice (-ngl first)."""
    text = "\n".join(ln for ln in _case("koboldcpp-1609")["text"].split("\n") if not ln.startswith("Device "))
    d = diagnose(text)
    assert not any("-ts" in t for t in _texts(d)), _texts(d)
    assert _texts(d) and _texts(d)[0].startswith("-ngl"), _texts(d)


def test_koboldcpp_namespace_tensor_split_is_read():
    """KoboldCpp's Namespace(... tensor_split=[5.0, 5.0] ...) is the split in force: the -ts advice says it."""
    text = ("Namespace(model=None, model_param='m.gguf', gpulayers=1000, tensor_split=[5.0, 5.0], usecublas=['normal'])\n"
            + _case("koboldcpp-1609")["text"].split("\n", 2)[2])
    d = diagnose(text)
    assert d.settings.get("tensor_split") == "5.0, 5.0", d.settings
    assert "(now 5.0, 5.0)" in _texts(d)[0], _texts(d)


def test_triton_out_of_resources_other_than_shared_memory_is_no_oom_either():
    """Triton's OutOfResources names the resource it ran out of (shared memory, registers): none is device memory."""
    d = diagnose("triton.runtime.errors.OutOfResources: out of resource: registers, Required: 300, Hardware limit: "
                 "255. Reducing block sizes or `num_stages` may help.\n")
    assert d.stage == "not_oom", d.to_dict()


def test_utilization_under_the_threshold_keeps_the_small_step():
    """At 0.95 (set, under 0.98) the step of 0.05 stays: only a fraction at or near 1.0 is vLLM's default margin gone."""
    text = _case("minicpm-v-640")["text"].replace("--gpu_memory_utilization 1", "--gpu_memory_utilization 0.95")
    d = diagnose(text)
    assert any("--gpu-memory-utilization 0.90 (from 0.95)" in t for t in _texts(d)), _texts(d)
    assert not any("vLLM's default" in t for t in _texts(d)), _texts(d)


def test_a_request_larger_than_the_device_but_plausible_keeps_the_tensor_advice():
    """Twice the device is still a tensor a model can make (an eager attention matrix): the shape advice stays; only a
    thousand times the device is read as a wrong size."""
    text = _case("qwen2-vl-334")["text"].replace("538976288.13 GiB", "95.00 GiB")
    d = diagnose(text)
    assert d.stage == "buffer_limit" and any("SDPA" in t for t in _texts(d)), _texts(d)
    assert not any("computed wrongly" in c for c in d.causes), d.causes


def test_training_advice_needs_a_training_run():
    """Without the sentence naming the fine-tuning script the message alone is no training run: no gradient
    checkpointing advice."""
    text = _case("open-instruct-65")["text"].split("\n", 1)[1]
    d = diagnose(text)
    assert not any("gradient checkpointing" in t for t in _texts(d)), _texts(d)


def test_trainer_frames_are_a_training_run():
    """transformers' Trainer frames before a PyTorch out-of-memory (IPython's form of the traceback too) place it in
    a training step."""
    msg = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of "
           "23.65 GiB of which 100.00 MiB is free. Of the allocated memory 22.00 GiB is allocated by PyTorch, and 300.00 "
           "MiB is reserved by PyTorch but unallocated.\n")
    for frame in ('  File "/x/transformers/trainer.py", line 3318, in training_step\n',
                  "File ~/env/lib/python3.10/site-packages/transformers/trainer.py:1633, in Trainer.train(self)\n"):
        d = diagnose(frame + msg)
        assert any("gradient checkpointing" in t for t in _texts(d)), (frame, _texts(d))


def test_training_words_in_a_serving_log_are_not_training():
    """A vLLM log serving a fine-tuned model's script name is the engine's failure, not a training step."""
    d = diagnose("vllm serve my-org/model --gpu-memory-utilization 0.9  # from finetune_lora.py\n"
                 + _case("minicpm-v-640")["text"].split("\n", 1)[1])
    assert not any("gradient checkpointing" in t for t in _texts(d)), _texts(d)
