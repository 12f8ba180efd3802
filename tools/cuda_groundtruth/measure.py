"""GPU run (tools/cuda_groundtruth/run.sh): llama.cpp's buffer sizes, from a CUDA build of the llama.cpp that
llama-cpp-python vendors, for the ground-truth synthetic GGUFs, fully and partly offloaded, plus whole models sized
by the dry run and the process's memory beside llama.cpp's buffers (nvidia-smi)."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.getcwd())
from tests.groundtruth import llamacpp_run as r  # noqa: E402
from tests.groundtruth import synth  # noqa: E402


class g:  # tests/gt_compare.py's model list and files, without importing oomkit
    MODELS = [("llama-3.1-8b", 4), ("qwen3-8b", 4), ("qwen3-30b-a3b", 4), ("gemma-3-12b", 12), ("gemma-2-9b", 4),
              ("gpt-oss-20b", 4), ("deepseek-v3", 4), ("deepseek-v3-legacy", 4), ("mamba2-2.7b", 4),
              ("qwen3.5-27b", 8)]

    @staticmethod
    def synth_file(key, n_layers):
        model = synth.MODELS[key](n_layers=n_layers)
        return synth.synth_path(model, "mxfp4_moe" if key == "gpt-oss-20b" else "q4_0")

OUT = Path(os.environ.get("OUT", "/tmp/out"))
OUT.mkdir(parents=True, exist_ok=True)
T0 = time.time()
BUDGET = float(os.environ.get("MEASURE_BUDGET", "240"))
results = []


def save():
    with open(OUT / "cuda_measure.json", "w") as f:
        json.dump(results, f)


def base(**kw):
    s = dict(n_ctx=4096, type_k="f16", type_v="f16", flash_attn="auto", n_seq_max=1, kv_unified=False,
             n_batch=2048, n_ubatch=512, swa_full=False, use_mmap=True, n_gpu_layers=99)
    s.update(kw)
    return s


GRID = [
    base(),
    base(n_ctx=32768),
    base(flash_attn="off"),
    base(n_ctx=32768, flash_attn="off"),
    base(type_k="q8_0", type_v="q8_0", flash_attn="on"),
    base(n_ctx=8192, n_ubatch=2048),
    base(n_ctx=32768, n_seq_max=4, kv_unified=True),
    base(offload_kqv=False),
]


def run(key, n_layers, grid, tag):
    if time.time() - T0 > BUDGET:
        print("budget spent, skipping", key, tag, flush=True)
        return
    t = time.time()
    path = g.synth_file(key, n_layers)
    try:
        res = r.measure_many(path, grid, cache=False, timeout=120)
    except Exception as e:  # noqa: BLE001
        res = [{"ok": False, "stage": "harness", "error": repr(e), "log": ""} for _ in grid]
    for s, m in zip(grid, res, strict=True):
        results.append({"key": key, "n_layers": n_layers, "tag": tag, "settings": s, "result": m})
    save()
    print(f"{key} {tag}: {sum(m['ok'] for m in res)}/{len(res)} ok in {time.time() - t:.1f} s", flush=True)


def smi():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True).stdout.strip()
    except OSError as e:
        return repr(e)


if __name__ == "__main__":
    print("nvidia-smi before:", smi(), flush=True)
    for key, n_layers in g.MODELS if not os.environ.get("ONLY_FULL") else []:
        run(key, n_layers, GRID, "full-offload")
    # partial offload: half the layers on the GPU (the output layer stays on the CPU)
    for key, n_layers in g.MODELS if not os.environ.get("ONLY_FULL") else []:
        run(key, n_layers, [base(n_gpu_layers=n_layers // 2), base(n_ctx=32768, n_gpu_layers=n_layers // 2),
                            base(n_gpu_layers=n_layers)], "partial")
    # whole models, sized by llama.cpp's dry run on the GPU (no weights read)
    for key, over in [("llama-3.1-8b", dict(n_ctx=131072)), ("qwen3-8b", dict(n_ctx=40960)),
                      ("gemma-3-12b", dict(n_ctx=131072, n_seq_max=4, kv_unified=True)),
                      ("gpt-oss-20b", dict(n_ctx=131072, n_seq_max=4, kv_unified=True)),
                      ("qwen3-30b-a3b", dict(n_ctx=40960, type_k="q8_0", type_v="q8_0", flash_attn="on")),
                      ("deepseek-v3", dict(n_ctx=163840)), ("qwen3.5-27b", dict(n_ctx=262144, n_seq_max=4,
                                                                                 kv_unified=True)),
                      ("mamba2-2.7b", dict(n_ctx=1048576, n_seq_max=8))]:
        run(key, None, [base(no_alloc=True, use_mmap=False, **over), base(no_alloc=True, use_mmap=False,
                                                                           n_ctx=8192, n_ubatch=2048)], "dry-full")
    # real allocation of whole small models: the process's use beyond llama.cpp's own buffers
    for key in ("llama-3.1-8b", "qwen3-8b"):
        if time.time() - T0 > BUDGET:
            break
        path = g.synth_file(key, None)
        script = r.binding_script(
            "import subprocess\n"
            "def smi():\n"
            "    try:\n"
            "        return subprocess.run(['nvidia-smi','--query-gpu=memory.used','--format=csv,noheader,nounits'],"
            "capture_output=True,text=True).stdout.strip()\n"
            "    except OSError as e:\n"
            "        return repr(e)\n"
            "os.write(2, ('@@SMI model ' + smi() + '\\n').encode())\n"
            "for i, s in enumerate(contexts):\n"
            "    cp = llama_cpp.llama_context_default_params()\n"
            "    cp.n_ctx = s['n_ctx']; cp.n_batch = 2048; cp.n_ubatch = 512; cp.n_seq_max = 1\n"
            "    os.write(2, f'@@CTX {i}\\n'.encode())\n"
            "    ctx = llama_cpp.llama_init_from_model(model, cp)\n"
            "    os.write(2, ('@@SMI ctx ' + smi() + '\\n').encode())\n"
            "    os.write(2, f'@@END {i}\\n'.encode())\n"
            "    llama_cpp.llama_free(ctx)\n",
            {"n_gpu_layers": "99"})
        t = time.time()
        log = r.run_binding_script(script, path, [{"n_ctx": 4096}, {"n_ctx": 32768}], timeout=180)
        results.append({"key": key, "n_layers": None, "tag": "smi", "before": smi(), "log": log})
        save()
        print(key, "smi run", f"{time.time() - t:.1f} s", [ln for ln in log.splitlines() if ln.startswith("@@SMI")],
              flush=True)
    print("done in", round(time.time() - T0, 1), "s", flush=True)
