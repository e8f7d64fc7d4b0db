"""``prirfed warmup``: compile (or load) the fused loops of some geometries ahead of time.

Kept apart from :mod:`prirfed.verified.trainers.warm` (the cold-start message), which the loop
modules import: this module imports the loop modules.
"""

from __future__ import annotations

import sys

from .warm import GEOMETRIES

__all__ = ["warmup", "GEOMETRIES"]


def warmup(geometries=GEOMETRIES, *, verbose=True) -> list:
    """Run every verified trainer once on a tiny problem of each geometry (compiling or loading the
    loops). Returns the (geometry, trainer) pairs run.

    Helper, not a paper formula: ahead-of-time compilation.

    Parameters
    ----------
    geometries : sequence of str, optional
        Geometry names (default: all of ``GEOMETRIES``).
    verbose : bool, optional
        Say on stderr what is compiled.

    Returns
    -------
    list of tuple
        The (geometry, trainer) pairs run.

    Raises
    ------
    ValueError
        If a geometry name is unknown.
    """
    import numpy as np

    from prirfed.reference.manifolds import SPD, Lorentz
    from prirfed.verified.problems import SPDFrechetMean, SpherePCA, StiefelKPCA
    from prirfed.verified.problems.hsp import HyperbolicStructuredPrediction

    from . import local as vl
    from . import prirfed as vp
    from . import rfed as vf
    from . import rgd as vr

    bad = [g for g in geometries if g not in GEOMETRIES]
    if bad:
        raise ValueError(f"warmup: unknown geometry {bad[0]!r} (expected some of {', '.join(GEOMETRIES)})")
    done = []
    rng = np.random.default_rng(0)
    for g in geometries:
        maps = "retraction" if g.endswith("retraction") else "exp"
        if g.startswith("sphere"):
            P, x0 = SpherePCA([np.array([[1.0, 0.2], [0.6, 0.8]]), np.array([[0.1, 1.0]])]), np.array([1.0, 0.0])
        elif g.startswith("stiefel"):
            P = StiefelKPCA([np.array([[1.0, 0.0, 0.1], [0.0, 2.0, 0.0]]), np.array([[0.0, 0.1, 1.0]])], 1)
            x0 = np.array([[1.0], [0.0], [0.0]])
        elif g == "spd":
            M = SPD(2)
            P, x0 = SPDFrechetMean([np.stack([M.random_point(rng) for _ in range(2)])]), np.eye(2)
        else:
            M = Lorentz(2)
            W = [rng.standard_normal((3, 2))]
            Y = [np.stack([M.random_point(rng) for _ in range(3)])]
            P = HyperbolicStructuredPrediction(W, Y, np.zeros(2), 0.5, 1.0)
            x0 = M.origin()
        calls = {
            "prirfed": lambda: vp.prirfed(P, x0, 1, 1, 0.1, rng, sigma=0.1, tau=1.0, maps=maps),
            "dp_rsgd_local": lambda: vl.dp_rsgd_local(P, 0, x0, 1, 1, 0.1, 1.0, 0.1, rng, maps=maps),
            "rgd": lambda: vr.rgd(P, x0, 0.1, 1, maps=maps),
            "dp_rgd": lambda: vr.dp_rgd(P, x0, 0.1, 1, 1, 0.1, rng, maps=maps),
            "rfedsvrg": lambda: vf.rfedsvrg(P, x0, 1, 1, 0.1, 1, rng, maps=maps),
        }
        for name, call in calls.items():
            if verbose:
                print(f"prirfed warmup: {g} {name}", file=sys.stderr, flush=True)
            call()
            done.append((g, name))
    return done
