"""Shared plotting style: one colour per cell, the same in every figure (docs/experiments.md §5.4)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")                     # headless: figures are files
import matplotlib.pyplot as plt           # noqa: E402
import matplotlib.ticker                  # noqa: E402
import numpy as np                        # noqa: E402

CELL_COLORS = {"rnn": "#7f7f7f", "constgate": "#1f77b4", "sharedgate": "#ff7f0e",
               "diaggate": "#2ca02c", "gru": "#d62728", "lstm": "#9467bd"}
OPT_STYLES = {"adamw": "-", "adam": "-", "sgd": "--", "momentum": "-.", "rmsprop": ":"}


def color(cell):
    return CELL_COLORS.get(cell, "black")


def band_edges(mean, sd, logy=False, floor=None):
    """(lower, upper) edges of the mean ± sd band. Linear axis: mean − sd and mean + sd, the lower
    clipped at ``floor`` when given (a window Ĥ_N is never below 0: floor 0). Log axis (``logy``):
    the upper edge mean + sd and its mirror on the log axis, mean / (1 + sd/mean), so the band is
    symmetric where it is drawn, always > 0 and smooth (mean − sd ≤ 0 no longer notches it)."""
    mean, sd = np.asarray(mean, dtype=float), np.asarray(sd, dtype=float)
    hi = mean + sd
    if logy:
        with np.errstate(divide="ignore", invalid="ignore"):
            lo = np.where(mean > 0, mean * mean / hi, np.nan)
    else:
        lo = mean - sd
    if floor is not None:
        lo = np.maximum(lo, floor)
    return lo, hi


def band(ax, x, ys, label=None, c=None, ls="-", logy=False, floor=None, **line):
    """Mean ± sd over seeds (rows of ys) as a line and a shaded band (edges: :func:`band_edges`);
    ``line``: further keywords of the mean's line (marker, zorder, …); returns (mean, sd)."""
    ys = np.asarray(ys, dtype=float)
    if ys.ndim == 1:
        ys = ys[None]
    with np.errstate(invalid="ignore"):
        mean, sd = np.nanmean(ys, axis=0), np.nanstd(ys, axis=0)
    ax.plot(x, mean, ls, color=c, label=label, **{"lw": 1.5, **line})
    if ys.shape[0] > 1:
        lo, hi = band_edges(mean, sd, logy=logy, floor=floor)
        ax.fill_between(x, lo, hi, color=c, alpha=0.2, lw=0)
    return mean, sd


def subplots(n, ncols=3, size=(4.2, 3.3)):
    nrows = int(np.ceil(n / ncols))
    ncols = min(n, ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:n]


def layout_problems(fig, tol=0.5):
    """Defects a reader sees in ``fig`` at the size it is written (docs/experiments.md §5.4), as
    a list of sentences (empty when none): a legend that lists a label twice, a colour drawn in an
    axes whose figure names no line of that colour in any legend while naming others, tick labels
    of one axis that overlap, text that reaches outside the figure. Draws the figure once to
    measure its text (call after ``tight_layout``); ``tol`` is in pixels."""
    from matplotlib.colors import to_hex
    from matplotlib.figure import Figure
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    problems = []
    axes = [ax for ax in fig.axes if ax.get_visible()]
    named = set()
    for ax in axes:
        leg = ax.get_legend()
        if leg is None:
            continue
        labels = [t.get_text() for t in leg.get_texts()]
        dup = sorted({lab for lab in labels if labels.count(lab) > 1})
        if dup:
            problems.append(f"{ax.get_title()!r}: legend lists {dup} more than once")
        for h in leg.legend_handles:
            getc = getattr(h, "get_color", None) or getattr(h, "get_facecolor", None)
            try:
                named.add(to_hex(getc(), keep_alpha=False))
            except (TypeError, ValueError):
                pass
    for ax in axes:
        # every coloured line of an axes is named in some legend, when the figure has one
        drawn = {to_hex(line.get_color(), keep_alpha=False) for line in ax.get_lines()
                 if line.get_visible()}
        drawn -= {"#000000", "#808080"}                     # reference lines in black and grey
        if named and len(drawn) > 1 and drawn - named:
            problems.append(f"{ax.get_title()!r}: colours {sorted(drawn - named)} are in no legend")
        for axis in (ax.xaxis, ax.yaxis):
            # major and minor labels together: on log axes the minor ones collide with the major
            exts = [t.get_window_extent(renderer) for t in _tick_labels(axis)]
            if any(a.x1 - tol > b.x0 and b.x1 - tol > a.x0 and a.y1 - tol > b.y0 and b.y1 - tol > a.y0
                   for i, a in enumerate(exts) for b in exts[i + 1:]):
                problems.append(f"{ax.get_title()!r}: {axis.axis_name} tick labels overlap")
    texts = [t for ax in axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label,
                                        *_tick_labels(ax.xaxis), *_tick_labels(ax.yaxis))]
    texts += list(fig.texts) + ([fig._suptitle] if getattr(fig, "_suptitle", None) else [])
    for t in texts:
        if not (t.get_visible() and t.get_text()):
            continue
        e = t.get_window_extent(renderer)
        if e.x0 < box.x0 - tol or e.y0 < box.y0 - tol or e.x1 > box.x1 + tol or e.y1 > box.y1 + tol:
            problems.append(f"text {t.get_text()!r} reaches outside the figure")
    return problems


def _tick_labels(axis):
    """The tick labels an axis shows (major and minor, non-empty, inside the view limits)."""
    lo, hi = sorted(axis.get_view_interval())
    ticks = [t for t in axis.get_major_ticks() + axis.get_minor_ticks()
             if lo <= t.get_loc() <= hi and t.label1.get_visible() and t.label1.get_text()]
    return [t.label1 for t in ticks]


class _HideSome(matplotlib.ticker.Formatter):
    """A tick formatter that leaves the labels at ``hidden`` locations empty, others to ``base``."""

    def __init__(self, base, hidden):
        self.base, self.hidden = base, set(hidden)

    def set_axis(self, axis):
        super().set_axis(axis)
        self.base.set_axis(axis)

    def set_locs(self, locs):
        self.base.set_locs(locs)

    def __call__(self, x, pos=None):
        return "" if any(np.isclose(x, h, rtol=1e-9, atol=0) for h in self.hidden) else self.base(x, pos)


def declutter_ticks(fig, tol=0.5):
    """Empty the minor tick labels that would overlap another label of their axis (matplotlib
    labels the minor ticks of a log axis spanning under a decade, e.g. 2×10⁰ 3×10⁰ 4×10⁰ side by
    side, docs/experiments.md §5.4). Major labels are left alone: their overlap is a defect
    ``layout_problems`` reports. Call after ``tight_layout``, before saving."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            shown = lambda ts: [t for t in ts if lo <= t.get_loc() <= hi and t.label1.get_visible()  # noqa: E731
                                and t.label1.get_text()]
            kept = [t.label1.get_window_extent(renderer) for t in shown(axis.get_major_ticks())]
            hidden = []
            for t in shown(axis.get_minor_ticks()):
                e = t.label1.get_window_extent(renderer)
                if any(e.x1 - tol > k.x0 and k.x1 - tol > e.x0 and e.y1 - tol > k.y0 and k.y1 - tol > e.y0
                       for k in kept):
                    hidden.append(t.get_loc())
                else:
                    kept.append(e)
            if hidden:
                axis.set_minor_formatter(_HideSome(axis.get_minor_formatter(), hidden))


def save_figure(fig, data, name, out, figure_id=None):
    """Lay out and write ``fig`` as <out>/<name>.png and its ``data`` as <out>/<name>.json."""
    import io
    from pathlib import Path

    from ..io import atomic_write_bytes, atomic_write_json
    fig.tight_layout()
    declutter_ticks(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(Path(out) / f"{name}.png", buf.getvalue())
    atomic_write_json(Path(out) / f"{name}.json", {"figure": figure_id or name, "data": data})
