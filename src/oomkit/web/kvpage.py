"""The "KV cache explained" page: what each attention kind keeps per token, the rule each engine applies (with the
engine source it lives in), and a worked example filled with the current model's own figures from its estimate.

The worked example divides the estimate's per-layer KV bytes (est.layers, the engine's own layout) by the cells
and head sizes the model declares; it computes nothing the engine modules have not already computed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..memory import MemoryEstimate
from .pages import CALC_KEYS, answer, b, calculator_form, did_you_mean, e, error_box, layout, link
from .svg import gib

KINDS = (
    ("Full attention (MHA, GQA, MQA)",
     "Every layer keeps a key and a value vector per KV head for every token of the context: "
     "<code>2 × n_kv_heads × head_dim × bytes</code> per token and layer (K and V may differ in head size). "
     "Grouped-query attention shares one KV head among several query heads: Llama 3.1 8B has 32 query heads "
     "and 8 KV heads, so its cache is a quarter of what the hidden size suggests."),
    ("Sliding window (Gemma 2/3, gpt-oss, Mistral)",
     "As full attention, but a layer only ever attends to the last <code>window</code> tokens, so its cache stops "
     "growing there. Engines keep a little more than the window: llama.cpp pads it by the micro-batch and to its "
     "cell padding; vLLM keeps whole 16-token blocks."),
    ("Chunked attention (Llama 4)",
     "Like a sliding window, per chunk of the context: the local layers hold one chunk's keys and values."),
    ("Latent attention, MLA (DeepSeek V2/V3/R1, Kimi K2, GLM)",
     "Keys and values are compressed into one latent vector per token of <code>kv_lora_rank + qk_rope_head_dim"
     "</code> (512 + 64 = 576 for DeepSeek V3) shared by all 128 heads, instead of 128 heads × (192 + 128). "
     "Engines differ: llama.cpp keeps the latent as K only (no V cache), vLLM and SGLang keep the latent, old "
     "GGUFs and some engines decompress it to full heads."),
    ("Recurrent state (Mamba, gated delta net, RWKV) and hybrids",
     "A recurrent layer keeps a fixed state per sequence (convolution plus SSM state), whatever the context. "
     "Hybrid models (Qwen3.5/3.6/Next, Granite 4, Nemotron-H, Jamba) mix a few attention layers, whose cache grows "
     "with the context, with many recurrent ones, whose state does not."),
)

ENGINES = (
    ("llama.cpp", "cells = n_ctx padded to 256 (<code>llama_kv_cache::get_padding</code>); per layer "
                  "<code>cells × n_embd_k_gqa(il) × type_size(ctk)</code> + the same for V "
                  "(<code>src/llama-kv-cache.cpp</code>, <code>llama_kv_cache::llama_kv_cache</code>); "
                  "SWA layers <code>min(n_ctx, PAD(n_swa × n_seq + n_ubatch, 256))</code> "
                  "(<code>src/llama-kv-cache-iswa.cpp</code>); MLA: K only, <code>has_v = !is_mla</code> "
                  "(since PR #19067)."),
    ("Ollama", "<code>context = num_ctx × numParallel</code> (<code>llm/memory.go</code>, to v0.12.10); its own "
               "engine pads each cache to 256 cells, <code>PAD(numParallel × num_ctx, 256)</code>, sliding layers "
               "<code>PAD(numParallel × window + batch, 256)</code> (<code>kvcache/causal.go</code>, from v0.11.5); "
               "from v0.30 GGUF models run on upstream <code>llama-server</code>, as above."),
    ("vLLM", "pages of <code>block_size</code> (16) tokens; per layer <code>page_size_bytes = 2 × block_size × "
             "num_kv_heads × head_size × dtype_size</code> (<code>vllm/v1/kv_cache_interface.py</code>, "
             "<code>FullAttentionSpec</code>; <code>MLAAttentionSpec</code> one latent tensor); all the memory "
             "left under <code>gpu_memory_utilization</code> after the profile run becomes blocks."),
    ("SGLang", "a token pool: <code>MHATokenToKVPool</code> (K and V per layer) or <code>MLATokenToKVPool</code> "
               "(<code>kv_lora_rank + qk_rope_head_dim</code>) in <code>python/sglang/srt/mem_cache/memory_pool.py"
               "</code>; <code>max_total_num_tokens</code> from the memory left under <code>mem_fraction_static"
               "</code>."),
    ("transformers", "<code>DynamicCache</code> grows one token at a time, K and V tensors per layer in the model's "
                     "dtype (<code>src/transformers/cache_utils.py</code>)."),
    ("MLX", "<code>KVCache</code> grows in steps of 256 tokens (<code>mlx_lm/models/cache.py</code>); "
            "<code>RotatingKVCache</code> for sliding layers."),
)


def worked_example(est: MemoryEstimate) -> str:
    """Per group of same-shaped layers: the declared heads and sizes, the engine's cells and bytes, and the bytes
    per element that follow; then the textbook figure per token against the engine's marginal bytes per token
    (est.kv_bytes_per_token), and for the whole context against what the engine allocates."""
    m = est.model
    spec_by_index = {layer.index: layer for layer in m.layers}
    groups: dict[tuple, list[Any]] = {}
    for lu in est.layers:
        ls = spec_by_index.get(lu.index)
        a = ls.attention if ls is not None else None
        shape = (lu.kind, a.n_kv_heads if a else 0, a.head_dim_k if a else 0, a.head_dim_v if a else 0,
                 (a.window if a else None), (a.kv_lora_rank + a.qk_rope_head_dim) if a and a.kv_lora_rank else 0,
                 lu.cells, lu.kv_bytes, lu.recurrent_bytes)
        groups.setdefault(shape, []).append(lu)
    rows = []
    for (kind, heads, dk, dv, window, latent, cells, kv_bytes, rec_bytes), layers in groups.items():
        per_cell = kv_bytes / cells if cells else None
        width = latent if latent else heads * (dk + dv)
        elem = per_cell / width if per_cell and width else None
        shape_text = (f"latent {latent}" if latent else f"{heads} × ({dk} + {dv})" if heads else "-")
        rows.append(f'<tr><td class="l">{e(kind)}</td><td>{len(layers)}</td><td>{e(shape_text)}</td>'
                    f'<td>{e(window or "-")}</td><td>{e(f"{cells:,}" if cells else "-")}</td>'
                    f'<td>{e(f"{per_cell:,.0f}" if per_cell else "-")}</td><td>{e(f"{elem:.4g}" if elem else "-")}</td>'
                    f"<td>{b(kv_bytes * len(layers))}</td><td>{b(rec_bytes * len(layers))}</td></tr>")
    ctx = est.engine_view.get("n_ctx") or _context(est)
    out = [f'<p>{e(m.name)} with {e(est.engine)}: {m.n_layers} layers, hidden size {m.n_embd:,}, context '
           f'{e(f"{ctx:,}" if ctx else "-")}. Each group of same-shaped layers, as the engine lays them out:</p>',
           '<div class="scroll"><table id="kv-groups"><tr><th class="l">kind</th><th>layers</th>'
           '<th>KV heads × (K + V dims)</th><th>window</th><th>cells</th><th>bytes per cell and layer</th>'
           '<th>bytes per element</th><th>KV total</th><th>state total</th></tr>' + "".join(rows) + "</table></div>"]
    per_token = 2 * m.n_layers * m.n_embd * 2
    out.append('<h3>Against the textbook formula</h3><p>The textbook gives every token '
               f'<code>2 × layers × hidden × 2 bytes</code> = 2 × {m.n_layers} × {m.n_embd:,} × 2 = '
               f'<b id="textbook-token" data-bytes="{per_token}">{per_token:,} bytes</b> (f16). ')
    real = est.kv_bytes_per_token
    if real:
        out.append(f'{e(est.engine)} adds <b id="real-token" data-bytes="{real}">{real:,} bytes</b> per extra token '
                   f'of one sequence with these settings: the textbook figure is <b id="ratio">{per_token / real:.1f}×'
                   "</b> the real one.")
    else:
        out.append(f"The cache {e(est.engine)} keeps does not grow token by token with these settings (a fixed state, "
                   "or a pool sized from memory).")
    out.append(" The textbook assumes one KV head per query head (no GQA), every layer attending to the whole "
               "context (no sliding window, no recurrent layers) and full K and V per head (no latent).</p>")
    if ctx:
        textbook = per_token * ctx
        out.append(f'<p>For {ctx:,} tokens the textbook says <b id="textbook" data-bytes="{textbook}">'
                   f'{e(gib(textbook))}</b>; {e(est.engine)} allocates <b id="real-kv">{b(est.kv_cache_bytes)}</b> '
                   f'for its KV cache and {b(est.recurrent_state_bytes)} of recurrent state (an engine that sizes a '
                   "pool from the memory left, as vLLM and SGLang do, allocates the pool, not the context).</p>")
    return "".join(out)


def _context(est: MemoryEstimate) -> int | None:
    from ..engines.base import get_engine  # lazy: only when the engine prints no n_ctx

    v = get_engine(est.engine).effective_context(est)
    return v if isinstance(v, int) else None


def kv_page(params: Mapping[str, Any], est: MemoryEstimate | None, error: str | None) -> str:
    example = ('<div class="card"><h2>Worked example: this model</h2>' + worked_example(est)
               + f'<p class="note"><a href="{e(link("/", params, ("model", "engine", "ctx", "quant", "kv_type", "parallel", "flags", "vram", "gpu", "command")))}">'
               "the whole estimate</a></p></div>") if est is not None else ""
    body = [calculator_form(params, action="/kv", button="Explain"),
            answer((error_box(error), did_you_mean(error, params, "/kv", CALC_KEYS), example))]
    body.append('<div class="card"><h2>What the cache holds, per attention kind</h2>'
                + "".join(f"<h3>{e(t)}</h3><p>{text}</p>" for t, text in KINDS)
                + '<p class="note">Try <a href="/kv?model=deepseek-r1%3A671b&amp;ctx=32768">DeepSeek R1 (MLA)</a>, '
                  '<a href="/kv?model=gemma2%3A27b&amp;ctx=8192">Gemma 2 27B (sliding window)</a>, '
                  '<a href="/kv?model=granite4%3Atiny-h&amp;ctx=32768">Granite 4 H-Tiny (hybrid)</a>.</p></div>')
    body.append('<div class="card"><h2>The rule each engine applies</h2><dl class="kv">'
                + "".join(f"<dt>{e(n)}</dt><dd>{text}</dd>" for n, text in ENGINES) + "</dl></div>")
    return layout("The KV cache, explained", "kv", "".join(body))
