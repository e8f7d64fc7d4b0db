"""The hyperboloid (Lorentz) model of hyperbolic space H^d (curvature -1).

    H^d = {x in R^{d+1} : <x, x>_L = -1, x_0 > 0},   <x, y>_L = x^T y - 2 x_0 y_0,

as in section 6.3 of Huang et al. (2024) (which writes x_1 for the first coordinate; the code uses index 0).
The Riemannian metric at x is the restriction of <., .>_L to T_x = {v : <x, v>_L = 0}.

Numerics (derivations and tests in the proofs note ``manifold_lorentz``).
A stored point carries a rounding defect <x, x>_L + 1 of order eps x_0^2 (eps = 2.2e-16); a
coordinate change of eps x_0 along e_0 is an intrinsic displacement of eps x_0^2. Formulas that
subtract nearby large vectors turn that defect into errors of order eps x_0^2 / dist, so:

- every point is read through its space part x_bar, with the time coordinate
  ``x_0 = sqrt(1 + ||x_bar||^2)`` (:func:`time_coordinate`); the stored x_0 is only checked;
- the chord c = y - x has ``c_0 = <c_bar, x_bar + y_bar> / (x_0 + y_0)`` (:func:`chord`), and the
  distance is ``2 asinh(sqrt(<c, c>_L) / 2)`` (:func:`chord_to_dist`), not the printed
  ``acosh(-<x, y>_L)``, which loses half the digits (it returns 0 at distance 1e-8); beyond
  distance 1.3 the chord form itself cancels catastrophically for far points on one ray, and
  cosh(dist) - 1 is evaluated in polar form (:func:`chord`); beyond x_0 = 2^26 the chord form takes
  the part of c_bar orthogonal to x_bar + y_bar from a wedge product, not a projection (``WEDGE_X0``);
- the metric on T_x is evaluated from space parts as a sum of non-negative terms
  (:func:`tangent_inner`), so ||v||_x has no cancellation at far points;
- ``sinh(t)/t`` and ``t/sinh(t)`` use their Taylor series below 1e-4 (exact at 0);
- outputs (points and tangent vectors) get their time coordinate from their space part, so they
  lie on H^d / in T_x to rounding at every radius.

What remains: dist and Log have relative error of about eps x_0 (for the stored space parts);
tangent vectors at a far point have coordinates up to ``x_0 ||v||_x`` and proj outputs up to
``x_0^2 |w|``, so coordinate-level identities hold to eps x_0^2 and their tolerances scale with x_0^2
(x_0 = cosh(10) = 1.1e4 at radius 10 gives eps x_0^2 = 2.7e-8).

Examples
--------
The curve ``(cosh t, sinh t, 0)`` is the unit-speed geodesic from the origin, so its point at
time t is at distance t; at the origin the metric is the Euclidean one of the space part:

>>> import numpy as np
>>> from prirfed.reference.manifolds.lorentz import Lorentz
>>> M = Lorentz(2)
>>> o = np.array([1.0, 0.0, 0.0])
>>> t = 1.5
>>> y = np.array([np.cosh(t), np.sinh(t), 0.0])
>>> float(M.dist(o, y))                     # = t
1.5
>>> np.round(M.log(o, y), 12)               # t times the unit tangent e_1
array([0. , 1.5, 0. ])
>>> float(M.norm(o, np.array([0.0, 3.0, 4.0])))
5.0
>>> bool(np.allclose(M.transp(o, y, M.log(o, y)), -M.log(y, o)))   # the geodesic's velocity is parallel
True
>>> M.curvature_bounds
(-1.0, -1.0)
"""

from __future__ import annotations

import math

import numpy as np

from .base import Manifold, as_float_array, norm2

_TANGENT_FLOOR = 64.0 * 2.220446049250313e-16  # absolute floor of the tangency check, times x_0^2

__all__ = ["Lorentz", "minkowski_inner", "time_coordinate", "tangent_inner", "tangent_norm", "chord", "sinhc",
           "t_over_sinh", "chord_to_dist", "X0_MAX"]

#: below this norm a space part is not normalised (its square would underflow)
TINY = 1e-150
#: Beyond max(x_0, y_0) = 2^26 (radius 18.7) the chord form of :func:`chord` takes the squared
#: perpendicular part from the wedge (:func:`_perp_square`). The projection's rounding error
#: eps ||c_bar|| is squared and divided by <c, c>_L, which on one ray is about ||c_bar||^2 / x_0^2:
#: a relative error of order (eps x_0)^2 in h, below eps only while x_0 <= eps^(-1/2) = 2^26. Up to
#: there the results are those of the projection, bit for bit.
WEDGE_X0 = 2.0**26
#: Domain of points: x_0 <= X0_MAX = 2^500 (3.3e150; distance acosh(2^500) = 347.3 from the origin).
#: Every formula here forms products of two coordinates (x_0 y_0, ||x_bar||^2, <c_bar, s_bar>), and
#: sums of d + 1 of them; with coordinates up to 2^500 these stay below (d + 1) 2^1002, finite for
#: d < 2^21. Beyond, <x, x>_L + 1 cannot even be evaluated (x_0^2 overflows at 1.3e154), and the
#: membership check used to compare inf with inf and accept any point.
X0_MAX = 2.0**500


def minkowski_inner(u: np.ndarray, v: np.ndarray) -> float:
    r"""Lorentz (Minkowski) inner product :math:`\langle u, v\rangle_L = u^\top v - 2u_0v_0`, Huang et al. (2024), Section 6.3.

    Evaluated as :math:`-u_0v_0 + \sum_{i \ge 1} u_iv_i` (the same number, one product fewer).

    Parameters
    ----------
    u, v : numpy.ndarray
        Vectors of :math:`\mathbb R^{d+1}`, time coordinate first.

    Returns
    -------
    float
        :math:`\langle u, v\rangle_L`.
    """
    return float(-u[0] * v[0] + u[1:] @ v[1:])


def time_coordinate(xb: np.ndarray) -> float:
    r"""Time coordinate :math:`x_0 = \sqrt{1 + \lVert\bar x\rVert^2}` of the upper-sheet point with space part :math:`\bar x` (Huang et al. (2024), Section 6.3).

    Parameters
    ----------
    xb : numpy.ndarray
        Space part :math:`\bar x \in \mathbb R^d`.

    Returns
    -------
    float
        :math:`x_0`.
    """
    return math.sqrt(1.0 + float(xb @ xb))


def chord(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, float]:
    r"""The chord :math:`c = y - x` of two points of :math:`H^d` read through their space parts, and :math:`h = \cosh(\operatorname{dist}) - 1` (Huang et al. (2024), Section 6.3; stable forms derived in the proofs note ``manifold_lorentz``).

    :math:`c_0 = y_0 - x_0 = \langle\bar c, \bar s\rangle/(x_0 + y_0)` with :math:`s = x + y` (no
    cancellation), and :math:`h = -\langle x, y\rangle_L - 1 = \langle c, c\rangle_L/2 = 2\sinh^2(\operatorname{dist}/2) \ge 0`,
    evaluated

    - up to distance 1.3 by the chord form
      :math:`\langle c, c\rangle_L = (\lVert c_\perp\rVert^2 + 4\rho^2)/(1 - \rho^2)`,
      :math:`\rho = c_0/\lVert\bar s\rVert`, :math:`c_\perp` the part of :math:`\bar c` orthogonal
      to :math:`\bar s`: a ratio of sums of non-negative terms; :math:`\lVert c_\perp\rVert^2`
      by projection up to :math:`\max(x_0, y_0) = 2^{26}` and by the wedge
      :math:`\sum_{i<j}(c_is_j - c_js_i)^2/\lVert\bar s\rVert^2` beyond (exactly 0 for points on
      a coordinate axis, where the projection's rounding cost a relative error of order
      :math:`(\varepsilon x_0)^2`: distance 84.6 instead of 0.5 at radius 80);
    - beyond, by the polar form :math:`h = (\cosh(a - b) - 1) + \lVert\bar x\rVert\lVert\bar y\rVert(1 - \cos\varphi)`
      with :math:`a, b` the radii and :math:`\varphi` the angle between :math:`\bar x` and
      :math:`\bar y`, again non-negative terms (relative error about :math:`\varepsilon x_0`).

    The printed :math:`\operatorname{acosh}(-\langle x, y\rangle_L)` loses half the digits near 0, and
    the plain :math:`\lVert\bar c\rVert^2 - c_0^2` cancels for far points on one ray
    (``test_chord_form_fails_far_out_on_one_ray``).

    Parameters
    ----------
    x, y : numpy.ndarray
        Points of :math:`H^d` (only their space parts are read).

    Returns
    -------
    c_bar : numpy.ndarray
        Space part of the chord, :math:`\bar y - \bar x`.
    c_0 : float
        Time part of the chord.
    h : float
        :math:`\cosh(\operatorname{dist}(x, y)) - 1`.
    """
    xb, yb = x[1:], y[1:]
    x0, y0 = time_coordinate(xb), time_coordinate(yb)
    cb = yb - xb
    sb = xb + yb
    c0 = float(cb @ sb) / (x0 + y0)
    nx, ny = math.sqrt(float(xb @ xb)), math.sqrt(float(yb @ yb))
    h = (1.0 + nx * nx + ny * ny) / (x0 * y0 + nx * ny) - 1.0
    if nx > TINY and ny > TINY:  # angular term; below TINY it is < 2e-150 ny and x_bar/nx underflows
        dh = xb / nx - yb / ny
        h += 0.5 * nx * ny * float(dh @ dh)
    if not h > 1.0:
        s2 = float(sb @ sb)
        if s2 <= 1.0:  # c_0^2 <= ||c_bar||^2 s2 / (x_0 + y_0)^2 <= ||c_bar||^2 / 4: no cancellation
            q = float(cb @ cb) - c0 * c0
        else:
            rho2 = c0 * c0 / s2
            q = (_perp_square(cb, sb, s2, max(x0, y0)) + 4.0 * rho2) / (1.0 - rho2)
        h = 0.5 * max(0.0, q)
    return cb, c0, h


def _perp_square(cb: np.ndarray, sb: np.ndarray, s2: float, x0_max: float) -> float:
    r"""Squared norm of the part :math:`c_\perp` of :math:`\bar c` orthogonal to :math:`\bar s`, the first term of the chord form of :func:`chord` (Huang et al. (2024), Section 6.3; error analysis in the proofs note ``manifold_lorentz``).

    Up to ``WEDGE_X0`` (:math:`2^{26}`) by the projection :math:`c_\perp = \bar c - (\langle\bar c, \bar s\rangle/s_2)\bar s`,
    whose rounding error is about :math:`\varepsilon\lVert\bar c\rVert` whatever the true
    :math:`c_\perp`; beyond, by the wedge :math:`\lVert c_\perp\rVert^2 = \sum_{i<j}(c_is_j - c_js_i)^2/s_2`,
    whose terms vanish exactly for coordinates that are exactly parallel (points on a coordinate
    axis), where the projection's :math:`(\varepsilon\lVert\bar c\rVert)^2` would be divided by
    :math:`\lVert\bar c\rVert^2 - c_0^2 \approx \lVert\bar c\rVert^2/x_0^2` and cost a relative
    error of order :math:`(\varepsilon x_0)^2` in the distance.

    Parameters
    ----------
    cb, sb : numpy.ndarray
        Space parts :math:`\bar c = \bar y - \bar x` and :math:`\bar s = \bar x + \bar y`.
    s2 : float
        :math:`\lVert\bar s\rVert^2` (positive).
    x0_max : float
        :math:`\max(x_0, y_0)`, which selects the form.

    Returns
    -------
    float
        :math:`\lVert c_\perp\rVert^2`.
    """
    if not x0_max > WEDGE_X0:
        c_perp = cb - (float(cb @ sb) / s2) * sb
        return float(c_perp @ c_perp)
    ns = math.sqrt(s2)
    w = 0.0
    for i in range(cb.shape[0]):  # each term below (2^501)^2 / ns: no overflow in the domain x_0 <= 2^500
        for j in range(i + 1, cb.shape[0]):
            t = (float(cb[i]) * float(sb[j]) - float(cb[j]) * float(sb[i])) / ns
            w += t * t
    return w


def tangent_inner(x: np.ndarray, u: np.ndarray, v: np.ndarray) -> float:
    r"""Metric :math:`\langle u, v\rangle_L` for :math:`u, v \in T_xH^d` from the space parts only, without cancellation (Huang et al. (2024), Section 6.3).

    On :math:`T_x`, :math:`u_0 = \langle\bar x, \bar u\rangle/x_0`, so
    :math:`\langle u, v\rangle_L = \bar u\cdot\bar v - (\bar x\cdot\bar u)(\bar x\cdot\bar v)/(1 + \lVert\bar x\rVert^2)`.
    Splitting :math:`\bar u = a_u\hat x + u_\perp` gives the sum of non-negative parts
    :math:`u_\perp\cdot v_\perp + a_ua_v/(1 + \lVert\bar x\rVert^2)`; the printed
    :math:`u^\top v - 2u_0v_0` cancels two terms of size :math:`x_0^2\lVert u\rVert\lVert v\rVert`
    at a far point.

    Parameters
    ----------
    x : numpy.ndarray
        Base point.
    u, v : numpy.ndarray
        Tangent vectors at ``x``.

    Returns
    -------
    float
        :math:`\langle u, v\rangle_L`.
    """
    xb, ub, vb = x[1:], u[1:], v[1:]
    n2 = float(xb @ xb)
    if n2 <= 1.0:  # the subtracted term is <= ||u_bar|| ||v_bar|| / 2: no cancellation (and no underflow)
        return float(ub @ vb) - float(xb @ ub) * float(xb @ vb) / (1.0 + n2)
    n = math.sqrt(n2)
    a_u = float(xb @ ub) / n
    a_v = float(xb @ vb) / n
    u_perp = ub - (a_u / n) * xb
    v_perp = vb - (a_v / n) * xb
    return float(u_perp @ v_perp) + a_u * a_v / (1.0 + n2)


def tangent_norm(x: np.ndarray, v: np.ndarray) -> float:
    r"""Metric norm :math:`\lVert v\rVert_x = \sqrt{\langle v, v\rangle_L}` of a tangent vector of :math:`H^d` (Huang et al. (2024), Section 6.3), without overflow or underflow.

    When the squared norm is not a normal float64, :math:`v` is divided by :math:`\max|\bar v|` first
    (the metric is read from the space parts, so that scaling is exact up to rounding).

    Parameters
    ----------
    x : numpy.ndarray
        A point of :math:`H^d`, shape ``(d + 1,)``.
    v : numpy.ndarray
        A tangent vector at ``x`` (not checked: callers have checked it).

    Returns
    -------
    float
        :math:`\lVert v\rVert_x`.
    """
    q = tangent_inner(x, v, v)
    if 1e-290 <= q < math.inf:
        return math.sqrt(q)
    m = float(np.max(np.abs(v[1:])))
    if not (0.0 < m < math.inf):
        return m
    w = v / m
    return m * math.sqrt(max(0.0, tangent_inner(x, w, w)))


def sinhc(t: float) -> float:
    r""":math:`\sinh(t)/t`, the coefficient of :math:`v` in :math:`\operatorname{Exp}_x(v)`, Huang et al. (2024), Section 6.3; 1 at :math:`t = 0`.

    Evaluated as written for every :math:`t \ne 0`: within 1.3 ulp of 50 digits from the least subnormal
    to :math:`10^{-2}` (``sinh`` returns its argument below about 1e-8). A Taylor branch below
    :math:`10^{-4}` was dropped: its :math:`t^4` term never changed a rounded value.

    Parameters
    ----------
    t : float
        The argument.

    Returns
    -------
    float
        :math:`\sinh(t)/t`.
    """
    t = abs(float(t))
    if t == 0.0:
        return 1.0
    return math.sinh(t) / t


def t_over_sinh(t: float) -> float:
    r""":math:`t/\sinh(t)`, the coefficient of the logarithm map, Huang et al. (2024), Section 6.3; 1 at :math:`t = 0`.

    Evaluated as written for every :math:`t \ne 0` (within 1.2 ulp of 50 digits from the least
    subnormal to :math:`10^{-2}`); see :func:`sinhc`.

    Parameters
    ----------
    t : float
        The argument.

    Returns
    -------
    float
        :math:`t/\sinh(t)`.
    """
    t = abs(float(t))
    if t == 0.0:
        return 1.0
    return t / math.sinh(t)


def chord_to_dist(q: float) -> float:
    r"""Geodesic distance from the Minkowski square of the chord, :math:`q = \langle x - y, x - y\rangle_L` (Huang et al. (2024), Section 6.3).

    On :math:`H^d`, :math:`q = -2 - 2\langle x, y\rangle_L = 2(\cosh\theta - 1) = 4\sinh^2(\theta/2)`,
    hence :math:`\theta = 2\operatorname{asinh}(\sqrt q/2)`; :math:`q < 0` can only come from
    rounding and is read as 0.

    Parameters
    ----------
    q : float
        The Minkowski square of the chord.

    Returns
    -------
    float
        :math:`\operatorname{dist}(x, y)`.
    """
    return 2.0 * math.asinh(0.5 * math.sqrt(max(0.0, q)))


class Lorentz(Manifold):
    r"""Hyperbolic space :math:`H^d` in the hyperboloid model, curvature :math:`-1`, Huang et al. (2024), Section 6.3.

    Domain (``proofs_notes/manifold_lorentz.md``): points with ``0 < x_0 <= X0_MAX =
    2^500`` (about distance 347 from the origin) that pass the membership check; tangent vectors
    that pass theirs. ``exp`` refuses ``||v||_L > 700`` (cosh overflows) and results beyond the
    domain (``x_0 > X0_MAX``); every other method returns finite results or raises.

    Accuracy far out: a stored point at distance :math:`r` from the origin carries a rounding
    error of about :math:`\epsilon x_0 = \epsilon\cosh r` across its ray (5e-8 at r = 20, 1e-3 at
    r = 30, 1 at r = 36.7), a floor for every method that reads ambient coordinates (``log``,
    ``transp``, ``proj``, ``dist`` of close pairs). Pose problems near the origin (the space is
    homogeneous; docs: "Hyperbolic space"; the note's sections 6 and 9): moving points already stored
    far out does not restore their digits.

    Parameters
    ----------
    d : int
        Intrinsic dimension; points live in :math:`\mathbb R^{d+1}`.
    validate : bool, optional
        Check every input (default True).
    tol : float, optional
        Relative tolerance of the membership checks: a point needs
        :math:`|\langle x, x\rangle_L + 1| \le` ``tol`` :math:`\cdot x_0^2` and :math:`x_0 > 0`; a
        tangent vector needs :math:`|\langle x, v\rangle_L| \le` ``tol`` :math:`\cdot x_0\lVert v\rVert_2 + 64\,\epsilon\, x_0^2` (:math:`\epsilon` the machine epsilon).
    """

    exact_transport = True

    def __init__(self, d: int, validate: bool = True, tol: float = 1e-10):
        super().__init__(validate)
        ok = isinstance(d, (int, np.integer, float)) and not isinstance(d, bool)
        if not (ok and math.isfinite(d) and int(d) == d and d >= 1):
            raise ValueError(f"Lorentz: dimension d must be a positive integer (got {d!r})")
        tol = float(tol)
        if not (math.isfinite(tol) and tol > 0):
            raise ValueError(f"Lorentz: tol must be finite and > 0 (got {tol!r})")
        self.d = int(d)
        self.dim = self.d
        self.ambient_shape = (self.d + 1,)
        self.curvature_bounds = (-1.0, -1.0)
        self.tol = tol

    def __repr__(self) -> str:
        return f"Lorentz({self.d})"

    # ------------------------------------------------------------------ membership
    def _point_defect(self, x):
        if not x[0] > 0:
            return f"x_0 = {x[0]:.3e} is not > 0 (the hyperboloid's upper sheet has x_0 >= 1)"
        if not x[0] <= X0_MAX:
            return (f"x_0 = {x[0]:.3e} is beyond the domain x_0 <= 2^500 = {X0_MAX:.2e} of this model "
                    "(about distance 347 from the origin; <x, x>_L cannot be evaluated in float64 much further out)")
        defect = abs(minkowski_inner(x, x) + 1.0)
        bound = self.tol * x[0] * x[0]
        if not defect <= bound:
            return (f"not on the hyperboloid (|<x, x>_L + 1| = {defect:.3e}, "
                    f"tolerance {bound:.3e} = {self.tol:.1e} * x_0^2)")
        return None

    def _tangent_defect(self, x, v):
        # relative part: the rounding of a tangent vector of size ||v|| at x; absolute floor
        # 64 eps x_0^2: a near-cancelling sum of unit-scale tangent vectors (a gradient near an
        # optimum) keeps a residue of that size along x however small the sum itself is.
        # Evaluated on v / ||v||_2 so that <x, v>_L cannot overflow (x is in the domain).
        nv = norm2(v)
        if nv == 0.0:
            return None
        rel = abs(minkowski_inner(x, v / nv))
        bound_rel = self.tol * x[0] + _TANGENT_FLOOR * x[0] * (x[0] / nv)
        if not rel <= bound_rel:
            return (f"not tangent at x (|<x, v>_L| = {rel * nv:.3e}, "
                    f"tolerance {bound_rel * nv:.3e} = {self.tol:.1e} * x_0 * ||v||_2 + 64 eps x_0^2)")
        return None

    # ------------------------------------------------------------------ metric
    def inner(self, x, u, v):
        """Riemannian metric <u, v>_x = <u, v>_L (Huang et al. (2024) section 6.3), by :func:`tangent_inner`."""
        x = self._pt("inner", x)
        u = self._tv("inner", x, u, "u")
        v = self._tv("inner", x, v, "v")
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("inner", tangent_inner(x, u, v))

    def norm(self, x, u):
        """||u||_x = sqrt(<u, u>_x) (a sum of squares in :func:`tangent_inner`, never < 0), by
        :func:`tangent_norm` (no overflow before the norm itself overflows)."""
        x = self._pt("norm", x)
        u = self._tv("norm", x, u, "u")
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("norm", tangent_norm(x, u))

    def proj(self, x, w):
        """L-orthogonal projection onto T_x: w + <x, w>_L x (the L-normal of T_x is span(x))."""
        x = self._pt("proj", x)
        w = self._amb("proj", w)
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("proj", w + minkowski_inner(x, w) * x)

    def egrad2rgrad(self, x, g):
        """Riemannian gradient proj_x(J g), J = diag(-1, 1, ..., 1).

        Df(x)[v] = g^T v = <J g, v>_L, so J g is the gradient for <., .>_L in R^{d+1}; its
        L-orthogonal projection onto T_x is the Riemannian gradient.
        """
        x = self._pt("egrad2rgrad", x)
        g = self._amb("egrad2rgrad", g, "g")
        Jg = g.copy()
        Jg[0] = -Jg[0]
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("egrad2rgrad", Jg + minkowski_inner(x, Jg) * x)

    # ------------------------------------------------------------------ exp / log / dist
    def exp(self, x, v):
        """Exp_x(v) = cosh(t) x + (sinh(t)/t) v, t = ||v||_L (Huang et al. (2024) section 6.3).

        t comes from :func:`tangent_inner` (the space parts of x and v), the space part of the
        result is the formula's, and its time coordinate is sqrt(1 + ||y_bar||^2): all three use
        the same data, so a relative error in t cannot throw the result off H^d (the printed
        t = sqrt(<v, v>_L) does, by eps x_0^2 sinh(t)^2 / t at a far point).

        Domain: ``||v||_L <= 700`` and a result with ``x_0 <= X0_MAX = 2^500``; else ``ValueError``.
        """
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        with np.errstate(over="ignore", invalid="ignore"):
            t = tangent_norm(x, v)
        if not t <= 700.0:
            raise ValueError(f"Lorentz.exp: ||v||_L = {t:.6g} overflows cosh (limit 700)")
        y = np.empty_like(x)
        with np.errstate(over="ignore", invalid="ignore"):
            y[1:] = math.cosh(t) * x[1:] + sinhc(t) * v[1:]
            y[0] = time_coordinate(y[1:])
        if not (np.all(np.isfinite(y)) and y[0] <= X0_MAX):
            raise ValueError(f"Lorentz.exp: the result overflows the domain of the model (x_0 = {y[0]:.3e} > 2^500 = "
                             f"{X0_MAX:.2e}; from x_0 = {x[0]:.3e} with ||v||_L = {t:.6g})")
        return y

    def log(self, x, y):
        """Log_x(y) = (theta / sinh theta) (y + <x, y>_L x), theta = dist(x, y) (Huang et al. (2024) section 6.3).

        On H^d, <x, y>_L = -1 - h with h = cosh(theta) - 1 (:func:`chord`), so the space part of
        y + <x, y>_L x is ``c_bar - h x_bar`` with c = y - x: no difference of two large vectors
        when y is near x. The time coordinate follows from tangency, ``v_0 = <x_bar, v_bar>/x_0``.
        """
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        cb, _, h = chord(x, y)
        v = np.empty_like(x)
        v[1:] = t_over_sinh(chord_to_dist(2.0 * h)) * (cb - h * x[1:])
        v[0] = float(x[1:] @ v[1:]) / time_coordinate(x[1:])
        return self._out("log", v)

    def dist(self, x, y):
        """dist(x, y) = 2 asinh(sqrt(<y-x, y-x>_L)/2) (= acosh(-<x, y>_L) of Huang et al. (2024) section 6.3).

        <y-x, y-x>_L = 2h with h = cosh(dist) - 1 from :func:`chord` (chord form when close,
        -<x, y>_L - 1 when dist > 1.3).
        """
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        return chord_to_dist(2.0 * chord(x, y)[2])

    def transp(self, x, y, v):
        """Parallel transport along the geodesic: v + <y, v>_L / (1 - <x, y>_L) (x + y).

        For v in T_x, <y, v>_L = <p, v>_L with p = c - h x, c = y - x and h = cosh(dist) - 1 from
        :func:`chord`: <x, v>_L = 0, and p = proj_x(c) is tangent at x (<x, c>_L = -h), the space part
        of Log_x(y) times sinh(dist)/dist. So <y, v>_L is the metric of two tangent vectors at x, read
        from their space parts by :func:`tangent_inner` without cancellation. The plain
        c_bar . v_bar - c_0 v_0 cancels two terms of size x_0^2 ||v|| at a far point: at x_0 = 2.4e8 it
        changed the norm of a transported unit vector by up to 10% (the verified twin's, by 95%). Then
        1 - <x, y>_L = 2 + h >= 2. The space part is the formula's; the time coordinate follows from
        tangency at y.
        """
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        cb, c0, h = chord(x, y)
        w = np.empty_like(v)
        with np.errstate(over="ignore", invalid="ignore"):
            p = np.empty_like(v)
            p[0] = 0.0  # (tangent_inner reads the space parts only)
            p[1:] = cb - h * x[1:]
            beta = tangent_inner(x, p, v) / (2.0 + h)
            w[1:] = v[1:] + beta * (x[1:] + y[1:])
            w[0] = float(y[1:] @ w[1:]) / time_coordinate(y[1:])
        return self._out("transp", w)

    def retr(self, x, v):
        """The exponential map is the retraction (closed form, no cheaper second-order choice)."""
        return self.exp(x, v)

    def inv_retr(self, x, y):
        """Inverse of :meth:`retr`: the logarithm."""
        return self.log(x, y)

    # ------------------------------------------------------------------ basis and sampling
    def tangent_basis(self, x):
        """Orthonormal basis of T_x: the origin's basis e_1..e_d transported (boosted) to x.

        With o = (1, 0, ..., 0): PT_{o->x}(e_k) = e_k + x_k/(1 + x_0) (o + x), i.e.
        E_k = (x_k, e_k + x_k x_bar/(1 + x_0)). Row k-1 holds E_k.
        """
        x = self._pt("tangent_basis", x)
        d = self.d
        E = np.empty((d, d + 1))
        E[:, 0] = x[1:]
        E[:, 1:] = np.outer(x[1:], x[1:]) / (1.0 + x[0]) + np.eye(d)
        return self._out("tangent_basis", E)

    def origin(self) -> np.ndarray:
        """The point o = (1, 0, ..., 0)."""
        o = np.zeros(self.d + 1)
        o[0] = 1.0
        return o

    def random_point(self, rng: np.random.Generator) -> np.ndarray:
        """Exp_o(v), v = (0, z), z ~ N(0, I_d): a point at a moderate radius (about sqrt(d))."""
        v = np.zeros(self.d + 1)
        v[1:] = rng.standard_normal(self.d)
        return self.exp(self.origin(), v)

    def injectivity_radius(self, x=None) -> float:
        """H^d is a Hadamard manifold: Exp_x is a diffeomorphism, the radius is infinite."""
        return math.inf

    # ------------------------------------------------------------------ Poincare ball
    def to_poincare(self, x) -> np.ndarray:
        """Stereographic projection from (-1, 0): p = x_bar / (1 + x_0), ||p|| < 1."""
        x = self._pt("to_poincare", x)
        return x[1:] / (1.0 + x[0])

    def from_poincare(self, p) -> np.ndarray:
        """Inverse map: x = (1 + ||p||^2, 2 p) / (1 - ||p||^2); raises unless ||p|| < 1."""
        where = self._where("from_poincare")
        p = as_float_array(where, "p", p, (self.d,))
        r2 = float(p @ p)
        if not r2 < 1.0:
            raise ValueError(f"{where}: p is not in the open unit ball (||p|| = {math.sqrt(r2):.6g} >= 1)")
        den = 1.0 - r2
        x = np.empty(self.d + 1)
        x[0] = (1.0 + r2) / den
        x[1:] = (2.0 / den) * p
        return x
