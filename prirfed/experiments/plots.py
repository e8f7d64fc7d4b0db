"""Plotting shared by the experiments: a figure of panels, a mean curve with its spread band, and
saving (PNG and PDF through :func:`prirfed.experiments.core.save_figure`, no global pyplot state).

:func:`plot_curve_grid` draws the most common layout (one column per panel, one row per metric, one
curve per series, log axes); the figure-specific layouts in the experiment modules are built from
:func:`new_figure`, :func:`band` and :func:`finish`. matplotlib is imported when a figure is made,
not when an experiment module is imported.
"""

from __future__ import annotations

import numpy as np

from .core import save_figure

__all__ = ["new_figure", "band", "finish", "plot_curve_grid", "place_labels"]


def new_figure(nrows: int, ncols: int, width: float, height: float):
    """(figure, axes as a (nrows, ncols) array) of a new matplotlib Figure of width x height inches."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    return fig, np.array(fig.subplots(nrows, ncols, squeeze=False))


def band(ax, t, mean, std, label=None, lower=None, **plot_kw):
    """The curve ``mean`` over ``t`` and the band mean +- std (its lower edge replaced by ``lower``,
    an array or a scalar floor, where given: on a log axis a band reaching 0 is clipped, not bent)."""
    mean, std = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)
    ax.plot(t, mean, label=label, **plot_kw)
    lo = mean - std if lower is None else np.maximum(mean - std, lower)
    ax.fill_between(t, lo, mean + std, alpha=0.2)


def finish(fig, out, stem: str, data: str | None = None) -> list:
    """Tight layout, then ``out/stem.png`` and ``out/stem.pdf``; returns the file names. ``data``, if
    given, names the data the figure shows, as a title above the panels ("data: ...")."""
    if data:
        fig.suptitle(f"data: {data}", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, out, stem)


def plot_curve_grid(out, stem: str, rows: list, panel_key: str, panels, series_key: str, series, metrics,
                    column_title, label, xlabel: str = "iteration t", width: float = 4.2, height: float = 6.4,
                    data: str | None = None):
    """One column per panel (``row[panel_key]``), one row per metric (``(key, y label)``: the rows hold
    ``key_mean`` and ``key_std``), one curve per series (``row[series_key]``) with its band, log y
    axes with the band floored at 1e-300; ``column_title(panel)`` above each column and
    ``label(series)`` in the legend of the first row; ``data`` names the data (:func:`finish`)."""
    fig, axes = new_figure(len(metrics), len(panels), width * len(panels), height)
    for j, panel in enumerate(panels):
        for value in series:
            sel = [r for r in rows if r[panel_key] == panel and r[series_key] == float(value)]
            t = [r["round"] for r in sel]
            for i, (key, ylabel) in enumerate(metrics):
                ax = axes[i, j]
                band(ax, t, [r[f"{key}_mean"] for r in sel], [r[f"{key}_std"] for r in sel], label(value), 1e-300)
                ax.set_yscale("log")
                ax.set_ylabel(ylabel)
                ax.set_xlabel(xlabel)
        axes[0, j].set_title(column_title(panel))
        axes[0, j].legend()
    return finish(fig, out, stem, data)


#: offsets (points) tried in order for a label: right, left, above, below its point, then diagonals
LABEL_OFFSETS = ((4, 2), (-4, 2), (0, 6), (0, -9), (4, -9), (-4, -9), (4, 8), (-4, 8))


def place_labels(ax, points, texts, avoid=(), **text_kw) -> list:
    """Annotate ``points`` (n x 2, data coordinates) with ``texts`` so that no two labels overlap, no
    label covers a point of ``avoid`` (markers) and none is cut by the axes' frame: each label takes
    the first offset of ``LABEL_OFFSETS`` whose box (measured by the figure's renderer) lies inside
    the axes and meets no earlier label and no avoided point; a label that fits nowhere is left out (a crowded area loses labels, it does not
    garble them). Returns the texts placed. Keyword arguments go to ``ax.annotate``."""
    fig = ax.figure
    if not hasattr(fig.canvas, "get_renderer"):  # a bare Figure (new_figure): measure text with Agg
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    avoid_px = [ax.transData.transform(np.asarray(q, dtype=np.float64)) for q in avoid]
    frame = ax.get_window_extent(renderer)  # labels stay inside the axes (not cut at the frame)
    taken, placed = [], []
    for q, text in zip(np.asarray(points, dtype=np.float64), texts):
        for dx, dy in LABEL_OFFSETS:
            ha = "right" if dx < 0 else ("center" if dx == 0 else "left")
            a = ax.annotate(text, q, xytext=(dx, dy), textcoords="offset points", ha=ha, **text_kw)
            box = a.get_window_extent(renderer).expanded(1.05, 1.1)
            if (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
                    and not any(box.overlaps(b) for b in taken)
                    and not any(box.x0 - 6 <= x <= box.x1 + 6 and box.y0 - 6 <= y <= box.y1 + 6 for x, y in avoid_px)):
                taken.append(box)
                placed.append(text)
                break
            a.remove()
    return placed

