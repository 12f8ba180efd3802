"""A real engine command line -> (engine, model argument, quant, Settings).

Recognises the program (llama-server, vllm serve, python -m sglang.launch_server, ollama run, mlx_lm.*) by the
engine records' own `programs` and `python_modules`, and hands the rest to that engine's parser.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any

from ..errors import OomkitError
from .base import EngineModule, engine_for_program, get_engine
from .command import (
    LLAMA_APP_COMMANDS,
    QUOTE_LIMIT,
    clip_repr,
    clip_word,
    env_clears,
    env_options_end,
    on_the_host,
    program_name,
    python_module,
    shell_string,
    unwrap,
)
from .lms_keys import lms_names_mlx
from .release_flags import reading_release, release_being_read
from .shell_words import split_command


@dataclass(frozen=True)
class ParsedCommand:
    engine: str
    model: str | None
    settings: Any
    quant: str | None = None
    # the variables the command line itself sets for the engine (`VAR=v engine ...`, `env VAR=v`, the wrapper's
    # `docker run -e VAR=v`), as typed, the later one of a name kept: request.py applies the visible-devices ones
    env: tuple[tuple[str, str], ...] = ()


def _clip_refusal(e: OomkitError, argv: list[str]) -> None:
    """The refusal of a command with an argument longer than QUOTE_LIMIT, each such argument repeated in it (as typed
    or as its repr) cut by clip_word; the same exception, its type kept."""
    text = str(e)
    for word in sorted({w for w in argv if len(w) > QUOTE_LIMIT}, key=len, reverse=True):
        text = text.replace(repr(word), clip_repr(word))
        text = text.replace(word, clip_word(word))
    if text != str(e):
        e.args = (text,)


def parse_command(argv: list[str], env: dict[str, str] | None = None) -> ParsedCommand:
    try:
        return _parse_command(argv, env)
    except OomkitError as e:
        _clip_refusal(e, argv)
        raise


def _parse_command(argv: list[str], env: dict[str, str] | None = None) -> ParsedCommand:
    # `OLLAMA_CONTEXT_LENGTH=8192 ollama serve`, `env K=V ollama run ...`: leading assignments join the env
    # `sudo ...`, `docker run [-e K=V] ... IMAGE [command]`: the engine command the wrapper runs (command.unwrap)
    wrapped = unwrap(argv)
    argv = wrapped.engine_argv
    typed = dict(wrapped.env)  # the variables set on the command line (ParsedCommand.env)
    if wrapped.env:
        env = {**(os.environ if env is None else env), **dict(wrapped.env)}
    if (start := env_options_end(argv)) > 0:  # `env [-i] [-u NAME] VAR=v ...`: -i starts from an empty environment
        if env_clears(argv[1:start]):
            env = {}
        argv = argv[start:]
    while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0]):
        key, _, value = argv.pop(0).partition("=")
        env = dict(os.environ if env is None else env)
        env[key] = value
        typed[key] = value
    if not argv:
        raise OomkitError("empty engine command after --")
    if (k := shell_string(argv)) is not None:  # sh -c 'vllm serve ...': the command the shell runs
        try:
            inner = split_command(argv[k])
        except ValueError as e:
            raise OomkitError(f"{argv[0]} -c: cannot split the command string ({e})") from None
        parsed = parse_command(inner, env)
        version = image_version(wrapped.image)
        if version is not None and "engine_version" in getattr(parsed.settings, "__dataclass_fields__", {}):
            parsed = replace(parsed, settings=replace(parsed.settings, engine_version=version))
        return replace(parsed, settings=_with_image(parsed.settings, wrapped.image),
                       env=tuple({**typed, **dict(parsed.env)}.items()))
    found, module, args = _recognise(argv)
    if found is None:
        if (hint := python_call_hint(" ".join(argv))) is not None:
            raise OomkitError(hint)
        if module is not None:
            raise OomkitError(f"unknown engine module 'python -m {module}'")
        if (script := _module_as_script(argv)) is not None:
            raise OomkitError(f"python {script}: python runs a file of that name, which is no engine (\"can't open "
                              f"file '{script}'\"): give python -m {script}")
        if program_name(argv[0]) == "llama":  # app/llama.cpp main: "error: unknown command '%s'"
            raise OomkitError(f"llama {argv[1] if len(argv) > 1 else ''}: the llama executable runs one of its commands "
                              f"({', '.join(LLAMA_APP_COMMANDS)}) first: `llama serve -hf ...` is llama-server's")
        if program_name(argv[0]).startswith("llama-"):  # llama-batched-bench, llama-quantize, ...: built beside them
            raise OomkitError(f"{program_name(argv[0])} is a llama.cpp program oomkit does not read: it reads "
                              "llama-server, llama-cli, llama-bench, llama-mtmd-cli, llama-perplexity, llama-imatrix "
                              "and llama-embedding; give the llama-server command of the same model and context")
        raise OomkitError(f"unknown engine command {argv[0]!r}: oomkit reads llama-server, llama-cli, llama-bench and the other llama.cpp tools, lms load, vllm "
                          "serve, python -m sglang.launch_server, ollama run and mlx_lm command lines")
    eng, program = found
    if eng.name == "sglang" and module is None and args[:1] and args[0] in _SGLANG_OTHER_COMMANDS:
        raise OomkitError(f"sglang {args[0]} {_SGLANG_OTHER_COMMANDS[args[0]]}: give `sglang serve ...` (or python -m "
                          "sglang.launch_server) for the server oomkit sizes")
    if program == "lms" and args[:1] and args[0] in _LMS_OTHER_COMMANDS:
        sub = args[0]
        raise OomkitError(f"lms {sub} {_LMS_OTHER_COMMANDS[sub]}, not `lms load`: oomkit sizes the model `lms load` "
                          "loads (its --context-length, --gpu, --parallel): give `lms load MODEL ...`")
    version = image_version(wrapped.image)
    with reading_release(None if release_being_read() else version):  # --engine-version wins over the tag
        model, quant, settings = eng.parse_args(args, env, program)
    if program == "lms" and lms_names_mlx(model):
        # LM Studio runs an MLX model with its MLX engine (lmstudio-ai/mlx-engine, on mlx-lm), not llama.cpp; that
        # engine loads only here, for an MLX model (tests/test_engine_registry.py)
        from .mlx.args import from_lms

        eng = get_engine("mlx")
        model, quant, settings = from_lms(model, settings.n_ctx, settings.n_parallel, settings.unmodelled)
        return ParsedCommand(eng.name, model, settings, quant, tuple(typed.items()))
    if version is not None and "engine_version" in getattr(settings, "__dataclass_fields__", {}):
        settings = replace(settings, engine_version=version)  # the release the image holds (--engine-version wins)
    if wrapped.image is not None:  # a model folder bound whole at a mount point: the host's (command.on_the_host)
        model = on_the_host(model, wrapped.prefix)
    return ParsedCommand(eng.name, model, _with_image(settings, wrapped.image), quant, tuple(typed.items()))


# the `sglang` program's commands besides `serve` (python/sglang/cli/main.py: generate runs a multimodal model,
# SGLang Diffusion's image and video pipelines, sglang/cli/generate.py; render the standalone Rust OpenAI frontend;
# version prints the release)
_SGLANG_OTHER_COMMANDS = {"generate": "runs SGLang Diffusion's generation pipeline (sglang/cli/generate.py), which "
                                      "oomkit does not model",
                          "render": "launches the standalone Rust OpenAI frontend, which loads no model",
                          "version": "prints the release and loads no model"}


# The `lms` program's commands besides `load` (lmstudio-ai/lms src/subcommands: get.ts downloads a model, ls.ts and
# ps.ts list the downloaded and the loaded ones, unload.ts unloads, server.ts starts and stops the API server, ...):
# none loads a model with settings of its own (lmstudio-ai/mlx-engine#83 `lms get mlx-community/...` before its demo)
_LMS_OTHER_COMMANDS = {"get": "downloads a model and loads none", "ls": "lists the downloaded models",
                       "ps": "lists the loaded models", "unload": "unloads a model",
                       "server": "starts or stops the API server", "status": "prints LM Studio's status",
                       "log": "streams the logs", "import": "imports a model file", "clone": "clones an artifact",
                       "create": "creates a project", "push": "uploads an artifact", "runtime": "manages runtimes",
                       "version": "prints the version", "daemon": "manages the daemon",
                       "bootstrap": "sets up the CLI", "login": "logs in", "chat": "chats with a loaded model",
                       "dev": "runs a plugin", "flags": "sets feature flags"}


def _with_image(settings: Any, image: str | None) -> Any:
    """The settings with the container image the command runs in, for an engine whose settings keep it
    (VllmSettings.container_image: what the image installs beside the engine)."""
    if image is None or "container_image" not in getattr(settings, "__dataclass_fields__", {}):
        return settings
    return replace(settings, container_image=image)


def _module_as_script(argv: list[str]) -> str | None:
    """`python sglang.launch_server ...` (-m left out): the engine module typed where python takes a script path
    (CPython's main: a first argument not an option is the file to run), if one oomkit reads; else None."""
    if len(argv) < 2 or python_module(argv[:1] + ["-m", "x"]) is None:
        return None
    word = next((a for a in argv[1:] if not a.startswith("-")), "")
    if re.fullmatch(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+", word) and not word.endswith(".py"):
        if engine_for_program(program_name(argv[0]), module=word) is not None:
            return word
    return None


def image_version(image: str | None) -> str | None:
    """The engine release a container image's tag names: `vllm/vllm-openai:v0.6.2` -> 0.6.2,
    `lmsysorg/sglang:v0.4.5.post3-cu121` -> 0.4.5, `ollama/ollama:0.6.8` -> 0.6.8, llama.cpp's
    `server-cuda-b4567` -> b4567; None for `latest`, `blackwell` and other moving tags."""
    if not image or ":" not in image.rpartition("/")[2]:
        return None
    tag = image.rpartition(":")[2]
    m = re.match(r"v?(\d+\.\d+\.\d+)(?:$|[.+-])", tag)
    if m:
        return m.group(1)
    m = re.search(r"(?:^|-)(b\d{3,6})(?:$|-)", tag)
    return m.group(1) if m else None


def read_as_model_flag(eng: EngineModule, model: str, engine_args: list[str] | tuple[str, ...] = (),
                       env: dict[str, str] | None = None) -> tuple[str, Any] | None:
    """MODEL for an engine that reads its model's name itself (mlx-lm: mlx-community's gpt-oss "-MXFP4-Q8" holds
    MXFP4 experts and 8-bit others, which one weight format cannot say), when neither the catalog nor the name rules
    (model/names.py) read it: read as the engine's own model flag reads it (engines/mlx/args.py base_model,
    bits_from_name), the same in the command form, MODEL with flags and the Python API -> (the model as that flag
    resolves it, the settings the name and `engine_args` make), or None where MODEL is kept as typed (a file, a
    folder, a name the catalog or the rules read, an engine that reads no name)."""
    if not eng.loads_mlx:
        return None
    # lazy: the catalog and the name rules are read only for a model of an engine that reads names itself
    from ..model.catalog import lookup
    from ..model.names import derive

    if os.path.exists(os.path.expanduser(model)) or lookup(model) is not None or derive(model) is not None:
        return None
    flag_model, _, settings = eng.parse_args(["--model", model, *engine_args], env)
    return (flag_model, settings) if flag_model and flag_model != model else None


def is_engine_command(argv: list[str]) -> bool:
    """Whether a process's command line is one oomkit can read (a running engine)."""
    if not argv:
        return False
    found, _, args = _recognise(argv)
    if found is None:
        return False
    eng = found[0]
    return not eng.subcommands or (bool(args) and args[0] in eng.subcommands)


def names_a_command(text: str) -> bool:
    """Whether `text` (one argument with spaces in it) is a whole engine command line pasted as the MODEL, such as
    "vllm serve Qwen/Qwen3-8B --max-model-len 32768", rather than a path with spaces."""
    if not any(c.isspace() for c in text) or os.path.lexists(text):
        return False
    try:
        words = split_command(text)
        wrapped = unwrap(words)
    except (ValueError, OomkitError):
        return False
    argv = [a for a in wrapped.engine_argv if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", a)]
    if wrapped.image is not None or shell_string(argv) is not None:
        return True
    # a program with long options after it (`python3 server.py --model X`) is a command line, even one oomkit does
    # not read: it is refused as a command ("unknown engine command"), not looked for as a file; so is a program
    # with a model named by a transport after it (`ramalama serve ollama://deepseek-r1:32b`, containers/ramalama#807:
    # RamaLama's ollama://, hf://, oci://), which no path holds after a blank
    return (bool(argv) and _recognise(argv)[0] is not None) or any(w.startswith("--") and len(w) > 2
                                                                    for w in words[1:]) or (
        len(words) > 1 and not words[0].startswith(("/", ".", "~", "\\")) and ":" not in words[0]
        and any(re.match(r"[a-z][a-z0-9+.-]*://\S", w) for w in words[1:]))


def _recognise(argv: list[str]) -> tuple[tuple[EngineModule, str | None] | None, str | None, list[str]]:
    """-> (the engine and the program variant it is told, or None; the `python -m` module, if any; the
    arguments after the program)."""
    prog = program_name(argv[0])
    module = python_module(argv)  # python [-u -X opt ...] -m MODULE
    if module is not None:
        return engine_for_program(prog, module=module[0]), module[0], list(argv[module[1]:])
    if prog == "llama" and len(argv) > 1 and argv[1] in LLAMA_APP_COMMANDS:
        return engine_for_program(LLAMA_APP_COMMANDS[argv[1]]), None, argv[2:]
    return engine_for_program(prog), None, argv[1:]


# A Python call pasted where a model or a command goes: the loaders whose arguments name the settings, and the
# oomkit form that reads the same (transformers: from_pretrained's arguments as --engine transformers options;
# vLLM's LLM(...) takes EngineArgs, which `vllm serve` takes as flags; llama-cpp-python's Llama(...) and
# LangChain's LlamaCpp(...) are llama.cpp's context and model parameters)
_TRANSFORMERS_KWARGS = {"device_map": "--device-map", "torch_dtype": "--dtype", "dtype": "--dtype",
                        "load_in_4bit": "--load-in-4bit", "load_in_8bit": "--load-in-8bit",
                        "attn_implementation": "--attn-implementation"}
_LLAMA_KWARGS = {"n_ctx": "-c", "n_gpu_layers": "-ngl", "n_batch": "-b", "n_ubatch": "-ub", "flash_attn": "-fa",
                 "main_gpu": "-mg", "tensor_split": "-ts"}


def python_call_hint(text: str) -> str | None:
    """When `text` is Python code calling a model loader (AutoModelForCausalLM.from_pretrained(...), LLM(...),
    Llama(...)), the one-line refusal that names the oomkit form reading the same settings; None otherwise. Only
    literal arguments are carried over, and a variable the paste sets to a literal; any other is left as MODEL
    (oomkit does not run the code)."""
    import ast  # read only for a pasted Python call, off the CLI's start-up path

    if "(" not in text or not any(k in text for k in ("from_pretrained", "from_quantized", "LLM(", "Llama(",
                                                      "LlamaCpp(", "Engine(", "EngineArgs(", "mlx_lm")):
        return None
    if re.search(r"^\s*(?:from\s+tensorrt_llm\b|import\s+tensorrt_llm\b)|\btensorrt_llm\.LLM\(", text, re.MULTILINE):
        # TensorRT-LLM's LLM(...) (tensorrt_llm/llmapi/llm.py) shares vLLM's class name and keywords but builds a
        # TensorRT engine, which oomkit does not model (NVIDIA/TensorRT-LLM#7818)
        return ("this is Python code calling TensorRT-LLM's LLM(...) (from tensorrt_llm), not vLLM's: oomkit does not "
                "model TensorRT-LLM; for vLLM give `oomkit check -- vllm serve MODEL ...`")
    if m := re.search(r"\b(\w*Pipeline)\.from_pretrained\(", text):
        # diffusers' pipelines (DiffusionPipeline, FluxPipeline, QwenImagePipeline, ...: diffusers/pipelines/
        # pipeline_utils.py DiffusionPipeline.from_pretrained) load an image or video generator's components, not a
        # language model (huggingface/diffusers#12900's Qwen-Image)
        return (f"this is Python code loading a diffusers pipeline ({m.group(1)}.from_pretrained), an image or video "
                "generator, not a language model: oomkit sizes LLM inference engines and does not model diffusers")
    try:
        tree = ast.parse(text.strip().rstrip(";"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # a paste's lines out of indent (vllm-project/vllm#7352: ` llm = LLM(...)` one blank in) or cut: the
        # loader call itself, read from its name to its closing parenthesis; else, the call's quotes gone (a shell
        # split it after --), named with its arguments not read
        tree = _loader_call(text)
        if tree is None:
            m = re.search(r"(?:^|[\s=.])(from_pretrained|from_quantized|LLM|Llama|LlamaCpp)\(", text)
            if m is None:
                return None
            tree = ast.parse(f"{'x.' if m.group(1).startswith('from_') else ''}{m.group(1)}()")
    assigned = {t.id: node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == "load" and not ("mlx_lm" in text and (isinstance(f, ast.Name) or (
                isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "mlx_lm"))):
            continue  # mlx_lm's load(path_or_hf_repo) only: json.load, torch.load and the rest load no model
        if name == "Engine" and "sgl" not in text:
            continue  # SGLang's offline engine (`sgl.Engine`, `sglang.Engine`) only
        if name not in ("from_pretrained", "from_quantized", "LLM", "EngineArgs", "AsyncEngineArgs", "Llama",
                        "LlamaCpp", "Engine", "load"):
            continue
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and re.search(
                r"Tokenizer|Processor|Config|FeatureExtractor", f.value.id):
            continue  # AutoTokenizer.from_pretrained(...) beside the model's loader (h2ogpt#416) loads no weights
        kw = {k.arg: k.value for k in node.keywords if k.arg}

        def lit(v: ast.AST | None) -> str | None:
            if isinstance(v, ast.Name) and isinstance(assigned.get(v.id), ast.Constant):
                v = assigned[v.id]  # `model_name = "Qwen/..."` set above the call in the same paste (AutoGPTQ#747)
            if isinstance(v, ast.Constant) and isinstance(v.value, (str, int, float, bool)):
                return str(v.value).lower() if isinstance(v.value, bool) else str(v.value)
            if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub) and isinstance(v.operand, ast.Constant) \
                    and type(v.operand.value) in (int, float):
                return f"-{v.operand.value}"  # n_gpu_layers=-1
            if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id == "torch":
                return v.attr  # torch.bfloat16
            return None

        first = node.args[0] if node.args else None
        if name in ("from_pretrained", "from_quantized"):
            # Unsloth's FastModel / FastLanguageModel.from_pretrained name it model_name (unsloth/models/loader.py),
            # and load it through transformers' from_pretrained (unslothai/unsloth#2590)
            model = (lit(first) or lit(kw.get("pretrained_model_name_or_path")) or lit(kw.get("model_name"))
                     or "MODEL")
            opts = []
            qc = kw.get("quantization_config")
            qc = assigned.get(qc.id, qc) if isinstance(qc, ast.Name) else qc
            if isinstance(qc, ast.Call) and getattr(qc.func, "attr", getattr(qc.func, "id", "")) == "BitsAndBytesConfig":
                # transformers' BitsAndBytesConfig(load_in_4bit=True) passed as quantization_config (the form its
                # docs give, docs/source/en/quantization/bitsandbytes.md) loads as load_in_4bit=True does
                kw = {**{k.arg: k.value for k in qc.keywords if k.arg in ("load_in_4bit", "load_in_8bit")}, **kw}
            for k, flag in _TRANSFORMERS_KWARGS.items():
                if (v := lit(kw.get(k))) is not None:
                    opts += [flag] if flag.startswith("--load-in") and v == "true" else \
                        [] if flag.startswith("--load-in") else [flag, v]
            form = " ".join(["oomkit check", model, "--engine transformers", *opts])
            # AutoGPTQForCausalLM / AutoAWQForCausalLM.from_quantized (auto_gptq/modeling/auto.py, awq/models/auto.py)
            # build the quantized checkpoint's transformers model, as AutoAWQ's from_pretrained does (sweep 13)
            what = "transformers' from_pretrained" if name == "from_pretrained" else ".".join(
                [f.value.id, name] if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else [name])
        elif name in ("LLM", "EngineArgs", "AsyncEngineArgs"):
            # vLLM's LLM(model, **kwargs) builds EngineArgs(model=..., **kwargs) (vllm/entrypoints/llm.py), the
            # dataclass whose fields `vllm serve` takes as flags (engine/arg_utils.py add_cli_args); a True switch
            # is its flag alone, a False one its default
            model = lit(first) or lit(kw.get("model")) or "MODEL"
            opts = [f"--{k.replace('_', '-')}" + ("" if v == "true" else f" {v}") for k, node_v in kw.items()
                    if k != "model" and (v := lit(node_v)) is not None and v != "false"]
            form = " ".join(["oomkit check -- vllm serve", model, *opts])
            what = "vLLM's LLM" if name == "LLM" else f"vLLM's {name}"
        elif name == "Engine":
            # sglang/srt/entrypoints/engine.py Engine.__init__(**kwargs): ServerArgs(**kwargs), the dataclass whose
            # fields launch_server takes as flags (server_args.py add_cli_args: model_path -> --model-path)
            model = lit(kw.get("model_path")) or "MODEL"
            opts = [f"--{k.replace('_', '-')} {v}" for k, node_v in kw.items() if k != "model_path"
                    and (v := lit(node_v)) is not None]
            form = " ".join(["oomkit check -- python -m sglang.launch_server --model-path", model, *opts])
            what = "SGLang's Engine"
        elif name == "load":
            # mlx_lm/utils.py load(path_or_hf_repo, ...): the model mlx_lm.generate --model loads
            model = lit(first) or lit(kw.get("path_or_hf_repo")) or "MODEL"
            form = f"oomkit check -- mlx_lm.generate --model {model}"
            what = "mlx_lm's load"
        else:
            model = lit(first) or lit(kw.get("model_path")) or "MODEL"
            opts = []
            for k, flag in _LLAMA_KWARGS.items():
                if (v := lit(kw.get(k))) is not None:
                    opts += [flag, "on" if flag == "-fa" and v == "true" else "off" if flag == "-fa" else v]
            form = " ".join(["oomkit check -- llama-server -m", model, *opts])
            what = f"llama-cpp-python's {name}"
        return (f"this is Python code ({what}(...)), not a model name or an engine command; oomkit does not run "
                f"it: give `{form}`")
    return None


def _loader_call(text: str) -> Any:
    """The first model loader call in Python text that does not parse whole (lines out of indent, a cut paste), as
    its own expression from the callee's name to the matching parenthesis, on a line that is no comment; None if
    there is none or it does not parse."""
    import ast  # read only for a pasted Python call, off the CLI's start-up path

    for m in re.finditer(r"^[^#\n]*?((?:[A-Za-z_][\w.]*\.)?(?:from_pretrained|from_quantized|LLM|EngineArgs|Llama|"
                         r"LlamaCpp|Engine)\()", text,
                         re.MULTILINE):
        start, depth = m.start(1), 0
        for k in range(m.end(1) - 1, min(len(text), m.end(1) + 20000)):
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            if depth == 0:
                try:
                    return ast.parse(text[start:k + 1], mode="eval")
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    break
    return None
