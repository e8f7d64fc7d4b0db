"""Problems and comparisons shared by the twin tests of tests/verified (one place).

``make_problems(kind, N, seed)`` builds a reference problem, its verified twin and a start point on
the same data: sphere PCA (000 or 002 weights), the SPD Frechet mean, or Stiefel kPCA on St(d, r),
d in 3..5, with at least r records in all (so the optimal subspace, used by the history, is unique)
and rows scaled so that ||A_i|| is about 1 (steps of at most 0.2 then stay well inside the
injectivity radius, where the reference's Newton Log converges). ``stiefel_weights=True`` also
draws kPCA's agent weighting ("uniform" or "samples"), one more draw from the same stream.
``assert_same_history`` is the twin check: every recorded iterate and the output to rtol 1e-10
(atol scaled by the data), f, ||grad f|| and the error to the optimum to 1e-9.
"""

import math

import numpy as np

from prirfed.reference.manifolds import SPD, Sphere, Stiefel
from prirfed.reference.problems.spd_frechet import SPDFrechetMean as RefSPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA as RefSpherePCA
from prirfed.reference.problems.stiefel_kpca import StiefelKPCA as RefStiefelKPCA
from prirfed.verified.problems import SPDFrechetMean, SpherePCA, StiefelKPCA


def make_problems(kind, N, seed, stiefel_weights=False):
    """(reference problem, verified problem, x0) on the same data (see the module docstring)."""
    rng = np.random.default_rng(seed)
    sizes = [int(rng.integers(1, 5)) for _ in range(N)]
    if kind == "stiefel":
        d = int(rng.integers(3, 6))
        r = int(rng.integers(1, d))
        sizes[0] = max(sizes[0], r)
        Z = [rng.standard_normal((k, d)) / math.sqrt(d * k) for k in sizes]
        weights = ("uniform" if rng.random() < 0.5 else "samples") if stiefel_weights else "uniform"
        return RefStiefelKPCA(Z, r, weights), StiefelKPCA(Z, r, weights), Stiefel(d, r).random_point(rng)
    if kind == "sphere":
        D = int(rng.integers(2, 5))
        Z = [rng.standard_normal((k, D)) / math.sqrt(D) for k in sizes]
        paper = "000" if rng.random() < 0.5 else "002"
        return RefSpherePCA(Z, paper), SpherePCA(Z, paper), Sphere(D - 1).random_point(rng)
    n = int(rng.integers(1, 4))
    M = SPD(n)
    Z = [np.stack([M.random_point(rng) for _ in range(k)]) for k in sizes]
    return RefSPDFrechetMean(Z), SPDFrechetMean(Z), M.random_point(rng)


def draw_problems(draw, n_agents, **kw):
    """Inside a ``st.composite``: draw the problem kind, the number of agents N from the strategy
    ``n_agents`` and a seed; returns (kind, N, seed, reference problem, verified problem, x0)."""
    from hypothesis import strategies as st

    kind = draw(st.sampled_from(["sphere", "spd", "stiefel"]))
    N = draw(n_agents)
    seed = draw(st.integers(0, 2**32 - 1))
    return (kind, N, seed, *make_problems(kind, N, seed, **kw))


def scale_of(P, x0):
    """The size of the data and the start point (the absolute tolerances scale with it)."""
    return max(1.0, float(np.max(np.abs(x0))), *(float(np.max(np.abs(z))) for z in P.Z))


def assert_same_history(a, b, scale):
    """Results ``a`` (reference) and ``b`` (verified) agree round by round (see the module docstring)."""
    assert a.history.rounds == b.history.rounds
    for xa, xb in zip(a.history.iterates, b.history.iterates, strict=True):
        np.testing.assert_allclose(xb, xa, rtol=1e-10, atol=1e-10 * scale)
    np.testing.assert_allclose(b.x, a.x, rtol=1e-10, atol=1e-10 * scale)
    for name in ("f", "grad_norm", "dist_to_opt"):
        np.testing.assert_allclose(getattr(b.history, name), getattr(a.history, name), rtol=1e-9, atol=1e-9)


def assert_same_generator(r_ref, r_ver):
    """Both Generators consumed the same draws: same state, same next number."""
    assert r_ref.bit_generator.state == r_ver.bit_generator.state
    assert r_ref.random() == r_ver.random()
