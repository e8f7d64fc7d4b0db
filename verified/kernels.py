"""Small Numba kernels shared by the verified manifolds, mechanisms and trainers (one place each).

- :func:`all_finite_kernel`: are all entries of an array finite (the fused loops and the SPD kernels
  raise their own ``ValueError`` when not);
- :func:`sym_part_kernel`: the symmetric part (A + A^T) / 2, as ``reference.manifolds.spd.sym``;
- :func:`matmul_kernel`: a @ b by loops (small matrices: no BLAS call overhead, and it compiles much
  faster than Numba's BLAS binding), summed in the order of ``numpy.matmul``'s definition, k ascending;
- :func:`dot_kernel`, :func:`dot_and_square_kernel`, :func:`axpy_kernel`: the per-sample passes of the
  fused loops. Without fastmath LLVM may not reorder a running sum (one add waits ~4 cycles for the
  last), and it does not vectorise scalar partial sums either (the compiled code was scalar), so the
  two sums are written as explicit SIMD: :func:`block_dot` / :func:`block_dot_and_square` emit LLVM
  ``<4 x double>`` multiplies and adds, first over the ``m16 = n // 16`` blocks of 16 entries into
  four vector accumulators V0..V3 (16 partial sums: V_q lane l sums the entries k = 16 i + 4 q + l),
  then over the ``m4 = (n mod 16) // 4`` blocks of 4 that follow into a fifth, W; reduced in the fixed
  order U = ((V0 + V1) + (V2 + V3)) + W, then lanes ((u0 + u1) + (u2 + u3)); the last ``n mod 4``
  entries are summed in order and added last (a scalar tail of up to 15 entries was a chain of
  dependent adds that dominated at n = 25). Plain IEEE multiplies and adds in a fixed order, no
  fastmath flag, so the value is the same on every machine whatever its vector width. The rounding differs from a single
  running sum by a few ulps of the sum of ``|terms|`` (the reference's BLAS ``@`` sums in its own
  blocked order too). Times: ``benchmarks/RESULTS.md``, section "before and after two changes of
  2026-11-28".

Mirrors no single reference module: the reference writes ``np.all(np.isfinite(a))``,
``0.5 * (a + a.T)`` and ``a @ b`` inline. Tested in ``tests/kernels/test_kernels.py`` (known answers)
and ``tests/verified/test_trainer_layout.py``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["all_finite_kernel", "sym_part_kernel", "matmul_kernel", "dot_kernel", "dot_and_square_kernel", "axpy_kernel",
           "block_dot", "block_dot_and_square", "BLOCK"]

#: entries per block of the SIMD passes: four vector accumulators of four lanes
BLOCK = 16
_LANES = 4


@njit(cache=True)
def all_finite_kernel(a):
    """True iff every entry of ``a`` (any shape) is finite (no NaN, no +-inf).

    Parameters
    ----------
    a : numpy.ndarray
        Float array of any shape.

    Returns
    -------
    bool
        ``np.all(np.isfinite(a))``.
    """
    for t in a.ravel():
        if not np.isfinite(t):
            return False
    return True


@njit(cache=True)
def sym_part_kernel(a):
    """(a + a^T) / 2 for a square matrix ``a``.

    Parameters
    ----------
    a : numpy.ndarray
        Square matrix.

    Returns
    -------
    numpy.ndarray
        Its symmetric part.
    """
    return 0.5 * (a + a.T)


@njit(cache=True)
def matmul_kernel(a, b):
    """a @ b by loops: out[i, j] = sum_k a[i, k] b[k, j], k ascending (a NaN or inf anywhere in a row
    of ``a`` or a column of ``b`` propagates, as in numpy).

    Parameters
    ----------
    a : numpy.ndarray
        ``(n, m)`` matrix.
    b : numpy.ndarray
        ``(m, p)`` matrix.

    Returns
    -------
    numpy.ndarray
        ``(n, p)`` product.
    """
    n, m, p = a.shape[0], a.shape[1], b.shape[1]
    out = np.zeros((n, p))
    for i in range(n):
        for k in range(m):
            aik = a[i, k]
            for j in range(p):
                out[i, j] += aik * b[k, j]
    return out


def _vector_sums(context, builder, arrays, m16, m4, products):
    """LLVM IR of the block sums: for each pair (u, v) of array indices in ``products``, sum u * v over the first
    ``16 m16 + 4 m4`` entries in <4 x double> accumulators, reduced to one double in the fixed order
    of the module docstring."""
    f64 = ir.DoubleType()
    vty = ir.VectorType(f64, _LANES)
    intp = context.get_value_type(types.intp)
    zero = ir.Constant(vty, [0.0] * _LANES)
    data = [a.data for a in arrays]

    def accumulate(acc, off):
        vec = [builder.load(builder.bitcast(builder.gep(d, [off]), vty.as_pointer()), align=8) for d in data]
        for a, (u, v) in zip(acc, products):
            builder.store(builder.fadd(builder.load(a), builder.fmul(vec[u], vec[v])), a)

    V = [[cgutils.alloca_once_value(builder, zero) for _ in products] for _ in range(4)]
    W = [cgutils.alloca_once_value(builder, zero) for _ in products]
    with cgutils.for_range(builder, m16) as loop:
        base = builder.mul(loop.index, ir.Constant(intp, BLOCK))
        for q in range(4):
            accumulate(V[q], builder.add(base, ir.Constant(intp, _LANES * q)))
    start = builder.mul(m16, ir.Constant(intp, BLOCK))
    with cgutils.for_range(builder, m4) as loop:
        accumulate(W, builder.add(start, builder.mul(loop.index, ir.Constant(intp, _LANES))))
    out = []
    for k in range(len(products)):
        v0, v1, v2, v3, w = (builder.load(a[k]) for a in (*V, W))
        u = builder.fadd(builder.fadd(builder.fadd(v0, v1), builder.fadd(v2, v3)), w)
        lane = [builder.extract_element(u, ir.Constant(ir.IntType(32), j)) for j in range(_LANES)]
        out.append(builder.fadd(builder.fadd(lane[0], lane[1]), builder.fadd(lane[2], lane[3])))
    return out


def _contiguous_f64(*tys):
    return all(isinstance(t, types.Array) and t.ndim == 1 and t.dtype == types.float64 and t.layout == "C"
               for t in tys)


@intrinsic
def block_dot(typingctx, a, b, m16, m4):
    """sum a[k] b[k] over k < 16 m16 + 4 m4 by explicit SIMD (module docstring; 1-D C-contiguous
    float64 arrays at least that long, unchecked: the callers pass ``m16 = n // 16`` and
    ``m4 = (n % 16) // 4``)."""
    if not (_contiguous_f64(a, b) and isinstance(m16, types.Integer) and isinstance(m4, types.Integer)):
        return None
    sig = types.float64(a, b, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, v) for t, v in zip(signature.args[:2], args[:2])]
        return _vector_sums(context, builder, arrays, args[2], args[3], [(0, 1)])[0]

    return sig, codegen


@intrinsic
def block_dot_and_square(typingctx, z, x, m16, m4):
    """(sum z[k] x[k], sum z[k]^2) over k < 16 m16 + 4 m4, one pass, by explicit SIMD (as :func:`block_dot`)."""
    if not (_contiguous_f64(z, x) and isinstance(m16, types.Integer) and isinstance(m4, types.Integer)):
        return None
    sig = types.UniTuple(types.float64, 2)(z, x, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, v) for t, v in zip(signature.args[:2], args[:2])]
        zx, zz = _vector_sums(context, builder, arrays, args[2], args[3], [(0, 1), (0, 0)])
        return context.make_tuple(builder, signature.return_type, [zx, zz])

    return sig, codegen


@njit(cache=True, inline="always")
def dot_kernel(a, b):
    """sum_k a[k] b[k] (1-D, same length): partial sums by explicit SIMD (:func:`block_dot`, the
    order of the module docstring), then the last ``n mod 4`` entries in order, added last.

    Parameters
    ----------
    a, b : numpy.ndarray
        1-D arrays of the same length.

    Returns
    -------
    float
        The inner product.
    """
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    n = a.shape[0]
    m16 = n // BLOCK
    m4 = (n - BLOCK * m16) // _LANES
    s = block_dot(a, b, m16, m4)
    r = 0.0
    for k in range(BLOCK * m16 + _LANES * m4, n):
        r += a[k] * b[k]
    return s + r


@njit(cache=True, inline="always")
def dot_and_square_kernel(z, x):
    """(z^T x, z^T z) in one pass over z (partial sums by explicit SIMD, as :func:`dot_kernel`).

    Parameters
    ----------
    z, x : numpy.ndarray
        1-D arrays of the same length.

    Returns
    -------
    zx : float
        :math:`z^T x`.
    zz : float
        :math:`z^T z`.
    """
    z = np.ascontiguousarray(z)
    x = np.ascontiguousarray(x)
    n = z.shape[0]
    m16 = n // BLOCK
    m4 = (n - BLOCK * m16) // _LANES
    a, q = block_dot_and_square(z, x, m16, m4)
    ra = 0.0
    rq = 0.0
    for k in range(BLOCK * m16 + _LANES * m4, n):
        ra += z[k] * x[k]
        rq += z[k] * z[k]
    return a + ra, q + rq


@njit(cache=True, inline="always")
def axpy_kernel(alpha, x, y):
    """y += alpha x, in place.

    Parameters
    ----------
    alpha : float
        The scale.
    x : numpy.ndarray
        1-D input.
    y : numpy.ndarray
        1-D output of the same length, updated in place.
    """
    for k in range(x.shape[0]):
        y[k] += alpha * x[k]
