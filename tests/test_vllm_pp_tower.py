"""vLLM under pipeline parallelism: which stages build a multimodal model's tower and load its weights.

Read in the wheels (model_executor/models/*.py __init__, interfaces.py _mark_tower_model, utils.py
AutoWeightsLoader._load_module and is_pp_missing_parameter):

- up to 0.14 every model class oomkit reads a tower of (gemma3_mm.py, qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py,
  qwen3_vl_moe.py, qwen3_omni_moe_thinker.py, mllama4.py, llava.py, mistral3.py, pixtral.py, internvl.py,
  kimi_vl.py, glm4_1v.py; 0.8.5, 0.10.1, 0.11.0, 0.13.0, 0.14.0) builds it in __init__ unconditionally or on the
  --limit-mm-per-prompt values alone; the is_first_rank tests in qwen3_vl.py / qwen3_vl_moe.py /
  qwen3_omni_moe_thinker.py guard the embedding and the deepstack addition, not self.visual;
- 0.15 to 0.32 (0.15.1, 0.16.0, 0.17.0, 0.19.0, 0.20.0, 0.27.0, 0.28.0, 0.32.0) the tower is built inside
  _mark_tower_model, which skips it for the limits only (kimi_k25.py builds its tower unmarked in 0.15.1);
- 0.33 adds `or (vllm_config.use_v2_model_runner and not get_pp_group().is_first_rank)`, 0.34 drops the runner
  test: the stages after the first hold a StageMissingLayer, whose weights the loader skips.

A built tower is allocated while the model is built and its weights load on that stage (the loader skips only
PPMissingLayer / StageMissingLayer), so up to 0.32 (0.33 under runner V1) every stage's "Model loading took" holds
its TP share of the tower (weights.tower_on_stage; settings.ERAS tower_first_stage_v2, tower_first_stage).

The same classes decide whether a tower is built at all when --limit-mm-per-prompt sets every modality it serves to
0 (weights.tower_built): from 0.15 _mark_tower_model skips it for every class (its modalities as each class passes
them: image and video for the Qwen-VL family, InternVL, GLM-4.1V/4.5V, Gemma 4; image for Gemma 3, LLaVA,
Mistral 3, Llama 4, Kimi-VL; vision_chunk for Kimi-K2.5/2.6, marked from 0.16.0); from 0.10.1 to 0.14 only the
classes with their own test (qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py, qwen3_vl_moe.py, mllama4.py, llava.py,
mistral3.py) leave it out, the others build it anyway; before 0.10.1 every class builds it.

Public log: the Kimi-K2.6 INT4 TP8 x PP2 run on 0.15.1 (tests/test_vllm_sglang_heldout3.py, kaitakuai/experiments
2026-05/kimi-k26-int4-2x8xh100/logs/vllm.log) prints "Model loading took 35.83 GiB" (stage 0: 31 layers and the
embedding) and "35.69 GiB" (stage 1: 30 layers and the lm_head), 0.14 GiB apart; with the tower on the first stage
only oomkit put them 0.25 GiB apart (stage 1 -1.02 %), with it on both 0.141 GiB (stage 1 -0.71 %, the same
-0.71 % as stage 0: what is left is common to both stages). Its stage-1 encoder-cache line ("Encoder cache will be
initialized with a budget of 32768 tokens", from a worker on the second node) shows a stage after the first
profiling the tower.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.vllm import VllmSettings
from oomkit.engines.vllm.config import resolve
from oomkit.engines.vllm.weights import tower_on_stage, weights_by_rank
from oomkit.hardware.catalog import lookup as gpu_lookup
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from tests.test_vllm_startup import spec_of


def _gpus(n: int) -> tuple[Device, ...]:
    part = gpu_lookup("H100")
    return tuple(with_facts(Device(f"CUDA{i}", part.name, part.memory_bytes)) for i in range(n))


def _tower_per_stage(model: str, version: str, pp: int = 2, tp: int = 1, **kw) -> tuple[int, ...]:
    """What the tower adds to each stage's load: the stage's weights with the spec's towers against without."""
    spec = spec_of(model)
    s = VllmSettings(engine_version=version, pipeline_parallel_size=pp, tensor_parallel_size=tp, max_model_len=4096,
                     max_num_batched_tokens=4096, **kw)
    r = resolve(spec, _gpus(pp * tp), s)
    with_tower = weights_by_rank(spec, s, r)
    without = weights_by_rank(replace(spec, towers=()), s, r)
    return tuple(a - b for a, b in zip(with_tower, without, strict=True))


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _tower(model: str, tp: int = 1) -> int:
    return sum(-(-t.nbytes(2) // tp) for t in spec_of(model).towers)


# (model, the first release read with its class, the model file)
CLASSES = [
    ("Qwen/Qwen2-VL-7B-Instruct", "0.10.1", "qwen2_vl.py"),
    ("Qwen/Qwen2.5-VL-7B-Instruct", "0.10.1", "qwen2_5_vl.py"),
    ("google/gemma-3-27b-it", "0.10.1", "gemma3_mm.py"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "0.10.1", "mllama4.py"),
    ("llava-hf/llava-1.5-7b-hf", "0.10.1", "llava.py"),
    ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", "0.10.1", "mistral3.py"),
    ("moonshotai/Kimi-VL-A3B-Instruct", "0.10.1", "kimi_vl.py"),
    ("zai-org/GLM-4.5V", "0.10.1", "glm4_1v.py"),
    ("Qwen/Qwen3.5-27B", "0.17.0", "qwen3_5.py"),
]


@pytest.mark.parametrize(("model", "first", "source"), CLASSES, ids=[c[2] for c in CLASSES])
def test_tower_on_every_stage_up_to_0_32(model, first, source):
    tower = _tower(model)
    assert tower > 0
    later = [v for v in ("0.15.1", "0.27.0", "0.32.0") if _v(v) > _v(first)]
    for version in (first, *later):
        assert _tower_per_stage(model, version) == (tower, tower), (source, version)


@pytest.mark.parametrize(("model", "first", "source"), CLASSES, ids=[c[2] for c in CLASSES])
def test_tower_on_the_first_stage_only_from_0_34(model, first, source):
    tower = _tower(model)
    assert _tower_per_stage(model, "0.34.0") == (tower, 0), source
    assert _tower_per_stage(model, "0.34.0", pp=3) == (tower, 0, 0), source


@pytest.mark.parametrize(("model", "first", "source"), CLASSES, ids=[c[2] for c in CLASSES])
def test_0_33_by_runner(model, first, source):
    # interfaces.py 0.33.0 _mark_tower_model: `vllm_config.use_v2_model_runner and not get_pp_group().is_first_rank`
    tower = _tower(model)
    assert _tower_per_stage(model, "0.33.0", use_v2_model_runner=False) == (tower, tower), source
    assert _tower_per_stage(model, "0.33.0", use_v2_model_runner=True) == (tower, 0), source


def test_tp_share_on_each_stage():
    # the tower's linear layers are tensor-parallel on every stage that builds it
    tower = _tower("Qwen/Qwen2.5-VL-7B-Instruct", tp=2)
    assert _tower_per_stage("Qwen/Qwen2.5-VL-7B-Instruct", "0.32.0", tp=2) == (tower, tower)
    assert _tower_per_stage("Qwen/Qwen2.5-VL-7B-Instruct", "0.34.0", tp=2) == (tower, 0)


def test_qwen3_vl_tower_and_deepstack_buffers_together():
    # qwen3_vl.py: the deepstack buffers follow the tower (three levels x 4,096 tokens x 4,096 hidden x 2 B)
    tower = _tower("Qwen/Qwen3-VL-8B-Instruct") + 3 * 4096 * 4096 * 2
    assert _tower_per_stage("Qwen/Qwen3-VL-8B-Instruct", "0.11.0") == (tower, tower)
    assert _tower_per_stage("Qwen/Qwen3-VL-8B-Instruct", "0.32.0") == (tower, tower)
    assert _tower_per_stage("Qwen/Qwen3-VL-8B-Instruct", "0.34.0") == (tower, 0)


def test_tower_on_stage_boundaries():
    def r(version: str, v2: bool | None = None):
        spec = spec_of("Qwen/Qwen2.5-VL-7B-Instruct")
        s = VllmSettings(engine_version=version, pipeline_parallel_size=2, max_model_len=4096,
                         use_v2_model_runner=v2)
        return resolve(spec, _gpus(2), s)
    for version, v2, later in (("0.14.0", None, True), ("0.15.1", None, True), ("0.32.0", None, True),
                               ("0.32.0", True, True), ("0.33.0", False, True), ("0.33.0", True, False),
                               ("0.34.0", None, False)):
        res = r(version, v2)
        assert tower_on_stage(res, True) is True
        assert tower_on_stage(res, False) is later, (version, v2)


# ---------------------------------------------------------------------------------------------------------------
# --limit-mm-per-prompt at 0 for every modality a tower serves: not built (weights.tower_built; settings.ERAS
# tower_limits_guard, tower_marked)

NO_IMAGE = (("image", 0),)
NO_MM = (("image", 0), ("video", 0))


def _one(model: str, version: str, limits) -> int:
    return _tower_per_stage(model, version, pp=1, limit_mm_per_prompt=limits)[0]


@pytest.mark.parametrize(("model", "limits"), [
    ("Qwen/Qwen2.5-VL-7B-Instruct", NO_MM), ("Qwen/Qwen2-VL-7B-Instruct", NO_MM),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", NO_IMAGE), ("llava-hf/llava-1.5-7b-hf", NO_IMAGE),
    ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", NO_IMAGE)])
def test_classes_guarded_by_the_limits_from_0_10_1(model, limits):
    # qwen2_vl.py, qwen2_5_vl.py, mllama4.py, llava.py, mistral3.py __init__: self.visual / vision_tower None
    tower = _tower(model)
    assert _one(model, "0.10.0", limits) == tower  # no guard in the 0.10.0 wheel
    for version in ("0.10.1", "0.14.0", "0.15.1", "0.34.0"):
        assert _one(model, version, limits) == 0, version


@pytest.mark.parametrize(("model", "limits"), [
    ("google/gemma-3-27b-it", NO_IMAGE), ("moonshotai/Kimi-VL-A3B-Instruct", NO_IMAGE), ("zai-org/GLM-4.5V", NO_MM),
    ("Qwen/Qwen3-Omni-30B-A3B-Instruct", NO_MM)])
def test_unguarded_classes_build_the_tower_until_mark_tower_model(model, limits):
    # gemma3_mm.py, kimi_vl.py, glm4_1v.py, qwen3_omni_moe_thinker.py build it whatever the limits up to 0.14
    tower = _tower(model)
    first = "0.10.1"
    if "Omni" in model:  # and its deepstack buffers with it: three levels x 4,096 tokens x 2,048 hidden x 2 B
        tower, first = tower + 3 * 4096 * 2048 * 2, "0.13.0"
    assert _one(model, first, limits) == tower
    assert _one(model, "0.14.0", limits) == tower
    assert _one(model, "0.15.1", limits) == 0
    assert _one(model, "0.34.0", limits) == 0


def test_a_tower_serving_image_and_video_needs_both_at_0():
    # _mark_tower_model(vllm_config, {"image", "video"}): all(get_limit_per_prompt(m) == 0 ...), an unnamed
    # modality 999 (config/multimodal.py)
    tower = _tower("Qwen/Qwen2.5-VL-7B-Instruct")
    assert _one("Qwen/Qwen2.5-VL-7B-Instruct", "0.15.1", NO_IMAGE) == tower
    assert _one("Qwen/Qwen2.5-VL-7B-Instruct", "0.15.1", (("image", 0), ("video", 1))) == tower
    assert _one("Qwen/Qwen2.5-VL-7B-Instruct", "0.15.1", (("image", 2), ("video", 0))) == tower


def test_kimi_k25_tower_by_vision_chunk():
    # kimi_k25.py: the tower serves "vision_chunk"; built unconditionally in 0.15.1, _mark_tower_model(vllm_config,
    # "vision_chunk") from 0.16.0
    tower = _tower("moonshotai/Kimi-K2.6")
    assert _one("moonshotai/Kimi-K2.6", "0.16.0", NO_IMAGE) == tower
    assert _one("moonshotai/Kimi-K2.6", "0.15.1", (("vision_chunk", 0),)) == tower
    assert _one("moonshotai/Kimi-K2.6", "0.16.0", (("vision_chunk", 0),)) == 0
