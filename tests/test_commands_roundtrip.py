"""The command line as typed, both ways, for every engine: settings -> format_command -> parse_command gives the
same settings and the same estimate; rewrite_command changes only the tokens of the changed fields."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from importlib.resources import files
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from oomkit.commands._model_args import parse_model_request
from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command
from oomkit.engines.command import COMMAND_BREAK, leading_assignments
from oomkit.engines.llamacpp import LlamaCppSettings
from oomkit.engines.mlx import MlxSettings
from oomkit.engines.mlx.args import typed as mlx_typed
from oomkit.engines.ollama import OllamaSettings, effective, modelfile
from oomkit.engines.release_flags import known_in, release_key
from oomkit.engines.sglang import KV_CACHE_DTYPES, SGLangSettings
from oomkit.engines.sglang.args import options_for as sglang_options_for
from oomkit.engines.transformers import TransformersSettings, from_pretrained_snippet
from oomkit.engines.vllm import VllmSettings
from oomkit.engines.vllm.args import DTYPES
from oomkit.engines.vllm.args import options_for as vllm_options_for
from oomkit.errors import OomkitError, SettingsError
from oomkit.plan.rating import shell_join
from oomkit.request import devices_from, resolve_model

GiB = 1 << 30
EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DEVICES = devices_from(vram="80GiB")
_SPECS: dict[tuple[str, str], Any] = {}


def spec_of(engine: str, model: str):
    key = (engine, model)
    if key not in _SPECS:
        _SPECS[key] = resolve_model(get_engine(engine), model)
    return _SPECS[key]


# Releases whose parsers differ in the flags oomkit writes (engines/data/*_flags.json, read from the wheels): vLLM
# 0.6 (no --speculative-config, --attention-backend: VLLM_ATTENTION_BACKEND), 0.10 (no --max-cudagraph-capture-size),
# 0.20 / 0.33 (no --swap-space); SGLang 0.4.6, 0.5.5 (no --enable-ep-moe), 0.5.16 (both CUDA-graph spellings, the old
# ones deprecated: the new written), 0.5.23 (only --cuda-graph-{max-bs,bs}-decode, --disable-prefill-cuda-graph).
RELEASES = {"vllm": ("0.6.6.post1", "0.10.2", "0.20.0", "0.33.0"),
            "sglang": ("0.4.6", "0.5.5", "0.5.16", "0.5.23")}
# flag -> [first release that marks it deprecated, its help text], as read from the wheels
_DEPRECATED = {e: json.loads(files("oomkit.engines.data").joinpath(f"{e}_flags.json").read_text())["deprecated"]
               for e in ("vllm", "sglang")}
_TABLES = {"vllm": ("vllm_flags.json", vllm_options_for), "sglang": ("sglang_flags.json", sglang_options_for)}


def in_release(engine: str, s: Any) -> Any:
    """`s` as a command for its release can carry it: a field the release runs as asked without a flag
    (Opt.moot: SGLang's prefill graphs, opt-in before 0.5.10) is left out of the command, so it reads back at its
    default."""
    for o in _TABLES[engine][1](s.engine_version):
        if o.moot and o.switch == (None, None):
            s = replace(s, **{o.field: type(s).__dataclass_fields__[o.field].default})
    return s


def carried(engine: str, s: Any) -> Any:
    """`s` with the fields its release has no flag for (Opt.refused: vLLM 0.33's --swap-space, SGLang 0.5.23's
    --enable-ep-moe) at their defaults: the settings a command for that release can carry."""
    for o in _TABLES[engine][1](s.engine_version):
        if o.refused:
            s = replace(s, **{o.field: type(s).__dataclass_fields__[o.field].default})
    return s


def command_in_release(engine: str, s: Any, write) -> list[str]:
    """The command `write(settings)` gives for `s`; where `s` needs a flag its release does not have, it is refused
    naming such a field (command.for_release), and the settings without those fields are written instead."""
    lacking = {o.field for o in _TABLES[engine][1](s.engine_version) if o.refused}
    try:
        argv = write(s)
    except SettingsError as e:
        assert str(e).partition(":")[0] in lacking, e
        s = carried(engine, s)
        argv = write(s)
    return argv, s


def assert_release_takes(engine: str, release: str, argv: list[str]) -> Any:
    """The command parsed back, every flag it types that only some releases have held against `release`: all in
    its parser (engines/release_flags.py, as kv.check_release_flags / config.resolve hold them)."""
    parsed = typed_back(argv)
    table = _TABLES[engine][0]
    refused = [f for f in parsed.settings.release_flags if known_in(table, f, release_key(release)) is False]
    assert not refused, f"{engine} {release} refuses {refused}: {shell_join(argv)}"
    return parsed


def outcome(engine: str, model: str, s: Any) -> Any:
    """The estimate as JSON, without what only names the settings (their dict; Ollama's echo of the command's
    environment and program); "refused" for settings the engine refuses (the command may be refused for a reason
    worded another way: MLX's prompt and context written as the prompt and a negative --max-tokens)."""
    try:
        d = get_engine(engine).estimate(spec_of(engine, model), DEVICES, s).to_dict()
    except OomkitError:
        return "refused"
    d.pop("settings")
    view = dict(d["engine_view"])
    view.pop("env", None)
    view.pop("program", None)
    d["engine_view"] = view
    return d


def typed_back(argv: list[str]):
    """The command parsed the way `oomkit estimate -- ...` parses it, with no environment of this machine."""
    return parse_command(list(argv), env={})


def maybe(strategy, none=None):
    return st.one_of(st.just(none), strategy)


fractions = st.floats(min_value=0.05, max_value=0.99, allow_nan=False)


# ---------------------------------------------------------------------------------------------------------
# Strategies: the fields that change memory, with values each engine accepts.

def llamacpp_settings(program: str | None = None):
    kv = st.sampled_from(["f16", "q8_0", "q4_0", "bf16", "q5_1"])
    return st.builds(
        LlamaCppSettings,
        program=st.just(program) if program else st.sampled_from(["llama-server", "llama-cli"]),
        n_ctx=st.one_of(st.just(0), st.integers(256, 131072)),
        n_batch=st.sampled_from([2048, 512, 4096]), n_ubatch=st.sampled_from([512, 256, 1024]),
        n_parallel=st.one_of(st.just(-1), st.integers(1, 8)), kv_unified=st.booleans(),
        cache_type_k=kv, cache_type_v=kv, flash_attn=st.sampled_from(["auto", "on", "off"]),
        swa_full=st.booleans(),
        n_gpu_layers=st.one_of(st.just(-1), st.integers(0, 40), st.just(10**6)),
        split_mode=st.sampled_from(["layer", "row", "none"]),
        tensor_split=st.one_of(st.just(()), st.tuples(st.just(1.0)), st.tuples(fractions, fractions)),
        main_gpu=st.just(0), no_kv_offload=st.booleans(),
        override_tensor=st.lists(st.sampled_from([(r"blk\.[0-9]+\.ffn_.*_exps\.weight", "CPU"),
                                                  ("token_embd", "CPU"), (r"blk\.3[0-1]\.", "CUDA0")]),
                                 max_size=2, unique=True).map(tuple),
        n_cpu_moe=st.integers(0, 12), cpu_moe=st.booleans(), mmap=st.booleans(), embeddings=st.booleans(),
    )


def ollama_settings():
    extra_env = st.lists(st.sampled_from([("OLLAMA_SCHED_SPREAD", "1"), ("LLAMA_ARG_FIT_TARGET", "2048"),
                                          ("OLLAMA_CONTEXT_LENGTH", "8192"), ("OLLAMA_KV_CACHE_TYPE", "q4_0"),
                                          ("OLLAMA_HOST", "0.0.0.0")]),
                         max_size=3, unique_by=lambda kv: kv[0]).map(lambda kvs: tuple(sorted(kvs)))
    return st.builds(
        OllamaSettings,
        num_ctx=st.one_of(st.just(0), st.integers(2048, 131072)), num_parallel=st.integers(0, 4),
        kv_cache_type=st.sampled_from(["", "f16", "q8_0", "q4_0"]),
        flash_attention=st.sampled_from(["", "1", "0", "true", "false"]),
        gpu_overhead=st.sampled_from([-1, 0, 512 << 20]), num_gpu=st.one_of(st.just(-1), st.integers(0, 40)),
        num_batch=st.sampled_from([0, 128, 512, 1024]), library=st.sampled_from(["", "cuda", "vulkan"]),
        env=extra_env,
    )


def vllm_settings():
    tri = st.sampled_from([None, True, False])
    return st.builds(
        VllmSettings,
        max_model_len=maybe(st.integers(1024, 65536)), gpu_memory_utilization=maybe(fractions),
        tensor_parallel_size=st.sampled_from([1, 2, 4]), pipeline_parallel_size=st.sampled_from([1, 2]),
        data_parallel_size=st.sampled_from([1, 2]), enable_expert_parallel=st.booleans(),
        dtype=st.sampled_from(DTYPES), kv_cache_dtype=st.sampled_from(["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]),
        block_size=st.sampled_from([None, 16, 32]), max_num_seqs=maybe(st.integers(1, 512)),
        max_num_batched_tokens=st.sampled_from([None, 2048, 8192, 16384]), enable_chunked_prefill=tri,
        enable_prefix_caching=tri, enforce_eager=st.booleans(),
        cpu_offload_gb=st.sampled_from([0.0, 2.5, 4.0, 10.0]), swap_space=st.sampled_from([4.0, 0.0, 8.5]),
        kv_cache_memory_bytes=st.sampled_from([None, 4 * GiB, 10 * GiB + 12345]),
        num_gpu_blocks_override=st.sampled_from([None, 1000]), quantization=st.sampled_from([None, "fp8"]),
        max_cudagraph_capture_size=st.sampled_from([None, 64, 512]), disable_hybrid_kv_cache_manager=st.booleans(),
        attention_backend=st.sampled_from([None, "FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"]),
        mamba_cache_dtype=st.sampled_from(["auto", "float32"]),
        mamba_ssm_cache_dtype=st.sampled_from(["auto", "float32"]),
        mamba_cache_mode=st.sampled_from([None, "align", "none"]), num_speculative_tokens=st.integers(0, 3),
        allow_long_max_model_len=st.booleans(), use_v1=tri, estimate_cudagraphs=tri, use_flashinfer_sampler=tri,
        use_v2_model_runner=tri,
    )


def sglang_settings():
    return st.builds(
        SGLangSettings,
        tp_size=st.sampled_from([1, 2, 4]), dp_size=st.sampled_from([1, 2]), pp_size=st.sampled_from([1, 2]),
        enable_dp_attention=st.booleans(), mem_fraction_static=maybe(fractions),
        context_length=maybe(st.integers(1024, 65536)), kv_cache_dtype=st.sampled_from(sorted(k for k, v in KV_CACHE_DTYPES.items() if v or k == "auto")),
        chunked_prefill_size=st.sampled_from([None, 2048, 8192]), max_prefill_tokens=st.sampled_from([16384, 8192]),
        max_running_requests=maybe(st.integers(1, 256)), max_total_tokens=st.sampled_from([None, 100000]),
        page_size=st.sampled_from([None, 1, 16, 64]),
        attention_backend=st.sampled_from([None, "fa3", "flashinfer", "triton"]),
        dtype=st.sampled_from(["auto", "half", "bfloat16"]), quantization=st.sampled_from([None, "fp8"]),
        disable_cuda_graph=st.booleans(), disable_piecewise_cuda_graph=st.booleans(),
        cuda_graph_max_bs=st.sampled_from([None, 64]), cuda_graph_bs=st.sampled_from([None, (1, 2, 4, 8)]),
        enable_ep_moe=st.booleans(),
        swa_full_tokens_ratio=st.sampled_from([0.8, 0.5]), mamba_full_memory_ratio=st.sampled_from([0.9, 0.75]),
        max_mamba_cache_size=st.sampled_from([None, 64]), mamba_ssm_dtype=st.sampled_from(["float32", "bfloat16"]),
        allow_overwrite_longer_context_len=st.booleans(),
    )


def mlx_settings(program: str | None = None):
    programs = st.just(program) if program else st.sampled_from(["mlx_lm.generate", "mlx_lm.server"])

    def build(prog: str):
        generate = prog == "mlx_lm.generate"
        return st.builds(
            MlxSettings, program=st.just(prog),
            max_tokens=maybe(st.integers(1, 4096)), prompt_tokens=maybe(st.integers(1, 8192)),
            context_length=maybe(st.integers(2, 32768)),
            max_kv_size=maybe(st.integers(256, 8192)) if generate else st.none(),
            kv_bits=st.sampled_from([None, 4, 8]) if generate else st.none(),
            kv_group_size=st.sampled_from([64, 32]) if generate else st.just(64),
            quantized_kv_start=st.sampled_from([5000, 0]) if generate else st.just(5000),
            prefill_step_size=st.sampled_from([2048, 512]), batch=st.integers(1, 8),
            q_bits=st.sampled_from([None, 4, 8]), q_group_size=st.sampled_from([64, 32]),
            wired_limit_mb=st.sampled_from([0, 16384]), max_buffer_length=st.sampled_from([None, 8 * GiB]),
        )

    return programs.flatmap(build)


def transformers_settings():
    return st.builds(
        TransformersSettings,
        max_length=maybe(st.integers(64, 32768)), max_new_tokens=st.integers(1, 1024),
        prompt_tokens=maybe(st.integers(1, 4096)), batch_size=st.integers(1, 8),
        num_beams=st.integers(1, 4), num_return_sequences=st.integers(1, 2),
        torch_dtype=st.sampled_from([None, "auto", "bfloat16", "float16", "float32"]),
        cache_implementation=st.sampled_from(["dynamic", "static", "quantized", "offloaded"]),
        max_cache_len=maybe(st.integers(128, 8192)), cache_backend=st.sampled_from(["quanto", "hqq"]),
        cache_nbits=st.sampled_from([None, 2, 4]), q_group_size=st.sampled_from([64, 32]),
        residual_length=st.sampled_from([128, 64]), kv_cache_dtype=st.sampled_from(["auto", "fp8", "int4"]),
        logits_to_keep=st.sampled_from([None, 0, 1]), attn_implementation=st.sampled_from(["sdpa", "eager"]),
        prefill_chunk_size=maybe(st.integers(256, 4096)), device_map=st.sampled_from([None, "auto", "sequential"]),
        max_memory=st.sampled_from([(), (("0", 20 * GiB), ("cpu", 64 * GiB)), (("0", 1234567890),)]),
        load_in_4bit=st.booleans(), load_in_8bit=st.just(False),
        bnb_4bit_quant_type=st.sampled_from(["fp4", "nf4"]), bnb_4bit_use_double_quant=st.booleans(),
        expandable_segments=st.booleans(),
    )


# ---------------------------------------------------------------------------------------------------------
# settings -> command -> parse: the same settings and the same estimate


@EXAMPLES
@given(llamacpp_settings())
def test_llamacpp_command_parses_back_to_the_same_settings(s):
    # engine_version (the build that runs) and n_rs_seq (oomkit's recurrent snapshots) are not options: not drawn
    eng = get_engine("llama.cpp")
    argv = eng.command("unsloth/Qwen3-8B-GGUF", s, "Q4_K_M")
    parsed = typed_back(argv)
    assert (parsed.engine, parsed.model, parsed.quant) == ("llama.cpp", "unsloth/Qwen3-8B-GGUF", "Q4_K_M")
    assert parsed.settings == s


@EXAMPLES
@given(llamacpp_settings())
def test_llamacpp_command_estimates_as_its_settings(s):
    # the catalog name is written as its GGUF repo (-hf unsloth/Llama-3.1-8B-Instruct-GGUF:Q4_K_M)
    argv = get_engine("llama.cpp").command("llama3.1:8b", s, "Q4_K_M")
    parsed = typed_back(argv)
    assert parsed.settings == s
    assert outcome("llama.cpp", f"{parsed.model}:{parsed.quant}", parsed.settings) == \
        outcome("llama.cpp", "llama3.1:8b", s)


@EXAMPLES
@given(ollama_settings())
def test_ollama_command_parses_back_and_estimates_the_same(s):
    # The variables parse into `env` while the planner sets fields: `effective` folds both into the fields.
    # OLLAMA_HOST is not compared (no memory meaning); the program is `ollama serve` (with its variables, then
    # `ollama run`) or `ollama run` alone.
    argv = get_engine("ollama").command("llama3.1:8b", s)
    parsed = typed_back(argv)
    assert parsed.engine == "ollama" and parsed.model == "llama3.1:8b"
    assert effective(parsed.settings) == effective(replace(s, program=ollama_program(argv)))
    assert typed_back(shlex.split(shell_join(argv))) == parsed  # the two lines as typed read the same
    assert outcome("ollama", "llama3.1:8b", parsed.settings) == outcome("ollama", "llama3.1:8b", s)


@EXAMPLES
@given(vllm_settings(), st.sampled_from(RELEASES["vllm"]))
def test_vllm_command_parses_back_and_estimates_the_same(s, release):
    # usage_context ("llm": the Python LLM class) has no flag: not drawn. Each release gets the spellings its parser
    # has; a setting it has no flag for is refused (command_in_release)
    s = replace(s, engine_version=release)
    argv, s = command_in_release("vllm", s, lambda s: get_engine("vllm").command("Qwen/Qwen3-8B", s))
    parsed = assert_release_takes("vllm", release, argv)
    assert (parsed.engine, parsed.model) == ("vllm", "Qwen/Qwen3-8B")
    back = replace(parsed.settings, engine_version=release)
    assert back == in_release("vllm", s)
    assert outcome("vllm", "Qwen/Qwen3-8B", back) == outcome("vllm", "Qwen/Qwen3-8B", s)


@EXAMPLES
@given(sglang_settings(), st.sampled_from(RELEASES["sglang"]))
def test_sglang_command_parses_back_and_estimates_the_same(s, release):
    # model_path is the model argument; kv_cache_memory_bytes (oomkit's --kv-memory) has no SGLang flag: not drawn
    s = replace(s, engine_version=release)
    argv, s = command_in_release("sglang", s, lambda s: get_engine("sglang").command("Qwen/Qwen3-8B", s))
    parsed = assert_release_takes("sglang", release, argv)
    assert (parsed.engine, parsed.model) == ("sglang", "Qwen/Qwen3-8B")
    back = replace(parsed.settings, engine_version=release)
    assert back == in_release("sglang", replace(s, model_path="Qwen/Qwen3-8B"))
    # The command is written in flags the release takes; a few are ones its parser marks deprecated with no other
    # spelling of the same field (--disable-cuda-graph from 0.5.14, the only one that sets the disable_cuda_graph
    # field other code reads; --enable-dp-attention with one DP rank at 0.5.23): the estimate of the typed command
    # names each such flag with the help text the wheel prints, the settings' own estimate has no typed flag
    typed, direct = outcome("sglang", "Qwen/Qwen3-8B", back), outcome("sglang", "Qwen/Qwen3-8B", s)
    if typed != "refused":
        marked = _DEPRECATED["sglang"]
        expected = [f"{f} is deprecated in SGLang {release}: {marked[f][1]}" for f in argv
                    if f in marked and release_key(release) >= release_key(marked[f][0])]
        notes = [w for w in typed["warnings"] if " is deprecated in SGLang " in w]
        assert notes == expected
        typed["warnings"] = [w for w in typed["warnings"] if w not in notes]
    assert typed == direct


@EXAMPLES
@given(mlx_settings())
def test_mlx_command_parses_back_and_estimates_the_same(s):
    # context_length has no flag: the prompt and generated tokens make it up, so the settings compare as the
    # command carries them (mlx.args.typed) and the estimates compare in full. The command holds only flags
    # mlx_lm's parser takes; what it has none for (the prompt's length, the sequences in flight) rides on oomkit's
    # own flags after it (engine.sizing_flags), other bits on the mlx-community repo that holds them. A group
    # other than mlx_lm.convert's 64 has no repo name: no command is written.
    eng = get_engine("mlx")
    if s.q_bits is not None and s.q_group_size != 64:
        with pytest.raises(OomkitError, match="mlx_lm.convert"):
            eng.command("Qwen/Qwen3-8B", s)
        return
    argv = eng.command("Qwen/Qwen3-8B", s)
    assert not {"--prompt-tokens", "--batch", "--q-bits", "--q-group-size", "--wired-limit-mb",
                "--max-buffer-length"} & set(argv)
    parsed = typed_back([*argv, *eng.sizing_flags(s, argv)])
    assert (parsed.engine, parsed.model) == ("mlx", "Qwen/Qwen3-8B")
    if s.q_bits is None:  # the group of bits nobody asked for has no meaning, nor a spelling
        s = replace(s, q_group_size=64)
    assert mlx_typed(parsed.settings) == mlx_typed(s)
    if s.context_length is None:
        assert parsed.settings == s
    assert outcome("mlx", "Qwen/Qwen3-8B", parsed.settings) == outcome("mlx", "Qwen/Qwen3-8B", s)


@EXAMPLES
@given(transformers_settings())
def test_transformers_options_form_parses_back_and_estimates_the_same(s):
    argv = get_engine("transformers").command("Qwen/Qwen3-8B", s)
    request = parse_model_request(argv)
    assert (request.engine, request.model) == ("transformers", "Qwen/Qwen3-8B")
    assert request.settings == s
    assert outcome("transformers", "Qwen/Qwen3-8B", request.settings) == outcome("transformers", "Qwen/Qwen3-8B", s)


def test_a_weight_format_travels_with_the_model_argument():
    back = typed_back(get_engine("llama.cpp").command("llama3.1:8b", LlamaCppSettings(), "Q8_0"))
    assert (back.model, back.quant) == ("unsloth/Llama-3.1-8B-Instruct-GGUF", "Q8_0")
    assert get_engine("ollama").command("qwen3:8b", OllamaSettings(), "q8_0")[-1] == "qwen3:8b-q8_0"
    assert get_engine("ollama").command("qwen3:8b-q8_0", OllamaSettings(), "q8_0")[-1] == "qwen3:8b-q8_0"
    assert get_engine("vllm").command("Qwen/Qwen3-8B", VllmSettings(), "fp8")[2] == "Qwen/Qwen3-8B:fp8"


def test_a_local_gguf_is_named_with_dash_m(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    argv = get_engine("llama.cpp").command(str(path), LlamaCppSettings(n_ctx=4096), "Q4_K_M")
    assert argv == ["llama-server", "-m", str(path), "-c", "4096"]


# ---------------------------------------------------------------------------------------------------------
# One command per engine, exactly as typed


def joined(engine: str, model: str, s: Any, quant: str | None = None) -> str:
    return shell_join(get_engine(engine).command(model, s, quant))


def ollama_program(argv: list[str]) -> str:
    """The program an Ollama command parses to: `ollama serve` when it starts the server with its variables first."""
    start = leading_assignments(argv)[1]
    return "ollama serve" if argv[start:start + 2] == ["ollama", "serve"] else "ollama run"


def test_llamacpp_command_as_typed():
    s = LlamaCppSettings(n_ctx=32768, cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on")
    assert joined("llama.cpp", "unsloth/Qwen3-8B-GGUF", s, "Q4_K_M") == \
        "llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 32768 -ctk q8_0 -ctv q8_0 -fa on"
    s = LlamaCppSettings(program="llama-cli", n_ctx=16384, n_gpu_layers=20, tensor_split=(3.0, 1.0),
                         override_tensor=((r"blk\.[0-9]+\.ffn_.*_exps\.weight", "CPU"),), mmap=False)
    assert joined("llama.cpp", "unsloth/Qwen3-30B-A3B-GGUF", s, "Q4_K_M") == (
        "llama-cli -hf unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M -c 16384 -ngl 20 -ts 3,1 "
        "-ot '" + r"blk\.[0-9]+\.ffn_.*_exps\.weight=CPU" + "' --no-mmap")


def test_ollama_command_as_typed():
    """The server variables go on `ollama serve`, the model on `ollama run` on the next line: a variable in front of
    `ollama run` never reaches a server already running (ollama#14191)."""
    s = OllamaSettings(num_ctx=32768, kv_cache_type="q8_0", flash_attention="1")
    assert joined("ollama", "qwen3:8b", s) == \
        "OLLAMA_CONTEXT_LENGTH=32768 OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 ollama serve\nollama run qwen3:8b"
    # the request options `ollama run` has no flag for are the session's /set parameter lines (cmd/interactive.go)
    assert joined("ollama", "qwen3:8b", OllamaSettings(num_parallel=2, num_gpu=24)) == \
        "OLLAMA_NUM_PARALLEL=2 ollama serve\nollama run qwen3:8b\n/set parameter num_gpu 24"
    assert joined("ollama", "qwen3:8b", OllamaSettings(num_gpu=24)) == "ollama run qwen3:8b\n/set parameter num_gpu 24"
    # before 0.5.13 there is no OLLAMA_CONTEXT_LENGTH: num_ctx is a request option too
    assert joined("ollama", "qwen3:8b", OllamaSettings(num_ctx=8192, engine_version="0.5.7")) == \
        "ollama run qwen3:8b\n/set parameter num_ctx 8192"


def test_ollama_session_lines_read_back():
    """What the Ollama engine writes is read back to the same settings (the /set lines as a pasted session)."""
    from oomkit.engines.ollama.args import as_session

    for s in (OllamaSettings(num_gpu=24, num_batch=256), OllamaSettings(num_ctx=8192, num_gpu=7,
                                                                          engine_version="0.5.7")):
        back = typed_back(get_engine("ollama").command("qwen3:8b", s, None)).settings
        assert (back.num_gpu, back.num_batch, back.num_ctx) == (s.num_gpu, s.num_batch, s.num_ctx)
    # a one-shot run with a prompt reads no session lines: left as it was
    assert as_session(["ollama", "run", "qwen3:8b", "--num-gpu", "20", "hi"]) == \
        ["ollama", "run", "qwen3:8b", "--num-gpu", "20", "hi"]


def test_ollama_modelfile():
    s = OllamaSettings(num_ctx=32768, num_gpu=30, kv_cache_type="q8_0", flash_attention="1")
    assert modelfile("qwen3:8b", s) == (
        "FROM qwen3:8b\nPARAMETER num_ctx 32768\nPARAMETER num_gpu 30\n"
        "# server variables (the environment of `ollama serve`):\n"
        "#   OLLAMA_KV_CACHE_TYPE=q8_0\n#   OLLAMA_FLASH_ATTENTION=1\n")
    # num_ctx from the server's variable is the same launch as the Modelfile's parameter
    assert modelfile("qwen3:8b", OllamaSettings(env=(("OLLAMA_CONTEXT_LENGTH", "8192"),))) == \
        "FROM qwen3:8b\nPARAMETER num_ctx 8192\n"
    assert modelfile("qwen3:8b", OllamaSettings()) == "FROM qwen3:8b\n"


def test_vllm_command_as_typed():
    s = VllmSettings(max_model_len=32768, gpu_memory_utilization=0.9, kv_cache_dtype="fp8", tensor_parallel_size=2,
                     enable_prefix_caching=False, allow_long_max_model_len=True)
    assert joined("vllm", "Qwen/Qwen3-14B", s) == (
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve Qwen/Qwen3-14B --max-model-len 32768 "
        "--gpu-memory-utilization 0.9 --tensor-parallel-size 2 --kv-cache-dtype fp8 --no-enable-prefix-caching")
    assert joined("vllm", "Qwen/Qwen3-14B", VllmSettings(num_speculative_tokens=2, cpu_offload_gb=4.0)) == (
        "vllm serve Qwen/Qwen3-14B --cpu-offload-gb 4 --speculative-config '{\"num_speculative_tokens\":2}'")


def test_sglang_command_as_typed():
    s = SGLangSettings(context_length=32768, mem_fraction_static=0.85, kv_cache_dtype="fp8_e4m3", tp_size=2,
                       max_running_requests=16)
    assert joined("sglang", "Qwen/Qwen3-14B", s) == (
        "python -m sglang.launch_server --model-path Qwen/Qwen3-14B --tp-size 2 --mem-fraction-static 0.85 "
        "--context-length 32768 --kv-cache-dtype fp8_e4m3 --max-running-requests 16")


def test_mlx_command_as_typed():
    s = MlxSettings(max_tokens=512, kv_bits=4, max_kv_size=8192)
    assert joined("mlx", "mlx-community/Qwen3-8B-4bit", s) == \
        "mlx_lm.generate --model mlx-community/Qwen3-8B-4bit --max-tokens 512 --max-kv-size 8192 --kv-bits 4"
    # a context of 32768 with the server's 512 new tokens: a prompt of 32256, which mlx_lm.server takes from each
    # request and has no flag for (server.py setup_arg_parser): oomkit's --prompt-tokens and --batch ride apart
    server = MlxSettings(program="mlx_lm.server", context_length=32768, batch=4)
    assert joined("mlx", "Qwen/Qwen3-8B", server) == "mlx_lm.server --model Qwen/Qwen3-8B"
    assert get_engine("mlx").sizing_flags(server) == ["--prompt-tokens", "32256", "--batch", "4"]
    # 8-bit weights are the mlx-community conversion that holds them (mlx_lm.generate has no --q-bits)
    assert joined("mlx", "Qwen/Qwen3-8B", MlxSettings(q_bits=8)) == "mlx_lm.generate --model mlx-community/Qwen3-8B-8bit"
    with pytest.raises(OomkitError, match="mlx_lm.server has no --kv-bits"):
        get_engine("mlx").command("Qwen/Qwen3-8B", MlxSettings(program="mlx_lm.server", kv_bits=4))


def test_transformers_options_form_and_snippet_as_typed():
    s = TransformersSettings(max_length=8192, max_new_tokens=512, torch_dtype="bfloat16", device_map="auto",
                             load_in_4bit=True, bnb_4bit_quant_type="nf4", kv_cache_dtype="fp8")
    assert joined("transformers", "Qwen/Qwen3-8B", s) == (
        "Qwen/Qwen3-8B --engine transformers --max-length 8192 --max-new-tokens 512 --dtype bfloat16 "
        "--kv-type fp8 --device-map auto --load-in-4bit --bnb-4bit-quant-type nf4")
    assert from_pretrained_snippet("Qwen/Qwen3-8B", s) == (
        "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"
        "\n"
        "model = AutoModelForCausalLM.from_pretrained(\n"
        '    "Qwen/Qwen3-8B",\n'
        '    dtype="bfloat16",\n'
        '    device_map="auto",\n'
        '    quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4"),\n'
        ")\n"
        "# input_ids: 1 x 7680 tokens (max_length 8192 - max_new_tokens)\n"
        "output = model.generate(\n"
        "    input_ids,\n"
        "    max_new_tokens=512,\n"
        '    cache_implementation="quantized",\n'
        '    cache_config={"backend": "fp8", "nbits": 8},\n'
        ")\n")
    snippet = from_pretrained_snippet("Qwen/Qwen3-8B", TransformersSettings(
        max_memory=(("0", 20 * GiB), ("cpu", 64 * GiB)), cache_implementation="static", expandable_segments=True,
        engine_version="4.50.0", torch_dtype="float16"))
    compile(snippet, "<snippet>", "exec")
    assert 'torch_dtype="float16"' in snippet and 'max_memory={0: "20GiB", "cpu": "64GiB"}' in snippet
    assert 'cache_implementation="static"' in snippet and "expandable_segments:True" in snippet


# ---------------------------------------------------------------------------------------------------------
# rewrite: only the tokens of the changed fields change


def rewritten(engine: str, line: str, **changes: Any) -> tuple[list[str], Any]:
    argv = shlex.split(line)
    eng = get_engine(engine)
    old = typed_back(argv).settings
    new = replace(old, **changes)
    return eng.rewrite_command(argv, old, new), new


def test_llamacpp_rewrite_keeps_the_users_spellings():
    line = "llama-server --model ./m.gguf --ctx-size 8192 -fa -ngl 99 --cache-type-k q4_0 --port 8080"
    out, new = rewritten("llama.cpp", line, n_ctx=32768, cache_type_k="q8_0", cache_type_v="q8_0")
    assert shlex.join(out) == \
        "llama-server --model ./m.gguf --ctx-size 32768 -fa -ngl 99 --cache-type-k q8_0 --port 8080 -ctv q8_0"
    assert typed_back(out).settings == new
    # a bare -fa gets its value; a switch is set back explicitly; -c named twice keeps the last, the first goes
    out, new = rewritten("llama.cpp", "llama-server -m m.gguf -c 4096 -fa --no-mmap -c 8192 -ot a=CPU -ot b=CPU",
                         flash_attn="off", mmap=True, n_ctx=16384, override_tensor=(("c", "CPU"),))
    assert out == ["llama-server", "-m", "m.gguf", "-fa", "off", "--mmap", "-c", "16384", "-ot", "c=CPU"]
    assert typed_back(out).settings == new
    out, new = rewritten("llama.cpp", "llama-server -m m.gguf -c 4096 --flash-attn on -lm none --alias x",
                         n_ctx=8192, flash_attn="off", mmap=True)
    assert shlex.join(out) == "llama-server -m m.gguf -c 8192 --flash-attn off --mmap --alias x"
    assert typed_back(out).settings == new


def test_llamacpp_rewrite_without_changes_is_the_same_command():
    argv = shlex.split("llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M --ctx-size 8192 -np 2 -kvu")
    s = typed_back(argv).settings
    assert get_engine("llama.cpp").rewrite_command(argv, s, s) == argv


def test_ollama_rewrite_puts_variables_on_the_server_and_keeps_the_prompt():
    """The user's variables in front of `ollama run` move, changed, to an `ollama serve` before it (where the server
    reads them, ollama#14191); the prompt words and flags stay on `ollama run`."""
    line = "OLLAMA_FLASH_ATTENTION=1 ollama run qwen3:8b why is the sky blue --verbose"
    out, new = rewritten("ollama", line, num_ctx=16384, kv_cache_type="q8_0", flash_attention="0")
    assert shell_join(out) == ("OLLAMA_FLASH_ATTENTION=0 OLLAMA_CONTEXT_LENGTH=16384 OLLAMA_KV_CACHE_TYPE=q8_0 "
                               "ollama serve\nollama run qwen3:8b why is the sky blue --verbose")
    assert effective(typed_back(out).settings) == effective(replace(new, program="ollama serve"))
    # oomkit's --num-ctx as typed is changed where it is; `env` in front stays in front; OLLAMA_HOST, which the
    # client reads too (where to connect), goes on both
    out, new = rewritten("ollama", "env OLLAMA_HOST=0.0.0.0 ollama run qwen3:8b --num_ctx=4096 hello",
                         num_ctx=8192, num_parallel=2, num_gpu=10)
    assert shell_join(out) == ("env OLLAMA_HOST=0.0.0.0 OLLAMA_NUM_PARALLEL=2 ollama serve\n"
                               "OLLAMA_HOST=0.0.0.0 ollama run qwen3:8b --num_ctx=8192 hello --num-gpu 10")
    assert effective(typed_back(out).settings) == effective(replace(new, program="ollama serve"))
    # nothing for the server: `ollama run` stays alone
    out, new = rewritten("ollama", "OLLAMA_HOST=0.0.0.0 ollama run qwen3:8b hello", num_gpu=10)
    assert shell_join(out) == "OLLAMA_HOST=0.0.0.0 ollama run qwen3:8b hello --num-gpu 10"


def test_vllm_rewrite_keeps_the_users_spellings():
    line = ("VLLM_USE_V1=1 vllm serve Qwen/Qwen3-8B --max_model_len=8192 --enforce-eager -tp 2 "
            "--gpu-memory-utilization 0.9 --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}' "
            "--port 8000")
    out, new = rewritten("vllm", line, max_model_len=16384, enforce_eager=False, num_speculative_tokens=3,
                         kv_cache_dtype="fp8", use_v1=False)
    assert out == ["VLLM_USE_V1=0", "vllm", "serve", "Qwen/Qwen3-8B", "--max_model_len=16384", "-tp", "2",
                   "--gpu-memory-utilization", "0.9", "--speculative-config",
                   '{"method":"mtp","num_speculative_tokens":3}', "--port", "8000", "--kv-cache-dtype", "fp8"]
    assert typed_back(out).settings == new
    # the attention backend set by its variable is changed there
    out, new = rewritten("vllm", "VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve m", attention_backend="FLASH_ATTN")
    assert out == ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", "vllm", "serve", "m"]


def test_sglang_rewrite_keeps_abbreviations():
    line = "python3 -m sglang.launch_server --model Qwen/Qwen3-8B --tp 2 --context-len 8192 --port 30000"
    out, new = rewritten("sglang", line, context_length=32768, tp_size=1, mem_fraction_static=0.8)
    assert shlex.join(out) == ("python3 -m sglang.launch_server --model Qwen/Qwen3-8B --tp 1 --context-len 32768 "
                               "--port 30000 --mem-fraction-static 0.8")
    assert typed_back(out).settings == new


def test_mlx_rewrite_writes_a_context_as_the_prompt():
    line = "python -m mlx_lm generate --model mlx-community/Qwen3-8B-4bit --prompt hello -m 256"
    argv = shlex.split(line)
    eng = get_engine("mlx")
    old = typed_back(argv).settings
    new = eng.with_context(replace(old, kv_bits=8), 8192)
    out = eng.rewrite_command(argv, old, new)
    # mlx_lm takes the prompt as text: its length rides on oomkit's --prompt-tokens, outside the command
    assert shlex.join(out) == "python -m mlx_lm generate --model mlx-community/Qwen3-8B-4bit --prompt hello -m 256 --kv-bits 8"
    sizing = eng.sizing_flags(new, out)
    assert sizing == ["--prompt-tokens", "7936"]
    assert mlx_typed(typed_back([*out, *sizing]).settings) == mlx_typed(new)
    # a user who typed oomkit's --prompt-tokens has it rewritten in place, nothing apart
    typed = [*argv, "--prompt-tokens", "100"]
    old = typed_back(typed).settings
    out = eng.rewrite_command(typed, old, eng.with_context(old, 8192))
    assert out[-2:] == ["--prompt-tokens", "7936"] and eng.sizing_flags(eng.with_context(old, 8192), out) == []
    # other bits: the --model that holds them
    out = eng.rewrite_command(argv, typed_back(argv).settings, replace(typed_back(argv).settings, q_bits=8))
    assert "mlx-community/Qwen3-8B-8bit" in out


def test_transformers_rewrite_keeps_oomkits_options():
    argv = shlex.split("Qwen/Qwen3-8B --engine transformers --vram 24GiB --ctx 4096 --max_new_tokens=100 "
                       "--kv-type fp8")
    eng = get_engine("transformers")
    old = parse_model_request(argv).settings
    new = eng.with_context(replace(old, kv_cache_dtype="auto", batch_size=4), 16384)
    out = eng.rewrite_command(argv, old, new)
    assert shlex.join(out) == ("Qwen/Qwen3-8B --engine transformers --vram 24GiB --ctx 16384 --max_new_tokens=100 "
                               "--kv-type auto --batch-size 4")
    assert parse_model_request(out).settings == new


# A command written from one setting and rewritten to another parses to the other (every field, every engine).

# Tokens the settings know nothing of (a port, a prompt) are added to each command; they stay, in order.
OTHERS = {"llama.cpp": ["--port", "8080", "--host", "0.0.0.0"], "ollama": ["why", "is", "the", "sky", "blue"],
          "vllm": ["--port", "8000", "--served-model-name", "m"], "sglang": ["--port", "30000"],
          "mlx": ["--temp", "0.7"], "transformers": ["--vram", "24GiB"]}


def _rewrite_roundtrip(engine: str, model: str, a: Any, b: Any, parse=typed_back) -> Any:
    eng = get_engine(engine)
    argv = eng.command(model, a)
    others = OTHERS[engine]
    if engine == "mlx" and a.program.endswith("server"):
        others = ["--temp", "0.7", "--port", "8080"]
    k = next(i for i, tok in enumerate(argv) if tok.startswith(model))
    argv = argv[:k + 1] + others + argv[k + 1:]
    parsed = parse(argv)
    out = eng.rewrite_command(argv, parsed.settings, b)
    # after the leading assignments, the program, the model and the other tokens stay as they were, in order
    # (after Ollama's `VAR=v ollama serve` line, on its `ollama run` line)
    kept = _command_body(argv[:k + 1]) + others
    assert _command_body(out)[:len(kept)] == kept
    return out, parse


def _command_body(argv: list[str]) -> list[str]:
    """The command after its leading assignments; of `VARS ollama serve` then `ollama run ...`, the second."""
    rest = list(argv[leading_assignments(argv)[1]:])
    if rest[:3] == ["ollama", "serve", COMMAND_BREAK]:
        rest = rest[3:]
        rest = rest[leading_assignments(rest)[1]:]
    return rest


@EXAMPLES
@given(st.sampled_from(["llama-server", "llama-cli"]).flatmap(lambda p: st.tuples(llamacpp_settings(p),
                                                                                     llamacpp_settings(p))))
def test_llamacpp_rewrite_reaches_any_setting(ab):
    a, b = ab
    out, parse = _rewrite_roundtrip("llama.cpp", "unsloth/Llama-3.1-8B-Instruct-GGUF", a, b)
    assert parse(out).settings == b


@EXAMPLES
@given(ollama_settings(), ollama_settings())
def test_ollama_rewrite_reaches_any_setting(a, b):
    out, parse = _rewrite_roundtrip("ollama", "llama3.1:8b", a, b)
    assert effective(parse(out).settings) == effective(replace(b, program=ollama_program(out)))


def _rewrite_in_release(engine: str, a: Any, b: Any) -> None:
    """a's command for its release, rewritten to b: refused only for a field the release has no flag for (then
    rewritten to b without it); it parses back to b, every flag in the release's parser."""
    eng = get_engine(engine)
    _, a = command_in_release(engine, a, lambda a: eng.command("Qwen/Qwen3-8B", a))
    out, b = command_in_release(engine, b, lambda b: _rewrite_roundtrip(engine, "Qwen/Qwen3-8B", a, b)[0])
    parsed = assert_release_takes(engine, b.engine_version, out)
    assert replace(parsed.settings, engine_version=b.engine_version) == in_release(engine, b)


@EXAMPLES
@given(vllm_settings(), vllm_settings(), st.sampled_from(RELEASES["vllm"]))
def test_vllm_rewrite_reaches_any_setting(a, b, release):
    _rewrite_in_release("vllm", replace(a, engine_version=release), replace(b, engine_version=release))


@EXAMPLES
@given(sglang_settings(), sglang_settings(), st.sampled_from(RELEASES["sglang"]))
def test_sglang_rewrite_reaches_any_setting(a, b, release):
    b = replace(b, model_path="Qwen/Qwen3-8B", engine_version=release)
    _rewrite_in_release("sglang", replace(a, engine_version=release), b)


@EXAMPLES
@given(st.sampled_from(["mlx_lm.generate", "mlx_lm.server"]).flatmap(lambda p: st.tuples(mlx_settings(p),
                                                                                           mlx_settings(p))))
def test_mlx_rewrite_reaches_any_setting(ab):
    """The user's command as oomkit reads it (mlx_lm's flags, then oomkit's own for what mlx_lm has none for),
    rewritten to other settings: mlx_lm's flags and the oomkit flags the user typed change in place, other bits
    change the --model, and what else sizes the run rides apart (engine.sizing_flags)."""
    a, b = ab
    assume(not any(x.q_bits is not None and x.q_group_size != 64 for x in (a, b)))  # no repo name holds them
    eng = get_engine("mlx")
    argv = eng.command("Qwen/Qwen3-8B", a)
    others = ["--temp", "0.7", "--port", "8080"] if a.program.endswith("server") else OTHERS["mlx"]
    argv = [*argv[:3], *others, *argv[3:], *eng.sizing_flags(a, argv)]
    out = eng.rewrite_command(argv, typed_back(argv).settings, b)
    assert out[3:3 + len(others)] == others
    back = typed_back([*out, *eng.sizing_flags(b, out)]).settings
    if b.q_bits is None:  # no bits asked: the model as named, at the bits its name says (bits_from_name)
        b = replace(b, q_bits=back.q_bits, q_group_size=back.q_group_size)
    assert mlx_typed(back) == mlx_typed(b)


@EXAMPLES
@given(transformers_settings(), transformers_settings())
def test_transformers_rewrite_reaches_any_setting(a, b):
    out, parse = _rewrite_roundtrip("transformers", "Qwen/Qwen3-8B", a, b, parse=parse_model_request)
    assert parse(out).settings == b


# ---------------------------------------------------------------------------------------------------------
# What `oomkit plan`, `fit` and `check --json` print for a release runs under that release's parser


def _commands_in(data: Any) -> list[str]:
    """Every command line in a JSON answer (the values of its "command" keys)."""
    if isinstance(data, dict):
        return [c for k, v in data.items() for c in ([v] if k == "command" and isinstance(v, str) else
                                                     _commands_in(v))]
    if isinstance(data, list):
        return [c for v in data for c in _commands_in(v)]
    return []


def _oomkit_json(*args: str) -> Any:
    import json
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "oomkit", *args, "--json"], capture_output=True, text=True)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


_PROGRAMS = {"vllm": "vllm serve {model} --max-model-len {ctx}",
             "sglang": "python -m sglang.launch_server --model-path {model} --context-length {ctx}"}
# Flags each release spells its own way (engines/data/*_flags.json), typed as that release takes them
_TYPED = {"0.6.6.post1": "--swap-space 2 --enforce-eager", "0.10.2": "--swap-space 2 --enforce-eager",
          "0.20.0": "--max-cudagraph-capture-size 64 --attention-backend FLASH_ATTN",
          "0.33.0": "--max-cudagraph-capture-size 64 --attention-backend FLASH_ATTN",
          "0.4.6": "--cuda-graph-max-bs 64 --enable-ep-moe", "0.5.5": "--cuda-graph-max-bs 64",
          "0.5.16": "--cuda-graph-max-bs-decode 64 --disable-piecewise-cuda-graph",
          "0.5.23": "--cuda-graph-max-bs-decode 64 --disable-prefill-cuda-graph"}


@pytest.mark.parametrize(("engine", "release"), [(e, r) for e, rs in RELEASES.items() for r in rs])
def test_cli_commands_parse_under_their_release(engine, release):
    """plan / fit / check --json for a release write only flags its parser has: a setting the command carries is
    spelled as that release spells it (SGLang 0.5.20's --cuda-graph-max-bs-decode), none the release lacks."""
    model = "Qwen/Qwen3-8B"
    written = _commands_in(_oomkit_json("plan", model, "--engine", engine, "--engine-version", release,
                                        "--vram", "24GiB"))
    for ctx, typed in ((40000, ""), (40000, _TYPED[release]), (8192, _TYPED[release])):
        line = _PROGRAMS[engine].format(model=model, ctx=ctx) + (" " + typed if typed else "")
        written += [line]  # the command as typed parses under its release too
        written += _commands_in(_oomkit_json("plan", line, "--engine-version", release, "--vram", "24GiB"))
        written += _commands_in(_oomkit_json("fit", line, "--engine-version", release, "--vram", "24GiB"))
        written += _commands_in(_oomkit_json("check", line, "--engine-version", release, "--vram", "16GiB"))
    for text in written:
        assert_release_takes(engine, release, shlex.split(text))
    assert any(_TYPED[release].split()[0] in text for text in written[1:])
