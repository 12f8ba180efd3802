"""diagnose() on LM Studio's own crash logs words the fix as LM Studio offers it: the app's load settings by their
titles (lmstudio-ai/localization en/config.json: Context Length, GPU Offload, Flash Attention, K / V Cache
Quantization Type, Offload KV Cache to GPU Memory, Max Concurrent Predictions, Evaluation Batch Size) and `lms load`
with the flags it has (lmstudio-ai/lms src/subcommands/load.ts: --gpu off|max|0-1, -c/--context-length, --parallel),
never llama-server's flags (-c, -np, -ngl, -ub, -ctk/-ctv, -fa, -nkvo, --fit, --n-cpu-moe, --cache-ram), which LM
Studio's users cannot type. The logs are lmstudio-bug-tracker issues kept in tests/fixtures/diagnose/*.jsonl (cited
there by URL)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from oomkit.diagnose import diagnose
from oomkit.diagnose.lmstudio import gpu_ratio, words
from oomkit.engines.llamacpp.programs import parse_lms

FIXTURES = Path(__file__).parent / "fixtures" / "diagnose"
# llama-server's flags as a fix would word them (a word of their own, not inside --context-length or "on-GPU")
LLAMA_FLAGS = re.compile(r"(?<![\w-])(?:-c|-np|-ngl|-ub|-b|-ctk|-ctv|-fa|-nkvo|-ts|-ot|--fit|--n-cpu-moe|--cpu-moe|"
                         r"--cache-ram|--no-mmap|--no-mmproj-offload)(?![\w-])")


def _case(cid: str) -> dict:
    for p in sorted(FIXTURES.glob("*.jsonl")):
        for line in p.read_text(encoding="utf-8").splitlines():
            if line.strip() and json.loads(line)["id"] == cid:
                return json.loads(line)
    raise KeyError(cid)


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, f.command or ""]) for f in d.fixes]


# (fixture id, source, stage, what the fixes must say)
CASES = [
    ("lmstudio-1249-dialog-kv-cache-buffer", "lmstudio-bug-tracker/issues/1249", "kv_cache",
     ["Context Length smaller", "K Cache Quantization Type and V Cache Quantization Type q8_0 with Flash Attention on",
      "Offload KV Cache to GPU Memory off"]),
    ("lmstudio-688-compute-pp-dialog", "lmstudio-bug-tracker/issues/688", "compute",
     ["Evaluation Batch Size 256 (from 512)", "Flash Attention on"]),
    ("lmstudio-698-vulkan-weights", "lmstudio-bug-tracker/issues/698", "weights",
     ["GPU Offload lower", "lms load <model> --gpu 0.5"]),
    ("lmstudio-14-json-1m-context", "lmstudio-bug-tracker/issues/14", "host_ram",
     ["Context Length 524288 (from 1,048,576)", "lms load <model> --context-length 524288"]),
    ("lmstudio-2321-qwen38-27b-rs-cache-cpu", "lmstudio-bug-tracker/issues/2321", "kv_cache",
     ["Max Concurrent Predictions 1", "lms load <model> --parallel 1"]),
]


@pytest.mark.parametrize("cid,source,stage,want", CASES, ids=[c[0] for c in CASES])
def test_lmstudio_log_gets_lmstudio_words(cid, source, stage, want):
    case = _case(cid)
    assert source in case["source"]
    d = diagnose(case["text"])
    assert "lmstudio" in (d.engine, d.host) and d.stage == stage, d.to_dict()
    texts = _texts(d)
    assert texts, d.to_dict()
    for w in want:
        assert any(w in t for t in texts), (w, texts)
    for t in texts:
        assert not LLAMA_FLAGS.search(t), t


@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_lms_commands_are_lms_loads_own(cid):
    """Every `lms load` a fix gives parses as lms load's own options (oomkit's reader of its commander options,
    engines/llamacpp/programs.py parse_lms), and its flags are the fix's flags."""
    d = diagnose(_case(cid)["text"])
    cmds = [f for f in d.fixes if f.command]
    for f in cmds:
        argv = shlex.split(f.command.replace("<model>", "qwen/qwen3-8b"))
        assert argv[:2] == ["lms", "load"]
        assert tuple(argv[3:]) == f.flags
        if "--gpu" in argv:  # load.ts gpuOptionParser: off, max or a number in [0, 1] (oomkit models off and max)
            i = argv.index("--gpu") + 1
            assert argv[i] in ("off", "max") or 0 <= float(argv[i]) <= 1, argv
            argv[i] = "max"
        parse_lms(argv[1:])


def test_llama_words_become_lmstudio_settings():
    """The llama.cpp rules' own wording (fixes.py _llama_kv, _llama_compute, _llama_weights, the index) in LM
    Studio's names."""
    assert words("-c 8192 (from 32768): half the context") == "Context Length 8192 (from 32768): half the context"
    assert words("-ctk q8_0 -ctv q8_0 -fa on: saves 1.00 GiB") == (
        "K Cache Quantization Type q8_0 and V Cache Quantization Type q8_0 with Flash Attention on: saves 1.00 GiB")
    assert words("-ngl fewer layers on the GPU (or --fit on)") == (
        "GPU Offload fewer layers on the GPU (or Automatic Optimize Based on Hardware)")
    assert words("-np smaller (parallel slots), or -nkvo to keep the cache in host RAM") == (
        "Max Concurrent Predictions smaller (parallel slots), or Offload KV Cache to GPU Memory off to keep the cache "
        "in host RAM")
    assert words("--n-cpu-moe N / --cpu-moe for MoE models") == (
        "Number of layers for which to force MoE weights onto CPU for MoE models")


def test_gpu_ratio_is_lms_loads_share():
    """lms load --gpu takes off, max or a fraction of the layers (load.ts gpuOptionParser): floored, never more
    layers than asked."""
    assert gpu_ratio(0, 33) == "off"
    assert gpu_ratio(33, 33) == "max"
    assert gpu_ratio(24, 33) == "0.72"
    assert gpu_ratio(24, None) is None


def test_llama_server_log_keeps_llama_flags():
    """A llama.cpp log outside LM Studio keeps llama-server's flags (lmstudio-bug-tracker#2133's Vulkan lines
    carry no LM Studio name)."""
    d = diagnose(_case("lmstudio-2133-vulkan-alloc-tensor-range-1g-radv")["text"])
    assert d.host is None and any("-ngl" in t for t in _texts(d))


def test_lms_load_command_makes_the_fix_that_command():
    """Given the `lms load` line that produced the text, a llama.cpp log is LM Studio's (its Vulkan lines name no
    LM Studio, lmstudio-bug-tracker#2133: Qwen3.6-27B at context 100975, as its notes give) and each fix is that
    line with only lms load's own flag changed (reader._with_command through the engine's rewrite_command)."""
    text = _case("lmstudio-2133-vulkan-alloc-tensor-range-1g-radv")["text"]
    d = diagnose(text, command=["lms", "load", "qwen/qwen3.6-27b", "-c", "100975", "--gpu", "max"])
    assert d.host == "lmstudio"
    texts = _texts(d)
    for t in texts:
        assert not LLAMA_FLAGS.search(t.replace("lms load qwen/qwen3.6-27b -c", "")), t
    assert any(f.command == "lms load qwen/qwen3.6-27b -c 50432 --gpu max" for f in d.fixes), texts
    d = diagnose(_case("lmstudio-2321-qwen38-27b-rs-cache-cpu")["text"], command=["lms", "load", "qwen/qwen3.8-27b"])
    assert d.fixes[0].command == "lms load qwen/qwen3.8-27b --parallel 1"
    assert "`lms load qwen/qwen3.8-27b --parallel 1`" in d.fixes[0].summary


def test_llama_server_command_keeps_llama_flags():
    """The same Vulkan lines under a llama-server command keep llama-server's flags."""
    text = _case("lmstudio-2133-vulkan-alloc-tensor-range-1g-radv")["text"]
    d = diagnose(text, command=["llama-server", "-m", "model.gguf", "-c", "100975", "-ngl", "99"])
    assert d.host is None and any(LLAMA_FLAGS.search(t) for t in _texts(d))
