"""The first release of an engine that runs an architecture or a feature of one: a table per engine
(vllm/archs.py, sglang/archs.py) of rows read in the released wheels, and the one-line refusal of a release that
predates a row the model needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..errors import OomkitError
from ..model.spec import ModelSpec
from .versions import Version


class FirstRelease(NamedTuple):
    needs: Callable[[ModelSpec], bool]  # does this model need it
    version: Version  # the first release with it
    what: str  # what that release added, as its source shows it


def arch(*names: str) -> Callable[[ModelSpec], bool]:
    return lambda spec: spec.architecture in names


def latent_moe(spec: ModelSpec) -> bool:
    """Nemotron 3 Super's routed experts in a latent width (moe_latent_size)."""
    return spec.architecture == "nemotron_h_moe" and any(
        la.ffn is not None and getattr(la.ffn, "n_embd_latent", 0) for la in spec.layers)


def shared_indexers(spec: ModelSpec) -> bool:
    """GLM-5.2's layers that reuse the previous layer's lightning indexer."""
    return any(la.attention is not None and getattr(la.attention, "indexer_shared", False) for la in spec.layers)


def check(rows: tuple[FirstRelease, ...], spec: ModelSpec, version: Version, program: str,
          name: Callable[[Version], str]) -> None:
    """Refuse a model the release predates (rows checked in order): one line naming the first release that runs it."""
    for row in rows:
        if version < row.version and row.needs(spec):
            first = name(row.version)
            raise OomkitError(f"{spec.name}: {program} {name(version)} has no {row.what}; it runs from {program} "
                              f"{first} (use --engine-version {first} or newer)")
