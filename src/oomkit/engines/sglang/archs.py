"""The first SGLang release that runs each recently added architecture, so that older releases are refused rather
than sized. Placed by reading the released wheels: python/sglang/srt/models/<file>.py (its EntryClass) absent from
the release before and present in the one named; Nemotron 3 Super's latent MoE by models/nemotron_h.py reading
moe_latent_size. GLM-5.2's shared indexers are gated apart (kv.py _check_index_share_release, ERAS
glm_dsa_index_share)."""
from __future__ import annotations

from ...model.spec import ModelSpec
from ..first_release import FirstRelease, arch, check, latent_moe
from ..versions import Version

# Checked in order; the first row a model needs and the release lacks refuses it. Wheels read: the release before
# (last post release of the series before where there is one) without it, the one named with it.
FIRST_RELEASES: tuple[FirstRelease, ...] = (
    # models/nemotron_h.py: not in 0.5.3, in 0.5.3.post1 (and 0.5.3.post2/3, 0.5.4)
    FirstRelease(arch("nemotron_h", "nemotron_h_moe"), (0, 5, 3, 1), "nemotron_h model (models/nemotron_h.py)"),
    # models/nemotron_h.py reads moe_latent_size (the LatentMoE projections): not in 0.5.7, in 0.5.8
    FirstRelease(latent_moe, (0, 5, 8, 0), "latent MoE (models/nemotron_h.py moe_latent_size)"),
    # models/kimi_linear.py: not in 0.5.4.post1, in 0.5.4.post2
    FirstRelease(arch("kimi-linear"), (0, 5, 4, 2), "kimi-linear model (models/kimi_linear.py)"),
    # models/ministral3.py (Ministral3ForCausalLM: Ministral 3, Devstral Small 2; model_type ministral3, which
    # model/hf_config.py maps to mistral3): not in 0.5.6, in 0.5.6.post1
    FirstRelease(arch("mistral3"), (0, 5, 6, 1), "ministral3 model (models/ministral3.py)"),
    # models/lfm2.py and models/lfm2_moe.py: neither in 0.5.8.post1, both in 0.5.9
    FirstRelease(arch("lfm2"), (0, 5, 9, 0), "lfm2 model (models/lfm2.py)"),
    FirstRelease(arch("lfm2moe"), (0, 5, 9, 0), "lfm2moe model (models/lfm2_moe.py)"),
    # GlmMoeDsaForCausalLM (GLM-5, in models/glm4_moe.py): not in 0.5.8.post1, in 0.5.9
    FirstRelease(arch("glm_moe_dsa"), (0, 5, 9, 0), "glm_moe_dsa model (models/glm4_moe.py GlmMoeDsaForCausalLM)"),
    # models/qwen3_5.py (Qwen3.5, 3.6, 3.8): not in 0.5.8.post1, in 0.5.9
    FirstRelease(arch("qwen35", "qwen35moe"), (0, 5, 9, 0), "Qwen3.5 model (models/qwen3_5.py)"),
    # models/gemma4_causal.py / gemma4_mm.py: not in 0.5.10.post1, in 0.5.11
    FirstRelease(arch("gemma4"), (0, 5, 11, 0), "gemma4 model (models/gemma4_causal.py)"),
    # KimiK3ForConditionalGeneration: not in 0.5.16, in 0.5.17
    FirstRelease(arch("kimi-k3"), (0, 5, 17, 0), "kimi-k3 model (models/kimi_k3.py)"),
)


def _v(v: Version) -> str:
    s = ".".join(map(str, v[:3]))
    return s + (f".post{v[3]}" if len(v) > 3 and v[3] else "")


def check_model_release(spec: ModelSpec, version: Version) -> None:
    """Refuse a model the release predates: one line naming the first release that runs it."""
    check(FIRST_RELEASES, spec, version, "SGLang", _v)
