"""A separate EAGLE / EAGLE-3 drafter (--speculative-config '{"method": "eagle3", "model": ..., ...}') on vLLM's V1
model runner: its weights, its KV cache layers and its profile-run pass.

What is mirrored (vllm-project/vllm, V1 runner, 0.9.2-0.24.0):
- v1/spec_decode/eagle.py EagleProposer.load_model (llm_base_proposer.py from 0.23): the drafter is built from its
  own config (SpeculativeConfig.draft_model_config.hf_config) under the same dtype as the target; its embed_tokens
  is dropped for the target's when PP == 1 and the shapes match ("Assuming the EAGLE head shares the same vocab
  embedding with the target model"; from 0.19 also when the weights are equal, "Detected EAGLE model with
  embed_tokens identical to the target model"); method "eagle" takes the target's lm_head ("Loading EAGLE LM head
  weights from the target model"), "eagle3" keeps its own (draft_vocab_size rows, "The EAGLE head's lm_head will be
  loaded separately"; shared only when the shapes are the target's, i.e. no reduced draft vocabulary).
  The freed embed_tokens is outside "Model loading took" (DeviceMemoryProfiler reads the allocated bytes after the
  drafter's load_model, the deleted table released).
- model_executor/models/llama_eagle3.py (Eagle3LlamaForCausalLM): num_hidden_layers decoder layers whose first
  qkv_proj reads 2 x hidden (embeds and hidden states concatenated), fc = nn.Linear(3 x target_hidden, hidden)
  (replicated, not TP-split), the final norm, lm_head (draft_vocab_size x hidden) and draft_id_to_target_id
  (draft_vocab_size int64; t2d is skipped by load_weights). llama_eagle.py (EagleLlamaForCausalLM): layers of the
  drafter's widths and fc = nn.Linear(2 x hidden, hidden).
- v1/worker/gpu_model_runner.py get_kv_cache_spec: every Attention layer in the forward context gets a spec, the
  drafter's (registered under "draft" prefixes by the proposer's get_model) included, so its layers join the
  target's KV cache groups with their own heads (EagleProposer.validate_same_kv_cache_group: all in one group).
- gpu_model_runner.py _dummy_run: drafter.dummy_run(num_tokens) right after the target forward, with the target's
  outputs (and for EAGLE-3 the aux hidden states, three layers' T x hidden, returned as a tuple) still referenced.

Model runner V2 (v1/worker/gpu/, read in the 0.24.0 wheel and the 0.27.1, 0.29.0, 0.30.0 and 0.34.0 sources;
spec_decode/autoregressive/speculator.py up to 0.31, target_dependent_ar/speculator.py from 0.32, the same code):
- weights: spec_decode/eagle/utils.py load_eagle_model: maybe_share_target_embed / share_target_lm_head take the
  target's table unless the checkpoint carries its own (process_eagle_weight sets has_own_embed_tokens /
  has_own_lm_head) that differs from it, none at PP > 1 without the flag: an EAGLE-3 head's 32,000-row lm_head stays,
  an EAGLE-1 head has none: V1's rule (weight_bytes).
- KV: model_runner.py get_kv_cache_spec -> get_kv_cache_spec(vllm_config): every attention layer, the drafter's
  ("draft_attn_layer_names") included: V1's rule.
- buffers: the speculator is built in GPUModelRunner.__init__ (init_speculator) on the last stage; its
  hidden_states (max_num_batched_tokens x the draft hidden, model dtype) is V1's buffer; the rest is per request
  (draft_tokens, idx_mapping, ... max_num_seqs rows; draft logits only for draft_sample_method "probabilistic",
  default "greedy").
- profile: _dummy_run -> speculator.propose(..., is_profile=True) with the target's hidden_states and aux list alive;
  EAGLE-3 first builds torch.cat(aux_hidden_states, -1) (T x 3 target hidden) and combine_hidden_states (fc, T x
  hidden): profile_bytes.
- graphs: speculator.capture() after the target's, into the same pool (and inside profile_cudagraph_memory's
  measured delta from 0.29): its prefill_cudagraph_manager has the target's cudagraph mode and capture sizes, so
  each captured size carries the drafter's layers once, as on V1 (graph_layers). The one-token draft-decode FULL
  graphs (k >= 2; decode_cudagraph_manager, 0.29+): phases.py draft_decode_graphs.

Not modelled (a one-line error): drafters other than the Llama-style EAGLE heads (Medusa, MLP speculator,
draft_model), quantized drafters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import OomkitError
from ...model.catalog import lookup
from ...model.jsonfile import read_object

if TYPE_CHECKING:
    from ...model.spec import ModelSpec
    from .config import Resolved
    from .settings import VllmSettings

# config/speculative.py SpeculativeConfig: methods whose proposer loads a separate EAGLE-style head
EAGLE_METHODS = ("eagle", "eagle3")
# config/speculative.py: methods with no weights of their own (n-gram lookup on the CPU or GPU, suffix trees)
WEIGHTLESS_METHODS = ("ngram", "ngram_gpu", "suffix")
# model_executor/layers/vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE
VOCAB_PAD = 64


@dataclass(frozen=True)
class Drafter:
    method: str  # "eagle" or "eagle3"
    n_layers: int
    hidden: int
    n_ff: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    vocab: int
    draft_vocab: int
    target_hidden: int  # fc input width / 3 (EAGLE-3: target_hidden_size, default the drafter's hidden)


def _pad(n: int, to: int = VOCAB_PAD) -> int:
    return -(-n // to) * to


def infer_method(s: VllmSettings) -> str | None:
    """config/speculative.py SpeculativeConfig.__post_init__: with no method given, a model named "eagle-" is EAGLE,
    one naming "eagle3" EAGLE-3 (draft_model otherwise)."""
    if s.speculative_method:
        return s.speculative_method
    name = (s.speculative_model or "").lower()
    if "eagle3" in name:
        return "eagle3"
    if "eagle-" in name or "eagle" in name:
        return "eagle"
    return None


def _config_from(model: str) -> dict[str, Any]:
    """The drafter's config.json: a local checkpoint folder or a .json file, else the catalog entry of that name."""
    p = Path(model)
    for f in (p / "config.json", p):
        if f.is_file():
            try:  # bounded as config.json is: NaN, Infinity, huge integers and deep nesting refused, naming the field
                return read_object(f)
            except OomkitError as e:
                raise OomkitError(f"--speculative-config model {model}: unreadable config ({e})") from None
    entry = lookup(model)
    if entry is None:
        raise OomkitError(f"--speculative-config model {model}: the drafter's config is not in the catalog; give a "
                          "local checkpoint folder or its config.json path")
    return dict(entry.config)


def config_known(model: str) -> bool:
    """Whether the drafter's config can be read (a local folder or file, or a catalog entry): the command line
    counts the head only then, and otherwise says the drafter is not counted (args.py)."""
    p = Path(model)
    if (p / "config.json").is_file() or p.is_file():
        return True
    return lookup(model) is not None


@lru_cache(maxsize=32)
def _load(model: str, method: str) -> Drafter:
    cfg = _config_from(model)
    # speculators-format checkpoints (config.speculators_config, transformer_layer_config): vLLM reads the layer
    # config as the drafter's hf_config (transformers_utils/configs/speculators/base.py), draft_vocab_size beside it
    # and the first EAGLE checkpoints' {"model_type": "eagle", "model": {...}} wrapper (transformers_utils/configs/
    # eagle.py EAGLEConfig: the inner dict is the draft model's config)
    layer = cfg.get("transformer_layer_config") or (cfg["model"] if isinstance(cfg.get("model"), dict) else cfg)
    try:
        hidden = int(layer["hidden_size"])
        heads = int(layer["num_attention_heads"])
        d = Drafter(
            method=method,
            n_layers=int(layer.get("num_hidden_layers", 1)),
            hidden=hidden,
            n_ff=int(layer["intermediate_size"]),
            n_heads=heads,
            n_kv_heads=int(layer.get("num_key_value_heads") or heads),
            head_dim=int(layer.get("head_dim") or hidden // heads),
            vocab=int(layer.get("vocab_size") or cfg["vocab_size"]),
            draft_vocab=int(cfg.get("draft_vocab_size") or layer.get("draft_vocab_size")
                            or layer.get("vocab_size") or cfg["vocab_size"]),
            target_hidden=int(cfg.get("target_hidden_size") or layer.get("target_hidden_size") or hidden),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise OomkitError(f"--speculative-config model {model}: its config lacks {e} (an EAGLE head's Llama-style "
                          "widths are needed)") from None
    if cfg.get("quantization_config"):
        raise OomkitError(f"--speculative-config model {model}: a quantized EAGLE drafter is not modelled")
    return d


def drafter_of(s: VllmSettings, r: Resolved) -> Drafter | None:
    """The separate EAGLE head this run loads, or None (no speculation, the checkpoint's MTP layers, n-gram or
    suffix proposers). Unsupported combinations are one-line errors."""
    if not s.speculative_model or not r.num_spec:
        return None
    method = infer_method(s)
    if method in WEIGHTLESS_METHODS or (method and "mtp" in method):
        return None
    if method not in EAGLE_METHODS:
        raise OomkitError(f"--speculative-config method {method or 'draft_model'} with model {s.speculative_model}: "
                          "only EAGLE / EAGLE-3 drafters are modelled")
    if not r.v1:
        raise OomkitError("--speculative-config EAGLE drafter: vLLM's V0 spec-decode worker is not modelled")
    return _load(s.speculative_model, method)


def weight_bytes(d: Drafter, spec: ModelSpec, r: Resolved) -> int:
    """Bytes of the drafter's weights on one rank of the last stage (TP-split like the target's Llama layers; fc and
    the norms replicated), in the model dtype."""
    b, tp = r.dtype_bytes, r.tp
    h, q, kv = d.hidden, d.n_heads * d.head_dim, d.n_kv_heads * d.head_dim
    per_layer = (q + 2 * kv) * h / tp + q * h / tp + 3 * h * d.n_ff / tp + 2 * h  # qkv, o, gate_up + down, 2 norms
    total = d.n_layers * per_layer + h  # the final norm
    if d.method == "eagle3":
        total += (q + 2 * kv) * h / tp  # the first layer's qkv reads [embeds, hidden]: 2 x hidden inputs
        total += h  # its hidden_norm
        total += 3 * d.target_hidden * h  # fc (nn.Linear, replicated)
    else:
        total += 2 * h * h  # fc: nn.Linear(2 x hidden, hidden)
    embed_shared = r.pp == 1 and d.vocab == spec.n_vocab and d.hidden == spec.n_embd
    if not embed_shared:
        total += _pad(d.vocab) * h / tp
    head_shared = d.method == "eagle" or (d.draft_vocab == spec.n_vocab and d.hidden == spec.n_embd)
    out = int(total * b)
    if not head_shared:
        out += int(_pad(d.draft_vocab) * h / tp * b)
    if d.method == "eagle3" and d.draft_vocab != d.vocab:
        out += d.draft_vocab * 8  # draft_id_to_target_id, int64
    return out


def kv_heads(d: Drafter, r: Resolved) -> int:
    """ModelConfig.get_num_kv_heads for the draft model config: max(1, total // tp)."""
    return max(1, d.n_kv_heads // r.tp)


def profile_bytes(d: Drafter, spec: ModelSpec, r: Resolved) -> int:
    """What the profile run's drafter.dummy_run(T) holds above the target's forward peak: the target's output
    hidden states kept (T x hidden) and, for EAGLE-3, the three aux hidden states (T x hidden each) still
    referenced by the outputs tuple; the drafter's own forward is one decoder layer of at most the target's widths,
    so its transient peak stays under the target's (its 2 x hidden qkv input is the concatenation of two T x hidden
    rows, counted here), and the proposer's hidden_states buffer."""
    T, b = r.max_num_batched_tokens, r.dtype_bytes
    kept = T * spec.n_embd * b * (4 if d.method == "eagle3" else 1)
    concat = T * 2 * d.hidden * b
    # EagleProposer.__init__'s persistent hidden_states buffer (max_num_tokens x hidden, model dtype), built with the
    # runner after the worker's init snapshot: inside the profile's torch increase (V2: the speculator's own
    # hidden_states buffer, the same shape)
    buffer = T * d.hidden * b
    if r.runner_v2 and d.method == "eagle3":
        # V2 propose (autoregressive/speculator.py 0.24-0.31, target_dependent_ar/speculator.py 0.32-0.34):
        # combine_hidden_states(torch.cat(aux_hidden_states, dim=-1)): the T x 3 x target-hidden concatenation and
        # the fc's T x hidden output alive together; the output stays referenced ("hidden_states") through the
        # drafter's prefill, beside its 2 x hidden input concatenation
        combined = T * d.hidden * b
        return kept + buffer + max(T * 3 * d.target_hidden * b, concat) + combined
    return kept + concat + buffer


# v1/spec_decode/eagle.py: the proposer's forward is compiled and captured from 0.9.0 (PR #17211, "Apply
# torch.compile & cudagraph to EAGLE"): gpu_model_runner.py _capture_cudagraphs -> _dummy_run(num_tokens) ->
# drafter.dummy_run(num_tokens, use_cudagraphs=True) for every capture size, into the same global graph pool, so each
# graph of the last stage carries the drafter's layers beside the target's
DRAFTER_GRAPHS_FROM = (0, 9, 0)


def graph_layers(s: VllmSettings, r: Resolved, last_stage: bool) -> int:
    """Decoder layers the drafter adds to each captured graph of a rank (0 off the last stage or without a drafter)."""
    if not last_stage or r.version < DRAFTER_GRAPHS_FROM or s.enforce_eager:
        return 0
    d = drafter_of(s, r)
    return d.n_layers if d is not None else 0


def mtp_layers_loaded(s: VllmSettings, r: Resolved) -> bool:
    """Whether the checkpoint's own MTP (next-n) layers load as the drafter: speculation with a method naming MTP, or
    num_speculative_tokens alone (config/speculative.py: no model -> the target's checkpoint, its method from the
    draft config's model type). A separate drafter (EAGLE, draft_model, Medusa) or a proposer without weights (ngram,
    suffix) leaves them unloaded (their layers are not built: the MTP model class is the drafter's architecture)."""
    if not r.num_spec:
        return False
    method = infer_method(s)
    if method is None:
        return not s.speculative_model
    return "mtp" in method
