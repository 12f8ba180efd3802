#!/bin/bash
# device: build llama.cpp's CUDA libraries for sm_90, then measure (see measure.py)
T0=$(date +%s); export PYTHONUNBUFFERED=1
nproc; nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv; python3 -V; which nvcc cmake ninja
cd .devsrc
CM="-G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DCMAKE_BUILD_TYPE=Release"
if ! cmake -S llama.cpp -B build $CM > $OUT/cfg.log 2>&1; then
  echo "configure failed, trying pip cublas"; grep -A3 "Error" $OUT/cfg.log | head -20
  CB=$(python3 -c "import nvidia.cublas,os;print(list(nvidia.cublas.__path__)[0])"); ls $CB $CB/lib
  rm -rf build
  cmake -S llama.cpp -B build $CM -DCUDA_cublas_LIBRARY=$(ls $CB/lib/libcublas.so* | head -1) -DCUDA_cublasLt_LIBRARY=$(ls $CB/lib/libcublasLt.so* | head -1) "-DCMAKE_CUDA_FLAGS=-I$CB/include" "-DCMAKE_CXX_FLAGS=-I$CB/include" > $OUT/cfg2.log 2>&1 || { tail -30 $OUT/cfg2.log; exit 1; }
fi
grep -i "cuda\|cublas" $OUT/cfg.log | head -8
timeout 420 ninja -C build llama > $OUT/build.log 2>&1; echo "build rc $? after $(( $(date +%s) - T0 )) s"; tail -3 $OUT/build.log; ls -la build/bin
cd ..
export LLAMA_CPP_LIB_PATH=$PWD/.devsrc/build/bin PYTHONPATH=$PWD/.devsrc/site OOMKIT_GT_CACHE=/tmp/gt
export MEASURE_BUDGET=$(( 530 - ($(date +%s) - T0) ))
echo "measure budget $MEASURE_BUDGET s"
timeout $(( MEASURE_BUDGET + 40 )) python3 tools/cuda_groundtruth/measure.py 2>&1 | tail -40
ls -la $OUT; gzip -k $OUT/cuda_measure.json; ls -la $OUT
