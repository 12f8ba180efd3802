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


def first():
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


# ----------------------------------------------------------------------------------------------------------
# the second run (MODE=heldout): other architectures and settings, plus the scheduler's assignments
# ----------------------------------------------------------------------------------------------------------

CTX_FIELDS = ("n_ctx", "n_batch", "n_ubatch", "n_seq_max", "type_k", "type_v", "flash_attn", "offload_kqv",
              "kv_unified")


def sched_dump(key, n_layers, s, build=None):
    """llama.cpp's log with GGML_SCHED_DEBUG=2 (every node's backend and size) for one setting."""
    if time.time() - T0 > BUDGET:
        return
    path = synth.synth_path(build(n_layers=n_layers), "q4_0") if build else g.synth_file(key, n_layers)
    st = r.normalize_settings(**{k: v for k, v in s.items() if k in r.DEFAULTS})
    body = ("for i, s in enumerate(contexts):\n"
            "    cp = llama_cpp.llama_context_default_params()\n"
            "    for k in ('n_ctx','n_batch','n_ubatch','n_seq_max','type_k','type_v','offload_kqv','kv_unified'):\n"
            "        setattr(cp, k, s[k])\n"
            "    cp.flash_attn_type = s['flash_attn']\n"
            "    os.write(2, f'@@CTX {i}\\n'.encode())\n"
            "    ctx = llama_cpp.llama_init_from_model(model, cp)\n"
            "    os.write(2, f'@@END {i}\\n'.encode())\n"
            "    llama_cpp.llama_free(ctx)\n")
    fields = {"n_gpu_layers": str(st["n_gpu_layers"])}
    if st["no_alloc"]:
        fields.update(no_alloc="True", load_mode="0")
    os.environ["GGML_SCHED_DEBUG"] = "2"
    try:
        log = r.run_binding_script(r.binding_script(body, fields, debug_log=True), path,
                                   [{k: st[k] for k in CTX_FIELDS}], timeout=120)
    finally:
        del os.environ["GGML_SCHED_DEBUG"]
    results.append({"key": key, "n_layers": n_layers, "tag": "sched-debug", "settings": s, "log": log})
    save()
    print(key, "sched dump", len(log), "chars", flush=True)


def heldout():
    from tests import ggufs

    archs = {"llama4": (ggufs.llama4_scout, 4), "gemma3n": (ggufs.gemma3n_e2b, 25), "glm4moe": (ggufs.glm45_air, 3),
             "lfm2": (ggufs.lfm2_1_2b, 16), "ernie4_5-moe": (ggufs.ernie45_21b_a3b, 3),
             "seed_oss": (ggufs.seed_oss_36b, 2), "minimax-m2": (ggufs.minimax_m2, 2),
             "hunyuan-moe": (ggufs.hunyuan_a13b, 2), "mistral4": (ggufs.mistral4_mla, 4),
             "phi3": (ggufs.phi3_mini_4k, 4), "kimi-linear": (ggufs.kimi_linear, None)}
    # 1. the scheduler's node assignments behind the first run's compute misses
    for key, n, s in [("llama-3.1-8b", 4, base(n_gpu_layers=2)), ("llama-3.1-8b", 4, base(flash_attn="off")),
                      ("qwen3-30b-a3b", 4, base()), ("deepseek-v3", 4, base()),
                      ("deepseek-v3-legacy", 4, base()), ("deepseek-v3-legacy", 4, base(type_k="q8_0", type_v="q8_0",
                                                                                         flash_attn="on")),
                      ("mamba2-2.7b", 4, base(n_gpu_layers=2)), ("gemma-3-12b", 12, base(flash_attn="off")),
                      ("qwen3.5-27b", None, base(no_alloc=True, use_mmap=False, n_ctx=262144, n_seq_max=4,
                                                 kv_unified=True))]:
        sched_dump(key, n, s)
    # 2. held out: architectures the first run did not load, and new settings on its models
    grid = [base(n_ctx=8192), base(n_ctx=8192, flash_attn="off"), base(n_ctx=16384, n_ubatch=1024, n_batch=1024)]
    for key, (build, n) in archs.items():
        if time.time() - T0 > BUDGET:
            break
        t = time.time()
        try:
            path = synth.synth_path(build(n_layers=n) if n is not None else build(), "q4_0")
            nl = n or synth_layers(path)
            res = r.measure_many(path, grid + [base(n_ctx=8192, n_gpu_layers=max(1, nl // 2))], cache=False,
                                 timeout=120)
        except Exception as e:  # noqa: BLE001
            print(key, "failed", repr(e), flush=True)
            continue
        for s, m in zip(grid + [base(n_ctx=8192, n_gpu_layers=max(1, nl // 2))], res, strict=True):
            results.append({"key": key, "n_layers": n, "tag": "heldout-arch", "settings": s, "result": m})
        save()
        print(f"{key} heldout: {sum(m['ok'] for m in res)}/{len(res)} ok in {time.time() - t:.1f} s", flush=True)
    for key, n in g.MODELS:
        run(key, n, [base(n_ctx=16384, n_ubatch=1024, n_batch=1024, n_seq_max=2),
                     base(n_ctx=65536, type_k="q4_0", type_v="q4_0", flash_attn="on"),
                     base(n_ctx=8192, n_gpu_layers=1), base(n_ctx=8192, n_gpu_layers=n // 2 + 1, flash_attn="off")],
            "heldout-settings")


def synth_layers(path):
    import gguf

    rd = gguf.GGUFReader(str(path))
    for f in rd.fields.values():
        if f.name.endswith(".block_count"):
            return int(f.parts[-1][0])
    return 4


if __name__ == "__main__":
    print("nvidia-smi before:", smi(), flush=True)
    heldout() if os.environ.get("MODE") == "heldout" else first()
    print("done in", round(time.time() - T0, 1), "s", flush=True)
