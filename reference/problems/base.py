"""The federated finite-sum problem (2.1) of Huang et al. (2024) that every problem class instantiates.

.. math::

    \\min_{x \\in \\mathcal M} f(x) = \\sum_{i=1}^N p_i f_i(x), \\qquad
    f_i(x) = \\frac{1}{N_i} \\sum_{j=1}^{N_i} f_{i,j}(x),

with agent weights :math:`p_i = N_i / \\sum_k N_k` (Huang et al. (2024) (2.1)) or :math:`p_i = 1/N`
(Li and Ma (2023) (2)). A subclass supplies the per-sample loss ``_f_ij`` and its Euclidean and Riemannian
gradients ``_egrad_ij`` / ``_rgrad_ij``; this class supplies the averages, the batched
per-sample gradients and the input checks. Indices ``i`` and ``j`` are 0-based.

Results: every public method returns finite values or raises ``ValueError`` naming
``<Problem>.<method>`` (:func:`public`): a loss or gradient that overflows float64, or a refusal
of the geometry inside (:class:`Refusal`, e.g. a whitened SPD sample that is not positive definite
in floating point), is an error, never a return value. Data are read with the manifolds' dtype
policy (real numbers only) by :func:`agent_arrays`; each problem states the domain of its data
(the range in which every loss and gradient is finite at every point) in its class docstring.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from prirfed.reference.manifolds.base import KIND_NAMES, REAL_KINDS

__all__ = ["FederatedProblem", "agent_weights", "agent_arrays", "stacked_view", "is_stacked", "public", "Refusal",
           "positive_float"]


class Refusal(Exception):
    """Raised inside a problem's internals; :func:`public` turns it into ``ValueError("<Problem>.<method>: <message>")``.

    Helper, not a paper formula: error plumbing.

    Parameters
    ----------
    message : str
        What was wrong, by how much.
    """


def public(method: str):
    """Decorator of a public problem method that turns every failure into one ``ValueError``.

    Helper, not a paper formula: floating-point warnings are silenced; :class:`Refusal`,
    ``OverflowError`` and ``LinAlgError`` become ``ValueError`` naming ``<Problem>.<method>``, a
    ``ValueError`` of a map the method calls (a manifold's ``log`` or ``dist``) is re-raised with its
    own message after ``<Problem>.<method>:``, and a result that is not finite is refused the same way.

    Parameters
    ----------
    method : str
        The method's name, used in the error message.

    Returns
    -------
    callable
        The decorator.
    """

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            try:
                with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
                    out = fn(self, *args, **kwargs)
            except Refusal as exc:
                raise ValueError(f"{self.name}.{method}: {exc}") from None
            except (OverflowError, np.linalg.LinAlgError) as exc:
                raise ValueError(f"{self.name}.{method}: not computable in float64 ({exc})") from None
            except ValueError as exc:
                # a refusal of a map the method calls (a manifold's Log, dist, ...): keep its words and
                # say which problem method met it; the method's own checks already name it
                if str(exc).startswith(f"{self.name}."):
                    raise
                raise ValueError(f"{self.name}.{method}: {exc}") from None
            arr = np.asarray(out, dtype=np.float64)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{self.name}.{method}: the result overflows float64 "
                                 f"({int(arr.size - np.count_nonzero(np.isfinite(arr)))} of {arr.size} entries are "
                                 "inf or NaN); the data or the point are outside the problem's domain")
            return out

        return wrapper

    return deco


def positive_float(where: str, name: str, value) -> float:
    """``value`` as a finite float > 0 (ints and floats, not booleans or strings), else ``ValueError``.

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
    float
        ``value`` as a float.

    Raises
    ------
    ValueError
        If ``value`` is not a finite number > 0.
    """
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    v = float(value) if ok else math.nan
    if not (ok and math.isfinite(v) and v > 0):
        raise ValueError(f"{where}: {name} must be a positive finite number (got {value!r})")
    return v


def agent_weights(N_i, rule: str) -> np.ndarray:
    r"""Agent weights :math:`p_i`: ``"samples"`` gives :math:`N_i/\sum_k N_k` (Huang et al. (2024), eq. (2.1)), ``"uniform"`` gives :math:`1/N` (Li and Ma (2023), eq. (2)).

    Parameters
    ----------
    N_i : array_like of int
        Sample counts of the agents.
    rule : {"samples", "uniform"}
        The weighting rule.

    Returns
    -------
    numpy.ndarray
        The weights, summing to 1.

    Raises
    ------
    ValueError
        If ``rule`` is neither.
    """
    N_i = np.asarray(N_i, dtype=np.float64)
    if rule == "samples":
        return N_i / N_i.sum()
    if rule == "uniform":
        return np.full(N_i.shape, 1.0 / N_i.size)
    raise ValueError(f"agent_weights: rule must be 'samples' or 'uniform' (got {rule!r})")


class FederatedProblem:
    """f = sum_i p_i f_i, f_i = mean_j f_ij on ``self.manifold`` (Huang et al. (2024) (2.1)).

    Subclasses set ``manifold``, ``N_i`` (list of sample counts, all >= 1) and ``p``
    (agent weights summing to 1), and implement ``_f_ij``, ``_egrad_ij``, ``_rgrad_ij`` on
    already-validated input.
    """

    manifold = None
    N_i: list[int]
    p: np.ndarray

    # ------------------------------------------------------------------ checks
    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def N(self) -> int:
        """Number of agents."""
        return len(self.N_i)

    def _x(self, method: str, x) -> np.ndarray:
        return self.manifold.check_point(x, where=f"{self.name}.{method}")

    def _i(self, method: str, i) -> int:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral):
            raise ValueError(f"{self.name}.{method}: agent index i must be an integer (got {i!r})")
        if not 0 <= int(i) < self.N:
            raise ValueError(f"{self.name}.{method}: agent index i={i} out of range [0, {self.N - 1}]")
        return int(i)

    def _j(self, method: str, i: int, j) -> int:
        if isinstance(j, bool) or not isinstance(j, numbers.Integral):
            raise ValueError(f"{self.name}.{method}: sample index j must be an integer (got {j!r})")
        if not 0 <= int(j) < self.N_i[i]:
            raise ValueError(f"{self.name}.{method}: sample index j={j} out of range [0, {self.N_i[i] - 1}] for agent {i}")
        return int(j)

    def _batch(self, method: str, x, i, J):
        """(x, i, J) of a batch method, each checked (the point, the agent, the sample indices)."""
        x = self._x(method, x)
        i = self._i(method, i)
        return x, i, self._J(method, i, J)

    def _J(self, method: str, i: int, J) -> np.ndarray:
        J = np.asarray(J)
        if J.ndim != 1 or J.size == 0:
            raise ValueError(f"{self.name}.{method}: the index set must be a non-empty 1-D sequence (got shape {J.shape})")
        if not np.issubdtype(J.dtype, np.integer):
            raise ValueError(f"{self.name}.{method}: indices must be integers (got dtype {J.dtype})")
        bad = J[(J < 0) | (J >= self.N_i[i])]
        if bad.size:
            raise ValueError(f"{self.name}.{method}: index {int(bad[0])} out of range [0, {self.N_i[i] - 1}] for agent {i}")
        return J.astype(np.int64)

    # ------------------------------------------------------------------ to implement
    def _f_ij(self, x: np.ndarray, i: int, j: int) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _egrad_ij(self, x: np.ndarray, i: int, j: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _rgrad_ij(self, x: np.ndarray, i: int, j: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ per sample
    @public("f_ij")
    def f_ij(self, x, i, j) -> float:
        """Per-sample loss f_{i,j}(x)."""
        x = self._x("f_ij", x)
        i = self._i("f_ij", i)
        return float(self._f_ij(x, i, self._j("f_ij", i, j)))

    @public("egrad_ij")
    def egrad_ij(self, x, i, j) -> np.ndarray:
        """Euclidean gradient of (the smooth extension of) f_{i,j} at x."""
        x = self._x("egrad_ij", x)
        i = self._i("egrad_ij", i)
        return self._egrad_ij(x, i, self._j("egrad_ij", i, j))

    @public("rgrad_ij")
    def rgrad_ij(self, x, i, j) -> np.ndarray:
        """Riemannian gradient grad f_{i,j}(x) in T_x."""
        x = self._x("rgrad_ij", x)
        i = self._i("rgrad_ij", i)
        return self._rgrad_ij(x, i, self._j("rgrad_ij", i, j))

    @public("rgrad_batch")
    def rgrad_batch(self, x, i, J) -> np.ndarray:
        """Per-sample Riemannian gradients grad f_{i,j}(x) for j in J, stacked: shape ``(|J|, *ambient)``."""
        x, i, J = self._batch("rgrad_batch", x, i, J)
        return np.stack([self._rgrad_ij(x, i, int(j)) for j in J])

    @public("egrad_batch")
    def egrad_batch(self, x, i, J) -> np.ndarray:
        """Per-sample Euclidean gradients for j in J, stacked: shape ``(|J|, *ambient)``."""
        x, i, J = self._batch("egrad_batch", x, i, J)
        return np.stack([self._egrad_ij(x, i, int(j)) for j in J])

    # ------------------------------------------------------------------ per agent
    def _f_i(self, x, i) -> float:
        return sum(self._f_ij(x, i, j) for j in range(self.N_i[i])) / self.N_i[i]

    def _egrad_i(self, x, i) -> np.ndarray:
        return sum(self._egrad_ij(x, i, j) for j in range(self.N_i[i])) / self.N_i[i]

    def _rgrad_i(self, x, i) -> np.ndarray:
        # the mean of tangent vectors is tangent; proj removes the rounding residue (which can
        # exceed a relative tangency tolerance when the vectors nearly cancel)
        return self._proj(x, sum(self._rgrad_ij(x, i, j) for j in range(self.N_i[i])) / self.N_i[i])

    def _proj(self, x, g) -> np.ndarray:
        """proj_x(g) after refusing a non-finite g (a sum of gradients that overflowed)."""
        if not np.all(np.isfinite(g)):
            raise Refusal("a gradient overflows float64 (the data or the point are outside the problem's domain)")
        return self.manifold.proj(x, g)

    @public("f_i")
    def f_i(self, x, i) -> float:
        """Agent loss f_i(x) = (1/N_i) sum_j f_{i,j}(x)."""
        x = self._x("f_i", x)
        return float(self._f_i(x, self._i("f_i", i)))

    @public("egrad_i")
    def egrad_i(self, x, i) -> np.ndarray:
        """Euclidean gradient of f_i."""
        x = self._x("egrad_i", x)
        return self._egrad_i(x, self._i("egrad_i", i))

    @public("rgrad_i")
    def rgrad_i(self, x, i) -> np.ndarray:
        """Riemannian gradient grad f_i(x) = (1/N_i) sum_j grad f_{i,j}(x)."""
        x = self._x("rgrad_i", x)
        return self._rgrad_i(x, self._i("rgrad_i", i))

    # ------------------------------------------------------------------ global
    def _f(self, x) -> float:
        return sum(self.p[i] * self._f_i(x, i) for i in range(self.N))

    def _rgrad(self, x) -> np.ndarray:
        return self._proj(x, sum(self.p[i] * self._rgrad_i(x, i) for i in range(self.N)))

    @public("f")
    def f(self, x) -> float:
        """Global objective f(x) = sum_i p_i f_i(x) (Huang et al. (2024) (2.1))."""
        return float(self._f(self._x("f", x)))

    @public("egrad")
    def egrad(self, x) -> np.ndarray:
        """Euclidean gradient of f."""
        x = self._x("egrad", x)
        return sum(self.p[i] * self._egrad_i(x, i) for i in range(self.N))

    @public("rgrad")
    def rgrad(self, x) -> np.ndarray:
        """Riemannian gradient grad f(x) = sum_i p_i grad f_i(x)."""
        return self._rgrad(self._x("rgrad", x))

    @public("rgrad_norm")
    def rgrad_norm(self, x) -> float:
        """||grad f(x)||_x."""
        x = self._x("rgrad_norm", x)
        return self.manifold.norm(x, self._rgrad(x))

    def samples(self):
        """All (i, j) index pairs."""
        return [(i, j) for i in range(self.N) for j in range(self.N_i[i])]

    # ------------------------------------------------------------------ trainer interface
    # The names used by prirfed.reference.trainers.base.FederatedProblem (duck-typed aliases).
    @property
    def sizes(self) -> list[int]:
        """N_i for i = 0..N-1 (trainer interface)."""
        return list(self.N_i)

    @property
    def weights(self) -> np.ndarray:
        """p_i (trainer interface)."""
        return np.asarray(self.p, dtype=np.float64)

    def grad_sample(self, x, i, j) -> np.ndarray:
        """Alias of :meth:`rgrad_ij` (trainer interface)."""
        return self.rgrad_ij(x, i, j)

    def grad_agent(self, x, i) -> np.ndarray:
        """Alias of :meth:`rgrad_i` (trainer interface)."""
        return self.rgrad_i(x, i)

    def grad(self, x) -> np.ndarray:
        """Alias of :meth:`rgrad` (trainer interface)."""
        return self.rgrad(x)

    def f_agent(self, x, i) -> float:
        """Alias of :meth:`f_i` (trainer interface)."""
        return self.f_i(x, i)

    @property
    def x_star(self):
        """The optimum (computed once by :meth:`optimum`, then cached; trainer interface)."""
        if getattr(self, "_x_star", None) is None:
            self._x_star = self.optimum()
        return self._x_star


def _root(a: np.ndarray):
    """The object owning ``a``'s memory (the end of the ``.base`` chain)."""
    while getattr(a, "base", None) is not None:
        a = a.base
    return a


def is_stacked(arrays) -> bool:
    """Whether the arrays are C-contiguous float64 blocks of one buffer, each starting where the
    previous one ends (then :func:`stacked_view` spans them all without a copy).

    Helper, not a paper formula: storage of the agents' data.

    Parameters
    ----------
    arrays : sequence of numpy.ndarray
        The agents' arrays.

    Returns
    -------
    bool
        True when they are consecutive blocks of one buffer.
    """
    root = _root(arrays[0])
    addr = arrays[0].__array_interface__["data"][0]
    for a in arrays:
        if (a.dtype != np.float64 or not a.flags.c_contiguous or _root(a) is not root
                or a.__array_interface__["data"][0] != addr):
            return False
        addr += a.nbytes
    return True


def stacked_view(arrays) -> np.ndarray:
    """All agents' samples as one array of shape ``(sum N_i, *inner)``: a view of their common buffer when
    they are stacked (:func:`is_stacked`, always the case for the arrays of :func:`agent_arrays`;
    writeable exactly when the buffer is, so that the compiled loops see one array type), else one
    C-ordered concatenated copy. The verified trainers read the data through this view and never write it:
    no per-call copy.

    Helper, not a paper formula: storage of the agents' data.

    Parameters
    ----------
    arrays : sequence of numpy.ndarray
        The agents' arrays, of one inner shape.

    Returns
    -------
    numpy.ndarray
        Shape ``(sum N_i, *inner)``: a view when :func:`is_stacked`, else a copy.
    """
    arrays = list(arrays)
    if not is_stacked(arrays):
        # C-ordered like the view (concatenating Fortran-ordered blocks can give a Fortran-ordered
        # result, which the compiled loops would take as a second array type)
        return np.ascontiguousarray(np.concatenate(arrays, axis=0))
    inner = arrays[0].shape[1:]
    n = sum(int(a.shape[0]) for a in arrays)
    strides = (int(np.prod(inner, dtype=np.int64)) * 8,) + tuple(int(np.prod(inner[k + 1:], dtype=np.int64)) * 8
                                                                  for k in range(len(inner)))
    return np.lib.stride_tricks.as_strided(arrays[0], shape=(n, *inner), strides=strides)


def agent_arrays(where: str, name: str, data, inner_shape: tuple[int, ...] | None = None) -> list[np.ndarray]:
    """Validate per-agent data: a non-empty sequence of real arrays of shape ``(N_i, *inner_shape)``
    (complex, boolean and string arrays are refused, as by the manifolds' ``as_float_array``).

    Helper, not a paper formula: argument validation shared by the problems.

    Storage: the returned arrays are consecutive blocks of ONE C-contiguous float64 buffer
    (:func:`is_stacked`): the given arrays themselves when they already are (e.g. ``np.split`` of
    one array: no copy), else one concatenated copy split into views. So the problem keeps one
    copy of the data and the verified trainers read all agents through one view of it.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    name : str
        The argument's name, named in the error message.
    data : sequence of array_like, or numpy.ndarray
        One array per agent; a single array is one agent.
    inner_shape : tuple of int, optional
        Shape of one record; None takes it from agent 0 (all agents must then agree).

    Returns
    -------
    list of numpy.ndarray
        The agents' arrays as float64, views of one buffer.

    Raises
    ------
    ValueError
        For an empty list, an agent with no samples, shapes that disagree, or non-finite entries.
    """
    if isinstance(data, np.ndarray) and data.ndim >= 1:
        data = [data]
    try:
        data = list(data)
    except TypeError:
        raise ValueError(f"{where}: {name} must be a sequence of per-agent arrays (got {type(data).__name__})") from None
    if not data:
        raise ValueError(f"{where}: {name} is empty (no agents)")
    out = []
    for i, a in enumerate(data):
        try:
            raw = np.asarray(a)
            if raw.dtype.kind not in REAL_KINDS:
                what = KIND_NAMES.get(raw.dtype.kind, f"dtype {raw.dtype}")
                raise ValueError(f"{where}: {name}[{i}] is a {what} array (dtype {raw.dtype}); expected real numbers")
            a = np.asarray(raw, dtype=np.float64)
        except (TypeError, OverflowError) as exc:
            raise ValueError(f"{where}: {name}[{i}] cannot be read as a float array ({exc})") from None
        except ValueError as exc:
            if str(exc).startswith(where):
                raise
            raise ValueError(f"{where}: {name}[{i}] cannot be read as a float array ({exc})") from None
        if a.ndim < 1 or a.shape[0] == 0:
            raise ValueError(f"{where}: {name}[{i}] has no samples (shape {a.shape})")
        if inner_shape is None:
            inner_shape = a.shape[1:]
        if a.shape[1:] != tuple(inner_shape):
            raise ValueError(f"{where}: {name}[{i}] has samples of shape {a.shape[1:]}, expected {tuple(inner_shape)}")
        if not np.all(np.isfinite(a)):
            bad = int(a.size - np.count_nonzero(np.isfinite(a)))
            raise ValueError(f"{where}: {name}[{i}] has {bad} non-finite entries (NaN or inf)")
        out.append(a)
    if not is_stacked(out):
        buf = np.concatenate(out, axis=0)
        out = np.split(buf, np.cumsum([a.shape[0] for a in out])[:-1], axis=0)
    return out
