"""The O(dim) tangent Gaussian samplers (reference mechanisms.sample_tangent_gaussian_closed_form and
the verified geometry kernels ``noise_into``) draw N_x(0, sigma^2) (Definition 2.5 of 000).

Oracle: the basis route :func:`sample_tangent_gaussian` (sum_k z_k e_k over ``M.tangent_basis(x)``,
itself tested against the definition in test_mech_tangent_gaussian.py) and the law N(0, sigma^2 I_dim)
of the coordinates <e_k, xi>_x in that orthonormal basis. Statistical tests at fixed seeds; each
assertion's false-alarm probability (for a fresh seed) is stated: ALPHA = 1e-4 per p-value, with the
Bonferroni correction where one assertion combines several p-values.
Where the closed form is the basis route's own linear map (H^d, SPD) the same normals give the same
vector: checked draw for draw. The verified kernels equal the reference closed form on the same
stream (bitwise normals; the arithmetic to rounding).
"""

import math

import numpy as np
import pytest
from scipy import stats

from prirfed.reference.manifolds import SPD, Lorentz, Sphere, Stiefel
from prirfed.reference.mechanisms import (
    closed_form_normals,
    sample_tangent_gaussian,
    sample_tangent_gaussian_closed_form,
)
from prirfed.reference.randomness import Stream

ALPHA = 1e-4
CASES = [
    ("sphere", Sphere(4)),
    ("stiefel", Stiefel(5, 2)),
    ("lorentz", Lorentz(3)),
    ("spd", SPD(3)),
]


def coordinates(M, x, xis):
    """<e_k, xi>_x for the orthonormal basis of the basis route."""
    E = M.tangent_basis(x)
    return np.array([[M.inner(x, E[k], xi) for k in range(M.dim)] for xi in xis])


@pytest.mark.parametrize("name, M", CASES, ids=[c[0] for c in CASES])
def test_coordinates_in_an_orthonormal_basis_are_iid_normal(name, M):
    """n draws: the coordinates are N(0, sigma^2 I_dim): (1) sum ||c||^2 / sigma^2 ~ chi^2_{n dim}
    (two-sided); (2) each coordinate's variance (chi^2_n each, Bonferroni over dim); (3) every
    pairwise correlation (sqrt(n) r ~ N(0, 1), Bonferroni over the pairs); (4) KS of a fixed unit
    combination of the coordinates against N(0, sigma^2). Each of the four assertions: ALPHA."""
    rng = np.random.default_rng(20261124)
    x = M.random_point(rng)
    sigma = 0.7
    n = 4000
    xis = [sample_tangent_gaussian_closed_form(M, x, sigma, rng) for _ in range(n)]
    for xi in xis[:20]:
        M.check_tangent(x, xi)
    c = coordinates(M, x, xis) / sigma
    d = M.dim
    q = float(np.sum(c * c))
    p = 2 * min(stats.chi2.cdf(q, n * d), stats.chi2.sf(q, n * d))
    assert p > ALPHA
    qk = np.sum(c * c, axis=0)
    pk = 2 * np.minimum(stats.chi2.cdf(qk, n), stats.chi2.sf(qk, n))
    assert pk.min() > ALPHA / d
    R = np.corrcoef(c.T)
    pairs = [(k, l) for k in range(d) for l in range(k + 1, d)]
    pr = [2 * stats.norm.sf(abs(R[k, l]) * math.sqrt(n)) for k, l in pairs]
    assert min(pr) > ALPHA / len(pairs)
    u = np.arange(1, d + 1, dtype=float)
    u /= np.linalg.norm(u)
    assert stats.kstest(c @ u, "norm").pvalue > ALPHA


@pytest.mark.parametrize("name, M", CASES, ids=[c[0] for c in CASES])
def test_normal_counts(name, M):
    """closed_form_normals is the number of normals one draw reads (d + 1, n p, d, n(n + 1)/2)."""
    counts = {"sphere": 5, "stiefel": 10, "lorentz": 3, "spd": 6}
    assert closed_form_normals(M) == counts[name]
    rng = np.random.default_rng(1)
    x = M.random_point(rng)
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    sample_tangent_gaussian_closed_form(M, x, 1.0, a)
    b.standard_normal(counts[name])
    assert a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("name, M", [c for c in CASES if c[0] in ("lorentz", "spd")], ids=["lorentz", "spd"])
def test_closed_form_equals_the_basis_route_draw_for_draw_where_it_is_the_same_map(name, M):
    """On H^d (the origin's basis transported to x) and SPD (X^{1/2} B_k X^{1/2}) the closed form applies
    the basis route's linear map to the same d normals."""
    rng = np.random.default_rng(5)
    for _ in range(10):
        x = M.random_point(rng)
        s = int(rng.integers(2**32))
        a = sample_tangent_gaussian_closed_form(M, x, 0.3, np.random.default_rng(s))
        b = sample_tangent_gaussian(M, x, 0.3, np.random.default_rng(s))
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, float(np.max(np.abs(x)))))


def test_sphere_and_stiefel_closed_forms_are_the_projections_of_the_ambient_gaussian():
    """Spelled out here: S^d: g - (x^T g) x; St(n, p): G - X (X^T G + G^T X)/2 (orthogonal projections)."""
    rng = np.random.default_rng(8)
    S = Sphere(3)
    x = S.random_point(rng)
    g = 0.5 * np.random.default_rng(9).standard_normal(4)
    np.testing.assert_allclose(sample_tangent_gaussian_closed_form(S, x, 0.5, np.random.default_rng(9)),
                               g - (x @ g) * x, rtol=1e-14, atol=1e-15)
    St = Stiefel(4, 2)
    X = St.random_point(rng)
    G = 0.5 * np.random.default_rng(9).standard_normal((4, 2))
    np.testing.assert_allclose(sample_tangent_gaussian_closed_form(St, X, 0.5, np.random.default_rng(9)),
                               G - X @ (X.T @ G + G.T @ X) / 2, rtol=1e-14, atol=1e-15)


def test_retracted_geometry_draws_in_the_base_tangent_space():
    from prirfed.reference.manifolds.retracted import Retracted

    rng = np.random.default_rng(3)
    S = Sphere(2)
    x = S.random_point(rng)
    a = sample_tangent_gaussian_closed_form(Retracted(S), x, 1.0, np.random.default_rng(4))
    b = sample_tangent_gaussian_closed_form(S, x, 1.0, np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)


def test_bad_inputs_raise():
    S = Sphere(2)
    with pytest.raises(ValueError, match="sample_tangent_gaussian_closed_form: sigma must be finite and > 0"):
        sample_tangent_gaussian_closed_form(S, np.array([1.0, 0, 0]), 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="sample_tangent_gaussian_closed_form: rng must be a numpy.random.Generator"):
        sample_tangent_gaussian_closed_form(S, np.array([1.0, 0, 0]), 1.0, 5)


# ---------------------------------------------------------------------------- verified kernels on streams
def verified_noise(name, M, x, sigma, key):
    from prirfed.verified import randomness as vr
    from prirfed.verified.trainers import families, geometry_lorentz, geometry_spd, geometry_sphere, geometry_stiefel

    mod, dims = {
        "sphere": lambda: (geometry_sphere, families.SphereDims(M.d + 1)),
        "stiefel": lambda: (geometry_stiefel, families.StiefelDims(M.n, M.p)),
        "lorentz": lambda: (geometry_lorentz, families.LorentzDims(M.d + 1)),
        "spd": lambda: (geometry_spd, families.SPDDims(M.n)),
    }[name]()
    out = np.empty(int(np.prod(M.ambient_shape)))
    mod.noise_into(dims, np.ascontiguousarray(x, dtype=np.float64).ravel(), sigma, vr.open_stream(key, 0, 3, 1), out)
    return out.reshape(M.ambient_shape)


@pytest.mark.parametrize("name, M", CASES, ids=[c[0] for c in CASES])
def test_verified_noise_kernels_equal_the_reference_closed_form_on_a_stream(name, M):
    rng = np.random.default_rng(11)
    for _ in range(5):
        x = M.random_point(rng)
        key = rng.integers(0, 2**64, size=2, dtype=np.uint64)
        a = sample_tangent_gaussian_closed_form(M, x, 0.4, Stream(key, 0, 3, 1))
        b = verified_noise(name, M, x, 0.4, key)
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-13 * max(1.0, float(np.max(np.abs(x)))))


def test_euclidean_closed_form_is_sigma_times_the_normals():
    """On R^d the tangent space is R^d with the standard basis: the draw is sigma z for the d normals
    z of the Generator, bit for bit, and it reads exactly d normals."""
    from prirfed.reference.manifolds import Euclidean

    M = Euclidean(3)
    want = 0.4 * np.random.default_rng(5).standard_normal(3)
    np.testing.assert_array_equal(sample_tangent_gaussian_closed_form(M, np.ones(3), 0.4, np.random.default_rng(5)), want)
    assert closed_form_normals(M) == 3


def test_basis_route_of_a_manifold_without_a_closed_form():
    """A manifold none of whose closed forms applies is sampled by the basis route sum_k sigma z_k
    e_k over its tangent_basis, with dim normals. Here R^2 as a Manifold that is not a Euclidean
    instance, with the orthonormal basis e_1 = (c, s), e_2 = (-s, c) (a rotation by 0.3, not
    symmetric): the draw is sigma (z_1 e_1 + z_2 e_2), written out."""
    from prirfed.reference.manifolds import Euclidean
    from prirfed.reference.manifolds.base import Manifold

    c, s = math.cos(0.3), math.sin(0.3)
    names = ("_point_defect", "_tangent_defect", "inner", "proj", "egrad2rgrad", "exp", "log", "dist", "transp",
             "retr", "inv_retr", "random_point")

    def init(self):
        Manifold.__init__(self, True)
        self.d, self.dim, self.ambient_shape, self.curvature_bounds = 2, 2, (2,), (0.0, 0.0)

    methods = {n: Euclidean.__dict__[n] for n in names}
    methods.update(__init__=init, tangent_basis=lambda self, x: np.array([[c, s], [-s, c]]))
    M = type("Plane", (Manifold,), methods)()
    z = np.random.default_rng(6).standard_normal(2)
    want = 0.7 * z[0] * np.array([c, s]) + 0.7 * z[1] * np.array([-s, c])
    np.testing.assert_allclose(sample_tangent_gaussian_closed_form(M, np.zeros(2), 0.7, np.random.default_rng(6)), want,
                               rtol=0, atol=1e-15)
    assert closed_form_normals(M) == 2
