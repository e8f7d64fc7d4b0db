"""Trainers on the papers' curved problems: convergence without noise, staying on the manifold,
reproducibility from a seed, and the noise really being N_x(0, sigma^2) (Lemma A.3 of 000).

Statistical tests use fixed seeds; their false-alarm probabilities are stated in each docstring.
"""

import math

import numpy as np
import pytest
from scipy import stats

from prirfed.reference.problems.spd_frechet import SPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.trainers.local import dp_rsgd_local, dp_rsvrg_local
from prirfed.reference.trainers.prirfed import prirfed
from prirfed.reference.trainers.rfed import rfedavg, rfedprox, rfedsvrg
from prirfed.reference.trainers.rgd import dp_rgd, rgd


def sphere_problem(seed=0, N=4, n_i=12, D=5, homogeneous=False):
    """Spiked covariance: a clear eigengap so that every trainer converges in a few dozen rounds.

    ``homogeneous=True`` gives every agent the same data, so every local optimum is the global one
    and multi-step local training has no client drift.
    """
    rng = np.random.default_rng(seed)
    scales = np.array([3.0] + [1.0] * (D - 1))
    Z = [rng.standard_normal((n_i, D)) * scales / math.sqrt(D) for _ in range(N)]
    if homogeneous:
        Z = [Z[0]] * N
    return SpherePCA(Z), rng


def spd_problem(seed=0, N=3, n_i=4, n=2):
    rng = np.random.default_rng(seed)
    Z = []
    for _ in range(N):
        A = rng.standard_normal((n_i, n, n)) * 0.4
        Z.append(np.array([_expm_sym(0.5 * (a + a.T)) for a in A]))
    return SPDFrechetMean(Z, c=0.5), rng


def _expm_sym(S):
    w, V = np.linalg.eigh(S)
    return (V * np.exp(w)) @ V.T


def sphere_err(P, x):
    """Distance to the optimum up to sign (the eigenvector is defined up to sign)."""
    M = P.manifold
    return min(M.dist(x, P.x_star), M.dist(x, -P.x_star))


def test_prirfed_dp_rsgd_converges_without_noise_on_sphere_pca():
    P, rng = sphere_problem()
    r = prirfed(P, P.manifold.random_point(rng), T=200, s=P.N, alpha=0.3, rng=np.random.default_rng(1), K=1)
    assert sphere_err(P, r.x) < 1e-8  # full batch, full participation: RGD
    H, rng = sphere_problem(homogeneous=True)
    r = prirfed(H, H.manifold.random_point(rng), T=60, s=2, alpha=0.3, rng=np.random.default_rng(1), K=3)
    assert sphere_err(H, r.x) < 1e-8  # several local steps, no drift when agents agree


def test_prirfed_dp_rsvrg_converges_without_noise_on_sphere_pca():
    H, rng = sphere_problem(1, homogeneous=True)
    r = prirfed(H, H.manifold.random_point(rng), T=40, s=1, alpha=0.1, rng=np.random.default_rng(2),
                local="dp_rsvrg", K=3, m=10)
    assert sphere_err(H, r.x) < 1e-8  # variance reduction: the stochastic inner steps converge exactly


def test_prirfed_converges_without_noise_on_spd_frechet_mean():
    P, rng = spd_problem()
    x0 = np.eye(2) * 2.0
    r = prirfed(P, x0, T=80, s=P.N, alpha=0.5, rng=np.random.default_rng(0), K=1)
    assert P.manifold.dist(r.x, P.x_star) < 1e-9


def test_rfedsvrg_rfedavg_rfedprox_rgd_converge_without_noise():
    P, rng = sphere_problem(2)
    x0 = P.manifold.random_point(rng)
    r = rfedsvrg(P, x0, T=150, k=2, eta=0.2, tau=3, rng=np.random.default_rng(0))
    assert sphere_err(P, r.x) < 1e-6  # 002: RFedSVRG corrects client drift
    g = rgd(P, x0, 0.3, T=200)
    assert sphere_err(P, g.x) < 1e-8
    g = rgd(P, x0, 2.0, T=60, armijo=True)
    assert sphere_err(P, g.x) < 1e-8
    a = rfedavg(P, x0, T=150, k=P.N, eta=0.1, tau=1, rng=np.random.default_rng(0))
    assert sphere_err(P, a.x) < 1e-6  # tau = 1 and full participation: no drift
    p = rfedprox(P, x0, T=150, k=P.N, eta=0.1, tau=1, mu=0.5, rng=np.random.default_rng(0))
    assert sphere_err(P, p.x) < 1e-6


def test_every_private_trainer_stays_on_the_manifold():
    for P, rng in (sphere_problem(3), spd_problem(3)):
        M = P.manifold
        x0 = M.random_point(rng)
        runs = [
            prirfed(P, x0, T=5, s=2, alpha=0.05, rng=rng, K=2, b=2, sigma=0.5, tau=1.0, keep_iterates=True, record_every=1),
            prirfed(P, x0, T=5, s=2, alpha=0.05, rng=rng, local="dp_rsvrg", K=2, m=3, sigma=0.5, tau=1.0, option=2,
                    keep_iterates=True, record_every=1),
            dp_rgd(P, x0, 0.05, T=5, b=3, sigma=0.5, rng=rng, tau=1.0, output=3, keep_iterates=True, record_every=1),
        ]
        for r in runs:
            M.check_point(r.x)
            for x in r.history.iterates:
                M.check_point(x)


def test_same_seed_same_run_bit_for_bit():
    P, rng = sphere_problem(4)
    x0 = P.manifold.random_point(rng)
    kw = dict(T=6, s=2, alpha=0.05, K=2, b=3, sigma=0.3, tau=1.0, option=2)
    a = prirfed(P, x0, rng=np.random.default_rng(123), **kw)
    b = prirfed(P, x0, rng=np.random.default_rng(123), **kw)
    c = prirfed(P, x0, rng=np.random.default_rng(124), **kw)
    assert np.array_equal(a.x, b.x) and a.history.f == b.history.f
    assert not np.array_equal(a.x, c.x)


def test_option_2_returns_one_of_the_iterates():
    P, rng = sphere_problem(5)
    x0 = P.manifold.random_point(rng)
    r = prirfed(P, x0, T=5, s=1, alpha=0.05, rng=rng, K=1, sigma=0.2, tau=1.0, option=2, keep_iterates=True, record_every=1)
    assert any(np.array_equal(r.x, it) for it in r.history.iterates[1:])


def test_noise_really_added_lemma_a3():
    """One DP-RSGD step at a fixed x: eta = -Log_x(x_1)/alpha (exact: alpha ||eta|| < pi).

    Lemma A.3 of 000: E[eta] = grad f_i(x) (over batch and noise) and E||eta||^2 <= L_f^2 + d sigma^2.
    Checks, with 4000 seeded draws: (a) each basis coordinate of eta - grad f_i(x) has mean 0
    (z-test, two-sided, Bonferroni over d coordinates, total false-alarm 1e-4; the batch term's
    variance is included by using the sample variance); (b) with b = N_i (no batch randomness) the
    coordinates of eta - grad f_i(x) are N(0, sigma^2): sum of squares / sigma^2 ~ chi^2(4000 d),
    two-sided at false-alarm 1e-4; (c) the second-moment bound with the problem's L_f.
    """
    P, rng = sphere_problem(6, N=2, n_i=8)
    M = P.manifold
    x = M.random_point(rng)
    sigma, alpha, n = 0.7, 1e-3, 4000
    g = P.rgrad_i(x, 0)
    E = M.tangent_basis(x)
    d = M.dim

    def etas(b):
        out = np.empty((n, d))
        r = np.random.default_rng(99 + b)
        for k in range(n):
            x1 = dp_rsgd_local(P, 0, x, 1, b, sigma, math.inf, alpha, r)
            eta = -M.log(x, x1) / alpha
            out[k] = [M.inner(x, eta - g, e) for e in E]
        return out

    Yb = etas(3)
    z = Yb.mean(axis=0) / (Yb.std(axis=0, ddof=1) / math.sqrt(n))
    assert np.all(np.abs(z) < stats.norm.isf(1e-4 / (2 * d)))
    Yf = etas(P.sizes[0])
    q = float(np.sum(Yf**2) / sigma**2)
    dof = n * d
    assert stats.chi2.ppf(0.5e-4, dof) < q < stats.chi2.isf(0.5e-4, dof)
    # (c) E||eta||^2 <= L_f^2 + d sigma^2 (estimate + 4 standard errors)
    sq = np.sum((Yb + np.array([M.inner(x, g, e) for e in E])) ** 2, axis=1)
    assert sq.mean() - 4 * sq.std() / math.sqrt(n) <= P.L_f ** 2 + d * sigma**2


def test_dp_rsvrg_inner_noise_statistics():
    """DP-RSVRG with m = 1 at a fixed point: eta - g ~ N_x(0, sigma^2) exactly (chi^2, false alarm 1e-4)."""
    P, rng = sphere_problem(7, N=2, n_i=8)
    M = P.manifold
    x = M.random_point(rng)
    sigma, alpha, n = 0.5, 1e-3, 3000
    g = P.rgrad_i(x, 1)
    E = M.tangent_basis(x)
    r = np.random.default_rng(5)
    Y = np.empty((n, M.dim))
    for k in range(n):
        x1 = dp_rsvrg_local(P, 1, x, 1, 1, sigma, math.inf, math.inf, alpha, r)
        eta = -M.log(x, x1) / alpha
        Y[k] = [M.inner(x, eta - g, e) for e in E]
    q = float(np.sum(Y**2) / sigma**2)
    dof = n * M.dim
    assert stats.chi2.ppf(0.5e-4, dof) < q < stats.chi2.isf(0.5e-4, dof)


def test_rfedprox_gradient_sign_pulls_towards_server_point():
    """ERRATA lead 14: grad of (mu/2) d^2(., x_t) is -mu Log_x(x_t); a small step along -grad h
    with f_i = 0 decreases d(x, x_t) (the authors' +Log sign increases it)."""
    from prirfed.reference.manifolds import Sphere
    from prirfed.reference.trainers.rfed import prox_gradient

    M = Sphere(3)
    rng = np.random.default_rng(0)
    x, xt = M.random_point(rng), M.random_point(rng)
    g = prox_gradient(M, x, xt, np.zeros(4), mu=1.0)
    assert M.dist(M.exp(x, -0.01 * g), xt) < M.dist(x, xt)
    wrong = M.log(x, xt)  # the authors' sign
    assert M.dist(M.exp(x, -0.01 * wrong), xt) > M.dist(x, xt)
    # and it is the gradient: d/dt (1/2) d^2(Exp_x(t v), xt) = <g, v> (central difference)
    v = M.random_tangent(x, rng)
    h = 1e-6
    fd = (0.5 * M.dist(M.exp(x, h * v), xt) ** 2 - 0.5 * M.dist(M.exp(x, -h * v), xt) ** 2) / (2 * h)
    assert fd == pytest.approx(M.inner(x, g, v), rel=1e-6, abs=1e-9)
