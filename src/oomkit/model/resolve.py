"""A model reference -> ModelSpec: "qwen2.5:32b" | "Qwen/Qwen2.5-32B-Instruct" | a .gguf | config.json | a directory.

A ":QUANT" suffix picks the weight format ("Qwen/Qwen3-32B:Q4_K_M"); Ollama tags carry their own size after the
colon ("llama3.1:8b"), so the suffix is only a format when it names one.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
from dataclasses import replace
from pathlib import Path

from ..errors import ModelError, OomkitError
from ..quant import dtypes, gguf_recipes, published_sizes
from . import catalog, hub_cache, names
from ._bytes import check_path, open_regular, printable
from .checks import spec_from_config_checked
from .hf_config import hf_quant_config_fields, load_config
from .jsonfile import MAX_CONFIG_BYTES, loads_object
from .spec import ModelSpec
from .weights import is_gguf_format, sized_to_published


def _is_format(s: str) -> bool:
    if s.lower() in _HF_FORMATS or gguf_recipes.named_mix(s) is not None:
        return True
    try:
        gguf_recipes.ftype_by_name(s)
        return True
    except OomkitError:
        return False


# What a quant tag looks like (llama.cpp types, unsloth's UD-*, HF formats): a tag of this shape that is not a known
# one is a typo in the quant, not part of a model name.
_QUANT_SHAPE = re.compile(r"^(?:ud[-_])?(?:i?q\d+(?:_[a-z0-9]+)*|tq\d+_\d+|b?f\d+|fp\d+|mxfp\d+(?:_moe)?|nvfp\d+)$",
                          re.IGNORECASE)


# an Ollama tag that starts with the model's size ("7b-instruct-q8_0", "30b-a3b", "1.5b")
_OLLAMA_SIZE_TAG = re.compile(r"\d+(?:\.\d+)?[bmk](?:$|[-_])", re.IGNORECASE)
# a git branch's name as quantizers name theirs (TheBloke's "gptq-4bit-32g-actorder_True", "gptq-8bit-128g-actorder_False")
_BRANCH = re.compile(r"[A-Za-z][A-Za-z0-9_.]*(?:-[A-Za-z0-9_.]+)+")


def known_quant_tags() -> tuple[str, ...]:
    """The quant tags a name may end with: llama.cpp file types, named GGUF mixes, HF formats."""
    return (*gguf_recipes.known_quant_names(), *sorted(_HF_FORMATS))


def _unknown_quant(tag: str) -> ModelError:
    if ik := gguf_recipes.ik_quant_refusal(tag):  # "IQ4_KSS": a real type, but only ik_llama.cpp's quantizer makes it
        return ModelError(ik)
    return ModelError(f"unknown quant tag {tag!r}; known: {', '.join(known_quant_tags())}")


def split_quant(ref: str) -> tuple[str, str | None]:
    """"name:Q4_K_M" -> ("name", "Q4_K_M"); "llama3.1:8b-q8_0" -> ("llama3.1:8b", "q8_0"); else (ref, None).

    A tag shaped like a quant that names none ("Q4_K_XXL") is an error that lists the known ones."""
    if ":" in ref:
        base, tail = ref.rsplit(":", 1)
        if "/" in tail or "\\" in tail:
            return ref, None  # a path after the colon (C:\models\x-Q8_0_MTP.gguf): a drive letter, not a tag
        if tail.lower().endswith(".gguf"):
            tail = tail[: -len(".gguf")]  # "Qwen/Qwen3-8B:Q4_K_M.gguf": the file's type, as "-hf repo:Q4_K_M" names it
        if tail.lower().startswith("i1-") and "/" in base:
            tail = tail[3:]  # mradermacher's imatrix files ("Qwen3-8B.i1-Q4_K_M.gguf"), as Ollama's hf.co tags name them
        if _is_format(tail):
            return base, tail
        # Ollama: "8b-instruct-q4_K_M", "8b-q8_0": the quant is the last dash-separated part(s)
        parts = tail.split("-")
        for i in range(1, len(parts)):
            cand = "-".join(parts[i:])
            if _is_format(cand):
                return f"{base}:{'-'.join(parts[:i])}", cand
        for i in range(len(parts)):
            cand = "-".join(parts[i:])
            if _QUANT_SHAPE.match(cand):
                raise _unknown_quant(cand)
    return ref, None


# Unquantized formats as GGUF file types (Ollama tags "-fp16", "-bf16"; llama.cpp's F16 / BF16 / F32 files).
# llama.h's names (LLAMA_FTYPE_MOSTLY_F16, ...), which model/weights.py reads as GGUF file types, not as HF dtypes.
_GGUF_SPELLING = {"float16": "MOSTLY_F16", "bfloat16": "MOSTLY_BF16", "float32": "ALL_F32"}


def _as_gguf_type(fmt: str | None) -> str | None:
    """A format name as an engine that loads GGUF files (llama.cpp, Ollama) reads it: a plain dtype in any spelling
    ("bf16", "float16", "half", "F32") is the unquantized GGUF of that type (convert_hf_to_gguf.py --outtype);
    MXFP4 is llama-quantize's MXFP4_MOE (gpt-oss's GGUF release); "auto" names none (the engine's default
    applies); a GGUF file type or named mix stays as it is. A Hugging Face quantization format (AWQ, GPTQ, FP8,
    bitsandbytes, NVFP4 ...) is no GGUF file and is refused in one line."""
    if fmt is None:
        return None
    low = fmt.strip().lower()
    if low == "auto":
        return None
    if low.startswith("i1-"):  # mradermacher's imatrix files ("X.i1-Q4_K_M.gguf", `-hf REPO:i1-Q4_K_M`): the same
        fmt, low = fmt.strip()[3:], low[3:]  # file types, quantized with an importance matrix
    plain = _GGUF_SPELLING.get(dtypes.canonical(low))
    if plain is not None:
        return plain
    if low == "mxfp4":
        return "MXFP4_MOE"
    if is_gguf_format(fmt):
        return fmt
    if low not in _HF_FORMATS and dtypes.canonical(low) not in dtypes.FP8_BYTES:
        raise _unknown_quant(fmt)
    raise ModelError(f"{fmt}: a Hugging Face checkpoint format, and this engine loads GGUF files; name a GGUF file "
                     "type (Q4_K_M, Q8_0, F16, ...) or run an engine that loads that checkpoint (vLLM, SGLang, "
                     "transformers)")

_HF_FORMATS = {"bf16", "fp16", "fp32", "fp8", "int8", "int4", "awq", "gptq", "nf4", "mxfp4", "nvfp4", "w8a8",
               "w4a16"}


def resolve(ref: str, weight_format: str | None = None, default_format=None, tag_formats: bool = True) -> ModelSpec:
    """The ModelSpec for `ref`; `weight_format` (or a :QUANT suffix) sets the weight storage.

    default_format: for a model named without a format, a function of its config.json giving the format the
    engine would load (llama.cpp: a GGUF file type); the guess is labelled in the result.
    tag_formats: whether the GGUF an Ollama tag or GGUF repo name stands for is the format to take (engines that
    load GGUF files); otherwise the checkpoint as published is taken, and a label says so.

    A name not in the catalog is read, in turn, as an Ollama tag with qualifiers ("qwen3:30b-a3b-thinking-2507"),
    a hub repo (config.json / GGUF headers), and, when the hub cannot answer, as a derivative of a catalog model
    whose name says its quantization ("Qwen/Qwen3-8B-AWQ"; model/names.py), labelled as inferred."""
    if not ref or not str(ref).strip():
        raise ModelError("no model given")
    ref = str(ref).strip()
    if ref in _STDIN:
        stdin = _stdin_kind()
        if stdin is not None:
            return _from_stdin(stdin, weight_format, default_format)
    path = Path(os.path.expanduser(ref))  # "~nosuchuser/x" stays as typed, as a shell leaves it
    if tag_formats:  # an engine that loads GGUF files: --quant bf16 names the BF16 GGUF, --quant awq none
        weight_format = _as_gguf_type(weight_format)
    if _exists(path):
        if ref.endswith(("/", os.sep)) and not path.is_dir():
            # pathlib drops the slash; open() and llama.cpp's fopen fail on "m.gguf/" (ENOTDIR)
            raise ModelError(f"{ref}: Not a directory (a file named with a trailing slash): drop the slash")
        return _from_path(path, weight_format, default_format)
    control = next((c for c in ref if c < " " or "\x7f" <= c <= "\x9f"), None)
    if control is not None:
        # a NUL, escape or other C0/C1 control (pasted from a terminal or a JSON string): no repo, tag or file name
        # holds one, and the catalog's key would drop it and read a model the user never named
        raise ModelError(f"unknown model {ref[:80]!r}: a model name cannot hold the control character {control!r}")
    bidi = next((c for c in ref if "\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069"), None)
    if bidi is not None:
        # a bidirectional embedding, override or isolate shows the name in another order than it reads
        # ("\u202eQwen/Qwen3-8B" shows reversed): the catalog's key drops it and would read a model the
        # user never saw (a file of that name on this machine is read above)
        raise ModelError(f"model {ref[:80]!r}: a model name cannot hold the bidirectional control {bidi!r}, which "
                         "shows the name in another order than it reads")
    page = _HUB_PAGE.match(ref.strip("\"'`<> "))
    placeholder = _PLACEHOLDER.fullmatch(ref)
    ref = names.canonical_ref(ref)  # a hub URL is its repo name, not a folder
    first = re.split(r"[/:]", ref, maxsplit=1)[0]
    if page is not None and (re.fullmatch(r"[^/:\s]+(?::[^/\s]*)?", ref) or first.lower() in _HUB_NOT_REPOS):
        # https://huggingface.co/Qwen (a publisher's page: "Qwen" alone is Ollama's tag for Qwen1.5 4B Chat) or
        # .../collections/Qwen/qwen3 (a list of repos): no model repo is named
        what = (f"a Hugging Face {first.lower()} page" if first.lower() in _HUB_NOT_REPOS
                else f"the page of the publisher {first}")
        raise ModelError(f"{page.group(0)}{ref} is {what}, not a model repo: give one of its repos, e.g. "
                         "https://huggingface.co/Qwen/Qwen3-8B, or its id Qwen/Qwen3-8B")
    lms = _LMS_VARIANT.fullmatch(ref)
    if lms is not None and is_gguf_format(lms.group(2)):
        # LM Studio's key of one variant of a model, "<publisher>/<model>@<quant>" (its /api/v1/models lists
        # "mistralai/mistral-small-3.2@q4_k_m" beside the base key, lmstudio-ai/lmstudio-bug-tracker#1462; an
        # instance loaded by `lms load` is named "qwen3-coder-next@q6_k", #1523): the model's GGUF of that file type
        spec = resolve(f"{lms.group(1)}:{lms.group(2)}", weight_format, default_format, tag_formats)
        return replace(spec, labels=spec.labels + (
            f"{ref}: LM Studio's key for the {lms.group(2).upper()} GGUF of {lms.group(1)}",))
    if lms is not None and (bits := _LMS_MLX_BITS.fullmatch(lms.group(2))) is not None:
        # its MLX variant, "<publisher>/<model>@4bit" (engines/lms_keys.py): the model's MLX quant at those bits,
        # as LM Studio's own MLX uploads name it (lmstudio-community/<model>-MLX-<N>bit)
        q = f"{bits.group(1)}bit"
        if tag_formats:  # an engine that loads GGUF files
            raise ModelError(f"{ref} names the MLX {q} download of {lms.group(1)}, which LM Studio runs on its MLX "
                             "engine (--engine mlx); a GGUF engine loads a GGUF: name its file type "
                             f"({lms.group(1)}@q4_k_m)")
        spec = resolve(f"lmstudio-community/{lms.group(1).rsplit('/', 1)[-1]}-MLX-{q}", weight_format,
                       default_format, tag_formats)
        return replace(spec, labels=spec.labels + (
            f"{ref}: LM Studio's key for the MLX {q} variant of {lms.group(1)}",))
    elsewhere = _catalog_folder(ref)
    if elsewhere is not None:
        spec = resolve(elsewhere, weight_format, default_format, tag_formats)
        return replace(spec, labels=spec.labels + (
            f"{ref} is not on this machine: read as the catalog's {elsewhere} by its folder name (its own "
            "config.json was not read)",))
    if re.fullmatch(r"[^/\\:\s]+/+", ref):  # after the folder-name reading of a local model folder "X/"
        # "mlx-community/" (a repo id cut after its owner) is no model: no catalog or hub lookup guesses one for it
        raise ModelError(f"unknown model {ref!r}: not a folder on this machine, and as a repo id it names only its "
                         f"owner ({ref.rstrip('/')}/<model>)")
    folder = re.split(r"[\\/]", ref.rstrip("\\/"))[-1]
    if _PATH_LIKE.search(ref) and not _HUB_CACHE_DIR.search(ref) and _is_owner(folder):
        # "/models/Qwen", "/Qwen": a folder named after a publisher (where its repos are kept), not on this machine;
        # no model name is in it (Ollama's tag "qwen", Qwen1.5 4B Chat, is not what it holds)
        sep = "\\" if "\\" in ref else "/"
        raise ModelError(f"no such folder: {ref} (a folder named after the publisher {folder}, not after a model: "
                         f"give the model's folder, {ref.rstrip(sep)}{sep}<model>)")
    cached = _cached_gguf(ref)
    if cached is not None:
        repo, quant = split_quant(cached)
        if weight_format and _ftype_key(weight_format) != _ftype_key(quant):
            raise ModelError(f"{ref} is a {quant} GGUF: its weights cannot be read as {weight_format}")
        spec = resolve(cached, None, default_format, tag_formats)
        return replace(spec, labels=spec.labels + (
            f"{ref} is not on this machine: read as {cached}, the repo and file type its download path names (its header "
            "was not read)",))
    if (mlx_tag := names.ollama_mlx_tag(ref)) is not None:  # before split_quant reads "-nvfp4" as a quant
        if (built := names.ollama_mlx_build(ref)) is None:
            raise ModelError(mlx_tag)
        # x/create quantizes the model's BF16 safetensors; the weights format tells the Ollama engine to size them
        # as its MLX runner loads them (engines/ollama/mlx_runner.py), and any other engine that it cannot load them
        gguf, quant = built
        spec = resolve(gguf, "BF16", default_format, tag_formats)
        return replace(spec, weights=replace(spec.weights, format=f"{names.OLLAMA_MLX_FORMAT}{quant}"),
                       labels=spec.labels + (f"{ref}: an Ollama MLX build of {gguf}, the BF16 checkpoint quantized "
                                             f"to {quant} by `ollama create` (x/create), run by Ollama's MLX runner",))
    name, suffix = split_quant(ref)
    if not name.strip():
        raise ModelError(f"no model given before ':{suffix or ref.rsplit(':', 1)[-1]}': name one, e.g. "
                         "Qwen/Qwen3-8B:Q4_K_M")
    if tag_formats:  # an engine that loads GGUF: ":fp16" is the F16 GGUF, as --quant fp16 is
        suffix = _as_gguf_type(suffix)
    fmt = weight_format or suffix

    entry = catalog.lookup(name) or (catalog.lookup(ref) if suffix else None)
    if (entry is not None and fmt is None and name.lower().endswith(".gguf") and _PATH_LIKE.search(name)
            and names.gguf_file_model(name) is None):
        # a GGUF file that is not on this machine and whose name says no file type (`llama-cli -m
        # ./qwen2.5-1.5b-instruct.gguf`, llama.cpp#18446: the user's own convert_hf_to_gguf.py output): its type is
        # in its header only, so it is not taken as the Q4_K_M a bare model name would be
        raise ModelError(f"no such file: {ref} (its name says {entry.hf_id} but not the file's type: give "
                         f"{entry.hf_id}:QUANT to estimate it without the file)")
    labels: tuple[str, ...] = ()
    if entry is None:
        tag = names.ollama_tag(name)
        if tag is not None:
            alias, dropped, tag_fmt = tag
            entry = catalog.lookup(alias)
            labels = (f"{name}: '{'-'.join(dropped)}' read as the same-shaped {alias}",)
            if tag_fmt and fmt is None:
                entry = replace(entry, default_format=tag_fmt)
    if entry is None and suffix is None and ":" in name:
        base, tail = name.rsplit(":", 1)
        known = "/" in base and (catalog.lookup(base) is not None or names.derive(base) is not None)
        if known and _BRANCH.fullmatch(tail) and not any(_QUANT_SHAPE.match(p) for p in tail.split("-")):
            # a branch of the repo typed after it (`--model-path TheBloke/Mistral-7B-v0.1-GPTQ:gptq-4bit-32g-
            # actorder_True`, sgl-project/sglang#302): no engine takes it so (a repo id holds no ':'; transformers,
            # vLLM and SGLang name a branch with revision=, llama.cpp's -hf and Ollama's hf.co/ tag a GGUF file type)
            raise ModelError(f"{name}: ':{tail}' names no GGUF file type, and a repo id holds no ':' (a branch of the "
                             f"repo is named apart, with --revision, which oomkit does not read): give {base}")
        if "/" in base and catalog.lookup(base) is not None:  # "unsloth/Qwen3-8B-GGUF:Q4KM": a repo id has no ':'
            raise _unknown_quant(tail)
    if entry is None and names.ollama_cloud(name) is not None:
        local = names.ollama_cloud(name)
        known = catalog.lookup(local) is not None or names.ollama_tag(local) is not None
        raise ModelError(f"{name} is an Ollama cloud model: it runs on ollama.com and takes no memory here; "
                         + (f"to estimate the same model's weights on this machine, name it without the cloud tag "
                            f"({local})" if known else "name its weights (a GGUF, a repo) to estimate it on this machine"))
    if entry is None and names.ollama_namespaced(ref) is not None:
        local, dropped = names.ollama_namespaced(ref)
        unsized = names.ollama_unsized(local) if catalog.lookup(local) is None else None
        if unsized is not None:  # "huihui_ai/llama3.2-vision-abliterated:11b": the library's refusal, not the hub's
            raise ModelError(f"{ref}: a model of an Ollama user's namespace, read as the library's {unsized}")
        try:
            spec = resolve(local, weight_format, default_format, tag_formats)
        except OomkitError:
            spec = None  # no library tag of that name: said as for any unknown name
        if spec is not None:
            said = f", '{'-'.join(dropped)}' read as the same shapes" if dropped else ""
            return replace(spec, labels=spec.labels + (
                f"{ref}: a model of an Ollama user's namespace, read as the library's {local}{said} (its own GGUF "
                "was not read)",))
        if _OLLAMA_SIZE_TAG.match(ref.rpartition(":")[2]):
            # "maryasov/qwen2.5-coder-cline:7b-instruct-q8_0" (enescingoz/colab-llm#1): a size-first tag is Ollama's
            # (a hub repo id holds no ':', and llama.cpp's -hf tag names a file type), so the hub is no place to look
            hint = catalog.suggest(local.split(":", 1)[0])
            more = f" (did you mean {', '.join(hint)}?)" if hint else ""
            raise ModelError(f"unknown model {ref.rsplit(':', 1)[0]!r}: {ref} is a model of an Ollama user's "
                             "namespace, and the library has no "
                             f"{local.split(':', 1)[0]}: its GGUF is on ollama.com only; give the library tag or the "
                             f"repo of the model it is built on{more}")
    if entry is None and names.ollama_unsized(name) is not None:  # "llama3.2-vision": no sibling of another shape
        raise ModelError(names.ollama_unsized(name))
    if entry is None and names.hf_unsized(name) is not None:  # Phi-4-mini-flash-reasoning: refused before the hub
        raise ModelError(names.hf_unsized(name))
    if entry is None and names.ollama_no_default(name) is not None:  # "granite4.1": the library has no :latest
        raise ModelError(names.ollama_no_default(name))
    if entry is None and placeholder is not None:
        raise ModelError(f"{placeholder.group(0).strip()!r} is a placeholder, as a guide writes one (<...>, {{{{...}}}}), "
                         "not a model: put the model's name or path in its place")
    if entry is None:
        return _not_in_catalog(ref, name, fmt, weight_format, default_format, tag_formats)
    latest = catalog.OLLAMA_LATEST.get(catalog.normalize(name))
    if latest is not None:  # "deepseek-r1": the catalog's model of that name, not what `ollama run` pulls
        labels += (f"{name} is read as {entry.hf_id}; Ollama's {name} (its :latest tag) is {latest}, "
                   f"{catalog.base_hf_id(latest)}: name the tag to mean that one",)
    tag_format = entry.default_format  # the GGUF an Ollama tag / GGUF repo name stands for
    if tag_format is None and tag_formats:
        tag_format = catalog.library_format(name)
    as_published = False
    if fmt is None and tag_format is not None:
        if tag_formats:
            fmt = _as_gguf_type(tag_format)  # Ollama's "F16" embedding tags: the F16 GGUF, not float16 tensors
        else:
            as_published = True
            labels += (f"{name} names a {tag_format} GGUF, which this engine does not load by default: taking the "
                       f"checkpoint as published ({entry.hf_id}); name a format with :QUANT or --quant",)
    if fmt is None and default_format is not None and not as_published:
        fmt = default_format(entry.config)
        if fmt is not None:
            labels += (f"no quant given: assuming {fmt} weights (name one with :QUANT or --quant)",)
    if fmt is None and catalog.name_kind(name) == "GGUF repo":  # vLLM, SGLang, ... given a GGUF repo, no file named
        labels += (f"{name} is a repo of GGUF files and names none of them: taking the checkpoint as published "
                   f"({entry.hf_id}); name the file's type with :QUANT (e.g. {name}:Q4_K_M)",)
    spec = spec_from_config_checked(entry.config, name=entry.name, source=f"catalog: {entry.hf_id} ({entry.source})",
                            weight_format=fmt, publisher=gguf_publisher(name))
    if entry.hf_quant_config is not None and not (fmt and is_gguf_format(fmt)):  # the checkpoint's own files
        spec = replace(spec, **hf_quant_config_fields(entry.hf_quant_config))
    spec = with_gguf_origin(published_size(spec, name, entry.hf_id, fmt), name)
    return replace(spec, labels=spec.labels + labels) if labels else spec


def published_size(spec: ModelSpec, name: str, base: str | None, fmt: str | None) -> ModelSpec:
    """A computed GGUF of a mix whose tensor types its publisher chooses, sized to the publisher's listed size of that
    very file where quant/published_sizes.py holds one (the GGUF repo `name` names, or for an unsloth "UD-*" name the
    repo of `base`): the stand-in's repeating layers scaled to the listed total (weights.sized_to_published), its
    "not modelled" note replaced by one naming the listing and its precision. A mix with a recipe read from the
    publisher's real files (gguf_recipes.PUBLISHED_RECIPES) keeps it; any other spec is returned as it is."""
    if not fmt or spec.weights.exact or not is_gguf_format(fmt):
        return spec
    tensors = [(t.name, t.shape) for t in spec.weights.tensors]
    if gguf_recipes.published_recipe(fmt, spec.architecture, tensors, spec.weights.publisher) is not None:
        return spec
    key = names.canonical_ref(name).strip()
    size = published_sizes.lookup(fmt, repo=key if _GGUF_REPO.match(key) else None, base=base)
    if size is None:
        return spec
    before = spec.weights.nbytes
    sized = sized_to_published(spec.weights, size, spec.n_trunk_layers)
    if sized is None:
        return spec
    mix = gguf_recipes.named_mix(fmt)
    how = f"llama-quantize {mix.ftype}" if mix else f"llama-quantize {gguf_recipes.ftype_by_name(fmt).name}"
    opts = [f"{w} {t}" for w, t in (("output", mix.output_type), ("token_embd", mix.token_embedding_type)) if t] \
        if mix else []
    if opts:
        how += " with " + ", ".join(opts)
    pct = 100 * size.error_bytes / size.nbytes
    note = (f"{size.quant} of {size.repo}: weights total from the publisher's listed size {size.shown} ({size.url}), "
            f"±{pct:.1f}% by the listing's rounding, less an estimated GGUF header; the per-layer split is the "
            f"stand-in's ({how}), its repeating layers scaled to that total ({sized.nbytes / before - 1:+.1%} on the "
            "stand-in's)")
    stale = mix.note if mix is not None and mix.approximate else None
    labels = tuple(x for x in spec.labels if x != stale) + (note,)
    return replace(spec, weights=sized, labels=labels)


# What a GGUF repo's name ends with (catalog._GGUF_SUFFIXES: "unsloth/Qwen3-8B-GGUF", "bartowski/X_GGUF")
_GGUF_REPO = re.compile(r"^[^/:\\]+/[^/:\\]+[-_.]gguf$", re.IGNORECASE)


def gguf_publisher(name: str) -> str | None:
    """The publisher of the GGUF files a name stands for, whose recipes a plain file type takes
    (quant/gguf_recipes.PUBLISHED_RECIPES: unsloth's plain Q4_K_M of Qwen3.6-27B is no llama-quantize Q4_K_M): the
    owner of a GGUF repo ("unsloth/Qwen3.6-27B-GGUF", as llama.cpp's -hf / --hf-repo and Ollama's hf.co/ names
    take it; `name` without its :QUANT tag), lower-cased, when gguf_recipes knows it; None for a model repo
    ("Qwen/Qwen3.6-27B"), a catalog name or Ollama tag, and a publisher oomkit has no recipe of."""
    return gguf_recipes.known_publisher(gguf_repo_owner(name))


def gguf_repo_owner(name: str) -> str | None:
    """The owner of the GGUF repo a name stands for, lower-cased, whoever it is ("hf.co/Qwen/Qwen3-32B-GGUF:Q4_K_M"
    -> "qwen", "ggml-org/gemma-3-4b-it-GGUF", lmstudio-community, mradermacher); None for a model repo, a catalog
    name or an Ollama tag. Recipes and imatrix rules go by gguf_publisher (gguf_recipes.known_publisher) only."""
    key = names.canonical_ref(name).strip()
    key = key.rpartition(":")[0] if ":" in key and "/" in key.rpartition(":")[0] else key  # its :QUANT tag
    if not _GGUF_REPO.match(key):
        return None
    return key.split("/", 1)[0].strip().lower() or None


def with_gguf_origin(spec: ModelSpec, name: str) -> ModelSpec:
    """A computed GGUF of a Hugging Face GGUF repo, its origin kept in weights.publisher whoever the owner is: a
    repo's file is llama.cpp's convert_hf_to_gguf.py + llama-quantize output, which Ollama runs as it is
    (`ollama pull hf.co/<owner>/<repo>:<quant>`, server/images.go pulls the repo's blob), so none of the quirks of
    Ollama's library quantizer applies to it (engines/ollama/weights.py publishers_gguf). The tensor types stay
    those gguf_inventory chose: an owner gguf_recipes does not know takes llama-quantize's plain rules."""
    owner = gguf_repo_owner(name)
    if owner is None or spec.weights.publisher or spec.weights.exact or not is_gguf_format(spec.weights.format):
        return spec
    return replace(spec, weights=replace(spec.weights, publisher=owner))


# A shell variable left unexpanded where the model goes: `$NAME`, `${NAME}`
_LMS_VARIANT = re.compile(r"([^\s@:\\]+)@([A-Za-z0-9_]+)")  # LM Studio's variant key: KEY@QUANT
_LMS_MLX_BITS = re.compile(r"(\d)bits?", re.IGNORECASE)  # its MLX variants' QUANT: @4bit
_COMMAND_SUBSTITUTION = re.compile(r"\$\((.+)\)", re.DOTALL)
_SHELL_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")

# ExLlamaV2 / V3 quants ("turboderp/gemma-3-27b-it-exl3", "...-exl3-4.0bpw", "-exl2_6.5bpw"): their own formats, which
# exllamav2 / exllamav3 (TabbyAPI) load and none of the engines oomkit models does
_EXLLAMA = re.compile(r"[-_](exl[23])(?:[-_][\w.]*)?$", re.IGNORECASE)


# a guide's placeholder left in a pasted command (`--model <model-path> <additional flags>`, the vllm.md of
# voipmonitor/rtx6kpro; a cookbook's `{{MODEL_NAME}}`): words with no "/" or ":" in angle brackets or double braces
# (a Markdown autolink around a repo id, "<Qwen/Qwen3-8B>", keeps its "/"), or a word of one that a shell split at a
# space ("<additional", "flags>"): no model, tag or file name starts with "<" or ends with ">"
_PLACEHOLDER = re.compile(r"\s*(?:<[^<>/:]*>?|<?[^<>/:]*>|\{\{[^{}]+\}\})\s*")


def _not_in_catalog(ref: str, name: str, fmt: str | None, weight_format: str | None, default_format,
                    tag_formats: bool = False) -> ModelSpec:
    if (sub := _COMMAND_SUBSTITUTION.fullmatch(ref.strip())) is not None:
        # `vllm serve "$(cat model.txt)"`: the shell runs the command and puts its output there; the paste holds
        # only the command, not what it printed on that machine
        raise ModelError(f"{ref.strip()} is a shell command substitution: the shell puts there what `"
                         f"{sub.group(1).strip()}` prints on that machine, which the paste does not "
                         "hold: give the model it names in its place")
    if (var := _SHELL_VARIABLE.fullmatch(name.strip())) is not None:
        # `vllm serve ${MODEL_NAME}` in a script that never sets it (vllm-project/vllm#23819): the shell puts the
        # variable's value there (an unset one is empty, and the engine then names no model); the paste holds no
        # value, so there is no model to read
        raise ModelError(f"{name.strip()} is the shell variable {var.group(1) or var.group(2)}, which what was given "
                         "does not set: give its value, the model, in its place")
    if "/" in name and (m := _EXLLAMA.search(names.canonical_ref(name).rpartition("/")[2])):
        raise ModelError(f"{name}: an {m.group(1).upper()} quant, ExLlama{'V3' if m.group(1)[-1] == '3' else 'V2'}'s "
                         "own format (served by TabbyAPI): llama.cpp, Ollama, vLLM, SGLang, MLX and transformers load "
                         "none of it, so oomkit sizes no engine for it")
    derived = names.derive(name)
    if derived is not None and tag_formats and derived.weight_format is not None:
        # mlx-community/Qwen3-8B-bf16 on llama.cpp: the BF16 GGUF of the same weights
        derived = replace(derived, weight_format=_as_gguf_type(derived.weight_format))
    if derived is not None and not hub_cache.hub_may_answer(name):
        # offline with nothing cached: the name is all there is (and the hub client's import is spared)
        return _from_derivation(derived, fmt, default_format, "HF_HUB_OFFLINE=1 and nothing of it in oomkit's "
                                "hub cache")
    from . import hub  # lazy: the hub client (threads, HTTP) only for a name not in the catalog

    hint = catalog.suggest(name)
    more = f"; did you mean {', '.join(hint)}?" if hint else ""
    if derived is not None and hub.is_hf_id(ref):
        # a name that says no format ("unsloth/Qwen3-8B", "x/Qwen3-8B-abliterated") is read as its base only when
        # the hub cannot answer: a hub that says there is no such repo is believed (a typo is not that model)
        same_name = derived.convention == names.SAME_NAME
        try:
            return hub.spec_from_hub(ref, weight_format, default_format, hint=more if same_name else "")
        except OomkitError as e:  # offline, unreachable, gated, or not there: what the name says
            if same_name and str(e).startswith("no such repo"):
                raise
            why = str(e).removesuffix(more) if same_name and more else str(e)  # the model is found: no "did you mean"
            return _from_derivation(derived, fmt, default_format, why)
    if hub.is_hf_id(ref):
        return hub.spec_from_hub(ref, weight_format, default_format, hint=more)
    if ref.lower().endswith((".gguf", ".json")) or "/" in ref and Path(ref).suffix:
        named = (names.hub_cache_gguf(ref) or names.gguf_file_model(ref)) if ref.lower().endswith(".gguf") else None
        said = f" (its name says {named}: give that to estimate it without the file)" if named else ""
        if names.is_projector_file(ref):
            # the --mmproj file of a llama-server command (unsloth/unsloth#6682's hub-cache path to
            # unsloth/gemma-4-E2B-it-GGUF's mmproj-F16.gguf), pasted where the model goes: its repo names the model,
            # but the file is the projector
            said = (" (a multimodal projector, which llama-server loads with --mmproj beside the model: give the "
                    "model's GGUF, or its repo and file type)")
        if named and (ik := gguf_recipes.ik_quant_refusal(named.rsplit(":", 1)[1])):
            # ik_llama.cpp's own file types (IQ4_K, ik_llama.cpp#675's GLM-4.5-Air-IQ4_K-00001-of-00002.gguf): the
            # name is refused as the file would be, not offered as the way to estimate it
            said = f" (its name says {named}); {ik}"
        raise ModelError(f"no such file: {ref}{said}")
    if _OLLAMA_BLOB.search(ref):
        raise ModelError(f"{ref}: an Ollama model blob that is not on this machine, and its name (a digest) says "
                         "nothing of the model: name its tag (`ollama list` shows it) or give the file itself")
    # a folder of the server's working directory named without "./" (`vllm serve "Qwen2.5-VL-72B-Instruct-AWQ"`,
    # QwenLM/Qwen3-VL#1353; Jan's "Qwen3.5-9B-MLX-4bit", janhq/jan#7722): transformers' from_pretrained and
    # mlx_lm.utils.load take a name that is an existing directory as that directory before any hub lookup, and a hub
    # repo id has an owner; read by its name as "./NAME" is
    if not re.search(r"[\\/:]", ref) and (folder := _catalog_folder(f"./{ref}")) is not None:
        spec = resolve(folder, weight_format, default_format, tag_formats)
        return replace(spec, labels=spec.labels + (
            f"{ref} has no owner, so it is a folder, and it is not on this machine: read as {folder}, the repo its "
            "name says (its own config.json was not read)",))
    raise ModelError(f"unknown model {name!r}: not a file and not in the built-in catalog{more}")


# Ollama's model store: ~/.ollama/models/blobs/sha256-<64 hex> (the GGUF a tag's manifest points at)
_OLLAMA_BLOB = re.compile(r"(?:^|[\\/])blobs[\\/]sha256[-:][0-9a-f]{64}$", re.IGNORECASE)


def _from_derivation(d: names.Derivation, fmt: str | None, default_format, why: str) -> ModelSpec:
    """The base model's config with the quantization the derivative's name stands for."""
    entry = catalog.lookup(d.slug)
    config = dict(entry.config)
    labels = d.labels
    ext = d.context_extension
    if ext is not None:  # a "-128K" repo: the base's config.json with the extension its card documents
        key = next((k for k in ("text_config", "llm_config") if isinstance(config.get(k), dict)), None)
        target = dict(config[key]) if key else config
        target.update(rope_scaling=dict(ext["rope_scaling"]), max_position_embeddings=ext["max_position_embeddings"])
        if key:
            config[key] = target
    if d.quantization_config is not None and fmt is None:
        config["quantization_config"] = d.quantization_config
        for key in ("text_config", "llm_config"):  # a VLM wrapper: the decoder reads the outer one
            if isinstance(config.get(key), dict):
                config[key] = {k: v for k, v in config[key].items() if k != "quantization_config"}
    fmt = fmt or d.weight_format
    if fmt is None and default_format is not None:  # an engine that loads only its own format (GGUF)
        fmt = default_format(config)
        if fmt is not None:
            said = "no quant given" if d.quantization_config is None else (
                "the name's format is no GGUF file and this engine loads GGUF files, so a GGUF of the model")
            labels += (f"{said}: assuming {fmt} weights (name one with :QUANT or --quant)",)
    labels += (f"hub not read: {why}",)
    spec = spec_from_config_checked(config, name=d.ref, source=f"catalog: {entry.hf_id} ({entry.source}); format from the "
                            f"name ({d.convention})", weight_format=fmt, publisher=gguf_publisher(d.ref))
    spec = with_gguf_origin(published_size(spec, d.ref, entry.hf_id, fmt), d.ref)
    return replace(spec, labels=spec.labels + labels)


# a local checkpoint folder as engines are given one: /models/Qwen3-8B, ./Llama-3.3-70B-Instruct/, C:\\models\\x,
# or the hub cache's models--Qwen--Qwen3-8B/snapshots/<commit>
# a path: rooted, relative (./, ~), with two separators, or one folder with the separator shell completion puts after
# it ("vllm serve Llama-3_3-Nemotron-Super-49B-v1-4bit-GPTQ/", vllm#15664)
# a Hugging Face URL (huggingface.co, hf.co as Ollama pulls it), and the site's pages whose first part is no owner
_HUB_PAGE = re.compile(r"(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/", re.IGNORECASE)
_HUB_NOT_REPOS = frozenset({"collections", "datasets", "spaces", "docs", "papers", "blog", "organizations", "settings",
                            "models", "tasks", "learn", "pricing", "join", "login"})
_PATH_LIKE = re.compile(r"^(?:[/~.]|[A-Za-z]:[\\/])|[\\/].*[\\/]|^[^\\/]+[\\/]$")
_HUB_CACHE_DIR = re.compile(r"(?:^|[\\/])models--([^\\/]+?)--([^\\/]+)(?:[\\/]|$)")
# LM Studio's models folder: "<models>/<publisher>/<repo>" (~/.lmstudio/models, earlier ~/.cache/lm-studio/models;
# lmstudio.ai/docs "Import Models"), the repo's own owner and name (ml-explore/mlx#2309:
# /Users/guy/.lmstudio/models/mlx-community/Qwen3-Embedding-8B-4bit-DWQ)
_LMSTUDIO_DIR = re.compile(r"(?:^|[\\/])(?:\.lmstudio|lm-studio)[\\/]models[\\/]([^\\/]+)[\\/]([^\\/]+)[\\/]?$")


def _catalog_folder(ref: str) -> str | None:
    """The catalog name a checkpoint folder that is not on this machine is named after (a command pasted from a
    server), or None: only a folder whose last part is a catalog model's own name, never a file."""
    if not _PATH_LIKE.search(ref) or Path(ref).suffix.lower() in (".gguf", ".json", ".safetensors", ".bin"):
        return None
    cached = _HUB_CACHE_DIR.search(ref) or _LMSTUDIO_DIR.search(ref)
    base = f"{cached.group(1)}/{cached.group(2)}" if cached else re.split(r"[\\/]", ref.rstrip("\\/"))[-1]
    if not base or base in (".", "..", "~"):
        return None
    # ModelScope's download cache keeps a repo whose name holds a dot in a folder with "___" for each "." (the
    # ".../Qwen/Qwen2___5-VL-72B-Instruct" of its snapshot_download, vllm#13124)
    base = base.replace("___", ".")
    if not cached and _is_owner(base):
        # a folder named after a publisher ("Qwen/", "/models/Qwen": the folder its repos are kept in, or a repo id
        # cut after its owner) names no model, though Ollama's tag "qwen" would read it as Qwen1.5 4B Chat
        return None
    entry = catalog.lookup(base)
    if entry is not None:
        return entry.hf_id
    # a folder named after a derivative repo (vllm serve /models/Qwen3-30B-A3B-Instruct-2507-FP8, the hub cache's
    # models--cpatonn--...-AWQ-4bit): that repo, read as model/names.py reads its name; a bare folder name is taken
    # as published by its base model's maker (the "-FP8" of Qwen's own repo, not NVIDIA's), and only when it names a
    # format (a fine-tune's folder, "Llama-3.3-70B-Instruct-abliterated", is no repo of the maker's to look up)
    if cached:
        return base if names.derive(base) is not None else None
    found = names.derive(f"local/{base}")
    if found is None or found.convention == names.SAME_NAME:
        return None
    repo = f"{found.base_hf_id.split('/', 1)[0]}/{base}"
    return repo if names.derive(repo) is not None else None


def _is_owner(name: str) -> bool:
    """Whether `name` is the owner part of a catalog model's repo id (case-insensitive): "Qwen", "TinyLlama"."""
    low = name.lower()
    return any(e["hf_id"].lower().startswith(low + "/") for e in catalog.entries())


def _cached_gguf(ref: str) -> str | None:
    """"REPO:QUANT" for a GGUF file in the hub cache that is not on this machine (a llama.cpp command pasted from a
    server whose -hf download it loads: names.hub_cache_gguf), when the catalog knows the repo's model; else None."""
    cached = names.hub_cache_gguf(ref) if ref.lower().endswith(".gguf") else None
    return cached if cached is not None and catalog.lookup(cached.rsplit(":", 1)[0]) is not None else None


def _exists(path: Path) -> bool:
    """Path.exists, with a path part too long for any file system said in one line (ENAMETOOLONG)."""
    try:
        return path.exists()
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            check_path(path)
        raise ModelError(f"{path}: cannot look it up ({e.strerror or e})") from None


# Names of the standard input: `cat model.gguf | oomkit estimate /dev/stdin` (or "-").
_STDIN = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _stdin_kind() -> str | None:
    """"pipe" when stdin is a pipe or socket to read the model from; None when it is a regular file (read by
    its name like any file); a terminal or nothing is refused."""
    try:
        st = os.fstat(0)
    except OSError:
        raise ModelError("standard input is closed: pipe a GGUF or a config.json into it") from None
    if stat.S_ISREG(st.st_mode):
        return None
    if os.isatty(0):
        raise ModelError("standard input is a terminal: pipe a GGUF or a config.json into it "
                         "(cat model.gguf | oomkit estimate -)")
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        return "pipe"
    raise ModelError("standard input is a device, not a model file: pipe a GGUF or a config.json into it")


class _Prefixed:
    """A read-only stream: bytes already read, then the rest of `raw` (the GGUF reader reads forward only)."""

    name = "stdin"

    def __init__(self, head: bytes, raw) -> None:
        self.head, self.raw = head, raw

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = self.head[:n] if n >= 0 else self.head, self.head[n:] if n >= 0 else b""
            return out
        return self.raw.read(n)


def _from_stdin(kind: str, weight_format: str | None, default_format) -> ModelSpec:
    """A GGUF (header only: the tensor data is never read) or a config.json from a pipe."""
    raw = sys.stdin.buffer
    head = raw.read(4)
    if head == b"GGUF":
        from .checks import spec_from_gguf_checked  # lazy: as for a local GGUF
        from .gguf_header import read_gguf_header  # lazy: as above

        spec = spec_from_gguf_checked(read_gguf_header(_Prefixed(head, raw)), name="stdin", source="stdin")
        _same_format(spec, weight_format, "stdin")
        return spec
    if head.lstrip()[:1] == b"{" or (not head.strip() and head):
        text = head + raw.read(MAX_CONFIG_BYTES + 1 - len(head))
        if len(text) > MAX_CONFIG_BYTES:
            raise ModelError(f"stdin: config.json is larger than the {MAX_CONFIG_BYTES >> 20} MiB oomkit reads")
        return _config_spec(loads_object(text, "stdin", "config.json"), "stdin", "stdin", None, weight_format,
                            default_format)
    shown = head.decode("ascii", "backslashreplace")
    raise ModelError(f"stdin holds neither a GGUF nor a config.json (it starts with {shown!r})")


def _same_format(spec: ModelSpec, weight_format: str | None, shown: str) -> None:
    if weight_format and _ftype_key(weight_format) != _ftype_key(spec.weights.format):
        raise ModelError(f"{shown} is a {spec.weights.format} GGUF: its weights cannot be read as {weight_format}")


def _ftype_key(name: str) -> str:
    """A GGUF file type's one name ("MOSTLY_BF16", "bf16" -> "BF16"); other names lower-cased."""
    try:
        return gguf_recipes.ftype_by_name(name).name
    except OomkitError:
        return name.lower()


def _from_path(path: Path, weight_format: str | None, default_format=None) -> ModelSpec:
    if path.is_dir():
        ggufs = sorted(path.glob("*.gguf"))
        if (path / "config.json").exists():
            return _from_config_dir(path, weight_format, default_format)
        if len(ggufs) == 1:
            return _from_path(ggufs[0], weight_format)
        if ggufs:
            raise ModelError(f"{path} holds {len(ggufs)} GGUF files: name one ({', '.join(p.name for p in ggufs[:4])})")
        raise ModelError(f"{path}: no config.json and no .gguf file")
    if path.suffix.lower() == ".gguf" or _looks_like_gguf(path):
        from .checks import spec_from_gguf_checked  # lazy: only a local GGUF needs the header reader

        spec = spec_from_gguf_checked(_local_gguf_header(path), name=path.name, source=str(path))
        _same_format(spec, weight_format, path.name)
        return spec
    if path.name.endswith(".json"):
        return _from_config_dir(path, weight_format, default_format)
    raise ModelError(f"{path}: not a .gguf file, a config.json or a model directory")


# gguf-split's part names: "<prefix>-00001-of-00003.gguf" (llama.cpp llama_split_path: "%s-%05d-of-%05d.gguf")
_SPLIT_PART = re.compile(r"^(?P<prefix>.+)-(?P<no>\d{5})-of-(?P<n>\d{5})\.gguf$", re.IGNORECASE)


def _local_gguf_header(path: Path):
    """A local GGUF's header; for the first part of a gguf-split model, the parts' tensor tables read as one, as
    llama.cpp loads them (src/llama-model-loader.cpp llama_model_loader: the first part's metadata, each part
    found by llama_get_list_splits' "<prefix>-%05d-of-%05d.gguf" name, its split.no checked, the tensor count
    held to split.tensors.count)."""
    from .gguf_header import GGUFHeader, read_gguf_header  # lazy: only a local GGUF needs the header reader

    first = read_gguf_header(path)
    count, no = first.metadata.get("split.count"), first.metadata.get("split.no", 0)
    if not isinstance(count, int) or count <= 1:
        return first
    m = _SPLIT_PART.match(path.name)
    if not isinstance(no, int) or m is None or int(m.group("n")) != count:
        return first  # not named as gguf-split names its parts: the one-part check in checks.py says so
    if no != 0:  # llama.cpp: "illegal split file idx ... model must be loaded with the first split"
        raise ModelError(f"{path.name}: part {no + 1} of a {count}-part split GGUF; llama.cpp loads a split model "
                         f"from its first part: give {m.group('prefix')}-00001-of-{count:05d}.gguf")
    headers = [first]
    for i in range(1, count):
        part = path.with_name(f"{m.group('prefix')}-{i + 1:05d}-of-{count:05d}.gguf")
        if not _exists(part):
            raise ModelError(f"{path.name}: part {i + 1} of {count} of this split GGUF is missing ({part.name} is "
                             "not next to it: an unfinished download?)")
        h = read_gguf_header(part)
        if h.metadata.get("split.no") != i:
            raise ModelError(f"{part.name}: split.no is {h.metadata.get('split.no')!r}, expected {i} (llama.cpp: "
                             "invalid split file idx)")
        if h.is_truncated:
            raise ModelError(f"{part.name}: truncated GGUF: {h.file_size:,} bytes, header says at least "
                             f"{h.expected_file_size:,} (an interrupted download?)")
        headers.append(h)
    tensors = tuple(replace(t, part=i) for i, h in enumerate(headers) for t in h.tensors)  # offsets per part
    names_seen: set[str] = set()
    for t in tensors:
        if t.name in names_seen:
            raise ModelError(f"{path.name}: tensor '{printable(t.name)}' is in two parts of the split GGUF "
                             "(llama.cpp: invalid model: tensor is duplicated)")
        names_seen.add(t.name)
    total = first.metadata.get("split.tensors.count")
    if isinstance(total, int) and total != len(tensors):
        raise ModelError(f"{path.name}: split.tensors.count is {total} but the parts hold {len(tensors)} tensors "
                         "(llama.cpp: corrupted model)")
    # the sizes stay the first part's: each part's truncation is checked against its own tensor data
    return GGUFHeader(first.version, dict(first.metadata), tensors, first.alignment, first.data_offset,
                      first.header_bytes, first.data_size, first.file_size)


def _looks_like_gguf(path: Path) -> bool:
    with open_regular(path) as f:  # a FIFO or device is refused here, not read
        try:
            return f.read(4) == b"GGUF"
        except OSError:
            return False


def _from_config_dir(path: Path, weight_format: str | None, default_format=None) -> ModelSpec:
    cfg = load_config(path)
    directory = path if path.is_dir() else path.parent
    name = directory.name if path.is_dir() or path.name == "config.json" else path.stem
    return _config_spec(cfg, name, str(path), directory if path.is_dir() else None, weight_format, default_format)


def _config_spec(cfg: dict, name: str, source: str, directory: Path | None, weight_format: str | None,
                 default_format) -> ModelSpec:
    labels: tuple[str, ...] = ()
    if weight_format is None and default_format is not None:
        weight_format = default_format(cfg)
        if weight_format is not None:
            labels = (f"no quant given: assuming {weight_format} weights (name one with :QUANT or --quant)",)
    spec = spec_from_config_checked(cfg, name=name, source=source, weight_format=weight_format)
    if weight_format is None and directory is not None:
        exact, why = _safetensors_weights(directory, spec)
        if exact is not None:
            spec = replace(spec, weights=exact)
        elif why:
            labels += (why,)
    if labels:
        spec = replace(spec, labels=spec.labels + labels)
    return spec


def _safetensors_weights(directory: Path, spec: ModelSpec):
    """(exact bytes from the safetensors headers next to config.json, None) when they are all there; (None, why)
    when shards are missing (an interrupted download: the weights of one shard of 30 are not the model's) or the
    files lack most of the layers `spec` (read from config.json) declares."""
    if not (any(directory.glob("*.safetensors")) or (directory / "model.safetensors.index.json").exists()):
        return None, ""
    from .safetensors_header import missing_shards, missing_text  # lazy: only a local checkpoint
    from .safetensors_weights import incomplete, inventory_from_safetensors  # lazy: as above

    missing = missing_shards(directory)
    if missing:
        return None, (f"{missing_text(missing)} from {directory}: weights computed from config.json instead of read "
                      "from the files")
    inventory = inventory_from_safetensors(directory)
    why = incomplete(inventory, spec)
    return (None, why) if why else (inventory, "")


def explain(ref: str) -> list[tuple[str, str]]:
    """How `ref` is read, step by step, as (step, result) rows, for `oomkit models --explain`; the last rows are
    what it resolves to (or why it does not) and the labels the result carries."""
    rows = _explain_steps(ref)
    try:
        spec = resolve(ref)
    except OomkitError as e:
        return [*rows, ("result", f"error: {e}")]
    gib = spec.weights.nbytes / 2**30
    rows.append(("result", f"{spec.name}: {spec.architecture}, {spec.n_layers} layers, {spec.params_total / 1e9:.2f} B "
                           f"parameters, weights {spec.weights.format} ({gib:.2f} GiB)"))
    rows.append(("source", spec.source))
    for t in spec.towers:
        rows.append((f"{t.kind} tower", f"{t.params / 1e9:.2f} B parameters ({t.encoder_params / 1e9:.2f} B encoder, "
                     f"{t.projector_params / 1e6:.0f} M projector; {t.nbytes(2) / 2**30:.2f} GiB at 16 bits; "
                     f"{t.source}): loaded with the checkpoint by vLLM, SGLang and transformers, from the mmproj "
                     "file by llama.cpp and Ollama; not in the weights above"))
    rows += [("label", label) for label in spec.labels]
    return rows


def _explain_steps(ref: str) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = [("as typed", ref)]
    canon = names.canonical_ref(ref)
    if canon != ref.strip():
        rows.append(("URL read as", canon))
    try:
        name, quant = split_quant(canon)
    except OomkitError as e:
        rows.append(("quant tag", str(e)))
        return rows
    if quant:
        rows.append(("quant tag", quant))
    key = catalog.normalize(name)
    rows.append(("lookup key", key))
    slug = catalog.resolve_slug(name)
    if slug is not None:
        kind = catalog.name_kind(name)
        rows.append(("catalog", f"{slug} ({kind})"))
        rows.append(("base repo", catalog.base_hf_id(name) or "-"))
        publisher = gguf_publisher(name)
        if publisher in gguf_recipes.IMATRIX_PUBLISHERS:
            rows.append(("GGUF publisher", f"{publisher}: imatrix quants, so a plain file type takes llama-quantize's "
                                           "imatrix rules (quant/gguf_recipes.IMATRIX_PUBLISHERS)"))
        elif publisher:
            rows.append(("GGUF publisher", f"{publisher}: a plain file type takes {publisher}'s recipe where oomkit "
                                           "has one of this model (quant/gguf_recipes.PUBLISHED_RECIPES)"))
        return rows
    tag = names.ollama_tag(name)
    if tag is not None:
        cand, dropped, fmt = tag
        rows.append(("Ollama tag", f"{cand} (qualifiers {'-'.join(dropped)} keep the shapes)"
                     + (f"; implies {fmt}" if fmt else "")))
        rows.append(("catalog", catalog.resolve_slug(cand) or "-"))
        return rows
    d = names.derive(name)
    if d is not None:
        rows.append(("derivative of", f"{d.base_hf_id} (catalog {d.slug})"))
        rows.append(("convention", d.convention))
        if d.dropped:
            rows.append(("same-shape words", "-".join(d.dropped)))
        if d.quantization_config:
            rows.append(("quantization_config", _short_json(d.quantization_config)))
        if d.weight_format:
            rows.append(("weight format", d.weight_format))
        rows.append(("hub", "the repo's config.json, when the hub answers, replaces what the name says"))
        return rows
    rows.append(("catalog", "not found: read from the hub (config.json, safetensors or GGUF headers)"))
    return rows


def _short_json(d: dict) -> str:
    text = json.dumps(d, separators=(",", ":"))
    return text if len(text) <= 160 else text[:157] + "..."
