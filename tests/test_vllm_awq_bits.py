"""8-bit AWQ checkpoints by vLLM release. awq_marlin.py AWQMarlinConfig.TYPE_MAP is {4: uint4, 8: uint8} in
0.5.3-0.11.2 (read in the 0.6.1, 0.7.3, 0.9.2, 0.10.2, 0.11.0 and 0.11.2 sdists) and {4: uint4} from 0.12.0 (0.12.0,
0.13.0, 0.14.0): from 0.12.0 override_quantization_method no longer claims an 8-bit checkpoint, moe_wna16.py
is_moe_wna16_compatible takes AWQ at 4 bits only, and awq.py AWQConfig.__init__ refuses it ("Currently, only 4-bit
weight quantization is supported for AWQ, but got 8 bits."); from 0.24 auto_awq.py AutoAWQConfig (TYPE_MAP {4}) says
"Unsupported num_bits = 8. Supported: 4. For 8-bit AWQ, use Marlin backend by setting backend='awq:marlin' or
backend='marlin'." (0.24.0, 0.27.0, 0.34.0). The words are vLLM's."""

from __future__ import annotations

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm import quantization as vllm_quant
from oomkit.errors import OomkitError
from tests.startup_heldout import gpus
from tests.test_vllm_startup import spec_of

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def _awq(bits: int) -> dict:
    return {"quant_method": "awq", "bits": bits, "group_size": 128, "zero_point": True, "version": "gemm"}


def _estimate(bits: int, version: str):
    return ENGINE.estimate(spec_of(LLAMA, _awq(bits)), gpus("H100 80GB", 1),
                           VllmSettings(engine_version=version, max_model_len=4096))


def test_the_width_is_read_back_from_the_bytes():
    assert vllm_quant.awq_bits(spec_of(LLAMA, _awq(8))) == 8
    assert vllm_quant.awq_bits(spec_of(LLAMA, _awq(4))) == 4


@pytest.mark.parametrize("version", ["0.6.1", "0.10.2", "0.11.0"])
def test_8bit_loads_on_awq_marlin_through_0_11(version):
    est = _estimate(8, version)
    assert est.engine_view["num_gpu_blocks"] > 0


@pytest.mark.parametrize("version,words", [
    ("0.12.0", "Currently, only 4-bit weight quantization is supported for AWQ, but got 8 bits."),
    ("0.13.0", "Currently, only 4-bit weight quantization is supported for AWQ, but got 8 bits."),
    ("0.20.0", "Currently, only 4-bit weight quantization is supported for AWQ, but got 8 bits."),
    ("0.24.0", "Unsupported num_bits = 8. Supported: 4. For 8-bit AWQ, use Marlin backend by setting "
               "backend='awq:marlin' or backend='marlin'."),
    ("0.34.0", "Unsupported num_bits = 8. Supported: 4."),
])
def test_8bit_refused_from_0_12(version, words):
    with pytest.raises(OomkitError) as e:
        _estimate(8, version)
    assert f"ValueError: {words}" in str(e.value)


@pytest.mark.parametrize("version", ["0.11.0", "0.13.0", "0.34.0"])
def test_4bit_loads_everywhere(version):
    assert _estimate(4, version).engine_view["num_gpu_blocks"] > 0
