"""What a start-up log says besides the error: the settings in force, the buffers the engine allocated, the
program (and version) whose log it is, and, near the failure, where in its start-up the engine was (the last
progress line, the traceback's frames).

Each pattern is tried only on lines holding its plain key, in a bounded region of the log (the start-up before the
failure), and the last value before the failure wins (a log with several start-ups describes the last one).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..units import GiB, MiB
from .scan import Text

# (key that must be in the line, pattern, setting name, kind) -- kind: int, float, str, bool, gib, mib, version
SETTINGS: tuple[tuple[str, str, str, str], ...] = (
    # llama.cpp (llama-context.cpp / llama-kv-cache.cpp / llama-model-loader.cpp start-up prints)
    ("n_ctx", r"\bn_ctx\s{0,12}=\s{0,4}([0-9]{1,20})", "n_ctx", "int"),
    # llama-model.cpp print_info (llm_load_print_meta before 2025): "n_expert = N", 0 for a dense model (not
    # n_expert_used / n_expert_shared); the GGUF key the loader dumps, "<arch>.expert_count u32 = N"
    ("n_expert", r"\bn_expert\s{0,12}=\s{0,4}([0-9]{1,6})\b", "n_expert", "int"),
    ("expert_count", r"\.expert_count\s{1,12}u32\s{0,4}=\s{0,4}([0-9]{1,6})\b", "n_expert", "int"),
    ("n_ctx_train", r"\bn_ctx_train\s{0,12}=\s{0,4}([0-9]{1,20})", "n_ctx_train", "int"),
    ("n_seq_max", r"\bn_seq_max\s{0,12}=\s{0,4}([0-9]{1,20})", "n_parallel", "int"),
    # llama-context.cpp (2025): "n_ctx_per_seq (N) < n_ctx_train (M)" and llama-kv-cache-unified.cpp "kv_size = K":
    # the cache holds n_ctx = n_ctx_per_seq x n_seq_max cells, so their ratio is the sequences (Ollama's
    # OLLAMA_NUM_PARALLEL: llm/server.go passes num_ctx x numParallel as the context) where n_seq_max is not printed
    ("n_ctx_per_seq (", r"\bn_ctx_per_seq \(([0-9]{1,20})\)", "n_ctx_per_seq", "int"),
    ("kv_size = ", r"\bkv_size = ([0-9]{1,20})", "kv_size", "int"),
    ("n_batch", r"\bn_batch\s{0,12}=\s{0,4}([0-9]{1,20})", "n_batch", "int"),
    ("n_ubatch", r"\bn_ubatch\s{0,12}=\s{0,4}([0-9]{1,20})", "n_ubatch", "int"),
    # KoboldCpp's batch as koboldcpp.py takes it: "--blasbatchsize 1024" on its command line or "blasbatchsize=1024"
    # in the Namespace it prints (argparse, to 1.7x; 1.10x prints batchsize= and takes --batchsize / -b, keeping
    # --blasbatchsize as an alias): the tokens one prompt-processing batch evaluates; the spelling is kept, so the
    # fix names the flag that version takes
    ("blasbatchsize", r"\bblasbatchsize(?:=| )(-?[0-9]{1,5})\b", "n_batch", "int"),
    ("blasbatchsize", r"\b(blasbatchsize)(?:=| )-?[0-9]{1,5}\b", "koboldcpp_batch_flag", "str"),
    # llamafile's executable as run ("./llamafile-0.8.14 -ngl 999 ..."): a llama.cpp fork whose -fa is a switch
    ("llamafile-", r"\bllamafile-([0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})\b", "llamafile_version", "str"),
    ("flash_attn", r"\bflash_attn\s{0,12}=\s{0,4}(\w{1,64})", "flash_attn", "str"),
    # ggml-cuda's flash-attention op (ggml/src/ggml-cuda/fattn.cu ggml_cuda_flash_attn_ext and its kernels, CUDA and
    # HIP builds) in a backtrace, mangled or not: the graph runs GGML_OP_FLASH_ATTN_EXT, so flash attention is on
    ("flash_attn_ext", r"(ggml_cuda_flash_attn_ext)", "flash_attn", "on"),
    ("type_k", r"type_k = '(\w{1,64})'", "cache_type_k", "str"),
    ("type_v", r"type_v = '(\w{1,64})'", "cache_type_v", "str"),
    ("K (", r"\bK \((\w{1,64})\):", "cache_type_k", "str"),
    ("V (", r"\bV \((\w{1,64})\):", "cache_type_v", "str"),
    ("layers to GPU", r"offloaded ([0-9]{1,20})/[0-9]{1,20} layers to GPU", "n_gpu_layers", "int"),
    ("layers to GPU", r"offloaded [0-9]{1,20}/([0-9]{1,20}) layers to GPU", "n_layers_total", "int"),
    # llama-model.cpp print_info (2025+): "print_info: general.name     = Qwen2.5 Coder 7B Instruct"
    ("general.name", r"print_info: general\.name\s{1,12}=\s{0,4}([^\n]{1,200})", "model_name", "str"),
    ("general.name", r"general\.name\s{1,12}str\s{0,4}=\s{0,4}([^\n]{1,200})", "model_name", "str"),
    ("file type", r"file type\s{0,12}=\s{0,4}([^\n]{1,60})", "file_type", "str"),
    # the GGUF file a failed load names (common/common.cpp common_init_from_params "failed to load model '%s'",
    # tools/server "failed to load model, '%s'") or a llama.cpp command line quoted with the log gives (-m / --model):
    # the model whose expert count the MoE offload's fixes ask for (predict.expert_count)
    ("failed to load model", r"failed to load model,? '([^'\n]{1,400}\.gguf)'", "model_file", "str"),
    ("-m", r"(?:^|[\s`'\"])(?:-m|--model)[ =]([^\s'\"`]{1,400}\.gguf)\b", "model_file", "str"),
    ("from ", r"loaded meta data with [^\n]{0,200}? from (\S{1,400}\.gguf)", "model_path", "str"),
    ("build: ", r"build: ([0-9]{3,6}) \(", "llama_cpp_build", "str"),
    ("version: ", r"^version: ([0-9]{3,6}) \(", "llama_cpp_build", "str"),  # llama-cli --version
    # LM Studio's runtime, as its logs and `lms runtime ls` name it: "llama.cpp-win-x86_64-nvidia-cuda12-avx2@1.52.0"
    # (engines/llamacpp/lmstudio.py reads the version as the llama.cpp build it bundles)
    ("llama.cpp-", r"\bllama\.cpp-[\w-]{1,80}@([0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})\b", "lmstudio_runtime", "str"),
    ("PyTorch version: ", r"PyTorch version: ([0-9][\w.+-]{0,40})", "torch_version", "str"),  # collect_env
    ("vLLM Version: ", r"vLLM Version: ([0-9][\w.+-]{0,40})", "vllm_version", "str"),
    ("pipeline parallelism enabled", r"pipeline parallelism enabled \(n_copies=([0-9]{1,20})\)", "n_copies", "int"),
    # llama-context.cpp graph_reserve's DEBUG line: the worst case reserved is min(n_ctx, n_ubatch) tokens, and
    # n_batch <= n_ctx for a causal model (the context's constructor), so it is the micro-batch in force
    ("worst-case: n_tokens", r"worst-case: n_tokens = ([0-9]{1,7}),", "n_ubatch", "int"),
    # vLLM
    ("LLM engine (v", r"LLM engine \(v([0-9][\w.+-]{0,40})\)", "vllm_version", "str"),
    ("vLLM API server version", r"vLLM API server version ([0-9][\w.+-]{0,40})", "vllm_version", "str"),
    # serve/utils/api_utils.py log_version_and_model (0.2x): the banner's "... ▀▄▀ █  version 0.27.1", or its
    # plain form "vLLM server version 0.27.1, serving model ..."
    ("vLLM server version", r"vLLM server version ([0-9][\w.+-]{0,40})", "vllm_version", "str"),
    ("▀▄▀ █", r"▀▄▀ █(?:\x1b\[[0-9;]{0,12}m)?\s{1,8}version (?:\x1b\[[0-9;]{0,12}m)?([0-9][\w.+-]{0,40})",
     "vllm_version", "str"),
    ("Initializing a V1 LLM engine", r"Initializing a (V1) LLM engine", "vllm_engine", "str"),
    # the source line of "Model loading took" (gpu_model_runner.py): it moves with each release (predict.py)
    ("Model loading took", r"gpu_model_runner\.py:([0-9]{1,6})\] Model loading took", "vllm_loading_line", "int"),
    ("with config:", r"with config: model='([^']{1,300})'", "model", "str"),
    ("Starting to load model", r"Starting to load model (\S{1,300}?)\.{3}", "model", "str"),
    ("max_seq_len=", r"\bmax_seq_len=([0-9]{1,20})", "max_model_len", "int"),
    ("tensor_parallel_size=", r"\btensor_parallel_size=([0-9]{1,20})", "tensor_parallel_size", "int"),
    ("pipeline_parallel_size=", r"\bpipeline_parallel_size=([0-9]{1,20})", "pipeline_parallel_size", "int"),
    ("kv_cache_dtype=", r"\bkv_cache_dtype=(\w{1,64})", "kv_cache_dtype", "str"),
    # vLLM's Python API (vllm/entrypoints/llm.py LLM.__init__ passes its keyword arguments to EngineArgs,
    # vllm/engine/arg_utils.py): LLM(model=..., max_model_len=30_000, kv_cache_dtype="fp8"), a string quoted and an
    # int with Python's digit separators; the call itself marks the run as the API's (vllm_python.py)
    ("kv_cache_dtype", r"\bkv_cache_dtype ?= ?['\"](\w{1,64})['\"]", "kv_cache_dtype", "str"),
    ("max_model_len", r"\bmax_model_len ?= ?([0-9][0-9_]{0,20})(?= {0,4}(?:[,)#]|$))", "max_model_len", "int"),
    ("LLM(", r"\b(LLM)\((?:\s{0,4}$|\s{0,4}model ?=|\s{0,4}['\"])", "vllm_python_api", "on"),
    # models/deepseek_v4/attention.py _resolve_dsv4_kv_cache_dtype (0.23+; 0.30+ also from "auto"): the cache dtype
    # written back as fp8_ds_mla, after the config line's kv_cache_dtype=auto / fp8
    ("fp8_ds_mla KV cache format", r"Using DeepSeek's (fp8_ds_mla) KV cache format", "kv_cache_dtype", "str"),
    # layers/attention/mla_attention.py (0.24+) _canonicalize_sparse_mla_kv_cache_dtype's note: "Using fp8_ds_mla KV
    # cache format for FLASHINFER_MLA_SPARSE_SM120 backend." (auto made fp8_ds_mla on SM 12.x)
    ("KV cache format for", r"Using (fp8_ds_mla|nvfp4_ds_mla) KV cache format for \w{1,60} backend", "kv_cache_dtype",
     "str"),
    # models/config.py GlmMoeDsaForCausalLM.verify_and_update_config (0.32+): auto -> fp8_e4m3 on SM 10.x
    ("Using fp8 kv-cache for GlmMoeDsa", r"Using (fp8) kv-cache for GlmMoeDsaForCausalLM", "kv_cache_dtype", "str"),
    ("quantization=", r"\bquantization=(\w{1,64})", "quantization", "str"),
    # not the advice of V0's capture line ("set 'enforce_eager=True' or use '--enforce-eager'")
    ("enforce_eager=", r"(?<!')\benforce_eager=(\w{1,64})", "enforce_eager", "str"),
    # EngineArgs.limit_mm_per_prompt (LLM(limit_mm_per_prompt={"image": 10, "video": 1}), --limit-mm-per-prompt
    # '{"image": 10}' or image=10,video=1 before 0.9): the items per prompt the profile run reserves for every sequence
    # (multimodal/profiling.py); kept as written, the fixes read the counts from it
    ("limit_mm_per_prompt", r"\blimit_mm_per_prompt\s{0,2}=\s{0,2}(\{[^}\n]{1,120}\})", "limit_mm_per_prompt", "str"),
    ("--limit-mm-per-prompt", r"--limit-mm-per-prompt[= ]['\"]?(\{[^}\n]{1,120}\}|[a-z]{1,12}=[0-9][\w=,]{0,60})",
     "limit_mm_per_prompt", "str"),
    ("gpu_memory_utilization=", r"\bgpu_memory_utilization=([0-9.]{1,24})", "gpu_memory_utilization", "float"),
    # v1/worker/gpu_worker.py init_device (0.21+): the runner in use
    ("Using V2 Model Runner", r"Using (V2) Model Runner", "vllm_runner", "str"),
    # the weights kept in host memory (V0's args: Namespace(... cpu_offload_gb=70.0 ...), or the flag quoted)
    ("cpu_offload_gb=", r"\bcpu_offload_gb=([0-9.]{1,24})", "cpu_offload_gb", "float"),
    ("--cpu-offload-gb", r"--cpu-offload-gb[ =]([0-9.]{1,24})", "cpu_offload_gb", "float"),
    # a vLLM command line quoted in the text (vllm serve's flags, dashed or with underscores, `=` or a space; a
    # list of words as a wrapper prints it: '--max_model_len', '131072')
    ("--gpu", r"--gpu[-_]memory[-_]utilization'?,?[ =]'?([0-9.]{1,24})", "gpu_memory_utilization", "float"),
    ("--max", r"--max[-_]model[-_]len'?,?[ =]'?([0-9]{1,20})\b", "max_model_len", "int"),
    ("--tensor", r"--tensor[-_]parallel[-_]size'?,?[ =]'?([0-9]{1,4})\b", "tensor_parallel_size", "int"),
    # the model a vLLM command line serves (vllm serve <model>, or --model on the api_server entry point, the line
    # continued with a backslash as shells take it)
    ("vllm.entrypoints", r"vllm\.entrypoints\S{0,80}\s(?:[^\n]{0,2000}?\s)?--model[ =]['\"]?([A-Za-z0-9_][\w./-]{0,200})",
     "model", "str"),
    ("vllm serve", r"vllm serve ([A-Za-z0-9_][\w./-]{0,200})(?=\s)", "model", "str"),
    # the devices a command line makes visible (CUDA_VISIBLE_DEVICES=0,1,2,3 python -m vllm...): the GPUs a
    # --tensor-parallel-size could spread over
    ("CUDA_VISIBLE_DEVICES=", r"CUDA_VISIBLE_DEVICES=['\"]?([0-9]{1,3}(?:,[0-9]{1,3}){0,63})(?=['\"\s])",
     "visible_devices", "str"),
    ("--pipeline", r"--pipeline[-_]parallel[-_]size'?,?[ =]'?([0-9]{1,4})\b", "pipeline_parallel_size", "int"),
    # vllm/engine/arg_utils.py add_cli_args: the short forms -tp / -pp (forks such as Aphrodite keep them)
    ("-tp", r"(?<![\w-])-tp[ =]([0-9]{1,4})\b", "tensor_parallel_size", "int"),
    ("-pp", r"(?<![\w-])-pp[ =]([0-9]{1,4})\b", "pipeline_parallel_size", "int"),
    ("--kv", r"--kv[-_]cache[-_]dtype'?,?[ =]'?(\w{1,64})", "kv_cache_dtype", "str"),
    # vllm/engine/arg_utils.py add_cli_args: the switches --enforce-eager and --no-enable-chunked-prefill typed on a
    # vLLM command line (not V0's capture advice "use '--enforce-eager'"): the settings in force, so no fix offers
    # them again; without chunked prefill vLLM schedules a whole prompt in one step (config/scheduler.py:
    # max_num_batched_tokens = max(max_model_len, 2048))
    # LLaMA-Factory running vLLM (its inference backend, `llamafactory-cli api|chat|webchat --infer_backend vllm`):
    # its own names for vLLM's settings (hparams/model_args.py VllmArguments; chat/vllm_engine.py VllmEngine passes
    # vllm_maxlen as max_model_len, vllm_gpu_util as gpu_memory_utilization, vllm_enforce_eager as enforce_eager),
    # on its command line or in its YAML config; the fixes then take them (llamafactory.py)
    ("llamafactory", r"\b(llamafactory)(?:-cli\b|[/\\](?:chat|hparams|train|api)\b)", "llamafactory", "on"),
    ("vllm_maxlen", r"(?:--vllm_maxlen[ =]|(?<![\w-])vllm_maxlen:[ \t]{0,8})([0-9]{1,20})\b", "max_model_len", "int"),
    ("vllm_gpu_util", r"(?:--vllm_gpu_util[ =]|(?<![\w-])vllm_gpu_util:[ \t]{0,8})([0-9.]{1,24})",
     "gpu_memory_utilization", "float"),
    ("--vllm_enforce_eager", r"--vllm_(enforce)_eager(?![ =]{1,4}(?:false|False|0)\b)", "enforce_eager", "on"),
    ("--enforce", r"(?:vllm serve|api_server|vllm\.entrypoints)[^\n]{0,2000}?\s--enforce[-_](eager)(?=\s|$)",
     "enforce_eager", "on"),
    ("chunked", r"(?:vllm serve|api_server|vllm\.entrypoints)[^\n]{0,2000}?\s--(no)[-_]enable[-_]chunked[-_]prefill"
     r"(?=\s|$)", "enable_chunked_prefill", "off"),
    # ComfyUI's --gpu-only (comfy/cli_args.py: "Store and run everything (text encoders/CLIP models, etc... on the
    # GPU)"), on its command line ("python main.py ... --gpu-only") or in its error report's "Arguments: main.py ..."
    ("--gpu-only", r"\bmain\.py\b[^\n]{0,600}?\s--gpu-(only)(?=[\s*`'\"]|$)", "comfyui_gpu_only", "on"),
    # ComfyUI's model loader (comfy/model_management.py load_models_gpu: "Requested to load <model>")
    ("Requested to load", r"\bRequested to load (\w{1,80})", "comfyui_model", "str"),
    # ComfyUI itself: its package's modules in a traceback (comfy/model_patcher.py, model_management.py, ...) and
    # execution.py's own line after an out-of-memory ("Got an OOM, unloading all loaded models.", 2024+)
    ("comfy", r"\b(comfy)[/\\](?:model_patcher|model_management|samplers|sample|sd|ops|lora)\.py\b", "comfyui", "on"),
    ("Got an OOM", r"Got an OOM, (unloading) all loaded models", "comfyui", "on"),
    # its error report's head as the UI shows it: execution.py's "Error occurred when executing <node class>:"
    # (2023-24), or the failed node's class alone above the message; CheckpointLoaderSimple is nodes.py's checkpoint
    # loader, a name no other program gives
    ("Error occurred when executing", r"(Error) occurred when executing \w{1,80}:", "comfyui", "on"),
    ("CheckpointLoaderSimple", r"\b(CheckpointLoaderSimple)\b", "comfyui", "on"),
    ("--max", r"--max[-_]num[-_]seqs'?,?[ =]'?([0-9]{1,20})\b", "max_num_seqs", "int"),
    ("--max", r"--max[-_]num[-_]batched[-_]tokens'?,?[ =]'?([0-9]{1,20})\b", "max_num_batched_tokens", "int"),
    # the Ollama model a text asks for: `ollama run NAME` / `ollama pull NAME`, or an API request's JSON body
    ("ollama run", r"\bollama run ([\w.:/-]{1,120})", "ollama_model", "str"),
    ('"model"', r'"model"\s{0,4}:\s{0,4}"([\w.:/-]{1,120})"', "ollama_model", "str"),
    # and SGLang's (launch_server)
    ("--mem", r"--mem[-_]fraction[-_]static[ =]([0-9.]{1,24})", "mem_fraction_static", "float"),
    # its --config YAML (server_args.py prepare_server_args: the file's keys are the flags without their dashes)
    ("fraction-static:", r"(?<![\w-])mem-fraction-static:[ \t]{0,8}([0-9.]{1,24})", "mem_fraction_static", "float"),
    ("--context", r"--context[-_]length[ =]([0-9]{1,20})\b", "context_length", "int"),
    ("total_gpu_memory=", r"total_gpu_memory=([0-9.]{1,24}) ?GiB", "total_gpu_memory_bytes", "gib"),
    # V1 gpu_worker.py init_device (DEBUG): "worker init memory snapshot: ..., free_memory=78.68GiB,
    # total_memory=79.19GiB, ..."
    ("total_memory=", r"init memory snapshot:[^\n]{0,200}?\btotal_memory=([0-9.]{1,24}) ?GiB", "total_gpu_memory_bytes",
     "gib"),
    # vLLM 0.7-0.8 worker.py: "the current vLLM instance can use total_gpu_memory (44.53GiB) x
    # gpu_memory_utilization (0.98) = 43.64GiB"
    ("total_gpu_memory (", r"total_gpu_memory \(([0-9.]{1,24}) ?GiB\)", "total_gpu_memory_bytes", "gib"),
    ("gpu_memory_utilization (", r"gpu_memory_utilization \(([0-9.]{1,24})\)", "gpu_memory_utilization", "float"),
    # V1 gpu_worker.py: the DEBUG line after capture ("Desired GPU memory utilization is (0.95, 75.23 GiB)") and the
    # start-up refusal ("less than desired GPU memory utilization (0.92, 21.67 GiB)")
    ("esired GPU memory utilization", r"[Dd]esired GPU memory utilization(?: is)? \(([0-9.]{1,24}),",
     "gpu_memory_utilization", "float"),
    # SGLang (ServerArgs repr)
    ("model_path=", r"\bmodel_path='([^']{1,300})'", "model", "str"),
    ("tp_size=", r"\btp_size=([0-9]{1,20})", "tp_size", "int"),
    ("mem_fraction_static=", r"\bmem_fraction_static=([0-9.]{1,24})", "mem_fraction_static", "float"),
    ("context_length=", r"\bcontext_length=([0-9]{1,20})", "context_length", "int"),
    # scheduler.py's start-up line: "max_total_num_tokens=..., ..., max_running_requests=..., context_len=..."
    ("context_len=", r"\bcontext_len=([0-9]{1,20})", "context_length", "int"),
    ("chunked_prefill_size=", r"\bchunked_prefill_size=([0-9]{1,20})", "chunked_prefill_size", "int"),
    ("max_running_requests=", r"\bmax_running_requests=([0-9]{1,20})", "max_running_requests", "int"),
    ("max_total_num_tokens=", r"\bmax_total_num_tokens=([0-9]{1,20})", "max_total_num_tokens", "int"),
    # Ollama (server.go slog lines; the runner's command line; the new engine's load request)
    ("OLLAMA_CONTEXT_LENGTH:", r"OLLAMA_CONTEXT_LENGTH:([0-9]{1,20})", "OLLAMA_CONTEXT_LENGTH", "int"),
    ("OLLAMA_NUM_PARALLEL:", r"OLLAMA_NUM_PARALLEL:([0-9]{1,20})", "OLLAMA_NUM_PARALLEL", "int"),
    ("OLLAMA_FLASH_ATTENTION:", r"OLLAMA_FLASH_ATTENTION:(\w{1,64})", "OLLAMA_FLASH_ATTENTION", "str"),
    ("OLLAMA_KV_CACHE_TYPE:", r"OLLAMA_KV_CACHE_TYPE:(\w{1,64})", "OLLAMA_KV_CACHE_TYPE", "str"),
    ("--ctx-size", r"--ctx-size[ =]([0-9]{1,20})", "n_ctx", "int"),
    # -c, llama.cpp's short form of --ctx-size (common/arg.cpp {"-c", "--ctx-size"}), on a llama.cpp command line
    # quoted with the log (llama-server, llama-cli, ./main, a .gguf model): the context the user asked for, read
    # before the log's own n_ctx lines, which follow it and hold what was in force
    ("-c", r"(?:llama|\bmain\b|\.gguf)[^\n]{0,2000}?(?:^|[\s`'\"])-c[ =]([0-9]{1,9})(?=[\s`'\"]|$)", "n_ctx", "int"),
    # an Ollama Modelfile's context (docs/modelfile.md: PARAMETER num_ctx N), quoted with the failure
    ("PARAMETER num_ctx", r"PARAMETER num_ctx ([0-9]{1,20})", "n_ctx", "int"),
    # a llama.cpp command line quoted in the text (common/arg.cpp: -ub / --ubatch-size N)
    ("-ub", r"(?:^|[\s`'\"])-ub[ =]([0-9]{1,7})\b", "n_ubatch", "int"),
    ("--ubatch-size", r"--ubatch-size[ =]([0-9]{1,7})\b", "n_ubatch", "int"),
    ("--n-gpu-layers", r"--n-gpu-layers ([0-9]{1,20})", "n_gpu_layers", "int"),
    # llama.cpp's MoE offload named in the text (common/arg.cpp: -cmoe / --cpu-moe, -ncmoe / --n-cpu-moe N keep the
    # MoE weights of all / the first N layers on the CPU): the flag as typed
    ("moe", r"(?:^|[\s`'\"(])(--n-cpu-moe|-ncmoe|--cpu-moe|-cmoe)\b", "cpu_moe_flag", "str"),
    # the layer split over several GPUs: common/arg.cpp -ts / --tensor-split 3,1 (llama-bench 3/1), KoboldCpp's
    # --tensor_split 3 1 and its Namespace(... tensor_split=[3.0, 1.0] ...) (None when unset)
    ("tensor_split=[", r"\btensor_split=\[([0-9., ]{1,80})\]", "tensor_split", "str"),
    ("-ts", r"(?:^|[\s`'\"])(?:-ts|--tensor[-_]split)[ =]([0-9.]{1,8}(?:[,/ ][0-9.]{1,8}){1,15})\b", "tensor_split", "str"),
    ("--tensor", r"--tensor[-_]split[ =]([0-9.]{1,8}(?:[,/ ][0-9.]{1,8}){1,15})\b", "tensor_split", "str"),
    ("--parallel", r"--parallel ([0-9]{1,20})", "n_parallel", "int"),
    ("KvSize:", r"KvSize:([0-9]{1,20})", "n_ctx", "int"),
    # the runner's load request: num_batch, which Ollama gives llama.cpp as both n_batch and n_ubatch (and the
    # Ollama engine reserves its graph for), so the micro-batch the compute buffer scales with
    ("BatchSize:", r"BatchSize:([0-9]{1,7})\b", "n_ubatch", "int"),
    ("KvCacheType:", r"KvCacheType:(\w{1,64})", "OLLAMA_KV_CACHE_TYPE", "str"),
    # and its attention (FlashAttention:Enabled / Disabled / Auto; a bool in older runners)
    ("FlashAttention:", r"\bFlashAttention:(\w{1,16})", "flash_attn", "str"),
    ("version=", r"msg=\"?Listening on[^\n]{0,200}version=([0-9][\w.+-]{0,30})", "ollama_version", "str"),
    ("ollama version is", r"ollama version is ([0-9][\w.+-]{0,30})", "ollama_version", "str"),
    ("memory.required.full=", r"memory\.required\.full=\"?([0-9.]{1,24} ?[KMGT]i?B)", "ollama_required_full", "size"),
    ("memory.required.kv=", r"memory\.required\.kv=\"?([0-9.]{1,24} ?[KMGT]i?B)", "ollama_required_kv", "size"),
    ("memory.available=", r"memory\.available=\"?\[([0-9.]{1,24} ?[KMGT]i?B)", "ollama_available", "size"),
    ("layers.offload=", r"layers\.offload=([0-9]{1,20})", "ollama_layers_offload", "int"),
    ("layers.model=", r"layers\.model=([0-9]{1,20})", "ollama_layers_model", "int"),
    # tabbyAPI's config (config.yml model: cpu_moe_offload_layers) and ExLlamaV3's own flag (-mcl / --moe_cpu_offload)
    ("cpu_moe_offload_layers", r"cpu_moe_offload_layers`?:?\s{0,4}([0-9]{1,4})\b", "cpu_moe_offload_layers", "int"),
    ("moe_cpu_offload", r"(?:-mcl|--moe_cpu_offload)[ =]([0-9]{1,4})\b", "cpu_moe_offload_layers", "int"),
    # the cache's type: ExLlamaV2's example scripts (examples/chat.py: -c8 / -cq4 / -cq6 / -cq8, ExLlamaV2Cache_8bit
    # and ExLlamaV2Cache_Q4/Q6/Q8) and TabbyAPI's config.yml (model: cache_mode: FP16 / Q8 / Q6 / Q4)
    ("-cq", r"(?:^|[\s`'\"])-c(q4|q6|q8)\b", "exllama_cache_mode", "str"),
    ("-c8", r"(?:^|[\s`'\"])-c(8)\b", "exllama_cache_mode", "str"),
    ("cache_mode", r"\bcache_mode:?\s{0,4}['\"]?(FP16|Q8|Q6|Q4)\b", "exllama_cache_mode", "str"),
    # TGI launcher Args { ... }
    ("max_batch_prefill_tokens:", r"max_batch_prefill_tokens: (?:Some\(\s{0,8})?([0-9]{1,20})", "max_batch_prefill_tokens", "int"),
    ("max_total_tokens:", r"max_total_tokens: (?:Some\(\s{0,8})?([0-9]{1,20})", "max_total_tokens", "int"),
    # launcher/src/main.rs Args: max_input_tokens (max_input_length before TGI 2.1); warm-up's prefill batch must
    # stay >= it (the launcher refuses a smaller --max-batch-prefill-tokens)
    ("max_input_", r"max_input_(?:tokens|length): (?:Some\(\s{0,8})?([0-9]{1,20})", "max_input_tokens", "int"),
    ("model_id:", r"model_id: \"([^\"]{1,300})\"", "model", "str"),
)

# buffers printed at start-up: (key, pattern with (device, MiB), buffer kind)
BUFFERS: tuple[tuple[str, str, str], ...] = (
    ("model buffer size", r"(\S{1,40}) model buffer size\s{0,8}=\s{0,8}([0-9.]{1,24}) MiB", "model"),
    ("KV buffer size", r"(\S{1,40}) KV buffer size\s{0,8}=\s{0,8}([0-9.]{1,24}) MiB", "kv"),
    ("compute buffer size", r"(\S{1,40}) compute buffer size\s{0,8}=\s{0,8}([0-9.]{1,24}) MiB", "compute"),
    ("output buffer size", r"(\S{1,40})\s{1,8}output buffer size\s{0,8}=\s{0,8}([0-9.]{1,24}) MiB", "output"),
)
# the model's Metal bytes, whitespace-tolerant (a paste re-wrapped at its spaces splits these long lines; reader.py
# matches them across line ends): ggml-metal.m ggml_metal_add_buffer's line for the weights' 'data' buffer (running
# total / working set in MiB), and ds4's "Metal model views created ... (mapped N MiB ...)"
METAL_DATA_BUFFER = (r"allocated\s{1,4}'data\s{0,20}'\s{1,4}buffer,\s{1,4}size\s{0,4}=\s{0,12}[0-9.]{1,24}\s{1,4}MiB,"
                     r"\s{1,4}offs\s{0,4}=\s{0,20}[0-9]{1,20},\s{0,4}\(\s{0,12}([0-9.]{1,24})\s{1,4}/")
DS4_MAPPED_VIEWS = r"ds4: Metal model views created[^(]{0,300}\(mapped\s{1,4}([0-9.]{1,24})\s{1,4}MiB"

# single figures: (key, pattern, name, unit)
FIGURES: tuple[tuple[str, str, str, str], ...] = (
    ("KV self size", r"KV self size\s{0,4}=\s{0,4}([0-9.]{1,24}) MiB", "kv_total_bytes", "mib"),
    ("llama_kv_cache: size", r"llama_kv_cache(?:_unified)?: size\s{0,4}=\s{0,4}([0-9.]{1,24}) MiB", "kv_total_bytes", "mib"),
    ("Model loading took", r"Model loading took ([0-9.]{1,24}) ?GiB", "model_loading_bytes", "gib"),
    ("Loading model weights took", r"Loading model weights took ([0-9.]{1,24}) ?GB", "model_loading_bytes", "gib"),
    ("Available KV cache memory", r"Available KV cache memory: ([-0-9.]{1,24}) ?GiB", "available_kv_cache_bytes", "gib"),
    ("model weights take", r"model weights take ([0-9.]{1,24}) ?GiB", "model_loading_bytes", "gib"),
    ("reserved for KV Cache is", r"reserved for KV Cache is ([-0-9.]{1,24}) ?GiB", "available_kv_cache_bytes", "gib"),
    ("GPU KV cache size", r"GPU KV cache size: ([0-9,]{1,24}) tokens", "kv_cache_tokens", "int"),
    # V1 gpu_model_runner.py capture_model: "Graph capturing finished in 40 secs, took 1.84 GiB"; gpu_worker.py
    # (DEBUG, after capture): "... Current kv cache memory in use is 58.47 GiB."
    ("Graph capturing finished", r"Graph capturing finished in [0-9.]{1,12} secs?, took (-?[0-9.]{1,24}) ?GiB",
     "cudagraph_bytes", "gib"),
    ("Current kv cache memory in use", r"Current kv cache memory in use is ([0-9.]{1,24}) ?GiB",
     "kv_cache_in_use_bytes", "gib"),
    # 0.19+ gpu_worker.py: "CUDA graph pool memory: 1.84 GiB (actual), 1.3 GiB (estimated), difference: ..." and
    # gpu_model_runner.py profile_cudagraph_memory: "Estimated CUDA graph memory: 1.3 GiB total"
    ("CUDA graph pool memory", r"CUDA graph pool memory: ([0-9.]{1,24}) ?GiB \(actual\)", "cudagraph_bytes", "gib"),
    ("CUDA graph pool memory", r"GiB \(actual\), ([0-9.]{1,24}) ?GiB \(estimated\)", "cudagraph_estimate_bytes",
     "gib"),
    ("Estimated CUDA graph memory", r"Estimated CUDA graph memory: ([0-9.]{1,24}) ?GiB", "cudagraph_estimate_bytes",
     "gib"),
    ("# GPU blocks", r"# GPU blocks: ([0-9]{1,20})", "num_gpu_blocks", "int"),
    # ggml-metal's device init: "recommendedMaxWorkingSetSize  = 51539.61 MB" (the device's bytes / 1e6), the
    # working set Metal keeps resident for the GPU
    ("recommendedMaxWorkingSetSize", r"recommendedMaxWorkingSetSize\s{0,4}=\s{0,4}([0-9.]{1,24}) MB",
     "metal_working_set_bytes", "mb"),
    # ggml-metal.m ggml_metal_add_buffer (llama.cpp 2023): after a buffer's last view, the device's running total and
    # its working set, "(%8.2f / %8.2f)" in MiB (currentAllocatedSize, recommendedMaxWorkingSetSize); on the weights'
    # buffer ('data', allocated before the KV cache and the compute buffers) the total is the model's Metal bytes
    ("allocated 'data", METAL_DATA_BUFFER, "metal_model_bytes", "mib"),
    # antirez's ds4 engine (DeepSeek V4 GGUF on Metal; mlx-serve's ds4 backend): the device and its RAM, and the
    # model's bytes it maps into Metal views ("mapped 82697.67 MiB from offset ...")
    ("Metal device", r"ds4: Metal device [^\n,]{1,80}, ([0-9.]{1,24}) GiB RAM", "metal_ram_bytes", "gib"),
    ("model views created", DS4_MAPPED_VIEWS, "metal_model_bytes", "mib"),
    # V0 0.7.x executor_base.py: "# %s blocks: %d, # CPU blocks: %d" with the platform's device name
    ("# cuda blocks", r"# cuda blocks: ([0-9]{1,20})", "num_gpu_blocks", "int"),
    ("kv_cache_size=", r"\bkv_cache_size=([0-9.]{1,24}) ?GiB", "available_kv_cache_bytes", "gib"),
    ("Maximum concurrency for", r"Maximum concurrency for ([0-9,]{1,24}) tokens per request: ([0-9.]{1,24})x",
     "max_concurrency", "float2"),
    ("Load weight end", r"Load weight end\.[^\n]{0,300}?mem usage=([0-9.]{1,24}) ?GB", "model_loading_bytes", "gib"),
    ("Load weight end", r"Load weight end\.[^\n]{0,300}?avail mem=([0-9.]{1,24}) ?GB", "avail_mem_after_weights_bytes",
     "gib"),
    ("KV Cache is allocated", r"KV Cache is allocated\. #tokens: ([0-9]{1,20})", "max_total_num_tokens", "int"),
    # mem_cache/memory_pool.py (0.4 to 0.5.x, GB = 1024**3): MHATokenToKVPool prints "K size: X GB, V size: Y GB",
    # MLATokenToKVPool one "KV size: Z GB" (a latent cache, no separate V): "KV size" is not a V size
    ("KV Cache is allocated", r"(?<![A-Za-z])K size: ([0-9.]{1,24}) ?GB", "k_bytes", "gib"),
    ("KV Cache is allocated", r"(?<![A-Za-z])V size: ([0-9.]{1,24}) ?GB", "v_bytes", "gib"),
    ("KV Cache is allocated", r"\bKV size: ([0-9.]{1,24}) ?GB", "kv_bytes", "gib"),
)
# device free memory at load (llama.cpp >= 2025: "using device CUDA0 (NVIDIA ...) - 23307 MiB free")
DEVICE_FREE = ("using device", r"using device (\S{1,20}) \(([^)\n]{0,120})\)[^\n]{0,80}?- ([0-9]{1,20}) MiB free")
DEVICE_NAME = ("compute capability", r"Device ([0-9]{1,20}): ([^,\n]{1,80}), compute capability ([0-9.]{1,24})")
VLLM_ARGS = ("non-default args:", r"non-default args: (\{[^\n]{1,6000}\})")
# llama_memory_breakdown_print (src/llama-context.cpp; common_memory_breakdown_print later), a device's row:
# "| - CUDA0 (RTX 5090) | total = free + (self = model + context + compute) + unaccounted |", in MiB
BREAKDOWN = (" + (", r"\|\s{0,8}(?:- )?([A-Za-z]{2,12}[0-9]{1,3}) \([^)|\n]{1,120}\)\s{0,40}\|\s{0,8}([0-9]{1,9}) = "
             r"{0,8}([0-9]{1,9}) \+ \( {0,8}([0-9]{1,9}) = {0,8}([0-9]{1,9}) \+ {0,8}([0-9]{1,9}) \+ {0,8}([0-9]{1,9})\)")

_VLLM_ARG_NAMES = {"model": "model", "max_model_len": "max_model_len",
                   "gpu_memory_utilization": "gpu_memory_utilization", "tensor_parallel_size": "tensor_parallel_size",
                   "pipeline_parallel_size": "pipeline_parallel_size", "kv_cache_dtype": "kv_cache_dtype",
                   "max_num_seqs": "max_num_seqs", "max_num_batched_tokens": "max_num_batched_tokens",
                   "quantization": "quantization", "enforce_eager": "enforce_eager", "dtype": "dtype",
                   "cpu_offload_gb": "cpu_offload_gb", "block_size": "block_size"}

_RX: dict[str, re.Pattern[str]] = {}


def _rx(p: str) -> re.Pattern[str]:
    r = _RX.get(p)
    if r is None:
        r = _RX[p] = re.compile(p)
    return r


def _size(s: str) -> int:
    m = re.match(r"([0-9.]{1,24}) ?([KMGT])(i?)B", s)
    if not m:
        return 0
    mult = {"K": 1, "M": 2, "G": 3, "T": 4}[m.group(2)]
    base = 1024 if m.group(3) else 1000  # Ollama: HumanBytes2 "GiB" binary, HumanBytes "GB" decimal
    return int(round(float(m.group(1)) * base**mult))


def _value(kind: str, s: str) -> Any:
    """The figure a pattern caught, or None where its digits and dots make no number ("1.2.3", "..": a pasted text
    may hold anything there): such a figure is not read."""
    try:
        if kind == "int":
            return int(s.replace(",", ""))
        if kind == "float":
            return float(s.rstrip("."))
        if kind == "gib":
            return int(round(float(s.rstrip(".")) * GiB))
        if kind == "mib":
            return int(round(float(s.rstrip(".")) * MiB))
        if kind == "size":
            return _size(s)
        if kind == "mb":  # decimal megabytes
            return int(round(float(s.rstrip(".")) * 1_000_000))
        if kind in ("on", "off"):  # a switch typed on a command line: its presence sets it
            return "True" if kind == "on" else "False"
    except ValueError:
        return None
    return s.strip()


# v1/executor/multiproc_executor.py names each worker process Worker_PP{pp_rank}_TP{tp_rank} (Worker_TP{r} without
# pipeline parallelism; DP and EP parts around them): the highest ranks a log shows bound the sizes in force from below
WORKER = ("(Worker_", r"\(Worker_(?:[A-Z]{2}[0-9]{1,4}_)*?(?:PP([0-9]{1,4})_)?TP([0-9]{1,4})\b")


_ALL_KEYS = tuple(dict.fromkeys([k for k, *_ in SETTINGS] + [k for k, *_ in BUFFERS] + [k for k, *_ in FIGURES]
                                 + [DEVICE_FREE[0], DEVICE_NAME[0], VLLM_ARGS[0], WORKER[0], BREAKDOWN[0]]))
_BKEYS = tuple(k.encode() for k in _ALL_KEYS)
SETTING_HITS = 2000  # lines looked at per key in the start-up region


_COMMENTED_ARG = re.compile(r"\s{0,40}#\s{0,8}-{0,2}[A-Za-z_][\w-]{0,60}\s{0,2}[=:]")


def read_log(doc: Text, lo: int, hi: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(settings, buffers) the start-up log in bytes [lo, hi) of doc states; later lines override earlier ones.
    Only the lines holding a key are decoded and matched."""
    settings: dict[str, Any] = {}
    buffers: dict[str, Any] = {}
    hi = min(hi, len(doc))
    for start, pos in doc.hits(_BKEYS, SETTING_HITS, max(0, lo), hi):
        line = doc.line(start, pos, 0).text
        # a commented-out argument in a pasted script or compose file ("# enforce_eager=True,") is not in force
        commented = _COMMENTED_ARG.match(line) is not None
        nl, more = pos, 0
        while line.rstrip().endswith("\\") and more < 40:
            # a command line continued with backslashes, as a shell takes it: its flags are read as one line
            nl = doc.b.find(b"\n", nl)
            if not 0 <= nl < hi:
                break
            nl += 1
            line, more = line.rstrip()[:-1] + " " + doc.line(nl, nl, 0).text.strip(), more + 1
        for key, pattern, name, kind in SETTINGS:
            if key in line and not commented:
                m = _rx(pattern).search(line)
                if m is None and line.rstrip().endswith("Some("):
                    # TGI's launcher logs its Args pretty-printed (Rust's {:#?}): a set option's value is on the
                    # next line ("max_batch_prefill_tokens: Some(" / "32000,")
                    nl = doc.b.find(b"\n", pos)
                    if 0 <= nl < hi:
                        m = _rx(pattern).search(line.rstrip() + doc.line(nl + 1, nl + 1, 0).text.strip())
                if m and (v := _value(kind, m.group(1))) is not None:
                    settings[name] = v
        for key, pattern, kind in BUFFERS:
            if key in line:
                m = _rx(pattern).search(line)
                if m and (v := _value("mib", m.group(2))) is not None:
                    buffers.setdefault(kind, {})[m.group(1)] = v
        for key, pattern, name, kind in FIGURES:
            if key in line:
                m = _rx(pattern).search(line)
                if m and kind == "float2":
                    concurrency, length = _value("float", m.group(2)), _value("int", m.group(1))
                    if concurrency is not None and length is not None:
                        buffers["max_concurrency"] = concurrency
                        settings.setdefault("max_model_len", length)
                elif m and (v := _value(kind, m.group(1))) is not None:
                    buffers[name] = v
        if DEVICE_FREE[0] in line:
            src = line
            m = _rx(DEVICE_FREE[1]).search(src)
            nl = doc.b.find(b"\n", pos)
            if m is None and 0 <= nl < hi:  # the line re-wrapped before its "- N MiB free"
                src = line.rstrip() + " " + doc.line(nl + 1, nl + 1, 0).text.strip()
                m = _rx(DEVICE_FREE[1]).search(src)
            # every device on the line (a log whose line ends were lost runs them together)
            for dm in [m, *_rx(DEVICE_FREE[1]).finditer(src, m.end())] if m else []:
                buffers.setdefault("device_free", {})[dm.group(1)] = int(dm.group(3)) * MiB
                buffers.setdefault("device_names", {})[dm.group(1)] = dm.group(2).strip()
        if DEVICE_NAME[0] in line:
            m = _rx(DEVICE_NAME[1]).search(line)
            if m:
                buffers.setdefault("device_names", {})[f"CUDA{m.group(1)}"] = m.group(2).strip()
        if BREAKDOWN[0] in line:
            m = _rx(BREAKDOWN[1]).search(line)
            if m:
                total, free, own, model, ctx, compute = (int(x) * MiB for x in m.groups()[1:])
                buffers.setdefault("breakdown", {})[m.group(1)] = {
                    "total": total, "free": free, "self": own, "model": model, "context": ctx, "compute": compute}
        if WORKER[0] in line:
            m = _rx(WORKER[1]).search(line)
            if m:
                if m.group(1):
                    settings["pp_ranks_seen"] = max(settings.get("pp_ranks_seen", 0), int(m.group(1)) + 1)
                settings["tp_ranks_seen"] = max(settings.get("tp_ranks_seen", 0), int(m.group(2)) + 1)
        if VLLM_ARGS[0] in line:
            m = _rx(VLLM_ARGS[1]).search(line)
            if m:
                settings.update(_vllm_args(m.group(1)))
    if "ollama_required_full" in settings:  # Ollama's own estimate is a figure, not a setting
        for k in ("ollama_required_full", "ollama_required_kv", "ollama_available"):
            if k in settings:
                buffers[k.replace("ollama_", "ollama_") + "_bytes"] = settings.pop(k)
    return settings, buffers


def _vllm_args(text: str) -> dict[str, Any]:
    try:
        d = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return {}
    if not isinstance(d, dict):
        return {}
    out = {}
    for k, v in d.items():
        name = _VLLM_ARG_NAMES.get(str(k))
        if name and isinstance(v, (int, float, str, bool)):
            out[name] = v
    spec = d.get("speculative_config")  # --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
    if isinstance(spec, dict) and isinstance(spec.get("num_speculative_tokens"), int):
        out["num_speculative_tokens"] = spec["num_speculative_tokens"]
    return out


# ---------------------------------------------------------------------------------------------------------
# Where the engine was when it failed

# (plain key, stage) of progress lines, in the order engines print them; the last one before the failure counts
MARKERS: tuple[tuple[str, str], ...] = (
    ("Loading safetensors checkpoint shards", "weights"),
    ("Loading checkpoint shards", "weights"),
    ("Starting to load model", "weights"),
    ("Loading model from scratch", "weights"),  # model runner V2 (v1/worker/gpu/model_runner.py load_model)
    ("Load weight begin", "weights"),
    ("load_tensors: loading model tensors", "weights"),
    # llama-model.cpp load_tensors: ml.done_getting_tensors() (its note "tensor ... cannot be used with preferred
    # buffer type ..., using CPU instead") runs right before the weights' buffers are allocated
    ("done_getting_tensors", "weights"),
    ("Loading weights", "weights"),
    # llama.cpp src/llama.cpp llama_model_load's catch ("error loading model: %s"): the model's load threw (its
    # weights' buffers), before any context; read after a failure whose own line names no buffer
    ("llama_model_load: error loading model", "weights"),
    ("Model loading took", "compute"),  # vLLM profiles next
    # V0 engine/async_llm_engine.py _log_task_completion: the engine's background loop (started for requests, after
    # start-up) died, and its exception is logged through it; AsyncEngineDeadError is what requests get afterwards
    ("_log_task_completion", "compute"), ("AsyncEngineDeadError", "compute"),
    # vLLM's profile run itself (V0 worker/enc_dec_model_runner.py profile_run "Starting profile run for multi-modal
    # models"; multimodal/profiling.py's warning, printed while the profile run builds its dummy multi-modal batch)
    ("Starting profile run", "compute"),
    ("The sequence length used for profiling", "compute"),
    ("is too short to hold the multi-modal embeddings", "compute"),
    ("multi-modal embeddings in the worst case", "compute"),
    ("are reserved for multi-modal embeddings", "compute"),
    ("Loading model weights took", "compute"),
    ("Load weight end", "kv_cache"),  # SGLang sizes the KV pool next
    ("Memory profiling", "compute"),
    ("Available KV cache memory", "kv_cache"),
    ("# GPU blocks", "kv_cache"),
    ("KV Cache is allocated", "compute"),  # SGLang captures graphs next
    # SGLang model_runner.py ModelRunner.initialize ends with prealloc_symmetric_memory_pool() (after the KV pool and
    # the CUDA graphs, with --enable-symm-mem): "Pre-allocating symmetric memory pool with N GiB"
    # (SGLANG_SYMM_MEM_PREALLOC_GB_SIZE), in what mem_fraction_static left; the function's name stands for it
    ("Pre-allocating symmetric memory pool", "compute"),
    ("prealloc_symmetric_memory_pool", "compute"),
    ("Memory pool end", "compute"),
    ("Capturing CUDA graph", "compute"),
    ("Capturing cudagraphs", "compute"),
    ("Capture cuda graph begin", "compute"),
    ("Capturing batches", "compute"),
    ("Graph capturing finished", "compute"),
    ("CUDA graphs can take additional", "compute"),
    ("If out-of-memory error occurs during cudagraph capture", "compute"),
    ("llama_kv_cache_init:", "kv_cache"),
    # the KV cache's total, printed once every KV buffer is allocated (llama.cpp llama_new_context_with_model /
    # llama_kv_cache_init "KV self size", llama-kv-cache-unified.cpp "KV self size", llama-kv-cache.cpp
    # "llama_kv_cache: size = "): the context's next allocation is the compute graph's (graph_reserve)
    ("KV self size", "compute"),
    ("llama_kv_cache: size = ", "compute"),
    ("compute buffer size", "compute"),
    ("Prefill batch", "compute"),
    ("Decode batch", "compute"),
    ("Avg prompt throughput", "compute"),
    ("Unable to warmup model", "compute"),  # TGI's warm-up prefill and its request spans
    (":prefill:", "compute"),
    ("Method Prefill", "compute"),
    ("Method Decode", "compute"),
    ("warmup{", "compute"),
    # the top-p / top-k sort of the sampler's logits, as a traceback prints its source line (vLLM V0
    # model_executor/layers/sampler.py and V1 v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p:
    # "logits_sort, logits_idx = logits.sort(dim=-1, descending=False)"): batch x vocabulary, in a forward pass
    ("logits_sort, logits_idx = logits.sort(", "compute"),
    # transformers before the Cache classes (<= 4.35, models/llama/modeling_llama.py LlamaAttention.forward and its
    # copies): each step concatenates its keys onto the tuple cache ("key_states = torch.cat([past_key_value[0],
    # key_states], dim=2)"), a new tensor as long as the whole context so far: the KV cache growing with the chat
    ("torch.cat([past_key_value[0], key_states]", "kv_cache"),
    # vLLM V0's MQEngineDeadError: the API server was up and answering when its engine died (a start-up failure
    # stops the server before it answers), so the error it carries was raised serving a batch
    ("Engine loop is not running", "compute"),
    # torch.nn.functional.scaled_dot_product_attention as a traceback prints its source line: an attention in a
    # forward pass, its scores batch x heads x query x key (the math backend's; the fused ones keep less)
    ("scaled_dot_product_attention(", "compute"),
    # ComfyUI's error report (execution.py's failed node, as the report's "## Error Details" lists it): a sampler
    # node runs the model's forward passes over the latent batch; comfy/model_patcher.py ModelPatcher.load moves a
    # model's weights onto the device (comfy/model_management.py load_models_gpu)
    ("**Node Type:** KSampler", "compute"),
    ("**Node Type:** SamplerCustom", "compute"),
    ("model_patcher.py\"", "weights"),
)

# traceback frames: function (or file) names -> stage; tried in this order, the first that appears decides
FRAME_STAGES: tuple[tuple[str, str], ...] = (
    ("profile_run", "compute"), ("_dummy_run", "compute"), ("_dummy_sampler_run", "compute"),
    ("capture_model", "compute"), ("cuda_graph", "compute"), ("capture", "compute"), ("warmup", "compute"),
    ("_allocate_kv_cache", "kv_cache"), ("allocate_kv_cache", "kv_cache"), ("initialize_kv_cache_tensors", "kv_cache"),
    ("_init_cache_engine", "kv_cache"), ("init_memory_pool", "kv_cache"), ("_create_buffers", "kv_cache"),
    ("init_cache", "kv_cache"),
    ("load_weights", "weights"), ("load_model", "weights"), ("from_pretrained", "weights"),
    # vLLM / SGLang quantization methods' create_weights (LinearMethodBase): a layer's parameters made at model
    # construction, before any weight is read
    ("create_weights", "weights"),
    ("_load_state_dict", "weights"), ("load_state_dict", "weights"), ("load_checkpoint", "weights"),
    ("weight_loader", "weights"), ("_load_pretrained_model", "weights"), ("dispatch_model", "weights"),
    ("generate", "compute"), ("forward", "compute"), ("execute_model", "compute"), ("prefill", "compute"),
    ("backward", "compute"), ("train", "compute"),
    # ComfyUI comfy/samplers.py sampling_function / calc_cond_batch: the diffusion model's forward passes over the
    # latent batch (cond and uncond), at every sampler step
    ("sampling_function", "compute"), ("calc_cond_batch", "compute"),
    # ComfyUI comfy/sd.py VAE.decode: on an out-of-memory of the whole decode it retries with decode_tiled_ (tiles of
    # the latent, 2023+); an out-of-memory in that frame is the tiled decode's activations
    ("decode_tiled", "compute"),
)
# A frame line's tail, the closing quote of its path then `, line N, in name`: where a narrow terminal or a paste
# re-wrapped the line (cut inside the path, or after `File`) the tail is still whole on one line. (faulthandler's
# dump after "Fatal Python error" leaves out the comma: 'File "x.py", line 81 in name'; a re-wrap may also put the
# name on the next line, after "in")
_FRAME_TAIL = re.compile(r"\", line[ \t]{0,4}\r?\n?[ \t]{0,4}[0-9]{1,20},?[ \t]{0,4}\r?\n?[ \t]{0,4}in[ \t]{0,4}\r?\n?"
                         r"[ \t]{0,4}(\w{1,100})")


# IPython's traceback (Jupyter, Colab) names a frame after its path, not in Python's 'File "x", line N, in f':
# IPython 8 ultratb "File /path/x.py:298, in f(args)", IPython 7 "/path/x.py in f(args)" (Colab links the path:
# "[/path/x.py](https://localhost:8080/#) in f(args)"); the frame's current line is marked "---> N code"
_IPY_FRAME = re.compile(r"(?:File [^\s\"]{1,400}\.py:[0-9]{1,20}, in |\.py(?:\]\([^)\n]{0,200}\))?[ \t]{1,4}in )([\w.]{1,200})\(")
_IPY_ARROW = re.compile(r"(?:^|[ \t])-{2,4}> ?[0-9]{1,7} ([^\n]{1,400})", re.M)


def frames(region: str) -> list[str]:
    """Function names of the Python traceback frames in region, in order (a frame whose path was wrapped onto a
    second line read from its tail); IPython's frames where the region has no Python frame."""
    if 'File "' in region:
        return [m.group(1) for m in _FRAME_TAIL.finditer(region)]
    return [m.group(1).rsplit(".", 1)[-1] for m in _IPY_FRAME.finditer(region)] if ".py" in region else []


# a frame's source line as Python prints it under the frame: the call in progress when the error was raised
# ("    model = AutoModelForCausalLM.from_pretrained(...)" under 'File "debug.py", line 8, in <module>')
# a frame's header as Python prints it, or re-wrapped by a narrow terminal at its spaces ("File" / the path / "line N,
# in" / the name on lines of their own)
_FRAME_AND_NEXT = re.compile(r"([^\n]{0,200})File\s{1,4}\"[^\"\n]{1,400}\",\s{1,4}line\s{1,4}[0-9]{1,20},\s{1,4}in"
                             r"\s{1,4}[^\n]{1,100}\n([^\n]{0,400})")
_FILE = re.compile(r'File\s{1,4}"')
_CALL = re.compile(r"(?:[\w.\[\], ]{1,80}=\s{0,4})?(?:return\s{1,4}|await\s{1,4})?([\w.]{1,200})\(")


def calls(region: str) -> list[str]:
    """The function each traceback frame's source line calls, in order (a script's `<module>` frame names no
    function; its line does). The source line carries the frame line's prefix (a logger's, a worker's)."""
    if not _FILE.search(region):  # IPython marks each frame's current line "---> N code" instead
        return [c.group(1).rsplit(".", 1)[-1] for m in _IPY_ARROW.finditer(region)
                if (c := _CALL.match(m.group(1).strip()))]
    out = []
    for m in _FRAME_AND_NEXT.finditer(region):
        prefix, src = m.group(1), m.group(2)
        if prefix.strip() and src.startswith(prefix.rstrip()):
            src = src[len(prefix.rstrip()):]
        c = _CALL.match(src.strip())
        if c:
            out.append(c.group(1).rsplit(".", 1)[-1])
    return out


def stage_from_frames(names: list[str]) -> str | None:
    for key, stage in FRAME_STAGES:
        if any(key in n for n in names):
            return stage
    return None


# vLLM's start-up profile run (V0 worker.py determine_num_available_blocks, V1 gpu_worker.py
# determine_available_memory, both calling the model runner's profile_run): a forward pass of a dummy batch of
# max_num_seqs sequences (and, for a multi-modal model, its worst-case images: multimodal/profiling.py) before the KV
# cache is sized and before any CUDA graph is captured; and the lines that come after it
PROFILE_RUN_KEYS = ("Starting profile run", "is too short to hold the multi-modal embeddings",
                    "The sequence length used for profiling", "multi-modal embeddings in the worst case",
                    "are reserved for multi-modal embeddings", "determine_num_available_blocks",
                    "determine_available_memory", "profile_run")
AFTER_PROFILE_KEYS = ("# GPU blocks", "Available KV cache memory", "GPU KV cache size", "Capturing CUDA graph",
                      "Capturing cudagraphs", "Capturing the model for CUDA graphs", "Graph capturing finished",
                      "Capture cuda graph", "Capturing batches")


def in_profile_run(before: str) -> bool:
    """Whether the last vLLM start-up step in `before` (the text up to and with the failure's line) is the profile
    run: a profile-run line or frame with no KV-cache or graph-capture line after it."""
    p = max((before.rfind(k) for k in PROFILE_RUN_KEYS), default=-1)
    return p >= 0 and p > max((before.rfind(k) for k in AFTER_PROFILE_KEYS), default=-1)


def stage_from_markers(before: str) -> str | None:
    """The stage named by the last progress line in `before` (the text leading up to the failure)."""
    best, best_pos = None, -1
    for key, stage in MARKERS:
        p = before.rfind(key)
        if p > best_pos:
            best, best_pos = stage, p
    return best


def stage_from_next_marker(after: str) -> str | None:
    """The stage named by the first progress line in `after` (the text following the failure): the step it was in,
    nearest to it (a console that prints newest first puts the earlier steps further down)."""
    hits = [(p, stage) for key, stage in MARKERS if (p := after.find(key)) >= 0]
    return min(hits)[1] if hits else None


# The program whose log it is (the one the user runs), from plain markers; the first that matches wins
_DEVLOG_KEY = "\x00lmstudio developer log"  # a HOSTS key no text holds: host_of reads it with _LMSTUDIO_DEVLOG
HOSTS: tuple[tuple[str, str], ...] = (
    ("[TensorRT-LLM]", "tensorrt-llm"), ("tensorrt_llm", "tensorrt-llm"),
    ("text_generation_server", "tgi"), ("text_generation_launcher", "tgi"), ("text-generation-launcher", "tgi"),
    ("text_generation_client", "tgi"), ("text_generation_router", "tgi"), ("text_generation_inference", "tgi"),
    ("sglang", "sglang"), ("Scheduler hit an exception", "sglang"),
    # srt/model_executor/cuda_graph_runner.py CudaGraphRunner.__init__: raise Exception(f"Capture cuda graph failed:
    # {e}...") - SGLang's own wording, quoted by wrappers that spell the name otherwise ("SGlang")
    ("Capture cuda graph failed", "sglang"),
    # SGLang's own option in its dashed spelling (server_args.py; no other engine has it): its start-up notes
    # ("Automatically reduce --mem-fraction-static to 0.836 because this is a multimodal model") relayed by a
    # wrapper's logger that names no engine
    ("--mem-fraction-static", "sglang"), ("Load weight end", "sglang"),
    ("prealloc_symmetric_memory_pool", "sglang"), ("Pre-allocating symmetric memory pool", "sglang"),
    ("KV Cache is allocated", "sglang"), ("max_total_num_tokens=", "sglang"), ("mem_fraction_static", "sglang"),
    # waybarrios/vllm-mlx (vllm_mlx/cli.py serve; engine/batched.py runs mlx-lm / mlx-vlm): an MLX server whose name
    # holds vLLM's, so it comes before the vLLM keys below
    ("vllm-mlx", "mlx"), ("vllm_mlx", "mlx"),
    ("EngineCore", "vllm"), ("VllmWorker", "vllm"),
    # vLLM V1's engine client (v1/engine/core_client.py MPClient, 0.7.x-0.8.x): its logger's source and the SIGUSR1
    # handler's words when the engine core or a worker died ("Got fatal signal from worker processes, shutting down.")
    ("[core_client.py:", "vllm"), ("Got fatal signal from worker processes", "vllm"),
    # executor/ray_utils.py RayWorkerWrapper: the name Ray gives each vLLM worker's lines ("(RayWorkerWrapper pid=N,
    # ip=...)"), with the V0 worker_base.py logger's
    ("RayWorkerWrapper", "vllm"),
    # engine/multiprocessing ENGINE_DEAD_ERROR: the V0 API server's answer to requests once its engine process died
    ("Engine loop is not running. Inspect the stacktrace", "vllm"),
    # vLLM V1's multiprocess executor: its log's source file and its workers' process names ("(Worker_TP0 pid=N)")
    ("multiproc_executor.py", "vllm"), ("(Worker_TP", "vllm"), ("vllm", "vllm"), ("vLLM", "vllm"), ("# GPU blocks", "vllm"),
    ("GPU KV cache size", "vllm"), ("Maximum concurrency for", "vllm"), ("Model loading took", "vllm"),
    ("Loading model weights took", "vllm"),
    # V0 worker/model_runner.py capture_model's two notes before it captures ("Capturing the model for CUDA graphs.
    # ... use '--enforce-eager' in the CLI." and "CUDA graphs can take additional 1~3 GiB memory per GPU. ..."),
    # relayed by wrappers (Xinference) whose lines never name vLLM
    ("Capturing the model for CUDA graphs", "vllm"), ("CUDA graphs can take additional 1~3 GiB", "vllm"),
    ("'enforce_eager=True'", "vllm"),  # the first note's own quoting, one word however the line is wrapped
    # vllm/multimodal/profiling.py: the profile run's warning that its dummy sequence cannot hold the worst-case
    # multi-modal embeddings (vLLM's own option names in it)
    ("is too short to hold the multi-modal embeddings", "vllm"), ("The sequence length used for profiling", "vllm"),
    ("max_num_batched_tokens / max_num_seqs", "vllm"), ("multi-modal embeddings in the worst case", "vllm"),
    ("exllamav", "exllama"), ("tabbyAPI", "exllama"),
    ("mlx_lm", "mlx"), ("mlx-lm", "mlx"), ("[metal::malloc]", "mlx"),
    # MLX servers naming themselves or the MLX release they run ("mlx-serve 26.8.11 with MLX 0.32.2")
    ("mlx-serve", "mlx"), ("with MLX 0.", "mlx"),
    ("LM Studio", "lmstudio"), ("Failed to send message", "lmstudio"), ("lmstudio", "lmstudio"), ("LM-Studio", "lmstudio"),
    ("🥲 Failed to load", "lmstudio"),  # LM Studio's load-error dialog
    # the same dialog's llama.cpp line as LM Studio words it, capitalised (llama.cpp's own is "llama_init_from_model:
    # failed to initialize the context: ...", lmstudio-bug-tracker#688, #1249, #2321)
    ("Failed to initialize the context: ", "lmstudio"),
    # LM Studio's developer log (the app's Developer tab, `lms log stream`): a "2025-11-12 14:34:51 [DEBUG]" line, the
    # runtime's own line after it indented by one space (lmstudio-bug-tracker#1216, #1343, #1360); read by
    # _LMSTUDIO_DEVLOG, not as a substring
    (_DEVLOG_KEY, "lmstudio"),
    ("ollama", "ollama"), ("Ollama", "ollama"), ("llama runner", "ollama"), ('source=server.go', "ollama"),
    ('source=ggml.go', "ollama"),  # the Ollama engine's Go backend (ml/backend/ggml/ggml.go slog lines)
    # the runner's own slog lines (runner/ollamarunner/runner.go, runner/llamarunner/runner.go): its load request
    ('source=runner.go', "ollama"), ("msg=load request=", "ollama"),
    # the runners' prompt cache (runner/llamarunner/cache.go, runner/ollamarunner/cache.go LoadCacheSlot, DEBUG):
    # msg="loading cache slot" id=0 cache=57 prompt=1227 used=20 remaining=1207, the line before a request's graph
    ('source=cache.go', "ollama"), ('msg="loading cache slot"', "ollama"),
    # llm/memory.go's estimate line in its older form (msg="offload to cuda|rocm|metal|cpu|gpu" with its memory.*
    # fields; later msg=offload library=...), which may be pasted alone (ollama#8571, PR #5117)
    ('msg="offload to ', "ollama"),
    # the server's scheduler and, from 0.12, ml/device.go's per-device summary (msg="kv cache" device=CPU size=...,
    # "compute graph", "total memory"), pasted without the lines around them (ollama#12574)
    ('source=sched.go', "ollama"), ('source=device.go', "ollama"),
    # KoboldCpp runs llama.cpp inside its own loader (gpttype_adapter.cpp gpttype_load_model, whose error line ends
    # a failed load) and names itself in its banner and its backend libraries (koboldcpp_cublas.dll ...)
    ("gpttype_load_model", "koboldcpp"), ("Welcome to KoboldCpp", "koboldcpp"), ("koboldcpp_cublas", "koboldcpp"),
    ("koboldcpp_vulkan", "koboldcpp"), ("koboldcpp_hipblas", "koboldcpp"), ("koboldcpp.exe", "koboldcpp"),
    ("koboldcpp.py", "koboldcpp"),
    # gpttype_adapter.cpp's progress line while it evaluates a prompt (printf "\rProcessing Prompt%s (%d / %zu
    # tokens)", " [BLAS]" in batched mode): KoboldCpp's own, often the only line before a CUDA error mid-prompt
    ("Processing Prompt [BLAS] (", "koboldcpp"),
    # gpttype_adapter.cpp gpttype_load_model's RoPE note (printf "Automatic RoPE Scaling: Using (scale:%.3f,
    # base:%.1f)." / "Using model internal value."): KoboldCpp's loader, before llama.cpp's context lines
    ("Automatic RoPE Scaling: Using", "koboldcpp"),
    ("llama-server", "llama.cpp"), ("llama_model_load", "llama.cpp"), ("llama_init_from_model", "llama.cpp"),
    ("llama_new_context_with_model", "llama.cpp"), ("load_tensors:", "llama.cpp"), ("ggml_", "llama.cpp"),
    ("llama_cpp", "llama.cpp"),
    # --fit (common/fit.cpp): its decisions and the breakdown table each dry run prints, alone in a
    # llama-fit-params run or a log cut to them (llama_params_fit_impl before the move to common)
    ("llama_params_fit", "llama.cpp"), ("common_params_fit", "llama.cpp"), ("common_fit_params", "llama.cpp"),
    ("common_memory_breakdown_print", "llama.cpp"), ("llama_memory_breakdown_print", "llama.cpp"),
    ("llama-fit-params", "llama.cpp"),
    # a llama-server log cut to its context lines (llama_context / llama_kv_cache / llama_memory_recurrent)
    ("llama_context:", "llama.cpp"), ("llama_kv_cache:", "llama.cpp"), ("llama_memory_recurrent", "llama.cpp"),
    # the sliding-window model's pair of caches (src/llama-kv-cache-iswa.cpp: "llama_kv_cache_iswa: creating SWA KV
    # cache, size = N cells"), quoted alone
    ("llama_kv_cache_iswa:", "llama.cpp"),
    # the multimodal projector's loader (tools/mtmd/clip.cpp: clip_model_loader, clip_ctx, alloc_compute_meta),
    # alone in a log cut to the projector's warm-up
    ("clip_model_loader:", "llama.cpp"), ("clip_ctx:", "llama.cpp"), ("alloc_compute_meta:", "llama.cpp"),
    ("bitsandbytes", "transformers"), ("transformers", "transformers"), ("accelerate", "transformers"),
)


# "ollama" as a name of its own ("ollama[123]:", "/usr/share/ollama/", its temp dir "ollama4175290649/", its
# runner "ollama_llama_server"), not the head of another name ("ollama_gguf/": a folder of GGUFs run by llama-cli)
_OLLAMA_WORD = re.compile(r"(?<![\w-])[Oo]llama(?![A-Za-z]|_(?!llama_server))")


# "lmstudio" in a path or a name that is not LM Studio's own output: its models folder (~/.lmstudio/models/, which
# llama.cpp and Ollama users point at) and the lmstudio-community Hugging Face organisation (GGUF and MLX uploads run
# by every engine); LM Studio's own logs name its app, its runtimes (~/.lmstudio/extensions/...) or its CLI
_LMSTUDIO_ELSEWHERE = re.compile(r"\.lmstudio[/\\]models[/\\]|lmstudio-community")


# Hugging Face accelerate as a name (its package, "accelerate/" in a path, `accelerate launch`), not the English word
# inside another ("accelerated prompt processing", llama.cpp#1735)
_ACCELERATE_WORD = re.compile(r"(?<![\w-])accelerate(?![\w])")


_LMSTUDIO_DEVLOG = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} \[(?:DEBUG|INFO|WARN|ERROR)\] ?\r?\n"
                              r" (?=[a-z_]{2,60}[:( ])", re.MULTILINE)


def host_of(region: str) -> str | None:
    for key, host in HOSTS:
        if key == _DEVLOG_KEY:
            if _LMSTUDIO_DEVLOG.search(region):
                return host
            continue
        if key in region:
            if key in ("ollama", "Ollama") and not _OLLAMA_WORD.search(region):
                continue
            if key == "accelerate" and not _ACCELERATE_WORD.search(region):
                continue
            if key == "lmstudio" and region.count("lmstudio") == len(_LMSTUDIO_ELSEWHERE.findall(region)):
                continue
            return host
    return None
