"""Remote reads from the Hugging Face hub: config.json, safetensors headers and GGUF headers, never weights.

Everything goes through `huggingface_hub`'s HTTP session (imported lazily, so a catalog estimate never loads it),
with its `hf_hub_url` and `build_hf_headers`: the request `HfApi.model_info` makes lists a repo's files with
their sizes and the commit they belong to, then config.json is fetched and the first bytes of weight files read
with HTTP range requests. Every answer is read under the lookup's deadline and a size cap, and its JSON's shape
is checked (a list or a number where an object belongs is a HubError, not a TypeError). Header bytes are handed to oomkit's own parsers (`parse_gguf_header`, `parse_safetensors_header`),
which say through `NeedMoreBytes` how many more bytes they need; a GGUF header is read from a first 2 MiB range,
a safetensors header (8 + N bytes) from a first 128 KiB. Split GGUFs (`-00001-of-00003.gguf`) are read part by
part, headers only, and merged into one header.

The environment is read on every call (not at import, as huggingface_hub does):

- ``HF_ENDPOINT``: the hub (or a mirror) to ask, default https://huggingface.co;
- ``HF_TOKEN``: sent as ``Authorization: Bearer`` (without it, huggingface_hub's saved login is used);
- ``HF_HUB_OFFLINE=1`` (or ``TRANSFORMERS_OFFLINE=1``): no network at all; only oomkit's cache answers;
- ``OOMKIT_HUB_TIMEOUT``: seconds to wait to connect and for each read, default 5;
- ``OOMKIT_HUB_DEADLINE``: seconds one lookup may take in all, default 30 (a server trickling a byte at a time
  never trips the per-read timeout);
- ``OOMKIT_CACHE``: oomkit's cache directory (the hub's part is ``$OOMKIT_CACHE/hub``), default
  ``~/.cache/oomkit/hub``.

The cache holds, per endpoint, repo and revision (as asked, e.g. ``main``): the file listing with sizes and
commit (``info.json``), the small JSON files (``files/config.json``, the safetensors index), and the header bytes
of each weight file (``headers/<file>``). A second call for the same repo makes no request. Entries for a
branch name are not refreshed: delete the directory to read the hub again.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from ..errors import HubError, ModelError, OomkitError
from . import jsonfile
from ._bytes import NeedMoreBytes, printable, read_capped
from .checks import spec_from_config_checked, spec_from_gguf_checked
from .gguf_header import GGUFHeader, parse_gguf_header
from .hub_cache import cache_root, is_offline, repo_dir, site
from .hub_cache import endpoint as hub_endpoint
from .safetensors_header import (
    INDEX_NAME,
    SafetensorsModel,
    check_complete,
    missing_in_series,
    missing_text,
    parse_safetensors_header,
)
from .safetensors_weights import inventory_from_safetensors_model, layer_index

__all__ = [
    "GGUFFile",
    "HubClient",
    "HubGGUF",
    "RepoInfo",
    "gguf_quants",
    "inventory_from_safetensors_model",
    "is_hf_id",
    "is_offline",
    "layer_index",
    "parse_ref",
    "spec_from_hub",
]

DEFAULT_REVISION = "main"
DEFAULT_TIMEOUT = 5.0  # seconds, to connect and for each read
DEFAULT_DEADLINE = 30.0  # seconds for a whole lookup (listing, config, every header), however the bytes trickle
GGUF_FIRST_READ = 2 << 20  # a GGUF header with a 150k-token vocabulary is ~3-4 MB; most fit in 2 MiB
GGUF_LATER_PART_FIRST_READ = 512 << 10  # parts 2..N of a split GGUF carry only their tensor table
SAFETENSORS_FIRST_READ = 128 << 10  # huggingface_hub reads 100 kB: 97% of headers fit (its PR #1855)
MAX_HEADER_READ = 256 << 20  # gguf_header.MAX_HEADER_BYTES; safetensors caps its header at 100 MB
MAX_JSON_BYTES = 16 << 20  # the repo listing (siblings with sizes: thousands of files in the largest repos)
MAX_CONFIG_BYTES = jsonfile.MAX_CONFIG_BYTES  # config.json, as for a local file
MAX_INDEX_BYTES = jsonfile.MAX_INDEX_BYTES  # model.safetensors.index.json, as for a local file
_WORKERS = 8  # parallel header reads of the shards / split parts of one model

# HF repo ids: huggingface_hub.utils._validators.REPO_ID_REGEX, plus its "no '--' or '..'" rule.
_REPO_ID = re.compile(r"^\w(?:[\w.-]{0,94}\w)?/\w(?:[\w.-]{0,94}\w)?$", re.ASCII)
_URL_PREFIXES = ("https://huggingface.co/", "http://huggingface.co/", "huggingface.co/", "hf.co/")
_FILE_SUFFIXES = (".gguf", ".json", ".safetensors", ".bin", ".pt", ".pth", ".ggml", ".ggmlv3")
_SPLIT = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$", re.IGNORECASE)
# The quant in a GGUF file name, as llama.cpp, unsloth and bartowski spell it: "...-Q4_K_M", "...-UD-Q4_K_XL",
# "...-IQ4_XS", "...-BF16", "...-MXFP4_MOE" (also "...-q4_0" in lower case).
_QUANT = re.compile(r"(?:^|[-_.])((?:UD-)?(?:I?Q\d(?:_[A-Z0-9]+)*|TQ\d_\d|BF16|F16|F32|FP16|FP32|MXFP4(?:_MOE)?))$",
                    re.IGNORECASE)

T = TypeVar("T")


class _Miss(HubError):
    """The model could not be looked up (not on the hub, hub unreachable or failing, offline and uncached):
    resolve() adds its "did you mean" to these."""


# ----------------------------------------------------------------------------------------------------------
# names
# ----------------------------------------------------------------------------------------------------------


def _strip_prefix(ref: str) -> str:
    low = ref.lower()
    for p in _URL_PREFIXES:
        if low.startswith(p):
            return ref[len(p):]
    return ref


def parse_ref(ref: str) -> tuple[str, str | None]:
    """"hf.co/org/name:Q4_K_M" -> ("org/name", "Q4_K_M"); "org/name" -> ("org/name", None). The tag is what
    follows the last colon, whole ("UD-Q4_K_XL"); ":latest" (Ollama's default tag) is no tag."""
    ref = _strip_prefix(ref.strip()).rstrip("/")
    tag = None
    if ":" in ref:
        ref, tag = ref.rsplit(":", 1)
        if not tag or tag.lower() == "latest":
            tag = None
    return ref, tag


def is_hf_id(ref: str) -> bool:
    """Whether `ref` reads as a hub repo id ("org/name", optionally "hf.co/" before and ":TAG" after) rather
    than a path: exactly one "/", no leading "." or "~", no file suffix."""
    repo, _ = parse_ref(str(ref))
    if not _REPO_ID.match(repo) or "--" in repo or ".." in repo:
        return False
    return not repo.lower().endswith(_FILE_SUFFIXES)


# ----------------------------------------------------------------------------------------------------------
# results
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RepoInfo:
    repo_id: str
    revision: str  # as asked ("main")
    commit: str  # the commit the revision pointed at when listed
    files: dict[str, int | None]  # path in the repo -> size in bytes (None when the hub did not say)
    gated: str | bool = False  # "auto" / "manual" when the repo asks users to accept a license


@dataclass(frozen=True)
class GGUFFile:
    """One GGUF model in a repo: a quant and its file, or its split parts in order."""

    quant: str  # as the file name spells it, upper case ("Q4_K_M", "UD-Q4_K_XL")
    paths: tuple[str, ...]

    @property
    def is_split(self) -> bool:
        return len(self.paths) > 1


@dataclass(frozen=True)
class HubGGUF:
    repo_id: str
    commit: str
    file: GGUFFile
    header: Any  # GGUFHeader; split parts merged: the first part's metadata, every part's tensors
    sizes: tuple[int | None, ...]  # per path

    @property
    def total_bytes(self) -> int | None:
        return None if any(s is None for s in self.sizes) else sum(s for s in self.sizes if s is not None)


# ----------------------------------------------------------------------------------------------------------
# GGUF files in a repo
# ----------------------------------------------------------------------------------------------------------


def _quant_of(path: str) -> str:
    folder, _, base = path.rpartition("/")
    m = _SPLIT.match(base)
    stem = m.group("stem") if m else base[: -len(".gguf")]
    q = _QUANT.search(stem) or (_QUANT.search(folder.rpartition("/")[2]) if folder else None)
    return (q.group(1) if q else stem).upper()


def gguf_quants(paths: Iterable[str]) -> list[GGUFFile]:
    """The GGUF models among a repo's files, one per quant (split parts grouped, in order); projector
    (mmproj) and imatrix files left out. Raises when a split set is incomplete."""
    groups: dict[tuple[str, str], dict[int, str]] = {}
    counts: dict[tuple[str, str], set[int]] = {}
    for p in paths:
        folder, _, base = p.rpartition("/")
        low = base.lower()
        if not low.endswith(".gguf") or low.startswith("mmproj") or "imatrix" in low:
            continue
        m = _SPLIT.match(base)
        key = (folder, m.group("stem") if m else base)
        no, count = (int(m.group("no")), int(m.group("count"))) if m else (1, 1)
        groups.setdefault(key, {})[no] = p
        counts.setdefault(key, set()).add(count)
    out = []
    for key, parts in groups.items():
        (count, *more) = sorted(counts[key])
        if more or sorted(parts) != list(range(1, count + 1)):
            missing = sorted(set(range(1, count + 1)) - set(parts))
            raise HubError(f"split GGUF '{key[1]}' is incomplete on the hub: part(s) {missing or sorted(parts)} "
                              f"of {count} missing or inconsistent")
        paths_ = tuple(parts[i] for i in sorted(parts))
        out.append(GGUFFile(_quant_of(paths_[0]), paths_))
    return sorted(out, key=lambda f: (_quant_order(f.quant), f.paths))


def _quant_order(q: str) -> tuple:
    """Natural order for listing: bits, then name ("IQ2_XXS" < "Q4_K_M" < "Q8_0" < "BF16")."""
    m = re.search(r"(\d+)", q.removeprefix("UD-").replace("FP", "F").replace("BF", "F"))
    bits = int(m.group(1)) if m else 99
    return (bits if not q.removeprefix("UD-").startswith(("F", "BF")) else 100 + bits, q)


def pick_gguf(repo_id: str, files: list[GGUFFile], quant: str | None) -> GGUFFile:
    """The GGUF named by `quant` (case-insensitive; "Q4_K_XL" also finds "UD-Q4_K_XL"), or the only one."""
    if not files:
        raise HubError(f"{repo_id} has no .gguf model file on the hub")
    names = ", ".join(f.quant for f in files)
    if quant is None:
        if len(files) == 1:
            return files[0]
        example = next((f.quant for f in files if f.quant == "Q4_K_M"), files[0].quant)
        raise HubError(f"{repo_id} has {names}: add :QUANT, e.g. {repo_id}:{example}")
    q = quant.upper()
    found = [f for f in files if f.quant == q] or [f for f in files if f.quant.removeprefix("UD-") == q]
    if not found:
        raise HubError(f"{repo_id} has no {quant} GGUF: it has {names}")
    if len(found) > 1:
        raise HubError(f"{repo_id} has several {quant} GGUFs ({', '.join(f.paths[0] for f in found)}); "
                          "name the file: download it, or pass a local path")
    return found[0]


def _merge_split(repo_id: str, file: GGUFFile, headers: list[Any], sizes: list[int | None]) -> Any:
    """One GGUFHeader for a split model: gguf-split puts all metadata in part 1, each part's tensors in its own
    table (llama.cpp src/llama-model-loader.cpp reads `split.count` and `split.tensors.count`)."""
    first = headers[0]
    name = f"{repo_id}/{file.paths[0]}"
    n = first.metadata.get("split.count")
    if n is not None and n != len(headers):
        raise HubError(f"{name}: split.count is {n} but the hub has {len(headers)} parts")
    tensors = tuple(replace(t, part=i) for i, h in enumerate(headers) for t in h.tensors)  # offsets per part
    total = first.metadata.get("split.tensors.count")
    if total is not None and total != len(tensors):
        raise HubError(f"{name}: split.tensors.count is {total} but the parts hold {len(tensors)} tensors")
    seen: set[str] = set()
    for t in tensors:
        if t.name in seen:
            raise HubError(f"{name}: tensor '{printable(t.name)}' appears in two split parts")
        seen.add(t.name)
    size = None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)
    return GGUFHeader(first.version, dict(first.metadata), tensors, first.alignment, first.data_offset,
                      first.header_bytes, sum(h.data_size for h in headers), size)


# ----------------------------------------------------------------------------------------------------------
# the client
# ----------------------------------------------------------------------------------------------------------


def _http_module():
    try:
        import httpx2 as http  # lazy, as huggingface_hub: huggingface_hub >= 2
    except ImportError:  # pragma: no cover - huggingface_hub 1.x
        import httpx as http  # lazy, as above
    return http


class HubClient:
    """Reads from one hub endpoint, with the settings of the environment when created (see module doc)."""

    def __init__(self, endpoint: str | None = None, token: str | None = None, timeout: float | None = None,
                 cache: Path | None = None, offline: bool | None = None, deadline: float | None = None) -> None:
        self.endpoint = (endpoint or hub_endpoint()).rstrip("/")
        self.token = token if token is not None else (os.environ.get("HF_TOKEN") or None)
        if timeout is None:
            timeout = _seconds("OOMKIT_HUB_TIMEOUT", DEFAULT_TIMEOUT)
        self.timeout = timeout
        if deadline is None:
            deadline = _seconds("OOMKIT_HUB_DEADLINE", DEFAULT_DEADLINE)
        self.deadline = deadline
        self._t_end: float | None = None  # set by the first request: the deadline covers the whole lookup
        self.cache = cache if cache is not None else cache_root()
        self.offline = is_offline() if offline is None else offline
        self.site = site(self.endpoint)

    # ---- cache -------------------------------------------------------------------------------------------

    def _dir(self, repo_id: str, revision: str) -> Path:
        return repo_dir(self.cache, self.site, repo_id, revision)

    def _cached(self, path: Path) -> bytes | None:
        """A cache entry, or None when absent or not a plain file of sane size (a FIFO or a link to /dev/zero
        planted in the cache is ignored, not read): the hub is then asked again."""
        if not path.is_file():
            return None
        try:
            return read_capped(path, MAX_HEADER_READ, "cache entry")
        except ModelError:
            return None

    def _store(self, path: Path, data: bytes) -> None:
        """Best effort: a cache that cannot be written only costs a later request."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError:
            pass

    # ---- errors ------------------------------------------------------------------------------------------

    def _offline_error(self, repo_id: str, what: str | None = None) -> _Miss:
        if what:
            return _Miss(f"{repo_id}: {what} is not in oomkit's hub cache and HF_HUB_OFFLINE=1 keeps oomkit off the "
                         "hub; unset HF_HUB_OFFLINE to read it")
        return _Miss(f"unknown model {repo_id!r}: not a file, not in the built-in catalog, and not in oomkit's hub "
                     f"cache (HF_HUB_OFFLINE=1 keeps oomkit off the hub); unset HF_HUB_OFFLINE to look it up")

    def _unreachable(self, why: str) -> _Miss:
        return _Miss(f"the Hugging Face hub is unreachable ({why}); use a catalog name, a local config.json or .gguf, "
                     "or set HF_HUB_OFFLINE=1")

    def _transport_error(self, e: BaseException) -> HubError:
        http = _http_module()
        if isinstance(e, http.TimeoutException):
            return self._unreachable(f"no answer from {self.endpoint} within {self.timeout:g} s")
        if type(e).__name__ == "OfflineModeIsEnabled":  # huggingface_hub read HF_HUB_OFFLINE at import
            return _Miss("huggingface_hub is in offline mode (HF_HUB_OFFLINE was set when it was imported); "
                         "use a catalog name, a local config.json or .gguf")
        if isinstance(e, http.ConnectError):
            return self._unreachable(f"cannot connect to {self.endpoint}: {_short(e)}")
        return self._unreachable(f"{type(e).__name__} talking to {self.endpoint}: {_short(e)}")

    def _status_error(self, status: int, headers: Mapping[str, str], repo_id: str, what: str) -> HubError:
        code = headers.get("x-error-code") or ""
        message = headers.get("x-error-message") or ""
        if status == 401 and "Invalid credentials" in message:  # huggingface_hub's hf_raise_for_status tells it so
            return HubError(f"the Hugging Face hub refused the token (invalid credentials) for {repo_id}: check "
                               "HF_TOKEN or your saved login, or unset HF_TOKEN for public repos")
        if message == "Access to this resource is disabled.":
            return HubError(f"{repo_id} is disabled on the Hugging Face hub")
        if code == "RepoNotFound" or (status == 404 and what == "repo"):
            private = "" if self.token else "; if it is private, set HF_TOKEN"
            return _Miss(f"no such repo {repo_id!r} on the Hugging Face hub ({self.site}), and it is not a file or "
                         f"a catalog name{private}")
        if code == "RevisionNotFound":
            return HubError(f"{repo_id} has no such revision on the hub")
        if code == "GatedRepo" or status in (401, 403):
            refused = " (the HF_TOKEN given has no access yet)" if self.token else ""
            return HubError(f"{repo_id} is gated: accept its license on {self.site} and set HF_TOKEN{refused}")
        if code == "EntryNotFound" or status == 404:
            return HubError(f"{repo_id} has no file {what} on the hub (it was listed: the repo may have changed; "
                               f"delete {self._dir(repo_id, DEFAULT_REVISION).parent} and retry)")
        if status == 429:
            return _Miss(f"the Hugging Face hub is rate-limiting requests (HTTP 429 for {repo_id}); set HF_TOKEN "
                         "or try again later")
        if status >= 500:
            return _Miss(f"the Hugging Face hub failed (HTTP {status} for {repo_id}); try again later, or use a "
                         "catalog name, a local config.json or .gguf")
        return HubError(f"the Hugging Face hub answered HTTP {status} for {repo_id} {what}")

    def _call(self, fn: Callable[[], T], repo_id: str, what: str) -> T:
        """Run a request, turning every failure into a one-line OomkitError."""
        try:
            http = _http_module()
            import huggingface_hub  # noqa: F401
        except ImportError:
            raise HubError("reading from the Hugging Face hub needs huggingface_hub (pip install "
                              "huggingface_hub); or use a catalog name, a local config.json or .gguf") from None
        try:
            return fn()
        except OomkitError:
            raise
        except ValueError as e:
            if type(e).__name__ == "HFValidationError":  # a repo id huggingface_hub refuses
                raise HubError(f"{repo_id!r} is not a valid Hugging Face repo id ({_short(e)})") from None
            raise HubError(f"the Hugging Face hub's answer about {repo_id} is malformed ({_short(e)})") from None
        except http.HTTPStatusError as e:
            raise self._status_error(e.response.status_code, e.response.headers, repo_id, what) from None
        except (http.HTTPError, OSError) as e:
            resp = getattr(e, "response", None)
            if resp is not None and getattr(resp, "status_code", None):
                raise self._status_error(resp.status_code, resp.headers, repo_id, what) from None
            raise self._transport_error(e) from None

    # ---- requests ----------------------------------------------------------------------------------------

    def _session(self):
        from huggingface_hub.utils import get_session  # lazy: a catalog estimate never loads huggingface_hub

        return get_session()

    def _headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        from huggingface_hub.utils import build_hf_headers  # lazy (see _session)

        try:
            h = build_hf_headers(token=self.token, library_name="oomkit", library_version=_version())
        except OSError as e:  # the saved token is read from $HF_TOKEN_PATH, else $HF_HOME/token: a file where a
            # folder should be (or the reverse) fails here, and the message names only the path
            raise HubError(f"cannot read the saved Hugging Face token ({e.strerror}: {e.filename}); check HF_HOME "
                           "and HF_TOKEN_PATH, or set HF_TOKEN") from None
        h.update(extra or {})
        return h

    def _url(self, repo_id: str, commit: str, path: str) -> str:
        from huggingface_hub import hf_hub_url  # lazy (see _session)

        return hf_hub_url(repo_id, path, revision=commit, endpoint=self.endpoint)

    def _time_left(self) -> float:
        """Seconds left of the lookup's deadline (started by the first request); past it, a _Miss."""
        now = time.monotonic()
        if self._t_end is None:
            self._t_end = now + self.deadline
        left = self._t_end - now
        if left <= 0:
            raise self._unreachable(f"no complete answer from {self.endpoint} within {self.deadline:g} s "
                                    "(OOMKIT_HUB_DEADLINE)")
        return left

    def _get(self, url: str, repo_id: str, what: str, start: int = 0, end: int | None = None,
             cap: int = MAX_JSON_BYTES) -> tuple[bytes, int | None]:
        """GET bytes [start, end) (all of it when end is None, at most `cap`); returns (body, file size if
        known). Only the bytes asked for are read, even from a server that ignores Range."""
        want = cap if end is None else end - start
        headers = self._headers({"Range": f"bytes={start}-{end - 1}"} if end is not None else None)

        def run() -> tuple[bytes, int | None]:
            timeout = min(self.timeout, self._time_left())
            with self._session().stream("GET", url, headers=headers, timeout=timeout) as r:
                if r.status_code >= 400:
                    if r.status_code == 416:
                        return b"", _total_from_range(r.headers.get("content-range"))
                    raise self._status_error(r.status_code, r.headers, repo_id, what)
                if r.status_code == 206:
                    total = _total_from_range(r.headers.get("content-range"))
                elif start:
                    raise HubError(f"{self.site} ignored a range request for {repo_id}/{what}: cannot read only "
                                      "the header")
                else:
                    total = _int(r.headers.get("x-linked-size")) or _int(r.headers.get("content-length"))
                body = bytearray()
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) >= want:
                        break
                    self._time_left()  # a server sending a byte at a time stops here, not minutes later
                if end is None and len(body) >= cap:
                    raise HubError(f"{repo_id}/{what} on the hub is larger than {cap >> 20} MiB")
                return bytes(body[:want]), total

        return self._call(run, repo_id, what)

    # ---- what the hub knows about a repo -----------------------------------------------------------------

    def repo_info(self, repo_id: str, revision: str = DEFAULT_REVISION) -> RepoInfo:
        """The repo's files and sizes at `revision` (one request: /api/models/{repo}/revision/{rev}?blobs=true)."""
        path = self._dir(repo_id, revision) / "info.json"
        raw = self._cached(path)
        if raw is not None:
            try:
                return _info_from_cache(json.loads(raw))
            except (ValueError, KeyError, TypeError):
                pass  # a damaged cache entry: ask again
        if self.offline:
            raise self._offline_error(repo_id)
        if not _REPO_ID.match(repo_id) or "--" in repo_id or ".." in repo_id:
            raise HubError(f"{repo_id!r} is not a valid Hugging Face repo id")
        # huggingface_hub HfApi.model_info(files_metadata=True) asks the same: GET /api/models/{repo}/revision/{rev}
        # ?blobs=true; read here under the lookup's deadline and a size cap, and its shape checked
        url = f"{self.endpoint}/api/models/{repo_id}/revision/{quote(revision, safe='')}?blobs=true"
        body, _ = self._get(url, repo_id, "repo")
        info = _info_from_answer(body, repo_id, revision)
        self._store(path, json.dumps({"repo_id": info.repo_id, "revision": info.revision, "commit": info.commit,
                                      "files": info.files, "gated": info.gated}).encode())
        return info

    def _small_file(self, info: RepoInfo, name: str, cap: int = MAX_CONFIG_BYTES) -> bytes:
        path = self._dir(info.repo_id, info.revision) / "files" / quote(name, safe="")
        raw = self._cached(path)
        if raw is not None:
            return raw
        if self.offline:
            raise self._offline_error(info.repo_id, name)
        body, _ = self._get(self._url(info.repo_id, info.commit, name), info.repo_id, name, cap=cap)
        self._store(path, body)
        return body

    def _json_file(self, info: RepoInfo, name: str, cap: int = MAX_CONFIG_BYTES) -> Any:
        raw = self._small_file(info, name, cap)
        try:
            return jsonfile.loads(raw, f"{info.repo_id}", f"{name} on the hub")
        except ModelError as e:
            raise HubError(f"{info.repo_id}: {name} on the hub is malformed ({str(e).split(' on the hub ', 1)[-1]})") \
                from None

    def config(self, repo_id: str, revision: str = DEFAULT_REVISION, info: RepoInfo | None = None) -> dict[str, Any]:
        """The repo's config.json."""
        info = info or self.repo_info(repo_id, revision)
        if "config.json" not in info.files:
            raise HubError(f"{repo_id} has no config.json on the hub")
        cfg = self._json_file(info, "config.json")
        if not isinstance(cfg, dict):
            raise HubError(f"{repo_id}: config.json on the hub is malformed (not a JSON object)")
        return cfg

    def _header(self, info: RepoInfo, name: str, parse: Callable[[bytes, int | None], T], first: int,
                exact_need: bool = False) -> T:
        """Parse the header of file `name`, reading only its first bytes (cached). After a first read of `first`
        bytes, each NeedMoreBytes fetches what it asks for: exactly (`exact_need`: safetensors knows its header
        length from the first 8 bytes), else at least half as much again (a GGUF parser only knows the next
        item's end, e.g. of one vocabulary string)."""
        size = info.files.get(name)
        path = self._dir(info.repo_id, info.revision) / "headers" / quote(name, safe="")
        raw = self._cached(path)
        if raw is not None:
            try:
                return parse(raw, size)
            except OomkitError:
                pass  # a damaged cache entry: read again
        if self.offline:
            raise self._offline_error(info.repo_id, f"the header of {name}")
        url = self._url(info.repo_id, info.commit, name)
        buf = b""
        want = first
        while True:
            if size is not None:
                want = min(want, size)
            if want <= len(buf):  # the parser wants bytes the file does not have
                raise HubError(f"{info.repo_id}/{name}: the header does not end within {len(buf)} bytes")
            chunk, total = self._get(url, info.repo_id, name, start=len(buf), end=want)
            if total is not None:
                size = total  # the server's word (Content-Range) over the listing's
            if not chunk:
                raise HubError(f"{info.repo_id}/{name}: the file ends at {len(buf)} bytes, inside its header")
            buf += chunk
            if size is None and len(buf) < want:
                size = len(buf)  # the file ended early and no size was given
            try:
                result = parse(buf, size)
            except NeedMoreBytes as e:
                if len(buf) >= MAX_HEADER_READ:
                    raise HubError(f"{info.repo_id}/{name}: the header does not end within {len(buf)} bytes") from None
                want = e.needed if exact_need else max(e.needed, len(buf) + len(buf) // 2)
                want = min(want, MAX_HEADER_READ)
                continue
            end = getattr(result, "header_bytes", len(buf))
            self._store(path, buf[:end])
            return result

    def safetensors(self, repo_id: str, revision: str = DEFAULT_REVISION, info: RepoInfo | None = None):
        """Every shard header of the repo's safetensors model (a SafetensorsModel), None when it has none."""
        info = info or self.repo_info(repo_id, revision)
        index_meta: dict[str, Any] = {}
        if INDEX_NAME in info.files:
            index = self._json_file(info, INDEX_NAME, MAX_INDEX_BYTES)
            wm = index.get("weight_map") if isinstance(index, dict) else None
            if not isinstance(wm, dict) or not wm or not all(isinstance(v, str) for v in wm.values()):
                raise HubError(f"{repo_id}: {INDEX_NAME} on the hub is malformed (no 'weight_map')")
            shards = sorted(set(wm.values()))
            missing = [s for s in shards if s not in info.files]
            if missing:
                raise HubError(f"{repo_id}: {INDEX_NAME} names shard {missing[0]} that the repo lacks")
            index_meta = index.get("metadata") if isinstance(index.get("metadata"), dict) else {}
        else:
            # One model.safetensors; else the top-level files, less Mistral's consolidated.safetensors (the same
            # weights in mistral-inference's own names, which transformers and vLLM do not load beside them).
            top = sorted(p for p in info.files if p.endswith(".safetensors") and "/" not in p)
            shards = ["model.safetensors"] if "model.safetensors" in top else \
                [p for p in top if not p.startswith("consolidated")] or top
            if not shards:
                return None

        def read(shard: str):
            def parse(buf: bytes, size: int | None):
                return parse_safetensors_header(buf, file_size=size, name=f"{repo_id}/{shard}")

            return shard, self._header(info, shard, parse, SAFETENSORS_FIRST_READ, exact_need=True)

        headers = _parallel(read, shards)
        seen: dict[str, str] = {}
        for shard, h in headers:
            for t in h.tensors:
                if t.name in seen:
                    raise HubError(f"{repo_id}: tensor '{printable(t.name)}' is in both {seen[t.name]} and {shard}")
                seen[t.name] = shard
        return SafetensorsModel(tuple(headers), dict(index_meta))

    def gguf(self, repo_id: str, quant: str | None = None, revision: str = DEFAULT_REVISION,
             info: RepoInfo | None = None) -> HubGGUF:
        """The header of the repo's GGUF for `quant` (all split parts' headers, merged)."""
        info = info or self.repo_info(repo_id, revision)
        file = pick_gguf(repo_id, gguf_quants(info.files), quant)

        def read(i_path: tuple[int, str]):
            i, p = i_path

            def parse(buf: bytes, size: int | None):
                return parse_gguf_header(buf, file_size=size, name=f"{repo_id}/{p}")

            return self._header(info, p, parse, GGUF_FIRST_READ if i == 0 else GGUF_LATER_PART_FIRST_READ)

        headers = _parallel(read, list(enumerate(file.paths)))
        sizes = tuple(info.files.get(p) if info.files.get(p) is not None else h.file_size
                      for p, h in zip(file.paths, headers, strict=True))
        header = headers[0] if len(headers) == 1 else _merge_split(repo_id, file, headers, list(sizes))
        return HubGGUF(repo_id, info.commit, file, header, sizes)


def _seconds(var: str, default: float) -> float:
    raw = os.environ.get(var)
    if not raw:
        return default
    try:
        v = float(raw)
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or v <= 0:
        raise HubError(f"{var}={raw[:40]!r} is not a positive number of seconds")
    return v


def _malformed(repo_id: str, why: str) -> HubError:
    return HubError(f"the Hugging Face hub's answer about {repo_id} is malformed ({why})")


def _size(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise TypeError(f"size {str(v)[:40]!r}")
    return v


def _info_from_answer(body: bytes, repo_id: str, revision: str) -> RepoInfo:
    """/api/models/{repo}/revision/{rev}?blobs=true, its shape checked: {"sha": str, "gated": bool | str,
    "siblings": [{"rfilename": str, "size": int, "lfs": {"size": int}}]}."""
    try:
        d = jsonfile.loads(body, repo_id, "answer")
    except ModelError as e:
        raise _malformed(repo_id, str(e).split(": ", 1)[-1]) from None
    if not isinstance(d, dict):
        raise _malformed(repo_id, f"{jsonfile.kind_of(d)} where an object belongs")
    siblings = d.get("siblings") or []
    if not isinstance(siblings, list):
        raise _malformed(repo_id, f"'siblings' is {jsonfile.kind_of(siblings)}, not a list")
    files: dict[str, int | None] = {}
    for s in siblings:
        name = s.get("rfilename") if isinstance(s, dict) else None
        if not isinstance(name, str) or not name:
            raise _malformed(repo_id, f"a file entry {str(s)[:60]} has no 'rfilename' string")
        lfs = s.get("lfs")
        try:
            files[name] = _size(lfs.get("size") if isinstance(lfs, dict) and lfs.get("size") is not None
                                else s.get("size"))
        except TypeError as e:
            raise _malformed(repo_id, f"{printable(name)} has {e}") from None
    sha, gated = d.get("sha"), d.get("gated", False)
    if sha is not None and not isinstance(sha, str):
        raise _malformed(repo_id, f"'sha' is {jsonfile.kind_of(sha)}, not a string")
    if not isinstance(gated, (bool, str)):
        raise _malformed(repo_id, f"'gated' is {jsonfile.kind_of(gated)}")
    return RepoInfo(repo_id, revision, sha or revision, files, gated)


def _info_from_cache(d: Any) -> RepoInfo:
    """A cached listing, refused (TypeError / KeyError) when damaged, so that the hub is asked again."""
    files = d["files"]
    if not isinstance(files, dict) or not all(isinstance(k, str) for k in files):
        raise TypeError("files")
    info = RepoInfo(d["repo_id"], d["revision"], d["commit"], {k: _size(v) for k, v in files.items()},
                    d.get("gated", False))
    if not all(isinstance(x, str) for x in (info.repo_id, info.revision, info.commit)):
        raise TypeError("names")
    if not isinstance(info.gated, (bool, str)):
        raise TypeError("gated")
    return info


def _parallel(fn: Callable[[Any], T], items: list[Any]) -> list[T]:
    if len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(_WORKERS, len(items))) as pool:
        return list(pool.map(fn, items))


def _total_from_range(value: str | None) -> int | None:
    """"bytes 0-99/12345" -> 12345."""
    if value and "/" in value:
        return _int(value.rsplit("/", 1)[1])
    return None


def _int(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def _short(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:160]


@functools.lru_cache(maxsize=1)
def _version() -> str:
    try:
        from importlib.metadata import version  # lazy: read once, for the User-Agent

        return version("oomkit")
    except Exception:  # noqa: BLE001 - metadata missing in a source checkout
        return "0"


# ----------------------------------------------------------------------------------------------------------
# ModelSpec
# ----------------------------------------------------------------------------------------------------------


def spec_from_hub(ref: str, weight_format: str | None = None, default_format: Callable[[dict], str | None] | None
                  = None, *, revision: str = DEFAULT_REVISION, hint: str = "", client: HubClient | None = None):
    """The ModelSpec of a hub repo `ref` ("org/name", "org/name:QUANT", "hf.co/org/name:QUANT"): a GGUF repo's
    header for the quant asked (the ":QUANT" tag or weight_format), else config.json with the exact weights of
    its safetensors headers (when no format is asked or assumed), or weights computed for the format asked.

    `default_format` as in resolve(); `hint` ("; did you mean ...?") is added to the error when the repo
    cannot be looked up."""
    repo_id, tag = parse_ref(ref)
    if tag and weight_format and tag.lower() != weight_format.lower():
        raise HubError(f"{ref}: two formats given ({tag} and {weight_format}); give one")
    fmt = weight_format or tag
    client = client or HubClient()
    try:
        info = client.repo_info(repo_id, revision)
    except _Miss as e:
        raise HubError(f"{e}{hint}") from None
    short = info.commit[:12]
    ggufs = gguf_quants(info.files)
    has_config = "config.json" in info.files
    has_safetensors = any(p.endswith(".safetensors") for p in info.files)
    # A GGUF repo (GGUFs and no safetensors; a config.json beside them is only informative), or a quant that
    # one of its GGUFs carries; otherwise config.json, with `fmt` as a computed format.
    if ggufs and (not has_safetensors or (fmt is not None and _has_quant(ggufs, fmt))):
        g = client.gguf(repo_id, fmt, revision, info=info)
        parts = f" ({len(g.file.paths)} parts)" if g.file.is_split else ""
        return spec_from_gguf_checked(g.header, name=f"{repo_id}:{g.file.quant}",
                              source=f"hub: {repo_id}@{short} {g.file.paths[0]}{parts}")
    if not has_config:
        raise HubError(f"{repo_id} on the hub has neither a config.json nor a .gguf model file")
    cfg = client.config(repo_id, revision, info=info)
    labels: tuple[str, ...] = ()
    if fmt is None and default_format is not None:
        fmt = default_format(cfg)
        if fmt is not None:
            labels = (f"no quant given: assuming {fmt} weights (name one with :QUANT or --quant)",)
    spec = spec_from_config_checked(cfg, name=repo_id, source=f"hub: {repo_id}@{short} config.json", weight_format=fmt)
    missing = [] if INDEX_NAME in info.files else missing_in_series(p for p in info.files if "/" not in p)
    if fmt is None and missing:
        labels += (f"{missing_text(missing)} from {repo_id} on the hub: weights computed from config.json",)
    elif fmt is None:
        st = client.safetensors(repo_id, revision, info=info)
        if st is not None:
            check_complete(st, repo_id)
            spec = replace(spec, weights=inventory_from_safetensors_model(st),
                           source=spec.source + " + safetensors headers")
        else:
            labels += ("no safetensors on the hub: weight bytes computed from config.json",)
    return replace(spec, labels=spec.labels + labels) if labels else spec


def _has_quant(files: list[GGUFFile], quant: str) -> bool:
    q = quant.upper()
    return any(f.quant == q or f.quant.removeprefix("UD-") == q for f in files)
