"""llama.cpp's CPU backend repacks: which weights the CPU's extra buffer type (CPU_AARCH64, CPU_REPACK) takes, by
ISA and build, and when a load reaches that buffer type at all. Used by the model buffers (backends.cpu_repack) and
by the compute graph of a load whose CPU layers are repacked (compute.repacked_layers_compute)."""

from __future__ import annotations

from ...memory import Device
from ...model.spec import TensorSpec
from ...quant import ggml
from .backend_names import infer_backend

# ggml_repack_get_optimal_repack_type: the types the CPU backend interleaves for its GEMM kernels, by ISA, with
# the row-count multiple each layout needs (ne[1] % N). x86 with AVX2 (also AVX512): Q4_0 (8x8), Q4_K (8x8),
# IQ4_NL (8x8), MXFP4 (8x8) -- measured on this project's AVX2 test machine: Q4_0, Q4_K, IQ4_NL and MXFP4 repack,
# Q8_0, Q6_K, Q5_K, Q4_1, Q5_0, Q3_K, Q2_K, IQ4_XS do not (tests/test_llamacpp_backends.py); later builds add Q2_K
# on AVX512. ARM (NEON with dotprod; i8mm): Q4_0 (4x4 / 4x8), Q4_K (8x4 / 8x8), IQ4_NL (4x4), MXFP4 (4x4), Q5_K,
# Q6_K and Q8_0. Several came late (REPACK_SINCE): MXFP4 not before 2026 on any ISA.
REPACK_TYPES: dict[str, dict[str, int]] = {
    "avx2": {"q4_0": 8, "q4_K": 8, "iq4_nl": 8, "mxfp4": 8},
    "avx512": {"q4_0": 8, "q4_K": 8, "iq4_nl": 8, "mxfp4": 8, "q2_K": 8},
    "neon": {"q4_0": 4, "q4_K": 8, "iq4_nl": 4, "mxfp4": 4, "q5_K": 8, "q6_K": 8, "q8_0": 4},
    "none": {},
}
CPU_ISAS = tuple(REPACK_TYPES)

# The builds that brought a type's repacking on an ISA (older builds map the type plainly): each PR's merge commit,
# its count on master (the build number). On ARM the first of a type's PRs (i8mm, then dotprod) stands for "neon".
#   ARM Q4_K: PR #16739 (i8mm, dbb852b54, 2025-11-24, b7142) and #17494 (dotprod, cd8370b40, b7175).
#   ARM Q8_0: PR #18096 (669696e00, 2025-12-17, b7451): issue #19224's Metal log of early 2026 repacks a q8_0
#     block's four attention matrices (CPU_REPACK 26.89 MiB) but not its MXFP4 experts.
#   ARM Q5_K, Q6_K: PRs #18860 / #18888 (i8mm: 091a46cb8, b7815 / be8890e72, b7845), #19356 / #19360 (dotprod:
#     b8134 / b7988).
#   MXFP4 on every ISA: PR #19738 ("ggml-cpu: add repack for mxfp4", d903f30e2, 2026-02-27, b8175).
#   x86 Q4_K: PR #12332 ("Block interleaving support for Q4_K quantization for x86 AVX2", 3d82dbcbc, 2025-03-20,
#     b4929): ggml-org/ci's x86 runs at b4329
#     (2024-12-14) and b4730 (2025-02-16) load a Q4_K_M file into CPU_Mapped alone, no CPU_AARCH64 buffer
#     (tests/fixtures/engine_logs/llamacpp_more/).
#   x86 Q4_0: PR #10446 ("ggml : refactor online repacking", 19d8762a, 2024-12-07, b4282) turned on the AVX2 branch of
#     ggml_aarch64_get_optimal_repack_type (commented out since the online flow of PR #9921, b4081).
REPACK_SINCE: dict[tuple[str, str], int] = {
    ("avx2", "q4_0"): 4282,
    ("avx512", "q4_0"): 4282,
    ("avx2", "q4_K"): 4929,
    ("avx512", "q4_K"): 4929,
    ("neon", "q4_K"): 7142,
    ("neon", "q8_0"): 7451,
    ("neon", "q5_K"): 7815,
    ("neon", "q6_K"): 7845,
    ("avx2", "mxfp4"): 8175,
    ("avx512", "mxfp4"): 8175,
    ("neon", "mxfp4"): 8175,
}

# The repack buffer type's name: "CPU_AARCH64" (ggml-cpu-aarch64.cpp, on every ISA) until PR #13892 ("ggml-cpu :
# split arch-specific implementations", f470bc36b, 2025-06-09, b5615) renamed the
# aarch64 identifiers to repack; issue #11807's log (b4202, an aarch64 build) prints "CPU_AARCH64 model buffer size".
REPACK_NAME_BUILD = 5615

# tensors read with GGML_OP_GET_ROWS (src/llama-arch.cpp LLM_TENSOR_INFOS: TOKEN_EMBD, POS_EMBD, TOKEN_TYPES,
# PER_LAYER_TOKEN_EMBD; their file names LLM_TENSOR_NAMES "token_embd", "position_embd", "token_types",
# "per_layer_token_embd"), which the repack buffer type does not support: llama-model.cpp weight_buft_supported
# builds the weight's own op (ggml_get_rows for these) and ggml-cpu/repack.cpp extra_buffer_type::supports_op
# takes only MUL_MAT on a 2-D weight and MUL_MAT_ID on a 3-D expert stack, so select_weight_buft passes CPU_REPACK
# by and the table loads into the plain CPU buffer type (CPU_Mapped with mmap). Measured with llama.cpp@0c1e57098:
# tests/ggufs.py's bert file, Q4_0 position_embd of 4096 x 8192 included, CPU_REPACK 168.75 MiB, its blocks alone
# (tests/test_llamacpp_embedding_output.py)
GET_ROWS_TENSORS = ("token_embd.", "per_layer_token_embd.", "position_embd.", "token_types.")
# the per-block tables LLM_TENSOR_INFOS also reads with GGML_OP_GET_ROWS (llama.cpp@62ede36c, b7140): T5's relative
# position bias, LLM_TENSOR_ENC_ATTN_REL_B / LLM_TENSOR_DEC_ATTN_REL_B ("enc.blk.%d.attn_rel_b",
# "dec.blk.%d.attn_rel_b"; llm_graph_context::build_pos_bias gathers its rows by the position buckets), and the
# next-n block's LLM_TENSOR_NEXTN_EMBED_TOKENS ("blk.%d.nextn.embed_tokens"). They stay in the plain CPU buffer type
# too: a Q4_0 enc.blk.0.attn_rel_b of 32 x 32, the last tensor of tests/ggufs.py's t5encoder file, keeps CPU_Mapped
# over the whole file, 239.14 MiB measured with llama.cpp@0c1e57098 (142.39 when oomkit repacked it and the mapped
# range ended at enc.blk.1.ffn_norm; tests/test_llamacpp_embedding_output.py)
GET_ROWS_BLOCK_TENSORS = (".attn_rel_b.", ".nextn.embed_tokens.")


def read_by_get_rows(name: str) -> bool:
    """Whether llama.cpp reads this weight with GGML_OP_GET_ROWS (a table, never a MUL_MAT weight)."""
    return name.startswith(GET_ROWS_TENSORS) or any(k in name for k in GET_ROWS_BLOCK_TENSORS)


def repackable(t: TensorSpec, isa: str, build: int | None = None) -> bool:
    """Whether the CPU backend repacks this weight (`build`: the llama.cpp build, None for the newest)."""
    kind = ggml.type_by_name(t.dtype).name
    rows = REPACK_TYPES.get(isa, {}).get(kind)
    if rows is None or read_by_get_rows(t.name):
        return False
    if build is not None and build < REPACK_SINCE.get((isa, kind), 0):
        return False
    dims = len([n for n in t.shape if n > 1]) if len(t.shape) > 2 else len(t.shape)
    if dims == 3 and "_exps" not in t.name:
        return False
    return dims in (2, 3) and len(t.shape) >= 2 and t.shape[1] % rows == 0


# make_cpu_buft_list's order (src/llama-model.cpp): until PR #12498 ("model : do not repack if a GPU device is
# present", af04481e, 2025-03-21, b4936) the CPU's extra buffer types (CPU_AARCH64) came before the first device's
# host buffer type, so the CPU layers of a GPU load were repacked too; from b4936 none beside a GPU device; from
# PR #12632 ("change cpu_buft_list order: ACCEL -> GPU host -> CPU extra -> CPU", 0bb29193, 2025-03-29, b4991) the
# host buffer type first (repack_applies)
REPACK_BESIDE_GPU_UNTIL = 4936
REPACK_HOST_FIRST_BUILD = 4991


def repack_applies(devices: tuple[Device, ...], no_host: bool, use_extra_bufts: bool, backend: str = "",
                   build: int | None = None) -> bool:
    """llama-model.cpp make_cpu_buft_list: the CPU layers try, in order, the first device's host buffer type that
    exists, then the CPU's extra buffer types (CPU_REPACK), then plain CPU. A host buffer type supports every
    matmul, so CPU_REPACK is chosen only when no device has one: no GPU (a CPU build, or -dev none), only RPC
    devices (an RPC-only build: `CPU_REPACK` beside `RPC0[...]` buffers), backends without a host buffer type
    (Metal, OpenCL), or --no-host; --no-repack (PR #14990, July 2025) turns the extra buffer types off
    (common/arg.cpp, llama_model_params.use_extra_bufts). Before b4991 (build; None: the newest) the order was the
    extra types first: beside any device they repack until b4936, and not at all from b4936 (REPACK_BESIDE_GPU_UNTIL)."""
    if not use_extra_bufts:
        return False
    if not devices or no_host and (build is None or build >= REPACK_HOST_FIRST_BUILD):
        return True
    if build is not None and build < REPACK_HOST_FIRST_BUILD:
        return build < REPACK_BESIDE_GPU_UNTIL
    local = [d for d in devices if not d.id.startswith("RPC")]
    return not local or infer_backend(tuple(local), backend).host is None
