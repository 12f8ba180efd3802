"""The engine registry (engines/base.py) loads an engine package on first use by name, program or module, from small
static tables of those names: the tables say what the engine records say, and naming one engine loads it alone."""

from __future__ import annotations

import subprocess
import sys

from oomkit.engines import base, pasted


def test_the_static_tables_match_the_engine_records():
    engines = base.all_engines()
    assert [e.name for e in engines] == list(base._PACKAGES)
    assert base._ALIASES == {a: e.name for e in engines for a in e.aliases}
    assert base._PROGRAMS == {p: e.name for e in engines for p in e.programs}
    assert base._MODULES == {m: e.name for e in engines for m in e.python_modules}


def test_program_and_module_lookups_give_the_records_variant():
    for eng in base.all_engines():
        for program, variant in eng.programs.items():
            assert base.engine_for_program(program) == (eng, variant)
        for module, variant in eng.python_modules.items():
            assert base.engine_for_program("python", module=module) == (eng, variant)
        for alias in eng.aliases:
            assert base.get_engine(alias.upper()) is eng
    assert base.engine_for_program("llama-quantize") is None
    assert base.engine_for_program("python", module="http.server") is None


def test_pasted_file_hints_reach_the_engines_that_own_them():
    assert "Ollama Modelfile" in pasted.pasted_file_hint("FROM qwen3:8b\nPARAMETER num_ctx 8192\n")
    assert "vLLM config file" in pasted.pasted_file_hint("model: Qwen/Qwen3-8B\nmax-model-len: 8192\n")
    assert pasted.pasted_file_hint("qwen3:8b") is None


def _loaded(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted(m for m in sys.modules "
                          "if m.startswith('oomkit.engines.') and m.count('.') == 2)))"],
                         capture_output=True, text=True, check=True).stdout.split()
    return set(out)


def test_naming_one_engine_loads_that_engine_alone():
    packages = {f"oomkit.engines.{p}" for p in base._PACKAGES.values()}
    assert _loaded("from oomkit.commands._model_args import parse_model_request\n"
                   "parse_model_request(['llama3.1:8b', '--json'])") & packages == {"oomkit.engines.llamacpp"}
    assert _loaded("from oomkit.engines.cmdline import parse_command\n"
                   "parse_command(['vllm', 'serve', 'Qwen/Qwen3-8B'])") & packages == {"oomkit.engines.vllm"}
    assert _loaded("from oomkit.engines.base import get_engine\nget_engine('mlx-lm')") & packages \
        == {"oomkit.engines.mlx"}
