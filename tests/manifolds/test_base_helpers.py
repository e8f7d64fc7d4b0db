"""norm2, dot2 and finite_or_raise (reference/manifolds/base.py): the overflow- and underflow-free
norm and inner product every manifold uses, at their switch points and on both sides of them, and
the finite-result check. (Not named test_base.py: the mutation harness runs the whole tests/manifolds
folder against base.py only while no test_base.py exists.)

Oracle: mpmath at 50 digits on the same doubles (the exact norm and inner product of the stored
inputs), and hand-computed sums whose terms are exact in binary."""

import math

import mpmath
import numpy as np
import pytest

from prirfed.reference.manifolds.base import Manifold, dot2, finite_or_raise, norm2

mpmath.mp.dps = 50


def _mp_norm(a):
    return float(mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(t)) ** 2 for t in a)))


@pytest.mark.parametrize("a", [
    [3e-146, 4e-146],            # sum of squares 2.5e-291: below the switch 1e-290, rescaled
    [3e-145, 4e-145],            # 2.5e-289: above it, the plain sum
    [1e-145], [math.nextafter(1e-145, 0.0)], [math.nextafter(1e-145, 1.0)],   # at the switch
    [3e-170, 4e-170],            # squares underflow to subnormals: rescaled
    [3e-320, 4e-320, -1e-321],   # subnormal entries
    [3e200, 4e200], [-1e308, 1e308],   # squares overflow: rescaled, finite norm
    [1.5, -2.0, 0.25],
])
def test_norm2_equals_the_50_digit_norm_on_both_sides_of_its_switches(a):
    """norm2 is the norm of its doubles to 2 ulp, with sum of squares below and above 1e-290 (the
    rescaling switch: both forms agree to rounding there, which is why moving it by a factor 2 is
    listed as tolerated; far below it the plain sqrt would lose digits to subnormal squares) and with
    squares that overflow."""
    want = _mp_norm(a)
    assert abs(norm2(np.array(a)) - want) <= 2 * math.ulp(want)


def test_norm2_of_zero_inf_and_nan():
    """The zero vector has norm 0 (not 0/0), an infinite entry norm inf, a NaN entry NaN."""
    assert norm2(np.zeros(3)) == 0.0 and norm2(np.zeros(0)) == 0.0
    assert norm2(np.array([math.inf, 1.0])) == math.inf and norm2(np.array([1.0, -math.inf])) == math.inf
    assert math.isnan(norm2(np.array([math.nan, 1.0])))


@pytest.mark.parametrize("a, b, want", [
    ([1e300, 1e300, 1e300], [1e10, -1e10, 1.0], 1e300),        # partial sums overflow (inf - inf): exact 1e300
    ([1e200, 1e200], [1e200, -1e200], 0.0),                     # inf - inf = NaN in the plain sum: exactly 0
    ([1e300, 2.0], [1e10, 3.0], math.inf),                      # beyond the range: +inf, not NaN
    ([1e300, 2.0], [-1e10, 3.0], -math.inf),                    # with its sign
    ([0.5, -1.5, 2.0], [4.0, 2.0, 0.25], -0.5),                 # finite: the plain sum
])
def test_dot2_where_the_plain_sum_overflows(a, b, want):
    """dot2 is the inner product of its doubles (terms exact in binary, or their 50-digit sum),
    infinite only when the inner product itself is, with its sign, and never NaN for finite input."""
    exact = mpmath.fsum(mpmath.mpf(x) * mpmath.mpf(y) for x, y in zip(a, b))
    assert want == (float(exact) if math.isfinite(want) else want)
    got = dot2(np.array(a), np.array(b))
    assert got == want


def test_finite_or_raise_passes_finite_values_through_and_counts_the_bad_entries():
    """A finite value is returned as it is (the same object); a non-finite scalar is named, and for an
    array the message counts the inf and NaN entries and gives the largest finite one (0 when none is
    finite)."""
    v = np.array([1.0, -2.0])
    assert finite_or_raise("f", v) is v and finite_or_raise("f", 2.5) == 2.5
    with pytest.raises(ValueError, match=r"^f: the norm overflows float64 \(got inf\)$"):
        finite_or_raise("f", math.inf, "norm")
    with pytest.raises(ValueError, match=r"^f: the result overflows float64 \(2 of 3 entries are inf or NaN; "
                                         r"largest finite entry 3\.000e\+00\)$"):
        finite_or_raise("f", np.array([math.inf, -3.0, math.nan]))
    with pytest.raises(ValueError, match=r"\(2 of 2 entries are inf or NaN; largest finite entry 0\.000e\+00\)$"):
        finite_or_raise("f", np.array([[math.inf], [math.nan]]))


def test_ambient_arguments_are_read_without_validation_too():
    """With validate=False an ambient argument (proj's w, egrad2rgrad's g) is still read as a float
    array, unchecked: a list w = [1, 2, 3] is projected by the closed forms w - (x^T w) x on the
    sphere, w + <x, w>_L x on the hyperboloid (<x, w>_L = x^T w - 2 x_0 w_0) and w itself in R^n (a
    mutant returning None for the unchecked read passed every test, all of which validated)."""
    from prirfed.reference.manifolds import Euclidean, Lorentz, Sphere

    w = [1.0, 2.0, 3.0]
    wa = np.array(w)
    x = np.array([0.6, 0.0, 0.8])
    h = np.array([math.sqrt(2.0), 1.0, 0.0])  # <h, h>_L = 1 - 2 = -1
    for M, p, want in ((Sphere(2, validate=False), x, wa - (x @ wa) * x),
                       (Lorentz(2, validate=False), h, wa + (h @ wa - 2 * h[0] * wa[0]) * h),
                       (Euclidean(3, validate=False), x, wa)):
        np.testing.assert_allclose(M.proj(p, w), want, rtol=0, atol=4 * np.finfo(float).eps * 4)
    np.testing.assert_allclose(Sphere(2, validate=False).egrad2rgrad(x, w), wa - (x @ wa) * x, rtol=0, atol=1e-15)
    # nothing is checked: a w of the wrong shape is returned by Euclidean's proj as it is, and refused
    # (naming the method and the shape) only when validating
    np.testing.assert_array_equal(Euclidean(3, validate=False).proj(x, [1.0, 2.0]), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"^Euclidean\.proj: w has shape \(2,\), expected \(3,\)$"):
        Euclidean(3).proj(x, [1.0, 2.0])


def test_points_that_are_not_real_numbers_are_refused_by_kind_and_not_cast():
    """The input read of every manifold method (as_float_array) refuses what a silent float64 cast
    would change or cannot read, naming the method, the argument and the kind: a complex point (the
    cast drops the imaginary part), a boolean one (True -> 1.0), strings, a ragged list (NumPy cannot
    make an array of it) and an object array holding a word (the kind is allowed, the cast fails).
    An object array of numbers is read. Before this test a deleted raise of any of the three survived
    the full run of the manifolds' mutants."""
    from prirfed.reference.manifolds import Euclidean, Sphere
    from prirfed.reference.manifolds.base import as_float_array

    S = Sphere(2)
    with pytest.raises(ValueError, match=r"^Sphere\.dist: x is a complex array \(dtype complex128\); expected real numbers$"):
        S.dist(np.array([1.0, 0.0, 1e-3j]), np.array([1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match=r"^Sphere\.dist: y is a boolean array \(dtype bool\); expected real numbers$"):
        S.dist(np.array([1.0, 0.0, 0.0]), np.array([True, False, False]))
    with pytest.raises(ValueError, match=r"^Euclidean\.exp: v is a string array \(dtype <U1\); expected real numbers$"):
        Euclidean(2).exp(np.zeros(2), np.array(["1", "2"]))
    with pytest.raises(ValueError, match=r"^Euclidean\.exp: v cannot be read as a float array \(.*inhomogeneous"):
        Euclidean(2).exp(np.zeros(2), [[1.0, 2.0], [3.0]])
    with pytest.raises(ValueError, match=r"^Euclidean\.exp: v cannot be read as a float array \(could not convert string to float: 'two'\)$"):
        Euclidean(2).exp(np.zeros(2), np.array([1.0, "two"], dtype=object))
    got = as_float_array("w", "a", np.array([1, 2.5], dtype=object), (2,))
    assert got.dtype == np.float64 and got.tolist() == [1.0, 2.5]


class _Conformal(Manifold):
    """R^2 with the conformal metric <u, v>_x = (1 + |x|^2) u.v: a user's manifold that keeps the
    contract's default norm and repr (every built-in manifold overrides both)."""

    def __init__(self):
        super().__init__()
        self.dim, self.ambient_shape, self.curvature_bounds = 2, (2,), (-math.inf, math.inf)

    def _point_defect(self, x):
        return None

    def _tangent_defect(self, x, v):
        return None

    def inner(self, x, u, v):
        return float((1.0 + x @ x) * (u @ v))

    def _unused(self, *args):
        raise NotImplementedError

    proj = egrad2rgrad = exp = log = dist = transp = retr = inv_retr = _unused
    tangent_basis = random_point = _unused


def test_the_default_norm_is_the_square_root_of_the_metric_and_refuses_nan():
    """Manifold.norm (kept by a user's subclass): ||u||_x = sqrt(<u, u>_x), here sqrt((1 + |x|^2)|u|^2)
    in closed form: x = (1, 2), u = (0.03, 0.04) gives sqrt(6 * 0.0025) = sqrt(0.015). A vector with a
    NaN entry is refused with the method named, never measured as 0 (max(0, nan) in Python is 0, and
    max(nan, 0) is nan). The mutants that returned None, swapped x and u, clamped at 1 or took max(0,
    .) first survived the manifolds run before this test: no built-in manifold uses the default."""
    M = _Conformal()
    x = np.array([1.0, 2.0])
    got = M.norm(x, np.array([0.03, 0.04]))
    assert abs(got - math.sqrt(0.015)) <= 2 * math.ulp(math.sqrt(0.015))
    assert M.norm(x, np.zeros(2)) == 0.0
    with pytest.raises(ValueError, match=r"^_Conformal\.norm: "):
        M.norm(x, np.array([math.nan, 0.0]))
    assert repr(M) == "_Conformal(dim=2)"


def test_check_tangent_names_the_method_then_the_argument():
    """check_tangent's messages read '<Class>.<method>: <argument> ...' for a wrong shape, a string and
    a complex array (a mutant that swapped the two in the array check survived the manifolds run)."""
    from prirfed.reference.manifolds import Sphere

    M = Sphere(2)
    x = np.array([0.0, 0.0, 1.0])
    for v, what in ((np.zeros(4), r"has shape \(4,\), expected \(3,\)"), ("abc", "is a string array"),
                    (np.array([1j, 0, 0]), "is a complex array")):
        with pytest.raises(ValueError, match=r"^Sphere\.check_tangent: v " + what):
            M.check_tangent(x, v)
    with pytest.raises(ValueError, match=r"^Sphere\.exp: v has shape"):
        M.exp(x, np.zeros(4))
