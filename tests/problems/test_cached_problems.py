"""The fast problem classes of prirfed.verified.problems.cached equal their reference classes.

Oracle: the reference problem classes (SpherePCA, StiefelKPCA, HyperbolicStructuredPrediction) on the
same data, whose formulas are tested against the papers in tests/problems/. The fast classes only
change how often and in what order f, grad f and the optimum are evaluated, so f and grad f agree to
rounding (rtol 1e-10 to 1e-12) and the optimum, eigenvalues and A are the parent's own values.
Proofs notes: proofs_notes/experiment_rfed_figs.md, proofs_notes/experiment_prirfed_fig5.md.
"""

import numpy as np
import pytest

from prirfed.experiments import hsp_common
from prirfed.reference.problems.hsp import HyperbolicStructuredPrediction
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.problems.stiefel_kpca import StiefelKPCA
from prirfed.verified.problems.cached import BatchedHSP, CachedSpherePCA, CachedStiefelKPCA


def test_cached_problems_agree_with_the_per_agent_sums():
    """The cached subclasses' global f and grad f (through A) equal the parent's sums over agents."""
    rng = np.random.default_rng(3)
    Z = [rng.standard_normal((6, 5)) for _ in range(4)]
    for cached, plain in ((CachedSpherePCA(Z, paper="002"), SpherePCA(Z, paper="002")),
                          (CachedSpherePCA(Z, paper="000"), SpherePCA(Z, paper="000")),
                          (CachedStiefelKPCA(Z, 2), StiefelKPCA(Z, 2))):
        for _ in range(3):
            x = plain.manifold.random_point(rng)
            assert cached.f(x) == pytest.approx(plain.f(x), rel=1e-12, abs=0)
            np.testing.assert_allclose(cached.grad(x), plain.grad(x), rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(cached.optimum(), plain.optimum())
        np.testing.assert_array_equal(cached.eigenvalues(), plain.eigenvalues())
        # the cache hands out copies: a caller cannot corrupt it
        cached.optimum()[:] = 0.0
        np.testing.assert_array_equal(cached.optimum(), plain.optimum())


def test_batched_problem_equals_the_reference():
    """BatchedHSP (batched f, grad and the optimum's start) equals HyperbolicStructuredPrediction."""
    c = hsp_common.make_config("tiny", 5, "reference")
    st = hsp_common.build_setting(c)
    p = st["problem"]
    ref = HyperbolicStructuredPrediction(p.W, p.Y, p.w, gamma=p.gamma, v_bar=p.v_bar, kernel=p.kernel)
    L = p.manifold
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = L.random_point(rng)
        assert p.f(x) == pytest.approx(ref.f(x), rel=1e-11, abs=0)
        g, gr = p.grad(x), ref.grad(x)
        assert L.norm(x, g - gr) <= 1e-10 * max(1.0, L.norm(x, gr)) * x[0] ** 2
    assert L.dist(p.optimum(), ref.optimum()) < 1e-8
    assert L.dist(st["h_w"], ref.optimum()) < 1e-8
    assert isinstance(p, BatchedHSP)
