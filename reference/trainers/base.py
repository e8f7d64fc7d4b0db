"""What every trainer needs: the federated problem interface, results, and shared random draws.

A trainer sees a problem only through :class:`FederatedProblem`: the manifold, the agents' data
sizes N_i, per-sample Riemannian gradients grad f_{i,j}, and the objective for the history.
The problem classes of :mod:`prirfed.reference.problems` provide these names directly.

Random draws (the contract with the verified twins): every trainer takes a
``numpy.random.Generator``, draws the run's key from it once and reads one
:class:`~prirfed.reference.randomness.Stream` per (round, agent) in the order its module documents
(the policy: :mod:`prirfed.reference.randomness`). Subsets without replacement are drawn by
:func:`sample_without_replacement` (a partial Fisher-Yates shuffle with one ``integers(k, n)`` per
element), never by ``rng.choice``, so that the Numba twins, which run the same loop on the same
streams, make the identical draws. A batch of a gradient step is :func:`batch_indices`: a full batch
(b = n) is the whole index set in order and draws nothing.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from prirfed.reference.checks import check_int, check_positive, real_or_nan  # noqa: F401 - check_int, check_positive: this module's public names since 0.1
from prirfed.reference.manifolds.base import KIND_NAMES, REAL_KINDS

__all__ = [
    "FederatedProblem",
    "History",
    "error_to_optimum",
    "TrainResult",
    "sample_without_replacement",
    "batch_indices",
    "per_agent",
    "round_settings",
    "record_schedule",
    "AUTO_RECORD_FACTOR",
    "check_generator",
    "check_tau",
    "check_nonnegative",
    "is_choice",
    "real_array",
    "check_flag",
]

#: ``record_every="auto"`` records every ceil(AUTO_RECORD_FACTOR * n / w) rounds, n the number of
#: samples (one record reads each once, for f and grad f) and w the samples a round reads: the
#: records then cost about 1 / AUTO_RECORD_FACTOR = 5% of the training, plus rounds 0 and T
AUTO_RECORD_FACTOR = 20


class FederatedProblem(Protocol):
    """What a trainer reads of a problem: Problem (2.1) of Huang et al. (2024), f(x) = sum_i p_i f_i(x),
    f_i(x) = (1/N_i) sum_j f_{i,j}(x). Implemented by
    :class:`prirfed.reference.problems.base.FederatedProblem` and every problem class.

    Parameters
    ----------
    args, kwargs
        None: a protocol is not instantiated.
    """

    manifold: object
    sizes: list  # N_i for i = 0..N-1
    weights: np.ndarray  # p_i
    N: int
    x_star: object  # the optimum, or None

    def grad_sample(self, x, i: int, j: int) -> np.ndarray: ...  # grad f_{i,j}(x)

    def grad_agent(self, x, i: int) -> np.ndarray: ...  # grad f_i(x)

    def grad(self, x) -> np.ndarray: ...  # grad f(x)

    def f(self, x) -> float: ...


def error_to_optimum(problem, x) -> float:
    """The distance to the optimum that the papers plot.

    Sphere PCA: the angle between the lines spanned by x and x* (the eigenvector is defined up to
    sign); Stiefel kPCA: the sum of principal angles to the optimal subspace (Li and Ma (2023) section 5);
    otherwise dist(x, x*), or NaN when the optimum is unknown.

    Helper, not a paper formula: the error measure the papers plot.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    x : numpy.ndarray
        Point on the manifold.

    Returns
    -------
    float
        The error (NaN when the optimum is unknown).
    """
    if hasattr(problem, "angle_to_optimum"):
        return float(problem.angle_to_optimum(x))
    if hasattr(problem, "angles_to_optimum"):
        return float(np.sum(problem.angles_to_optimum(x)))
    x_star = problem.x_star
    return float(problem.manifold.dist(x, x_star)) if x_star is not None else math.nan


@dataclass
class History:
    """Per-round record: f(x^(t)), ||grad f(x^(t))||, the error to the optimum
    (:func:`error_to_optimum`) and, if asked, the iterates.

    Helper, not a paper formula: the record of a run.

    Parameters
    ----------
    rounds, f, grad_norm, dist_to_opt : list, optional
        Recorded rounds and their values (default empty).
    iterates : list or None, optional
        Recorded iterates, if kept.
    """

    rounds: list = field(default_factory=list)
    f: list = field(default_factory=list)
    grad_norm: list = field(default_factory=list)
    dist_to_opt: list = field(default_factory=list)
    iterates: list | None = None

    def record(self, problem: FederatedProblem, t: int, x, keep_iterate: bool = False):
        """

        Parameters
        ----------
        problem : FederatedProblem
            The problem.
        t : int
            The round.
        x : numpy.ndarray
            The iterate.
        keep_iterate : bool, optional
            Also keep ``x`` (default ``False``).
        """
        M = problem.manifold
        self.rounds.append(t)
        self.f.append(float(problem.f(x)))
        self.grad_norm.append(float(M.norm(x, problem.grad(x))))
        self.dist_to_opt.append(error_to_optimum(problem, x))
        if keep_iterate:
            if self.iterates is None:
                self.iterates = []
            self.iterates.append(np.array(x, copy=True))

    def as_arrays(self) -> dict:
        """

        Returns
        -------
        dict
            ``rounds``, ``f``, ``grad_norm``, ``dist_to_opt`` (and ``iterates``) as arrays.
        """
        out = {k: np.asarray(getattr(self, k)) for k in ("rounds", "f", "grad_norm", "dist_to_opt")}
        if self.iterates is not None:
            out["iterates"] = np.asarray(self.iterates)
        return out


@dataclass
class TrainResult:
    """Final point, per-round history and (for private trainers) the privacy event of the run.

    Helper, not a paper formula: a trainer's result.

    Parameters
    ----------
    x : numpy.ndarray
        The output point.
    history : History
        The history.
    event : Event or None, optional
        The run's privacy event.
    info : dict, optional
        Settings and remarks.
    """

    x: np.ndarray
    history: History
    event: object | None = None
    info: dict = field(default_factory=dict)


def sample_without_replacement(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """k distinct indices of range(n), uniformly, by a partial Fisher-Yates shuffle.

    ``rng``: a ``numpy.random.Generator`` or a :class:`~prirfed.reference.randomness.Stream`.
    Consumes exactly k draws ``rng.integers(j, n)`` for j = 0..k-1 (the verified twins run the
    same loop). Every k-subset is equally likely and the order is uniformly random.

    Helper, not a paper formula: a sampler.

    Parameters
    ----------
    rng : numpy.random.Generator or Stream
        Source of the ``integers`` draws.
    n : int
        Population size.
    k : int
        Sample size, ``0 <= k <= n``.

    Returns
    -------
    numpy.ndarray
        ``k`` distinct indices.

    Raises
    ------
    ValueError
        If not ``0 <= k <= n``.
    """
    if not (0 <= k <= n):
        raise ValueError(f"sample_without_replacement: need 0 <= k <= n (got k={k}, n={n})")
    perm = np.arange(n)
    for j in range(k):
        r = int(rng.integers(j, n))
        perm[j], perm[r] = perm[r], perm[j]
    return perm[:k].copy()


def batch_indices(rng, n: int, b: int) -> np.ndarray:
    """The batch B of one gradient step (Huang et al. (2024) Algorithm 2 line 3; Han et al. (2024)
    Algorithm 1): b distinct indices of range(n), uniformly.

    A full batch (b = n) is the set range(n) whatever the draw, so it is returned in order and reads
    nothing from ``rng``; a smaller batch is :func:`sample_without_replacement` (b draws). The law of
    the batch as a set is the same either way, and a trainer only sums over it, so the order matters
    only for the rounding of the sum and for memory access (rows in order are read sequentially, and
    the shuffle's b draws are saved; the times before and after are in benchmarks/RESULTS.md, section
    "before and after two changes of 2026-11-28"). The verified twin is :func:`prirfed.verified.randomness.batch_into`.

    Helper, not a paper formula: a sampler.

    Parameters
    ----------
    rng : numpy.random.Generator or Stream
        Source of the ``integers`` draws (not read when ``b == n``).
    n : int
        Population size.
    b : int
        Batch size, ``0 <= b <= n``.

    Returns
    -------
    numpy.ndarray
        ``b`` distinct indices (``arange(n)`` when ``b == n``).

    Raises
    ------
    ValueError
        If not ``0 <= b <= n``.
    """
    if not (0 <= b <= n):
        raise ValueError(f"batch_indices: need 0 <= b <= n (got b={b}, n={n})")
    if b == n:
        return np.arange(n)
    return sample_without_replacement(rng, n, b)


# ---------------------------------------------------------------------------- argument checks
# Shared by the reference trainers and their verified twins, which call them from their entry
# points (the twins' ``where`` ends in " (verified)"), so that both refuse the same arguments with
# the same one-line ValueError naming the trainer, the parameter and the value (issue 19). The
# policy: proofs_notes/trainers_interface.md, section "Argument validation".


def check_generator(where: str, rng) -> np.random.Generator:
    """``rng`` if it is a ``numpy.random.Generator``, else ``ValueError`` naming ``where``.

    No global or legacy random state (``RandomState``, the ``np.random`` module), no ``None``.

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    rng : object
        The value to check.

    Returns
    -------
    numpy.random.Generator
        ``rng``.

    Raises
    ------
    ValueError
        If ``rng`` is not a ``numpy.random.Generator``.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator (got {type(rng).__name__})")
    return rng


def check_tau(where: str, name: str, value) -> float:
    """A clipping threshold as a float: a real number >= 2^-1000, ``inf`` meaning no clipping.

    2^-1000 is ``TAU_MIN`` of :mod:`prirfed.reference.mechanisms`, below which ``clip`` refuses;
    ``None``, strings, bools, complex numbers, NaN, numbers <= 0 and positive numbers below
    2^-1000 raise ``ValueError`` before the run (the clip inside it would refuse them anyway).

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    name : str
        The threshold's name in messages (``tau``, ``tau0``, ``tau1``).
    value : float
        The value to check.

    Returns
    -------
    float
        ``value`` as a float (``inf`` kept).

    Raises
    ------
    ValueError
        If ``value`` is not a real number, is NaN or <= 0, or is below 2^-1000.
    """
    from prirfed.reference.mechanisms import TAU_MIN

    v = real_or_nan(value)
    if not v > 0:
        raise ValueError(f"{where}: clipping threshold {name} must be > 0 (got {value!r})")
    if v < TAU_MIN:
        raise ValueError(f"{where}: clipping threshold {name} = {value!r} is below 2^-1000 = {TAU_MIN:.2e} "
                         "(the clipped entries would be subnormal and their rounding could exceed it)")
    return v


def check_nonnegative(where: str, name: str, value) -> float:
    """A real number, finite and >= 0 (a noise level sigma, a proximal weight mu), as a float.

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    name : str
        The setting's name in messages.
    value : float
        The value to check (bools, complex numbers, strings and arrays are not real numbers here).

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    ValueError
        If ``value`` is not a real number, or is NaN, infinite or negative.
    """
    v = real_or_nan(value)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{where}: {name} must be finite and >= 0 (got {value!r})")
    return v


def check_flag(where: str, name: str, value) -> bool:
    """A yes/no switch (``keep_iterates``, ``armijo``): ``True`` or ``False`` only, as a ``bool``.

    A Python or NumPy bool is accepted; anything else raises ``ValueError`` naming ``where`` (a
    string such as ``"no"`` would be true, and an array's truth value is an error of its own).

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    name : str
        The switch's name in messages.
    value : bool
        The value to check.

    Returns
    -------
    bool
        ``value`` as a Python bool.

    Raises
    ------
    ValueError
        If ``value`` is not a Python or NumPy bool.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{where}: {name} must be True or False (got {value!r})")
    return bool(value)


def is_choice(value, choices) -> bool:
    """``value in choices`` for a string or a real number (a Python or NumPy int or float).

    A bool is never a choice (``True in (1, 2)`` holds in Python), nor is a complex number
    (``1 + 0j == 1``; the fused loops read the choice as an int), an array, list, tuple, dict, set
    or any other object (``in`` would compare element-wise and its truth value be meaningless or an
    error). The caller raises its own ``ValueError`` when the answer is False.

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    value : object
        The value to test.
    choices : tuple
        The admissible strings or numbers.

    Returns
    -------
    bool
        Whether ``value`` is a string or real number equal to one of ``choices``.

    Examples
    --------
    >>> from prirfed.reference.trainers.base import is_choice
    >>> is_choice(2, (1, 2)), is_choice(2.0, (1, 2)), is_choice(True, (1, 2)), is_choice([1], (1, 2))
    (True, True, False, False)
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (str, numbers.Real)):
        return False
    try:
        return bool(value in choices)
    except (TypeError, ValueError):
        return False


def real_array(where: str, name: str, value) -> np.ndarray:
    """``value`` (a number or a sequence of numbers) as a float64 array, real numbers only.

    The manifolds' dtype policy: ``None``, strings, bools and complex numbers raise ``ValueError``
    naming ``where`` instead of being converted (``np.asarray(True, float)`` is 1.0). Ranges are
    the caller's to check.

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    name : str
        The setting's name in messages.
    value : float or array_like
        A real number or a (nested) sequence of them.

    Returns
    -------
    numpy.ndarray
        ``value`` as float64, same shape.

    Raises
    ------
    ValueError
        If ``value`` holds anything but real numbers or is ragged.
    """
    try:
        raw = np.asarray(value)
        if raw.dtype.kind not in REAL_KINDS or (raw.dtype.kind == "O" and raw.ndim == 0):
            raise TypeError(KIND_NAMES.get(raw.dtype.kind, f"dtype {raw.dtype}"))
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: {name} must be a real number or a sequence of them (got {value!r})") from None


def per_agent(where: str, name: str, value, N: int) -> np.ndarray:
    """A per-agent setting (sigma_i, b_i, eta_i, tau_i, ...) as a float array of shape (N,): a scalar
    is repeated N times, a sequence must have N entries (else ``ValueError`` naming ``where``);
    real numbers only (:func:`real_array`).

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    name : str
        The setting's name in messages.
    value : float or array_like
        A scalar or ``N`` values.
    N : int
        Number of agents.

    Returns
    -------
    numpy.ndarray
        Shape ``(N,)`` float array.

    Raises
    ------
    ValueError
        If ``value`` is neither a scalar nor of length ``N``, or is not real (:func:`real_array`).
    """
    arr = real_array(where, name, value)
    arr = np.full(N, float(arr)) if arr.ndim == 0 else arr
    if arr.shape != (N,):
        raise ValueError(f"{where}: {name} has shape {arr.shape}, expected a scalar or ({N},)")
    return arr


def round_settings(where: str, problem, T, per_round, name: str, option, aggregation) -> tuple[int, int]:
    """The settings every federated trainer checks the same way: T >= 1 rounds, ``per_round`` (named
    ``name``: s of Huang et al. (2024), k of Li and Ma (2023)) agents per round in [1, N], Option 1 or 2, and the aggregation
    ("tangent" (3.2) / (8) or "karcher" (3.1) / (7)). Returns (T, per_round) as ints.

    The settings of Huang et al. (2024), Algorithm 1 and Li and Ma (2023), Algorithms 1-3 that every federated trainer shares.

    Parameters
    ----------
    where : str
        Function named in error messages.
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    T : int
        Rounds (steps), >= 1.
    per_round : int
        Agents per round, in [1, N].
    name : str
        Its name in messages (``"s"`` or ``"k"``).
    option : int
        Option 1 (last iterate) or 2 (an iterate drawn uniformly).
    aggregation : str
        ``"tangent"`` (tangent mean, default) or ``"karcher"`` (Karcher mean).

    Returns
    -------
    T, per_round : int
        The checked values.

    Raises
    ------
    ValueError
        If ``T`` is not an integer >= 1, ``per_round`` is not in [1, N], ``option`` is not 1 or 2, or
        ``aggregation`` is unknown.
    """
    T = check_int(where, "T", T)
    per_round = check_int(where, name, per_round, 1, problem.N)
    if not is_choice(option, (1, 2)):
        raise ValueError(f"{where}: option must be 1 or 2 (got {option!r})")
    if not is_choice(aggregation, ("tangent", "karcher")):
        raise ValueError(f"{where}: aggregation must be 'tangent' or 'karcher' (got {aggregation!r})")
    return T, per_round


def record_schedule(where: str, record_every, T: int, n_samples: int, samples_per_round: float) -> int:
    """The recording period of a trainer run: ``record_every`` itself (an int >= 1; 1 = every round),
    or for ``"auto"`` (the trainers' default) ceil(AUTO_RECORD_FACTOR * n / w) capped at T, so that the
    history (f, ||grad f||, error: a pass over all n samples per record) costs about 5% of training
    that reads w samples per round (the history must cost less than the training). Rounds
    0 and T are always recorded, whatever the period: in a run of T rounds those two records cost
    2 n / (T w) of the training's sample reads (40% at n = 10 w, T = 50), unless a record is cheaper
    than a pass over the data (the verified sphere PCA reads its d x d covariance when n > d + 1).
    Both twins compute it with this function.

    Helper, not a paper formula: bookkeeping.

    Parameters
    ----------
    where : str
        Function named in error messages.
    record_every : int or str
        An integer >= 1 or ``"auto"``.
    T : int
        Rounds (steps), >= 1.
    n_samples : int
        Samples of the problem.
    samples_per_round : float
        Samples one round reads.

    Returns
    -------
    int
        The recording period.

    Raises
    ------
    ValueError
        If ``record_every`` is neither an integer >= 1 nor ``"auto"``.
    """
    if isinstance(record_every, str):
        if record_every != "auto":
            raise ValueError(f"{where}: record_every must be an integer >= 1 or 'auto' (got {record_every!r})")
        w = max(float(samples_per_round), 1.0)
        return int(max(1, min(math.ceil(AUTO_RECORD_FACTOR * n_samples / w), max(int(T), 1))))
    return check_int(where, "record_every", record_every)
