#!/bin/bash
# Prepares .devsrc/ (git-ignored) for run.sh on a CUDA machine with nvcc, cmake and ninja but no network:
# llama.cpp's sources as vendored in the installed llama-cpp-python's sdist (CPU and CUDA backends only), and the
# pure-Python packages the measurement needs (the binding without its CPU libraries, gguf, diskcache).
# Then, on the GPU machine, from the repository root: bash tools/cuda_groundtruth/run.sh  (OUT=dir for results)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
VER=$($PY -c "from importlib.metadata import version; print(version('llama_cpp_python'))")
grep -qx "/.devsrc/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/.devsrc/" >> .git/info/exclude; }
TMP=$(mktemp -d)
$PY -m pip download -q --no-binary :all: --no-deps "llama-cpp-python==$VER" -d "$TMP"
tar xzf "$TMP"/llama_cpp_python-*.tar.gz -C "$TMP"
S=$(echo "$TMP"/llama_cpp_python-*/vendor/llama.cpp)
rm -rf .devsrc && mkdir -p .devsrc/llama.cpp .devsrc/site
cp -r "$S"/{CMakeLists.txt,cmake,src,include,ggml,vendor,licenses} .devsrc/llama.cpp/
for b in "$S"/ggml/src/ggml-*/; do
  case "$(basename "$b")" in ggml-cpu|ggml-cuda) ;; *) rm -rf ".devsrc/llama.cpp/ggml/src/$(basename "$b")" ;; esac
done
SP=$($PY -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
cp -r "$SP"/gguf "$SP"/diskcache .devsrc/site/
mkdir -p .devsrc/site/llama_cpp && (cd "$SP"/llama_cpp && tar cf - --exclude=lib --exclude=__pycache__ .) | (cd .devsrc/site/llama_cpp && tar xf -)
rm -rf "$TMP"
du -sh .devsrc
