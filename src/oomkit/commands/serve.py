"""oomkit serve: the web hub (calculator, tables, plan and fit, diagnose, the error index, the KV-cache explainer,
this machine) and the JSON API, on uvicorn. fastapi and uvicorn come with the `web` extra, imported only here."""

from __future__ import annotations

import sys

from ..engines.command import given_twice
from ..errors import OomkitError
from ..flags import flag_value

HELP = """\
usage: oomkit serve [--host 127.0.0.1] [--port 8000] [--open] [--hub]

The web hub in a browser: the memory calculator, the hard-limits and context-impact tables, plan and fit, diagnose,
the error index, the KV cache explained and this machine's GPUs; and the JSON API (/api/estimate, /api/check,
/api/table, /api/models, /api/gpus, /api/plan, /api/fit, /api/diagnose; schema at /openapi.json), whose answers are
the CLI's --json. Needs the web extra: pip install 'oomkit[web]'.

options:
  --host HOST   address to listen on (default 127.0.0.1; anything else lets other machines in, and says so)
  --port N      port (default 8000)
  --open        open the hub in the default browser
  --hub         let requests read models from the Hugging Face hub (default: the built-in catalog and oomkit's hub
                cache only; the server makes no outbound request)
"""

MISSING = "oomkit serve needs the web extra: pip install 'oomkit[web]'"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def run(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(HELP)
        return 0
    host, port, open_browser, hub = "127.0.0.1", 8000, False, False
    given: dict[str, str] = {}
    i = 0
    while i < len(argv):
        name, eq, inline = argv[i].partition("=")
        if name in ("--host", "--port"):
            value, i = flag_value(argv, i, inline if eq else None, f"{name} expects a value")
            if name in given and given[name] != value:  # one server listens at one address: which was meant?
                raise OomkitError(given_twice(name, given[name], value))
            given[name] = value
            if name == "--host":
                host = value
            else:
                try:
                    port = int(value)
                except ValueError:
                    raise OomkitError(f"--port takes a number, got {value!r}") from None
                if not 0 < port < 65536:
                    raise OomkitError(f"--port must be between 1 and 65535, got {port}")
        elif argv[i] == "--open":
            open_browser = True
        elif argv[i] == "--hub":
            hub = True
        else:
            raise OomkitError(f"unexpected argument {argv[i]!r} (see oomkit serve --help)")
        i += 1
    _check_address(host, port)
    try:
        import uvicorn  # lazy: the web extra, only for serve

        from ..web.app import LOOPBACK_NAMES, create_app  # lazy: fastapi, only for serve
    except ImportError:
        print(MISSING, file=sys.stderr)
        return 2
    if host not in LOOPBACK:
        print(f"oomkit: warning: listening on {host}: other machines can reach this server (no authentication)",
              file=sys.stderr)
    url = f"http://{'localhost' if host in LOOPBACK or host in ('0.0.0.0', '::') else host}:{port}/"
    print(f"oomkit hub on {url} (Ctrl-C to stop)", file=sys.stderr)
    if open_browser:
        import threading  # lazy: only to open the browser once the server listens
        import webbrowser  # lazy: only with --open

        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    hosts = LOOPBACK_NAMES if host in LOOPBACK else None  # loopback: answer only requests addressed to it
    uvicorn.run(create_app(hub=hub, hosts=hosts), host=host, port=port, log_level="warning")
    return 0


def _check_address(host: str, port: int) -> None:
    """Refuse, in one line, an address the server could not listen on, before uvicorn logs it and exits: an empty
    --host (uvicorn would take it for every interface), a name that does not resolve, a port in use. The trial bind
    sets SO_REUSEADDR as asyncio's create_server does on Unix (reuse_address), the socket uvicorn then opens."""
    import socket  # lazy: only for serve

    if not host.strip():
        raise OomkitError("--host is empty: give an address (127.0.0.1, or 0.0.0.0 for every interface)")
    name, colon, tail = host.rpartition(":")
    bracketed = name.startswith("[") and name.endswith("]")  # [::1]:8000; a bare IPv6 address has colons of its own
    if colon and tail.isdigit() and name and (bracketed or ":" not in name):  # host:port, as a URL writes it
        raise OomkitError(f"--host {host!r} holds a port: give the address alone and the port with --port "
                          f"(--host {name.strip('[]') if bracketed else name} --port {tail})")
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError) as e:
        why = getattr(e, "strerror", None) or str(e)
        raise OomkitError(f"--host {host!r} is not an address or a name that resolves ({why})") from None
    try:
        with socket.socket(family, kind, proto) as s:
            if hasattr(socket, "SO_REUSEADDR") and sys.platform != "win32":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(addr)
    except OSError as e:
        raise OomkitError(f"cannot listen on {host} port {port}: {e.strerror or e}") from None
