"""A third held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout3/, each with its
source): common consumer runs on CUDA, one and two GPUs (RTX 3090 / 3090 Ti / 4090 / 5090), MoE experts or whole FFN
blocks sent to the CPU with -ot, split GGUF files, a build's default -ngl, a CPU-only build. Read through oomkit with
the log's own flags, build and free memory, nothing tuned, by the held-out harness
(tests/test_llamacpp_heldout_logs.py): model, KV and output buffers exact (to the 0.01 MiB printed), compute within
10%; a figure oomkit misses stays a strict xfail with its measured error (the fixture's known_miss).

The logs are kept as the public threads print them; where a thread shows llama-sweep-bench (a mainline build with
the sweep-bench example added, ubergarm/llama.cpp ug/port-sweep-bench) it is read as llama-cli: both take the common
params and build one context of -c cells for one sequence.

As it stood, before any change (34 figures of 8 logs): every KV and output buffer exact (an MLA cache split over four
GPUs, q8_0 caches, a layer split by free memory over a 4090 and a 5090); the model buffers exact but for the
publishers' own mixes (GLM-Z1 IQ4_XS with an imatrix +0.9%, DeepSeek-V3 UD-Q2_K_XL -1 to -6% and printed as
CUDA_Host where the log says CPU) and the last CPU block of the Qwen3-235B split files (+55.80 MiB); compute within
10% except where the first GPU multiplies the weights -ot leaves on the CPU (Qwen3-235B 312.75 / 192.00 MiB against
774.00, -60% / -75%). Mirrored since: compute.host_weight_copy (one host weight copied in at a time, 822.00, +6.2%)
and backends.split_cpu_overrides (the CPU buffer name before PR #14990), and weights.split_layout (a computed GGUF
over 50 GB in gguf-split parts of llama-quantize's order, one CPU_Mapped range per part: the Qwen3-235B split files
exact, 183525.52 MiB), and GLM-Z1 typed as bartowski's file (gguf_recipes.IMATRIX_PUBLISHERS: an imatrix IQ4_XS;
glm4's post norms and fused ffn_up, no q/k/v bias in the 32B files: 16303.48 MiB, exact), and the BLAS backend of
discussion #357's b5269 build (compute.blas_compute_bytes, the fixtures' options: the CPU compute buffers of 8.25 and
304.75 MiB, exact). Then the offloaded expert products replayed on ggml-cuda as on SYCL and Vulkan
(compute.host_experts_split_bytes: 750.02 MiB for both Qwen3-235B logs, 742.00 / 774.00 printed; DeepSeek-V3 2872.03
against 3285.00, the stand-in's types) and a BLAS build's flash attention of the CPU layers kept on the CPU
(compute.blas_host_attention: CUDA_Host 65.00 against 65.01, where it had 40.00). What is left is each fixture's
known_miss."""

import json
from pathlib import Path

import pytest

from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout3").glob("*.json"))


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 7)


def test_cpu_overrides_print_as_cpu_under_no_mmap_until_pr_14990():
    """ikawrakow/ik_llama.cpp PR #394's mainline log (b5331, --no-mmap, -ot exps=CPU): the experts sit in a buffer
    named CPU, no CUDA_Host model buffer (the override names the CPU device's own buffer type); from PR #14990
    (2025-07-31) an override to the CPU picks from the CPU list, the first GPU's host buffer type first."""
    from tests.test_llamacpp_heldout_logs import held_out_estimate

    fx = json.loads((FIXTURES[0].parent / "deepseek-v3-0324-ud-q2kxl-5090-2x4090-a6000-ot-exps-16384-ub1024-b5331.json")
                    .read_text())
    names = set(held_out_estimate(fx).engine_view["model_buffer_bytes"])
    assert names == set(fx["printed"]["buffers"]["model_mib"])
    later = held_out_estimate({**fx, "engine_version": "b6200"}).engine_view["model_buffer_bytes"]  # bare -fa still
    assert "CUDA_Host" in later and later.get("CPU", 0) < 1 << 30  # at most the token embeddings stay CPU


def test_split_files_map_one_cpu_range_each():
    """The Qwen3-235B Q6_K logs print one CPU_Mapped line per split file (src/llama-model.cpp load_tensors: a buffer
    per file idx over get_mapping_range's [first, last) of the file's CPU tensors). oomkit's computed file, cut as
    gguf-split --split-max-size 50G cuts llama-quantize's order (weights.split_layout), gives each line: all on the
    CPU (no -ngl) and with the experts of blocks 5-93 / 14-93 on the CPU, the rest on the GPUs."""
    import re

    from oomkit.engines.llamacpp.weights import published_split, split_layout, split_mapped_ranges
    from oomkit.model.resolve import resolve

    weights = published_split(resolve("qwen3-235b-a22b", "Q6_K")).weights
    layout = split_layout(weights)
    assert layout is not None and len({f for f, _ in layout.values()}) == 4
    for path in FIXTURES:
        if not path.name.startswith("qwen3-235b"):
            continue
        fx = json.loads(path.read_text())
        printed = [float(x) for x in re.findall(r"CPU_Mapped model buffer size = +([\d.]+) MiB", fx["quoted"])]
        cpu_blocks = [int(b) for o in fx["argv"] if o.endswith("=CPU")
                      for b in range(94) if re.search(o.rpartition("=")[0], f"blk.{b}.ffn_up_exps.weight")]
        on_cpu = [t for t in weights.tensors if "-ngl" not in fx["argv"] or t.name == "token_embd.weight"
                  or (t.layer in cpu_blocks and ".ffn" in t.name)]
        got = [round(b / (1 << 20), 2) for b in split_mapped_ranges(on_cpu, layout)]
        assert got == printed, (path.name, got, printed)


@pytest.mark.parametrize(("stem", "cpu_mib"), [
    ("qwen3-235b-a22b-q6k-rtx3090-ot-ffn-cpu-q8kv-16384-b5269", 8.25),
    ("qwen3-235b-a22b-q6k-2x3090-default-ngl-q8kv-16384-b5269", 304.75),
])
def test_a_blas_build_multiplies_host_weights_in_its_own_cpu_buffer(stem, cpu_mib):
    """ik_llama.cpp discussion #357's b5269 logs print a CPU compute buffer beside CUDA_Host: an ACCEL backend's
    (llama_context gives the CPU backend the first device's host buffer type), ggml-blas, whose buffer type is the
    CPU's. ggml_backend_sched_backend_from_buffer hands a host weight's MUL_MAT of 32 rows or more to BLAS, the
    highest backend that supports its buffer and the op, and op offload is tried only for the last backend's
    weights: with -ot ffn=CPU the routers (the 4096 x 512 input copied from CUDA0, 128 x 512 logits: 8.25 MiB),
    with no -ngl the output layer (the input and 151936 x 512 logits: 304.75 MiB), as printed. Without BLAS (the
    build option off, as in PR #370's b5271 log) there is no such buffer."""
    from tests.test_llamacpp_heldout_logs import held_out_estimate

    fx = json.loads((FIXTURES[0].parent / f"{stem}.json").read_text())
    assert fx["options"] == {"blas": True}
    compute = held_out_estimate(fx).engine_view["compute_buffer_bytes"]
    assert round(compute["CPU"] / (1 << 20), 2) == fx["printed"]["buffers"]["compute_mib"]["CPU"] == cpu_mib
    assert "CPU" not in held_out_estimate({**fx, "options": {}}).engine_view["compute_buffer_bytes"]


def test_a_blas_build_runs_no_pipeline_parallelism():
    """ggml-blas reports neither async compute nor events (ggml_backend_blas_device_get_props), and llama_context's
    caps loop skips only the CPU device: a BLAS build keeps one copy of the inputs over several GPUs."""
    import oomkit

    kw = dict(gpu="2x RTX 3090", n_gpu_layers=99, engine_version="b5269", find_max_context=False)
    assert oomkit.estimate("qwen3-8b", "llama.cpp", **kw).engine_view["pipeline_parallel"]
    assert not oomkit.estimate("qwen3-8b", "llama.cpp", blas=True, **kw).engine_view["pipeline_parallel"]


def test_a_blas_build_keeps_the_cpu_layers_flash_attention_on_the_cpu():
    """Discussion #357's b5269 run with no -ngl (every layer on the CPU, -fa, a BLAS build): the output projection's
    MUL_MAT goes to BLAS, not to CUDA0, so ggml_backend_sched_split_graph's "expand gpu up" stops at FLASH_ATTN_EXT
    (BLAS has none) and the K / V stores before it give it the CPU (compute.blas_host_attention): CUDA_Host holds
    the 32 MiB F32 mask, K's 1 MiB and Q's 16 MiB copies from CUDA0 (Qwen3's Q / K norms are offloaded) and the
    16 MiB F16 mask, 65.00 MiB against the 65.01 printed. Without BLAS the projection is offloaded and the attention
    with it: the host keeps its graph inputs (40.01 with the small ones, compute.token_index_inputs). CUDA0 replays the offloaded expert products, one 630 MiB q6_K
    copy at a time (compute.host_experts_split_bytes): 750.02 against 742.00."""
    from tests.test_llamacpp_heldout_logs import held_out_estimate

    fx = json.loads((FIXTURES[0].parent / "qwen3-235b-a22b-q6k-2x3090-default-ngl-q8kv-16384-b5269.json").read_text())
    mib = {k: round(v / (1 << 20), 2) for k, v in held_out_estimate(fx).engine_view["compute_buffer_bytes"].items()}
    assert mib == {"CPU": 304.75, "CUDA_Host": 65.00, "CUDA0": 750.02}
    plain = held_out_estimate({**fx, "options": {}}).engine_view["compute_buffer_bytes"]
    assert round(plain["CUDA_Host"] / (1 << 20), 2) == 40.01
