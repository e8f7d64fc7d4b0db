"""The row-by-row contract of the verified batched methods (verified/manifolds/checks.py, BatchRows)
for a manifold that defines no vectorised screens: the mixin's defaults then clear no row, so every
row is validated by the single-point method itself (acceptance, refusal and message from the same
code as a single call). Every shipped verified manifold defines its own screens, so only a manifold
written for this test reaches the defaults.

Known answers: the single calls of the reference sphere, row by row."""

import numpy as np
import pytest

from prirfed.reference.manifolds import Sphere as RefSphere
from prirfed.verified.manifolds.checks import BatchRows


class UnscreenedSphere(BatchRows, RefSphere):
    """The reference sphere with the batch protocol and no screens; its "kernel" is the reference's
    own row loop (the contract does not depend on how the stacked kernel is compiled)."""

    def __init__(self, d):
        super().__init__(d)
        ref = RefSphere(d)
        self._batch_kernels = {"dist": lambda X, Y: np.array([ref.dist(x, y) for x, y in zip(X, Y)])}


def test_without_screens_every_row_is_checked_by_the_single_call():
    """S^3 (ambient 4) with 3 rows: the defaults return one False per row (not per coordinate), the
    valid stack equals the single calls, and a row off the sphere is refused with the single
    call's message for that row."""
    M = UnscreenedSphere(3)
    ref = RefSphere(3)
    assert M._clearly_points(np.zeros((3, 4))).tolist() == [False, False, False]
    assert M._clearly_tangents(np.zeros((3, 4)), np.zeros((3, 4))).tolist() == [False, False, False]
    rng = np.random.default_rng(0)
    X = np.stack([ref.random_point(rng) for _ in range(3)])
    Y = np.stack([ref.random_point(rng) for _ in range(3)])
    np.testing.assert_array_equal(M.dist_batch(X, Y), [ref.dist(x, y) for x, y in zip(X, Y)])
    Y[1] *= 2.0
    with pytest.raises(ValueError) as single:
        ref.dist(X[1], Y[1])
    tail = str(single.value).split("Sphere.dist: ", 1)[1]
    with pytest.raises(ValueError) as batch:
        M.dist_batch(X, Y)
    assert str(batch.value) == f"UnscreenedSphere.dist_batch: row 1: {tail}"
    assert tail.startswith("y: not on the sphere (| ||x|| - 1 | = 1.0e+00")
