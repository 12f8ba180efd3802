"""Launch commands from SGLang's and vLLM's own docs and recipes, held against the flag tables read from the wheels
(engines/data/sglang_flags.json, tools/build_sglang_flags.py; engines/data/vllm_flags.json,
tools/build_vllm_flags.py; engines/release_flags.py).

Each command is copied from the file named (sgl-project/sglang docs/basic_usage/*.md, vllm-project/recipes *.md),
with shell variables filled in. At the newest release read every one parses, except those that type a flag the
newest parser does not define; those were checked in the wheels:

- --nsa-prefill-backend / --nsa-decode-backend (docs/basic_usage/deepseek_v32.md): 0.5.13-0.5.19 server_args.py
  add_cli_args defines them as DeprecatedAliasStoreAction aliases ("[Deprecated] Use --dsa-prefill-backend
  instead."); 0.5.20's arg_groups/fields/exec_.py has only dsa_prefill_backend / dsa_decode_backend, and no file of
  the 0.5.20, 0.5.21 or 0.5.23 wheel names the old spelling: argparse refuses it.
- --enable-nsa-prefill-context-parallel (same page): 0.5.19 server_args.py, DeprecatedStoreTrueAction with
  new_flag="--enable-prefill-cp"; gone from 0.5.20.
- --keep-mm-feature-on-device (docs/basic_usage/qwen3_vl.md): 0.5.20 arg_groups/fields/mm.py "Deprecated. Use
  --mm-feature-transport=cuda_ipc ..." (serving_hook.py warns "--keep-mm-feature-on-device is deprecated; using
  --mm-feature-transport=cuda_ipc instead."); not in 0.5.21's fields/mm.py.
- --disable-log-requests (vLLM): 0.16.0 engine/arg_utils.py AsyncEngineArgs.add_cli_args, BooleanOptionalAction with
  deprecated=True ("[DEPRECATED] Disable logging requests."); 0.17.0 defines only --enable-log-requests and
  utils/argparse_utils.py FlexibleArgumentParser.parse_args rewrites no old name: argparse refuses it.

So each is refused from the release that dropped it, naming the replacement the last release's help gives, and
parses with --engine-version of that last release.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines.shell_words import split_command
from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (offline: the autouse fixture)

DATA = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "engines" / "data"
SG = "sgl-project/sglang docs/basic_usage/"
VR = "vllm-project/recipes "

# (source, command): each parses at the newest release read
PARSES = [
    (SG + "deepseek_v32.md", "python -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2-Exp --tp 8 --dp 8 "
                             "--enable-dp-attention"),
    (SG + "deepseek_v32.md", "python -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2-Exp --tp 8 --ep 8 "
                             "--dp 8 --enable-dp-attention"),
    (SG + "deepseek_v32.md", "python -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2-Exp --tp 8 --dp 8 "
                             "--enable-dp-attention --speculative-algorithm EAGLE --speculative-num-steps 3 "
                             "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4"),
    (SG + "deepseek_v32.md", "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 "
                             "--trust-remote-code --tp-size 8 --dp-size 8 --enable-dp-attention "
                             "--tool-call-parser deepseekv32 --reasoning-parser deepseek-v3"),
    (SG + "deepseek_v32.md", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2-Exp "
                             "--disaggregation-mode prefill --host 10.0.0.1 --port 30000 --tp 8 --dp 8 "
                             "--enable-dp-attention --dist-init-addr 10.0.0.1:5000 --trust-remote-code "
                             "--disaggregation-bootstrap-port 8998 --mem-fraction-static 0.9"),
    (SG + "deepseek_v3.md", "python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-V3-0324 --tp 8 --port 30000 "
                            "--host 0.0.0.0 --mem-fraction-static 0.9 --tool-call-parser deepseekv3 "
                            "--chat-template ./examples/chat_template/tool_chat_template_deepseekv3.jinja"),
    (SG + "qwen3_vl.md", "python -m sglang.launch_server --model-path Qwen/Qwen3-VL-235B-A22B-Instruct --host 0.0.0.0 "
                         "--port 30000 --trust-remote-code --tp-size 8 --enable-cache-report --log-level info "
                         "--max-running-requests 64 --mem-fraction-static 0.65 --chunked-prefill-size 8192 "
                         "--attention-backend fa3 --mm-attention-backend fa3 --enable-metrics"),
    (SG + "gpt_oss.md", "python3 -m sglang.launch_server --model-path openai/gpt-oss-120b --tool-server demo --tp 2"),
    (SG + "glm45.md", "python3 -m sglang.launch_server --model-path zai-org/GLM-4.6-FP8 --tp-size 8 "
                      "--tool-call-parser glm45 --reasoning-parser glm45 --speculative-algorithm EAGLE "
                      "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
                      "--mem-fraction-static 0.9 --served-model-name glm-4.6-fp8 --enable-custom-logit-processor"),
    (SG + "qwen3_5.md", "python3 -m sglang.launch_server --model-path Qwen/Qwen3.5-397B-A17B --tp 8 "
                        "--attention-backend triton --trust-remote-code"),
    (SG + "qwen3_5.md", "python3 -m sglang.launch_server --model-path Qwen/Qwen3.5-397B-A17B --tp 8 "
                        "--trust-remote-code --reasoning-parser qwen3 --tool-call-parser qwen3_coder"),
    (VR + "DeepSeek/DeepSeek-V3_2.md", "vllm serve deepseek-ai/DeepSeek-V3.2 --tensor-parallel-size 8 "
                                       "--tokenizer-mode deepseek_v32 --tool-call-parser deepseek_v32 "
                                       "--reasoning-parser deepseek_v3"),
    (VR + "Qwen/Qwen3-Next.md", "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4 "
                                "--served-model-name qwen3-next"),
    (VR + "Qwen/Qwen3-Next.md", "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tokenizer-mode auto "
                                "--gpu-memory-utilization 0.8 --speculative-config '{\"method\": \"qwen3_next_mtp\", "
                                "\"num_speculative_tokens\": 2}' --tensor-parallel-size 4 --no-enable-chunked-prefill"),
    (VR + "OpenAI/GPT-OSS.md", "vllm serve openai/gpt-oss-120b --tensor-parallel-size=8 --attention-backend "
                               "ROCM_AITER_UNIFIED_ATTN -cc.pass_config.fuse_rope_kvcache=True "
                               "-cc.use_inductor_graph_partition=True --gpu-memory-utilization 0.95 --block-size=64"),
    (VR + "OpenAI/GPT-OSS.md", "vllm serve openai/gpt-oss-120b --tensor_parallel_size 8 --max-model-len 131072 "
                               "--max-num-batched-tokens 10240 --max-num-seqs 128 --gpu-memory-utilization 0.85 "
                               "--no-enable-prefix-caching"),
    (VR + "OpenAI/GPT-OSS.md", "vllm serve openai/gpt-oss-120b --tool-server demo --tool-call-parser openai "
                               "--enable-auto-tool-choice"),
    (VR + "Qwen/Qwen3-VL.md", "vllm serve Qwen/Qwen3-VL-235B-A22B-Instruct --tensor-parallel-size 8 "
                              "--limit-mm-per-prompt.video 0 --mm-encoder-tp-mode data --mm-processor-cache-type shm "
                              "--async-scheduling --gpu-memory-utilization 0.95"),
    (VR + "Qwen/Qwen3-VL.md", "vllm serve Qwen/Qwen3-VL-235B-A22B-Instruct --tensor-parallel-size 8 "
                              "--mm-encoder-tp-mode data --quantization fp8 --mm-processor-cache-type shm "
                              "--async-scheduling"),
    (VR + "Llama/Llama3.3-70B.md (Llama3.3_Hopper.yaml as flags)",
     "vllm serve nvidia/Llama-3.3-70B-Instruct-FP8 --kv-cache-dtype fp8 --async-scheduling --no-enable-prefix-caching "
     "--max-num-batched-tokens 8192 --tensor-parallel-size 1 --max-num-seqs 512 --max-model-len 10240"),
]


def _check(cmd: str, version: str | None = None) -> tuple[int, str]:
    rc, _, err = run_cli("check", "--gpu", "H200", "--json", *(["--engine-version", version] if version else []),
                         "--", *split_command(cmd))
    one_line_or_answer(rc, err, cmd)
    return rc, err


@pytest.mark.parametrize("source,cmd", PARSES, ids=[f"{s.split()[-1]}-{i}" for i, (s, _) in enumerate(PARSES)])
def test_a_docs_command_parses_at_the_newest_release(source, cmd):
    rc, err = _check(cmd)
    assert rc in (0, 1), (source, err)


# (source, command, flag, the last release read whose parser has it, the first without it, the replacement named)
DROPPED = [
    (SG + "deepseek_v32.md", "python -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2-Exp --tp 8 --dp 8 "
                             "--enable-dp-attention --nsa-prefill-backend flashmla_sparse --nsa-decode-backend fa3",
     "--nsa-prefill-backend", "0.5.19", "0.5.20", "Use --dsa-prefill-backend instead"),
    (SG + "deepseek_v32.md", "python -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2-Exp --tp 8 --ep 8 "
                             "--dp 2 --enable-dp-attention --enable-nsa-prefill-context-parallel "
                             "--max-running-requests 32",
     "--enable-nsa-prefill-context-parallel", "0.5.19", "0.5.20", "Use --enable-prefill-cp instead"),
    (SG + "qwen3_vl.md", "python3 -m sglang.launch_server --model-path Qwen/Qwen3-VL-235B-A22B-Instruct-FP8 --tp 8 "
                         "--ep 8 --host 0.0.0.0 --port 30000 --keep-mm-feature-on-device",
     "--keep-mm-feature-on-device", "0.5.20", "0.5.21", "Use --mm-feature-transport=cuda_ipc"),
    ("vLLM docs (AsyncEngineArgs, before 0.17.0)", "vllm serve Qwen/Qwen3-8B --disable-log-requests",
     "--disable-log-requests", "0.16.0", "0.17.0", "--enable-log-requests"),
]


@pytest.mark.parametrize("source,cmd,flag,last,gone,replacement", DROPPED, ids=[d[2] for d in DROPPED])
def test_a_flag_the_newest_parser_dropped_is_refused_naming_its_replacement(source, cmd, flag, last, gone,
                                                                             replacement):
    rc, err = _check(cmd)
    assert rc == 2 and f"unrecognized arguments: {flag}" in err, (source, err)
    assert f"last read in the {last} wheel, gone from {gone}'s" in err and replacement in err, err
    rc, err = _check(cmd, gone)
    assert rc == 2 and f"unrecognized arguments: {flag}" in err, (source, err)
    rc, err = _check(cmd, last)
    assert rc in (0, 1), (source, last, err)


def test_the_deprecation_notes_read_from_the_wheels():
    """tools/build_sglang_flags.py keeps each flag's deprecation text: the help of the newest release read that has
    it (0.5.19 server_args.py; 0.5.20 arg_groups/fields/mm.py), from the first release read that marks it."""
    sg = json.loads((DATA / "sglang_flags.json").read_text(encoding="utf-8"))
    dep = sg["deprecated"]
    assert dep["--nsa-prefill-backend"] == ["0.5.13", "[Deprecated] Use --dsa-prefill-backend instead."]
    assert dep["--nsa-decode-backend"] == ["0.5.13", "[Deprecated] Use --dsa-decode-backend instead."]
    assert dep["--keep-mm-feature-on-device"][1].startswith("Deprecated. Use --mm-feature-transport=cuda_ipc")
    assert sg["spans"]["--nsa-prefill-backend"] == [["0.5.4", "0.5.19"]]
    assert sg["spans"]["--dsa-prefill-backend"] == [["0.5.13", "0.5.23"]]
    assert sg["spans"]["--keep-mm-feature-on-device"] == [["0.5.3", "0.5.20"]]
    # 0.5.23 arg_groups/fields: "... The fallback to that flag for external linkers is deprecated" speaks of another
    # flag, so --unified-cache-external-linker-config is not marked
    assert "--unified-cache-external-linker-config" not in dep
    vl = json.loads((DATA / "vllm_flags.json").read_text(encoding="utf-8"))
    assert vl["spans"]["--disable-log-requests"] == [["0.2.7", "0.16.0"]]
    assert vl["deprecated"]["--disable-log-requests"] == ["0.10.1", "[DEPRECATED] Disable logging requests."]


def test_a_dropped_flag_that_starts_newer_ones_says_how_argparse_takes_it():
    """0.5.20's arg_groups/fields/exec_.py has --cuda-graph-max-bs-decode and --cuda-graph-max-bs-prefill, not
    --cuda-graph-max-bs (0.5.14-0.5.19: a DeprecatedAliasStoreAction of the first); argparse's allow_abbrev
    (prepare_server_args: argparse.ArgumentParser(prog="sglang serve"), allow_abbrev left on) finds two options the
    old flag starts ("ambiguous option"). docs/basic_usage/deepseek_v3.md still suggests --cuda-graph-bs."""
    rc, err = _check("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3-0324 --tp 8 "
                     "--cuda-graph-max-bs 64")
    assert rc == 2 and "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, " \
                       "--cuda-graph-max-bs-prefill" in err, err
    assert "Deprecated alias for --cuda-graph-max-bs-decode." in err, err
