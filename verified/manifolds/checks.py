"""Shared numerics and checks of the verified manifolds: an overflow-free norm for njit
code, and the batch protocol that makes every ``*_batch`` method accept and refuse exactly what
the single-point method accepts and refuses, row by row.

Mirrors :func:`prirfed.reference.manifolds.base.norm2` (``norm2_kernel``) and the refusal rules of
the reference manifolds; see ``proofs_notes/manifold_*.md`` ("Domain") for the domains.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.reference.manifolds.base import KIND_NAMES, REAL_KINDS

__all__ = ["norm2_kernel", "dot2_kernel", "BatchRows"]

_SMALL = 1e-290  # = reference base._NORM2_SMALL (a literal: Numba freezes globals into its cache)


@njit(cache=True)
def norm2_kernel(a):
    """Verified twin of :func:`prirfed.reference.manifolds.base.norm2`: sqrt(sum a_i^2) without overflow or underflow
    of the squares: the plain sum when it is a normal number, else the sum of (a_i / max|a|)^2 times max|a|."""
    s = 0.0
    for t in a.flat:
        s += t * t
    if _SMALL <= s < math.inf:
        return math.sqrt(s)
    m = 0.0
    for t in a.flat:
        if not abs(t) <= m:  # NaN propagates
            m = abs(t)
    if not (0.0 < m < math.inf):
        return m
    s = 0.0
    for t in a.flat:
        u = t / m
        s += u * u
    return m * math.sqrt(s)


@njit(cache=True)
def dot2_kernel(a, b):
    """Verified twin of :func:`prirfed.reference.manifolds.base.dot2`: a^T b, and when a partial sum
    overflows, 2^(ka + kb) (2^-ka a)^T (2^-kb b) with exact power-of-two scalings (max entries below 1),
    so the result is infinite only when a^T b is, never NaN for finite input."""
    s = 0.0
    for k in range(a.shape[0]):
        s += a[k] * b[k]
    if math.isfinite(s) or a.shape[0] == 0:
        return s
    ma = 0.0
    mb = 0.0
    for k in range(a.shape[0]):
        if not abs(a[k]) <= ma:
            ma = abs(a[k])
        if not abs(b[k]) <= mb:
            mb = abs(b[k])
    if not (math.isfinite(ma) and math.isfinite(mb)):
        return s
    ka = math.frexp(ma)[1]
    kb = math.frexp(mb)[1]
    t = 0.0
    for k in range(a.shape[0]):
        t += math.ldexp(a[k], -ka) * math.ldexp(b[k], -kb)
    return math.ldexp(t, ka + kb)


def _stack(where: str, name: str, A, ambient: tuple[int, ...]) -> np.ndarray:
    """A stack of shape (n, *ambient) as C-contiguous float64, with the reference's dtype policy
    (real numbers only); finiteness and membership are checked row by row by the caller."""
    try:
        raw = np.asarray(A)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{where}: {name} cannot be read as a float array ({exc})") from None
    if raw.dtype.kind not in REAL_KINDS:
        what = KIND_NAMES.get(raw.dtype.kind, f"dtype {raw.dtype}")
        raise ValueError(f"{where}: {name} is a {what} array (dtype {raw.dtype}); expected real numbers")
    try:
        arr = np.ascontiguousarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{where}: {name} cannot be read as a float array ({exc})") from None
    if arr.ndim != 1 + len(ambient) or arr.shape[1:] != tuple(ambient):
        expected = ", ".join(["n", *map(str, ambient)])
        raise ValueError(f"{where}: {name} has shape {arr.shape}, expected ({expected})")
    return arr


class BatchRows:
    """Mixin for the verified manifolds' batched methods.

    Contract: ``M.<m>_batch(A, B, ...)`` returns ``[M.<m>(A[i], B[i], ...) for i]`` stacked, and raises
    exactly when one of these single calls raises, with the single call's message for the first
    such row i, written ``"<Class>.<m>_batch: row i: <message of <Class>.<m> without its prefix>"``.

    A subclass sets ``_batch_kernels = {"exp": kernel, ...}`` (njit kernels over stacks, raising
    ``ValueError`` instead of returning a non-finite or off-manifold row) and may define
    ``_clearly_points(X)`` / ``_clearly_tangents(X, V)``: vectorised screens returning a boolean mask
    of rows that certainly pass the single-point check (a conservative pre-test at half the
    tolerance; NaN fails it). Rows not cleared by the screens, and every row after a kernel failure,
    are checked by calling the single-point method itself, so acceptance, refusal and message come
    from the same code as in single calls. When the stacked kernel refuses (or returns a non-finite
    row) but no single call does, the result is the stack of the single calls: a single call may
    fall back to the reference where its kernel refuses (SPD at the float64 edges).

    Helper, not a paper formula: the row-by-row contract of the batched methods.
    """

    # argument kinds of each batched method: "p" point, "t" tangent at the first point
    _BATCH_ARGS = {"exp": ("X", "V"), "log": ("X", "Y"), "dist": ("X", "Y"), "transp": ("X", "Y", "V")}
    _batch_kernels: dict = {}

    def _clearly_points(self, X) -> np.ndarray:
        return np.zeros(X.shape[0], dtype=bool)

    def _clearly_tangents(self, X, V) -> np.ndarray:
        return np.zeros(X.shape[0], dtype=bool)

    def _row_error(self, method: str, i: int, args):
        """Run the single-point method on row i; return the batch error it raises (or None)."""
        try:
            getattr(self, method)(*(a[i] for a in args))
        except ValueError as exc:
            msg = str(exc)
            prefix = f"{self._where(method)}: "
            if msg.startswith(prefix):
                msg = msg[len(prefix):]
            return ValueError(f"{self._where(method + '_batch')}: row {i}: {msg}")
        return None

    def _first_row_error(self, method: str, rows, args):
        """The batch error of the first row in ``rows`` whose single call raises; a row that fails
        validation is reported only after the rows before it were run in full (one of them may
        fail in the computation, and the contract is the first failing row)."""
        for i in rows:
            err = self._row_error(method, int(i), args)
            if err is not None:
                for k in range(int(i)):
                    earlier = self._row_error(method, k, args)
                    if earlier is not None:
                        return earlier
                return err
        return None

    def _batch(self, method: str, *stacks):
        where = self._where(method + "_batch")
        names = self._BATCH_ARGS[method]
        args = [_stack(where, nm, A, self.ambient_shape) for nm, A in zip(names, stacks)]
        ns = {a.shape[0] for a in args}
        if len(ns) != 1:
            raise ValueError(f"{where}: stacks have different lengths {sorted(ns)}")
        n = ns.pop()
        if n and self.validate:
            ok = np.ones(n, dtype=bool)
            with np.errstate(all="ignore"):
                for nm, a in zip(names, args):
                    if nm == "V":
                        ok &= self._clearly_tangents(args[0], a)
                    else:
                        ok &= self._clearly_points(a)
            err = self._first_row_error(method, np.flatnonzero(~ok), args)
            if err is not None:
                raise err
        kernel = self._batch_kernels[method]
        try:
            out = kernel(*args)
        except ValueError:
            out = None
        if out is None or not np.all(np.isfinite(out)):
            err = self._first_row_error(method, range(n), args)
            if err is not None:
                raise err
            # the kernel refused a row that the single-point method accepts (it falls back to the
            # reference where its kernel refuses): the contract is the stack of the single calls
            return np.stack([getattr(self, method)(*(a[i] for a in args)) for i in range(n)])
        return out

    def exp_batch(self, X, V):
        """Exp row by row (see :class:`BatchRows` for the contract)."""
        return self._batch("exp", X, V)

    def log_batch(self, X, Y):
        """Log row by row (see :class:`BatchRows`)."""
        return self._batch("log", X, Y)

    def dist_batch(self, X, Y):
        """dist row by row (see :class:`BatchRows`)."""
        return self._batch("dist", X, Y)

    def transp_batch(self, X, Y, V):
        """transp row by row (see :class:`BatchRows`)."""
        return self._batch("transp", X, Y, V)
