"""The same operations as an MCP server (stdio), for a coding agent that is about to launch a model and can ask
first: estimate, check, fit, plan, diagnose and models, each a tool whose input schema comes from its signature and
whose answer is the CLI's `--json` text for the same input (through web/api.py, as the web API's is).

The server runs as the machine's own user over stdio, so model files may be named as on the command line. The
`mcp` package (the `mcp` extra) is imported only here: mcp 2's MCPServer, or mcp 1's FastMCP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# StrictInt: a JSON true is no context length or count (pydantic's lax mode reads it as 1)
from pydantic import StrictInt, ValidationError

try:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

from ..errors import OomkitError
from . import api

INSTRUCTIONS = ("oomkit: exactly how much GPU memory an LLM takes with an engine (llama.cpp, Ollama, vLLM, SGLang, "
                "transformers, MLX) and its settings. Before launching a model, call `check` (will it fit this "
                "machine?) or `estimate` with the engine command you are about to run; `fit` rewrites a command "
                "that does not fit; `plan` lists the settings that fit; `diagnose` reads an out-of-memory error. "
                "Sizes in the answers are integers in bytes.")


def tool_words(text: str, takes_command: bool = True) -> str:
    """A CLI message in the words of a tool's arguments (the web API's fields: the same names, the same table)."""
    return api.caller_words(text, takes_command)


def _answer(fn: Callable[[], api.Answer], takes_command: bool = True) -> str:
    try:
        return fn().json
    except OomkitError as e:
        raise ToolError(tool_words(str(e), takes_command)) from None
    except RecursionError:
        raise ToolError("the input is nested too deeply to read") from None


def _fields(**kw: Any) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if v is not None}


class _Server(MCPServer):  # type: ignore[misc, valid-type]
    """MCPServer whose tools refuse an argument they do not take (the arguments' models ignore extras): a
    misspelled `context` for `ctx` must not be answered as if it were not given."""

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, *args: Any, **kwargs: Any) -> Any:
        arguments = arguments or {}  # no arguments at all: each tool says what it lacks
        tool = self._tool_manager.get_tool(name)
        known = set((tool.parameters or {}).get("properties", {})) if tool is not None else set()
        if tool is not None and (unknown := sorted(set(arguments) - known)):
            raise ToolError(f"{name}: unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                            f"it takes {', '.join(sorted(known))}")
        try:
            return await super().call_tool(name, arguments, *args, **kwargs)
        except ToolError as e:
            if not isinstance(e.__cause__, ValidationError):
                raise
            # pydantic's report is four lines per field (with a link): the first field and its reason, in one
            first = e.__cause__.errors()[0] if e.__cause__.errors() else {}
            field = str((first.get("loc") or ("arguments",))[0])
            raise ToolError(f"{name}: {field}: {' '.join(str(first.get('msg', 'invalid')).split())}") from None


def build_server() -> Any:
    server = _Server("oomkit", instructions=INSTRUCTIONS)

    @server.tool(structured_output=False)
    def estimate(model: str | None = None, engine: str | None = None, ctx: StrictInt | None = None,
                 quant: str | None = None, kv_type: str | None = None, parallel: StrictInt | None = None,
                 vram: str | None = None, gpu: str | None = None, engine_version: str | None = None,
                 command: str | None = None, flags: str | None = None, cpu_only: bool | None = None,
                 ram: str | None = None) -> str:
        """Memory of a model with an engine and settings, per device (`oomkit estimate --json`). Give `model`
        (catalog name, Ollama tag, HF id or a local .gguf / config.json) with options, or `command`: a whole engine
        command line ("llama-server -m model.gguf -c 32768 -fa on", "vllm serve Qwen/Qwen3-8B --max-model-len
        32768"). vram: "24GiB" or "24GiB,24GiB" per GPU; gpu: catalog names ("RTX 4090", "2x H100"); cpu_only: no
        GPU, with ram the host's memory ("64GiB"; default this machine's), which llama.cpp's --fit fits the context
        to; flags: the engine's own options as typed."""
        return _answer(lambda: api.estimate(_fields(model=model, engine=engine, ctx=ctx, quant=quant, kv_type=kv_type,
                                                    parallel=parallel, vram=vram, gpu=gpu,
                                                    engine_version=engine_version, command=command, flags=flags,
                                                    cpu_only=cpu_only, ram=ram),
                                            local=True))

    @server.tool(structured_output=False)
    def check(model: str | None = None, engine: str | None = None, ctx: StrictInt | None = None,
              quant: str | None = None, kv_type: str | None = None, parallel: StrictInt | None = None, vram: str | None = None,
              gpu: str | None = None, command: str | None = None, flags: str | None = None,
              cpu_only: bool | None = None, ram: str | None = None, engine_version: str | None = None) -> str:
        """Will it fit on this machine's GPUs (free memory), or on `vram` / `gpu`, or with `cpu_only` in this
        machine's RAM (or a host of `ram`, all of it free)? The verdict, the headroom and the largest context
        (`oomkit check --json`)."""
        if not (model or "").strip() and not (command or "").strip():
            # `oomkit check` without MODEL runs its built-in example (llama3.1:8b); a caller that left the model
            # out would read a verdict on a model it never named, where `estimate` says none was given
            raise ToolError(tool_words("no MODEL given (try: oomkit check llama3.1:8b)"))
        return _answer(lambda: api.check_fit(_fields(model=model, engine=engine, ctx=ctx, quant=quant,
                                                     kv_type=kv_type, parallel=parallel, vram=vram, gpu=gpu,
                                                     command=command, flags=flags, cpu_only=cpu_only, ram=ram,
                                                     engine_version=engine_version),
                                             local=True))

    @server.tool(structured_output=False)
    def fit(command: str, vram: str | None = None, gpu: str | None = None, reserve: str | None = None,
            headroom: str | None = None, min_ctx: StrictInt | None = None) -> str:
        """Rewrite an engine command so that it fits, changing as little as possible (`oomkit fit --json --
        COMMAND`): the KV cache type, the context, the weight format, part of the model in system RAM."""
        return _answer(lambda: api.fit_command(_fields(command=command, vram=vram, gpu=gpu, reserve=reserve,
                                                       headroom=headroom, min_ctx=min_ctx), local=True))

    @server.tool(structured_output=False)
    def plan(model: str, engine: str | None = None, gpu: str | None = None, vram: str | None = None,
             min_ctx: StrictInt | None = None, concurrency: StrictInt | None = None, quant: str | None = None,
             limit: StrictInt | None = None, ram: str | None = None, reserve: str | None = None,
             headroom: str | None = None) -> str:
        """The settings that fit, best first, each with its launch command, memory, headroom, decode speed bound
        and published quality cost (`oomkit plan MODEL --json`). ram: the system RAM the options that keep part of
        the model there may fill ("64GiB"; unchecked with gpu / vram unless given: the answer's notes say what
        they need); reserve: memory other programs hold on each GPU; headroom: memory to keep free on each."""
        return _answer(lambda: api.plan_options(_fields(model=model, engine=engine, gpu=gpu, vram=vram,
                                                        min_ctx=min_ctx, concurrency=concurrency, quant=quant,
                                                        limit=limit, ram=ram, reserve=reserve, headroom=headroom),
                                                local=True), takes_command=False)

    @server.tool(structured_output=False)
    def diagnose(text: str) -> str:
        """Read an out-of-memory error or a whole engine log: the program, the stage that ran out, its numbers in
        bytes and the fix (`oomkit diagnose --json`)."""
        return _answer(lambda: api.diagnose_text({"text": text}))

    @server.tool(structured_output=False)
    def models(q: str | None = None, family: str | None = None, kind: str | None = None) -> str:
        """Search the built-in model catalog by name, HF id, alias, Ollama tag or family; kind: full, sliding,
        chunked, latent, recurrent or moe (`oomkit models --json`)."""
        return _answer(lambda: api.models(_fields(q=q, family=family, kind=kind)))

    return server
