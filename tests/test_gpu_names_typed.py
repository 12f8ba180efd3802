"""--gpu names as people really type them: the strings of real llama.cpp / vLLM / Ollama issues (nvidia-smi's and
ggml's device names, rocminfo's and vLLM collect_env's, Windows' names for integrated GPUs) and of forum posts
("3090 x2", "2x4090", "dual 3090s"). Each one resolves to the memory of the card it names (the catalog's figure:
nvidia-smi / rocm-smi readings where published, else the vendor's size), or is refused in one line that says what
to give instead (an integrated GPU, an architecture, a name cut short, a memory size, a card oomkit does not know)
-- never another card.

The sources cited beside each string are where it was seen (GitHub issues by repository#number, pages by address);
the memory is the catalog's (gpus.json cites its own sources).
"""

from __future__ import annotations

import collections
import dataclasses
import re
import subprocess
import sys

import pytest

from oomkit.errors import OomkitError
from oomkit.hardware import catalog
from oomkit.hardware.catalog import devices_for_names, resolve, size_notes

MiB = 2**20

# (typed text, the catalog device, MiB per device, devices, where the text was seen)
RESOLVES = [
    # ---- nvidia-smi / ggml_cuda_init / collect_env names, as printed
    ("NVIDIA GeForce RTX 3090 Ti", "NVIDIA GeForce RTX 3090 Ti", 24564, 1, "ikawrakow/ik_llama.cpp#370"),
    ("NVIDIA RTX A6000", "NVIDIA RTX A6000", 49140, 1, "ikawrakow/ik_llama.cpp#333"),
    ("NVIDIA GeForce RTX 4080", "NVIDIA GeForce RTX 4080", 16376, 1, "mozilla-ai/llamafile#552"),
    ("NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090", 24576, 1, "ggml-org/llama.cpp#15294"),
    ("NVIDIA GeForce RTX 4070 Ti SUPER", "NVIDIA GeForce RTX 4070 Ti SUPER", 16376, 1,
     "fredlas/optimize_llamacpp_ngl#1"),
    ("NVIDIA GeForce RTX 4050 Laptop GPU", "NVIDIA GeForce RTX 4050 Laptop GPU", 6144, 1, "ggml-org/llama.cpp#6758"),
    ("Tesla P40", "NVIDIA Tesla P40", 24576, 1, "ggml-org/llama.cpp#2506"),
    ("NVIDIA A100 80GB PCIe", "NVIDIA A100 80GB PCIe", 81920, 1, "vllm-project/vllm#5711"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", 81920, 1, "vllm-project/vllm#9290"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", 40960, 1, "nvidia-smi's name of the 40 GB SXM4 board"),
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", 81559, 1, "LMCache/LMCache#259 (81559MiB)"),
    ("NVIDIA GH200 480GB", "NVIDIA GH200 120GB", 97871, 1, "vllm-project/vllm#9630 (its 96 GB H100)"),
    ("NVIDIA A10G", "NVIDIA A10G", 23028, 1, "NVIDIA/TensorRT-LLM#7818 (23028MiB)"),
    ("2 * A10G", "NVIDIA A10G", 23028, 2, "arc53/llm-price-compass#6 ('2 * A10G (24GB)')"),
    ("Tesla V100-SXM2-16GB", "NVIDIA Tesla V100 16GB", 16384, 1, "1CatAI/1Cat-vLLM#85 (16384MiB)"),
    ("V100-SXM2-32GB", "NVIDIA Tesla V100 32GB", 32768, 1, "vllm-project/vllm#22800"),
    ("Tesla V100-SXM2-32GB", "NVIDIA Tesla V100 32GB", 32768, 1, "nvidia-smi's name of the 32 GB SXM2 board"),
    ("Tesla V100-PCIE-32GB", "NVIDIA Tesla V100 32GB", 32768, 1, "nvidia-smi's name of the 32 GB PCIe board"),
    ("Tesla P100-PCIE-16GB", "NVIDIA Tesla P100 16GB", 16384, 1, "nvidia-smi's name of the 16 GB PCIe board"),
    ("NVIDIA L40S", "NVIDIA L40S", 46068, 1, "vllm-project/vllm#23230"),
    ("L20", "NVIDIA L20", 46068, 1, "vllm-project/vllm#7721 ('GPU: L20, Memory 46GB')"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97887,
     1, "xorbitsai/inference#3776"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97887, 1,
     "vllm-project/vllm#32109 (the same GB202 board, 96 GB)"),
    ("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090", 32607, 1, "nvidia-smi"),
    ("8*5080", "NVIDIA GeForce RTX 5080", 16303, 8, "vllm-project/vllm#14452 ('8*5080 which got 16G per one')"),
    ("NVIDIA GeForce RTX 5070 Ti", "NVIDIA GeForce RTX 5070 Ti", 16303, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 5070", "NVIDIA GeForce RTX 5070", 12227, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 5060", "NVIDIA GeForce RTX 5060", 8151, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", 24564, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 4090 D", "NVIDIA GeForce RTX 4090 D", 24576, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 4070", "NVIDIA GeForce RTX 4070", 12282, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 4060", "NVIDIA GeForce RTX 4060", 8188, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 4060 Ti 16GB", "NVIDIA GeForce RTX 4060 Ti 16GB", 16380, 1, "the 16 GB card named"),
    ("NVIDIA GeForce RTX 3080 Ti", "NVIDIA GeForce RTX 3080 Ti", 12288, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 3070", "NVIDIA GeForce RTX 3070", 8192, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 3060 Ti", "NVIDIA GeForce RTX 3060 Ti", 8192, 1, "nvidia-smi"),
    ("NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 2080 Ti", 11264, 1, "nvidia-smi"),
    ("NVIDIA GeForce GTX 1080 Ti", "NVIDIA GeForce GTX 1080 Ti", 11264, 1, "localGPT#14 (nvidia-smi)"),
    ("NVIDIA GeForce GTX 1660 SUPER", "NVIDIA GeForce GTX 1660 SUPER", 6144, 1, "nvidia-smi"),
    ("NVIDIA TITAN RTX", "NVIDIA TITAN RTX", 24576, 1, "nvidia-smi"),
    ("NVIDIA RTX A5000", "NVIDIA RTX A5000", 24576, 1, "nvidia-smi"),
    ("NVIDIA RTX A4000", "NVIDIA RTX A4000", 16376, 1, "nvidia-smi"),
    ("NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada Generation", 49140, 1, "nvidia-smi"),
    ("NVIDIA RTX 4000 Ada Generation", "NVIDIA RTX 4000 Ada Generation", 20475, 1, "nvidia-smi"),
    ("NVIDIA L4", "NVIDIA L4", 23034, 1, "nvidia-smi"),
    ("NVIDIA L40", "NVIDIA L40", 46068, 1, "nvidia-smi"),
    ("NVIDIA A40", "NVIDIA A40", 46068, 1, "nvidia-smi"),
    ("NVIDIA A30", "NVIDIA A30", 24576, 1, "nvidia-smi"),
    ("NVIDIA A10", "NVIDIA A10", 23028, 1, "nvidia-smi"),
    ("Tesla T4", "NVIDIA T4", 15360, 1, "nvidia-smi (older drivers)"),
    ("T4", "NVIDIA T4", 15360, 1, "typed"),
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe", 81559, 1, "nvidia-smi"),
    ("NVIDIA H100 NVL", "NVIDIA H100 NVL", 95830, 1, "nvidia-smi"),
    ("H100 NVL", "NVIDIA H100 NVL", 95830, 1, "typed"),
    ("NVIDIA H200", "NVIDIA H200", 143771, 1, "nvidia-smi"),
    ("NVIDIA H200 NVL", "NVIDIA H200 NVL", 143771, 1, "nvidia-smi"),
    ("NVIDIA H800", "NVIDIA H800", 81559, 1, "nvidia-smi"),
    ("NVIDIA B200", "NVIDIA B200", 183359, 1, "nvidia-smi"),
    ("B200", "NVIDIA B200", 183359, 1, "typed"),
    ("NVIDIA B300", "NVIDIA B300", 275040, 1, "nvidia-smi"),
    ("NVIDIA GB200", "NVIDIA GB200", 189471, 1, "nvidia-smi"),
    ("NVIDIA GB10", "NVIDIA GB10", 125081, 1, "unslothai/unsloth#10691 (121.7 GiB)"),
    ("Quadro RTX 4000", "NVIDIA Quadro RTX 4000", 8192, 1, "akash-network/provider-configs#12 (nvidia-smi, 8192MiB)"),
    ("Quadro RTX 8000", "NVIDIA Quadro RTX 8000", 49152, 1,
     "sirselim/guppy_parameter_optimiser#6 (nvidia-smi's name), NVIDIA's 48 GB"),
    ("Quadro RTX 6000", "NVIDIA Quadro RTX 6000", 24576, 1, "typed (NVIDIA's 24 GB)"),
    ("Quadro RTX 5000", "NVIDIA Quadro RTX 5000", 16384, 1, "bene51/3Dscript#27 (OpenCL: 'Quadro RTX 5000', 16384 MByte)"),
    ("NVIDIA RTX A5500", "NVIDIA RTX A5500", 24576, 1, "nvidia-smi's name (NVIDIA's 24 GB)"),
    ("Tesla V100S-PCIE-32GB", "NVIDIA Tesla V100S 32GB", 32768, 1, "nvidia-smi's name of the 32 GB V100S"),
    ("NVIDIA GH200 144G HBM3e", "NVIDIA GH200 144G HBM3e", 146831, 1, "NVIDIA/mig-parted#139 (nvidia-smi's name)"),
    ("DGX Spark", "NVIDIA GB10", 125081, 1, "typed"),
    ("2x DGX Spark", "NVIDIA GB10", 125081, 2, "typed (two Sparks)"),
    # ---- GeForce laptop GPUs: one memory size each (NVIDIA's laptop specifications)
    ("RTX 5090 Laptop", "NVIDIA GeForce RTX 5090 Laptop GPU", 24576, 1, "typed"),
    ("RTX 5080 Laptop", "NVIDIA GeForce RTX 5080 Laptop GPU", 16384, 1, "typed"),
    ("NVIDIA GeForce RTX 5080 Laptop GPU", "NVIDIA GeForce RTX 5080 Laptop GPU", 16384, 1, "nvidia-smi"),
    ("RTX 5070 Ti Laptop", "NVIDIA GeForce RTX 5070 Ti Laptop GPU", 12288, 1, "typed"),
    ("5070 Ti Mobile", "NVIDIA GeForce RTX 5070 Ti Laptop GPU", 12288, 1, "typed"),
    ("RTX 5070 Laptop", "NVIDIA GeForce RTX 5070 Laptop GPU", 8192, 1, "typed (the brief's case)"),
    ("NVIDIA GeForce RTX 5070 Laptop GPU", "NVIDIA GeForce RTX 5070 Laptop GPU", 8192, 1, "nvidia-smi"),
    ("5070M", "NVIDIA GeForce RTX 5070 Laptop GPU", 8192, 1, "typed"),
    ("RTX 5060 Laptop", "NVIDIA GeForce RTX 5060 Laptop GPU", 8192, 1, "typed"),
    ("RTX 4090 Laptop", "NVIDIA GeForce RTX 4090 Laptop GPU", 16384, 1, "typed"),
    ("4090M", "NVIDIA GeForce RTX 4090 Laptop GPU", 16384, 1, "typed"),
    ("RTX 4090 Laptop 16GB", "NVIDIA GeForce RTX 4090 Laptop GPU", 16384, 1, "typed"),
    ("RTX 4080 Laptop", "NVIDIA GeForce RTX 4080 Laptop GPU", 12288, 1, "typed"),
    ("RTX 4070 Laptop", "NVIDIA GeForce RTX 4070 Laptop GPU", 8192, 1, "typed"),
    ("RTX 4060 Laptop", "NVIDIA GeForce RTX 4060 Laptop GPU", 8192, 1, "typed"),
    ("RTX 4050 Laptop", "NVIDIA GeForce RTX 4050 Laptop GPU", 6144, 1, "typed"),
    ("RTX 3080 Ti Laptop", "NVIDIA GeForce RTX 3080 Ti Laptop GPU", 16384, 1, "typed"),
    ("RTX 3080 Laptop 16GB", "NVIDIA GeForce RTX 3080 Laptop GPU 16GB", 16384, 1, "typed"),
    ("5050 laptop", "NVIDIA GeForce RTX 5050 Laptop GPU", 8192, 1, "typed"),
    ("RTX 2070 Mobile", "NVIDIA GeForce RTX 2070 Laptop GPU", 8192, 1, "typed"),
    # ---- AMD: rocminfo / rocm-smi / Ollama / vLLM names
    ("AMD Radeon RX 7900 XTX", "AMD Radeon RX 7900 XTX", 24560, 1, "rocm-smi"),
    ("Radeon RX 7900 XTX", "AMD Radeon RX 7900 XTX", 24560, 1, "ROCm/legacy-rocm-build#2866 (rocminfo Marketing Name)"),
    ("AMD Radeon RX 7900 XT (gfx1100)", "AMD Radeon RX 7900 XT", 20464, 1, "vllm-project/vllm#10653 (collect_env)"),
    ("AMD Radeon RX 9070 XT", "AMD Radeon RX 9070 XT", 16384, 1, "likelovewant/ollama-for-amd#87"),
    ("RX 9070 XT", "AMD Radeon RX 9070 XT", 16384, 1, "typed"),
    ("Instinct MI300X", "AMD Instinct MI300X", 196592, 1, "typed"),
    ("AMD Instinct MI300X", "AMD Instinct MI300X", 196592, 1, "rocm-smi"),
    ("MI50 32GB", "AMD Instinct MI50 32GB", 32768, 1, "typed"),
    ("MI100", "AMD Instinct MI100", 32768, 1, "typed (AMD's 32 GB)"),
    ("AMD Radeon PRO W7700", "AMD Radeon PRO W7700", 16384, 1, "rocminfo's marketing name (AMD's 16 GB)"),
    ("Radeon VII", "AMD Radeon VII", 16384, 1, "typed"),
    ("7900xtx", "AMD Radeon RX 7900 XTX", 24560, 1, "typed"),
    ("7900 XTX 24GB", "AMD Radeon RX 7900 XTX", 24560, 1, "typed"),
    ("RX 6800 XT", "AMD Radeon RX 6800 XT", 16384, 1, "ollama/ollama#1016"),
    ("6700xt", "AMD Radeon RX 6700 XT", 12288, 1, "typed"),
    ("RX 9060 XT 16GB", "AMD Radeon RX 9060 XT 16GB", 16384, 1, "likelovewant/ollama-for-amd#103 ('9060xt 16G')"),
    ("Strix Halo 128GB", "AMD Ryzen AI Max+ 395 128GB", 131072, 1, "typed"),
    ("AI Max+ 395 128GB", "AMD Ryzen AI Max+ 395 128GB", 131072, 1, "typed"),
    ("Ryzen AI Max+ 395 64GB", "AMD Ryzen AI Max+ 395 64GB", 65536, 1, "typed"),
    # ---- Intel
    ("Arc B580", "Intel Arc B580", 12288, 1, "typed"),
    ("Intel Arc B580", "Intel Arc B580", 12288, 1, "typed"),
    ("Intel(R) Arc(TM) A770 Graphics 16GB", "Intel Arc A770 16GB", 16384, 1,
     "ggml-org/llama.cpp#6036 (SYCL: 'Intel(R) Arc(TM) A770 Graphics', global mem 16225243136), size named"),
    ("A770 16gb", "Intel Arc A770 16GB", 16384, 1, "typed"),
    ("2x Arc Pro B60", "Intel Arc Pro B60", 24576, 2, "typed"),
    # ---- Apple, Jetson
    ("M2 Ultra 192GB", "Apple M2 Ultra 192GB", 196608, 1, "typed"),
    ("Mac Studio M3 Ultra 512GB", "Apple M3 Ultra 512GB", 524288, 1, "typed"),
    ("MacBook Pro M4 Max 128GB", "Apple M4 Max 128GB", 131072, 1, "typed"),
    ("M1 Max 64gb", "Apple M1 Max 64GB", 65536, 1, "typed"),
    ("M4 Pro 48GB", "Apple M4 Pro 48GB", 49152, 1, "typed"),
    ("Jetson AGX Orin 64GB", "NVIDIA Jetson AGX Orin 64GB", 65536, 1, "typed"),
    ("Orin NX 16GB", "NVIDIA Jetson Orin NX 16GB", 16384, 1, "typed"),
    ("Jetson Orin Nano Super", "NVIDIA Jetson Orin Nano 8GB", 8192, 1, "typed"),
    # ---- forum spellings: counts, plurals, sizes, joiners
    ("3090 x2", "NVIDIA GeForce RTX 3090", 24576, 2, "typed"),
    ("2x4090", "NVIDIA GeForce RTX 4090", 24564, 2, "typed"),
    ("2 x 3090", "NVIDIA GeForce RTX 3090", 24576, 2, "typed"),
    ("2× RTX 3090", "NVIDIA GeForce RTX 3090", 24576, 2,
     "calebcoffie.com/benchmarks ('2× RTX 3090')"),
    ("dual 3090", "NVIDIA GeForce RTX 3090", 24576, 2, "typed"),
    ("dual 3090s", "NVIDIA GeForce RTX 3090", 24576, 2,
     "wpnews.pro/news/llama-cpp-b9455-finally-caught-vllm-70t-s-on-2x3090-qwen-27b-uq8 ('dual 3090s')"),
    ("2x RTX 3090s", "NVIDIA GeForce RTX 3090", 24576, 2, "same page ('2x RTX 3090s (24GB each)')"),
    ("RTX 3090 w/ NVLink", "NVIDIA GeForce RTX 3090", 24576, 1, "typed (the bridge after 'w/', not a CPU before it)"),
    ("2x RTX 3090 w/ NVLink", "NVIDIA GeForce RTX 3090", 24576, 2, "typed"),
    ("4x RTX 3090", "NVIDIA GeForce RTX 3090", 24576, 4, "bittide.aicompass.dev ('4x RTX 3090')"),
    ("dual P40s", "NVIDIA Tesla P40", 24576, 2, "typed"),
    ("rtx3090", "NVIDIA GeForce RTX 3090", 24576, 1, "typed"),
    ("RTX3090", "NVIDIA GeForce RTX 3090", 24576, 1, "typed"),
    ("RTX 3060 12GB", "NVIDIA GeForce RTX 3060 12GB", 12288, 1, "typed"),
    ("3060 12gb", "NVIDIA GeForce RTX 3060 12GB", 12288, 1, "typed"),
    ("4090 24gb", "NVIDIA GeForce RTX 4090", 24564, 1, "typed"),
    ("P40 24gb", "NVIDIA Tesla P40", 24576, 1, "typed"),
    ("4x A100 80GB", "NVIDIA A100-SXM4-80GB", 81920, 4, "typed"),
    ("A100 40GB", "NVIDIA A100-SXM4-40GB", 40960, 1, "typed"),
    ("8x H200", "NVIDIA H200", 143771, 8, "typed"),
    ("H100 SXM", "NVIDIA H100 80GB HBM3", 81559, 1, "typed"),
    ("T4 x 2", "NVIDIA T4", 15360, 2, "typed"),
    ("L40s", "NVIDIA L40S", 46068, 1, "typed (the S of the name, not a plural)"),
    ("RTX 6000 Pro", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97887, 1, "vllm-project/vllm#23497"),
    ("RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97887, 1, "typed"),
    ("V100 32GB", "NVIDIA Tesla V100 32GB", 32768, 1, "typed"),
    ("P100 16GB", "NVIDIA Tesla P100 16GB", 16384, 1, "typed"),
    ("GTX 1080 Ti", "NVIDIA GeForce GTX 1080 Ti", 11264, 1, "typed"),
    ("1660 Super", "NVIDIA GeForce GTX 1660 SUPER", 6144, 1, "typed"),
    ("RTX 2060 12GB", "NVIDIA GeForce RTX 2060 12GB", 12288, 1, "typed"),
    ("RTX 3050 6GB", "NVIDIA GeForce RTX 3050 6GB", 6144, 1, "typed (NVIDIA's 2024 6 GB card, not a modded one)"),
    # a card with its memory chips replaced, named with that size: taken as stated, and said so
    ("2080 Ti 22GB", "NVIDIA GeForce RTX 2080 Ti 22GB", 22528, 1, "typed (modded boards)"),
    ("4090 48GB", "NVIDIA GeForce RTX 4090 48GB", 49152, 1, "typed (modded boards)"),
]

# a name sold in several sizes, named without one: the smallest, with a note that lists every size and how to name
# another (size_notes; check and estimate print it) -- (text, device, MiB, the sizes the note lists, source)
SIZED_BY_NOTE = [
    ("NVIDIA GeForce RTX 4060 Ti", "NVIDIA GeForce RTX 4060 Ti 8GB", 8188, "8 or 16 GB", "nvidia-smi"),
    ("NVIDIA GeForce RTX 5060 Ti", "NVIDIA GeForce RTX 5060 Ti 8GB", 8192, "8 or 16 GB", "nvidia-smi"),
    ("NVIDIA GeForce RTX 3060", "NVIDIA GeForce RTX 3060 12GB", 12288, "8 or 12 GB", "nvidia-smi"),
    ("NVIDIA GeForce RTX 3080", "NVIDIA GeForce RTX 3080 10GB", 10240, "10 or 12 GB", "nvidia-smi"),
    ("RTX 3050", "NVIDIA GeForce RTX 3050", 8192, "6 or 8 GB", "typed"),
    ("RTX 3080 Laptop", "NVIDIA GeForce RTX 3080 Laptop GPU 8GB", 8192, "8 or 16 GB", "typed"),
    ("Intel(R) Arc(TM) A770 Graphics", "Intel Arc A770 8GB", 8192, "8 or 16 GB", "ggml-org/llama.cpp#6036"),
    ("AMD Radeon RX 9060 XT", "AMD Radeon RX 9060 XT 8GB", 8192, "8 or 16 GB", "ollama/ollama#14927"),
    ("RX 9060 XT", "AMD Radeon RX 9060 XT 8GB", 8192, "8 or 16 GB", "typed"),
    ("Apple M4 Max", "Apple M4 Max 36GB", 36864, "36, 48, 64 or 128 GB", "typed"),
    ("Strix Halo", "AMD Ryzen AI Max+ 395 32GB", 32768, "32, 64 or 128 GB", "typed"),
    ("Ryzen AI Max+ 395", "AMD Ryzen AI Max+ 395 32GB", 32768, "32, 64 or 128 GB", "typed"),
    ("Radeon 8060S", "AMD Ryzen AI Max+ 395 32GB", 32768, "32, 64 or 128 GB", "typed"),
    ("Radeon 8060S Graphics", "AMD Ryzen AI Max+ 395 32GB", 32768, "32, 64 or 128 GB",
     "GPUOpen-Drivers/AMDVLK#413 (ggml_vulkan: 'Radeon 8060S Graphics')"),
    ("H20", "NVIDIA H20", 97871, "96 or 141 GB", "typed"),
    ("NVIDIA H20", "NVIDIA H20", 97871, "96 or 141 GB", "nvidia-smi"),
    ("A100", "NVIDIA A100-SXM4-40GB", 40960, "40 or 80 GB", "typed"),
    ("4x A100s", "NVIDIA A100-SXM4-40GB", 40960, "40 or 80 GB", "typed"),
    ("8xH100", "NVIDIA H100 80GB HBM3", 81559, "80 or 94 GB", "typed"),
    ("H100x8", "NVIDIA H100 80GB HBM3", 81559, "80 or 94 GB", "typed"),
]

# refused in one line, saying what to give instead -- (text, what the line says, source)
REFUSED = [
    # integrated GPUs: their memory is what the driver maps of the machine's RAM, never the name's
    ("Radeon 780M", "integrated GPU.*--vram", "typed (the brief's case)"),
    ("890M", "integrated GPU.*Radeon 890M.*--vram", "typed: a GPU name, not 890 MB"),
    ("Radeon 890M", "integrated GPU.*--vram", "ROCm/TheRock#8186"),
    ("Radeon 890M 32GB", r"integrated GPU.*nor the 32 GB named.*--vram", "typed (the RAM of the machine)"),
    ("Arc 140V", "integrated GPU.*Lunar Lake.*--vram", "ggml-org/llama.cpp#28134"),
    ("Intel(R) Arc(TM) 140V GPU (16GB)", "integrated GPU.*nor the 16 GB named", "Windows' device name"),
    ("Intel(R) Arc(TM) Graphics", "integrated GPU.*Meteor Lake", "IGCIT/Intel-GPU-Community-Issue-Tracker-IGCIT#1356"),
    ("AMD Radeon(TM) 860M Graphics", "integrated GPU.*Krackan", "ollama/ollama#14562"),
    ("AMD Ryzen AI 9 HX 370 w/ Radeon 890M", "integrated GPU.*Strix Point", "ROCm/legacy-rocm-build#5777 (rocminfo)"),
    ("AMD Ryzen 7 8845H w/ Radeon 780M Graphics", "integrated GPU.*Phoenix", "luolangaga/tubatoolsPlugin#311"),
    ("Intel(R) Iris(R) Xe Graphics", "integrated GPU", "ggml-org/llama.cpp#5513 (SYCL device list)"),
    ("Intel(R) UHD Graphics 770", "integrated GPU", "ggml-org/llama.cpp#6151 (SYCL device list)"),
    ("Radeon 8050S", "integrated GPU", "typed"),
    ("680M", "integrated GPU", "typed"),
    # an architecture names no one card
    ("gfx1100", r"architecture.*RX 7900 XTX \(24 GB\).*name the card", "ROCm/legacy-rocm-build#2866 (rocminfo)"),
    ("gfx1201", r"architecture.*RX 9070 XT \(16 GB\)", "ollama/ollama#14927"),
    ("gfx942", r"architecture.*MI300X \(192 GB\)", "typed"),
    ("gfx1151", r"architecture.*Ryzen AI Max\+ 395 \(32/64/128 GB\)", "typed"),
    ("gfx1103", "integrated GPU.*Radeon 780M", "ollama/ollama#12071"),
    # nvidia-smi's table cut the name short: a 4070 could be a 4070 Ti SUPER
    ("NVIDIA A800-SXM...", "cut short.*nvidia-smi --query-gpu=name", "vllm-project/vllm#636"),
    ("NVIDIA GeForce RTX 4070 ...", "cut short", "typed from nvidia-smi's table"),
    # a memory size is not a GPU name
    ("8GB", r"memory size.*--vram 8GB", "typed"),
    ("24GB", r"memory size.*--vram 24GB", "typed"),
    ("16G", r"memory size", "typed"),
    ("890MB", r"memory size.*--vram 890MB", "typed"),
    # a card oomkit does not know, or cannot size: refused, never another card
    ("NVIDIA GeForce GTX 970", "unknown GPU", "ggml-org/llama.cpp#2506"),
    ("GRID A100-40C", "unknown GPU", "h2oai/h2ogpt#1013 (a vGPU profile)"),
    ("Radeon(TM) Vega 6 Graphics", "unknown GPU", "ollama/ollama#16482"),
    ("RTX 6000", "unknown GPU.*RTX 6000 Ada.*RTX PRO 6000", "typed: Quadro RTX 6000, RTX 6000 Ada or PRO 6000"),
    ("Quadro RTX 3000", "unknown GPU", "LibreELEC/LibreELEC.tv#4055 (the 440.44 driver's list: a Turing laptop part)"),
    ("Tesla K80", "unknown GPU", "typed"),
    ("Tesla M40 24GB", "unknown GPU", "typed"),
    ("Instinct MI25", "unknown GPU", "typed"),
    ("2080 Ti laptop", "laptop GPU", "typed: a laptop name of a desktop card NVIDIA made no laptop part of"),
    ("RTX 2060 Super Mobile", "laptop GPU", "typed"),
]


@pytest.mark.parametrize("text, name, mib, count, source", RESOLVES, ids=[c[0] for c in RESOLVES])
def test_a_typed_name_resolves_to_its_memory(text, name, mib, count, source):
    devices = devices_for_names(text)
    assert len(devices) == count, source
    assert {(d.name, d.memory_bytes) for d in devices} == {(name, mib * MiB)}, source


@pytest.mark.parametrize("text, name, mib, sizes, source", SIZED_BY_NOTE, ids=[c[0] for c in SIZED_BY_NOTE])
def test_a_name_sold_in_several_sizes_takes_the_smallest_and_says_so(text, name, mib, sizes, source):
    devices = devices_for_names(text)
    assert {(d.name, d.memory_bytes) for d in devices} == {(name, mib * MiB)}, source
    (note,) = size_notes(text)
    assert f"is sold with {sizes}: taken as" in note and "for another size name it" in note
    # the size the note offers is one the catalog resolves
    other = note.rsplit("('", 1)[1].rstrip("')")
    assert resolve(other).known, other


@pytest.mark.parametrize("text, says, source", REFUSED, ids=[c[0] for c in REFUSED])
def test_a_name_oomkit_cannot_size_is_refused_in_one_line(text, says, source):
    assert not resolve(text).known
    with pytest.raises(OomkitError) as e:
        devices_for_names(text)
    line = str(e.value)
    assert "\n" not in line
    assert re.search(says, line), (line, source)


def test_the_collection_is_large_and_never_names_a_wrong_card():
    assert len(RESOLVES) + len(SIZED_BY_NOTE) + len(REFUSED) >= 150
    # every resolved device is the card named: a laptop name never the desktop card, a size never another card's
    for text, name, *_ in RESOLVES + SIZED_BY_NOTE:
        if re.search(r"Laptop|Mobile|\d0M$", text):
            assert "Laptop" in name, text
        # a size in the name is the device's size (the GH200's 480 GB is its Grace CPU's LPDDR5X, not the GPU's)
        gb = re.search(r"(\d+)\s*gb$", text, re.IGNORECASE)
        if gb and text != "NVIDIA GH200 480GB":
            assert name.endswith(f"{gb.group(1)}GB") or int(gb.group(1)) * 1024 >= dict(
                (c[0], c[2]) for c in RESOLVES)[text] >= int(gb.group(1)) * 1000, text


def test_890M_is_a_gpu_name_and_8GB_a_size():
    # "890M" could be read as 890 MB; it is the Radeon 890M (an integrated GPU) -- "890MB" and "8GB" are sizes
    with pytest.raises(OomkitError, match="integrated GPU"):
        devices_for_names("890M")
    for size in ("890MB", "8GB", "8G", "0.5TB"):
        with pytest.raises(OomkitError, match="memory size"):
            devices_for_names(size)


def test_integrated_names_do_not_shadow_catalog_names():
    cat = catalog._catalog()
    assert cat.integrated and not set(cat.integrated) & set(cat.by_key)
    assert not set(cat.architectures) & set(cat.by_key)
    # the Strix Halo part with its memory is in the catalog (unified memory, sold in three sizes), the other
    # Strix Halo GPUs are refused: their machines are not
    assert devices_for_names("Radeon 8060S 128GB")[0].integrated is True


def test_the_integrated_refusal_says_why_and_what_to_give():
    with pytest.raises(OomkitError) as e:
        devices_for_names("Radeon 780M")
    line = str(e.value)
    assert "sharing the machine's RAM" in line and "every memory heap" in line and "--vram" in line
    assert "llama-cli --list-devices" in line and "Vulkan" in line


def test_each_name_is_resolved_once(monkeypatch):
    calls: collections.Counter[str] = collections.Counter()
    real = catalog.resolve

    def counting(name):
        calls[name] += 1
        return real(name)

    monkeypatch.setattr(catalog, "resolve", counting)
    catalog._parse.cache_clear()
    text = "2x RTX 4090, A100 + 3090"
    for _ in range(3):  # what check does: the devices, then the notes (twice: check and the estimate)
        devices_for_names(text)
        size_notes(text)
    assert calls and max(calls.values()) == 1, calls
    catalog._parse.cache_clear()


def test_a_resolution_is_frozen():
    r = resolve("RTX 4090")
    assert r.known and r.spec.memory_mib == 24564
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.spec = None  # type: ignore[misc]
    assert resolve("RTX 4090") == r  # a pure function of the name


@pytest.mark.parametrize("gpu, rc", [("RTX 5070 Laptop", (0, 1)), ("Radeon 780M", (2,)), ("890M", (2,)),
                                     ("gfx1100", (2,)), ("NVIDIA A800-SXM...", (2,))])
def test_the_cli(gpu, rc):
    out = subprocess.run([sys.executable, "-m", "oomkit", "check", "qwen3:8b", "--gpu", gpu], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode in rc, out.stderr
    if rc == (2,):
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("oomkit: error: "), out.stderr
