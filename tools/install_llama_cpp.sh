#!/usr/bin/env bash
# Install llama-cpp-python (the CPU build the ground-truth tests run llama.cpp through) into a Python.
#
#   tools/install_llama_cpp.sh PYTHON
#
# Idempotent:
#   1. if `import llama_cpp` works in PYTHON, do nothing;
#   2. else if a wheel of this exact version that fits PYTHON's interpreter and platform is in the wheel
#      cache (${OOMKIT_WHEEL_CACHE:-$HOME/.cache/oomkit/wheels}), install it (pip picks it by its tags);
#   3. else build that wheel from the sdist with `pip wheel` into the cache (CPU only, portable, no OpenMP,
#      no examples/tools/server; ~20-30 min on 2 cores), then install it.
# Concurrent runs wait for each other (flock on the cache), so only one build happens.
#
# Environment: LLAMA_CPP_PYTHON_VERSION (default 0.3.36, the version pyproject's `engines` extra pins),
# OOMKIT_WHEEL_CACHE, CMAKE_BUILD_PARALLEL_LEVEL (default 2).
set -euo pipefail

PY="${1:?usage: $0 PYTHON}"
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
CACHE="${OOMKIT_WHEEL_CACHE:-$HOME/.cache/oomkit/wheels}"
REQ="llama-cpp-python==${VERSION}"

say() { echo "install_llama_cpp: $*" >&2; }

installed_version() {
    "$PY" -c 'import importlib.metadata as m, llama_cpp; print(m.version("llama_cpp_python"))' 2>/dev/null
}

if have="$(installed_version)"; then
    if [ "$have" != "$VERSION" ]; then
        say "llama_cpp $have already importable in $PY (wanted $VERSION); leaving it alone"
    else
        say "llama_cpp $have already installed in $PY"
    fi
    exit 0
fi

mkdir -p "$CACHE"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE/.install.lock"
    flock 9
    # another run may have finished the job while we waited
    if have="$(installed_version)"; then
        say "llama_cpp $have installed meanwhile"
        exit 0
    fi
fi

install_from_cache() {
    # --no-index: only the cache; pip installs a wheel only if its tags fit this interpreter/platform
    "$PY" -m pip install --quiet --no-index --no-deps --find-links "$CACHE" "$REQ" 2>/dev/null || return 1
    # then its runtime dependencies (numpy, typing-extensions, diskcache, jinja2) from the usual index
    "$PY" -m pip install --quiet --find-links "$CACHE" "$REQ"
}

if install_from_cache; then
    say "installed $REQ from the cached wheel in $CACHE"
    exit 0
fi

say "no cached wheel of $REQ fits $PY; building it (CPU only) into $CACHE"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DGGML_OPENMP=OFF"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
build_dir="$(mktemp -d)"
trap 'rm -rf "$build_dir"' EXIT
"$PY" -m pip wheel --no-deps --no-binary llama-cpp-python --wheel-dir "$build_dir" "$REQ"
cp "$build_dir"/llama_cpp_python-"$VERSION"-*.whl "$CACHE"/

if install_from_cache; then
    say "built and installed $REQ"
    exit 0
fi
say "built a wheel but could not install it from $CACHE"
exit 1
