"""The detection nulls, declared once (docs/statistics.md §3.3.1, §3.3.2; docs/fidelity.md).

A null says what a lag's mean statistic m̄(ℓ) is tested against, and with which of the author's
floors and arithmetic:

  lag     each lag's own spread (the transported noise of the lag's statistic): [A]'s rule, §3.3.1
  full    the spread of the whole per-sequence update along the same directions, §3.3.1
  snr     lag, with the author's SNR floor (σ̂ ≤ 1e−12 → SNR = 0), §3.3.2
  ecf     lag, with the author's tiny-IQR ECF grid, §3.3.2
  floors  lag, with both floors, §3.3.2
  f32     lag, on float32 diagnostics (the author's arithmetic), §3.3.2
  author  lag, with both floors on float32 diagnostics: [A] as its code runs, §3.3.2

:func:`lwsim.window.detect` turns each into a detection table; the figures' studies and
``lwsim.analyze`` both take their nulls from here.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Null:
    """One detection null: ``noise`` ("lag" or "full", :func:`lwsim.stats.detection_table`'s),
    ``float32`` (the matched statistic recomputed in float32), ``floors`` (the author's floors it
    applies) and the docs section that defines it.

    See docs/statistics.md §3.3.1.
    """

    name: str
    noise: str
    float32: bool
    floors: tuple
    section: str


NULLS = {n.name: n for n in (
    Null("lag", "lag", False, (), "docs/statistics.md §3.3.1"),
    Null("full", "full", False, (), "docs/statistics.md §3.3.1"),
    Null("snr", "lag", False, ("snr",), "docs/statistics.md §3.3.2"),
    Null("ecf", "lag", False, ("ecf",), "docs/statistics.md §3.3.2"),
    Null("floors", "lag", False, ("snr", "ecf"), "docs/statistics.md §3.3.2"),
    Null("f32", "lag", True, (), "docs/statistics.md §3.3.2"),
    Null("author", "lag", True, ("snr", "ecf"), "docs/statistics.md §3.3.2"),
)}
NULL_NAMES = tuple(NULLS)


def get_null(name) -> Null:
    """The :class:`Null` called ``name``; a ValueError naming the choices otherwise.

    See docs/statistics.md §3.3.1.
    """
    if name not in NULLS:
        raise ValueError(f"null: {name!r} is not one of {', '.join(NULL_NAMES)}")
    return NULLS[name]
