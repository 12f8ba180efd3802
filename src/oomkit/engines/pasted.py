"""Text pasted as MODEL that is no model name: a Docker Compose service or Kubernetes container running an engine,
or an engine's own configuration file (an Ollama Modelfile, a `vllm serve --config` YAML). Each is answered with
the one-line refusal naming the oomkit form that reads the same model and settings."""

from __future__ import annotations

import re
import shlex
from typing import Any

from .base import all_engines
from .cmdline import parse_command
from .command import image_entrypoint, join_command
from .shell_words import split_command


def pasted_file_hint(text: str) -> str | None:
    """When `text`, given as MODEL, is an engine's own configuration file (an Ollama Modelfile, a `vllm serve
    --config` YAML) or a Docker Compose service running one, the one-line refusal that names the oomkit form reading the same model and settings (the
    engine's `file_hint_fn`); None otherwise. Such a file has several lines: a one-line MODEL loads no engine."""
    if len(text.splitlines()) < 2:
        return None
    if (hint := compose_hint(text)) is not None:
        return hint
    for eng in all_engines():
        if eng.file_hint_fn is not None and (hint := eng.file_hint_fn(text)) is not None:
            return hint
    return None


# A Docker Compose file (or one service of it) pasted as MODEL: the service's engine command is its `entrypoint`
# and `command` (compose-spec: a string is split as a shell splits it, a list is taken word for word; without an
# entrypoint the image's own runs, with `command` as its arguments) and its `environment` the engine's variables.
# A Kubernetes manifest's container likewise: its `command` replaces the image's ENTRYPOINT and `args` its CMD
# (kubernetes.io, "Define a Command and Arguments for a Container"), `env` a list of name / value.
_ENGINE_VARS = re.compile(r"(?:OLLAMA|VLLM|SGLANG|SGL|LLAMA_ARG|GGML|CUDA_VISIBLE|HIP_VISIBLE|PYTORCH)\w*")


def compose_hint(text: str) -> str | None:
    """Compose YAML text -> the one-line refusal naming the oomkit form of the command its service runs; None for
    text that is no compose service (a vLLM config, a Modelfile, a name)."""
    if not re.search(r"^[\s-]*(?:command|entrypoint|args|cmd)\s*:|^apiVersion:\s*kubeai\.org/", text,
                     re.MULTILINE) and not any(
            image_entrypoint(m.group(1).strip("'\"")) for m in re.finditer(r"^[\s-]*image\s*:\s*(\S+)", text, re.MULTILINE)):
        return None  # neither a command nor an engine image that runs its own (ollama/ollama: `ollama serve`)
    try:
        import yaml  # PyYAML, which huggingface_hub installs; read only for such a paste

        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError:  # a tab after a value (`ipc: host\t`), which PyYAML refuses and compose-go's YAML
            # reader takes as the space after it: the lines without their trailing blanks
            doc = yaml.safe_load(re.sub(r"[ \t]+$", "", text, flags=re.MULTILINE))
    except Exception:  # not YAML (or no PyYAML): not a compose file oomkit reads
        return None
    if not isinstance(doc, dict):
        return None
    if (swap := _llama_swap_hint(doc)) is not None:
        return swap
    if (kubeai := _kubeai_hint(doc)) is not None:
        return kubeai
    svc = next((s for s in _mappings(doc) if "command" in s or "entrypoint" in s or ("args" in s and "image" in s)),
               None)
    if svc is None:  # a service of an engine image with no command: the image's own (ollama/ollama#9814)
        svc = next((s for s in _mappings(doc) if isinstance(s.get("image"), str) and image_entrypoint(s["image"])),
                   None)
    if svc is None:
        return None

    def words(v: Any) -> list[str]:
        if isinstance(v, str):
            try:
                return split_command(v)
            except ValueError:
                return v.split()
        # an empty item (`-` alone, a paste cut after the dash) is YAML's null: no word
        return [str(x) for x in v if x is not None] if isinstance(v, list) else []

    env = svc.get("environment", svc.get("env"))
    pairs = ([(str(k), "" if v is None else str(v)) for k, v in env.items()] if isinstance(env, dict) else
             [(str(e.get("name")), str(e.get("value", ""))) if isinstance(e, dict) and "value" in e else
              (str(e.get("name")), None) if isinstance(e, dict) else
              tuple(str(e).partition("=")[::2]) for e in env] if isinstance(env, list) else [])
    k8s = "args" in svc or bool(re.search(r"^\s*(?:containers|apiVersion)\s*:", text, re.MULTILINE))
    if k8s:  # a Kubernetes container: `command` replaces the image's ENTRYPOINT, `args` its CMD
        entry, cmd = words(svc.get("command")), words(svc.get("args"))
        # and `$(NAME)` in them is the container's variable NAME (its env list; `$$(NAME)` escapes it, a name it
        # does not set stays as written: kubernetes.io, "Define Dependent Environment Variables"); a value from
        # a secret or config map (valueFrom) is not in the manifest, so it stays unexpanded
        given = {k: v for k, v in pairs if v is not None}
        entry, cmd = ([re.sub(r"\$(\$?)\(([A-Za-z_][A-Za-z0-9_]*)\)",
                              lambda m: f"$({m[2]})" if m[1] else given.get(m[2], m[0]), w) for w in ws]
                      for ws in (entry, cmd))
    else:
        entry, cmd = words(svc.get("entrypoint")), words(svc.get("command"))
    pairs = [(k, v) for k, v in pairs if v is not None and _ENGINE_VARS.fullmatch(k)]
    image = svc.get("image")
    if entry or not image:
        argv = [*(f"{k}={v}" for k, v in pairs), *entry, *cmd]
    else:
        argv = ["docker", "run", *(w for k, v in pairs for w in ("-e", f"{k}={v}")), str(image), *cmd]
    if not argv:
        return None
    what = ("a Kubernetes container, not a model name: the engine command it runs is its command and args" if
            k8s else "a Docker Compose service, not a model name: the engine command it runs is its "
            + ("entrypoint and command" if entry or cmd else "image's own"))
    if not entry and not image and cmd and (cmd[0].startswith("-") or _names_no_program(cmd)):
        # only the arguments: the image's own entrypoint (`vllm serve` in vllm/vllm-openai) runs them, and the
        # paste does not say which image that is
        return (f"this is {what}, but it names no image and its command no program (the image's entrypoint runs "
                f"it): give `oomkit check -- docker run IMAGE {join_command(cmd)}` with the service's image")
    if _names_no_model(argv):
        # `ollama serve` (the ollama/ollama image's CMD) loads the model a request names, so the model is given
        # beside the command (ollama/ollama#9814, #4102)
        return (f"this is {what}, and that command loads no model until a request names one; give `oomkit check "
                f"MODEL -- {join_command(argv)}` with the model its clients ask for")
    return f"this is {what}; give `oomkit check -- {join_command(argv)}`"


def _names_no_model(argv: list[str]) -> bool:
    """Whether an engine command reads as one that names no model (`ollama serve`); False when it names one or
    cannot be read."""
    try:
        return parse_command(list(argv), {}).model is None
    except Exception:  # a command oomkit refuses is refused, with its own reason, when it is given
        return False


# A llama-swap config (mostlygeek/llama-swap, proxy/config/config.go LoadConfigFromReader): `models:` maps a model
# id to its `cmd`, the command llama-swap starts on the first request for that id. It drops the cmd's lines that
# start with `#` (StripComments), puts the macros in (`${MODEL_ID}`, `macros:` of the config and of the model, and
# `${PORT}`: startPort, 5800 unless set, and one more for each model after it in id order whose cmd uses it), then
# SanitizeCommand drops `#` lines again, joins a line ending in a backslash to the next and splits the rest as a
# POSIX shell splits words, with no comments: a `#` inside a line (one `cmd: >` folded from several) is a word.
def _llama_swap_hint(doc: dict) -> str | None:
    models = doc.get("models") if isinstance(doc.get("models"), dict) else doc
    entries = [(str(k), v) for k, v in models.items() if isinstance(v, dict) and isinstance(v.get("cmd"), str)]
    if not entries and isinstance(doc.get("cmd"), str):
        entries = [("", doc)]
    if not entries:
        return None

    def expanded(mid: str, entry: dict) -> str:
        cmd = "\n".join(ln for ln in entry["cmd"].split("\n") if not ln.strip().startswith("#"))
        macros = [("MODEL_ID", mid)]
        for scope in (doc.get("macros"), entry.get("macros")):
            if isinstance(scope, dict):
                macros = [m for m in macros if m[0] not in scope] + [(str(k), v) for k, v in scope.items()]
        for key, value in reversed(macros):  # config.go: the merged list substituted last to first, each as %v
            cmd = cmd.replace(f"${{{key}}}", str(value).lower() if isinstance(value, bool) else str(value))
        return cmd

    cmds = {mid: expanded(mid, entry) for mid, entry in entries}
    start = doc.get("startPort") if isinstance(doc.get("startPort"), int) else 5800
    # ${PORT} is numbered after the macros are in (a macro may hold it), over the model ids in sorted order
    port = {mid: start + n for n, mid in enumerate(sorted(m for m, c in cmds.items() if "${PORT}" in c))}

    def argv(mid: str) -> list[str]:
        cmd = cmds[mid].replace("${PORT}", str(port[mid])) if mid in port else cmds[mid]
        cmd = "\n".join(ln.strip()[:-1] + " " if ln.strip().endswith("\\") else ln for ln in cmd.split("\n"))
        try:
            return shlex.split(cmd, comments=False, posix=True)
        except ValueError:
            return cmd.split()

    mid = entries[0][0]
    words = argv(mid)
    if not words:
        return None
    named = f" for its model {mid!r}" if mid else ""
    folded = (" (its `#` is a word there, no comment: YAML folds the lines of `cmd: >` into one line and llama-swap "
              "drops only lines that start with `#`)" if any(w.startswith("#") for w in words) else "")
    more = (f"; {len(entries) - 1} more models: {', '.join(repr(m) for m, _ in entries[1:4])}"
            if len(entries) > 1 else "")
    return (f"this is a llama-swap config, not a model name: llama-swap runs a model's cmd on the first request for "
            f"it; give `oomkit check -- {join_command(words)}`{named}{folded}{more}")


# A KubeAI Model (kubeai.org/v1, kind: Model): KubeAI's controller builds the engine's pod from its spec
# (substratusai/kubeai internal/modelcontroller): for engine VLLM the container runs `python3 -m
# vllm.entrypoints.openai.api_server --model=<the url's repo> --served-model-name=<name>` and then spec.args
# (engine_vllm.go vLLMPodForModel), with spec.env; for OLlama it runs the image's `ollama serve` with spec.env, then
# pulls and loads the url's tag (engine_ollama.go). The url is hf://<repo>, ollama://<tag>, or a bucket or volume
# (s3://, gs://, oss://, pvc://) that holds the model's files.
def _kubeai_hint(doc: dict) -> str | None:
    if not str(doc.get("apiVersion", "")).startswith("kubeai.org/") or doc.get("kind") != "Model":
        return None
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    scheme, _, ref = str(spec.get("url", "")).partition("://")
    engine = str(spec.get("engine", ""))
    args = [str(a) for a in spec.get("args") or [] if a is not None] if isinstance(spec.get("args"), list) else []
    env = [f"{k}={v}" for k, v in spec["env"].items()] if isinstance(spec.get("env"), dict) else []
    what = "this is a KubeAI Model, not a model name"
    if engine.lower() == "vllm":
        model = ref if scheme == "hf" and ref else "MODEL"
        form = join_command([*env, "vllm", "serve", model, *args])
        said = "" if model != "MODEL" else f" (its url {spec.get('url')!r} names the model's files, not a repo)"
        return f"{what}: KubeAI runs `vllm serve` on its url's model with its args; give `oomkit check -- {form}`{said}"
    if engine.lower() == "ollama":
        model = ref if scheme == "ollama" and ref else "MODEL"
        form = f"{model} -- {join_command([*env, 'ollama', 'serve'])}" if env else f"{model} --engine ollama"
        return f"{what}: KubeAI runs `ollama serve` and loads its url's tag; give `oomkit check {form}`"
    return f"{what}: KubeAI runs it on {engine or 'an engine it does not name'}, which oomkit does not model"


def _names_no_program(cmd: list[str]) -> bool:
    """Whether a compose `command` list starts with no program: a hub id (`openai/gpt-oss-120b`) followed by flags,
    as the list form for an image whose entrypoint is the engine's server is written."""
    return bool(re.fullmatch(r"[\w.-]+/[\w.-]+", cmd[0])) and not cmd[0].startswith(("/", ".")) and any(
        w.startswith("--") for w in cmd[1:])


def _mappings(node: Any, depth: int = 0) -> Any:
    """The mappings of a YAML document, outermost first (a compose file's services, a manifest's containers)."""
    if depth > 12:
        return
    if isinstance(node, dict):
        yield node
        children = list(node.values())
    elif isinstance(node, list):
        children = node
    else:
        return
    for child in children:
        yield from _mappings(child, depth + 1)
