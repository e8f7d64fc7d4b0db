"""Problem-to-array marshalling for the fused loops, and the results they hand back.

:func:`problem_arrays` turns a supported problem object (reference or verified class) and the
``maps`` string into the codes and flat float64 arrays every loop takes (:class:`FusedArrays`),
or refuses with a ``ValueError`` naming the caller; :func:`fused_settings_only` refuses the
settings no loop implements. :func:`history_of` rebuilds the reference
``History`` from the iterates a loop returns (f, ||grad f|| and the error to the optimum computed
by the problem's own methods, so that the histories of both twins are comparable).

Mirrors the data layout of ``reference/problems/*.py`` (agents' samples in agent order, the pooled
order of 001's trainers) and ``History`` of ``reference/trainers/base.py``.
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prirfed.reference.manifolds.lorentz import Lorentz
from prirfed.reference.manifolds.spd import SPD
from prirfed.reference.manifolds.sphere import Sphere
from prirfed.reference.manifolds.stiefel import Stiefel
from prirfed.reference.problems.hsp import HyperbolicStructuredPrediction
from prirfed.reference.problems.spd_frechet import SPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.problems.stiefel_kpca import StiefelKPCA
from prirfed.reference.trainers.base import History

from .codes import (
    AGG_KARCHER,
    AGG_TANGENT,
    GEOM_LORENTZ,
    GEOM_SPD,
    GEOM_SPHERE,
    GEOM_SPHERE_RETR,
    GEOM_STIEFEL,
    GEOM_STIEFEL_RETR,
    PROB_HSP,
    PROB_SPD_FRECHET,
    PROB_SPHERE_PCA,
    PROB_STIEFEL_KPCA,
)

__all__ = ["FusedArrays", "problem_arrays", "fused_settings_only", "history_of", "flat_start"]

NO_MATRICES = np.zeros((0, 0, 0))  # the ``A`` of the flat family (it reads per-sample rows only)


class FusedArrays(NamedTuple):
    """What a loop reads of a problem.

    ``geom``, ``prob``: codes of :mod:`prirfed.verified.trainers.codes`; ``dims``: the geometry
    family (:mod:`prirfed.verified.trainers.geometry`): an int n (the SPD side, 0 on the sphere
    and Lorentz) or the pair (d, r) of St(d, r); ``Z`` (sum N_i, width): the flat samples of all
    agents stacked in agent order; ``C`` (sum N_i,): the scale of each sample's gradient (sphere PCA
    c_i, SPD Frechet mean c, HSP alpha_ij(w), Stiefel kPCA c_i); ``offsets`` (N,): the first row of
    each agent; ``sizes`` (N,): N_i; ``A`` (N, d, d): the agents' A_i = Z_i^T Z_i on Stiefel kPCA
    (the reference's own arrays; only if asked), empty otherwise; ``ps`` (N,): the weights p_i.
    """

    geom: int
    prob: int
    dims: object
    Z: np.ndarray
    C: np.ndarray
    offsets: np.ndarray
    sizes: np.ndarray
    A: np.ndarray
    ps: np.ndarray


def problem_arrays(where, problem, maps="exp", *, matrices=False) -> FusedArrays:
    """The :class:`FusedArrays` of a supported (problem, maps) pair, else ``ValueError`` naming
    ``where``. ``maps="retraction"`` is fused on the sphere (GEOM_SPHERE_RETR) and on Stiefel
    (GEOM_STIEFEL_RETR, polar pair). ``matrices=True`` stacks Stiefel kPCA's A_i (the loops that
    read agent or global gradients need them; the per-sample loops do not, and a (N, d, d) copy
    is large for d = 784)."""
    if maps not in ("exp", "retraction"):
        raise ValueError(f"{where}: maps must be 'exp' or 'retraction' (got {maps!r})")
    N_i = [int(k) for k in problem.sizes]
    offsets = np.concatenate([[0], np.cumsum(N_i)[:-1]]).astype(np.int64)
    sizes = np.asarray(N_i, dtype=np.int64)

    def out(geom, prob, dims, Z, C, A=NO_MATRICES):
        return FusedArrays(geom, prob, dims, Z, C, offsets, sizes, A, np.asarray(problem.weights, dtype=np.float64))

    if isinstance(problem, SpherePCA) and isinstance(problem.manifold, Sphere):
        Z = np.ascontiguousarray(np.concatenate(problem.Z, axis=0), dtype=np.float64)
        C = np.repeat(np.asarray(problem.c, dtype=np.float64), N_i)
        return out(GEOM_SPHERE if maps == "exp" else GEOM_SPHERE_RETR, PROB_SPHERE_PCA, 0, Z, C)
    if isinstance(problem, StiefelKPCA) and isinstance(problem.manifold, Stiefel):
        Z = np.ascontiguousarray(np.concatenate(problem.Z, axis=0), dtype=np.float64)
        C = np.repeat(np.asarray(problem.c, dtype=np.float64), N_i)
        A = np.ascontiguousarray(np.stack(problem.A_i), dtype=np.float64) if matrices else NO_MATRICES
        return out(GEOM_STIEFEL if maps == "exp" else GEOM_STIEFEL_RETR, PROB_STIEFEL_KPCA,
                   (int(problem.d), int(problem.r)), Z, C, A)
    if maps != "exp":
        if isinstance(problem, (SPDFrechetMean, HyperbolicStructuredPrediction)):
            raise ValueError(f"{where}: maps='retraction' is fused only on the sphere and Stiefel (got "
                             f"{type(problem).__name__} on {type(problem.manifold).__name__}); use the reference")
    if isinstance(problem, SPDFrechetMean) and isinstance(problem.manifold, SPD):
        n = int(problem.n)
        Z = np.ascontiguousarray(np.concatenate(problem.Z, axis=0).reshape(sum(N_i), n * n), dtype=np.float64)
        return out(GEOM_SPD, PROB_SPD_FRECHET, n, Z, np.full(sum(N_i), float(problem.c)))
    if isinstance(problem, HyperbolicStructuredPrediction) and isinstance(problem.manifold, Lorentz):
        Z = np.ascontiguousarray(np.concatenate(problem.Y, axis=0), dtype=np.float64)
        C = np.ascontiguousarray(np.concatenate([np.asarray(a, dtype=np.float64) for a in problem.alpha]))
        return out(GEOM_LORENTZ, PROB_HSP, 0, Z, C)
    raise ValueError(f"{where}: the verified trainers support SpherePCA, SPDFrechetMean, "
                     f"HyperbolicStructuredPrediction and StiefelKPCA (got {type(problem).__name__} on "
                     f"{type(problem.manifold).__name__})")


def fused_settings_only(where, reference, rng=None, *, aggregation="tangent", karcher=True):
    """Refuse, with a ValueError naming the reference module to use instead, the settings the fused
    loops do not implement (``karcher=False``: the Karcher aggregation) and a ``rng`` that is not a
    ``numpy.random.Generator`` (``rng=None``: the trainer draws nothing). Returns the aggregation
    code. (Which maps are fused depends on the problem: :func:`problem_arrays` decides.)"""
    if aggregation not in ("tangent", "karcher"):
        raise ValueError(f"{where}: aggregation must be 'tangent' or 'karcher' (got {aggregation!r})")
    if aggregation == "karcher" and not karcher:
        raise ValueError(f"{where}: only aggregation='tangent' is fused here (got {aggregation!r}); "
                         f"use {reference} for 'karcher'")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator (got {type(rng).__name__})")
    return AGG_TANGENT if aggregation == "tangent" else AGG_KARCHER


def flat_start(M, x0, where) -> np.ndarray:
    """x0 checked on the manifold ``M`` (the reference's check, its error) as a flat C-contiguous float64 vector."""
    x = M.check_point(x0, where=where)
    return np.ascontiguousarray(x, dtype=np.float64).ravel()


def history_of(problem, rounds, R, keep_iterates) -> History:
    """The reference ``History`` of the iterates ``R`` (flat rows) at ``rounds``."""
    shape = tuple(problem.manifold.ambient_shape)
    hist = History()
    for r, t in enumerate(rounds):
        hist.record(problem, int(t), R[r].reshape(shape), keep_iterates)
    return hist
