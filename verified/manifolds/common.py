"""Small helpers shared by the verified manifold wrappers (no geometry here)."""

from __future__ import annotations

import numpy as np

__all__ = ["contiguous", "same_n", "KernelMetric"]


def contiguous(a) -> np.ndarray:
    """``a`` as a C-contiguous float64 array, without a copy when it already is one.

    Helper, not a paper formula: Numba compiles one specialisation per layout, so wrappers pass
    kernels C-contiguous arrays only.

    Parameters
    ----------
    a : array_like
        Any array.

    Returns
    -------
    numpy.ndarray
        ``a`` itself when it is already a C-contiguous float64 ndarray, else a converted copy.
    """
    if type(a) is np.ndarray and a.dtype == np.float64 and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(a, dtype=np.float64)


def same_n(where: str, *arrays) -> None:
    """Raise ``ValueError`` unless the stacks have the same length.

    Helper, not a paper formula.

    Parameters
    ----------
    where : str
        Function named in the error message.
    *arrays : numpy.ndarray
        Stacks (their first axis is compared).

    Raises
    ------
    ValueError
        If the first axes differ in length.
    """
    ns = {a.shape[0] for a in arrays}
    if len(ns) != 1:
        raise ValueError(f"{where}: stacks have different lengths {sorted(ns)}")


class KernelMetric:
    """``inner``, ``norm``, ``proj`` and ``egrad2rgrad`` of a verified manifold: validate with the
    reference's checks, then call the njit kernels of the module named by ``_kernels``; a result
    that is not finite raises as in the reference (``Manifold._out``).

    A verified class lists this mixin before its reference class and sets ``_kernels`` to its own
    module (which defines ``inner_kernel``, ``proj_kernel``, ``egrad2rgrad_kernel`` and, optionally,
    ``norm_kernel``; without it the norm is the square root of the inner product).

    Helper, not a paper formula: the metric methods route to the module's kernels, each a verified
    twin of the reference class's method.
    """

    _kernels = None

    def inner(self, x, u, v):
        x = self._pt("inner", x)
        u = self._tv("inner", x, u, "u")
        v = self._tv("inner", x, v, "v")
        return self._out("inner", float(self._kernels.inner_kernel(contiguous(x), contiguous(u), contiguous(v))))

    def norm(self, x, u):
        x = self._pt("norm", x)
        u = self._tv("norm", x, u, "u")
        x, u = contiguous(x), contiguous(u)
        norm_kernel = getattr(self._kernels, "norm_kernel", None)
        if norm_kernel is not None:
            return self._out("norm", float(norm_kernel(x, u)))
        return self._out("norm", float(np.sqrt(self._kernels.inner_kernel(x, u, u))))

    def proj(self, x, w):
        x = self._pt("proj", x)
        w = self._amb("proj", w)
        return self._out("proj", self._kernels.proj_kernel(contiguous(x), contiguous(w)))

    def egrad2rgrad(self, x, g):
        x = self._pt("egrad2rgrad", x)
        g = self._amb("egrad2rgrad", g, "g")
        return self._out("egrad2rgrad", self._kernels.egrad2rgrad_kernel(contiguous(x), contiguous(g)))
