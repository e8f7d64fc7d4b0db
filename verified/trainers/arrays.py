"""Problem-to-array marshalling for the fused loops (built once per problem, no copy of the data),
the history's optimum, and the reference ``History`` rebuilt from what a loop records.

:func:`problem_arrays` turns a supported problem object (reference or verified class) and the
``maps`` string into the geometry (a ``dims`` instance of :mod:`prirfed.verified.trainers.families`)
and the arrays every loop takes (:class:`FusedArrays`), or refuses with a ``ValueError`` naming the
caller. The arrays are built ONCE per problem and kept on it: ``Z`` is the problem's own
contiguous storage of all agents' samples (the problems keep their agents' arrays as consecutive
views of one buffer: :func:`prirfed.reference.problems.base.agent_arrays`), so a trainer call copies
no data. :func:`fused_settings_only` refuses the settings no loop implements.
:func:`history_of` builds the reference ``History`` from the values the loop computed in compiled
code (f, ||grad f|| and the error to the optimum at each recorded round).

Mirrors the data layout of ``reference/problems/*.py`` (agents' samples in agent order, the pooled
order of Han et al. (2024)'s trainers) and ``History`` of ``reference/trainers/base.py``.
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prirfed.reference.manifolds.lorentz import Lorentz
from prirfed.reference.manifolds.spd import SPD
from prirfed.reference.manifolds.sphere import Sphere
from prirfed.reference.manifolds.stiefel import Stiefel
from prirfed.reference.problems.base import stacked_view
from prirfed.reference.problems.hsp import HyperbolicStructuredPrediction
from prirfed.reference.problems.spd_frechet import SPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.problems.stiefel_kpca import StiefelKPCA
from prirfed.reference.manifolds.retracted import check_maps
from prirfed.reference.trainers.base import History, is_choice

from .codes import AGG_KARCHER, AGG_TANGENT
from .families import LorentzDims, SPDDims, SphereDims, SphereRetrDims, StiefelDims, StiefelRetrDims

__all__ = ["FusedArrays", "problem_arrays", "fused_settings_only", "history_of", "flat_start", "history_optimum",
           "NO_POINT"]

NO_MATRICES = np.zeros((0, 0, 0))  # the ``A`` of the families that read per-sample rows only
NO_POINT = np.zeros(0)  # x* unknown: the history's error is NaN
_CACHE = "_fused_arrays"


class FusedArrays(NamedTuple):
    """What a loop reads of a problem.

    ``dims``: the geometry (a class of :mod:`prirfed.verified.trainers.families`); ``Z`` (sum N_i,
    width): the flat samples of all agents stacked in agent order (a view of the problem's own
    storage); ``C`` (sum N_i,): the scale of each sample's gradient (sphere PCA c_i, SPD Frechet
    mean c, HSP alpha_ij(w), Stiefel kPCA c_i); ``offsets`` (N,): the first row of each agent;
    ``sizes`` (N,): N_i; ``A`` (N, d, d): the agents' A_i = Z_i^T Z_i on Stiefel kPCA (only if
    asked); (1, D, D): sphere PCA's covariance A = sum_i p_i (c_i / N_i) Z_i^T Z_i when there are more
    samples than coordinates (read by the history only); empty otherwise; ``ps`` (N,): the weights p_i.

    Helper, not a paper formula: the arrays of a problem, in the layout the loops read.
    """

    dims: object
    Z: np.ndarray
    C: np.ndarray
    offsets: np.ndarray
    sizes: np.ndarray
    A: np.ndarray
    ps: np.ndarray


def _data(where, problem):
    """(geometry kind, Z, C, inner dims) of a supported problem, built from its own storage."""
    N_i = [int(k) for k in problem.sizes]
    if isinstance(problem, SpherePCA) and isinstance(problem.manifold, Sphere):
        return "sphere", stacked_view(problem.Z), np.repeat(np.asarray(problem.c, dtype=np.float64), N_i)
    if isinstance(problem, StiefelKPCA) and isinstance(problem.manifold, Stiefel):
        return "stiefel", stacked_view(problem.Z), np.repeat(np.asarray(problem.c, dtype=np.float64), N_i)
    if isinstance(problem, SPDFrechetMean) and isinstance(problem.manifold, SPD):
        n = int(problem.n)
        Z = stacked_view(problem.Z)
        return "spd", Z.reshape(Z.shape[0], n * n), np.full(sum(N_i), float(problem.c))
    if isinstance(problem, HyperbolicStructuredPrediction) and isinstance(problem.manifold, Lorentz):
        C = np.ascontiguousarray(np.concatenate([np.asarray(a, dtype=np.float64) for a in problem.alpha]))
        return "lorentz", stacked_view(problem.Y), C
    raise ValueError(f"{where}: the verified trainers support SpherePCA, SPDFrechetMean, "
                     f"HyperbolicStructuredPrediction and StiefelKPCA (got {type(problem).__name__} on "
                     f"{type(problem.manifold).__name__})")


def problem_arrays(where, problem, maps="exp", *, matrices=False) -> FusedArrays:
    """The :class:`FusedArrays` of a supported (problem, maps) pair, else ``ValueError`` naming
    ``where``. ``maps="retraction"`` is fused on the sphere and on Stiefel (polar pair).
    ``matrices=True`` adds Stiefel kPCA's A_i (stacked once, kept with the arrays). Built on the
    first call and kept on the problem object (a later call with the same data is free).

    Helper, not a paper formula: data layout for the compiled loops.

    Parameters
    ----------
    where : str
        Function named in error messages.
    problem : FederatedProblem
        The federated problem.
    maps : str, optional
        ``"exp"`` (Exp/Log) or ``"retraction"``.
    matrices : bool, optional
        Pass the per-agent matrices :math:`A_i`.

    Returns
    -------
    FusedArrays
        The geometry and the arrays.

    Raises
    ------
    ValueError
        If ``maps`` is unknown, the problem is not a supported class, or ``maps="retraction"`` is asked
        for SPD or Lorentz.
    """
    check_maps(where, maps)
    cache = problem.__dict__.get(_CACHE) if hasattr(problem, "__dict__") else None
    data_id = tuple(id(z) for z in getattr(problem, "Y" if isinstance(problem, HyperbolicStructuredPrediction)
                                            else "Z", ()))
    if cache is None or cache["id"] != data_id:
        kind, Z, C = _data(where, problem)
        N_i = [int(k) for k in problem.sizes]
        cache = dict(id=data_id, kind=kind, Z=Z, C=C, A=None,
                     offsets=np.concatenate([[0], np.cumsum(N_i)[:-1]]).astype(np.int64),
                     sizes=np.asarray(N_i, dtype=np.int64), ps=np.asarray(problem.weights, dtype=np.float64))
        if hasattr(problem, "__dict__"):
            problem.__dict__[_CACHE] = cache
    kind = cache["kind"]
    if maps == "retraction" and kind in ("spd", "lorentz"):
        raise ValueError(f"{where}: maps='retraction' is fused only on the sphere and Stiefel (got "
                         f"{type(problem).__name__} on {type(problem.manifold).__name__}); use the reference")
    if kind == "sphere":
        D = int(problem.d) + 1
        dims = SphereDims(D) if maps == "exp" else SphereRetrDims(D)
    elif kind == "stiefel":
        d, r = int(problem.d), int(problem.r)
        dims = StiefelDims(d, r) if maps == "exp" else StiefelRetrDims(d, r)
    elif kind == "spd":
        dims = SPDDims(int(problem.n))
    else:
        dims = LorentzDims(int(problem.d) + 1)
    A = NO_MATRICES
    if kind == "sphere" and int(cache["sizes"].sum()) > D:
        # more samples than coordinates: the history reads the (1, D, D) covariance A of f(x) = -x^T A x
        # instead of all the data (the optimum forms the same A, kept on the problem)
        if cache["A"] is None:
            cache["A"] = np.array(problem.A, dtype=np.float64).reshape(1, D, D)  # a writable copy (problem.A is read-only)
        A = cache["A"]
    if matrices and kind == "stiefel":
        if cache["A"] is None:
            cache["A"] = np.ascontiguousarray(np.stack(problem.A_i), dtype=np.float64)
        A = cache["A"]
    return FusedArrays(dims, cache["Z"], cache["C"], cache["offsets"], cache["sizes"], A, cache["ps"])


def history_optimum(problem) -> np.ndarray:
    """x* as a flat vector for the compiled history's error (reference: trainers.base.error_to_optimum):
    Stiefel kPCA's optimal subspace basis (the one ``angles_to_optimum`` uses), else ``problem.x_star``;
    empty (error NaN) when unknown. Computed by the problem, once, as the reference does.

    Helper, not a paper formula: the optimum as the history needs it.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem.

    Returns
    -------
    numpy.ndarray
        The optimum, flat, or an empty array.
    """
    if isinstance(problem, StiefelKPCA):
        if getattr(problem, "_X_star", None) is None:
            problem._X_star = problem.optimum()
        xs = problem._X_star
    else:
        xs = problem.x_star
    return NO_POINT if xs is None else np.ascontiguousarray(xs, dtype=np.float64).ravel()


def fused_settings_only(where, reference, *, aggregation="tangent", karcher=True):
    """Refuse, with a ValueError naming the reference module to use instead, the settings the fused
    loops do not implement (``karcher=False``: the Karcher aggregation). Returns the aggregation
    code. Called after the reference's own checks (the shared settings functions of
    :mod:`prirfed.reference.trainers`), so an invalid value gets the reference's message. (Which maps
    are fused depends on the problem: :func:`problem_arrays` decides.)

    Helper, not a paper formula: argument checks.

    Parameters
    ----------
    where : str
        Function named in error messages.
    reference : str
        The reference module named in the error message.
    aggregation : str, optional
        ``"tangent"`` or ``"karcher"``.
    karcher : bool, optional
        Whether the caller fuses the Karcher aggregation.

    Returns
    -------
    int
        The aggregation code.

    Raises
    ------
    ValueError
        If ``aggregation`` is unknown or not fused here.
    """
    if not is_choice(aggregation, ("tangent", "karcher")):
        raise ValueError(f"{where}: aggregation must be 'tangent' or 'karcher' (got {aggregation!r})")
    if aggregation == "karcher" and not karcher:
        raise ValueError(f"{where}: only aggregation='tangent' is fused here (got {aggregation!r}); "
                         f"use {reference} for 'karcher'")
    return AGG_TANGENT if aggregation == "tangent" else AGG_KARCHER


def flat_start(M, x0, where) -> np.ndarray:
    """x0 checked on the manifold ``M`` (the reference's check, its error) as a flat C-contiguous float64 vector.

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    M : Manifold
        The manifold.
    x0 : numpy.ndarray
        Start point, flat.
    where : str
        Function named in error messages.

    Returns
    -------
    numpy.ndarray
        The checked start point, flat.

    Raises
    ------
    ValueError
        As ``M.check_point``.
    """
    x = M.check_point(x0, where=where)
    return np.ascontiguousarray(x, dtype=np.float64).ravel()


def history_of(problem, rounds, H, R) -> History:
    """The reference ``History`` from a loop's records: ``H`` (rows: f, ||grad f||, error) at
    ``rounds``, and the iterates ``R`` (flat rows; empty unless ``keep_iterates``).

    Helper, not a paper formula: bookkeeping.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem.
    rounds : sequence of int
        The recorded rounds.
    H : numpy.ndarray
        Rows (f, gradient norm, error), one per recorded round.
    R : numpy.ndarray
        Recorded iterates as flat rows (empty unless kept).

    Returns
    -------
    History
        The reference history.
    """
    shape = tuple(problem.manifold.ambient_shape)
    hist = History()
    hist.rounds = [int(t) for t in rounds]
    hist.f = [float(v) for v in H[:, 0]]
    hist.grad_norm = [float(v) for v in H[:, 1]]
    hist.dist_to_opt = [float(v) for v in H[:, 2]]
    if R.shape[0] > 0:
        hist.iterates = [R[r].reshape(shape).copy() for r in range(R.shape[0])]
    return hist
