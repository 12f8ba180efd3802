#!/usr/bin/env bash
# Sets up everything the test suite needs (a venv, the project with its dev extras, llama.cpp's Python
# binding built for the CPU) and runs it. Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q -e ".[dev]"
# The transformers engine's ground truth (the `truth` extra: torch + transformers, run on the CPU). Installed only
# where pip resolves torch==2.13.0 to a CPU wheel (this machine keeps one on disk); anywhere else the pin would pull
# a CUDA build of several GB, so the step is skipped and those tests skip themselves.
if ! .venv/bin/python -c "import torch, transformers" >/dev/null 2>&1; then
  report=$(mktemp)
  if timeout 120 .venv/bin/python -m pip install -q --dry-run --no-deps --ignore-installed --report "$report" \
       "torch==2.13.0" >/dev/null 2>&1 && grep -q -E '(\+|%2B)cpu' "$report"; then
    .venv/bin/python -m pip install -q -e ".[truth]"
  else
    echo "tools/test.sh: no CPU build of torch 2.13.0 within reach; skipping the transformers ground-truth install" >&2
  fi
  rm -f "$report"
fi
tools/install_llama_cpp.sh .venv/bin/python
tools/install_browser.sh  # Debian's Chromium for the browser tests (never a Playwright download)
exec .venv/bin/python -m pytest "$@"
