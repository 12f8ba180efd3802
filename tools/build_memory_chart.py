"""Write the "where each MiB goes" chart of docs/engines.md (between its chart markers): a few real models from
the catalog, each engine's estimate on one 80 GiB GPU at a 32K context, per component, with a bar scaled to the
GPU's memory. tests/test_docs.py checks the chart is current.

    python tools/build_memory_chart.py
"""

from __future__ import annotations

from pathlib import Path

import oomkit

PAGE = Path(__file__).resolve().parents[1] / "docs" / "engines.md"
BEGIN, END = "<!-- chart: tools/build_memory_chart.py -->", "<!-- /chart -->"
MODELS = (("Llama-3.1-8B (full attention)", "llama3.1:8b"), ("Gemma-3-12B (sliding window)", "gemma3:12b"),
          ("DeepSeek-V2-Lite (MLA)", "deepseek-v2-lite"), ("Granite-4.0 H-Tiny (hybrid Mamba)", "granite4:tiny-h"))
ENGINES = {"llama.cpp": {"n_ctx": 32768}, "ollama": {"num_ctx": 32768}, "vllm": {"max_model_len": 32768},
           "sglang": {"context_length": 32768}}
WIDTH = 50
MiB = 1 << 20
GPU = 80 << 30
PARTS = (("W", "weights_bytes"), ("K", "kv_cache_bytes"), ("S", "recurrent_state_bytes"), ("C", "compute_bytes"),
         ("O", "overhead_bytes"))


def bar(u: dict) -> str:
    cells, out = [u[k] * WIDTH / GPU for _, k in PARTS], ""
    acc, drawn = 0.0, 0
    for (ch, _), c in zip(PARTS, cells, strict=True):
        acc += c
        n = round(acc) - drawn
        out += ch * n
        drawn += n
    return out + "." * max(0, WIDTH - drawn)


def render() -> str:
    lines = [BEGIN, "", "```text",
             f"one 80 GiB GPU, 32768-token context; each bar is the GPU, {WIDTH} cells of {GPU // WIDTH // MiB:,} MiB:",
             "W weights  K KV cache  S recurrent state  C compute / activations  O runtime overhead  . free", ""]
    for title, model in MODELS:
        lines.append(title)
        for engine, ctx in ENGINES.items():
            est = oomkit.estimate(model, engine, vram="80GiB", find_max_context=False, **ctx)
            u = est.devices[0].to_dict()
            mib = " ".join(f"{ch}{u[k] / MiB:,.0f}" for ch, k in PARTS if u[k])
            lines.append(f"  {engine:9s} |{bar(u)}| {mib} MiB")
        lines.append("")
    lines += ["```", "", END]
    return "\n".join(lines)


def updated(text: str) -> str:
    a, b = text.index(BEGIN), text.index(END) + len(END)
    return text[:a] + render() + text[b:]


if __name__ == "__main__":
    PAGE.write_text(updated(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote the chart in {PAGE}")
