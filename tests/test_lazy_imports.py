"""`import oomkit` (every command's first import) reads no estimator module: `estimate` and `MemoryEstimate` load
on first use, and the function keeps shadowing the submodule of the same name whoever imports that submodule."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_the_package_loads_the_estimator_on_first_use():
    assert _run("import sys, oomkit\nprint('oomkit.estimate' in sys.modules, 'oomkit.memory' in sys.modules)") \
        == "False False"
    assert _run("import oomkit\nprint(callable(oomkit.estimate), oomkit.MemoryEstimate.__module__)") \
        == "True oomkit.memory"


def test_the_function_shadows_the_submodule_whoever_imports_it():
    code = ("import types, oomkit, oomkit.commands.estimate, oomkit.estimate as e\nfrom oomkit import estimate\n"
            "print(all(isinstance(f, types.FunctionType) for f in (oomkit.estimate, e, estimate)))")
    assert _run(code) == "True"
