"""The FastAPI app: the JSON API (DESIGN.md "Web API") and the hub's pages, both over web/api.py.

Bad input is a 4xx with {"error": "<one line>"} (the API) or the page with the reason in it; an unexpected exception
is a bug and answers 500 in one line, like the CLI's exit 3. The server stays off the network unless it was
started with `hub=True` (`oomkit serve --hub`): model names resolve from the built-in catalog and oomkit's hub
cache only, and a request never names a file of the server (api.refuse_path).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import parse_qs

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from ..diagnose.text import render as said
from ..engines.command import given_twice
from ..errors import OomkitError
from ..report import check as check_report
from . import api, kvpage, pages
from .static import JS

MAX_BODY_BYTES = api.MAX_LOG_BYTES + (1 << 20)  # a 20 MB log as JSON, with room for its quoting
# strict: a JSON true is no number (pydantic's lax mode read {"ctx": true} as a context of 1 token)
Scalar = StrictStr | StrictInt | StrictFloat | None
_PROCESSES = Query(False, description="with the processes holding memory")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class _ModelFields(BaseModel):
    """The fields every model request shares: the model, the engine and its settings, the hardware."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())
    model: Scalar = None
    engine: Scalar = None
    ctx: Scalar = None
    quant: Scalar = None
    kv_type: Scalar = None
    parallel: Scalar = None
    vram: Scalar = None
    gpu: Scalar = None
    engine_version: Scalar = None
    command: Scalar = None
    flags: Scalar = None


class EstimateBody(_ModelFields):
    """POST /api/estimate: the GET fields as a JSON body, or `config` (an uploaded config.json's object)."""

    config: dict[str, Any] | None = None
    name: Scalar = None
    cpu_only: bool | Scalar = None  # no GPU (--cpu-only)
    ram: Scalar = None  # the host's memory (--ram), which llama.cpp's --fit weighs without a GPU


class PlanBody(_ModelFields):
    min_ctx: Scalar = None
    concurrency: Scalar = None
    reserve: Scalar = None
    headroom: Scalar = None
    nodes: Scalar = None
    ram: Scalar = None
    limit: Scalar = None


class FitBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str
    vram: Scalar = None
    gpu: Scalar = None
    reserve: Scalar = None
    headroom: Scalar = None
    min_ctx: Scalar = None


class DiagnoseBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


class _BodyLimit:
    """Refuse a request body over MAX_BODY_BYTES with 413, whether it says its length or streams (pure ASGI)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        page = not str(scope.get("path", "")).startswith("/api/")  # a form sent from a page: answer a page
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            await _too_large(send, page)
            return
        seen = 0

        async def limited() -> dict:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > MAX_BODY_BYTES:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _too_large(send, page)


class _HostCheck:
    """Answer only requests addressed to one of `hosts` (the Host header, port aside): a server on loopback is then
    out of reach of a web page that rebinds its own domain name to 127.0.0.1 (DNS rebinding)."""

    def __init__(self, app: Any, hosts: tuple[str, ...]) -> None:
        self.app = app
        self.hosts = {h.lower() for h in hosts}

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").lower()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name not in self.hosts:
                body = b'{"error":"this server answers only requests addressed to it by its own name"}'
                await send({"type": "http.response.start", "status": 421,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_OFF_HUB = "this server stays off the hub: start it with `oomkit serve --hub` to read hub models"
# model/hub.py's offline miss: "... (HF_HUB_OFFLINE=1 keeps oomkit off the hub); unset HF_HUB_OFFLINE to look it up"
_OFFLINE_ADVICE = re.compile(r" ?\(HF_HUB_OFFLINE=1 keeps oomkit off the hub\); unset HF_HUB_OFFLINE to (look it up|read it)"
                             r"| and HF_HUB_OFFLINE=1 keeps oomkit off the hub; unset HF_HUB_OFFLINE to (look it up|read it)")
# units.parse_size's refusal names the CLI's option ("--vram 24: 24 what? ..."); a page names its field
_PAGE_FIELDS = {"--vram": "VRAM per GPU", "--ram": "host memory", "--sizes": "VRAM sizes"}
_CLI_SIZE = re.compile(r"^(--vram|--ram) (?=\S+: \S+ what\?)|^(--sizes)(?=: )")
_CLI_VRAM = re.compile(r" with --vram SIZE\b")  # hardware/catalog.py's unknown GPU: "give its memory with --vram SIZE"
# web/api.py's field readers name the API's parameter ("ctx must be between 1 and ..."); a page names its field
_FIELD_LABELS = {"ctx": "context (tokens)", "parallel": "parallel sequences", "min_ctx": "context each sequence needs",
                 "concurrency": "sequences at once", "cpu_only": "“no GPU”", "here": "“this machine”",
                 "vram": "VRAM per GPU", "ram": "host memory", "fit_vram": "VRAM per GPU", "q": "the search"}
_API_FIELD = re.compile(r"^(ctx|parallel|min_ctx|concurrency|cpu_only|here|vram|ram|fit_vram|q)(?=[ :])")
# the CLI's own options where a message names them ("--cpu-only and --gpu RTX 4090 contradict each other")
_OPTION_LABELS = {"--cpu-only": "“no GPU”", "--gpu": "GPU", "--vram": "VRAM per GPU", "--ram": "host memory",
                  "--sizes": "VRAM sizes"}
_CLI_OPTION = re.compile(r"(?<![\w-])(--cpu-only|--gpu|--vram|--ram|--sizes)(?=[ :,)]|$)")
_CLI_PHRASES = (("not a file and not in the built-in catalog", "not in the built-in catalog"),
                ("give MODEL before the --", "give it in the model field"),
                ("(one MODEL only)", "(not an engine flag: the model goes in the model field)"),
                ("oomkit's own options go before the --", "oomkit's own settings go in the fields above"),
                ("need a MODEL", "need a model in the model field"),
                ("declares no trained context; give -c", "declares no trained context; give it in the context field"),
                ("declares no trained context; give --ctx", "declares no trained context; give it in the context field"))


class _TooLarge(Exception):
    pass


async def _too_large(send: Callable, page: bool = False) -> None:
    """413 in one line: the API's JSON, or for a page's form (a log pasted into /diagnose) the hub's page."""
    if page:
        body = pages.layout("Too large", "", pages.error_box(
            "the request is larger than 20 MB: paste the part of the log around the first error")).encode()
        kind = b"text/html; charset=utf-8"
    else:
        body, kind = b'{"error":"the request is larger than 20 MB"}', b"application/json"
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _json(answer: api.Answer) -> Response:
    return Response(answer.json, media_type="application/json")


def _params(request: Request) -> dict[str, str]:
    """The query string as single values (the last of a repeated key), blanks dropped."""
    return {k: v for k, v in request.query_params.items() if v.strip()}


async def _unique_fields(request: Request) -> None:
    """A JSON body names each field once: `{"vram": "24GiB", "vram": "48GiB"}` is refused naming both values, where
    the JSON reader would keep the last (the fields of an uploaded config are read as a config.json file is)."""
    objects: list[list[tuple[str, Any]]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        objects.append(items)
        return dict(items)

    try:
        json.loads(await request.body(), object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return  # not JSON: the body's own reader refuses it
    seen: dict[str, Any] = {}
    for key, value in objects[-1] if objects else ():  # the outermost object is the last one read
        if key in seen and seen[key] != value:
            raise api.InputError(given_twice(key, seen[key], value), 400)
        seen[key] = value


_UNIQUE = [Depends(_unique_fields)]
_TABLE_FIELDS = ("model", "engine", "quant", "kv_type", "parallel", "vram", "gpu", "engine_version", "command", "flags",
                 "kind", "sizes", "kv_types", "ctx")


def _strict_query(request: Request, names: tuple[str, ...]) -> None:
    """An API query string holds each field once, and only the fields the operation takes: a key given twice with
    two values (`vram=24GiB&vram=48GiB`) is refused naming both, as the CLI refuses an option given twice, and an
    unknown key (`ctxx=8192`) is refused as the POST bodies refuse one, where FastAPI would take the last value or
    answer as if the field were not given."""
    seen: dict[str, str] = {}
    for key, value in request.query_params.multi_items():
        if key not in names:
            raise api.InputError(f"unknown field {key[:40]!r} in the query string; {request.url.path} takes "
                                 f"{', '.join(names)}", 400)
        if key in seen and seen[key].strip() != value.strip():
            raise api.InputError(given_twice(key, seen[key], value), 400)
        seen[key] = value


def create_app(hub: bool = False, hosts: tuple[str, ...] | None = None) -> FastAPI:
    """The hub. hub=False (the default) keeps the server off the Hugging Face hub: names resolve from the catalog
    and oomkit's hub cache (HF_HUB_OFFLINE=1 for this process). hosts: the names requests must be addressed to
    (`oomkit serve` on loopback: LOOPBACK_NAMES); None answers any."""
    if not hub:
        os.environ["HF_HUB_OFFLINE"] = "1"
    app = FastAPI(title="oomkit", summary="GPU memory of LLMs per engine: estimate, check, plan, fit, diagnose",
                  version=_version(), docs_url=None, redoc_url=None)  # their pages load scripts from a CDN
    app.add_middleware(_BodyLimit)
    if hosts is not None:
        app.add_middleware(_HostCheck, hosts=tuple(hosts))

    error_text = partial(_error_text, hub)
    _add_error_handlers(app, error_text)
    _add_api(app)
    _add_pages(app, lambda exc: _page_words(error_text(exc)))
    return app


def _error_text(hub: bool, exc: BaseException) -> str:
    """The error in one line; off the hub, the CLI's advice about HF_HUB_OFFLINE becomes this server's (--hub)."""
    text = _one_line(str(exc))
    if not hub and "HF_HUB_OFFLINE" in text:
        # the CLI's advice (unset HF_HUB_OFFLINE) is the terminal user's; this server's user starts it with --hub
        text = f"{_OFFLINE_ADVICE.sub('', text)} ({_OFF_HUB})"
    return text


# engines/llamacpp/args.py's refusal of a flag the program lacks: the flag is the user's own, quoted as typed (a
# pasted "--vram 24GiB" read "invalid argument: VRAM per GPU (...)" once the options below were renamed in it)
_INVALID_ARG = re.compile(r"^invalid argument: (\S+) \((not an? \S+ flag); oomkit's own options go before the --\)$")


def _page_words(text: str) -> str:
    """An error in the words of a page: its fields, not the CLI's options nor the API's parameter names."""
    if m := _INVALID_ARG.match(text):
        field = _OPTION_LABELS.get(m.group(1))
        where = f"the {field} field above gives it" if field else "oomkit's own settings go in the fields above"
        return f"invalid argument: {m.group(1)} ({m.group(2)}; {where})"
    text = _CLI_VRAM.sub(" in the VRAM field (or pick a GPU from the list)", text)
    text = _CLI_SIZE.sub(lambda m: f"{_PAGE_FIELDS[m.group(1)]} " if m.group(1) else _PAGE_FIELDS[m.group(2)], text)
    text = _API_FIELD.sub(lambda m: _FIELD_LABELS[m.group(1)], text)
    text = _CLI_OPTION.sub(lambda m: _OPTION_LABELS[m.group(1)], text)
    for cli, page in _CLI_PHRASES:
        text = text.replace(cli, page)
    return text


def _add_error_handlers(app: FastAPI, error_text: Callable[[BaseException], str]) -> None:
    """Every failure answered in one line of JSON (or the hub's page for a mistyped page address)."""
    @app.exception_handler(OomkitError)
    async def _oomkit_error(request: Request, exc: OomkitError) -> JSONResponse:
        text = error_text(exc)
        if request.url.path.startswith("/api/"):  # the caller sent fields: the message names them, not the CLI's
            text = api.caller_words(text)
        return JSONResponse({"error": text}, status_code=getattr(exc, "status", 400))

    @app.exception_handler(RecursionError)
    async def _too_deep(request: Request, exc: RecursionError) -> JSONResponse:
        return JSONResponse({"error": "the input is nested too deeply to read"}, status_code=400)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errs = exc.errors()
        first = errs[0] if errs else {}
        where = ".".join(str(x) for x in first.get("loc", ()) if x != "body") or "request"
        return JSONResponse({"error": _one_line(f"{where}: {first.get('msg', 'invalid')}")}, status_code=422)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        path = request.url.path
        if exc.status_code == 404 and not path.startswith("/api/") and path != "/openapi.json":
            # a mistyped page address: a person reads the hub's page, not the API's JSON
            return HTMLResponse(pages.not_found_page(path), status_code=404)
        return JSONResponse({"error": _one_line(str(exc.detail))}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": f"internal error ({type(exc).__name__}: {_one_line(str(exc))[:300]}); this "
                                      "is a bug in oomkit"}, status_code=500)


def _add_api(app: FastAPI) -> None:
    """The JSON API: one route per CLI command, the same fields."""

    @app.get("/api/estimate", tags=["api"], summary="oomkit estimate --json")
    def get_estimate(request: Request, model: str | None = None, engine: str | None = None, ctx: str | None = None,
                     quant: str | None = None, kv_type: str | None = None, parallel: str | None = None,
                     vram: str | None = None, gpu: str | None = None, engine_version: str | None = None,
                     command: str | None = None, flags: str | None = None, cpu_only: str | None = None,
                     ram: str | None = None) -> Response:
        _strict_query(request, api.ESTIMATE_FIELDS)
        return _json(api.estimate(dict(model=model, engine=engine, ctx=ctx, quant=quant, kv_type=kv_type,
                                       parallel=parallel, vram=vram, gpu=gpu, engine_version=engine_version,
                                       command=command, flags=flags, cpu_only=cpu_only, ram=ram)))

    @app.post("/api/estimate", tags=["api"], summary="oomkit estimate --json (fields as a JSON body)",
              dependencies=_UNIQUE)
    def post_estimate(body: EstimateBody) -> Response:
        return _json(api.estimate(body.model_dump()))

    @app.get("/api/check", tags=["api"], summary="oomkit check --json")
    def get_check(request: Request, model: str | None = None, engine: str | None = None, ctx: str | None = None,
                  quant: str | None = None, kv_type: str | None = None, parallel: str | None = None,
                  vram: str | None = None, gpu: str | None = None, engine_version: str | None = None,
                  command: str | None = None, flags: str | None = None, cpu_only: str | None = None,
                  ram: str | None = None) -> Response:
        _strict_query(request, api.ESTIMATE_FIELDS)
        return _json(api.check_fit(dict(model=model, engine=engine, ctx=ctx, quant=quant, kv_type=kv_type,
                                        parallel=parallel, vram=vram, gpu=gpu, engine_version=engine_version,
                                        command=command, flags=flags, cpu_only=cpu_only, ram=ram)))

    @app.get("/api/table", tags=["api"], summary="oomkit table --json")
    def get_table(request: Request, model: str | None = None, engine: str | None = None, quant: str | None = None,
                  kv_type: str | None = None, parallel: str | None = None, vram: str | None = None,
                  gpu: str | None = None, engine_version: str | None = None, command: str | None = None,
                  flags: str | None = None, kind: str | None = None, sizes: str | None = None,
                  kv_types: str | None = None, ctx: str | None = None) -> Response:
        _strict_query(request, _TABLE_FIELDS)
        return _json(api.table(dict(model=model, engine=engine, quant=quant, kv_type=kv_type, parallel=parallel,
                                    vram=vram, gpu=gpu, engine_version=engine_version, command=command, flags=flags,
                                    kind=kind, sizes=sizes, kv_types=kv_types, ctx=ctx)))

    @app.get("/api/models", tags=["api"], summary="oomkit models [QUERY] --json")
    def get_models(request: Request, q: str | None = None, family: str | None = None,
                   kind: str | None = None) -> Response:
        _strict_query(request, ("q", "family", "kind"))
        return _json(api.models({"q": q, "family": family, "kind": kind}))

    @app.get("/api/gpus", tags=["api"], summary="oomkit gpus --json")
    def get_gpus(request: Request, processes: bool = _PROCESSES) -> Response:
        _strict_query(request, ("processes",))
        return _json(api.gpus(processes))

    @app.get("/api/errors", tags=["api"], summary="oomkit errors [QUERY] --json")
    def get_errors(request: Request, q: str | None = None) -> Response:
        _strict_query(request, ("q",))
        return _json(api.errors({"q": q}))

    @app.post("/api/plan", tags=["api"], summary="oomkit plan MODEL --json",
              dependencies=_UNIQUE)
    def post_plan(body: PlanBody) -> Response:
        return _json(api.plan_options(body.model_dump()))

    @app.post("/api/fit", tags=["api"], summary="oomkit fit --json -- COMMAND",
              dependencies=_UNIQUE)
    def post_fit(body: FitBody) -> Response:
        return _json(api.fit_command(body.model_dump()))

    @app.post("/api/diagnose", tags=["api"], summary="oomkit diagnose - --json",
              dependencies=_UNIQUE)
    def post_diagnose(body: DiagnoseBody) -> Response:
        return _json(api.diagnose_text(body.model_dump()))


def _add_pages(app: FastAPI, page_error_text: Callable[[BaseException], str]) -> None:
    """The hub's pages: each form answered with the API's functions, errors shown on the page."""

    def page(render: Callable[[], str], status: int = 200) -> HTMLResponse:
        return HTMLResponse(render(), status_code=status)

    def attempt(fn: Callable[[], Any]) -> tuple[Any, str | None]:
        try:
            return fn(), None
        except OomkitError as exc:
            return None, page_error_text(exc)
        except RecursionError:
            return None, "the input is nested too deeply to read"

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    @app.get("/calculator", response_class=HTMLResponse, include_in_schema=False)
    def calculator(request: Request) -> HTMLResponse:
        return calculate(_params(request))

    @app.post("/", response_class=HTMLResponse, include_in_schema=False)
    async def calculator_upload(request: Request) -> HTMLResponse:
        """The calculator's form with an uploaded config.json (too large for a URL), as a urlencoded body."""
        raw = await request.body()
        form = parse_qs(raw.decode("utf-8", errors="replace"), max_num_fields=40)
        p = {k: v[-1] for k, v in form.items() if v and v[-1].strip()}
        return await run_in_threadpool(calculate, p)

    def calculate(p: dict[str, Any]) -> HTMLResponse:
        sent = dict(p)
        config_text = p.pop("config", None)
        if config_text is not None:
            def uploaded() -> api.Answer:
                if len(config_text) > api.MAX_UPLOAD_BYTES:
                    raise api.InputError("the config is larger than 1 MB", 413)
                try:
                    config = json.loads(config_text)
                except ValueError as exc:
                    raise api.InputError(f"the uploaded file is not JSON ({exc})", 400) from None
                fields = {k: v for k, v in p.items() if k != "model"}
                if fields.get("command"):  # its flags with the uploaded model (a path there is what the file is)
                    quant = fields.pop("quant", None)  # a config.json says no GGUF type: the field's, as --quant
                    fields = with_command({**fields, "command": api.uploaded_command(fields["command"])})
                    fields.update({"quant": quant} if quant else {})
                return api.estimate({**fields, "config": config})

            answer, err = attempt(uploaded)
            return page(lambda: pages.calculator_page(p, answer and answer.obj, None, err), 400 if err else 200)
        if not (p.get("model") or p.get("command")):
            return page(lambda: pages.calculator_page(p, None, None, None))
        p, err = attempt(lambda: with_command(p))
        if err:
            return page(lambda: pages.calculator_page(sent, None, None, err), 400)
        if p.get("here") and not (p.get("vram") or p.get("gpu")):  # with cpu_only: this machine's RAM
            answer, err = attempt(lambda: api.check_fit(p))
            return page(lambda: pages.calculator_page(p, answer and answer.obj.estimate, answer and answer.request,
                                                      err, answer and check_report.text(answer.obj),
                                                      answer and answer.obj),
                        400 if err else 200)
        answer, err = attempt(lambda: api.estimate(p))
        return page(lambda: pages.calculator_page(p, answer and answer.obj, answer and answer.request, err),
                    400 if err else 200)

    @app.get("/limits", response_class=HTMLResponse, include_in_schema=False)
    def limits_page(request: Request) -> HTMLResponse:
        p = _params(request)
        if not (p.get("model") or p.get("command")):
            p.setdefault("model", "llama3.1:8b")
        answer, err = attempt(lambda: api.table(with_command(p)))
        return page(lambda: pages.limits_page(p, answer and answer.data(), err), 400 if err else 200)

    @app.get("/plan", response_class=HTMLResponse, include_in_schema=False)
    def plan_page(request: Request) -> HTMLResponse:
        p = _params(request)
        sent = request.query_params  # the form as sent, its blank fields kept: a blank one was left empty
        plan_answer, err = (attempt(lambda: api.plan_options(p)) if p.get("model") else (None, None))
        if "model" in sent and not p.get("model") and "fit_command" not in sent:
            err = "give a model to plan for (a catalog name, an Ollama tag or an HF id, e.g. qwen3:8b)"
        fit_answer, fit_err = None, None
        if "fit_command" in sent and not p.get("fit_command"):
            fit_err = "give the engine command to fit, e.g. llama-server -m qwen3:8b -c 32768"
        elif p.get("fit_command"):
            fit_answer, fit_err = attempt(lambda: api.fit_command({"command": p["fit_command"],
                                                                   "vram": p.get("fit_vram"),
                                                                   "gpu": p.get("fit_gpu")}))
        return page(lambda: pages.plan_page(p, plan_answer and plan_answer.obj, fit_answer and fit_answer.obj,
                                            err, fit_err), 400 if err or fit_err else 200)

    @app.get("/diagnose", response_class=HTMLResponse, include_in_schema=False)
    def diagnose_get(request: Request) -> HTMLResponse:
        text = request.query_params.get("text")
        if not text:
            return page(lambda: pages.diagnose_page(None, None, None))
        answer, err = attempt(lambda: api.diagnose_text({"text": text}))
        return page(lambda: pages.diagnose_page(text, answer and answer.data(), err, answer and said(answer.obj)),
                    400 if err else 200)

    @app.post("/diagnose", response_class=HTMLResponse, include_in_schema=False)
    async def diagnose_post(request: Request) -> HTMLResponse:
        raw = await request.body()
        form = parse_qs(raw.decode("utf-8", errors="replace"), keep_blank_values=True, max_num_fields=20)
        text = (form.get("text") or [""])[-1]
        answer, err = await run_in_threadpool(attempt, lambda: api.diagnose_text({"text": text}))
        return HTMLResponse(pages.diagnose_page(text, answer and answer.data(), err, answer and said(answer.obj)),
                            400 if err else 200)

    @app.get("/errors", response_class=HTMLResponse, include_in_schema=False)
    def errors_page(request: Request) -> HTMLResponse:
        p = _params(request)
        answer, err = attempt(lambda: api.errors(p))
        return page(lambda: pages.errors_page(p.get("q"), answer.obj if answer else [], err), 400 if err else 200)

    @app.get("/errors/{ident}", response_class=HTMLResponse, include_in_schema=False)
    def error_entry(ident: str) -> HTMLResponse:
        rows = [r for r in api.errors({}).obj if r["id"] == ident]
        if not rows:
            return page(lambda: pages.layout("Unknown message", "errors",
                                             pages.error_box(f"no known message has the id {ident!r}")), 404)
        return page(lambda: pages.error_entry_page(rows[0]))

    @app.get("/kv", response_class=HTMLResponse, include_in_schema=False)
    def kv(request: Request) -> HTMLResponse:
        p = _params(request)
        if not (p.get("model") or p.get("command")):
            p.setdefault("model", "llama3.1:8b")
            p.setdefault("ctx", "32768")
        answer, err = attempt(lambda: api.estimate(with_command(p)))
        return page(lambda: kvpage.kv_page(p, answer and answer.obj, err), 400 if err else 200)

    @app.get("/machine", response_class=HTMLResponse, include_in_schema=False)
    def machine() -> HTMLResponse:
        answer, err = attempt(lambda: api.gpus(processes=True))
        return page(lambda: pages.machine_page(answer and answer.obj, err))

    @app.get("/static/app.js", include_in_schema=False)
    def script() -> Response:
        return Response(JS, media_type="text/javascript", headers={"cache-control": "max-age=300"})



def with_command(p: dict[str, Any]) -> dict[str, Any]:
    """A pasted command with the form's fields: the command is what is estimated. The page filled the fields
    from it (pages.form_from_request) and the engine menu always sends its choice, so a field that says what the
    command says is dropped, and so is the engine (the command's program names it); a field changed since says
    which to edit, in one line, rather than the CLI's "not both"."""
    if not p.get("command"):
        return p
    if p.get("flags"):  # the CLI would say "give either MODEL with options, or an engine command after --"
        raise api.InputError("the engine flags field and the pasted command both give flags: put them in the command "
                             "(the command is what is estimated), or clear the command box to estimate from the "
                             "fields", 400)
    out = {k: v for k, v in p.items() if k != "engine"}
    try:
        read = pages.form_from_request({"command": p["command"]}, api.command_request(p["command"]))
    except OomkitError:
        return {k: v for k, v in out.items() if k not in pages.FROM_COMMAND}  # the command's own error, alone
    for key in pages.FROM_COMMAND:
        if key not in out:
            continue
        given, said = api.normal(key, out[key]), api.normal(key, read.get(key))
        if given == said:
            del out[key]
            continue
        label = pages.FROM_COMMAND[key]
        raise api.InputError(f"the {label} field says {out[key]!r} and the pasted command "
                             f"{'says ' + repr(str(read[key])) if read.get(key) is not None else 'sets none'}: "
                             f"change it in the command (the command is what is estimated), or clear the command "
                             f"box to estimate from the fields", 400)
    return out


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # lazy: only when an app is built

    try:
        return version("oomkit")
    except PackageNotFoundError:
        return "0"
