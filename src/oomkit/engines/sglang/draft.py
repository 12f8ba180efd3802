"""The EAGLE-family draft worker of SGLang's speculative decoding when the draft is the checkpoint's own multi-token
prediction (next-n / MTP) layers: `--speculative-algorithm NEXTN` (server_args.py turns it into EAGLE), or EAGLE with
no --speculative-draft-model-path (or the model's own path) on a model that has such layers. speculative/
eagle_worker.py (eagle_worker_v2.py from 0.5.x) builds a second ModelRunner (is_draft_worker=True) over the same
checkpoint in its next-n form (DeepseekV3ForCausalLMNextN, Glm4MoeForCausalLMNextN, ...): it loads the next-n layer
and shares the target's embedding and lm_head (init_lm_head -> set_embed_and_head, the draft's own vocabulary-sized
copies freed), and it gets its own token-to-KV pool of the draft's layers, indexed by the target's allocator
(req_to_token_pool and token_to_kv_pool_allocator are the target's).

What it takes, by release (settings.ERAS spec_*; the wheels named there read):
- the draft's weights: the next-n layers' tensors, without their embedding / head copies, split over TP like the
  target's;
- the draft's pool: draft layers x the per-layer K/V row x the draft's token count (before 0.4.10 an MHA draft's
  MHATokenToKVPool took layer_num=num_effective_layers, every layer of the model, and only an MLA draft's pool
  num_nextn_predict_layers: 0.4.7.post1 read; sglang PR #8482, merged 2025-07-29, "when we create KV cache for the
  draft model, currently we for ALL model layers while we only needed the last MTP layer"), which is
  draft_runner_cache_size: the target's tokens plus max_num_reqs x (num_steps x eagle_topk + num_draft_tokens) + 100
  from 0.4.3.post4 to 0.5.6 (the target's pool raised to it as well, then both capped by --max-total-tokens), the
  target's tokens from 0.5.7;
- where it comes from: up to 0.5.13 both are allocated after the target's pool, out of the (1 - mem_fraction_static)
  slice the activations and CUDA graphs also need; from 0.5.14 the draft's weights are loaded before the pools are
  profiled and the target's cell takes the draft's layers (cell += int(cell x draft_layers / num_layers)), so the
  target's pool shrinks instead. There the draft's own embedding and lm_head (VocabParallelEmbedding /
  ParallelLMHead of the next-n model class, vocabulary x hidden each) are still resident when the pools are sized:
  eagle_worker_v2.py calls init_lm_head (set_embed_and_head, which frees them) from alloc_memory_pool, after the
  target's pool is profiled (0.5.14, 0.5.19, 0.5.23 read; sglang PR #35996, open 2026-08-22, moves it before), so the
  profile counts them and the memory they free stays outside the pool; the draft's "Memory pool end" line, printed
  by its alloc_memory_pool before init_lm_head, still has them (layout.py _Run.draft_copies).

A DeepSeek-sparse-attention model's draft (DeepseekV32ForCausalLM, GlmMoeDsaForCausalLM: configs/model_config.py
_config_draft_model makes it DeepseekV3ForCausalLMNextN, which is_deepseek_dsa still reads as DSA; 0.5.13.post1 read)
gets a DSATokenToKVPool of its next-n layer (model_runner_kv_cache_mixin.py _init_pools, layer_num=
num_effective_layers = num_nextn_predict_layers): the MLA latent row (calculate_mla_kv_cache_dim: 656 B in fp8, 576 B
under the trtllm / tilelang backends, kv.py dsa_raw_latent) and the indexer's 132 B key row, over the target's token
count (memory_pool_config shared). Its weights keep eh_proj whole
on every rank: models/deepseek_nextn.py DeepseekModelNextN builds it as an nn.Linear (ReplicatedLinear with quark),
as do glm4_moe_nextn.py, glm4_moe_lite_nextn.py, qwen3_5_mtp.py / qwen3_next_mtp.py (fc), mimo_v2_nextn.py,
bailing_moe_nextn.py and longcat_flash_nextn.py (0.5.13.post1 read). Of the draft's CUDA graphs
(eagle_draft_cuda_graph_runner.py, captured when speculative_num_steps > 1, "Capture draft cuda graph begin/end")
only a DSA draft's attention state is counted (graph_bytes: its speculative_num_steps - 1 DeepseekSparseAttnBackends'
token-wide page tables, phases.py dsa_graph_state); the draft-extend graphs (eagle_worker_v2.py captures them for
triton, trtllm_mla, trtllm_mha and tokenspeed_mla only, not DSA) and the per-graph rest are not.

Not sized here: a separate draft model (EAGLE / EAGLE3 / STANDALONE with its own --speculative-draft-model-path: its
config is not read), the draft of a hybrid sliding-window model and under pipeline parallelism."""

from __future__ import annotations

from dataclasses import dataclass

from ...model.spec import ModelSpec
from ...quant.dtypes import FLOAT_BYTES, float_bytes
from ..versions import Version
from .kv import CacheLayout, cache_layout, kv_pools
from .phases import DSA_BACKENDS, dsa_graph_state
from .settings import SGLangSettings, algorithm, reached, speculative_params
from .weights import rank_weights

# server_args.py / arg_groups/speculative_hook.py: the architectures whose speculative_draft_model_path is set to the
# model's own path when not given (DeepseekV3ForCausalLM, DeepseekV32ForCausalLM, Glm4MoeForCausalLM,
# Glm4MoeLiteForCausalLM, GlmMoeDsaForCausalLM, ...), by oomkit's architecture names
_SELF_PATH_ARCHS = frozenset({"deepseek2", "deepseek_v32", "glm4moe", "glm_moe_dsa"})

# the next-n block's vocabulary-sized copies (model/tensors.py _NEXTN_VOCAB_COPIES): set_embed_and_head frees them
_SHARED_COPIES = (".nextn.embed_tokens.weight", ".nextn.shared_head_head.weight")
_WHOLE = (".nextn.eh_proj.weight",)  # the next-n projection of [embedding; hidden] (fc in Qwen3-Next / Qwen3.5)


@dataclass(frozen=True)
class Draft:
    """The draft worker of one rank."""

    n_layers: int
    lay: CacheLayout  # the next-n layers
    pool_lay: CacheLayout  # the layers its pool is allocated for
    weights_bytes: int  # resident: the next-n layers, the target's embedding and head shared
    copies_bytes: int  # its own embedding + lm_head, freed by init_lm_head (counted by the 0.5.14+ profile)
    num_steps: int
    eagle_topk: int
    num_draft_tokens: int
    profiled: bool  # 0.5.14+: its weights and layers are counted when the target's pool is profiled
    cell_in_profile: bool  # its layers join the target's cell (0.5.14+, a draft path given or set, or 0.5.22+)


def self_draft(spec: ModelSpec, s: SGLangSettings) -> bool:
    """Whether the draft is the checkpoint's own next-n layers (the only draft oomkit sizes)."""
    algo = algorithm(s)
    if algo not in ("EAGLE", "NEXTN") or spec.n_nextn_layers <= 0:
        return False
    return s.speculative_draft_model_path in (None, s.model_path)


def draft_worker(spec: ModelSpec, s: SGLangSettings, v: Version) -> Draft | None:
    """The draft worker of one rank, or None when there is none oomkit sizes (see the module's notes)."""
    if not self_draft(spec, s) or s.pp_size > 1:
        return None
    layers = spec.layers[spec.n_trunk_layers:]
    lay = cache_layout(spec, s, layers)
    if lay.swa_layers or lay.mamba_layers:
        return None
    ids = {la.index for la in layers}
    tensors = tuple(t for t in spec.weights.tensors
                    if t.layer in ids and not t.name.endswith(_SHARED_COPIES))
    w, _ = rank_weights(spec, s, lay, tuple(t for t in tensors if not t.name.endswith(_WHOLE)), towers=False)
    # eh_proj (fc): a plain nn.Linear, whole on every rank and never quantized online (see the module's notes); a
    # float checkpoint's loads in the model dtype
    src = float_bytes(spec.weights.format)
    w += sum(t.nbytes * FLOAT_BYTES[lay.model_dtype] // src if src else t.nbytes
             for t in tensors if t.name.endswith(_WHOLE))
    # the next-n model's own VocabParallelEmbedding and ParallelLMHead, shaped like the target's (vocab-parallel)
    vocab = tuple(t for t in spec.weights.tensors if t.layer is None and t.name.startswith(("token_embd", "output.")))
    embed = [t for t in vocab if t.name.startswith("token_embd")]
    head = [t for t in vocab if t.name.startswith("output.")] or embed
    copies, _ = rank_weights(spec, s, lay, tuple(embed + head), towers=False)
    steps, topk, tokens = speculative_params(spec, s, v)
    path_set = s.speculative_draft_model_path is not None or spec.architecture in _SELF_PATH_ARCHS
    profiled = reached(v, "spec_draft_profiled")
    # model_runner.py init_memory_pool: MHATokenToKVPool(layer_num=num_effective_layers) before 0.4.10 (ERAS
    # spec_draft_pool_nextn); MLATokenToKVPool took num_nextn_predict_layers already. A hybrid Mamba / GDN target's
    # MTP draft (Qwen3.5, Qwen3-Next) gets one full-attention layer too: kv_cache_configurator.py
    # _build_hybrid_linear_kv_pool, full_attention_layer_ids=[0] "if draft worker" (0.5.19 read)
    pool_lay = lay if lay.mla or reached(v, "spec_draft_pool_nextn") else cache_layout(spec, s)
    return Draft(n_layers=len(layers), lay=lay, pool_lay=pool_lay, weights_bytes=w, copies_bytes=copies, num_steps=steps, eagle_topk=topk,
                 num_draft_tokens=tokens, profiled=profiled,
                 cell_in_profile=profiled and (path_set or reached(v, "spec_pathless_cell")))


def pool_tokens(draft: Draft, target_tokens: int, max_num_reqs: int, s: SGLangSettings, v: Version,
                page_size: int) -> tuple[int, int]:
    """(the target's max_total_num_tokens, the draft pool's) from the target's profiled token count
    (model_runner.py init_memory_pool: draft_runner_cache_size, ERAS spec_pool_*)."""
    if reached(v, "spec_pool_same") or not reached(v, "spec_pool_headroom"):
        if not reached(v, "spec_pool_headroom"):  # 0.4.2: the draft's alone, + max_num_reqs x num_steps + 100
            draft = target_tokens + max_num_reqs * draft.num_steps + 100
            if s.max_total_tokens is not None:
                draft = min(draft, s.max_total_tokens)
            return target_tokens, draft
        return target_tokens, target_tokens
    extra = max_num_reqs * (draft.num_steps * draft.eagle_topk + draft.num_draft_tokens) + 100
    tokens = target_tokens + extra
    if s.max_total_tokens is not None:
        tokens = min(tokens, s.max_total_tokens)
    tokens = tokens // page_size * page_size
    return tokens, tokens


def pool_bytes(draft: Draft, s: SGLangSettings, tokens: int) -> tuple[int, int]:
    """(K bytes, V bytes) of the draft's pool (its own MHATokenToKVPool / MLATokenToKVPool of the draft's layers)."""
    subs = kv_pools(draft.pool_lay, s, tokens)
    return sum(p.k_bytes for p in subs), sum(p.v_bytes for p in subs)


def graph_bytes(draft: Draft, s: SGLangSettings, v: Version, sizes: tuple[int, ...] | list[int], context_len: int,
                page_size: int, dsa: bool, hip: bool = False) -> int:
    """The draft decode graphs' attention state counted here (see the module's notes): a DSA draft's
    DeepseekSparseAttnMultiStepBackend, speculative_num_steps - 1 backends whose init_cuda_graph_state gets
    max_num_token = max_bs x eagle_topk (eagle_draft_cuda_graph_runner.py EAGLEDraftCudaGraphRunner.__init__, the
    target's capture sizes: get_batch_sizes_to_capture over the shared req_to_token pool; 0.5.13.post1 read); the
    indexer's scores reuse the target graphs' pool. 0 without DSA, with one step or without CUDA graphs."""
    if not dsa or hip or s.disable_cuda_graph or draft.num_steps <= 1 or not sizes:
        return 0
    if (s.attention_backend or "") not in DSA_BACKENDS:
        return 0
    tables, _ = dsa_graph_state(v, sizes, draft.eagle_topk, context_len, draft.num_draft_tokens, page_size,
                                speculative=True, backends=draft.num_steps - 1)
    return tables
