"""The first transformers release that has each architecture's modeling file, so that an older release is refused
rather than sized (it cannot load the checkpoint: AutoModelForCausalLM does not know the config's model_type).
Placed by listing transformers/models/ in the PyPI sdists: the folder absent from the release before the one named
and present in it."""

from __future__ import annotations

from ...model.spec import ModelSpec
from ..first_release import FirstRelease, arch, check
from ..versions import Version, version_str

# Checked in order; the first row a model needs and the release lacks refuses it.
FIRST_RELEASES: tuple[FirstRelease, ...] = (
    # models/qwen2/modeling_qwen2.py (Qwen2ForCausalLM, the Qwen1.5 / Qwen2 / Qwen2.5 text models): not in 4.36.2,
    # in 4.37.0
    FirstRelease(arch("qwen2"), (4, 37, 0), "Qwen2ForCausalLM (models/qwen2/modeling_qwen2.py)"),
    # models/qwen2_moe/modeling_qwen2_moe.py (Qwen2MoeForCausalLM: Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B): not in
    # 4.39.3, in 4.40.0
    FirstRelease(arch("qwen2moe"), (4, 40, 0), "Qwen2MoeForCausalLM (models/qwen2_moe/modeling_qwen2_moe.py)"),
    # models/qwen3/ and models/qwen3_moe/ (Qwen3ForCausalLM, Qwen3MoeForCausalLM): not in 4.50.3, in 4.51.0
    FirstRelease(arch("qwen3"), (4, 51, 0), "Qwen3ForCausalLM (models/qwen3/modeling_qwen3.py)"),
    FirstRelease(arch("qwen3moe"), (4, 51, 0), "Qwen3MoeForCausalLM (models/qwen3_moe/modeling_qwen3_moe.py)"),
    # models/qwen2_vl/ (Qwen2VLForConditionalGeneration): not in 4.44.2, in 4.45.0; models/qwen2_5_vl/: not in 4.48.3,
    # in 4.49.0 (both are the architecture qwen2vl here, told apart by config.json's model_type)
    FirstRelease(lambda spec: spec.hf_model_type == "qwen2_vl", (4, 45, 0),
                 "Qwen2VLForConditionalGeneration (models/qwen2_vl/modeling_qwen2_vl.py)"),
    FirstRelease(lambda spec: spec.hf_model_type == "qwen2_5_vl", (4, 49, 0),
                 "Qwen2_5_VLForConditionalGeneration (models/qwen2_5_vl/modeling_qwen2_5_vl.py)"),
)


def check_model_release(spec: ModelSpec, v: Version) -> None:
    """Refuse, in one line, a release that predates the model's architecture (FIRST_RELEASES)."""
    check(FIRST_RELEASES, spec, v, "transformers", version_str)
