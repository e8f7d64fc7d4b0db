"""The integer codes of the fused verified trainer loops (one place for all of them).

The loops of :mod:`prirfed.verified.trainers` are ``@njit(cache=True)`` functions that dispatch on
small integers instead of taking functions as arguments (a function argument is its own Numba type,
so the on-disk cache would miss in every new process). Numba compiles a module-level integer that a
loop reads as a constant and stores that constant in its on-disk cache; the cache is invalidated
only when the loop's own source file changes. A code changed here would therefore leave every
cached loop in another file comparing against the old value. That is why the values below are
literals, are never renumbered, and are pinned by ``tests/verified/test_trainer_layout.py``
(change them only together with that test, and clear the ``__pycache__`` folders of
``verified/trainers``).

Mirrors no reference module: the reference trainers take strings (``local="dp_rsgd"``,
``aggregation="tangent"``) that the wrappers turn into these codes. The manifold, the maps and the
problem are not codes any more but the TYPE of ``dims`` (:mod:`prirfed.verified.trainers.families`),
so that a loop compiles only its own geometry; the former codes GEOM_* (0-5) and PROB_* (0-3) are
retired, never to be reused.
"""

from __future__ import annotations

__all__ = [
    "LOCAL_DP_RSGD", "LOCAL_DP_RSVRG",
    "AGG_TANGENT", "AGG_KARCHER",
    "METHOD_SVRG", "METHOD_AVG", "METHOD_PROX",
    "KARCHER_TOL", "KARCHER_MAX_ITER",
]

# PriRFed's local trainer
LOCAL_DP_RSGD = 0  # Algorithm 2 of 000
LOCAL_DP_RSVRG = 1  # Algorithm 3 of 000
# server aggregation
AGG_TANGENT = 0  # tangent mean (3.2) of 000 / (8) of 002
AGG_KARCHER = 1  # Karcher mean (3.1) of 000 / (7) of 002 (reference: karcher_mean)
# RFed local step (002 Algorithms 1-3)
METHOD_SVRG = 0
METHOD_AVG = 1
METHOD_PROX = 2
#: karcher_mean's defaults in reference/manifolds/means.py (a test checks they agree)
KARCHER_TOL = 1e-10
KARCHER_MAX_ITER = 1000
