"""The Ollama engine's graph with blocks left on the CPU: ml/backend/ggml/ggml.go New creates its scheduler with
ggml_backend_sched_new_ext(..., parallel false, op_offload true, ...) (v0.23.2 read), so a CPU block's matrix
products run on the GPU once the batch reaches 32 rows, each weight copied into the GPU's compute buffer as a split
input, one at a time (ggml-backend.cpp ggml_backend_sched_split_graph). Qwen3.6-35B-A3B Q4_K_M's largest block
matrix is ffn_down_exps in Q6_K: 256 experts x 512 x 2048 values at 210 bytes a 256-value block."""

from __future__ import annotations

from oomkit.check import check

Q6_K_DOWN_EXPS = 256 * 512 * 2048 // 256 * 210  # 220,200,960 B


def test_the_schedulers_graph_holds_a_cpu_blocks_weight_copy():
    r = check("qwen3.6:35b-a3b", "ollama", gpu="RTX 5060 Ti 16GB", engine_version="0.23.2")
    view = r.estimate.engine_view
    assert view["ollama_layers"] != "41/41"  # a CPU/GPU split
    assert view["ollama_vs_runner"]["ollama_graph_bytes"] > Q6_K_DOWN_EXPS

