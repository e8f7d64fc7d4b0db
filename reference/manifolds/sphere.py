"""The unit sphere S^d = {x in R^{d+1} : ||x||_2 = 1} with the induced (Euclidean) metric.

Sources: Huang et al. (2024) section 6.1 (metric, Exp), Han et al. (2024) section 5.1 (tangent space, Riemannian gradient
(I - x x^T) grad F), Sutti (2022) slides "Exponential and logarithm mapping" (Log with arccos), Absil,
Mahony & Sepulchre (2008) section 4.1 (projective retraction). Derivations, the numerically
stable forms used below and the errata are in ``proofs_notes/manifold_sphere.md``.

Numerics (each one a test in ``tests/manifolds/test_sphere.py``):

- ``dist = 2 atan2(||x - y||, ||x + y||)``: relative accuracy at tiny angles and absolute
  accuracy near pi (``arccos(x^T y)`` returns 0 below about 1e-8 and loses half the digits).
- ``exp`` uses :func:`sinc`, exact at 0.
- ``log`` scales the tangent direction ``proj_x(y - x)`` (or ``proj_x(y + x)`` on the far
  hemisphere; both equal ``proj_x(y)`` on the sphere) by ``dist``: exact to rounding at 1e-9 and
  up to pi - 1e-6. It refuses ``y`` within ``ANTIPODAL_TOL`` of ``-x``.
- ``transp`` is the log-free form ``w - (y^T w)/(1 + x^T y) (x + y)``, rewritten with
  ``y = (x^T y) x + P_x y`` so that ``1 + x^T y`` is never formed where it cancels (see the note).

Examples
--------
Orthogonal unit vectors are a quarter great circle apart (distance pi/2); Log and Exp walk it,
and a vector orthogonal to the great circle is transported unchanged:

>>> import numpy as np
>>> from prirfed.reference.manifolds.sphere import Sphere
>>> M = Sphere(2)
>>> x, y, z = np.eye(3)
>>> float(M.dist(x, y))                     # pi/2
1.5707963267949
>>> M.log(x, y) / (np.pi / 2)               # dist(x, y) times the unit direction e_1
array([0., 1., 0.])
>>> bool(np.allclose(M.exp(x, M.log(x, y)), y, rtol=0, atol=1e-15))
True
>>> M.transp(x, y, z)
array([0., 0., 1.])
>>> M.curvature_bounds                      # the unit sphere has sectional curvature 1
(1.0, 1.0)
>>> M.log(x, -x)                            # antipodes: no unique minimizing geodesic
Traceback (most recent call last):
...
ValueError: Sphere.log: y is (numerically) antipodal to x ...
"""

from __future__ import annotations

import math

import numpy as np

from .base import EXP_MAX_STEP, Manifold, dot2, norm2, positive_int

__all__ = ["Sphere", "sinc", "ANTIPODAL_TOL"]

#: ``log``/``transp`` refuse ``y`` with ``||x + y|| <= ANTIPODAL_TOL`` (``||x + y|| = 2 sin((pi -
#: theta)/2)``, about ``pi - theta``). The direction of Log_x(y) has condition number about
#: ``1/||x + y||`` with respect to perturbations of y, so at sqrt(eps) an input rounding error of
#: one ulp already spoils half the digits of the direction; closer than that it is noise.
ANTIPODAL_TOL = math.sqrt(np.finfo(np.float64).eps)  # 1.49e-8


def sinc(t: float) -> float:
    r""":math:`\operatorname{sinc}(t) = \sin(t)/t` with :math:`\operatorname{sinc}(0) = 1`, for the exponential map of Huang et al. (2024), Section 6.1.

    Evaluated as written for every :math:`t \ne 0`: ``sin(t)/t`` has no cancellation for
    :math:`t > 0` (both roundings are relative; ``sin`` returns its argument below about 1e-8), and
    it is within 1.4 ulp of 50 digits from the least subnormal to :math:`\pi`
    (``tests/manifolds/test_sphere.py::test_sinc_against_mpmath``). A Taylor branch below
    :math:`10^{-4}` was dropped: its :math:`t^4` term never changed a rounded value.

    Parameters
    ----------
    t : float
        The argument (its absolute value is used: sinc is even).

    Returns
    -------
    float
        :math:`\sin(t)/t`.
    """
    t = abs(float(t))
    if t == 0.0:
        return 1.0
    return math.sin(t) / t


class Sphere(Manifold):
    r"""The unit sphere :math:`S^d \subset \mathbb R^{d+1}`, sectional curvature 1; Huang et al. (2024), Section 6.1; Han et al. (2024), Section 5.1.

    ``dim = d``, ``ambient_shape = (d + 1,)``. Point and tangent tolerances scale with the
    dimension: ``tol = max(1e-10, 1000 (d+1) eps)`` (a (d+1)-term dot product carries at most
    (d+1) eps relative rounding). A point needs :math:`|\lVert x\rVert - 1| \le` ``tol``; a tangent
    vector :math:`|x^\top v| \le` ``tol`` :math:`\cdot \max(1, \lVert v\rVert)`.

    Domain (``proofs_notes/manifold_sphere.md``): points and tangent vectors are finite
    real arrays of shape (d + 1,) passing the checks above; ``exp`` also needs
    ``||v|| < EXP_MAX_STEP = 2^52`` (beyond, no float64 input determines the endpoint); ``retr``
    needs ``||x + v||`` to be a float64 (< 1.8e308); ``log``/``transp`` refuse antipodal pairs and
    ``inv_retr`` points outside the open hemisphere. Every result is finite (else ``ValueError``);
    norms do not overflow before the norm itself does.

    The retraction is the projective one, :math:`R_x(v) = (x + v)/\lVert x + v\rVert` (Absil,
    Mahony and Sepulchre (2008), Section 4.1; the DP-PGD step of Han et al. (2024)); its inverse
    :math:`R_x^{-1}(y) = y/(x^\top y) - x` exists on the open hemisphere :math:`x^\top y > 0`. The
    papers' algorithms are written with Exp, which :meth:`exp` provides.

    Parameters
    ----------
    d : int
        Intrinsic dimension, at least 1 (points live in :math:`\mathbb R^{d+1}`).
    validate : bool, optional
        Check every input (default True).

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer.
    """

    exact_transport = True

    def __init__(self, d: int, validate: bool = True):
        super().__init__(validate)
        self.d = positive_int("Sphere", "dimension d", d)
        self.dim = self.d
        self.ambient_shape = (self.d + 1,)
        self.curvature_bounds = (1.0, 1.0)
        self.tol = max(1e-10, 1000.0 * (self.d + 1) * np.finfo(np.float64).eps)

    def __repr__(self) -> str:
        return f"Sphere({self.d})"

    # ------------------------------------------------------------------ checks
    def _point_defect(self, x):
        defect = abs(norm2(x) - 1.0)
        if not defect <= self.tol:
            return f"not on the sphere (| ||x|| - 1 | = {defect:.1e}, tolerance {self.tol:.1e})"
        return None

    def _tangent_defect(self, x, v):
        nv = norm2(v)
        # |x^T v| <= tol max(1, ||v||), evaluated on v / max(1, ||v||) so that x^T v cannot overflow
        s = max(1.0, nv)
        rel = abs(float(x @ (v / s)))
        if not rel <= self.tol:
            allowed = self.tol * s
            return (f"not tangent at x (|x^T v| = {rel * s:.1e}, tolerance {allowed:.1e} "
                    f"= {self.tol:.1e} * max(1, ||v|| = {nv:.3g}))")
        return None

    def _antipodal_message(self, method: str, x, y) -> str | None:
        """None when ``||x + y|| > ANTIPODAL_TOL``, else the refusal message."""
        a = float(np.linalg.norm(x + y))
        if a > ANTIPODAL_TOL:
            return None
        return (f"{self._where(method)}: y is (numerically) antipodal to x (||x + y|| = {a:.2e}, "
                f"about pi - dist(x, y); threshold {ANTIPODAL_TOL:.2e}): the minimizing geodesic is "
                f"not unique or its direction is lost in rounding")

    def _refuse_antipodal(self, method: str, x, y) -> None:
        msg = self._antipodal_message(method, x, y)
        if msg is not None:
            raise ValueError(msg)

    def injectivity_radius(self, x=None) -> float:
        """pi at every point (the cut locus of x is {-x})."""
        return math.pi

    # ------------------------------------------------------------------ metric
    def inner(self, x, u, v):
        """<u, v>_x = u^T v (induced metric; Huang et al. (2024) section 6.1, Han et al. (2024) section 5.1)."""
        x = self._pt("inner", x)
        u = self._tv("inner", x, u, "u")
        v = self._tv("inner", x, v, "v")
        return self._out("inner", dot2(u, v))

    def norm(self, x, u):
        """||u||_x = ||u||_2."""
        x = self._pt("norm", x)
        u = self._tv("norm", x, u, "u")
        return self._out("norm", norm2(u))

    def proj(self, x, w):
        """P_x w = (I - x x^T) w = w - (x^T w) x (Han et al. (2024) section 5.1; Sutti (2022) slides P_x)."""
        x = self._pt("proj", x)
        w = self._amb("proj", w)
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("proj", w - (x @ w) * x)

    def egrad2rgrad(self, x, g):
        """grad f(x) = (I - x x^T) nabla f(x) (Han et al. (2024) section 5.1): the projection of the Euclidean gradient."""
        x = self._pt("egrad2rgrad", x)
        g = self._amb("egrad2rgrad", g, "g")
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("egrad2rgrad", g - (x @ g) * x)

    # ------------------------------------------------------------------ geodesics
    def exp(self, x, v):
        """Exp_x(v) = cos(||v||) x + sin(||v||)/||v|| v (Huang et al. (2024) section 6.1, Han et al. (2024) section 5.1), with
        sin(t)/t evaluated by :func:`sinc` so that Exp_x(0) = x exactly (the printed form is 0/0).

        The result is divided by its norm (a change of O(eps) when x is a unit vector and v is
        tangent). Without it, iterated gradient steps drift off the sphere geometrically: a gradient
        formula that is tangent only when ||x|| = 1 (sphere PCA's -2c a (z - a x)) amplifies the
        rounding error of ||x|| by a constant factor per step (1.28 per round at Huang et al. (2024) Fig. 1's step
        1/(2 L_g), from 2e-16 to 1.4e-6 in 100 rounds), found by the verified-trainer benchmark;
        ``test_exp_keeps_iterated_gradient_steps_on_the_sphere``.

        Domain: ``||v|| < 2^52`` (:data:`~prirfed.reference.manifolds.base.EXP_MAX_STEP`); t = ||v|| is
        evaluated without overflow (:func:`~prirfed.reference.manifolds.base.norm2`).
        """
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        t = norm2(v)
        if not t < EXP_MAX_STEP:
            raise ValueError(f"Sphere.exp: ||v|| = {t:.3e} is not below 2^52 = {EXP_MAX_STEP:.2e}: one ulp of ||v|| "
                             "is then >= 1 radian, so no float64 input determines where the geodesic ends")
        y = math.cos(t) * x + sinc(t) * v
        return self._out("exp", y / norm2(y))

    def dist(self, x, y):
        """dist(x, y) = 2 atan2(||x - y||, ||x + y||), the angle between x and y.

        Equal to arccos(x^T y) on the sphere (||x - y|| = 2 sin(theta/2), ||x + y|| = 2 cos(theta/2)),
        but accurate to rounding at every angle; arccos loses everything below about 1e-8.
        """
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        return 2.0 * math.atan2(norm2(x - y), norm2(x + y))

    def log(self, x, y):
        """Log_x(y) = theta P_x y / ||P_x y||, theta = dist(x, y) (Sutti (2022) slides, with arccos(x^T y) replaced).

        P_x y is computed as P_x (y - x) when x^T y >= 0 and as P_x (y + x) otherwise (P_x x = 0,
        so all three are equal on the sphere); the difference y -/+ x is formed before any
        cancellation can occur, so the direction is accurate to rounding from theta = 1e-9 up to
        pi - 1e-6, with no theta/sin(theta) series needed (we divide by the computed ||P_x y||).
        Refuses y within ANTIPODAL_TOL of -x. Log_x(x) = 0.
        """
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        self._refuse_antipodal("log", x, y)
        theta = 2.0 * math.atan2(float(np.linalg.norm(x - y)), float(np.linalg.norm(x + y)))
        r = y - x if x @ y >= 0.0 else y + x
        w = r - (x @ r) * x
        nw = float(np.linalg.norm(w))
        if nw == 0.0:  # y = x (up to a radial factor): Log_x(y) = 0
            return np.zeros_like(x)
        return (theta / nw) * w

    def transp(self, x, y, v):
        """Parallel transport along the minimizing geodesic, log-free form (no trigonometry)
        Gamma_x^y v = v - (y^T v)/(1 + x^T y) (x + y).

        Evaluated with y = c x + p (c = x^T y, p = P_x y, s = ||p|| = sin(theta), u = p/s): on T_x,
        y^T v = u^T v s and x + y = (1 + c) x + p, and (1 + c)(1 - c) = s^2, so the printed form is
        Gamma_x^y v = v - (u^T v) (a u + s x),  a = 1 - c = s^2/(1 + c).
        a is taken as 1 - c when c < 0 and s^2/(1 + c) when c >= 0, and p as P_x(y -/+ x) (as in
        :meth:`log`), so nothing cancels: the printed 1 + x^T y loses all its digits near the antipode
        (it is ~theta'^2/2 there, theta' = pi - theta). Refuses y within ANTIPODAL_TOL of -x.
        """
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        self._refuse_antipodal("transp", x, y)
        c = float(x @ y)
        r = y - x if c >= 0.0 else y + x
        p = r - (x @ r) * x
        s = float(np.linalg.norm(p))
        if s == 0.0:  # y = x: the identity
            return v.copy()
        u = p / s
        a = s * s / (1.0 + c) if c >= 0.0 else 1.0 - c
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("transp", v - float(u @ v) * (a * u + s * x))

    # ------------------------------------------------------------------ retraction
    def retr(self, x, v):
        """Projective retraction R_x(v) = (x + v)/||x + v|| (Absil et al. 2008, Example 4.1.1).

        Domain: every tangent v with ||x + v|| below the float64 range (the norm is evaluated
        without overflow of the squares, so ||v|| up to about 1e308 / sqrt(d + 1) is fine)."""
        x = self._pt("retr", x)
        v = self._tv("retr", x, v)
        s = x + v
        n = norm2(s)
        if not math.isfinite(n):
            raise ValueError(f"Sphere.retr: ||x + v|| overflows float64 (entries up to {np.max(np.abs(v)):.3e})")
        return self._out("retr", s / n)

    def inv_retr(self, x, y):
        """R_x^{-1}(y) = y/(x^T y) - x = P_x y / (x^T y), defined for x^T y > 0.

        Evaluated as P_x(y - x)/(x^T y) (no cancellation at small angles). Refuses
        x^T y <= ANTIPODAL_TOL (y outside the open hemisphere that R_x reaches).
        """
        x = self._pt("inv_retr", x)
        y = self._pt("inv_retr", y, "y")
        c = float(x @ y)
        if c <= ANTIPODAL_TOL:
            raise ValueError(f"Sphere.inv_retr: y is not in the open hemisphere x^T y > 0 reached by retr "
                             f"(x^T y = {c:.2e}, threshold {ANTIPODAL_TOL:.2e})")
        r = y - x
        return (r - (x @ r) * x) / c

    # ------------------------------------------------------------------ basis and draws
    def tangent_basis(self, x):
        """Orthonormal basis E_k = e_k - x_k (x + s e_0)/(1 + s x_0), k = 1..d, s = sign(x_0) (s = 1 at x_0 = 0).

        Rows k = 1..d of the Householder reflection I - 2 n n^T/||n||^2, n = x + s e_0, which maps
        e_0 to -s x (so the rows are orthonormal and orthogonal to x); equivalently the parallel
        transport of e_k from the pole s e_0 to x. The sign choice keeps 1 + s x_0 >= 1 (no
        cancellation anywhere); the basis is smooth on each open hemisphere x_0 > 0, x_0 < 0.
        Shape (d, d + 1), row k - 1 is E_k.
        """
        x = self._pt("tangent_basis", x)
        s = 1.0 if x[0] >= 0.0 else -1.0
        m = x.copy()
        m[0] += s
        m /= 1.0 + s * x[0]
        return np.eye(self.d + 1)[1:] - np.outer(x[1:], m)

    def random_point(self, rng):
        """Uniform point on S^d: a standard Gaussian in R^{d+1}, normalised (rotation invariance)."""
        while True:
            z = rng.standard_normal(self.d + 1)
            n = float(np.linalg.norm(z))
            if n > 0.0:  # probability-zero event, redrawn rather than divided by zero
                return z / n
