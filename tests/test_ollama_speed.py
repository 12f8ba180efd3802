"""The memoised paths behind a plan or fit of a large MoE through Ollama (its llama-server runner plays llama.cpp's
--fit: dozens of dry runs per estimate) give the answers of the plain ones, value for value.

- llamacpp/weights.py _model_buffers places tensors by block and by each override's matches, where it asked
  tensor_device tensor by tensor over every pattern: held here against that loop (_per_tensor_buffers);
- fit.dry_run, compute.compute_phases, kv.kv_caches, weights.model_buffers and Ollama's ollama_gguf, gguf_view and
  llama-server fit are memoised by the objects they read: estimates with every memo turned off (_NoMemo) and the
  slow loop above are the same MemoryEstimate as with them, cold and warm.

bench/bench_plan.py times the Ollama 671B cases (docs/benchmarks.md)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.llamacpp import compute as lc_compute
from oomkit.engines.llamacpp import fit as lc_fit
from oomkit.engines.llamacpp import kv as lc_kv
from oomkit.engines.llamacpp import weights as lc_weights
from oomkit.engines.llamacpp.settings import LlamaCppSettings
from oomkit.engines.ollama import layout as ol_layout
from oomkit.engines.ollama import weights as ol_weights
from oomkit.memo import ByObject
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from oomkit.units import round_up
from tests.test_ollama import _no_ollama_env  # noqa: F401 (autouse: no OLLAMA_* / LLAMA_ARG_FIT* here either)

GiB = 1 << 30



def _per_tensor_buffers(spec, devices, s, placement):
    """The loop _model_buffers ran before (every tensor through tensor_device over every override)."""
    overrides = lc_weights.override_patterns(s, spec)
    ids = tuple(d.id for d in devices)
    dev_tensors: dict[int, list] = {}
    for t in lc_weights.loaded_tensors(spec, s):
        dev_tensors.setdefault(lc_weights.tensor_device(t, placement, overrides, len(devices), ids), []).append(t)
    if spec.tied_embeddings and placement.output_device >= 0:
        emb = next((t for t in spec.weights.tensors if t.name == "token_embd.weight"), None)
        if emb is not None:
            dev_tensors.setdefault(placement.output_device, []).append(replace(emb, offset=None))
    by_device = {d: sum(lc_weights.gpu_alloc_size(t) for t in ts) for d, ts in dev_tensors.items() if d >= 0}
    cpu = dev_tensors.get(-1, [])
    if s.mmap:
        host_buft, host = "CPU_Mapped", lc_weights.mapped_range(cpu, file_order=spec.weights.exact)
    else:
        host_buft = "CUDA_Host" if devices else "CPU"
        host = sum(round_up(t.nbytes, lc_weights.CPU_ALIGNMENT) for t in cpu)
    return lc_weights.ModelBuffers(by_device, tuple(cpu), host_buft, host, sum(t.nbytes for t in cpu))


def _gpus(*gib: float) -> tuple[Device, ...]:
    return tuple(Device(f"CUDA{i}", "GPU", memory_bytes=int(g * GiB)) for i, g in enumerate(gib))


BUFFER_CASES = [
    ("deepseek-r1:671b", _gpus(24), LlamaCppSettings(n_gpu_layers=12)),
    ("deepseek-r1:671b", _gpus(80, 80), LlamaCppSettings(n_cpu_moe=40)),
    ("deepseek-r1:671b", _gpus(80, 80), LlamaCppSettings(
        override_tensor=((r"blk\.(1|2)\.ffn_.*_exps", "CUDA1"), (r"exps", "CPU"), (r"blk\.3\.", "CUDA0")))),
    ("deepseek-r1:671b", _gpus(24), LlamaCppSettings(n_gpu_layers=20, mmap=False,
                                                    override_tensor=((r"output\.weight", "CPU"),))),
    ("qwen3:30b-a3b", _gpus(12), LlamaCppSettings(cpu_moe=True)),
    ("qwen3:30b-a3b", _gpus(12, 12), LlamaCppSettings(n_gpu_layers=30, override_tensor=((r"token_embd", "CUDA1"),))),
    ("llama3.2:1b", _gpus(8), LlamaCppSettings()),  # tied embeddings: token_embd again on the output device
    ("llama3.2:1b", (), LlamaCppSettings(n_gpu_layers=0)),
]


@pytest.mark.parametrize("model,devices,s", BUFFER_CASES)
def test_model_buffers_equal_the_per_tensor_loop(model, devices, s):
    spec = resolve(model)
    placement = lc_weights.place_layers(spec, devices, s)
    fast = lc_weights._model_buffers(spec, devices, s, placement)
    assert fast == _per_tensor_buffers(spec, devices, s, placement)
    assert lc_weights._model_buffers(spec, devices, s, placement) == fast  # warm tables


class _NoMemo(dict):
    """A dict memo that keeps nothing: every call recomputes."""

    def __setitem__(self, key, value):
        pass


_MEMOS = [(lc_fit, "_DRY_RUNS"), (lc_compute, "_PHASES"), (lc_kv, "_CACHES"), (lc_weights, "_BUFFERS"),
          (lc_weights, "_MATCHES"), (lc_weights, "_TENSOR_TABLES"), (ol_weights, "_GGUF_MEMO"), (ol_weights, "_VIEWS"),
          (ol_layout, "_FITS"), (lc_compute, "_BY_DEVICE")]

ESTIMATE_CASES = [
    ("deepseek-r1:671b", _gpus(24), ol.OllamaSettings()),  # llama-server --fit: experts then layers to the CPU
    ("deepseek-r1:671b", _gpus(80, 80), ol.OllamaSettings(num_ctx=8192)),
    ("qwen3:30b-a3b", _gpus(12), ol.OllamaSettings(num_ctx=16384)),
    ("gpt-oss:120b", _gpus(24), ol.OllamaSettings(engine_version="0.13.5")),  # the Ollama engine's own layout
]


@pytest.mark.parametrize("model,devices,s", ESTIMATE_CASES)
def test_estimates_equal_without_memos(model, devices, s, monkeypatch):
    spec = resolve(model)
    cold = ol.ENGINE.estimate(spec, devices, s)
    warm = ol.ENGINE.estimate(spec, devices, s)
    for module, name in _MEMOS:
        monkeypatch.setattr(module, name, ByObject(0) if isinstance(getattr(module, name), ByObject) else _NoMemo())
    monkeypatch.setattr(lc_weights, "_model_buffers", _per_tensor_buffers)
    slow = ol.ENGINE.estimate(spec, devices, s)
    assert cold == warm == slow
    assert cold.engine_view == slow.engine_view
