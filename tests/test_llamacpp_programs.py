"""Every program that runs llama.cpp reads with its own defaults (engines/llamacpp/programs.py)."""

from dataclasses import replace

import pytest

import oomkit
from oomkit.engines.cmdline import parse_command
from oomkit.engines.llamacpp import programs
from oomkit.errors import OomkitError

MiB = 1 << 20


def _settings(*argv):
    return parse_command(list(argv)).settings


def test_llama_bench_one_context_per_test_row_the_largest_answers():
    # llama-bench.cpp: each -p value a ppN test, each -n a tgN test, each with n_prompt + n_gen + depth cells
    s = _settings("llama-bench", "-m", "x.gguf", "-p", "512", "-n", "128", "-ngl", "99")
    assert s.bench_tests == (("pp512", 512), ("tg128", 128))
    assert (s.n_gpu_layers, s.flash_attn, s.n_batch, s.n_ubatch, s.n_parallel) == (99, "off", 2048, 512, 1)
    s = _settings("llama-bench", "-m", "x.gguf", "-p", "512,2048", "-n", "0", "-pg", "1024,256", "-d", "0,4096")
    assert [t for t, _ in s.bench_tests] == ["pp512", "pp2048", "pp1024+tg256", "pp512 @ d4096", "pp2048 @ d4096",
                                            "pp1024+tg256 @ d4096"]
    assert s.n_ctx == 2048 + 4096
    est = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", vram="24GiB", find_max_context=False,
                          settings=_settings("llama-bench", "-m", "x.gguf", "-p", "512", "-n", "128"))
    rows = est.engine_view["bench_rows"]
    assert [r["test"] for r in rows] == ["pp512", "tg128"]
    assert est.engine_view["bench_test"] == "pp512" and est.total_bytes == max(r["total_bytes"] for r in rows)
    # tg128: 128 cells padded to 256 (llama_context: GGML_PAD(n_ctx, 256)); Qwen3-8B f16 KV 144 KiB a token
    assert rows[1]["n_ctx"] == 256 and rows[1]["kv_cache_bytes"] == 256 * 36 * 8 * 128 * 2 * 2
    with pytest.raises(OomkitError):
        _settings("llama-bench", "-m", "x.gguf", "--ctx-size", "4096")  # not a llama-bench flag


def test_llama_bench_command_line(capsys):
    from oomkit.cli import main

    rc = main(["estimate", "--vram", "24GiB", "--json", "--", "llama-bench", "-m", "Qwen/Qwen3-8B:Q4_K_M", "-p", "512",
               "-n", "128", "-ngl", "99"])
    assert rc in (0, None)
    assert '"bench_test": "pp512"' in capsys.readouterr().out


def test_program_defaults():
    # perplexity.cpp: n_seq = n_batch / n_ctx chunks in one unified cache of n_seq x n_ctx cells
    s = _settings("llama-perplexity", "-m", "x.gguf", "-c", "512", "-f", "wiki.test.raw")
    assert (s.n_parallel, s.n_ctx, s.kv_unified, s.n_batch) == (4, 2048, True, 2048)
    s = _settings("llama-embedding", "-m", "x.gguf", "-b", "4096")
    assert s.embeddings and s.n_ubatch == 4096
    assert _settings("main", "-m", "x.gguf").n_ctx == 512  # the old name's -c default
    assert _settings("llama-cli", "-m", "x.gguf").n_ctx == 0  # today's: the trained context
    s = _settings("llama-imatrix", "-m", "x.gguf", "-c", "512", "-f", "calib.txt")
    assert s.n_batch == 512
    assert _settings("llama-mtmd-cli", "-m", "x.gguf", "--mmproj", "mmproj.gguf").mmproj == "mmproj.gguf"
    s = _settings("lms", "load", "qwen3-8b", "--context-length", "16384", "--gpu", "max")
    assert (s.n_ctx, s.n_gpu_layers, s.program) == (16384, -1, "lmstudio")
    assert _settings("lms", "load", "qwen3-8b").n_ctx == 4096
    with pytest.raises(OomkitError):
        _settings("lms", "load", "qwen3-8b", "--gpu", "0.5")


def test_binding_snippet_round_trip():
    s = programs.binding_settings(n_ctx=8192, n_gpu_layers=-1, flash_attn=True, type_k=8, type_v=8)
    assert (s.cache_type_k, s.cache_type_v, s.flash_attn, s.n_batch) == ("q8_0", "q8_0", "on", 512)
    text = programs.binding_snippet("model.gguf", s)
    assert text.startswith("from llama_cpp import Llama")
    call = text.split("Llama(", 1)[1].rsplit(")", 1)[0]
    kwargs = eval(f"dict({call})")  # noqa: S307 - our own snippet
    kwargs.pop("model_path")
    assert programs.binding_settings(**kwargs) == s
    with pytest.raises(OomkitError):
        programs.binding_settings(n_ctx=512, rope_freq_base=1e6)


def test_binding_defaults_are_llama_cpp_pythons(tmp_path):
    """The binding's own defaults, read back from a real Llama(...) on this machine."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from tests import ggufs

    path = ggufs.write_llama_gguf(tmp_path / "m.gguf", n_layers=1)
    llm = llama_cpp.Llama(model_path=str(path), verbose=False)
    try:
        s = programs.binding_settings()
        est = oomkit.estimate(str(path), "llama.cpp", cpu_only=True, find_max_context=False, settings=s)
        assert est.engine_view["n_ctx"] == llm.n_ctx() == 512
        assert (s.n_batch, s.n_ubatch) == (llm.context_params.n_batch, llm.context_params.n_ubatch)
        assert est.engine_view["binding_logits_bytes"] == llm.scores.nbytes  # its host copy of the logits
    finally:
        llm.close()


def test_mmproj_on_the_first_gpu(tmp_path):
    argv = ["llama-server", "-m", "google/gemma-3-4b-it:Q4_K_M", "-c", "8192", "-fit", "off"]
    base = oomkit.estimate("google/gemma-3-4b-it", quant="Q4_K_M", vram="24GiB", find_max_context=False,
                           settings=_settings(*argv))
    assert base.engine_view["mmproj"] == "not loaded (no --mmproj)"
    est = oomkit.estimate("google/gemma-3-4b-it", quant="Q4_K_M", vram="24GiB", find_max_context=False,
                          settings=_settings(*argv, "--mmproj", "mmproj-model-f16.gguf"))
    # the SigLIP tower + Gemma 3 projector (model/towers.py), F16 as the converter writes the mmproj
    assert est.engine_view["mmproj_bytes"] == 419_816_304 * 2
    assert est.devices[0].weights_bytes - base.devices[0].weights_bytes == 419_816_304 * 2
    f = tmp_path / "mmproj.gguf"
    f.write_bytes(b"\0" * 4096)
    est = oomkit.estimate("google/gemma-3-4b-it", quant="Q4_K_M", vram="24GiB", find_max_context=False,
                          settings=_settings(*argv, "--mmproj", str(f)))
    assert est.engine_view["mmproj_bytes"] == 4096
    s = _settings(*argv, "--mmproj", str(f), "--no-mmproj")
    assert "mmproj_bytes" not in oomkit.estimate("google/gemma-3-4b-it", quant="Q4_K_M", vram="24GiB",
                                                 find_max_context=False, settings=s).engine_view


def test_context_default_by_build():
    # common_params n_ctx: 0 = trained before PR #10136 (1926d6e39, master's 4014th commit: b4014), 4096 until
    # PR #16653 (--fit; b1f3a6e5d, b7407), then 0 again
    assert [programs.common_default_ctx(b) for b in (3579, 4013, 4014, 7057, 7406, 7407, 9999)] == [
        0, 0, 4096, 4096, 4096, 0, 0]
    # perplexity.cpp / imatrix.cpp main set -c 512 before parsing (every build)
    s = _settings("llama-perplexity", "-m", "x.gguf", "-f", "wiki.test.raw")
    assert (s.n_parallel, s.n_ctx, s.n_batch) == (4, 2048, 2048)
    assert _settings("llama-imatrix", "-m", "x.gguf", "-f", "calib.txt").n_ctx == 512
    # a llama-cli log at b7057 (OpenCL, Adreno) runs a 4096 context unasked; today's llama-cli the trained context
    base = _settings("llama-cli", "-m", "x.gguf", "-fit", "off")
    old = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", vram="24GiB", find_max_context=False,
                          settings=replace(base, engine_version="b7057"))
    new = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", vram="24GiB", find_max_context=False,
                          settings=base)
    assert old.engine_view["n_ctx"] == 4096 and new.engine_view["n_ctx"] == 40960  # Qwen3-8B trained 40960
    assert any("-c 4096" in w for w in old.warnings)
    # Qwen3-8B f16 KV: 36 layers x 8 heads x 128 x 2 (K, V) x 2 bytes a token
    assert old.kv_cache_bytes == 4096 * 36 * 8 * 128 * 2 * 2
    # the Python binding and explicit contexts keep their own
    assert programs.with_build_ctx(replace(base, n_ctx=8192, engine_version="b7057"))[0].n_ctx == 8192
    server = _settings("llama-server", "-m", "x.gguf")
    assert programs.with_build_ctx(replace(server, engine_version="b3600"))[0].n_ctx == 0  # issue #9112's build
    assert programs.with_build_ctx(replace(server, engine_version="b6900"))[0].n_ctx == 4096


@pytest.mark.parametrize("build, program", [("b2647", "server"), ("b3141", "server"), ("b3142", "llama-server"),
                                            (None, "llama-server")])
def test_plan_names_the_program_as_the_build_does(build, program):
    # PR #7809 (1c641e6a, b3142) renamed server -> llama-server and main -> llama-cli; a plan for an older build
    # writes the name that build's binary has, and the command reads back as that program
    from oomkit.engines.llamacpp.args import format_command  # the writer plan uses
    from oomkit.engines.llamacpp.settings import LlamaCppSettings  # its settings
    argv = format_command("unsloth/Qwen3-8B-GGUF", LlamaCppSettings(engine_version=build, n_ctx=8192), "Q4_K_M")
    assert argv[0] == program
    assert _settings(*argv).n_ctx == 8192
