"""Shared pieces of the fuzz suite (issue 19): adversarial inputs and the twin comparison.

The property every fuzz test checks, for a call made identically on the reference and the
verified twin:

- both raise ``ValueError`` with the same message (the trainers' messages differ only by the
  ``" (verified)"`` marker after the trainer's name, the project's convention, which is removed
  before comparing); or
- both return, every returned number is finite, every returned point passes the reference's
  ``check_point``, and the two results agree to ``rtol * scale`` where ``rtol`` is the twin tests'
  1e-12 and ``scale`` the conditioning of the call (1 + ||v|| for Exp and the retractions, whose
  output moves by eps ||v|| under one rounding of v; cond(X) cond(Y) on SPD; x_0^2 y_0^2 on the
  hyperboloid, as in the twin tests; 1e2 for Stiefel's Newton logarithm, which stops at a
  residual of 1e-11);
- any other exception (TypeError, OverflowError, ZeroDivisionError, a LinAlgError, a Numba typing
  error) from either twin is a failure: bad input is refused with a one-line ``ValueError``.

Runtime refusals raised inside a fused trainer loop are fixed strings (Numba cannot format); for
them the comparison is of the ``"<Class>.<method>:"`` that names the refusing function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

RTOL = 1e-12
VERIFIED_MARKER = " (verified)"

#: Refusals whose numbers legitimately differ between the twins: Stiefel's logarithm is a damped
#: Gauss-Newton iteration solved by lstsq in the reference and by the normal equations in the
#: verified twin, so a failure reports the same text with a different residual or iteration count.
#: These messages are compared with their numbers masked.
ALGORITHM_DEPENDENT = ("Newton iteration on Exp did not converge", "the geodesic found has length")


def _mask(msg: str) -> str:
    import re

    return re.sub(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "#", msg)


@dataclass
class Outcome:
    kind: str  # "ok", "error" (ValueError) or "crash" (anything else)
    value: object

    def __repr__(self):
        v = self.value
        if self.kind == "ok":
            v = np.asarray(v) if not isinstance(v, tuple) else v
        return f"{self.kind}: {str(v)[:300]}"


def outcome(fn, *args, **kwargs) -> Outcome:
    try:
        with np.errstate(all="ignore"):
            return Outcome("ok", fn(*args, **kwargs))
    except ValueError as exc:
        return Outcome("error", str(exc))
    except Exception as exc:  # noqa: BLE001 - any other type is what the suite looks for
        return Outcome("crash", f"{type(exc).__name__}: {exc}")


def _numbers(value):
    if isinstance(value, tuple):
        return [np.asarray(v, dtype=float) for v in value if not isinstance(v, (str, dict))]
    return [np.asarray(value, dtype=float)]


def assert_twins_agree(ref: Outcome, ver: Outcome, *, scale=1.0, check_point=None, what="", prefix_only=False):
    """The property of the module docstring. ``check_point``: the reference manifold's
    ``check_point`` when the result is a point (or a stack of points); ``prefix_only``: compare only
    the ``"<name>:"`` of the two messages (runtime refusals inside fused loops)."""
    assert ref.kind != "crash", f"{what}: the reference raised something else than ValueError: {ref.value}"
    assert ver.kind != "crash", f"{what}: the verified twin raised something else than ValueError: {ver.value}"
    assert ref.kind == ver.kind, f"{what}: reference {ref!r} but verified {ver!r}"
    if ref.kind == "error":
        a, b = ref.value, ver.value.replace(VERIFIED_MARKER, "", 1)
        if prefix_only:
            a, b = a.split(":", 1)[0], b.split(":", 1)[0]
        elif any(t in a for t in ALGORITHM_DEPENDENT):
            a, b = _mask(a), _mask(b)
        assert a == b, f"{what}: different messages\n  reference: {ref.value}\n  verified:  {ver.value}"
        assert "\n" not in ref.value, f"{what}: the message is not one line: {ref.value!r}"
        return
    ra, va = _numbers(ref.value), _numbers(ver.value)
    assert len(ra) == len(va)
    for r, v in zip(ra, va):
        assert r.shape == v.shape, f"{what}: shapes {r.shape} and {v.shape}"
        assert np.all(np.isfinite(r)), f"{what}: the reference returned a non-finite result {r}"
        assert np.all(np.isfinite(v)), f"{what}: the verified twin returned a non-finite result {v}"
        if r.size:
            big = max(float(np.max(np.abs(r))), float(np.max(np.abs(v))))
            err = float(np.max(np.abs(r - v)))
            tol = RTOL * scale * (1.0 + big)
            assert err <= tol, f"{what}: results differ by {err:.3e} (tolerance {tol:.3e})"
    if check_point is not None:
        for res in (ref.value, ver.value):
            check_point(res)


# ---------------------------------------------------------------------------- adversarial values
#: magnitudes from subnormal to the edge of float64, with the decades where squares over- and
#: underflow (1e-162, 1.3e154) and where Exp's domain ends (2^52 = 4.5e15)
EDGE_MAGNITUDES = [0.0, 5e-324, 1e-310, 1e-300, 1e-170, 1e-162, 1e-20, 1e-8, 1.0, 3.0, 1e3, 1e8, 1e10, 4e15, 5e15,
                   1e20, 1e100, 1.3e154, 1e160, 1e200, 1e300, 1.7e308]

magnitudes = st.one_of(
    st.sampled_from(EDGE_MAGNITUDES),
    st.integers(-320, 307).map(lambda k: 10.0**k),
    st.floats(0.0, 10.0, allow_nan=False),
)

#: ways to spoil an array argument; "keep" leaves it valid
SPOILERS = ["keep", "keep", "keep", "keep", "scale", "nan", "inf", "int", "bool", "complex", "float32", "list",
            "strided", "fortran", "shape+", "shape-", "scalar", "string", "object", "none", "off", "subnormal"]


def spoil(data, a, label="arg"):
    """``a`` (a valid float array) or one adversarial variant of it, drawn by Hypothesis."""
    with np.errstate(all="ignore"):
        return _spoil(data, np.asarray(a, dtype=float), label)


def _spoil(data, a, label):
    how = data.draw(st.sampled_from(SPOILERS), label=f"{label}: spoiler")
    if how == "keep":
        return a
    if how == "scale":
        return a * data.draw(magnitudes, label=f"{label}: factor")
    if how in ("nan", "inf"):
        b = a.copy()
        if b.size:
            b.flat[data.draw(st.integers(0, b.size - 1))] = np.nan if how == "nan" else -np.inf
        return b
    if how == "int":
        return np.round(a).astype(np.int64)
    if how == "bool":
        return a != 0
    if how == "complex":
        return a.astype(complex)
    if how == "float32":
        return a.astype(np.float32)
    if how == "list":
        return a.tolist()
    if how == "strided":
        return np.stack([a, a], axis=-1)[..., 0]
    if how == "fortran":
        return np.asfortranarray(a)
    if how == "shape+":
        return np.concatenate([a.ravel(), [0.0]])
    if how == "shape-":
        return a.ravel()[:-1]
    if how == "scalar":
        return 1.0
    if how == "string":
        return "x"
    if how == "object":
        return np.array(a, dtype=object)
    if how == "none":
        return None
    if how == "off":
        return a * (1.0 + data.draw(st.sampled_from([1e-12, 1e-9, 1e-3, 1.0])))
    if how == "subnormal":
        return np.full(a.shape, 5e-324)
    raise AssertionError(how)


def cond(M, x) -> float:
    """Conditioning factor of a point for the tolerance (see the module docstring)."""
    name = type(M).__name__
    x = _as_real(x)
    if x is None or x.size == 0 or not np.all(np.isfinite(x)):
        return 1.0
    if name == "SPD" and x.ndim == 2 and x.shape[0] == x.shape[1]:
        m = float(np.max(np.abs(x)))
        if not 0.0 < m < math.inf:
            return 1.0
        w = np.linalg.eigvalsh(0.5 * (x / m + (x / m).T))
        return min(float(w[-1] / w[0]), 1e300) if w[0] > 0 else 1.0
    if name == "Lorentz" and x.ndim == 1 and x.size:
        return min(float(max(1.0, abs(x[0]))), 1e150) ** 2
    return 1.0


def _as_real(v):
    """v as a float array if it is a real numeric array or list (what the twins accept), else None."""
    try:
        a = np.asarray(v)
        if a.dtype.kind not in "fiuO":
            return None
        return np.asarray(a, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return None


def vnorm(v) -> float:
    """||v||_2 of a numeric array (0 for anything else), without overflow."""
    a = _as_real(v)
    if a is None or a.size == 0:
        return 0.0
    a = np.abs(a)
    m = float(np.max(a))
    if not 0.0 < m < math.inf:
        return 0.0
    return m * float(np.sqrt(np.sum((a / m) ** 2)))


def finite_scale(*factors) -> float:
    """The product of the finite factors, capped at 1e300 (a tolerance, not a result)."""
    s = 1.0
    for f in factors:
        if math.isfinite(f):
            s = min(s * f, 1e300)
    return s
