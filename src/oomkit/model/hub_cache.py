"""Where oomkit keeps what it read from the hub, and whether it may ask the hub at all: light enough for
model/resolve.py to ask before importing the hub client (model/hub.py, which holds the layout's documentation)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote, urlsplit

DEFAULT_ENDPOINT = "https://huggingface.co"


def _truthy(v: str | None) -> bool:
    return (v or "").strip().lower() in ("1", "true", "yes", "on")


def is_offline() -> bool:
    """HF_HUB_OFFLINE=1 (or TRANSFORMERS_OFFLINE=1), read now rather than at import."""
    return _truthy(os.environ.get("HF_HUB_OFFLINE")) or _truthy(os.environ.get("TRANSFORMERS_OFFLINE"))


def cache_root() -> Path:
    base = os.environ.get("OOMKIT_CACHE")
    return Path(base).expanduser() / "hub" if base else Path("~/.cache/oomkit/hub").expanduser()


def endpoint() -> str:
    url = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    try:
        urlsplit(url)  # "http://[::1" (an unclosed IPv6 address) raises ValueError wherever the URL is read
    except ValueError as e:
        from ..errors import HubError  # lazy: this module stays import-light

        raise HubError(f"HF_ENDPOINT={url!r} is not a URL ({e})") from None
    return url


def site(endpoint_url: str) -> str:
    return urlsplit(endpoint_url).netloc or endpoint_url


def repo_dir(cache: Path, site_name: str, repo_id: str, revision: str) -> Path:
    """The cache directory of one repo at one revision (as asked, e.g. "main")."""
    host = re.sub(r"[^A-Za-z0-9.-]", "_", site_name)
    return cache / host / repo_id.replace("/", "--") / quote(revision, safe="")


def hub_may_answer(repo_id: str, revision: str = "main") -> bool:
    """False when HF_HUB_OFFLINE keeps oomkit off the hub and its cache holds nothing of `repo_id`."""
    if not is_offline():
        return True
    return repo_dir(cache_root(), site(endpoint()), repo_id, revision).is_dir()
