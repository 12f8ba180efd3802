"""Bad input found by fuzzing the CLI (mutated engine commands, config.json fields, GGUF headers, logs and flags):
each case is a class of crash that was fixed, held to the promise of DESIGN.md: exit 2 with one line on stderr,
naming the bad value, never a traceback (or a valid answer, in time)."""

from __future__ import annotations

import pytest

from tests.hardware_fakes import oomkit_env, run_oomkit


def one_line_error(r, *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("oomkit: error: "), r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


# ---------------------------------------------------------------------------------------------------------
# plan / fit on a machine without a GPU: the reference-card note was printed before the options and the model
# were read, so a bad value's error came out as a second line after it.

@pytest.mark.parametrize("args, words", [
    (("plan", "qwen3:8b", "--min-ctx", "-1"), ("--min-ctx", "'-1'")),
    (("plan", "qwen3:8b", "--headroom", "1,024"), ("--headroom", "'1,024'")),
    (("plan", "Qwen/Qwen3-8B:Q9_K"), ("Q9_K",)),
    (("plan", "--all", "--concurrency", "NaN"), ("--concurrency", "'NaN'")),
    (("fit", "--reserve", "NaN", "--", "llama-server", "-m", "qwen3:8b"), ("--reserve", "'NaN'")),
])
def test_plan_and_fit_errors_stay_one_line_without_a_gpu(tmp_path, args, words):
    env = oomkit_env(tmp_path)
    env["HF_HUB_OFFLINE"] = "1"
    one_line_error(run_oomkit(*args, env=env), *words)


# ---------------------------------------------------------------------------------------------------------
# Settings that take more GPUs than a tier-3 candidate machine has: vLLM -tp 2 spreads one --vram over two ranks,
# and the smallest machine was named "1 x RTX 4090 ... using 47.09 GiB", twice its memory.

def test_tier3_machine_has_the_gpus_the_settings_take(tmp_path):
    import json

    env = oomkit_env(tmp_path)
    env["HF_HUB_OFFLINE"] = "1"
    r = run_oomkit("plan", "Qwen/Qwen3-8B", "--engine", "vllm", "--vram", "4GiB", "--tensor-parallel-size", "2",
                   "--limit", "1", "--json", env=env)
    assert r.returncode == 1, r.stderr
    hw = json.loads(r.stdout)["plan"]["smallest_hardware"]
    assert hw["count"] == len(hw["estimate"]["devices"]) == 2
    assert hw["needed_bytes"] <= hw["memory_bytes"]


# ---------------------------------------------------------------------------------------------------------
# --engine-version newer than the newest release modelled: the newest rules applied without a word (llama.cpp's
# build tags said so; vLLM, SGLang, Ollama, MLX, transformers releases did not). Releases within the range stay
# silent.

def _estimate_warnings(*args: str) -> list[str]:
    import contextlib
    import io
    import json

    from oomkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["estimate", "Qwen/Qwen3-8B", "--vram", "24GiB", "--json", *args])
    assert rc == 0, err.getvalue()
    return json.loads(out.getvalue())["warnings"]


@pytest.mark.parametrize("engine, version, newest", [
    ("vllm", "99.99.99", "0.34.0"), ("vllm", "v1.0", "0.34.0"), ("sglang", "0.6.0rc1", "0.5.23"),
    ("transformers", "6.0.0", "5.24.0"),
])
def test_engine_version_past_the_newest_is_said(monkeypatch, engine, version, newest):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    words = f"{engine} {version} is newer than the newest release oomkit models ({newest}): its newest rules apply"
    assert words in _estimate_warnings("--engine", engine, "--engine-version", version)
    assert not any("newer than the newest release" in w
                   for w in _estimate_warnings("--engine", engine, "--engine-version", newest))


# ---------------------------------------------------------------------------------------------------------
# A config.json integer field written as a float past any real model (1e308 is an integer to JSON and Python):
# fields outside the named ceilings (linear_value_head_dim, n_shared_experts) passed the reader, and the sizes
# built from them overflowed a float in the report (params_total), vLLM's activation and SGLang's pool sizing,
# or came out as a 309-digit parameter count in --json.

def _run(argv: list[str]) -> tuple[int, str, str]:
    import contextlib
    import io

    from oomkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


QWEN3_NEXT = {"model_type": "qwen3_next", "architectures": ["Qwen3NextForCausalLM"], "hidden_size": 2048,
              "intermediate_size": 5120, "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2,
              "head_dim": 256, "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
              "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_value_head_dim": 128,
              "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
              "shared_expert_intermediate_size": 512, "max_position_embeddings": 262144, "vocab_size": 151936,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168,
               "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
               "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1,
               "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1, "kv_lora_rank": 512,
               "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
               "max_position_embeddings": 163840, "vocab_size": 129280, "torch_dtype": "bfloat16"}


@pytest.mark.parametrize("config, field", [(QWEN3_NEXT, "linear_value_head_dim"), (DEEPSEEK_V3, "n_shared_experts"),
                                           (DEEPSEEK_V3, "q_lora_rank")])
@pytest.mark.parametrize("value", [1e308, 2**64])
@pytest.mark.parametrize("engine", ["llama.cpp", "vllm", "sglang"])
def test_config_integer_past_any_model_is_refused(tmp_path, monkeypatch, config, field, value, engine):
    import json

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "config.json").write_text(json.dumps({**config, field: value}))
    for extra in ([], ["--json"]):
        rc, out, err = _run(["estimate", str(tmp_path), "--engine", engine, "--vram", "24GiB", *extra])
        assert rc == 2 and out == "", (rc, err)
        assert err.count("\n") == 1 and err.startswith("oomkit: error: ")
        assert f"config field {field}=" in err and "more than any model's" in err
    # the same config with the field as published reads
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert _run(["estimate", str(tmp_path), "--engine", engine, "--vram", "24GiB"])[0] in (0, 1)


# ---------------------------------------------------------------------------------------------------------
# mlp_only_layers (Qwen MoE: the layers that keep a dense MLP) given as a number, a string or an object: `i in 3`
# raised TypeError (internal error) before any estimate.

QWEN3_MOE = {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048,
             "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 48,
             "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
             "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [],
             "max_position_embeddings": 40960, "vocab_size": 151936, "torch_dtype": "bfloat16"}


@pytest.mark.parametrize("value", [3, "0,1", {"a": 1}])
def test_mlp_only_layers_not_a_list_is_refused(tmp_path, monkeypatch, value):
    import json

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "config.json").write_text(json.dumps({**QWEN3_MOE, "mlp_only_layers": value}))
    rc, out, err = _run(["estimate", "--vram", "80GiB", "--", "vllm", "serve", str(tmp_path), "--max-model-len", "33"])
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("oomkit: error: ") and "config field mlp_only_layers=" in err and "not a list" in err
    # a list of the layers that keep a dense MLP is read: fewer expert weights than with none
    dense = {}
    for layers in ([], [0, 1]):
        (tmp_path / "config.json").write_text(json.dumps({**QWEN3_MOE, "mlp_only_layers": layers}))
        rc, out, err = _run(["estimate", str(tmp_path), "--engine", "vllm", "--vram", "80GiB", "--json"])
        assert rc in (0, 1), err
        dense[len(layers)] = json.loads(out)["model"]["params_total"]
    assert dense[2] < dense[0]
