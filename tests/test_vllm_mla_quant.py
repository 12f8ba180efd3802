"""vLLM's ModelConfig.use_mla (config.py) by release: 0.7.1-0.7.2 turn DeepSeek's MLA off for any quantization but
fp8 ("MLA is not supported with %s quantization. Disabling MLA."; compressed-tensors only with "fp8" group types, which
it never writes), 0.7.3 drops that check;
VLLM_MLA_DISABLE=1 turns it off (every sdist read, 0.7.1 to 0.34.0). Off, DeepseekV2Attention caches every head's K
and V at qk_nope + qk_rope = 192 (Attention(num_local_heads, qk_head_dim)). No log of such a start was found: the
figures are the sdists' arithmetic."""

from __future__ import annotations

import json

import pytest

from oomkit.cli import main


def _per_token(capsys, version: str, model: str, env: tuple[str, ...] = ()) -> int:
    argv = ["vllm", "serve", model, "--trust-remote-code", "--max-model-len", "64000", "--tensor-parallel-size", "8",
            "--enforce-eager"]
    rc = main(["check", "--gpu", "8x H100 80GB", "--engine-version", version, "--json", "--", *env, *argv])
    out = capsys.readouterr().out
    assert rc in (0, 1), out
    return json.loads(out)["estimate"]["kv_bytes_per_token"]


HEADS = 8 * 60 * 16 * 192 * 2 * 2  # 8 ranks x 60 layers x 16 heads a rank x (K + V at 192) x 2 bytes
LATENT = 8 * 60 * (512 + 64) * 2  # the latent row on each of the 8 ranks


@pytest.mark.parametrize("version, model, expected", [
    ("0.7.1", "deepseek-ai/DeepSeek-Coder-V2-Instruct:awq", HEADS),
    ("0.7.2", "deepseek-ai/DeepSeek-Coder-V2-Instruct:gptq", HEADS),
    ("0.7.2", "deepseek-ai/DeepSeek-Coder-V2-Instruct:fp8", LATENT),
    ("0.7.2", "deepseek-ai/DeepSeek-Coder-V2-Instruct", LATENT),
    ("0.7.3", "deepseek-ai/DeepSeek-Coder-V2-Instruct:awq", LATENT),
    # compressed-tensors' group types are "int" / "float", never the "fp8" 0.7.1-0.7.2 ask for: an FP8 checkpoint
    # is cached per head too (https://github.com/vllm-project/vllm/issues/12680, 0.7.1: "compressed-tensors MLA
    # support requires fp8 activations and weights in group 'group_0', but got activations type 'float' and
    # weights type 'float'")
    ("0.7.2", "deepseek-ai/DeepSeek-Coder-V2-Instruct-FP8-dynamic", HEADS),
    ("0.7.3", "deepseek-ai/DeepSeek-Coder-V2-Instruct-FP8-dynamic", LATENT),
])
def test_mla_off_for_quantizations_in_0_7_1_and_0_7_2(capsys, version, model, expected):
    assert _per_token(capsys, version, model) == expected


@pytest.mark.parametrize("version, expected", [("0.7.3", HEADS), ("0.8.5", HEADS), ("0.11.0", HEADS)])
def test_vllm_mla_disable(capsys, version, expected):
    assert _per_token(capsys, version, "deepseek-ai/DeepSeek-Coder-V2-Instruct",
                      ("env", "VLLM_MLA_DISABLE=1")) == expected


def test_awq_in_0_7_1_and_0_7_2_starts_as_0_7_0(capsys):
    # 0.7.1 and 0.7.2 build the same DeepseekV2Attention class as 0.7.0 (read in the three sdists) with MLA off: the
    # same cache and the same V0 profile forward, so the same pool (was 0.7.3's latent pool at 0.7.1-0.7.2)
    argv = ["vllm", "serve", "deepseek-ai/DeepSeek-Coder-V2-Instruct:awq", "--trust-remote-code", "--max-model-len",
            "64000", "--tensor-parallel-size", "8", "--enforce-eager"]
    views = {}
    for version in ("0.7.0", "0.7.1", "0.7.2"):
        rc = main(["check", "--gpu", "8x H100 80GB", "--engine-version", version, "--json", "--", *argv])
        out = capsys.readouterr().out
        assert rc in (0, 1), out
        view = json.loads(out)["estimate"]["engine_view"]
        views[version] = (view["kv_cache_tokens"], view["activation_peak_bytes"])
    assert views["0.7.1"] == views["0.7.0"] == views["0.7.2"]
