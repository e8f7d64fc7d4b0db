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

Mirrors no reference module: the reference trainers take strings (``maps="exp"``,
``local="dp_rsgd"``, ``aggregation="tangent"``); :mod:`prirfed.verified.trainers.arrays` turns a
problem and those strings into these codes.
"""

from __future__ import annotations

__all__ = [
    "GEOM_SPHERE", "GEOM_SPD", "GEOM_LORENTZ", "GEOM_SPHERE_RETR", "GEOM_STIEFEL", "GEOM_STIEFEL_RETR",
    "PROB_SPHERE_PCA", "PROB_SPD_FRECHET", "PROB_HSP", "PROB_STIEFEL_KPCA",
    "LOCAL_DP_RSGD", "LOCAL_DP_RSVRG",
    "AGG_TANGENT", "AGG_KARCHER",
    "METHOD_SVRG", "METHOD_AVG", "METHOD_PROX",
    "KARCHER_TOL", "KARCHER_MAX_ITER",
]

# manifold and maps (the geometry family "flat" of verified.trainers.geometry_flat: 0-3; "stiefel": 4-5)
GEOM_SPHERE = 0
GEOM_SPD = 1
GEOM_LORENTZ = 2
GEOM_SPHERE_RETR = 3  # the sphere seen through its retraction (maps="retraction"): Exp := retr, Log := inv_retr
GEOM_STIEFEL = 4  # St(d, r), maps="exp": the exact Exp and the Newton Log of the reference Stiefel class
GEOM_STIEFEL_RETR = 5  # St(d, r), maps="retraction": the polar retraction and its inverse
# problem (which per-sample gradient)
PROB_SPHERE_PCA = 0
PROB_SPD_FRECHET = 1
PROB_HSP = 2
PROB_STIEFEL_KPCA = 3
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
