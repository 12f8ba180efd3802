"""The hub's HTML pages, rendered on the server from the same objects the API turns into JSON.

Plain string templates: every value that comes from a request, a model or a log goes through `e()` (html.escape),
so a model name or a log line holding `<script>` is shown as text. Every page's inputs live in its query string,
so its URL is the thing to share. No logic here beyond layout: the figures are those of web/api.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from ..accuracy import error_band
from ..check import CheckResult, DeviceCheck
from ..diagnose.text import STAGE_WORDS
from ..diagnose.text import number as diag_number
from ..engines.base import all_engines, get_engine
from ..engines.command import join_command
from ..errors import OomkitError
from ..hardware.catalog import all_gpus, size_notes
from ..memory import MemoryEstimate
from ..model import catalog
from ..report.check import _STAGE_NAME, refusal
from ..report.plan import HEADERS as PLAN_HEADERS
from ..report.plan import _header as plan_header
from ..report.plan import fit_text, matrix_rows
from ..report.plan import saved_text as saved
from ..report.plan import usage_text as usage
from ..report.render import host_fit
from ..units import GiB, MiB, fmt_bytes, fmt_mib
from . import svg
from .api import MAX_COMMAND_CHARS, MAX_FIELD_CHARS, MAX_LOG_BYTES, refuse_path
from .static import CSS

NAV = (("/", "calculator", "Calculator"), ("/limits", "limits", "Limits & context"), ("/plan", "plan", "Plan / fit"),
       ("/diagnose", "diagnose", "Diagnose"), ("/errors", "errors", "Error index"),
       ("/kv", "kv", "KV cache explained"), ("/machine", "machine", "This machine"))


def e(x: Any) -> str:
    return escape("" if x is None else str(x), quote=True)


def layout(title: str, active: str, body: str, status_note: str = "") -> str:
    # the page shown is said to a screen reader too (aria-current), not only by the underline
    nav = "".join(f'<a href="{href}"{" class=on aria-current=page" if key == active else ""}>{label}</a>'
                  for href, key, label in NAV)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f'<title>{e(title)} · oomkit</title><link rel="icon" href="data:,"><style>{CSS}</style></head><body>'
            f'<a class="skip" href="#main">Skip to the content</a>'
            f'<header><a class="brand" href="/">oomkit</a><nav>{nav}</nav></header>'
            f'<main id="main" tabindex="-1"><h1>{e(title)}</h1>{body}</main>'
            f'<footer>oomkit: the memory each engine really allocates. JSON API: /api/estimate, /api/check, '
            f'/api/table, /api/plan, /api/fit, /api/diagnose, /api/models, /api/gpus; schema: '
            f'<a href="/openapi.json">/openapi.json</a>{status_note}</footer>'
            f'<script src="/static/app.js"></script></body></html>')


def answer(parts: Iterable[str], mark: bool = True) -> str:
    """A page's answer to its form (the verdict or the error, what follows it), marked so that the script moves the
    focus there once the page loads (static.py): below a form of a dozen fields, on a phone the answer began off
    the screen, and a keyboard took some 25 Tabs to reach it. `mark` False: the parts as they are."""
    text = "".join(parts)
    return f'<div id="answer" tabindex="-1">{text}</div>' if text and mark else text


def error_box(message: str | None) -> str:
    return f'<div class="error" role="alert"><b>Cannot answer:</b> {e(message)}</div>' if message else ""


_DID_YOU_MEAN = re.compile(r"unknown (model|GPU) '[^']*'.*?did you mean ([^?]+)\?")
_NAMED_BY_FILE = re.compile(r"^'(.+)' reads as a file path: .*; its name says (\S+): give that")


def did_you_mean(message: str | None, params: Mapping[str, Any], path: str, keys: Iterable[str],
                 gpu_field: str = "gpu", ident: str = "did-you-mean") -> str:
    """The names an unknown model's or GPU's message offers ("did you mean A, B, C?"), each a link to the same page
    with that name in its field (not where a pasted command named the model: the command is what is read)."""
    m = _DID_YOU_MEAN.search(message or "")
    named = _NAMED_BY_FILE.search(message or "")
    if named and not m:
        # a pasted command or a field that named a GGUF file (web/api.py refuse_path): the same page with the name
        # that file's name says in the path's place, the rest of the command kept
        path_text, model = named.group(1), named.group(2)
        fields = [k for k in ("command", "fit_command", "model") if path_text in str(params.get(k) or "")]
        if not fields:
            return ""
        where = fields[0]
        changed = {**params, where: model if where == "model" else str(params[where]).replace(path_text, model)}
        href = link(path, changed, (*keys, gpu_field, where))
        return f'<p class="note" id="{ident}">Did you mean: <a href="{e(href)}">{e(model)}</a></p>'
    if not m:
        return ""
    name = "model" if m.group(1) == "model" else gpu_field
    if name == "model" and (params.get("command") or gpu_field != "gpu"):
        return ""
    keys = (*keys, name)
    links = " · ".join(f'<a href="{e(link(path, {**params, name: x.strip()}, keys))}">{e(x.strip())}</a>'
                       for x in m.group(2).split(",") if x.strip())
    return f'<p class="note" id="{ident}">Did you mean: {links}</p>'


def not_found_page(path: str) -> str:
    return layout("Page not found", "", error_box(f"this hub has no page {path}: pick one from the menu above"))


def mib(n: int | None) -> str:
    return "-" if n is None else f"{n / MiB:,.0f} MiB"


def b(n: int | None, fmt=svg.gib) -> str:
    """A size shown readably, its exact bytes kept in the attribute (the browser tests read them)."""
    if n is None:
        return '<span data-bytes="">-</span>'
    return f'<span data-bytes="{int(n)}" title="{int(n):,} bytes">{e(fmt(n))}</span>'


def field(name: str, label: str, params: Mapping[str, Any], placeholder: str = "", kind: str = "text",
          datalist: str | None = None, wide: bool = False) -> str:
    value = params.get(name) or ""
    extra = f' list="{datalist}"' if datalist else ""
    if name in params.get(FILLED, ()):  # the page filled it from the pasted command (form_from_request)
        extra += f' data-filled="{e(value)}"'
    cls = ' class="wide"' if wide else ""
    return (f'<div{cls}><label for="f-{name}">{e(label)}</label><input id="f-{name}" name="{name}" type="{kind}" '
            f'value="{e(value)}" placeholder="{e(placeholder)}"{extra} data-max="{MAX_FIELD_CHARS}" '
            f'autocomplete="off"></div>')


def textarea(name: str, label: str, value: str | None, placeholder: str = "", rows: int = 3,
             limit: int = MAX_COMMAND_CHARS) -> str:
    """limit: the most characters the server takes (data-max: the script says so before a too-long paste is sent in
    a URL that the server or the browser would refuse without a word of the hub's)."""
    return (f'<div class="wide"><label for="f-{name}">{e(label)}</label><textarea id="f-{name}" name="{name}" '
            f'rows="{rows}" placeholder="{e(placeholder)}" spellcheck="false" data-max="{limit}">'
            f'{e(value or "")}</textarea></div>')


def engine_select(params: Mapping[str, Any]) -> str:
    current = params.get("engine") or "llama.cpp"
    opts = "".join(f'<option value="{e(eng.name)}"{" selected" if eng.name == current else ""}>{e(eng.name)}</option>'
                   for eng in all_engines())
    return f'<div><label for="f-engine">engine</label><select id="f-engine" name="engine">{opts}</select></div>'


def model_datalist() -> str:
    names: list[str] = []
    for row in catalog.entries():
        names += [row["name"], row["hf_id"]]
    return '<datalist id="models">' + "".join(f'<option value="{e(n)}">' for n in sorted(set(names))) + "</datalist>"


def gpu_datalist() -> str:
    """The catalog's GPUs to pick from in a GPU field, each as a user types it (its first alias, "RTX 4090"), the
    name the field's reader (hardware/catalog.py lookup) takes."""
    names = {g.aliases[0] if g.aliases else g.name for g in all_gpus()}
    return '<datalist id="gpus">' + "".join(f'<option value="{e(n)}">' for n in sorted(names)) + "</datalist>"


def model_form(action: str, params: Mapping[str, Any], example: str, button: str, *fields: str) -> str:
    """A GET form over a model (with the catalog's names to pick from) and an engine, then the page's own fields."""
    return (f'<form class="card grid" method="get" action="{action}" data-need="model">'
            + field("model", "model", params, example, datalist="models") + engine_select(params) + "".join(fields)
            + f'<div><button type="submit">{button}</button></div></form>' + model_datalist() + gpu_datalist())


def link(path: str, params: Mapping[str, Any], keys: Iterable[str]) -> str:
    q = {k: params[k] for k in keys if params.get(k)}
    return path + ("?" + urlencode(q) if q else "")


def dl(items: Iterable[tuple[str, str]]) -> str:
    """Pairs of (label, already-escaped html)."""
    return '<dl class="kv">' + "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"


def command_block(ident: str, argv_text: str) -> str:
    return (f'<div class="cmd"><pre id="{ident}">{e(argv_text)}</pre>'
            # the button names what it copies to a screen reader (a plan page has one per option, all "copy")
            f'<button class="small" type="button" data-copy="{ident}" aria-describedby="{ident}">copy</button></div>')


def _view_value(key: str, value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{e(k)} {_view_value(key if str(key).endswith('bytes') else str(k), v)}"
                         for k, v in value.items()) or "-"
    if isinstance(value, list):
        return "; ".join(_view_value(key, v) for v in value) or "-"
    if value is None or value == "":
        return "-"
    if isinstance(value, str) and "\n" in value:
        return f'<pre class="view">{e(value)}</pre>'
    if isinstance(value, bool):
        return "true" if value else "false"  # as `oomkit estimate --json` writes it, not Python's True
    if not isinstance(value, int):
        return e(value)
    return b(value, _view_size) if key.endswith("bytes") else e(f"{value:,}" if abs(value) >= 10000 else value)


def _view_size(n: int) -> str:
    """A size in the engine's view in MiB to two places, as `oomkit estimate` prints it (report/render.py, fmt_mib),
    but a size under 1 MiB in KiB (a 64 KiB vLLM page: not "0 MiB", as whole MiB showed it, nor "0.06 MiB")."""
    if n and abs(n) < MiB:
        return f"{n / 1024:,.2f}".rstrip("0").rstrip(".") + " KiB"
    return fmt_mib(n)


# ---------------------------------------------------------------------------------------------------------
# Calculator


_CHECK_WORDS = (("give --gpu NAME or --vram SIZE for yours, or --cpu-only for this machine's RAM",
                 "pick yours in the GPU field or give its VRAM, or tick “no GPU” for this machine's RAM"),
                ("planned (--vram/--gpu)", "planned (the VRAM or GPU field)"),
                ("a planned host (--ram)", "a planned host (the host memory field)"),
                ("note: --ram: ", "note: host memory: "))


CALC_KEYS = ("model", "engine", "ctx", "quant", "kv_type", "parallel", "flags", "vram", "gpu", "engine_version",
             "command", "cpu_only", "ram")


def calculator_form(params: Mapping[str, Any], action: str = "/", button: str = "Estimate") -> str:
    return (f'<form class="card grid" method="get" action="{action}">'
            + field("model", "model (catalog name, Ollama tag or HF id)", params, "llama3.1:8b", datalist="models")
            + engine_select(params)
            + field("ctx", "context (tokens)", params, "engine default")
            + field("quant", "weights (quant)", params, "Q4_K_M, bf16, fp8 …")
            + field("kv_type", "KV cache type", params, "f16, q8_0 …")
            + field("parallel", "parallel sequences", params, "engine default")
            + field("vram", "VRAM per GPU", params, "24GiB or 24GiB,24GiB")
            + field("gpu", "or GPUs from the catalog", params, "RTX 4090, 2x H100", datalist="gpus")
            + field("engine_version", "engine version", params, "newest")
            + '<div><label class="check"><input type="checkbox" name="cpu_only" value="1"'
            + (" checked" if str(params.get("cpu_only", "")).strip().lower() in ("1", "true", "on", "yes") else "")
            + '> or no GPU: everything on the CPU</label></div>'
            + field("ram", "host memory (CPU only)", params, "64GiB; default: this server's")
            + '<div><label class="check"><input type="checkbox" name="here" value="1"'
            + (" checked" if params.get("here") else "")
            # oomkit check's rule: a machine without a GPU is checked against the reference card, its RAM only with
            # --cpu-only (the "no GPU" box above)
            + '> or check against this machine\'s free GPU memory (its RAM with &ldquo;no GPU&rdquo; ticked)</label></div>'
            + field("flags", "engine flags (e.g. flash attention)", params, "-fa on -ngl 99", wide=True)
            + textarea("command", "…or paste a whole engine command (it fills the form; Ctrl+Enter sends it)",
                       params.get("command"),
                       "llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 32768 -fa on", 2)
            + f'<div><button type="submit">{e(button)}</button></div>'
            + ('<div class="wide upload"><label for="f-config">…or upload a config.json (up to 1 MB; not part of the '
               'shareable URL)</label><input id="f-config" type="file" accept=".json,application/json">'
               '<textarea name="config" id="f-config-text" hidden disabled></textarea></div>' if action == "/" else "")
            + '</form>' + model_datalist() + gpu_datalist())


# The fields a pasted command fills (form_from_request), with the words the page uses for them
FROM_COMMAND = {"model": "model", "ctx": "context", "quant": "weights (quant)", "kv_type": "KV cache type",
                "parallel": "parallel sequences"}


def form_from_request(params: Mapping[str, Any], req: Any) -> dict[str, Any]:
    """A pasted engine command, read: its model, engine, context, KV type and parallel slots in the form."""
    if req is None or not params.get("command"):
        return dict(params)
    eng = get_engine(req.engine)
    out = {k: v for k, v in params.items() if k != "command"}
    out["model"], out["engine"] = req.model, req.engine
    ctx = getattr(req.settings, eng.context_field, None)
    if ctx:
        out["ctx"] = ctx
    if eng.kv_fields and getattr(req.settings, eng.kv_fields[0], None):
        out["kv_type"] = getattr(req.settings, eng.kv_fields[0])
    par = eng.neutral_fields("parallel")
    n = getattr(req.settings, par[0], None) if par else None
    if isinstance(n, int) and n > 0:  # not llama.cpp's -1 (its auto), which the field would refuse
        out["parallel"] = n
    if req.quant:
        out["quant"] = req.quant
    out["command"] = params.get("command")
    # the fields the command filled: the script clears them once the command is edited (static.py), so that a second
    # command pasted over the first is not refused for the first one's model ("the model field says ...")
    out[FILLED] = tuple(k for k in FROM_COMMAND if k in out and out[k] != params.get(k))
    return out


FILLED = "_filled"  # form_from_request's key for the fields it filled from the command (never a request field)


def verdict(est: MemoryEstimate, req: Any = None) -> str:
    """The verdict in `oomkit check`'s terms (check.CheckResult over the estimate's devices, their memory as the
    budget): an engine that would split the model with the CPU or refuse the settings while the GPUs have room is
    said so in its own words, not "short by" a negative amount."""
    host = host_fit(est) if est.fits is None else None
    if host is not None:  # no GPU, the host's memory known (ram, or the server's with cpu_only)
        memory, left = host
        if left >= 0:
            return f'<div class="verdict ok" id="verdict">Fits in the host\'s {b(memory)}, with {b(left)} left</div>'
        return (f'<div class="verdict bad" id="verdict">Does not fit in the host\'s {b(memory)}: {b(-left)} short'
                '</div>')
    if est.fits is None:
        return '<div class="verdict unknown" id="verdict">Fit unknown: give the VRAM or the GPUs</div>'
    r = CheckResult(estimate=est, hardware="planned", max_context=est.max_context, max_context_by_kv={},
                    n_ctx=None, devices=tuple(DeviceCheck(usage=u, total_bytes=u.memory_bytes,
                                                          used_by_others_bytes=None)
                                              for u in est.devices if u.memory_bytes is not None))
    if not r.devices:
        return '<div class="verdict unknown" id="verdict">Fit unknown: give the VRAM or the GPUs</div>'
    worst = r.margin_bytes
    if est.fits and r.fits:
        return f'<div class="verdict ok" id="verdict">Fits, with {b(worst)} left on the fullest GPU</div>'
    if worst >= 0:  # the memory holds it; the engine's own rule stops it (check's engine_refuses)
        kind = r.refusal_kind or "refuses these settings"
        # the engine's own words, as `oomkit check` prints them (its warnings, without the GPU-size note the
        # estimate puts first: check keeps that among its hardware notes; shown here under the verdict)
        sized = set(_size_notes(req))
        why = est.engine_view.get("error") or next((w for w in est.warnings if w not in sized), "")
        return (f'<div class="verdict bad" id="verdict">Does not fit: {_refuses(est.engine, kind, f"with {b(worst)} left on the fullest GPU")}'
                f'{"<br><small>" + e(why) + "</small>" if why else ""}</div>')
    return (f'<div class="verdict bad" id="verdict">Does not fit: {b(-worst)} short on the fullest GPU'
            f'{_fails_first(r)}</div>')


def _fails_first(r: CheckResult) -> str:
    """The line under `oomkit check`'s "short by" verdict (report/check.py): the engine's own words for what fails,
    where its start-up model names it (vLLM on 2 GPUs without -tp: "Use more GPUs (--tensor-parallel-size ...)"),
    which the page had only among its notes at the foot."""
    why = r.engine_failure
    if not why:
        return ""
    eng = r.estimate.engine
    line = (f"fails first during {eng}'s start-up: {why}" if r.estimate.engine_view.get("failed_phase") else
            f"fails first at {_STAGE_NAME.get(r.stage or '', 'start-up')}: {eng} refuses to start: {why}")
    return f'<br><small id="fails-first">{e(page_note(line))}</small>'


def _refuses(engine: str, kind: str, left: str) -> str:
    """"vllm refuses these settings, with 2 GiB left ..."; SGLang's pool short of one full-length request ("starts,
    but", check.CheckResult.refusal_kind) reads "sglang starts, with 0 GiB left ..., but" what follows (its own
    words, `oomkit check`'s "sglang starts, but ...")."""
    if kind.endswith(", but"):
        return f"{e(engine)} {e(kind.removesuffix(', but'))}, {left}, but"
    return f"{e(engine)} {e(kind)}, {left}"


def checked_verdict(r: CheckResult) -> str:
    """The verdict of `oomkit check` against this machine (the calculator's "check against this machine"): its
    margin, on what it was checked against (the free GPU memory, the RAM with no GPU ticked, or the reference
    card where the machine has no GPU), not the estimate's own against the devices' whole memory."""
    on = ("this machine's available RAM" if r.hardware == "cpu" else f"the reference card {r.reference}"
          if r.hardware == "reference" else "this machine's free GPU memory")
    m = r.margin_bytes
    if r.fits:
        return f'<div class="verdict ok" id="verdict">Fits, with {b(m)} left (checked against {e(on)})</div>'
    if r.engine_refuses:
        return (f'<div class="verdict bad" id="verdict">Does not fit: '
                f'{_refuses(r.estimate.engine, r.refusal_kind or "", f"with {b(m)} left (checked against {e(on)})")}'
                f'{"<br><small>" + e(why) + "</small>" if (why := refusal(r.estimate, "")) else ""}</div>')
    return (f'<div class="verdict bad" id="verdict">Does not fit: {b(-m)} short (checked against {e(on)})'
            f'{_fails_first(r)}</div>')


# The CLI's notes name its options; a page names its fields (what the note says is otherwise the CLI's, word for word)
_CLI_NOTE_WORDS = ((re.compile(r"^--gpu '"), "the GPU '"),
                   (re.compile(r"\bor --quant\b"), "or in the weights (quant) field"),
                   (re.compile(r"^no --ctx given: "), "no context given: "),
                   (re.compile(r"\(give --gpu NAME or --vram SIZE\)"), "(pick a GPU or give its VRAM)"),
                   (re.compile(r"\(give --gpu, or --attention-backend\)"),
                    "(pick the GPU, or give --attention-backend in the engine flags)"),
                   (re.compile(r"give --ram SIZE"), "fill in the host memory field"))


def page_note(text: str) -> str:
    """A note of the CLI's (an estimate's warnings, a plan's notes) in the page's words."""
    for pattern, words in _CLI_NOTE_WORDS:
        text = pattern.sub(words, text)
    return text


def _size_notes(req: Any) -> tuple[str, ...]:
    gpu = req.opts.get("--gpu") if req is not None else None
    return size_notes(gpu) if gpu else ()


def assumed(req: Any) -> str:
    """Where the hardware is an assumption (a GPU name sold in several sizes: the size it was taken as), under the
    verdict rather than among the notes."""
    # hardware/catalog.py's note names the CLI's option ("--gpu 'A100' is sold with 40 or 80 GB"); here, the field
    return "".join(f'<p class="note assumed">Assumed: {e(page_note(n))}</p>' for n in _size_notes(req))


def estimate_body(est: MemoryEstimate, req: Any, checked: CheckResult | None = None) -> str:
    m = est.model
    kinds = ", ".join(f"{n} {k}" for k, n in m.kinds().items())
    out = [checked_verdict(checked) if checked is not None else verdict(est, req), assumed(req), '<div class="stats">']
    for label, value, ident in (("total", est.total_bytes, "total"), ("weights", est.weights_bytes, "weights"),
                                ("KV cache", est.kv_cache_bytes, "kv"), ("compute", est.compute_bytes, "compute")):
        out.append(f'<div class="stat" id="stat-{ident}"><b>{b(value)}</b><span>{e(label)}</span></div>')
    # no context fits on the GPUs given: `oomkit check`'s "none" (report/check.py), not a blank; "-" only where the
    # hardware is not known
    maxctx = f"{est.max_context:,}" if est.max_context else "none" if est.fits is False else "-"
    out.append(f'<div class="stat" id="stat-maxctx"><b><span data-value="{e(est.max_context or "")}">'
               f'{e(maxctx)}</span></b><span>largest context that fits</span></div>')
    if est.kv_bytes_per_token:
        out.append(f'<div class="stat"><b>{b(est.kv_bytes_per_token, _small)}</b><span>KV per token</span></div>')
    out.append("</div>")
    # a mixture of experts' active parameters beside its total, as `oomkit estimate` prints them (report/render.py)
    active = f" ({m.params_active / 1e9:.2f}B active)" if m.params_active != m.params_total else ""
    out.append(f'<p class="note" id="model-line">{e(m.name)} · {e(m.architecture)} · {m.n_layers} layers '
               f'({e(kinds)}) · {m.params_total / 1e9:.2f}B params{active} · weights {e(m.weights.format)}'
               f'{"" if m.weights.exact else " (computed)"} · engine {e(est.engine)}</p>')
    # the settings the figures assume (vLLM's default gpu_memory_utilization 0.92, max_num_seqs 256), as the CLI's
    # second line says them (report/render.py: the engine's headline settings)
    s = est.settings
    shown = [f"{key} {s[key]}" for key in get_engine(est.engine).headline if s.get(key) not in (None, "")]
    if shown:
        out.append(f'<p class="note" id="settings-line">{e(" · ".join([f"engine {est.engine}", *shown]))}</p>')
    out.append('<h2>Memory per device</h2>' + svg.legend())
    largest = max((u.memory_bytes or u.total_bytes for u in est.devices), default=0)
    for u in (*est.devices, est.host):
        parts = {k: getattr(u, k) for k, _, _ in svg.PARTS}
        mem = u.memory_bytes
        right = f"{b(u.total_bytes)} of {b(mem)}" if mem else b(u.total_bytes)
        out.append(f'<div class="bar" data-device="{e(u.id)}"><div class="lab"><span><b>{e(u.id)}</b> '
                   f'{e(u.name)}</span><span>{right}</span></div>{svg.stacked_bar(parts, mem, largest)}</div>')
    out.append('<div class="scroll"><table id="devices"><tr><th class="l">device</th><th>memory</th><th>weights</th>'
               '<th>KV cache</th><th>state</th><th>compute</th><th>overhead</th><th>total</th><th>free</th></tr>')
    for u in (*est.devices, est.host):
        free = None if u.memory_bytes is None else u.memory_bytes - u.total_bytes
        cells = "".join(f"<td>{b(getattr(u, k))}</td>" for k, _, _ in svg.PARTS)
        out.append(f'<tr><td class="l">{e(u.id)}</td><td>{b(u.memory_bytes)}</td>{cells}<td>{b(u.total_bytes)}</td>'
                   f"<td>{b(free)}</td></tr>")
    out.append("</table></div>")
    try:
        argv = get_engine(est.engine).command(req.model, req.settings, req.quant) if req is not None else None
    except OomkitError:
        argv = None
    if argv:
        out.append("<h2>The engine's command line</h2>" + command_block("engine-cmd", join_command(argv)))
    out.append(f"<h2>What {e(est.engine)} will print</h2>"
               + dl((k, _view_value(k, v)) for k, v in est.engine_view.items()))
    if est.layers:
        rows = "".join(f'<tr><td>{x.index}</td><td class="l">{e(x.kind)}</td><td class="l">{e(x.device)}</td>'
                       f"<td>{b(x.weights_bytes, mib)}</td><td>{b(x.kv_bytes, mib)}</td>"
                       f"<td>{b(x.recurrent_bytes, mib)}</td><td>{e(x.cells if x.cells is not None else '-')}</td></tr>"
                       for x in est.layers)
        out.append(f'<h2>Per layer</h2><details><summary>{len(est.layers)} layers: kind, device, weights, KV, '
                   f'state</summary><div class="scroll"><table id="layers"><tr><th>#</th><th class="l">kind</th>'
                   f'<th class="l">device</th><th>weights</th><th>KV</th><th>state</th><th>cells</th></tr>{rows}'
                   f"</table></div></details>")
    band = error_band(est)
    out.append(f'<h2>How far to trust it</h2><p id="error-band">{e(band["summary"])}</p>'
               + "".join(f'<p class="note">resting on a guess: {e(g)}</p>' for g in band["guesses"]
                         if g.removeprefix("model: ") not in m.labels))
    notes = [*est.warnings, *m.labels, *est.notes]
    if notes:
        out.append('<h2>Notes</h2><ul class="notes">' + "".join(f"<li>{e(page_note(n))}</li>" for n in notes)
                   + "</ul>")
    return "".join(out)


def _small(n: int | float) -> str:
    return f"{n / 1024:,.1f} KiB" if n >= 1024 else f"{n} B"


def _log_lines(command: Any) -> int:
    """The lines of a pasted text that is not one command (a shell's backslash joins a command's lines), or 0."""
    if not isinstance(command, str):
        return 0
    lines = [x for x in re.sub(r"\\\r?\n", " ", command).splitlines() if x.strip()]
    return len(lines) if len(lines) > 1 else 0


def calculator_page(params: Mapping[str, Any], est: MemoryEstimate | None, req: Any, error: str | None,
                    check_text: str | None = None, checked: CheckResult | None = None) -> str:
    shown = form_from_request(params, req)
    lines = _log_lines(params.get("command")) if error else 0
    if lines:  # a log pasted where the command goes: its second line read as a flag ("invalid argument: ggml_...")
        error = (f"the command box holds {lines} lines, not one engine command: a log is read by Diagnose (the "
                 "button below sends it there); to estimate, paste the command line alone")
    body = [error_box(error), did_you_mean(error, params, "/", CALC_KEYS)]
    if lines:
        body.append('<form method="post" action="/diagnose" id="to-diagnose"><textarea name="text" hidden>'
                    f'{e(params["command"])}</textarea><button type="submit">Diagnose this log</button></form>')
    if check_text:
        for cli, page in _CHECK_WORDS:  # report/check.py's advice names the CLI's options; the page has fields
            check_text = check_text.replace(cli, page)
        body.append(f'<div class="card"><h2>On this machine</h2><pre id="check">{e(check_text)}</pre></div>')
    if est is not None:
        # the same inputs: a pasted command goes along whole (its flags too, which the form's fields do not hold);
        # plan takes a model, not a command: the model and engine read from it
        body.append(f'<div class="card">{estimate_body(est, req, checked)}<p class="note">Same inputs: '
                    f'<a href="{e(link("/limits", params, CALC_KEYS))}">limits and context tables</a> · '
                    f'<a href="{e(link("/kv", params, CALC_KEYS))}">the KV cache explained</a> · '
                    f'<a href="{e(link("/plan", shown, ("model", "engine", "vram", "gpu")))}">plan the best settings'
                    # checked against this machine: the JSON of that check (`oomkit check --json`), as the verdict
                    f'</a> · <a id="json-link" href="{e(link("/api/check" if checked else "/api/estimate", params, CALC_KEYS))}">'
                    'JSON</a></p></div>')
    elif not error:
        return layout("Memory calculator", "calculator", calculator_form(shown) + (
            '<p class="lead">Give a model (try <a href="/?model=llama3.1%3A8b&amp;ctx=32768&amp;vram=24GiB">'
            'llama3.1:8b at 32K on 24 GiB</a>) or paste an engine command.</p>'))
    return layout("Memory calculator", "calculator", calculator_form(shown) + answer(body))


# ---------------------------------------------------------------------------------------------------------
# Limits and context impact


def limits_page(params: Mapping[str, Any], data: dict | None, error: str | None) -> str:
    form = model_form("/limits", params, "llama3.1:8b", "Show tables",
                      field("quant", "weights (quant)", params, "engine default"),
                      field("parallel", "parallel sequences", params, "1"),
                      field("kv_types", "KV types", params, "engine's: f16,q8_0,q4_0"),
                      field("sizes", "VRAM sizes (GB)", params, "8,12,16,24,32,48,80,96,141,192"),
                      field("vram", "plus a planned GPU set", params, "24GiB,24GiB"),
                      # the calculator's "same inputs" link brings its GPUs: a row of theirs, kept by the form
                      field("gpu", "or planned GPUs from the catalog", params, "2x RTX 3090", datalist="gpus"),
                      field("flags", "engine flags", params, "-fa on"),
                      *([f'<input type="hidden" name="command" value="{e(params["command"])}">']
                        if params.get("command") else []))
    if params.get("command"):  # the tables of a pasted command (from the calculator): said, and kept by the form
        form += f'<p class="note" id="for-command">For the command <code>{e(params["command"])}</code></p>'
    body = [error_box(error), did_you_mean(error, params, "/limits", params)]
    if data is not None:
        kvs = [k for k in data["kv_types"] if k not in data["kv_errors"]]
        m = data["model"]
        trained = f"{m['n_ctx_train']:,}" if m.get("n_ctx_train") else "-"
        s = data.get("settings") or {}
        said = "".join(f" · {e(x)}" for x in (
            *([f"{s['n_parallel']} sequence{'s' if s['n_parallel'] != 1 else ''}"] if "n_parallel" in s else []),
            *([f"flash attention {s['flash_attn']}"] if "flash_attn" in s else [])))  # report/tables.py title()
        body.append(f'<p class="note" id="limits-title">{e(m["name"])} · weights {e(m["weights_format"])} '
                    f'{b(data["weights_bytes"])} · engine {e(data["engine"])} · trained context {e(trained)}{said}</p>')
        if "limits" in data:  # `?kind=context` asks for the other table only (table --kind context)
            kinds = {t["label"]: t["kind"] for t in data.get("targets", [])}
            body.append(_kv_table("limits", "Hard limits: the largest context that fits", "VRAM",
                                  "".join(f"<th>KV {e(k)}</th>" for k in kvs),
                                  ((_target_label(row, kinds.get(row["target"])),
                                    "".join(_limit_cell(row["max_context"].get(k), m.get("n_ctx_train")) for k in kvs))
                                   for row in data["limits"]), raw_labels=True)
                        + ('<p class="note">(max): the model\'s trained context</p>'
                           if any(m.get("n_ctx_train") in row["max_context"].values() for row in data["limits"]) else "")
                        + "</div>")
        if "context" in data:
            series: dict[str, list[tuple[int, int]]] = {k: [] for k in kvs}
            for row in data["context"]:
                for k in kvs:
                    series[k].append((row["n_ctx"], row["kv"][k]["total_bytes"]))
            body.append(_kv_table("context", "Context impact: memory by context length", "context",
                                  "".join(f"<th>KV {e(k)}</th><th>GPU total</th><th>smallest VRAM</th>" for k in kvs),
                                  ((svg._ctx(row["n_ctx"]), "".join(_context_cells(row["kv"][k]) for k in kvs))
                                   for row in data["context"])))
            lines = [(t["label"], t["memory_bytes"]) for t in data["targets"]
                     if t["kind"] == "size" and t["memory_bytes"]]
            body.append("<h3>Memory against context</h3>"
                        + svg.context_chart(series, lines, "GPU memory against context length") + "</div>")
        per = [(k, n) for k, n in (data.get("kv_bytes_per_token") or {}).items() if n]
        if per:  # the CLI's footer line (report/tables.py _footer)
            body.append('<p class="note" id="kv-per-token">KV cache per token of context: '
                        + ", ".join(f"{e(k)} {b(n, fmt_bytes)}" for k, n in per) + "</p>")
        if data["kv_errors"]:
            body.append('<ul class="notes">' + "".join(f"<li>KV {e(k)}: {e(v)}</li>"
                                                       for k, v in data["kv_errors"].items()) + "</ul>")
        if data["notes"]:
            body.append('<ul class="notes">' + "".join(f"<li>{e(page_note(n))}</li>" for n in data["notes"])
                        + "</ul>")
    return layout("Hard limits and context impact", "limits", form + answer(body))


def _kv_table(ident: str, title: str, first: str, heads: str, rows: Iterable[tuple[str, str]],
              raw_labels: bool = False) -> str:
    """A card's table with a column per KV type: the row's label on the left, then its cells (the card left open
    for what follows the table). raw_labels: the labels are html already."""
    return (f'<div class="card"><h2>{title}</h2><div class="scroll"><table id="{ident}"><tr><th class="l">{first}</th>'
            # a label wraps (raw ones: a planned GPU set, "planned: NVIDIA GeForce RTX 4060 (8.00 GiB)", held the
            # figures past a phone's edge, the table showing only its VRAM column)
            + heads + "</tr>" + "".join(f'<tr><td class="l{" wrap" if raw_labels else ""}">'
                                        f'{label if raw_labels else e(label)}</td>{cells}</tr>' for label, cells in rows)
            + "</table></div>")


def _target_label(row: dict, kind: str | None) -> str:
    """A row's VRAM as the CLI labels it (report/tables.py _target_label): a listed size as it is, a planned or
    detected GPU set with its memory ("planned: GPU (24.00 GiB)", "... free" for a detected one)."""
    if kind == "size" or row.get("memory_bytes") is None:
        return e(row["target"])
    return f'{e(row["target"])} ({b(row["memory_bytes"], fmt_bytes)}{" free" if kind == "detected" else ""})'


def _context_cells(c: dict) -> str:
    return (f'<td>{b(c["kv_cache_bytes"])}</td><td>{b(c["total_bytes"])}</td>'
            f'<td class="{"yes" if c["smallest_size"] else "nofit"}">{e(c["smallest_size"] or "-")}</td>')


def _limit_cell(n: int | None, trained: int | None = None) -> str:
    """A largest context; "(max)" where it is the model's trained context, as the CLI's table marks it."""
    if not n:
        return '<td data-value="" class="nofit">does not fit</td>'
    return f'<td data-value="{n}">{n:,}{" (max)" if n == trained else ""}</td>'


# ---------------------------------------------------------------------------------------------------------
# Plan and fit


def plan_page(params: Mapping[str, Any], plan_obj: Any, fit_obj: Any, error: str | None,
              fit_error: str | None) -> str:
    form = model_form("/plan", params, "qwen3:8b", "Plan",
                      field("gpu", "GPUs from the catalog", params, "RTX 4090, 2x RTX 3090", datalist="gpus"),
                      field("vram", "or VRAM per GPU", params, "24GiB"),
                      field("min_ctx", "context each sequence needs", params, "8192"),
                      field("concurrency", "sequences at once", params, "1"),
                      field("quant", "keep this weight format", params, "any"),
                      # plan --ram: the system RAM a GPU+RAM option may fill (unchecked for planned GPUs without it)
                      field("ram", "host memory (system RAM for GPU+RAM options)", params,
                            "64GiB; default: unchecked"))
    fitted = fit_obj is not None or fit_error is not None  # the fit form's answer is the page's
    body = [form, answer((error_box(error), did_you_mean(error, params, "/plan", PLAN_KEYS),
                          plan_body(plan_obj) if plan_obj is not None else ""), not fitted)]
    body.append('<h2>Fit my command</h2><form class="card grid" method="get" action="/plan" data-need="fit_command">'
                + "".join(f'<input type="hidden" name="{k}" value="{e(params[k])}">'
                          for k in ("model", "engine", "min_ctx", "concurrency", "quant", "ram") if params.get(k))
                + textarea("fit_command", "engine command", params.get("fit_command"),
                           "llama-server -m qwen3:8b -c 131072 -fa on", 2)
                + field("fit_vram", "VRAM per GPU", params, "24GiB")
                + field("fit_gpu", "or GPUs", params, "RTX 4060", datalist="gpus")
                + '<div><button type="submit">Fit it</button></div></form>'
                + answer((error_box(fit_error),
                          did_you_mean(fit_error, params, "/plan", (*PLAN_KEYS, "fit_command", "fit_vram"), "fit_gpu",
                                       "fit-did-you-mean"),
                          fit_body(fit_obj) if fit_obj is not None else "")))
    return layout("Plan the settings, fit a command", "plan", "".join(body))


PLAN_KEYS = ("model", "engine", "gpu", "vram", "min_ctx", "concurrency", "quant", "ram")
TIERS = {1: "all on the GPU", 2: "part in system RAM", 3: "bigger hardware"}


# the line `oomkit plan` prints under its table (report/plan.py text()): what the decode column bounds
TPS_NOTE = "decode tok/s is an upper bound (memory bandwidth); prefill is compute-bound"


def plan_body(p: Any) -> str:
    d = p.to_dict()["plan"]
    out = ['<div class="card">']
    devs = ", ".join(f"{x.id} {x.name} ({svg.gib(x.memory_bytes)})" for x in p.devices)
    out.append(f'<p class="note">{e(p.model.name)} with {e(p.engine)} on {e(devs)}</p>')
    # what was planned for, as `oomkit plan` heads its table ("goal: 32768 tokens of context")
    out += [f'<p class="note" id="plan-goal">{e(x)}</p>' for x in plan_header(p)[1:]]
    if p.options:
        out.append('<h2>Decision matrix</h2><div class="scroll wide-only"><table id="matrix"><tr>'
                   + "".join(f'<th class="{"l" if h in ("tier", "option", "quality (published)") else ""}">{e(h)}</th>'
                             for h in PLAN_HEADERS) + "</tr>")
        for row, o in zip(matrix_rows(p), d["options"], strict=True):
            cells = "".join(f'<td class="{"l wrap" if i in (1, 2, 9) else ""}">{e(c)}</td>' for i, c in enumerate(row))
            cmd = command_block(f"plan-cmd-{o['rank']}", o["command"])
            out.append(f'<tr data-tier="{o["tier"]}">{cells}</tr><tr><td></td><td colspan="{len(PLAN_HEADERS) - 1}" '
                       f'class="l wrap">{cmd}</td></tr>')
        out.append("</table></div>")
        out.append('<div class="narrow-only">')  # a phone: one card per option, its command wrapping
        for row, o in zip(matrix_rows(p), d["options"], strict=True):
            items = [(h, e(c)) for h, c in zip(PLAN_HEADERS[3:], row[3:], strict=True)]
            cmd = command_block(f"plan-cmd-n{o['rank']}", o["command"])
            out.append(f'<div class="option"><b>#{e(row[0])} · {e(row[1])}</b> {e(row[2])}{dl(items)}{cmd}</div>')
        out.append("</div>")
        out.append('<p class="note">Tiers: ' + " · ".join(f"{k}: {v}" for k, v in TIERS.items()) + "</p>")
        out.append(f'<p class="note" id="plan-tps">{e(TPS_NOTE)}</p>')
    else:
        out.append('<div class="verdict bad">Nothing fits on these GPUs.</div>')
    sh = d.get("smallest_hardware")
    if sh:
        items = [("GPUs", e(f"{sh.get('count', 1)}× {sh.get('gpu')}")), ("their memory", b(sh.get("memory_bytes"))),
                 ("needed", b(sh.get("needed_bytes")))]
        if sh.get("context"):
            items.append(("context", e(f"{sh['context']:,}")))
        out.append('<h2>Tier 3: the smallest hardware that runs it</h2><div id="tier3">' + dl(items) + "</div>")
        if sh.get("command"):
            out.append(command_block("tier3-cmd", sh["command"]))
    if d.get("notes"):  # the CLI's notes; its --ram option is this form's host memory field
        out.append('<ul class="notes">' + "".join(f"<li>{e(page_note(n))}</li>" for n in d["notes"]) + "</ul>")
    out.append("</div>")
    return "".join(out)


def _saves(n: int | None) -> str:
    """One change's saving; a change that moves more onto the GPUs costs there (not "saves -0.13 GiB")."""
    if n is not None and n < 0:
        return f"{b(-n)} more"
    return b(n)


def _saves_cell(changes: list[dict], i: int) -> str:
    """The saves column: plan/fit.py puts what the changes save together on the first one (the others None), so with
    several changes it is one cell over all their rows, said to be theirs together, not the first flag's alone (the
    KV type's row read "saves 6.31 GiB" for q4_0 KV and a smaller weight format together)."""
    if len(changes) == 1:
        return f"<td>{_saves(changes[0].get('saves_bytes'))}</td>"
    if i:
        return ""
    n = changes[0].get("saves_bytes")
    return f'<td rowspan="{len(changes)}">{_saves(n)}{" together" if n is not None else ""}</td>'


def _from(value: Any) -> Any:
    """A changed flag's value before, as `oomkit fit` prints it: unset is the engine's default, not a blank."""
    return "the engine's default" if value is None else value


def fit_body(fit_obj: Any) -> str:
    f = fit_obj.to_dict()["fit"]
    out = ['<div class="card">']
    ok = fit_obj.fits
    out.append(f'<div class="verdict {"ok" if ok else "bad"}" id="fit-verdict">'
               f'{"Fits" if ok else "Nothing fits on these GPUs"}'
               f'{" unchanged" if ok and f.get("command") == f.get("command_in") else ""}</div>')
    out.append("<h3>Your command</h3>" + command_block("fit-in", f.get("command_in") or ""))
    if f.get("command") and f.get("command") != f.get("command_in"):
        out.append("<h3>Rewritten</h3>" + command_block("fit-out", f["command"]))
    if f.get("changes"):
        out.append('<div class="scroll"><table><tr><th class="l">flag</th><th class="l">from</th><th class="l">to</th>'
                   '<th>saves</th><th class="l">why</th></tr>'
                   + "".join(f'<tr><td class="l">{e(c.get("flag"))}</td><td class="l">{e(_from(c.get("from")))}</td>'
                             f'<td class="l">{e(c.get("to"))}</td>{_saves_cell(f["changes"], i)}'
                             f'<td class="l wrap">{e(c.get("why"))}</td></tr>' for i, c in enumerate(f["changes"]))
                   + "</table></div>")
    # each GPU against its memory, then system RAM, as `oomkit fit` prints them
    items = [("before", e(usage(fit_obj.before)))]
    # why the command as given does not fit, in the CLI's words (its lines indented under "before:")
    lines = fit_text(fit_obj).splitlines()
    why = [x.strip() for x in lines[1:] if x.startswith("        ")][:2]
    items += [("why", e(w)) for w in why]
    if fit_obj.after is not None and f.get("changes"):
        items.append(("after", e(usage(fit_obj.after))))
        if together := saved(fit_obj.before, fit_obj.after):
            items.append(("together they save", e(together)))
    # the decode bound of a command that now keeps part of the model in system RAM, as the CLI's line says it
    slow = next((x for x in lines if x.startswith("part of the model in system RAM: ")), None)
    if slow:
        items.append(("part of the model in system RAM", f'<span id="fit-decode">{e(slow.split(": ", 1)[1])}</span>'))
    out.append(dl(items))
    for n in f.get("notes") or []:
        out.append(f'<p class="note">{e(page_note(n))}</p>')
    out.append("</div>")
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------
# Diagnose and the error index


# The most of a pasted log the page hands back in its box: a browser takes minutes to lay out a 12 MB textarea
# (Chromium, 3.2 MB: 14 s from submit to the answer), while the diagnosis itself reads the whole log in about 2 s.
ECHO_CHARS = 256 * 1024


def diagnose_page(text: str | None, d: dict | None, error: str | None, said: str | None = None) -> str:
    """said: `oomkit diagnose`'s text for the same log (diagnose.text.render)."""
    shown, cut = text, ""
    if text is not None and len(text) > ECHO_CHARS:
        shown = text[-ECHO_CHARS:]  # its end: where a crash prints its error
        cut = (f'<p class="note" id="echo-cut">The box keeps the last {ECHO_CHARS // 1024:,} KiB of the '
               f'{len(text) / 1e6:,.1f} MB log; the diagnosis read all of it.</p>')
    form = ('<form class="card grid" method="post" action="/diagnose">'
            + textarea("text", "paste the error or the whole log (Ctrl+Enter sends it)", shown,
                       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB …", 8, MAX_LOG_BYTES)
            + '<div><button type="submit">Diagnose</button></div></form>' + cut)
    body = [error_box(error)]
    if d is not None:
        stage = f'<b id="stage">{e(d["stage"])}</b>: {e(STAGE_WORDS.get(d["stage"], d["stage"]))}'
        items = [("program", e(d.get("engine") or "not recognised")), ("stage", stage),
                 ("confidence", e(d["confidence"]))]
        for k in ("engine_version", "host", "backend"):
            if d.get(k):
                items.append((k.replace("_", " "), e(d[k])))
        if d.get("signature"):
            # the id of the message in the error index (`oomkit diagnose` calls the log's line itself "message":
            # here it is the evidence below)
            items.append(("in the error index",
                          f'<a href="/errors/{quote(str(d["signature"]), safe="")}">{e(d["signature"])}</a>'))
        if d.get("line"):
            items.append(("at line", e(d["line"])))
        if d.get("evidence"):
            items.append(("evidence", f"<code>{e(d['evidence'])}</code>"))
        # what `oomkit diagnose` prints beyond these, in its words: the phase, the engine's buffers, oomkit's
        # prediction beside the printed figures, every message seen
        for label, lines in _said_lines(said):
            items.append((label, "<br>".join(e(x) for x in lines)))
        body.append('<div class="card">' + dl(items))
        if d.get("numbers"):  # each as the CLI writes it (448 KiB free is "458,752 bytes", not "0 MiB")
            body.append('<h2>Numbers</h2><ul id="numbers">'
                        + "".join(f'<li data-key="{e(k)}"'
                                  f'{f" data-bytes={chr(34)}{v}{chr(34)}" if k.endswith("_bytes") else ""}>'
                                  f"{e(diag_number(k, v))}</li>" for k, v in d["numbers"].items()) + "</ul>")
        if d.get("settings"):
            body.append("<h2>Settings in force</h2>" + dl((k, _view_value(k, v)) for k, v in d["settings"].items()))
        if d.get("causes"):
            body.append("<h2>Causes</h2><ul>" + "".join(f"<li>{e(c)}</li>" for c in d["causes"]) + "</ul>")
        back = _estimate_params(d)
        if d.get("fixes"):
            body.append('<h2>Fixes</h2><ol id="fixes">')
            for i, fx in enumerate(d["fixes"]):
                extra = ""
                if fx.get("flags"):
                    flags = " ".join(map(str, fx["flags"]))
                    extra += f"<pre>{e(flags)}</pre>"
                    if back:  # the same model and settings with the fix's flags, in the calculator
                        both = _with_fix(back.get("flags", ""), [str(x) for x in fx["flags"]])
                        href = link("/", {**back, "flags": both}, (*_keys(back), "flags"))
                        extra += f'<a class="fix-estimate" href="{e(href)}">estimate it with this fix</a>'

                if fx.get("env"):
                    extra += "<pre>" + e(" ".join(f"{k}={v}" for k, v in fx["env"].items())) + "</pre>"
                if fx.get("command"):
                    extra += command_block(f"fix-cmd-{i}", fx["command"])
                saves = f" <span class=tag>saves {b(fx['saves_bytes'])}</span>" if fx.get("saves_bytes") else ""
                body.append(f"<li>{e(fx['summary'])}{saves}{extra}</li>")
            body.append("</ol>")
        if back:
            href = link("/", back, _keys(back))
            ctx = f" at {int(back['ctx']):,} tokens" if back.get("ctx") else ""
            named = [x for x in (back.get("engine_version") and f"build {back['engine_version']}"
                                 if back["engine"] == "llama.cpp" else back.get("engine_version"),
                                 back.get("quant"), back.get("flags")) if x]
            said = f"the model and settings the log names ({', '.join(named)})" if named else \
                "the model and context the log names"
            on = (f"on the free GPU memory it printed ({', '.join(mib(v) for v in back['_free'])})"
                  if back.get("_free") else "on the hardware you give there")
            body.append(f'<p class="note" id="to-estimate">Estimate <a href="{e(href)}">{e(back["model"])} with '
                        f'{e(back["engine"])}{e(ctx)}</a>: {e(said)}, {e(on)}.</p>')
        body.append("</div>")
    return layout("Diagnose an out-of-memory error", "diagnose", form + answer(body))


# the lines of `oomkit diagnose`'s text the page's own fields do not hold, by their label
_SAID = {"phase": "phase", "buffers": "engine's buffers", "oomkit": "oomkit's figures", "seen": "messages seen",
         "ran out": "ran out", "unknown": "what the lines cannot tell", "paste": "to tell more, paste"}


def _said_lines(said: str | None) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    under = ""  # the label of the line above an indented one
    for line in (said or "").splitlines():
        head = line[:10].strip()
        if head in _SAID:
            out.append((_SAID[head], [line[10:].strip()]))
        elif not head and under == "oomkit":  # the prediction's figures, one a line
            out[-1][1].append(line.strip())
            continue
        under = head if line[:1].strip() else ""
    return out


def _estimate_params(d: dict) -> dict[str, str]:
    """The calculator's fields for the model a log names, with its engine and the context it ran with (the engine's
    own context setting, as the log printed it): where a fix's flags can be tried. Empty where the log names no
    model the hub reads (a path: `--model /data/Qwen`)."""
    settings = d.get("settings") or {}
    model = (d.get("prediction") or {}).get("model") or settings.get("ollama_model") or settings.get("model")
    engines = {x.name: x for x in all_engines()}
    engine = next((x for x in (d.get("engine"), d.get("host")) if x in engines), None)
    if not isinstance(model, str) or engine is None:
        return {}
    try:
        refuse_path(model)
    except OomkitError:
        return {}
    out: dict[str, Any] = {"model": model, "engine": engine}
    ctx = settings.get(engines[engine].context_field)
    if isinstance(ctx, int) and not isinstance(ctx, bool) and ctx > 0:
        out["ctx"] = str(ctx)
    # the log's own build and, for llama.cpp, the settings diagnose/predict.py estimated it with (the file type, the
    # layers offloaded, each GPU's free memory at load): without them the calculator answers for the newest build's
    # defaults (b6100's log: n_ctx 40960, 4 sequences, no GPU size) rather than the run that failed
    predicted = (d.get("prediction") or {}).get("settings") or {}
    version = predicted.get("engine_version") or d.get("engine_version")
    if version and _readable_version(engine, str(version)):
        out["engine_version"] = str(version)
    if engine == "llama.cpp" and (d.get("prediction") or {}).get("engine") == "llama.cpp":
        if isinstance(predicted.get("quant"), str):
            out["quant"] = predicted["quant"]
        ngl = predicted.get("n_gpu_layers")
        if isinstance(ngl, int) and not isinstance(ngl, bool) and ngl >= 0:
            out["flags"] = f"-ngl {ngl}"
        free = list(((d.get("buffers") or {}).get("device_free") or {}).values())
        if free and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in free):
            out["vram"] = ",".join(f"{v // MiB}MiB" if v % MiB == 0 else str(v) for v in free)
            out["_free"] = free  # for the page's words only (link() takes the keys it is given)
    return out


def _keys(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The calculator's fields among _estimate_params' keys (not those for the page's words: "_free")."""
    return tuple(k for k in params if not k.startswith("_"))


def _readable_version(engine: str, version: str) -> bool:
    """Whether the calculator reads the log's engine version (a development build's suffix it may not)."""
    try:
        get_engine(engine).settings(engine_version=version)
    except (OomkitError, TypeError, ValueError):
        return False
    return True


# llama.cpp's option names for the layers on the GPU (common/arg.cpp: "-ngl", "--gpu-layers", "--n-gpu-layers")
_SAME_OPTION = ({"-ngl", "--gpu-layers", "--n-gpu-layers"},)


def _with_fix(base: str, fix: list[str]) -> str:
    """The log's flags with a fix's: an option the fix sets replaces the log's own (-ngl 41 then -ngl 30: -ngl 30)."""
    said = base.split()
    options = {x for x in fix if x.startswith("-")}
    options |= {o for group in _SAME_OPTION if options & group for o in group}
    kept: list[str] = []
    i = 0
    while i < len(said):
        if said[i] in options:
            i += 2 if i + 1 < len(said) and not said[i + 1].startswith("-") else 1
            continue
        kept.append(said[i])
        i += 1
    return " ".join([*kept, *fix])


def errors_page(q: str | None, rows: list[dict], error: str | None = None) -> str:
    form = ('<form class="card grid" method="get" action="/errors">'
            f'<div class="wide"><label for="errfilter">search (program, words of the message, stage)</label>'
            f'<input id="errfilter" name="q" value="{e(q or "")}" placeholder="vllm kv, cudaMalloc, not_oom" '
            f'autocomplete="off"></div></form>') + answer((error_box(error),))
    items = "".join(f'<li data-search="{e(_haystack(r))}"><a href="/errors/{quote(r["id"], safe="")}"><b>{e(r["id"])}</b></a> '
                    f'<span class="tag">{e(r["program"])}</span> <span class="tag">{e(r["stage"])}</span><br>'
                    f'<code>{e(r["message"] or "")}</code></li>' for r in rows)
    body = form + f'<p class="note" id="errcount" data-total="{len(rows)}">{len(rows)} known message' \
                  f'{"s" if len(rows) != 1 else ""}</p><div class="card">' \
                  f'<ul class="errs">{items}</ul></div>'
    return layout("Error index", "errors", body)


def _haystack(r: dict) -> str:
    """Every field of an index entry, as `oomkit errors QUERY` searches them (diagnose.errors_index)."""
    return " ".join(str(v) for v in r.values()).lower()


def error_entry_page(r: dict) -> str:
    items = [("program", e(r["program"])), ("backend", e(r.get("backend") or "-")), ("stage", e(r["stage"])),
             ("role", e(r.get("role") or "-")), ("versions", e(r.get("versions") or "-"))]
    body = ['<div class="card">']
    if r.get("message"):
        body.append(f"<h2>The message</h2><pre>{e(r['message'])}</pre>")
    body.append(dl(items))
    if r.get("causes"):
        body.append("<h2>Causes</h2><ul>" + "".join(f"<li>{e(c)}</li>" for c in r["causes"]) + "</ul>")
    if r.get("fixes"):
        body.append("<h2>Fixes</h2><ul>" + "".join(f"<li>{e(c)}</li>" for c in r["fixes"]) + "</ul>")
    body.append('<p class="note"><a href="/errors">← every message</a> · <a href="/diagnose">diagnose a log</a></p></div>')
    return layout(r["id"], "errors", "".join(body))


# ---------------------------------------------------------------------------------------------------------
# This machine


def machine_page(hw: Any, error: str | None) -> str:
    body = [error_box(error)]
    if hw is not None:
        d = hw.to_dict()
        if d["gpus"]:
            body.append('<div class="card"><div class="scroll"><table id="gpus"><tr><th class="l">GPU</th>'
                        '<th class="l">name</th><th>total</th><th>free</th><th>used by processes</th>'
                        '<th>driver reserve</th></tr>')
            for i, g in enumerate(d["gpus"]):
                body.append(f'<tr><td class="l">{e(g["id"])}</td><td class="l">{e(g["name"])}</td>'
                            f'<td>{b(g.get("total_bytes"), mib)}</td><td id="free-{i}">{b(g.get("free_bytes"), mib)}'
                            f'</td><td>{b(g.get("used_bytes"), mib)}</td><td>{b(g.get("reserved_bytes"), mib)}</td></tr>')
            body.append("</table></div>")
            for g in d["gpus"]:
                procs = g.get("processes") or []
                if procs:
                    body.append(f"<h3>Processes on {e(g['id'])}</h3><div class=scroll><table><tr><th>pid</th>"
                                '<th class="l">name</th><th>memory</th></tr>'
                                + "".join(f'<tr><td>{e(p.get("pid"))}</td><td class="l">{e(p.get("name"))}</td>'
                                          f'<td>{b(p.get("used_bytes"), mib)}</td></tr>' for p in procs)
                                + "</table></div>")
            body.append("</div>")
        else:
            body.append('<div class="verdict unknown">No GPU found on this machine (NVIDIA, AMD and Apple silicon '
                        "are read).</div>")
        if d["host"]:
            h = d["host"]
            body.append('<div class="card"><h2>System memory</h2>'
                        + dl((("total", b(h["total_bytes"], mib)),
                              ("available", f'<span id="host-avail">{b(h["available_bytes"], mib)}</span>'),
                              ("swap", f'{b(h["swap_free_bytes"], mib)} free of {b(h["swap_total_bytes"], mib)}')))
                        + "</div>")
        for n in (*d["notes"], *d["errors"]):
            body.append(f'<p class="note">{e(n)}</p>')
    body.append('<p class="note" id="machine" data-every="3000">Refreshes every 3 s · last update: '
                '<span id="updated">on load</span></p>')
    return layout("This machine", "machine", "".join(body))


def gib_text(n: int | float) -> str:
    return f"{n / GiB:,.2f} GiB"
