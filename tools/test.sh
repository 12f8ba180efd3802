#!/usr/bin/env bash
# Sets up everything the test suite needs (a venv, the project with its dev extras, llama.cpp's Python
# binding built for the CPU) and runs it. Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q -e ".[dev]"
tools/install_llama_cpp.sh .venv/bin/python
exec .venv/bin/python -m pytest "$@"
