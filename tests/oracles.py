"""Reference implementations the tests hold oomkit's faster code to."""

from __future__ import annotations

from typing import Any

from oomkit.errors import OomkitError


def bisect_max_context(eng: Any, spec: Any, devs: tuple[Any, ...], settings: Any, step: int = 256) -> int | None:
    """The largest context (a multiple of `step`, at most the trained context) whose estimate fits, by plain
    bisection on the engine's own verdict (MemoryEstimate.fits)."""

    def fits(n: int) -> bool:
        try:
            return bool(eng.estimate(spec, devs, eng.with_context(settings, n)).fits)
        except OomkitError:
            return False

    hi = spec.n_ctx_train or (1 << 20)
    hi -= hi % step
    if hi < step or not fits(step):
        return None
    if fits(hi):
        return hi
    lo = step  # fits(lo) and not fits(hi)
    while hi - lo > step:
        mid = (lo + hi) // 2 // step * step
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo
