"""Every program that runs llama.cpp, each read with its own defaults.

The programs share common/arg.cpp's flags and common_params' defaults (common/common.h), as llama-server does,
but each sets a few of its own before or after parsing. Cited against ggml-org/llama.cpp@0c1e57098 as
`file:function`:

| program | what differs from llama-server |
|---|---|
| llama-server | -np auto = 4 slots in one unified cache (ERAS np_auto; a typed -np 1 without -kvu too until ERAS np_auto_asked, not beside a draft model from ERAS np_auto_no_draft: server_slots); n_outputs_max = n_parallel x (1 + the longest draft), 1 per slot without speculation (ERAS outputs_max) |
| llama-cli, llama-completion, llama-run | one sequence; built on the server context since late 2025 |
| llama-mtmd-cli | one sequence, the projector from --mmproj (tools/mtmd/mtmd-cli.cpp) |
| llama-fit-params | the dry run --fit makes for llama-server's command (tools/fit-params), one sequence |
| llama-perplexity | -c 512 unless given (set before parsing, every build); n_seq = max(1, n_batch / n_ctx) chunks side by side in one unified cache of n_seq x n_ctx cells, every token's logits (tools/perplexity/perplexity.cpp main) |
| llama-imatrix | -c 512 unless given (set before parsing, every build); n_batch capped at n_ctx, every token's logits (tools/imatrix/imatrix.cpp) |
| llama-embedding | --embeddings, n_ubatch = n_batch (a non-causal model must see its input in one ubatch: tools/embedding/embedding.cpp) |
| llama-bench | its own parser and defaults (tools/llama-bench/llama-bench.cpp cmd_params_defaults): -p 512 -n 128 -b 2048 -ub 512 -ngl 99 -fa 0 -mmp 1, one context per test row of n_prompt + n_gen + depth cells, one sequence |
| main, server | the names of llama-cli and llama-server before the llama- prefix (June 2024); their -c defaulted to 512 |
| lms load (LM Studio) | LM Studio's llama.cpp runtime: --context-length (LM Studio's default 4096), --gpu max / off (lmstudio.ai/docs/cli/load), max (and no --gpu) a fixed 999999 layers before runtime v2.0.0 that llama.cpp's fit leaves alone, llama.cpp's own placement from it (lmstudio.offload_layers); --parallel (Max Concurrent Predictions) 4 sharing one unified cache from runtime v2.0.0 (LM Studio 0.4), 1 before; a typed --parallel N in that unified cache (lms_slots); an MLX model (mlx-community's, a key or path naming MLX, an @4bit variant) is LM Studio's MLX engine's instead (engines/mlx/args.py from_lms) |
| -c by build | llama-server, llama-cli, llama-mtmd-cli, llama-embedding take common_params' n_ctx: 512 (main and server too) until PR #7675, 0 (the trained context) until PR #10136, 4096 from it until PR #16653 (--fit), 0 (the trained context, fitted to memory) since (COMMON_CTX_ERAS) |
| Llama(...) (llama-cpp-python) | the binding's keyword defaults: n_ctx 512, n_batch 512, n_ubatch 512, n_gpu_layers 0, flash_attn False, use_mmap True (llama_cpp/llama.py Llama.__init__), plus its host-side logits array |
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ...errors import OomkitError, SettingsError
from ...flags import check_settings, flag_value
from ...model import names
from ..lms_keys import lms_names_mlx
from .args import GGML_TYPE_IDS, LMS_VALUED, SERVER_LISTS, parse_args, second_command
from .backend_names import infer_backend
from .fit import draft_context, draft_contexts, read_draft
from .layout import estimate as layout_estimate
from .lmstudio import DEFAULT_CONTEXT, offload_layers, parallel_default
from .projector import projector_bytes, projector_memory
from .settings import ERAS, LlamaCppSettings, build_number

# executable name -> the program whose defaults apply (the variant the engine record tells its parser)
PROGRAMS = {
    "llama-server": "llama-server", "server": "server", "llama-cli": "llama-cli", "llama-completion": "llama-cli",
    "llama-run": "llama-cli", "main": "main", "llama-mtmd-cli": "llama-mtmd-cli",
    "llama-llava-cli": "llama-mtmd-cli", "llama-gemma3-cli": "llama-mtmd-cli", "llama-qwen2vl-cli": "llama-mtmd-cli",
    "llama-perplexity": "llama-perplexity", "perplexity": "llama-perplexity", "llama-imatrix": "llama-imatrix",
    "imatrix": "llama-imatrix", "llama-embedding": "llama-embedding", "embedding": "llama-embedding",
    "llama-fit-params": "llama-fit-params", "llama-bench": "llama-bench", "lms": "lms",
}

# per program: (the LlamaCppSettings.program its rules follow, defaults that differ from llama-server's)
_DEFAULTS: dict[str, tuple[str, dict[str, Any]]] = {
    "llama-server": ("llama-server", {}),
    "llama-cli": ("llama-cli", {}),
    # examples/main/README.md and examples/server/README.md before the rename: "-c N ... (default: 512)"
    "main": ("llama-cli", {"n_ctx": 512}),
    "server": ("llama-server", {"n_ctx": 512}),
    "llama-mtmd-cli": ("llama-mtmd-cli", {}),
    "llama-fit-params": ("llama-cli", {}),
    # perplexity.cpp main / imatrix.cpp main: "params.n_ctx = 512;" before common_params_parse, in every build
    "llama-perplexity": ("llama-perplexity", {"kv_unified": True, "n_ctx": 512}),
    "llama-imatrix": ("llama-imatrix", {"n_ctx": 512}),
    "llama-embedding": ("llama-embedding", {"embeddings": True, "kv_unified": True}),
    # LM Studio's load defaults: a 4096-token context (lmstudio.DEFAULT_CONTEXT); --parallel left at -1, its
    # runtime's default, and --gpu max as its runtime takes it (lms_slots)
    "lms": ("lmstudio", {"n_ctx": DEFAULT_CONTEXT}),
}


# common/common.h common_params::n_ctx, the -c default of every program that leaves it alone (llama-server, llama-cli,
# llama-mtmd-cli, llama-embedding), by build:
# - 512 before PR #7675 "common : refactor cli arg parsing" (1442677f9, 2024-06-04, b3087), gpt_params' "int32_t
#   n_ctx = 512;", the main and server examples' (server_params_parse kept gpt_params' defaults; the PR moved the
#   server onto gpt_params_parse and changed the default to "n_ctx = 0;"). NeoZhangJianyu/ci_log's SYCL CI (main
#   -m llama-2-7b.Q4_0.gguf with no -c) runs "n_ctx = 512" to b3086 and 4096, the trained context, from b3091
# - 0 (the trained context) from PR #7675 to PR #10136: Ollama's vendored common.h reads "n_ctx = 0; // context size" at
#   llama.cpp 8962422 (ollama 96efd9052, 2024-10-08), and the logs of issues #9016 (b3579, 2024-08-13) and #9112
#   (August 2024) run the trained context unasked. (The older main / server names defaulted to 512: _DEFAULTS.)
# - 4096 from PR #10136 ("llama : adjust default context size + print warnings", merged 2024-11-02: "the examples
#   will use a context size of 4096, instead of the training context"; ollama 527cc9789 of 2024-12-10 vendors
#   "n_ctx = 4096"); its merge commit 1926d6e39 is master's 4014th: b4014
# - until PR #16653 (--fit, ERAS params_fit): Ollama's vendored common.h still reads "n_ctx = 4096" at llama.cpp
#   17f7f4b (ollama b95693056, 2025-12-10) and "n_ctx = 0; // context size, 0 == context the model was trained
#   with" beside fit_params_min_ctx = 4096 at ec98e2002 (ollama 49a9c9ba6, 2025-12-17); a public OpenCL log of
#   llama-cli at b7057 runs a 4096 context unasked
# - 0 (the trained context, which --fit may reduce) since
COMMON_CTX_ERAS = ((3087, 512), (4014, 0), (ERAS["params_fit"], 4096))
COMMON_CTX_PROGRAMS = ("llama-server", "llama-cli", "llama-mtmd-cli", "llama-embedding")


def common_default_ctx(build: int) -> int:
    """common_params::n_ctx at a build: 512, 0 (the trained context) from PR #7675, 4096 from PR #10136, 0 again
    from PR #16653."""
    for first_after, n_ctx in COMMON_CTX_ERAS:
        if build < first_after:
            return n_ctx
    return 0


def with_build_ctx(s: LlamaCppSettings) -> tuple[LlamaCppSettings, str | None]:
    """-c left out on a build whose default was not the trained context -> that build's default, and a note. A
    typed -c 0 is the trained context in every build (common/arg.cpp --ctx-size: "0 = loaded from model"): kept.
    The old main / server names' 512 (_DEFAULTS, n_ctx_old_name) is the default of the builds before PR #7675 only:
    from it they run the build's common default as well."""
    if s.n_ctx_typed or s.program not in COMMON_CTX_PROGRAMS or s.n_ctx != 0 and not s.n_ctx_old_name:
        return s, None
    n_ctx = common_default_ctx(build_number(s.engine_version))
    if n_ctx == s.n_ctx:
        return s, None
    if not n_ctx:
        return replace(s, n_ctx=0), None
    return replace(s, n_ctx=n_ctx), (f"{s.program} at build {s.engine_version} defaults to -c {n_ctx} "
                                     "(common_params n_ctx before --fit); -c 0 is the trained context there")


def server_slots(s: LlamaCppSettings) -> tuple[LlamaCppSettings, str | None]:
    """The slots llama-server runs between PR #16736 (b6925) and PR #17997 (b7433), where its main turned one slot
    without -kvu into 4 sharing a unified cache (tools/server/server.cpp main: `if (params.n_parallel == 1 &&
    params.kv_unified == false)`, "setting n_parallel = 4 and kv_unified = true"), the default and a typed -np 1
    alike; from PR #17017 (b6958) not with a draft model (`&& !params.has_speculative()`). A typed -np 1 so turned
    gets a note; the -np -1 default resolves here too, as kv._sequences would read it as 4 slots."""
    build = build_number(s.engine_version)
    if (s.program != "llama-server" or s.n_parallel not in (-1, 1) or s.kv_unified
            or not ERAS.reached(build, "np_auto") or ERAS.reached(build, "np_auto_asked")):
        return s, None
    if ERAS.reached(build, "np_auto_no_draft") and (s.model_draft or s.hf_repo_draft):
        return replace(s, n_parallel=1), None
    if s.n_parallel < 0:
        return s, None  # the default: kv._sequences's 4 unified slots
    return replace(s, n_parallel=4, kv_unified=True), (
        f"llama-server at build {s.engine_version} turns -np 1 without -kvu into 4 slots sharing one unified cache "
        "(server.cpp: \"setting n_parallel = 4 and kv_unified = true\", until b7433); add -kvu to keep one slot")


def lms_slots(s: LlamaCppSettings) -> tuple[LlamaCppSettings, str | None]:
    """`lms load`'s concurrent predictions by its llama.cpp runtime (lmstudio.parallel_default, LM Studio's load
    config schema): without --parallel, 4 sharing one unified KV cache from runtime v2.0.0 (LM Studio 0.4) and 1
    before; a typed --parallel N stays N, in the unified cache LM Studio 0.4 defaults to (useUnifiedKvCache, no lms
    load flag). The unified cache keeps n_ctx cells for all sequences (n_ctx_seq = n_ctx); a recurrent state and an
    output row per sequence grow. The default gets a note. GPU offload "max" is LM Studio's fixed 999999 layers
    before runtime v2.0.0, which llama.cpp's fit leaves alone (lmstudio.offload_layers)."""
    if s.program != "lmstudio":
        return s, None
    if (ngl := offload_layers(s.engine_version, s.n_gpu_layers)) != s.n_gpu_layers:
        s = replace(s, n_gpu_layers=ngl)
    n, unified, named = parallel_default(s.engine_version)
    if s.n_parallel > 0:
        return (replace(s, kv_unified=True) if unified and not s.kv_unified else s), None
    s = replace(s, n_parallel=n, kv_unified=unified)
    if n == 1:
        return s, None
    runtime = "its llama.cpp runtime v2.0.0 or newer" if named else \
        "the newest llama.cpp runtime (--engine-version names none: give lms runtime ls's, a 1.x one loads 1)"
    return s, (f"lms load without --parallel: LM Studio 0.4 with {runtime} runs {n} concurrent predictions (Max "
               f"Concurrent Predictions) in one unified KV cache of the context's cells, a recurrent state and "
               f"output row each; --parallel 1 for one")


def parse(argv: list[str], program: str) -> tuple[str | None, str | None, LlamaCppSettings]:
    """A program's arguments (after its name) -> (model, quant, settings), with that program's defaults."""
    if program == "llama-bench":
        return parse_bench(argv)
    if program == "lms":
        return parse_lms(argv)
    if program == "llama_cpp.server":
        return parse_binding_server(argv)
    rules, defaults = _DEFAULTS.get(program, (program, {}))
    model, quant, s = parse_args(argv, program=rules, defaults=defaults)
    if program in ("main", "server") and not s.n_ctx_typed:
        s = replace(s, n_ctx_old_name=True)
    return model, quant, _after_parse(program, s)


def _after_parse(program: str, s: LlamaCppSettings) -> LlamaCppSettings:
    if program == "llama-perplexity" and s.n_ctx > 0:
        # perplexity.cpp: n_seq = max(1, n_batch / n_ctx) chunks at once, one unified cache of n_seq x n_ctx cells,
        # n_batch capped at it
        n_seq = max(1, s.n_batch // s.n_ctx)
        return replace(s, n_parallel=n_seq, n_ctx=n_seq * s.n_ctx, n_batch=min(s.n_batch, n_seq * s.n_ctx),
                       kv_unified=True)
    if program == "llama-imatrix" and s.n_ctx > 0:
        return replace(s, n_batch=min(s.n_batch, s.n_ctx))
    if program == "llama-embedding":
        return replace(s, n_ubatch=s.n_batch)  # embedding.cpp: non-causal models need ubatch == batch
    return s


# ---------------------------------------------------------------------------------------------------------
# llama-bench: its own flags, comma lists, one context per test row


_BENCH_VALUED = {"-m", "--model", "-p", "--n-prompt", "-n", "--n-gen", "-pg", "-d", "--n-depth", "-b", "--batch-size",
                 "-ub", "--ubatch-size", "-ctk", "--cache-type-k", "-ctv", "--cache-type-v", "-t", "--threads",
                 "-C", "--cpu-mask", "--cpu-strict", "--poll", "-ngl", "--n-gpu-layers", "-ncmoe", "--n-cpu-moe",
                 "-sm", "--split-mode", "-mg", "--main-gpu", "-nkvo", "--no-kv-offload", "-fa", "--flash-attn",
                 "-mmp", "--mmap", "-embd", "--embeddings", "-ts", "--tensor-split", "-ot", "--override-tensors",
                 "-r", "--repetitions", "--prio", "--delay", "-o", "--output", "-oe", "--output-err", "--numa",
                 "-dev", "--device", "-nopo", "--no-op-offload", "--rpc", "-hf", "-hfr", "-hff", "-dio",
                 "--direct-io", "-nr", "--no-repack", "-lm", "--load-mode", "-dt", "--defrag-thold", "-fitt",
                 "--fit-target", "-fitc", "--fit-ctx", "-fit", "--fit"}
_BENCH_SWITCHES = {"-v", "--verbose", "--progress", "-h", "--help", "--list-devices"}


def _ints(flag: str, text: str) -> list[int]:
    out = []
    for part in text.split(","):
        try:
            out.append(int(part))
        except ValueError:
            raise SettingsError(f"llama-bench {flag} takes integers (a comma list), got {text!r}") from None
    return out


def parse_bench(argv: list[str]) -> tuple[str | None, str | None, LlamaCppSettings]:
    """llama-bench's command line (llama-bench.cpp parse_cmd_params) -> the settings of its largest test row, every
    row in bench_tests. Its defaults (cmd_params_defaults): -p 512, -n 128, -pg none, -d 0, -b 2048, -ub 512,
    -ngl 99, -fa 0, -ctk/-ctv f16, -mmp 1, -sm layer. Each -p value is a test `ppN` (n_prompt N), each -n value
    `tgN`, each -pg `ppN+tgM`, each at every -d depth, with a context of n_prompt + n_gen + depth cells. Where a
    flag lists several values (-ngl 0,99) the largest memory is the last value of -ub / -b and every value of
    -p / -n / -pg / -d; other lists take their last value."""
    vals: dict[str, list[str]] = {}
    model = None
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in _BENCH_SWITCHES:
            i += 1
            continue
        if name not in _BENCH_VALUED:
            if (second := second_command(a)) is not None:
                raise SettingsError(second)
            raise SettingsError(f"error: invalid parameter for argument: {a} (not a llama-bench flag)")
        value, i = flag_value(argv, i, inline if eq else None, f"error: {name} expects a value")
        i += 1
        vals.setdefault(_canon(name), []).append(value)
    if "-m" in vals:
        # llama-bench.cpp parse_cmd_params: every -m, each a comma list, is one more model benchmarked in turn
        models = list(dict.fromkeys(m for v in vals["-m"] for m in v.split(",") if m))
        if len(models) > 1:
            raise SettingsError(f"llama-bench -m lists {len(models)} models, benchmarked one after another: oomkit "
                                f"sizes one; give one of them ({models[0]}, ...) per command")
        model = models[0] if models else vals["-m"][-1]
    elif "-hf" in vals:
        model = vals["-hf"][-1]
    quant = None
    if model and "-hf" in vals:
        model, _, q = model.partition(":")
        quant = q or None

    def last(flag: str, default: str) -> str:
        return vals[flag][-1].split(",")[-1] if flag in vals else default

    prompts = _ints("-p", ",".join(vals["-p"])) if "-p" in vals else [512]
    gens = _ints("-n", ",".join(vals["-n"])) if "-n" in vals else [128]
    depths = _ints("-d", ",".join(vals["-d"])) if "-d" in vals else [0]
    pgs = []
    for text in vals.get("-pg", []):
        for pair in text.split(";") if ";" in text else [text]:
            pp, _, tg = pair.partition(",")
            pgs.append((_ints("-pg", pp)[0], _ints("-pg", tg)[0]))
    rows: list[tuple[str, int]] = []
    for d in depths:
        at = f" @ d{d}" if d else ""
        rows += [(f"pp{p}{at}", p + d) for p in prompts if p > 0]
        rows += [(f"tg{g}{at}", g + d) for g in gens if g > 0]
        rows += [(f"pp{p}+tg{g}{at}", p + g + d) for p, g in pgs]
    if not rows:
        raise SettingsError("llama-bench: no test to run (-p 0 -n 0 and no -pg)")
    fa = last("-fa", "0")
    mmap = last("-mmp", "1") != "0" and last("-lm", "mmap") in ("mmap", "auto")
    s = LlamaCppSettings(
        program="llama-bench", n_batch=_ints("-b", last("-b", "2048"))[0],
        n_ubatch=_ints("-ub", last("-ub", "512"))[0], n_gpu_layers=_ints("-ngl", last("-ngl", "99"))[0],
        n_parallel=1, flash_attn={"1": "on", "0": "off"}.get(fa, fa), cache_type_k=last("-ctk", "f16"),
        cache_type_v=last("-ctv", "f16"), mmap=mmap, split_mode=last("-sm", "layer"),
        main_gpu=_ints("-mg", last("-mg", "0"))[0], no_kv_offload=last("-nkvo", "0") == "1",
        embeddings=last("-embd", "0") == "1", n_cpu_moe=_ints("-ncmoe", last("-ncmoe", "0"))[0],
        repack=last("-nr", "0") != "1", fit=False,  # llama-bench does not fit (no common_fit_params)
        n_ctx=max(c for _, c in rows), bench_tests=tuple(rows),
    )
    if "-ts" in vals:
        s = replace(s, tensor_split=tuple(float(x) for x in last("-ts", "").replace("/", ",").split(",") if x))
    return model, quant, s


_BENCH_ALIASES = {"--load-mode": "-lm", "--model": "-m", "--n-prompt": "-p", "--n-gen": "-n", "--n-depth": "-d", "--batch-size": "-b",
                  "--ubatch-size": "-ub", "--cache-type-k": "-ctk", "--cache-type-v": "-ctv", "--n-gpu-layers": "-ngl",
                  "--n-cpu-moe": "-ncmoe", "--split-mode": "-sm", "--main-gpu": "-mg", "--no-kv-offload": "-nkvo",
                  "--flash-attn": "-fa", "--mmap": "-mmp", "--embeddings": "-embd", "--tensor-split": "-ts",
                  "--override-tensors": "-ot", "--no-repack": "-nr", "-hfr": "-hf"}


def _canon(name: str) -> str:
    return _BENCH_ALIASES.get(name, name)


# ---------------------------------------------------------------------------------------------------------
# LM Studio: lms load MODEL [-c/--context-length N] [--parallel N] [--gpu max|off|0-1] (lmstudio-ai/lms
# src/subcommands/load.ts: commander options; -c from 2025-11, --parallel and the --speculative-draft-* options
# from 2026-01; --host / --port (createClient.ts) and --log-level / --quiet / --verbose (logLevel.ts) on every
# subcommand)
_LMS_SWITCHES = ("--estimate-only", "-y", "--yes", "--exact", "--local", "--quiet", "--verbose",
                 "--speculative-draft-mtp", "--no-speculative-draft-mtp", "--speculative-draft-simple")


def _js_number(text: str) -> float:
    """JavaScript's unary + on a string (ECMAScript StringToNumber): blanks trimmed, "" is 0, ASCII decimal
    literals with an exponent, Infinity, 0x / 0o / 0b integers; anything else NaN (no underscores, no other
    scripts' digits)."""
    s = text.strip()
    if not s:
        return 0.0
    if re.fullmatch(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+", s):
        return float(int(s, 0))
    if re.fullmatch(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)", s):
        return float(s.replace("Infinity", "inf"))
    return float("nan")


def _lms_count(name: str, value: str) -> int:
    """lms src/types/refinedNumber.ts createRefinedNumberParser({integer: true, min: 1}): +str, then "Not a number",
    "Not a finite number", "Not an integer", "Number out of range, must be at least 1"."""
    n = _js_number(value)
    why = ("Not a number" if n != n else "Not a finite number" if n in (float("inf"), float("-inf"))
           else "Not an integer" if not n.is_integer() else "Number out of range, must be at least 1" if n < 1 else "")
    if why:
        said = " (lms load takes no 'max': give the context in tokens)" if value.strip().lower() == "max" else ""
        raise SettingsError(f"lms load: option '{name} <n>' argument '{value}' is invalid. {why}{said}")
    return int(n)


def parse_lms(argv: list[str]) -> tuple[str | None, str | None, LlamaCppSettings]:
    args = list(argv)
    if args and args[0] == "load":
        args = args[1:]
    rules, opts = _DEFAULTS["lms"]
    model = gpu = None
    unmodelled: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in LMS_VALUED:
            value, i = flag_value(args, i, inline if eq else None, f"lms load: option '{name}' argument missing")
            if name in ("-c", "--context-length"):
                opts = {**opts, "n_ctx": _lms_count(name, value)}
            elif name == "--parallel":  # maxParallelPredictions: llama.cpp's slots (n_parallel), lms_slots
                opts = {**opts, "n_parallel": _lms_count(name, value)}
            elif name == "--gpu":
                gpu = value
            elif name == "--speculative-draft-model":
                unmodelled.append(f"{name} {value} (the draft model's weights and KV cache)")
        elif name in _LMS_SWITCHES:
            if name == "--speculative-draft-mtp":
                unmodelled.append(f"{name} (the MTP drafter's layers and KV cache)")
        elif a.startswith("-"):
            raise SettingsError(f"lms load: unknown option {a}")
        elif model is None:
            model = a
        else:
            raise SettingsError(f"lms load: unexpected argument {a!r}")
        i += 1
    # an MLX model runs on LM Studio's MLX engine, which has no offload (engines/cmdline.py reads it as mlx); its
    # predictions stay one unless typed (engines/mlx/args.py from_lms), the llama.cpp runtime's default is lms_slots'
    if lms_names_mlx(model) and "n_parallel" not in opts:
        opts = {**opts, "n_parallel": 1}
    if gpu is not None and not lms_names_mlx(model):
        if gpu.strip().lower() not in ("max", "off"):
            raise SettingsError(f"lms load --gpu {gpu}: oomkit reads max and off (a fraction offloads "
                                "that share of the layers: give -ngl N through llama-server instead)")
        opts = {**opts, "n_gpu_layers": -1 if gpu.strip().lower() == "max" else 0}
    return model, None, check_settings(LlamaCppSettings(program=rules, unmodelled=tuple(unmodelled), **opts))


# ---------------------------------------------------------------------------------------------------------
# The Python binding: Llama(...) keyword arguments, both ways

# llama_cpp/llama.py Llama.__init__ defaults (llama-cpp-python 0.3.36)
BINDING_DEFAULTS = {"n_ctx": 512, "n_batch": 512, "n_ubatch": 512, "n_gpu_layers": 0, "flash_attn": False,
                    "use_mmap": True, "offload_kqv": True, "embedding": False, "type_k": None, "type_v": None}


def binding_settings(**kwargs: Any) -> LlamaCppSettings:
    """Llama(...) keyword arguments -> the settings llama.cpp runs with. The binding caps n_batch at n_ctx and
    n_ubatch at n_batch, and n_ctx=0 means the trained context (Llama.__init__)."""
    k = {**BINDING_DEFAULTS, **kwargs}
    unknown = set(kwargs) - set(BINDING_DEFAULTS) - {"model_path", "tensor_split", "main_gpu", "split_mode",
                                                     "swa_full", "use_mlock", "n_threads", "n_threads_batch",
                                                     "verbose", "seed"}
    if unknown:
        raise SettingsError(f"Llama(...): oomkit does not read {', '.join(sorted(unknown))}")
    names = {v: n for n, v in GGML_TYPE_IDS.items()}
    n_ctx = int(k["n_ctx"])
    n_batch = min(n_ctx, int(k["n_batch"])) if n_ctx else int(k["n_batch"])
    s = LlamaCppSettings(
        program="llama-cpp-python", n_ctx=n_ctx, n_batch=n_batch, n_ubatch=min(n_batch, int(k["n_ubatch"])),
        n_parallel=1, n_gpu_layers=int(k["n_gpu_layers"]), flash_attn="on" if k["flash_attn"] else "off",
        cache_type_k=names.get(k["type_k"], "f16") if k["type_k"] is not None else "f16",
        cache_type_v=names.get(k["type_v"], "f16") if k["type_v"] is not None else "f16",
        mmap=bool(k["use_mmap"]), no_kv_offload=not k["offload_kqv"], embeddings=bool(k["embedding"]),
        swa_full=bool(kwargs.get("swa_full") or False), fit=False,
    )
    if kwargs.get("tensor_split"):
        s = replace(s, tensor_split=tuple(float(x) for x in kwargs["tensor_split"]))
    if kwargs.get("main_gpu") is not None:
        s = replace(s, main_gpu=int(kwargs["main_gpu"]))
    return s


# llama-cpp-python's server: `python -m llama_cpp.server --model FILE [--n_gpu_layers N ...]` (llama_cpp/server/
# __main__.py: every field of settings.py's ModelSettings and ServerSettings is a `--name` option, cli.py
# add_args_from_model; bools through _parse_bool_arg, lists nargs="*"), whose model.py builds Llama(**fields).
# Its defaults differ from Llama.__init__'s in n_ctx (2048) and logits_all (True). llama-cpp-python 0.3.36.
SERVER_FIELDS = frozenset({
    "model", "model_alias", "n_gpu_layers", "split_mode", "main_gpu", "tensor_split", "vocab_only", "use_mmap",
    "use_mlock", "kv_overrides", "rpc_servers", "seed", "n_ctx", "n_batch", "n_ubatch", "n_threads",
    "n_threads_batch", "rope_scaling_type", "rope_freq_base", "rope_freq_scale", "yarn_ext_factor",
    "yarn_attn_factor", "yarn_beta_fast", "yarn_beta_slow", "yarn_orig_ctx", "mul_mat_q", "logits_all", "embedding",
    "offload_kqv", "flash_attn", "last_n_tokens_size", "lora_base", "lora_path", "numa", "chat_format",
    "chat_template_kwargs", "clip_model_path", "cache", "cache_type", "cache_size", "hf_tokenizer_config_path",
    "hf_pretrained_model_name_or_path", "hf_model_repo_id", "draft_model", "draft_model_num_pred_tokens", "type_k",
    "type_v", "verbose", "host", "port", "ssl_keyfile", "ssl_certfile", "api_key", "interrupt_requests",
    "disable_ping_events", "root_path", "config_file"})
_SERVER_BOOLS = frozenset({"vocab_only", "use_mmap", "use_mlock", "mul_mat_q", "logits_all", "embedding",
                           "offload_kqv", "flash_attn", "cache", "verbose", "interrupt_requests",
                           "disable_ping_events"})
_SERVER_INTS = ("n_gpu_layers", "main_gpu", "n_ctx", "n_batch", "n_ubatch", "type_k", "type_v")
# what the server's fields change that oomkit does not count (the estimate says so)
_SERVER_UNMODELLED = {
    "lora_path": "LoRA adapter weights", "lora_base": "LoRA adapter weights",
    "clip_model_path": "the multimodal projector", "kv_overrides": "GGUF metadata replaced",
    "rpc_servers": "layers on RPC servers", "cache": "the prompt cache (cache_size bytes, 2 GiB by default)",
    "logits_all": "the binding's scores for n_ctx tokens, not n_batch, in host memory",
}


def _server_bool(name: str, value: str) -> bool:
    """cli.py _parse_bool_arg."""
    low = str(value).lower().strip()
    if low in ("1", "on", "t", "true", "y", "yes"):
        return True
    if low in ("0", "off", "f", "false", "n", "no"):
        return False
    raise SettingsError(f"llama_cpp.server: error: argument --{name}: invalid _parse_bool_arg value: {value!r}")


def parse_binding_server(argv: list[str]) -> tuple[str | None, str | None, LlamaCppSettings]:
    """`python -m llama_cpp.server` flags -> (model, quant, the settings its Llama(...) runs with)."""
    fields: dict[str, Any] = {"n_ctx": 2048, "logits_all": True}
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, inline = a.partition("=")
        field = name[2:] if name.startswith("--") else ""
        if field not in SERVER_FIELDS:
            raise SettingsError(f"llama_cpp.server: error: unrecognized arguments: {a}")
        if field in SERVER_LISTS:
            values = [inline] if eq else []
            while not eq and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                values.append(argv[i + 1])
                i += 1
            fields[field] = values
        else:
            value, i = flag_value(argv, i, inline if eq else None,
                                  f"llama_cpp.server: error: argument --{field}: expected one argument")
            if field in _SERVER_BOOLS:
                fields[field] = _server_bool(field, value)
            elif field in _SERVER_INTS:
                try:
                    fields[field] = int(value)
                except ValueError:
                    raise SettingsError(f"llama_cpp.server: error: argument --{field}: invalid int value: "
                                        f"{value!r}") from None
            else:
                fields[field] = value
        i += 1
    model, quant = fields.get("model"), None
    if fields.get("hf_model_repo_id"):  # model.py: Llama.from_pretrained(repo_id, filename=model)
        quant = names.gguf_file_quant(str(model or "")) if model else None
        model = fields["hf_model_repo_id"]
    if fields.get("tensor_split"):
        try:
            fields["tensor_split"] = [float(x) for x in fields["tensor_split"]]
        except ValueError:
            raise SettingsError(f"llama_cpp.server: error: argument --tensor_split: invalid float value in "
                                f"{fields['tensor_split']!r}") from None
    kw = {k: fields[k] for k in (*_SERVER_INTS, "tensor_split", "flash_attn", "offload_kqv", "use_mmap", "embedding")
          if k in fields}
    unmodelled = tuple(f"--{k} ({what})" for k, what in _SERVER_UNMODELLED.items() if fields.get(k))
    s = binding_settings(**kw)
    return model, quant, replace(s, unmodelled=unmodelled)


def binding_snippet(model: str, s: LlamaCppSettings) -> str:
    """The Llama(...) call that loads `model` with `s`: only the keywords that differ from the binding's own
    defaults (n_gpu_layers=-1 offloads every layer)."""
    want: dict[str, Any] = {
        "n_ctx": s.n_ctx, "n_batch": s.n_batch, "n_ubatch": s.n_ubatch,
        "n_gpu_layers": -1 if s.n_gpu_layers < 0 or s.n_gpu_layers >= 10**6 else s.n_gpu_layers,
        "flash_attn": s.flash_attn == "on", "use_mmap": s.mmap, "offload_kqv": not s.no_kv_offload,
        "embedding": s.embeddings,
        "type_k": None if s.cache_type_k == "f16" else GGML_TYPE_IDS.get(s.cache_type_k.lower()),
        "type_v": None if s.cache_type_v == "f16" else GGML_TYPE_IDS.get(s.cache_type_v.lower()),
    }
    args = [f"model_path={model!r}"]
    args += [f"{k}={v!r}" for k, v in want.items() if v != BINDING_DEFAULTS[k]]
    if s.tensor_split:
        args.append(f"tensor_split={list(s.tensor_split)!r}")
    return "from llama_cpp import Llama\n\nllm = Llama(" + ", ".join(args) + ")\n"


def binding_host_bytes(s: LlamaCppSettings, n_vocab: int) -> int:
    """The binding's own host copy of the logits (Llama.__init__: self.scores, n_batch x n_vocab float32; n_ctx
    rows with logits_all), beside llama.cpp's output buffer."""
    return s.n_batch * n_vocab * 4


def bench_rows(s: LlamaCppSettings) -> list[tuple[str, LlamaCppSettings]]:
    """llama-bench's test rows, each as the settings of its own context."""
    return [(name, replace(s, n_ctx=n_ctx, bench_tests=())) for name, n_ctx in s.bench_tests]


def estimate(spec, devices, s: LlamaCppSettings):
    """layout.estimate for the program: llama-bench estimates each test row and answers with the largest (every
    row under engine_view bench_rows); the Python binding adds its host copy of the logits. A -c left unset takes
    the build's common default (with_build_ctx)."""
    if spec.architecture == "mllama":
        # Llama 3.2 Vision's cross-attention text model (LLM_ARCH_MLLAMA) lived only in Ollama's patched llama.cpp
        # (llama/llama.cpp/src/llama.cpp, v0.4.0-v0.6.x); mainline's src/llama-arch.cpp never had it, to the
        # build measured (0c1e570: no MLLAMA anywhere in src/ or tools/mtmd; the request, ggml-org/llama.cpp#9643)
        raise OomkitError(f"{spec.name}: llama.cpp has no mllama architecture (Llama 3.2 Vision's cross-attention "
                          "layers): mainline never merged it, only Ollama's patched copy ran it; use --engine "
                          "ollama, vllm or transformers")
    s, ctx_note = with_build_ctx(s)
    if ctx_note is None:
        s, ctx_note = server_slots(s)
    if ctx_note is None:
        s, ctx_note = lms_slots(s)
    if ctx_note is not None:
        est = estimate(spec, devices, s)
        return replace(est, warnings=(*est.warnings, ctx_note))
    if s.bench_tests:
        runs = [(name, layout_estimate(spec, devices, rs)) for name, rs in bench_rows(s)]
        name, est = max(runs, key=lambda r: r[1].total_bytes)
        view = dict(est.engine_view)
        view["bench_test"] = name
        view["bench_rows"] = [{"test": n, "n_ctx": e.engine_view["n_ctx"], "total_bytes": e.total_bytes,
                               "kv_cache_bytes": e.kv_cache_bytes, "compute_bytes": e.compute_bytes}
                              for n, e in runs]
        note = (f"llama-bench runs {len(runs)} tests, each in its own context; this is the largest ({name}); "
                "engine_view bench_rows has each") if len(runs) > 1 else f"llama-bench test {name}"
        return replace(est, engine_view=view, warnings=(*est.warnings, note))
    est = with_projector(spec, s, with_runtime_reserve(devices, s, layout_estimate(spec, devices, s)))
    est = with_draft(devices, s, est)
    if s.program == "llama-cpp-python":
        extra = binding_host_bytes(s, spec.n_vocab)
        view = {**est.engine_view, "binding_logits_bytes": extra}
        return replace(est, engine_view=view, host=replace(est.host, overhead_bytes=est.host.overhead_bytes + extra))
    return est


def with_runtime_reserve(devices, s: LlamaCppSettings, est):
    """Each GPU's driver context by its backend (backend_names.BACKENDS runtime_reserve: 512 MiB on Metal, as Ollama
    reserves there; 457 MiB elsewhere); RPC devices keep the default (their host runs the driver)."""
    if not est.devices:
        return est
    b = infer_backend(tuple(devices), s.backend) if devices else None
    if b is None or b.runtime_reserve == est.devices[0].overhead_bytes:
        return est
    devs = tuple(replace(u, overhead_bytes=b.runtime_reserve) if not u.id.startswith("RPC") else u
                 for u in est.devices)
    return replace(est, devices=devs)


# ---------------------------------------------------------------------------------------------------------
# The multimodal projector (--mmproj): tools/mtmd/clip.cpp loads the mmproj GGUF on the first GPU backend
# (--no-mmproj-offload: the CPU), beside the model


def with_projector(spec, s: LlamaCppSettings, est):
    got = projector_memory(spec, s)
    view = dict(est.engine_view)
    if got is None:
        if getattr(spec, "towers", ()) and not s.mmproj:
            view["mmproj"] = "not loaded (no --mmproj)"
            return replace(est, engine_view=view)
        return est
    nbytes, source = got.total, got.source  # weights + the warmup compute buffer clip keeps (projector.py)
    view["mmproj_bytes"] = nbytes
    view["mmproj"] = source
    notes = () if got.compute is not None else (
        "the projector's own compute buffer (clip.cpp alloc_compute_meta, sized by its largest image) is not "
        "counted",)
    if est.devices and s.mmproj_offload:  # --no-mmproj-offload: clip's backend is the CPU
        u = est.devices[0]
        d0 = replace(u, weights_bytes=u.weights_bytes + got.weights, compute_bytes=u.compute_bytes + (got.compute or 0))
        # the warmup graph's inputs stay in the CPU backend's compute buffer (projector.clip_host_input_bytes)
        host = replace(est.host, compute_bytes=est.host.compute_bytes + got.host_compute) if got.host_compute \
            else est.host
        return replace(est, devices=(d0, *est.devices[1:]), host=host, engine_view=view,
                       warnings=(*est.warnings, *notes))
    host = replace(est.host, weights_bytes=est.host.weights_bytes + got.weights,
                   compute_bytes=est.host.compute_bytes + (got.compute or 0))
    return replace(est, host=host, engine_view=view, warnings=(*est.warnings, *notes))


def with_draft(devices, s: LlamaCppSettings, est):
    """-md: llama-server (and llama-cli, on the server context) loads the draft model and its context after the main
    one (tools/server/server-context.cpp load_model), on its -devd devices with its own -ngld / -ctkd / -ctvd, at the
    context fit.draft_context gives; its weights, cache and compute buffers join each device (the driver context is
    the main one's)."""
    if not (s.model_draft or s.hf_repo_draft) or s.program not in ("llama-server", "llama-cli"):
        return est
    got = read_draft(s)
    view = dict(est.engine_view)
    if got is None:
        note = (f"-md {s.model_draft}: not a GGUF file oomkit can read" if s.model_draft else
                f"-hfd {s.hf_repo_draft}: not a model oomkit can resolve") + "; the draft model is not counted"
        return replace(est, warnings=(*est.warnings, note))
    dspec, ds = got
    mv = est.engine_view
    # before PR #22838 each slot had its own draft context of one sequence (params_dft.n_parallel = 1;
    # fit.draft_contexts): the weights once, the cache and compute buffers per slot
    n_dft = draft_contexts(s, mv.get("n_seq_max", 1))
    if not ERAS.reached(build_number(s.engine_version), "no_ctx_size_draft"):
        ds = replace(ds, n_parallel=1)
    d = layout_estimate(dspec, devices, replace(ds, n_ctx=draft_context(s, mv["n_ctx"], mv.get("n_ctx_seq"))))

    def add(u, e):
        return replace(u, weights_bytes=u.weights_bytes + e.weights_bytes, kv_cache_bytes=u.kv_cache_bytes +
                       n_dft * e.kv_cache_bytes, recurrent_state_bytes=u.recurrent_state_bytes +
                       n_dft * e.recurrent_state_bytes, compute_bytes=u.compute_bytes + n_dft * e.compute_bytes)

    view["draft_model"] = s.model_draft or s.hf_repo_draft
    view["draft_n_ctx"] = d.engine_view["n_ctx"]
    view["draft_contexts"] = n_dft
    view["draft_bytes"] = {u.id: u.total_bytes - u.overhead_bytes + (n_dft - 1) * (
        u.kv_cache_bytes + u.recurrent_state_bytes + u.compute_bytes) for u in (*d.devices, d.host)}
    view["draft_devices"] = [u.id for u in d.devices]
    # the draft's devices are its -devd (fit.read_draft): its buffers join the main model's devices by name, and a
    # device only the draft uses is one more, with its own driver context
    by_id = {e.id: e for e in d.devices}
    main = tuple(add(u, by_id.pop(u.id)) if u.id in by_id else u for u in est.devices)
    return replace(est, devices=(*main, *by_id.values()), host=add(est.host, d.host), engine_view=view)


__all__ = ["BINDING_DEFAULTS", "PROGRAMS", "bench_rows", "binding_host_bytes", "binding_settings",
           "binding_snippet", "estimate", "parse", "projector_bytes", "with_projector", "parse_bench", "parse_lms"]
