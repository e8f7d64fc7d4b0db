"""plots.place_labels: labels of nearby points never overlap each other or the markers they must
avoid (boxes measured by matplotlib's Agg renderer, the same that draws the PNG); a crowd loses
labels instead of garbling them. Regression: 000 Fig. 6 printed 'carnivore' over 'placental' and
'primate' under the star marker."""

from __future__ import annotations

import numpy as np

from prirfed.experiments.plots import new_figure, place_labels


def _boxes(ax):
    renderer = ax.figure.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in ax.texts]


def test_two_labels_at_one_point_do_not_overlap_and_avoid_a_marker():
    fig, axes = new_figure(1, 1, 4.0, 4.0)
    ax = axes[0, 0]
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)
    placed = place_labels(ax, [[0.0, 0.0], [0.0, 0.0]], ["carnivore", "placental"], avoid=[[0.1, 0.02]], fontsize=7)
    assert placed == ["carnivore", "placental"]
    a, b = _boxes(ax)
    assert not a.overlaps(b)
    x, y = ax.transData.transform([0.1, 0.02])
    for box in (a, b):
        assert not (box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1)


def test_a_crowd_drops_labels_and_the_kept_ones_are_disjoint():
    fig, axes = new_figure(1, 1, 3.0, 3.0)
    ax = axes[0, 0]
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)
    pts = np.random.default_rng(0).uniform(-0.02, 0.02, size=(30, 2))
    placed = place_labels(ax, pts, [f"node{i}" for i in range(30)], fontsize=7)
    assert 1 <= len(placed) < 30 and len(ax.texts) == len(placed)
    boxes = _boxes(ax)
    assert all(not boxes[i].overlaps(boxes[j]) for i in range(len(boxes)) for j in range(i))


def test_a_label_at_the_right_edge_goes_left_inside_the_frame():
    fig, axes = new_figure(1, 1, 4.0, 4.0)
    ax = axes[0, 0]
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    assert place_labels(ax, [[0.99, 0.5]], ["a_long_label"], fontsize=7) == ["a_long_label"]
    (box,) = _boxes(ax)
    frame = ax.get_window_extent(ax.figure.canvas.get_renderer())
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1
    assert ax.texts[0].get_ha() == "right"
