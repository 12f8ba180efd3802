"""vLLM's short option aliases and dotted keys on them, and a platform plugin's quantization method.

- `-cc` is --compilation-config's alias from 0.12.0 and `-ac` --attention-config's from 0.13.0 (engine/arg_utils.py
  add_cli_args: `"--compilation-config", "-cc"`, `"--attention-config", "-ac"`, read in the 0.28.0 source). Both
  were parsed and then dropped: `-cc '{"cudagraph_mode": "NONE"}'` left the default graphs in the estimate.
- FlexibleArgumentParser.parse_args (vllm/utils/argparse_utils.py, 0.9.2 and 0.24.0-0.28.0 read) takes dotted keys
  on any option starting with "-": `-cc.pass_config.fuse_allreduce_rms=False` (vllm-project/vllm#40955's command)
  is the JSON object `-cc '{"pass_config": {"fuse_allreduce_rms": "False"}}'`; it was refused as an unknown flag.
- `-q ascend` is vllm-ascend's method (vllm_ascend/utils.py ASCEND_QUANTIZATION_METHOD, registered by the plugin's
  ModelSlim config; vllm-project/vllm-ascend#6481's command): refused naming the plugin, not as a typo.
"""

from __future__ import annotations

import pytest

from oomkit.engines.vllm.args import parse_args
from tests.hardware_fakes import run_oomkit


def settings(*argv: str):
    return parse_args(["serve", "Qwen/Qwen3-8B", *argv], env={})[2]


def test_cc_alias_is_the_compilation_config():
    assert settings().cudagraph_mode is None
    assert settings("-cc", '{"cudagraph_mode": "NONE"}').cudagraph_mode == "NONE"
    assert settings("-cc", '{"cudagraph_capture_sizes": [8, 1, 4]}').cudagraph_capture_sizes == (1, 4, 8)
    assert settings("--compilation-config", '{"cudagraph_mode": "NONE"}').cudagraph_mode == "NONE"


def test_dotted_keys_on_the_short_alias():
    assert settings("-cc.cudagraph_mode=FULL_DECODE_ONLY").cudagraph_mode == "FULL_DECODE_ONLY"
    assert settings("-cc.max_cudagraph_capture_size", "64").max_cudagraph_capture_size == 64
    # a key oomkit does not read leaves the rest of the command as typed
    s = settings("-cc.pass_config.fuse_allreduce_rms=False", "--max-model-len", "8192")
    assert s.max_model_len == 8192 and s.cudagraph_mode is None
    # -O keeps its own reading (the level), a negative number stays a value
    assert settings("-O.level=3").optimization_level == 3


def test_ac_alias_is_the_attention_config():
    assert settings("-ac", '{"backend": "FLASHINFER"}').attention_backend == "FLASHINFER"
    assert settings("-ac.backend=TRITON_ATTN").attention_backend == "TRITON_ATTN"


@pytest.mark.parametrize("argv", [
    ["vllm", "serve", "Qwen/Qwen2.5-72B-Instruct", "-q", "ascend", "--trust_remote_code"],
    ["vllm", "serve", "Qwen/Qwen2.5-72B-Instruct", "--quantization=ascend"],
])
def test_ascend_quantization_names_the_plugin(argv):
    r = run_oomkit("check", "--gpu", "8x H100", "--", *argv)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "vllm-ascend" in lines[0] and "Traceback" not in r.stderr, r.stderr
