"""The tangent Gaussian N_x(mu, sigma^2): log-density, normalisation (ERRATA lead 5), the exact
basis sampler, the SPD closed form, and the Metropolis-Hastings baseline.

Statistical tests use fixed seeds; each states its false-alarm probability (the probability
that a correct sampler fails it, for a fresh seed).
"""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from mech_cases import CASES, coordinates, gaussian_law_pvalues, point, random_orthonormal_frame
from prirfed.reference import mechanisms as R
from prirfed.verified import mechanisms as V
from prirfed.reference.manifolds import Euclidean

seeds = st.integers(0, 2**32 - 1)
sigmas = st.floats(0.05, 5.0)
ids = [c.name for c in CASES]
SPD_CASES = [c for c in CASES if type(c.ref).__name__ == "SPD"]


# ----------------------------------------------------------------------------- normalisation
def _manifolds_of_dim_2():
    out = [Euclidean(2)]
    from mech_cases import _exists
    import importlib
    for mod, cls in (("sphere", "Sphere"), ("lorentz", "Lorentz")):
        if _exists(f"prirfed.reference.manifolds.{mod}"):
            out.append(getattr(importlib.import_module(f"prirfed.reference.manifolds.{mod}"), cls)(2))
    return out


@pytest.mark.parametrize("M", _manifolds_of_dim_2(), ids=repr)
@pytest.mark.parametrize("sigma", [0.3, 1.7])
def test_density_integrates_to_one_in_dimension_2(M, sigma):
    """exp(logpdf) integrated over T_x (orthonormal coordinates, numerical quadrature over
    |c_k| <= 12 sigma) equals 1 to 1e-8; the printed constant of 000,
    C^{-1} = sqrt((2 pi)^d sigma^2), makes it sigma^{d-1} = sigma instead (ERRATA lead 5)."""
    x = point(M, 3)
    E = M.tangent_basis(x)
    mu = 0.4 * sigma * E[0] - 0.2 * sigma * E[1]

    # tensor Gauss-Legendre rule on [-12 sigma, 12 sigma]^2 (tail mass outside < 1e-30; the
    # integrand is entire, 80 nodes per axis integrate it to ~1e-13)
    t, w = np.polynomial.legendre.leggauss(80)
    lim = 12 * sigma
    c, w = lim * t, lim * w
    total = 0.0
    for i in range(80):
        for j in range(80):
            xi = c[i] * E[0] + c[j] * E[1]
            total += w[i] * w[j] * math.exp(R.tangent_gaussian_logpdf(M, x, xi, sigma, mu=mu))
    assert abs(total - 1.0) < 1e-8, total
    # the printed normaliser: density exp(-r^2/(2 sigma^2)) / sqrt((2 pi)^2 sigma^2)
    printed = total * math.exp(R.tangent_gaussian_log_normalizer(2, sigma)) / math.sqrt((2 * math.pi) ** 2 * sigma**2)
    assert abs(printed - sigma) < 1e-8 and abs(printed - 1.0) > 0.29


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("sigma", ["0.25", "1", "3.5"])
def test_normaliser_matches_mpmath_radial_integral(d, sigma):
    """Oracle at 50 digits: int_{R^d} exp(-|c|^2/(2 s^2)) dc = |S^{d-1}| int_0^inf r^{d-1} e^{-r^2/(2s^2)} dr
    equals (2 pi s^2)^{d/2} = exp(tangent_gaussian_log_normalizer(d, s)) to 1e-14 relative;
    the printed sqrt((2 pi)^d s^2) differs unless s = 1 or d = 1 (ERRATA lead 5)."""
    with mp.workdps(50):
        s = mp.mpf(sigma)
        area = 2 * mp.pi ** (mp.mpf(d) / 2) / mp.gamma(mp.mpf(d) / 2)
        C = area * mp.quad(lambda r: r ** (d - 1) * mp.exp(-r * r / (2 * s * s)), [0, s, 10 * s, mp.inf])
        printed = mp.sqrt((2 * mp.pi) ** d * s * s)
    ours = math.exp(R.tangent_gaussian_log_normalizer(d, float(s)))
    assert abs(ours / float(C) - 1) < 1e-14
    if d > 1 and sigma != "1":
        assert abs(printed / C - 1) > 0.1


@pytest.mark.parametrize("case", CASES, ids=ids)
@given(seed=seeds, sigma=sigmas)
def test_logpdf_equals_multivariate_normal_in_orthonormal_coordinates(case, seed, sigma):
    """log p_x(xi) = scipy.stats.multivariate_normal(mu_coords, sigma^2 I).logpdf(xi_coords), the
    coordinates read with M.inner in an independent orthonormal frame (peer oracle)."""
    M = case.ref
    rng = np.random.default_rng(seed)
    x = M.random_point(rng)
    xi, mu = sigma * M.random_tangent(x, rng), sigma * M.random_tangent(x, rng)
    F = random_orthonormal_frame(M, x, rng)
    cx = np.array([M.inner(x, xi, f) for f in F])
    cm = np.array([M.inner(x, mu, f) for f in F])
    want = stats.multivariate_normal(cm, sigma**2 * np.eye(M.dim)).logpdf(cx)
    got = R.tangent_gaussian_logpdf(M, x, xi, sigma, mu=mu)
    assert abs(got - want) <= 1e-9 * max(1.0, abs(want))


# ----------------------------------------------------------------------------- exact sampler
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_basis_sampler_law(case):
    """Coordinates of 3000 samples (mu subtracted) in an independent orthonormal frame are iid
    N(0, sigma^2 I_d): covariance LRT, per-coordinate KS (Bonferroni) and the exact chi^2_{nd}
    test of sum ||xi - mu||_x^2 / sigma^2 (E||xi||^2 = d sigma^2), each at level 2e-4, plus a
    z-test of the mean (level 2e-4, Bonferroni over coordinates). False-alarm probability of the
    whole test <= 8e-4. Fixed seed."""
    M = case.ref
    rng = np.random.default_rng(20261121)
    x = M.random_point(rng)
    sigma = 0.7
    mu = 0.5 * M.random_tangent(x, rng)
    xi = R.sample_tangent_gaussian(M, x, sigma, rng, mu=mu, size=3000)
    F = random_orthonormal_frame(M, x, rng)
    C = coordinates(M, x, F, xi - mu)
    p = gaussian_law_pvalues(C, sigma)
    assert min(p.values()) > 2e-4, p
    # the mean: coordinates of xi (with mu) average to those of mu
    Cm = coordinates(M, x, F, xi).mean(axis=0) - coordinates(M, x, F, mu[None])[0]
    zmax = float(np.max(np.abs(Cm)) * math.sqrt(3000) / sigma)
    assert zmax < stats.norm.isf(1e-4 / M.dim), zmax
    # the norm through M.norm itself (not only the flattened functional)
    n2 = np.array([M.norm(x, v) ** 2 for v in xi[:500] - mu])
    q = n2.sum() / sigma**2
    assert stats.chi2.sf(q, 500 * M.dim) > 1e-4 and stats.chi2.cdf(q, 500 * M.dim) > 1e-4


@pytest.mark.parametrize("case", CASES, ids=ids)
@given(seed=seeds, sigma=sigmas)
def test_draw_order_contract_and_batch_equals_sequential(case, seed, sigma):
    """xi = sum_k z_k e_k with z = sigma * rng.standard_normal(d) from ONE call; size=n consumes
    the stream like n successive calls; samples are tangent."""
    M = case.ref
    x = M.random_point(np.random.default_rng(seed))
    E = M.tangent_basis(x)
    z = sigma * np.random.default_rng(seed + 1).standard_normal(M.dim)
    xi = R.sample_tangent_gaussian(M, x, sigma, np.random.default_rng(seed + 1))
    scale = max(1.0, float(np.max(np.abs(E)))) * sigma
    assert np.max(np.abs(xi - np.tensordot(z, E, axes=1))) <= 1e-12 * scale * M.dim
    M.check_tangent(x, xi)
    rng = np.random.default_rng(seed + 2)
    seq = [R.sample_tangent_gaussian(M, x, sigma, rng) for _ in range(4)]
    bat = R.sample_tangent_gaussian(M, x, sigma, np.random.default_rng(seed + 2), size=4)
    assert bat.shape == (4, *M.ambient_shape)
    assert np.max(np.abs(bat - np.array(seq))) <= 1e-12 * scale * M.dim


def test_euclidean_sampler_is_sigma_times_standard_normal():
    """Known answer: on R^d with the identity basis the sample IS sigma * z (bit for bit) + mu."""
    M = Euclidean(5)
    mu = np.arange(5.0)
    got = R.sample_tangent_gaussian(M, np.zeros(5), 0.3, np.random.default_rng(7), mu=mu)
    np.testing.assert_array_equal(got, 0.3 * np.random.default_rng(7).standard_normal(5) + mu)


def test_mechanism_adds_noise_to_the_value():
    """tangent_gaussian_mechanism = value + sample_tangent_gaussian with the same draws."""
    M = Euclidean(3)
    v = np.array([1.0, -2.0, 0.5])
    a = R.tangent_gaussian_mechanism(M, np.zeros(3), v, 0.4, np.random.default_rng(1))
    b = v + R.sample_tangent_gaussian(M, np.zeros(3), 0.4, np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- SPD closed form
@pytest.mark.parametrize("case", SPD_CASES, ids=[c.name for c in SPD_CASES])
@given(seed=seeds, sigma=sigmas)
def test_spd_closed_form_equals_basis_sampler_draw_for_draw(case, seed, sigma):
    """X^{1/2} S X^{1/2} with S from the same draws equals sum_k z_k E_k (SPD.tangent_basis uses
    the same upper-triangle row-major order): the two samplers are the same map of z."""
    M = case.ref
    X = M.random_point(np.random.default_rng(seed))
    a = R.sample_tangent_gaussian_spd(M, X, sigma, np.random.default_rng(seed + 1))
    b = R.sample_tangent_gaussian(M, X, sigma, np.random.default_rng(seed + 1))
    assert np.max(np.abs(a - b)) <= 1e-12 * sigma * max(1.0, float(np.max(np.abs(X)))) * M.dim
    np.testing.assert_array_equal(a, a.T)


@pytest.mark.parametrize("case", SPD_CASES, ids=[c.name for c in SPD_CASES])
@given(seed=seeds)
def test_spd_closed_form_covariance_is_sigma2_identity_exactly(case, seed):
    """Covariance computed exactly, not sampled: xi = L z with L the linear map
    z -> X^{1/2} spd_symmetric_noise(z) X^{1/2}; in an independent orthonormal frame (read with
    M.inner) the matrix J of L satisfies J J^T = I, so Cov = sigma^2 J J^T = sigma^2 I."""
    M = case.ref
    rng = np.random.default_rng(seed)
    X = M.random_point(rng)
    w, Q = np.linalg.eigh(X)
    Xh = (Q * np.sqrt(w)) @ Q.T
    F = random_orthonormal_frame(M, X, rng)
    J = np.empty((M.dim, M.dim))
    for j in range(M.dim):
        e = np.zeros(M.dim)
        e[j] = 1.0
        L = Xh @ R.spd_symmetric_noise(e, M.n) @ Xh
        L = 0.5 * (L + L.T)
        J[:, j] = [M.inner(X, L, f) for f in F]
    assert np.max(np.abs(J @ J.T - np.eye(M.dim))) < 1e-9


@pytest.mark.parametrize("case", SPD_CASES, ids=[c.name for c in SPD_CASES])
def test_spd_closed_form_law(case):
    """3000 closed-form samples: coordinates in an independent orthonormal frame pass the
    covariance LRT, KS and chi^2 tests at level 2e-4 each (false alarm <= 6e-4). Fixed seed."""
    M = case.ref
    rng = np.random.default_rng(11)
    X = M.random_point(rng)
    xi = np.array([R.sample_tangent_gaussian_spd(M, X, 1.3, rng) for _ in range(3000)])
    C = coordinates(M, X, random_orthonormal_frame(M, X, rng), xi)
    p = gaussian_law_pvalues(C, 1.3)
    assert min(p.values()) > 2e-4, p


# ----------------------------------------------------------------------------- MH baseline
def _mh_cases():
    out = []
    for c in CASES:
        if c.ver is not None:
            out.append(pytest.param(c, None, "verified", id=f"{c.name}-orthonormal-chart-verified"))
        if type(c.ref).__name__ == "SPD":
            out.append(pytest.param(c, None, "reference", id=f"{c.name}-orthonormal-chart-reference"))
        if type(c.ref).__name__ == "SPD":
            out.append(pytest.param(c, "paper", "reference", id=f"{c.name}-paper-chart-reference"))
            if c.ver is not None:
                out.append(pytest.param(c, "paper", "verified", id=f"{c.name}-paper-chart-verified"))
    return out


@pytest.mark.parametrize("case,chart,twin", _mh_cases())
def test_mh_chain_targets_the_tangent_gaussian(case, chart, twin):
    """One random-walk MH chain of 1000 + 1500 * 100 steps from the mode, burn-in 1000, thinned
    every 100 steps (from the mode the chain is at stationarity to KS resolution after ~100
    steps in these dimensions, so thinned states are nearly independent): ||xi||_x^2 / sigma^2
    is chi^2_d (KS, level 1e-3) and the coordinates in an independent orthonormal frame pass the
    covariance LRT (level 1e-3). False-alarm probability about 2e-3 (up to the residual
    dependence of the thinned chain). The chart "paper" is 001's r(r+1)/2 matrix entries on SPD
    (non-orthonormal: the metric enters through ||xi||_W as the paper says). The verified twin is
    equal draw for draw (test_mech_verified.py); the reference itself is run on SPD."""
    M = case.ref if twin == "reference" else case.ver
    mod = R if twin == "reference" else V
    rng = np.random.default_rng(5)
    x = M.random_point(rng)
    sigma = 0.8
    F = R.symmetric_matrix_chart(M.n) if chart == "paper" else None
    chain, acc = mod.sample_tangent_gaussian_mh(M, x, sigma, rng, 1000 + 1500 * 100, chart=F,
                                                return_acceptance=True, return_chain=True)
    samples = chain[1000 + 99::100]
    assert samples.shape[0] == 1500
    Mr = case.ref
    n2 = np.array([Mr.norm(x, v) ** 2 for v in samples]) / sigma**2
    assert stats.kstest(n2, "chi2", args=(M.dim,)).pvalue > 1e-3
    C = coordinates(Mr, x, random_orthonormal_frame(Mr, x, rng), samples)
    n, d = C.shape
    S = C.T @ C / n / sigma**2
    lrt = n * (np.trace(S) - np.linalg.slogdet(S)[1] - d)
    assert stats.chi2.sf(lrt, d * (d + 1) // 2) > 1e-3
    assert 0.1 < acc < 0.9


def test_mh_start_and_chart_validation():
    """A chart that is not a basis is refused; xi0 is the state after 0 accepted moves."""
    M = Euclidean(2)
    with pytest.raises(ValueError, match="not a basis"):
        R.sample_tangent_gaussian_mh(M, np.zeros(2), 1.0, np.random.default_rng(0), 5,
                                     chart=np.array([[1.0, 0.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="chart has shape"):
        R.sample_tangent_gaussian_mh(M, np.zeros(2), 1.0, np.random.default_rng(0), 5, chart=np.eye(3))
    # a step so large that every proposal is rejected: the chain stays at xi0
    xi0 = np.array([0.1, -0.2])
    out = R.sample_tangent_gaussian_mh(M, np.zeros(2), 1e-3, np.random.default_rng(0), 20,
                                       step_size=1e6, xi0=xi0)
    np.testing.assert_allclose(out, xi0, rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("sigma", [0.0, -1.0, math.nan, math.inf, "a"])
def test_bad_sigma_raises(sigma):
    M = Euclidean(2)
    x = np.zeros(2)
    for call in (
        lambda: R.sample_tangent_gaussian(M, x, sigma, np.random.default_rng(0)),
        lambda: R.tangent_gaussian_logpdf(M, x, x, sigma),
        lambda: R.tangent_gaussian_mechanism(M, x, x, sigma, np.random.default_rng(0)),
        lambda: R.sample_tangent_gaussian_mh(M, x, sigma, np.random.default_rng(0), 3),
    ):
        with pytest.raises(ValueError, match="sigma"):
            call()


def test_bad_rng_manifold_point_tangent_size_raise():
    M = Euclidean(2)
    x = np.zeros(2)
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        R.sample_tangent_gaussian(M, x, 1.0, np.random.RandomState(0))
    with pytest.raises(ValueError, match="Manifold"):
        R.sample_tangent_gaussian("R^2", x, 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="sample_tangent_gaussian: x has shape"):
        R.sample_tangent_gaussian(M, np.zeros(3), 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="tangent_gaussian_logpdf: xi has 1 non-finite"):
        R.tangent_gaussian_logpdf(M, x, np.array([np.nan, 0.0]), 1.0)
    with pytest.raises(ValueError, match="size"):
        R.sample_tangent_gaussian(M, x, 1.0, np.random.default_rng(0), size=0)
    with pytest.raises(ValueError, match="n_steps"):
        R.sample_tangent_gaussian_mh(M, x, 1.0, np.random.default_rng(0), 0)
    with pytest.raises(ValueError, match="d must be a positive integer"):
        R.tangent_gaussian_log_normalizer(0, 1.0)
    with pytest.raises(ValueError, match="SPD"):
        R.sample_tangent_gaussian_spd(M, x, 1.0, np.random.default_rng(0))


def test_overflowing_differences_densities_and_draws_are_refused_with_the_function_named():
    """Hand-computed overflows on R^2 (orthonormal basis e_1, e_2): xi - mu = 3e308 > 1.797e308;
    ||xi|| / sigma = 1e200 / 1e-10 = 1e210, whose square 1e420 leaves float64 (the log-density
    -5e419 is below -1.8e308); sigma z_k with sigma = 1.7e308 overflows when |z_k| > 1.797 / 1.7 =
    1.057 (seed 3 draws z = (2.04, -2.56), read from the same generator); seed 1 draws z =
    (0.346, 0.822), a finite noise, but the release 1.5e308 + 0.346 * 1.7e308 = 2.09e308 overflows."""
    M, x = Euclidean(2), np.zeros(2)
    with pytest.raises(ValueError, match=r"^tangent_gaussian_logpdf: xi - mu overflows float64$"):
        R.tangent_gaussian_logpdf(M, x, np.array([1.5e308, 0.0]), 1.0, mu=np.array([-1.5e308, 0.0]))
    with pytest.raises(ValueError, match=r"^tangent_gaussian_logpdf: the log-density is below the float64 range "
                                         r"\(\|\|xi - mu\|\|_x / sigma = 1\.000e\+210\)$"):
        R.tangent_gaussian_logpdf(M, x, np.array([1e200, 0.0]), 1e-10)
    sigma = 1.7e308
    assert np.max(np.abs(np.random.default_rng(3).standard_normal(2))) > np.finfo(float).max / sigma
    with pytest.raises(ValueError, match=r"^sample_tangent_gaussian: the draw overflows float64 \(sigma = 1\.700e\+308 "):
        R.sample_tangent_gaussian(M, x, sigma, np.random.default_rng(3))
    z = np.random.default_rng(1).standard_normal(2)
    assert np.max(np.abs(z)) < np.finfo(float).max / sigma and sigma * z[0] > np.finfo(float).max - 1.5e308
    with pytest.raises(ValueError, match=r"^tangent_gaussian_mechanism: the draw overflows float64 \(sigma = 1\.700e\+308 "):
        R.tangent_gaussian_mechanism(M, x, np.array([1.5e308, 0.0]), sigma, np.random.default_rng(1))


def test_spd_symmetric_noise_fills_the_upper_triangle_row_by_row():
    """The documented coordinates: z_k runs over (0,0), (0,1), (0,2), (1,1), (1,2), (2,2); diagonal
    entries are z_k and off-diagonal ones z_k / sqrt 2 on both sides (the covariance test cannot see
    the order, which any permutation of the basis keeps). A z of the wrong length is refused with
    both lengths."""
    r = 1.0 / math.sqrt(2.0)
    want = np.array([[1.0, 2 * r, 3 * r], [2 * r, 4.0, 5 * r], [3 * r, 5 * r, 6.0]])
    np.testing.assert_array_equal(R.spd_symmetric_noise([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3), want)
    with pytest.raises(ValueError, match=r"^spd_symmetric_noise: z has shape \(5,\), expected \(3,\)$"):
        R.spd_symmetric_noise(np.zeros(5), 2)


@pytest.mark.parametrize("case", [c for c in CASES if type(c.ref).__name__ != "Euclidean"], ids=lambda c: c.name)
def test_off_manifold_point_and_non_tangent_vector_raise(case):
    """A point off the manifold, or a non-tangent mean/value, is refused with the function's name."""
    M = case.ref
    x = point(M, 0)
    if type(M).__name__ == "SPD":
        bad_x = x + np.triu(np.ones(M.ambient_shape), 1)  # not symmetric
    else:
        bad_x = 2.0 * x  # off the unit sphere / hyperboloid / Stiefel constraint
    assert M._point_defect(np.asarray(bad_x, dtype=float)) is not None
    with pytest.raises(ValueError, match="sample_tangent_gaussian"):
        R.sample_tangent_gaussian(M, bad_x, 1.0, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    w = rng.standard_normal(M.ambient_shape)  # a generic ambient array is not tangent
    assert M._tangent_defect(x, w) is not None
    with pytest.raises(ValueError, match="tangent_gaussian_mechanism: value"):
        R.tangent_gaussian_mechanism(M, x, w, 1.0, rng)
    with pytest.raises(ValueError, match="sample_tangent_gaussian: mu"):
        R.sample_tangent_gaussian(M, x, 1.0, rng, mu=w)


def test_spd_closed_form_draw_near_the_top_of_float64_is_the_same_in_both_twins():
    """sigma = 1.7e308 at X = I / 16: the draw is X^{1/2} S X^{1/2} = S / 16 with S the symmetric
    noise of sigma z, finite although sigma z overflows for |z| > 1.06 (this seed has such a z). Both
    twins form it at sigma 2^-k and scale back exactly, so they return the same matrix, equal to the
    closed form 2^k spd_symmetric_noise(sigma 2^-k z) / 16 (the thorough fuzz run found the
    reference returning entries of 1.1e308 where the verified twin refused an overflow)."""
    from prirfed.reference.manifolds import SPD

    M = SPD(2)
    X = np.eye(2) / 16.0
    sigma = 1.7e308
    z = np.random.default_rng(4).standard_normal(M.dim)
    assert np.max(np.abs(z)) > np.finfo(float).max / sigma  # the unscaled product overflows
    k = math.frexp(sigma)[1]
    want = np.ldexp(R.spd_symmetric_noise(math.ldexp(sigma, -k) * z, 2) / 16.0, k)
    assert np.all(np.isfinite(want))
    got_r = R.sample_tangent_gaussian_spd(M, X, sigma, np.random.default_rng(4))
    got_v = V.sample_tangent_gaussian_spd(M, X, sigma, np.random.default_rng(4))
    np.testing.assert_array_equal(got_r, want)
    np.testing.assert_array_equal(got_v, want)


def test_symmetric_matrix_chart_is_the_basis_of_the_upper_triangle():
    """The chart of the papers' MH baseline on SPD(n): for each i <= j (row by row) the symmetric
    matrix with ones at (i, j) and (j, i), written out for n = 2 and n = 3 (a single 1 on the
    diagonal)."""
    np.testing.assert_array_equal(R.symmetric_matrix_chart(2), [[[1.0, 0.0], [0.0, 0.0]],
                                                                [[0.0, 1.0], [1.0, 0.0]],
                                                                [[0.0, 0.0], [0.0, 1.0]]])
    want3 = np.zeros((6, 3, 3))
    for k, (i, j) in enumerate([(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]):
        want3[k, i, j] = want3[k, j, i] = 1.0
    np.testing.assert_array_equal(R.symmetric_matrix_chart(3), want3)


def test_sample_counts_are_positive_integers_from_1():
    """size (sample_tangent_gaussian) and n_steps (the MH chain) are integers >= 1: 1 is taken (one
    draw, shape (1, 2) on R^2; an integral float 3.0 gives 3 draws), 0, -1, 2.5 and True are
    refused with the count's name and value."""
    M, x = Euclidean(2), np.zeros(2)
    assert R.sample_tangent_gaussian(M, x, 1.0, np.random.default_rng(0), size=1).shape == (1, 2)
    assert R.sample_tangent_gaussian(M, x, 1.0, np.random.default_rng(0), size=3.0).shape == (3, 2)
    assert R.sample_tangent_gaussian_mh(M, x, 1.0, np.random.default_rng(0), 1).shape == (2,)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match=rf"^sample_tangent_gaussian: size must be a positive integer \(got {bad!r}\)$"):
            R.sample_tangent_gaussian(M, x, 1.0, np.random.default_rng(0), size=bad)
    with pytest.raises(ValueError, match=r"^sample_tangent_gaussian_mh: n_steps must be a positive integer \(got 0\)$"):
        R.sample_tangent_gaussian_mh(M, x, 1.0, np.random.default_rng(0), 0)


def test_a_norm_that_fails_for_another_reason_than_overflow_is_not_taken_for_infinity():
    """clip reads ||v||_x through the manifold's own norm and maps only its overflow refusal to
    inf (then refused with clip's own message); any other ValueError of the norm reaches the caller
    unchanged."""

    class NoNorm(Euclidean):
        def norm(self, x, u):
            raise ValueError("NoNorm.norm: this manifold has no norm here")

    with pytest.raises(ValueError, match=r"^NoNorm\.norm: this manifold has no norm here$"):
        R.clip(NoNorm(2), np.zeros(2), np.array([3.0, 4.0]), 1.0)


def test_clip_keeps_a_vector_whose_metric_norm_underflows_to_0():
    """clip_tau(v) = v min(1, tau / ||v||_x) is v itself when ||v||_x <= tau, also when the norm is
    0 although v is not: on SPD(2) at X = 2^600 I the affine-invariant norm of v = 2^-500 I is
    ||X^{-1/2} v X^{-1/2}||_F = sqrt 2 * 2^-1100, below the smallest float64, so it is 0 (asserted),
    and v comes back unchanged, bit for bit."""
    from prirfed.reference.manifolds import SPD

    M = SPD(2)
    X, v = np.eye(2) * 2.0**600, np.eye(2) * 2.0**-500
    assert M.norm(X, v) == 0.0
    np.testing.assert_array_equal(R.clip(M, X, v, 1.0), v)


@pytest.mark.parametrize("chart, xi0", [(None, None), ([[1.0, 0.0], [1.0, 1.0]], [0.3, -0.2])])
def test_mh_chain_replayed_by_hand_on_the_plane(chart, xi0):
    """The documented step of the MH baseline, written out on R^2 (x = 0) with the same Generator:
    coordinates c in the chart F (default: the standard basis), Gram matrix G = F F^T, start c_0 =
    G^{-1} (<F_k, xi0>)_k (0 without xi0), step s = 2.38 sigma / sqrt(tr G); per step z = 2
    normals, c' = c + s z, u = one uniform, accept iff log u < -(c'^T G c' - c^T G c) / (2
    sigma^2). The chain of states c_t F and the acceptance rate are compared; sigma = 0.7, 40
    steps, with both accepted and refused proposals (asserted)."""
    sigma, n = 0.7, 40
    F = np.eye(2) if chart is None else np.array(chart)
    G = F @ F.T
    c = np.zeros(2) if xi0 is None else np.linalg.solve(G, F @ np.array(xi0))
    s = 2.38 * sigma / math.sqrt(np.trace(G))
    rng = np.random.default_rng(12)
    want, accepted = [], 0
    for _ in range(n):
        c_new = c + s * rng.standard_normal(2)
        if math.log(rng.random()) < -(c_new @ G @ c_new - c @ G @ c) / (2 * sigma**2):
            c, accepted = c_new, accepted + 1
        want.append(c @ F)
    assert 0 < accepted < n
    got, rate = R.sample_tangent_gaussian_mh(Euclidean(2), np.zeros(2), sigma, np.random.default_rng(12), n, chart=chart,
                                            xi0=None if xi0 is None else np.array(xi0), return_acceptance=True,
                                            return_chain=True)
    np.testing.assert_allclose(got, np.array(want), rtol=0, atol=1e-14)
    assert rate == accepted / n
    last = R.sample_tangent_gaussian_mh(Euclidean(2), np.zeros(2), sigma, np.random.default_rng(12), n, chart=chart,
                                        xi0=None if xi0 is None else np.array(xi0))
    np.testing.assert_allclose(last, want[-1], rtol=0, atol=1e-14)


def test_mh_chart_basis_threshold_on_both_sides_and_chart_tangency():
    """A chart is refused when its Gram matrix G has smallest eigenvalue <= 1e-12 tr G. For F =
    [[1, 0], [1, h]] on R^2, G = [[1, 1], [1, 1 + h^2]]: det G = h^2, tr G = 2 + h^2, and the
    smallest eigenvalue is 2 det / (tr + sqrt(tr^2 - 4 det)) (by hand, without cancellation). h^2 =
    2.8e-12 puts it at about 0.7e-12 tr G (refused), h^2 = 6e-12 at about 1.5e-12 tr G (taken). A
    chart row that is not tangent (at the north pole of S^2, a row with a vertical part) is refused
    naming that row."""
    M = Euclidean(2)
    for h2, refused in ((2.8e-12, True), (6e-12, False)):
        h = math.sqrt(h2)
        tr, det = 2.0 + h * h, h * h
        ratio = 2.0 * det / (tr + math.sqrt(tr * tr - 4.0 * det)) / tr
        assert (0.6e-12 < ratio < 0.8e-12) if refused else (1.4e-12 < ratio < 1.6e-12)
        call = lambda: R.sample_tangent_gaussian_mh(M, np.zeros(2), 1.0, np.random.default_rng(0), 3,  # noqa: E731
                                                     chart=np.array([[1.0, 0.0], [1.0, h]]))
        if refused:
            with pytest.raises(ValueError, match=r"^sample_tangent_gaussian_mh: chart is not a basis of T_x"):
                call()
        else:
            assert call().shape == (2,)
    from prirfed.reference.manifolds import Sphere

    S = Sphere(2)
    with pytest.raises(ValueError, match=r"chart\[1\]"):
        R.sample_tangent_gaussian_mh(S, np.array([0.0, 0.0, 1.0]), 1.0, np.random.default_rng(0), 3,
                                     chart=np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.5]]))


def test_spd_closed_form_with_a_mean_is_the_mean_plus_the_centred_draw():
    """N_X(mu, sigma^2) is mu + N_X(0, sigma^2): with the same draws the SPD sampler given mu returns
    the centred draw plus mu, bit for bit (a symmetric mu that is not a multiple of the identity)."""
    from prirfed.reference.manifolds import SPD

    M = SPD(2)
    X = np.array([[2.0, 0.5], [0.5, 1.0]])
    mu = np.array([[0.3, -1.2], [-1.2, 0.7]])
    centred = R.sample_tangent_gaussian_spd(M, X, 0.8, np.random.default_rng(21))
    np.testing.assert_array_equal(R.sample_tangent_gaussian_spd(M, X, 0.8, np.random.default_rng(21), mu=mu), centred + mu)
