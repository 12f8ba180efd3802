"""ik_llama.cpp (ikawrakow/ik_llama.cpp) commands as people posted them: the fork's own flags are read where they
change nothing oomkit sizes otherwise (said in the estimate's warnings as ik_llama.cpp's, their effect not counted),
and refused in one line, exit code 2, where ik_llama.cpp's allocations differ from mainline's (an -mla mode other
than the latent K cache, its q6_0 / q8_KV cache types, -sm graph, any other flag of its own).

Each flag's meaning: ik_llama.cpp common/common.cpp gpt_params_find_arg (engines/data/ik_llamacpp_flags.json,
tools/build_ik_llamacpp_flags.py). The expected readings are read from the command text itself."""

from __future__ import annotations

import pytest

from oomkit.cli import main
from oomkit.engines.cmdline import parse_command
from oomkit.engines.llamacpp.args import flag_takes_value, flags_table, ik_flags_table
from oomkit.engines.shell_words import split_command
from oomkit.errors import OomkitError

# (url, command as posted, expected reading or the refusal's words)
PR386_PANCHOVIX = (
    "https://github.com/ikawrakow/ik_llama.cpp/pull/386",
    r"""./llama-server -m '/models_llm/DeepSeek-V3-0324-UD-Q2_K_XL-00001-of-00006.gguf' -c 16384 --no-mmap --no-warmup -v -ngl 99 --override-tensor 'blk\.(2[5-9]|[3-6][0-9])\..*_exps\.=CPU' --override-tensor 'blk\.([1-6])\..*_exps\.=CUDA0' --override-tensor 'blk\.([7-9]|1[0])\..*_exps\.=CUDA1' --override-tensor 'blk\.(1[1-5])\..*_exps\.=CUDA2' --override-tensor 'blk\.(1[6-9]|2[0-4])\..*_exps\.=CUDA3' -fa -mla 3 -fmoe""",
)
PR386_IKAWRAKOW = (
    "https://github.com/ikawrakow/ik_llama.cpp/pull/386",
    "./bin/llama-cli -m ./ds2.5/DeepSeek-V2.5-1210-IQ3_XXS-00001-of-00003.gguf -t 32 -ngl 100 -mla 3 -fa -c 32768 "
    "-s 1234 -ot exps=CPU  -cnv",
)
PR400 = (
    "https://github.com/ikawrakow/ik_llama.cpp/pull/400",
    "./bin/llama-cli -m ./ds2.5/DeepSeek-V2.5-1210-IQ3_XXS-00001-of-00003.gguf -t 32 -ngl 100 -mla 3 -fa -c 32768 "
    "-s 1234 -ot exps=CPU -cnv -ctk q8_0 -ctv q8_0",
)
ISSUE437_FIRST = (
    "https://github.com/ikawrakow/ik_llama.cpp/issues/437",
    """CUDA_VISIBLE_DEVICES="1" ./build/bin/llama-server \\
  --model /media/mukul/backup/models/ubergarm/Qwen3-235B-A22B-GGUF/Qwen3-235B-A22B-mix-IQ3_K-00001-of-00003.gguf \\
  --alias ubergarm/Qwen3-235B-A22B-mix-IQ3_K \\
  -fa \\
  -ctk q4_0 -ctv q4_0 \\
  -c 32768 \\
  -fmoe \\
  -amb 512 \\
  -rtr \\
  -ot blk\\.1[2-9]\\.ffn.*=CPU \\
  -ot blk\\.[2-8][0-9]\\.ffn.*=CPU \\
  -ot blk\\.9[0-3]\\.ffn.*=CPU \\
  -ngl 99 \\
  --threads 57 \\
  --host 0.0.0.0 \\
  --port 10002
""",
)
ISSUE437_SECOND = (
    "https://github.com/ikawrakow/ik_llama.cpp/issues/437",
    ISSUE437_FIRST[1].replace("  -fmoe \\\n", "  -fmoe \\\n  -b 2048 -ub 2048 \\\n"),
)
ISSUE1730 = (
    "https://github.com/ikawrakow/ik_llama.cpp/issues/1730",
    """llama-server ^
\t--model S:\\LLMs\\Qwen3.6-27B.i1-IQ4_XS-attn_qkv-IQ4_XS.gguf ^
\t--ctx-size 262000 ^
\t--ctx-checkpoints 0 ^
\t--gpu-layers 999 ^
\t--spec-type ngram-mod ^
\t--draft-min 4 ^
\t--draft-max 24 ^
\t--cache-type-k q8_0 ^
\t--cache-type-v q8_0 ^
\t--api-key sk-ik-llama ^
\t--jinja ^
\t--main-gpu 1 ^
\t--tensor-split 50,50 ^
\t-sm graph ^
\t-cuda graphs=0 ^
\t--temp 0.6 ^
\t--top-k 20 ^
\t--top-p 0.95 ^
\t--cache-ram 2048 ^
\t--repeat-penalty 1.0 ^
\t--presence-penalty 0.0
""",
)
# ik_llama.cpp built and run with mainline's flags only: read as before
KTRANSFORMERS1417 = (
    "https://github.com/kvcache-ai/ktransformers/issues/1417",
    """./build/bin/llama-server \\
    --model /data/DeepSeek-V3-0324-GGUF-UD/UD-Q4_K_XL/DeepSeek-V3-0324-UD-Q4_K_XL-00001-of-00008.gguf \\
    --alias DeepSeek-V3-0324:671b-q4_k_xl \\
    --threads 32 \\
    --ctx-size 163840 \\
    --n-gpu-layers 62 \\
    -ot ".ffn_.*_exps.=CPU" \\
    --seed 3407 \\
    --temp 0.3 \\
    --min-p 0.0 \\
    --flash-attn \\
    --host 0.0.0.0 \\
    --port 11434
""",
)
PR394 = (
    "https://github.com/ikawrakow/ik_llama.cpp/pull/394",
    r"""./llama-server -m '/GGUFs/DeepSeek-V3-0324-UD-Q2_K_XL-merged.gguf' -c 16384 --no-mmap --no-warmup -v -ngl 99 --override-tensor 'blk\.([0-7])\..*_exps\.=CUDA0' --override-tensor 'blk\.([8-9]|1[0-1])\..*_exps\.=CUDA1' --override-tensor 'blk\.(1[2-6])\..*_exps\.=CUDA2' --override-tensor 'blk\.(1[7-9]|2[0-6])\..*_exps\.=CUDA3' -fa --override-tensor 'blk\..*_exps\.=CPU' -mg 0""",
)


def _parse(text: str):
    return parse_command(split_command(text), env={})


def test_the_flag_table_is_ik_llamacpp_s():
    """common.cpp gpt_params_find_arg: the fork's flags, each with whether it reads a value; -fmoe from its
    PR #229 to PR #863 (fused MoE on by default from there, -no-fmoe to turn it off)."""
    ik = ik_flags_table()
    assert ik["-mla"] and ik["-amb"] and ik["-ser"] and ik["-cuda"]
    assert not ik["-fmoe"] and not ik["-rtr"] and not ik["-no-fmoe"] and not ik["-khad"] and not ik["-gr"]
    assert not ik["-smgs"] and not ik["--merge-qkv"]
    mainline = flags_table()
    assert not any(f in mainline for f in ("-fmoe", "-rtr", "-mla", "-amb", "-ser", "-khad", "-smgs", "-mqkv"))
    # the command line splits around them as ik_llama.cpp reads them
    assert flag_takes_value("-amb", "512") and not flag_takes_value("-fmoe", "-c")


@pytest.mark.parametrize("case", [PR386_PANCHOVIX, PR386_IKAWRAKOW, PR400], ids=["pr386-server", "pr386-cli", "pr400"])
def test_mla3_fmoe_read_and_said(case):
    _, text = case
    p = _parse(text)
    s = p.settings
    assert p.engine == "llama.cpp"
    assert s.n_ctx == (16384 if "16384" in text else 32768)
    assert s.flash_attn == "on"
    notes = " ".join(s.unmodelled)
    assert "-mla 3 (ik_llama.cpp's MLA mode 3" in notes
    assert ("-fmoe (ik_llama.cpp's fused MoE" in notes) == ("-fmoe" in text)
    if "-ctk q8_0" in text:
        assert (s.cache_type_k, s.cache_type_v) == ("q8_0", "q8_0")


@pytest.mark.parametrize("case", [ISSUE437_FIRST, ISSUE437_SECOND], ids=["first", "with-ubatch"])
def test_issue437_fmoe_amb_rtr(case):
    _, text = case
    s = _parse(text).settings
    assert (s.n_ctx, s.n_gpu_layers, s.cache_type_k, s.cache_type_v) == (32768, 99, "q4_0", "q4_0")
    # unquoted, bash drops each backslash before the `.`
    assert [p for p, _ in s.override_tensor] == ["blk.1[2-9].ffn.*", "blk.[2-8][0-9].ffn.*", "blk.9[0-3].ffn.*"]
    # common.cpp -rtr: repack_tensors = true, use_mmap = false
    assert s.mmap is False
    assert [n.split(" (")[0] for n in s.unmodelled] == ["-fmoe", "-amb 512", "-rtr"]
    assert all("ik_llama.cpp's" in n for n in s.unmodelled)
    if "-ub 2048" in text:
        assert (s.n_batch, s.n_ubatch) == (2048, 2048)


def test_issue1730_split_mode_graph_refused_in_one_line():
    with pytest.raises(OomkitError, match=r"^-sm graph is ik_llama\.cpp's split mode .*mainline llama\.cpp's allocations"):
        _parse(ISSUE1730[1])


@pytest.mark.parametrize("case", [KTRANSFORMERS1417, PR394], ids=["ktransformers1417", "pr394"])
def test_ik_build_with_mainline_flags_reads_as_before(case):
    _, text = case
    s = _parse(text).settings
    assert s.unmodelled == ()
    assert s.flash_attn == "on"
    if "163840" in text:
        assert (s.n_ctx, s.n_gpu_layers, s.override_tensor) == (163840, 62, ((".ffn_.*_exps.", "CPU"),))
    else:
        assert (s.n_ctx, s.n_gpu_layers, s.mmap, s.main_gpu) == (16384, 99, False, 0)
        assert s.override_tensor[-1] == (r"blk\..*_exps\.", "CPU")


BASE = "llama-server -hf Qwen/Qwen3-30B-A3B:Q4_K_M -c 8192 -ngl 99 "


@pytest.mark.parametrize("flags, words", [
    ("-mla 1", "-mla 1 is ik_llama.cpp's MLA mode 1, a V^T cache beside the latent K unless flash attention"),
    ("-mla 3 -fa off -ctk q8_0", "-mla 3 without flash attention keeps ik_llama.cpp's latent cache in the -ctv type"),
    ("-mla 0", "-mla 0 is ik_llama.cpp's MLA mode 0, the decompressed per-head K and V cache"),
    ("-ctk q8_KV", "-ctk q8_KV is ik_llama.cpp's cache type"),
    ("-ctv q6_0 -fa on", "-ctv q6_0 is ik_llama.cpp's cache type"),
    ("-sm attn", "-sm attn is ik_llama.cpp's split mode"),
    ("-ctk-first q8_0,4", "-ctk-first q8_0,4 is ik_llama.cpp's flag (common/common.cpp gpt_params_find_arg)"),
    ("-wgt 512", "-wgt 512 is ik_llama.cpp's flag"),
])
def test_refused_in_one_line_exit_2(flags, words, capsys):
    assert main(["check", "--vram", "24G", "--", *split_command(BASE + flags)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert words in err and "oomkit sizes mainline llama.cpp's allocations" in err


def test_compute_options_accepted_with_one_warning(capsys):
    """-ser, -gr, -smgs, --merge-qkv, -khad: read, the estimate as without them, and its warning names them."""
    flags = "-fmoe -ser 7,1 -gr -smgs --merge-qkv -khad -amb 256"
    s = _parse(BASE + flags).settings
    assert [n.split(" (")[0] for n in s.unmodelled] == ["-fmoe", "-ser 7,1", "-gr", "-smgs", "--merge-qkv", "-khad",
                                                         "-amb 256"]
    plain = _parse(BASE).settings
    assert (s.n_ctx, s.cache_type_k, s.mmap, s.flash_attn) == (plain.n_ctx, plain.cache_type_k, plain.mmap,
                                                               plain.flash_attn)
    assert main(["check", "--vram", "24G", "--json", "--", *split_command(BASE + flags)]) in (0, 1)
    out = capsys.readouterr().out
    assert "-ser 7,1 (ik_llama.cpp's experts skipped at run time)" in out


def test_no_fa_is_flash_attention_off():
    """common.cpp -no-fa / --no-flash-attn (PR #863): params.flash_attn = false, mainline's -fa off."""
    assert _parse(BASE + "-no-fa").settings.flash_attn == "off"
    assert _parse(BASE + "-no-fa").settings.unmodelled == ()


def test_mla1_with_flash_attention_is_the_latent_cache_alone():
    """llama_kv_cache_init (ik): needs_v_cache = mla_attn == 1 && !flash_attn; with -fa on, one latent tensor."""
    s = _parse(BASE + "-mla 1 -fa on").settings
    assert s.flash_attn == "on" and s.unmodelled[0].startswith("-mla 1 (ik_llama.cpp's MLA mode 1")
    # the same cache types: the latent cache's type is the same whichever it takes
    assert _parse(BASE + "-mla 2 -fa off -ctk q8_0 -ctv q8_0").settings.cache_type_k == "q8_0"


def test_mla_needs_an_integer():
    with pytest.raises(OomkitError):
        _parse(BASE + "-mla fast")
    with pytest.raises(OomkitError, match="expects a value"):
        _parse(BASE + "-mla")
