"""The Manifold contract and the input checks every manifold shares.

Every manifold in :mod:`prirfed.reference.manifolds` subclasses :class:`Manifold` and provides
the methods below with exactly these names and argument order (base point first). Outside
checks rely on the names, so do not rename them.

Validation policy: every public method validates its inputs when
``self.validate`` is true (the default). A defect raises ``ValueError`` whose message names the
method, the defect and its size, e.g. ``"Sphere.exp: not on the sphere (| ||x|| - 1 | =
3.1e-02, tolerance 1.0e-10)"``. Subclasses implement the geometry in the ``_``-prefixed
defect finders and never silently repair input.

Domains and results: an array argument is read by :func:`as_float_array`, which
accepts real numbers only (float, int and unsigned arrays or sequences of them; complex,
boolean, string and date arrays are refused rather than converted, since NumPy would drop an
imaginary part or turn ``True`` and ``"1.5"`` into numbers without a word). Every comparison
that decides a refusal is written so that NaN fails it (``not defect <= tol``): an overflowed
check cannot wave a point through. A result that is not finite is never returned: public
methods pass their results through :meth:`Manifold._out`, which raises ``ValueError`` naming
the method. Norms are evaluated by :func:`norm2`, which does not overflow or underflow while
the norm itself is a normal float64. Each manifold documents the domain of its methods (the
inputs they accept) in its class docstring and in its proofs note.
"""

from __future__ import annotations

import abc
import math

import numpy as np

__all__ = ["Manifold", "zeta", "as_float_array", "norm2", "dot2", "finite_or_raise", "positive_int", "EXP_MAX_STEP"]


def zeta(kappa_min: float, D: float) -> float:
    r"""Curvature constant :math:`\zeta(\kappa_{\min}, D)` of Huang et al. (2024), eq. (5.1); Zhang and Sra (2016), Lemma 5.

    .. math::

        \zeta(\kappa, D) = \frac{\sqrt{|\kappa|}\,D}{\tanh(\sqrt{|\kappa|}\,D)} \ \ (\kappa < 0),
        \qquad \zeta = 1 \ \ (\kappa \ge 0).

    The extracted text of Huang et al. (2024) prints ``sqrt(|kappa_min| M)``; the trigonometric
    distance bound it comes from (their Lemma A.2) needs ``sqrt(|kappa_min|) * M`` (proofs note
    ``manifold_euclidean``). :math:`x/\tanh x` is evaluated as written for every :math:`x > 0` (within 1.4 ulp of
    a 50-digit value down to the least subnormal: ``tanh`` is correctly rounded to within an ulp there
    and equals its argument below about 1e-8), and is its limit 1 at :math:`x = 0`.

    Parameters
    ----------
    kappa_min : float
        Lower bound of the sectional curvature.
    D : float
        Diameter of the domain, :math:`\ge 0`.

    Returns
    -------
    float
        :math:`\zeta(\kappa_{\min}, D) \ge 1`.

    Raises
    ------
    ValueError
        If ``kappa_min`` or ``D`` is not finite, or ``D < 0``.
    """
    kappa_min = float(kappa_min)
    D = float(D)
    if not (math.isfinite(kappa_min) and math.isfinite(D)):
        raise ValueError(f"zeta: kappa_min and D must be finite (got kappa_min={kappa_min}, D={D})")
    if D < 0:
        raise ValueError(f"zeta: the diameter D must be >= 0 (got D={D})")
    if kappa_min >= 0:
        return 1.0
    x = math.sqrt(-kappa_min) * D
    if x == 0.0:
        return 1.0
    return x / math.tanh(x)


#: dtype kinds read as real numbers: float, signed and unsigned integers, and object arrays
#: (converted element by element, so a complex or string element is refused there).
REAL_KINDS = frozenset("fiuO")
KIND_NAMES = {"b": "boolean", "c": "complex", "U": "string", "S": "bytes", "M": "datetime",
               "m": "timedelta", "V": "structured"}


def as_float_array(where: str, name: str, a, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` as a finite float64 array of the given shape (the input check of every manifold method).

    Helper, not a paper formula: argument validation. Only real numbers are read: complex input would
    lose its imaginary part and booleans or strings would become numbers in a silent cast, so their
    arrays are refused by dtype.

    Parameters
    ----------
    where : str
        The public function being called (``"Sphere.exp"``), named in the error message.
    name : str
        The argument's name, named in the error message.
    a : array_like
        The value to check.
    shape : tuple of int
        The required shape.

    Returns
    -------
    numpy.ndarray
        ``a`` as a float64 array.

    Raises
    ------
    ValueError
        If ``a`` cannot be read as a float array, has another shape, or has NaN or infinite entries.
    """
    try:
        raw = np.asarray(a)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{where}: {name} cannot be read as a float array ({exc})") from None
    kind = raw.dtype.kind
    if kind not in REAL_KINDS:
        what = KIND_NAMES.get(kind, f"dtype {raw.dtype}")
        raise ValueError(f"{where}: {name} is a {what} array (dtype {raw.dtype}); expected real numbers")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{where}: {name} cannot be read as a float array ({exc})") from None
    if arr.shape != tuple(shape):
        raise ValueError(f"{where}: {name} has shape {arr.shape}, expected {tuple(shape)}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{where}: {name} has {bad} non-finite entr{'y' if bad == 1 else 'ies'} (NaN or inf)")
    return arr


#: Exp on a compact manifold (Sphere, Stiefel) refuses steps with ||v|| >= EXP_MAX_STEP = 2^52
#: (4.5e15): from there on one ulp of ||v|| is >= 1, so a float64 input cannot say where on its
#: geodesic (of length 2 pi per turn) the endpoint lies; the result would be determined by the
#: rounding of the implementation, not by the input (and the twins would differ by O(1)).
EXP_MAX_STEP = 2.0**52

#: Below this sum of squares :func:`norm2` rescales (the squares of entries below ~1e-146 would
#: underflow and lose digits); above it the plain sum is exact to rounding.
_NORM2_SMALL = 1e-290


def norm2(a) -> float:
    r"""Euclidean (Frobenius) norm of a float array, without overflow or underflow of the squares.

    Helper, not a paper formula: the overflow-free norm (Blue 1978; LAPACK's dnrm2 does the same).

    :math:`\sqrt{\sum a_i^2}` is used when the sum of squares is a normal number; otherwise the array
    is divided by its largest :math:`|a_i| = m` first and the result is
    :math:`m\sqrt{\sum (a_i/m)^2}`.

    Parameters
    ----------
    a : numpy.ndarray
        A float array of any shape.

    Returns
    -------
    float
        The norm; inf only when the norm itself exceeds the float64 range (about 1.8e308), NaN only
        for NaN input.
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        s = float(a @ a)
    if _NORM2_SMALL <= s < math.inf:
        return math.sqrt(s)
    m = float(np.max(np.abs(a))) if a.size else 0.0
    if not (0.0 < m < math.inf):
        return m  # 0 for the zero vector; inf or NaN for non-finite input
    b = a / m
    with np.errstate(under="ignore"):
        return m * math.sqrt(float(b @ b))


def dot2(a, b) -> float:
    r"""Euclidean inner product :math:`a^T b` of two float arrays whose partial sums may overflow.

    Helper, not a paper formula: the overflow-free inner product (same idea as :func:`norm2`).

    The plain sum when it is finite; otherwise (a partial sum overflowed: ``inf`` or, when
    overflows of both signs meet, NaN) both arrays are scaled by exact powers of two,
    :math:`a = 2^{k_a}\hat a`, :math:`b = 2^{k_b}\hat b` with :math:`\max|\hat a_i|, \max|\hat b_i| < 1`,
    so :math:`|\hat a^T\hat b| <` the length, and the result is :math:`2^{k_a+k_b}\hat a^T\hat b`:
    infinite only when the inner product itself is beyond the float64 range, with its sign, never
    NaN for finite input (the two twins summed in different orders used to return ``inf`` and NaN for
    the same vectors). The scaled sum runs in index order without fused multiply-adds, as the
    verified twin's loop, so both twins give the same value on this path.

    Parameters
    ----------
    a, b : numpy.ndarray
        Float arrays of the same size.

    Returns
    -------
    float
        The inner product.
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    with np.errstate(over="ignore", invalid="ignore"):
        s = float(a @ b)
    if math.isfinite(s) or a.size == 0:
        return s
    ma = float(np.max(np.abs(a)))
    mb = float(np.max(np.abs(b)))
    if not (math.isfinite(ma) and math.isfinite(mb)):
        return s  # non-finite input
    ka = math.frexp(ma)[1]
    kb = math.frexp(mb)[1]
    with np.errstate(under="ignore"):
        a_hat, b_hat = np.ldexp(a, -ka).tolist(), np.ldexp(b, -kb).tolist()
    t = 0.0
    for ai, bi in zip(a_hat, b_hat):  # in order, unfused: the verified twin's sum, rounding for rounding
        t += ai * bi
    with np.errstate(over="ignore"):
        return float(np.ldexp(t, ka + kb))  # inf (with its sign) only when a^T b is beyond the range


def finite_or_raise(where: str, value, what: str = "result"):
    """``value`` unchanged if every entry is finite, else ``ValueError`` naming ``where``.

    Helper, not a paper formula: the finite-result check of every public manifold method.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    value : array_like or float
        The result to check.
    what : str, optional
        What ``value`` is, named in the error message (default ``"result"``).

    Returns
    -------
    array_like or float
        ``value`` itself.

    Raises
    ------
    ValueError
        If an entry of ``value`` is NaN or infinite.
    """
    arr = np.asarray(value, dtype=np.float64)
    if np.all(np.isfinite(arr)):
        return value
    if arr.ndim == 0:
        raise ValueError(f"{where}: the {what} overflows float64 (got {float(arr)})")
    bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
    big = float(np.max(np.abs(arr[np.isfinite(arr)]), initial=0.0))
    raise ValueError(f"{where}: the {what} overflows float64 ({bad} of {arr.size} entries are inf or NaN; "
                     f"largest finite entry {big:.3e})")


def positive_int(where: str, name: str, value) -> int:
    """``value`` as an int at least 1 (ints, integral floats, NumPy integers), else ``ValueError``.

    Helper, not a paper formula: argument validation.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    name : str
        The argument's name, named in the error message.
    value : int or float
        The value to check.

    Returns
    -------
    int
        ``value`` as an int.

    Raises
    ------
    ValueError
        If ``value`` is not a positive integer (booleans, strings, NaN and non-integral floats included).
    """
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if not (ok and math.isfinite(value) and int(value) == value and value >= 1):
        raise ValueError(f"{where}: {name} must be a positive integer (got {value!r})")
    return int(value)


class Manifold(abc.ABC):
    """Abstract Riemannian manifold embedded in an ambient array space (the contract of every manifold).

    The methods follow Absil, Mahony and Sepulchre (2008): metric, projection onto the tangent
    space, Riemannian gradient, exponential and logarithm, distance, transport, retraction and its
    inverse, with the base point first. Subclasses set the attributes below in their constructor.

    Parameters
    ----------
    validate : bool, optional
        Whether public methods check their inputs (default True).

    Attributes
    ----------
    dim : int
        Intrinsic dimension.
    ambient_shape : tuple of int
        Shape of the arrays representing points and tangent vectors.
    curvature_bounds : tuple of float
        ``(kappa_min, kappa_max)``: bounds on the sectional curvature.
    exact_transport : bool
        True when :meth:`transp` is the parallel transport along the minimizing geodesic; False
        when it is a documented vector transport (Stiefel).
    validate : bool
        Whether public methods check their inputs.
    """

    dim: int
    ambient_shape: tuple[int, ...]
    curvature_bounds: tuple[float, float]
    exact_transport: bool = True

    def __init__(self, validate: bool = True):
        self.validate = bool(validate)

    # ----------------------------------------------------------------- naming and checks
    @property
    def name(self) -> str:
        return type(self).__name__

    def _where(self, method: str) -> str:
        return f"{self.name}.{method}"

    @abc.abstractmethod
    def _point_defect(self, x: np.ndarray) -> str | None:
        """Return a message describing why ``x`` is not a point (None if it is)."""

    @abc.abstractmethod
    def _tangent_defect(self, x: np.ndarray, v: np.ndarray) -> str | None:
        """Return a message describing why ``v`` is not in T_x (None if it is)."""

    def check_point(self, x, *, where: str | None = None) -> np.ndarray:
        """Raise ``ValueError`` unless ``x`` is a point of the manifold; return it as float64."""
        where = where or self._where("check_point")
        x = as_float_array(where, "x", x, self.ambient_shape)
        msg = self._point_defect(x)
        if msg is not None:
            raise ValueError(f"{where}: {msg}")
        return x

    def check_tangent(self, x, v, *, where: str | None = None, name: str = "v") -> np.ndarray:
        """Raise ``ValueError`` unless ``v`` is in the tangent space at ``x``; return it as float64.

        ``x`` is checked too.
        """
        where = where or self._where("check_tangent")
        x = self.check_point(x, where=where)
        v = as_float_array(where, name, v, self.ambient_shape)
        msg = self._tangent_defect(x, v)
        if msg is not None:
            raise ValueError(f"{where}: {name}: {msg}")
        return v

    # helpers for subclasses: validate only when asked to
    def _checked(self, method: str, name: str, value, defect) -> np.ndarray:
        """``value`` as a float64 array of the ambient shape whose ``defect(value)`` is None, else
        ``ValueError`` naming the method and the argument (no check when ``validate`` is off)."""
        if not self.validate:
            return np.asarray(value, dtype=np.float64)
        where = self._where(method)
        value = as_float_array(where, name, value, self.ambient_shape)
        msg = defect(value)
        if msg is not None:
            raise ValueError(f"{where}: {name}: {msg}")
        return value

    def _pt(self, method: str, x, name: str = "x") -> np.ndarray:
        return self._checked(method, name, x, self._point_defect)

    def _tv(self, method: str, x: np.ndarray, v, name: str = "v") -> np.ndarray:
        return self._checked(method, name, v, lambda w: self._tangent_defect(x, w))

    def _out(self, method: str, value, what: str = "result"):
        """``value`` if it is finite; else ``ValueError("<Class>.<method>: the result overflows
        float64 ...")``. Every public method returns through this (or an equivalent check):
        a result that is not finite is an error, never a return value."""
        return finite_or_raise(self._where(method), value, what)

    def _amb(self, method: str, w, name: str = "w") -> np.ndarray:
        if not self.validate:
            return np.asarray(w, dtype=np.float64)
        return as_float_array(self._where(method), name, w, self.ambient_shape)

    # ----------------------------------------------------------------- the contract
    @abc.abstractmethod
    def inner(self, x, u, v) -> float:
        """Riemannian metric <u, v>_x."""

    def norm(self, x, u) -> float:
        """Riemannian norm ||u||_x = sqrt(<u, u>_x)."""
        return self._out("norm", math.sqrt(max(self.inner(x, u, u), 0.0)))

    @abc.abstractmethod
    def proj(self, x, w) -> np.ndarray:
        """Orthogonal projection (in the metric) of an ambient vector onto T_x."""

    @abc.abstractmethod
    def egrad2rgrad(self, x, g) -> np.ndarray:
        """Riemannian gradient from the Euclidean gradient ``g`` of a smooth extension."""

    @abc.abstractmethod
    def exp(self, x, v) -> np.ndarray:
        """Exponential map Exp_x(v)."""

    @abc.abstractmethod
    def log(self, x, y) -> np.ndarray:
        """Logarithm Exp_x^{-1}(y); raises where the minimizing geodesic is not unique."""

    @abc.abstractmethod
    def dist(self, x, y) -> float:
        """Geodesic distance."""

    @abc.abstractmethod
    def transp(self, x, y, v) -> np.ndarray:
        """Parallel transport of v from T_x to T_y along the minimizing geodesic."""

    @abc.abstractmethod
    def retr(self, x, v) -> np.ndarray:
        """A retraction R_x(v) (the exponential where no cheaper one is used)."""

    @abc.abstractmethod
    def inv_retr(self, x, y) -> np.ndarray:
        """Inverse of :meth:`retr`."""

    @abc.abstractmethod
    def tangent_basis(self, x) -> np.ndarray:
        """Orthonormal basis of T_x in the metric, shape ``(dim, *ambient_shape)``."""

    @abc.abstractmethod
    def random_point(self, rng: np.random.Generator) -> np.ndarray:
        """A random point drawn with the caller's Generator."""

    def random_tangent(self, x, rng: np.random.Generator) -> np.ndarray:
        """Standard Gaussian tangent vector: sum_k z_k e_k with z ~ N(0, I_dim) in an
        orthonormal basis e of T_x (so E||v||_x^2 = dim)."""
        x = self._pt("random_tangent", x)
        E = self.tangent_basis(x)
        z = rng.standard_normal(self.dim)
        return self._out("random_tangent", np.tensordot(z, E, axes=1))

    def __repr__(self) -> str:
        return f"{self.name}(dim={self.dim})"
