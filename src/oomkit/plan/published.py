"""Which GGUF files a repo publishes, as far as oomkit knows, so that plan and fit name only formats a `-hf repo:QUANT`
can download.

oomkit keeps no list of its own: the one source is the hub's listing of the repo (/api/models/{repo}, its files at a
commit), which model/hub.py keeps in oomkit's hub cache once it has read the repo. The cache is read here and the hub
never asked, so a plan stays offline and quick. A repo whose listing is not in the cache is unknown: a format planned
for it is kept, labelled as one to make with llama-quantize or to download from another GGUF repo, never stated as
the repo's.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..errors import OomkitError
from ..model.hub_cache import cache_root, endpoint, repo_dir, site

DEFAULT_REVISION = "main"  # what `-hf repo:QUANT` downloads from (model/hub.py DEFAULT_REVISION)

# a GGUF repo as a model argument names it ("org/name-GGUF", "hf.co/org/name-GGUF:Q4_K_M", a hub URL); the name ends
# in -GGUF or _GGUF as engines/llamacpp/knobs.py gguf_repo reads it (a path "./x.gguf" is no repo)
_GGUF_REPO = re.compile(r"^(?:https?://)?(?:(?:hf\.co|huggingface\.co)/)?(?P<repo>[A-Za-z0-9][^/:\s]*/[^/:\s]+?[-_]gguf)/?"
                        r"(?::.*)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Listing:
    """The GGUF quants of one repo at one commit, upper case as the file names spell them ("Q4_K_M", "UD-Q4_K_XL")."""

    repo: str
    commit: str
    quants: frozenset[str]

    @property
    def source(self) -> str:
        return f"the hub's listing of {self.repo}@{self.commit[:12]} (oomkit's hub cache)"

    def offers(self, quant: str) -> bool:
        """Whether a `repo:QUANT` tag finds a file here, as model/hub.py pick_gguf matches it ("Q4_K_XL" also finds
        "UD-Q4_K_XL")."""
        q = quant.upper()
        return any(f == q or f.removeprefix("UD-") == q for f in self.quants)


def gguf_repo_of(model: str | None) -> str | None:
    """The "org/name" of the GGUF repo a model argument names, or None (a tag, a file, a checkpoint repo)."""
    m = _GGUF_REPO.match((model or "").strip())
    return m.group("repo") if m else None


def listing(repo: str) -> Listing | None:
    """The repo's GGUF quants from oomkit's hub cache; None when the cache does not hold its listing. Read once per
    state of the cache file (a server process sees a listing cached after it started)."""
    path = repo_dir(cache_root(), site(endpoint()), repo, DEFAULT_REVISION) / "info.json"
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _read_listing(repo, str(path), stamp)


@functools.lru_cache(maxsize=256)
def _read_listing(repo: str, path: str, stamp: int) -> Listing | None:
    from ..model import hub  # lazy: the hub's reader, only for a repo named as a GGUF repo

    try:
        info = hub.HubClient(offline=True).repo_info(repo, DEFAULT_REVISION)
        files = hub.gguf_quants(info.files)
    except OomkitError:
        return None
    return Listing(repo, info.commit, frozenset(f.quant for f in files))


def published(model: str | None, quant: str | None) -> bool | None:
    """Whether the GGUF repo `model` names has a `quant` file: True or False from its listing, None when unknown
    (not a GGUF repo, no format, or no listing in the cache)."""
    repo = gguf_repo_of(model)
    if repo is None or not quant:
        return None
    found = listing(repo)
    return None if found is None else found.offers(quant)


def unlisted_text(repo: str, quants: list[str]) -> str:
    """The label of formats planned for a repo whose listing oomkit does not have."""
    names = ", ".join(dict.fromkeys(q.upper() for q in quants))
    return (f"{repo}: oomkit does not know which GGUF files it publishes (its hub listing is not in oomkit's cache), "
            f"so {names} may not be there: make them with llama-quantize or download them from another GGUF repo of "
            "the model")
