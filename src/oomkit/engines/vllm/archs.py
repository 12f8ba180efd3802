"""The first vLLM release that runs each recently added architecture, so that older releases are refused rather
than sized. Placed by reading vllm/model_executor/models/registry.py (_TEXT_GENERATION_MODELS /
_MULTIMODAL_MODELS) in the released wheels: the class is absent from the release before and present from the one
named. Features newer than their architecture (Nemotron 3 Super's latent MoE, GLM-5.2's shared indexers) are placed
by reading the model file in the same wheels."""
from __future__ import annotations

from ...model.spec import ModelSpec
from ..first_release import FirstRelease, arch, check, latent_moe, shared_indexers
from ..versions import Version, version_str

# Checked in order; the first row a model needs and the release lacks refuses it. Wheels read (registry.py): the
# class absent in the first release's predecessor, present in it.
FIRST_RELEASES: tuple[FirstRelease, ...] = (
    # MllamaForConditionalGeneration (Llama 3.2 Vision): not in 0.6.1.post2, in 0.6.2 (PR #8811); gone after
    # 0.10.2 (config.py MLLAMA_LAST)
    FirstRelease(arch("mllama"), (0, 6, 2), "MllamaForConditionalGeneration (models/mllama.py)"),
    # the Mamba-style models V0 sizes with MambaCacheManager (kv.v0_mamba_cache_bytes), read in the sdists'
    # models/ folders: JambaForCausalLM not in 0.5.0, in 0.5.1; MambaForCausalLM not in 0.6.2, in 0.6.3;
    # Mamba2ForCausalLM not in 0.7.2, in 0.7.3; FalconH1ForCausalLM and GraniteMoeHybridForCausalLM not in 0.8.5, in
    # 0.9.0
    FirstRelease(arch("jamba"), (0, 5, 1), "JambaForCausalLM (models/jamba.py)"),
    FirstRelease(arch("mamba"), (0, 6, 3), "MambaForCausalLM (models/mamba.py)"),
    FirstRelease(arch("mamba2"), (0, 7, 3), "Mamba2ForCausalLM (models/mamba2.py)"),
    FirstRelease(arch("falcon-h1"), (0, 9, 0), "FalconH1ForCausalLM (models/falcon_h1.py)"),
    FirstRelease(arch("granitehybrid"), (0, 9, 0), "GraniteMoeHybridForCausalLM (models/granitemoehybrid.py)"),
    # NemotronHForCausalLM: not in 0.9.0, in 0.9.1
    FirstRelease(arch("nemotron_h", "nemotron_h_moe"), (0, 9, 1), "NemotronHForCausalLM (models/nemotron_h.py)"),
    # models/nemotron_h.py reads moe_latent_size (fc1/fc2_latent_proj around the routed experts): not in 0.12.0,
    # in 0.13.0; without it the experts would be built hidden-wide and the checkpoint would not load
    FirstRelease(latent_moe, (0, 13, 0), "latent MoE (models/nemotron_h.py moe_latent_size)"),
    # Lfm2ForCausalLM: not in 0.10.1, in 0.10.2; Lfm2MoeForCausalLM: not in 0.11.0, in 0.11.1
    FirstRelease(arch("lfm2"), (0, 10, 2), "Lfm2ForCausalLM (models/lfm2.py)"),
    FirstRelease(arch("lfm2moe"), (0, 11, 1), "Lfm2MoeForCausalLM (models/lfm2_moe.py)"),
    # KimiLinearForCausalLM: not in 0.11.0, in 0.11.1
    FirstRelease(arch("kimi-linear"), (0, 11, 1), "KimiLinearForCausalLM (models/kimi_linear.py)"),
    # GlmMoeDsaForCausalLM (GLM-5): not in 0.15.1, in 0.16.0
    FirstRelease(arch("glm_moe_dsa"), (0, 16, 0), "GlmMoeDsaForCausalLM"),
    # GLM-5.2's IndexShare: models/deepseek_v2.py derives the layers that skip the top-k from index_topk_freq and
    # index_skip_topk_offset from 0.23.0; 0.21.0-0.22.0 read the frequency only, behind use_index_cache, with the
    # offset fixed at what 2 gives (max(layer_id - 1, 0) % freq), 0.20.0 and older build every indexer
    FirstRelease(shared_indexers, (0, 23, 0), "shared (IndexShare) indexers as the checkpoint lays them out "
                 "(models/deepseek_v2.py index_skip_topk_offset)"),
    # Qwen3_5ForConditionalGeneration / Qwen3_5MoeForConditionalGeneration (Qwen3.5, 3.6, 3.8): not in 0.16.0,
    # in 0.17.0
    FirstRelease(arch("qwen35", "qwen35moe"), (0, 17, 0), "Qwen3_5(Moe)ForConditionalGeneration (models/qwen3_5.py)"),
    # Gemma4ForConditionalGeneration: not in 0.18.1, in 0.19.0
    FirstRelease(arch("gemma4"), (0, 19, 0), "Gemma4ForConditionalGeneration (models/gemma4.py)"),
    # KimiK3ForConditionalGeneration: not in 0.26.0, in 0.27.0
    FirstRelease(arch("kimi-k3"), (0, 27, 0), "KimiK3ForConditionalGeneration"),
)


def check_model_release(spec: ModelSpec, version: Version) -> None:
    """Refuse a model the release predates: one line naming the first release that runs it."""
    check(FIRST_RELEASES, spec, version, "vLLM", version_str)
