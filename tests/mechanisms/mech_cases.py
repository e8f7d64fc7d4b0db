"""Manifolds the mechanism tests run on, and shared statistical helpers.

A manifold is included as soon as its module file exists in both twins (the manifolds are
written in parallel); if the file exists but fails to import, the import error propagates, so
nothing is skipped silently.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

import numpy as np
from scipy import stats

# (module, class name, constructor args) — one moderate size per manifold
_PLAN = [
    ("euclidean", "Euclidean", (3,)),
    ("sphere", "Sphere", (3,)),
    ("spd", "SPD", (3,)),
    ("lorentz", "Lorentz", (3,)),
    ("stiefel", "Stiefel", (4, 2)),
]


@dataclass
class Case:
    name: str
    ref: object  # reference manifold
    ver: object  # verified twin (or None when only the reference exists)
    ver_module: object

    def __repr__(self):
        return self.name


def _exists(modname: str) -> bool:
    try:
        return importlib.util.find_spec(modname) is not None
    except ModuleNotFoundError:
        return False


def available_cases() -> list[Case]:
    cases = []
    for mod, cls, args in _PLAN:
        rname = f"prirfed.reference.manifolds.{mod}"
        if not _exists(rname):
            continue
        ref = getattr(importlib.import_module(rname), cls)(*args)
        vname = f"prirfed.verified.manifolds.{mod}"
        ver, vmod = None, None
        if _exists(vname):
            vmod = importlib.import_module(vname)
            ver = getattr(vmod, cls)(*args)
        cases.append(Case(f"{cls}{args}", ref, ver, vmod))
    return cases


CASES = available_cases()
VERIFIED_CASES = [c for c in CASES if c.ver is not None]


def point(M, seed: int):
    return M.random_point(np.random.default_rng(seed))


def random_orthonormal_frame(M, x, rng):
    """An orthonormal frame of T_x built WITHOUT tangent_basis: Gram-Schmidt (in M.inner) of
    random_tangent draws, re-orthogonalised twice. Used to read coordinates of samples, so that
    the law tests do not just read back the sampler's own z."""
    d = M.dim
    F = []
    while len(F) < d:
        v = M.random_tangent(x, rng)
        for _ in range(2):
            for f in F:
                v = v - M.inner(x, v, f) * f
        n = M.norm(x, v)
        if n > 1e-6:
            F.append(v / n)
    return np.array(F)


def linear_functional(M, x, u):
    """Vector a with <w, u>_x = w.ravel() @ a for every tangent w at x (a represents the linear
    form <., u>_x on the flattened ambient space; built from M.inner on the tangent basis and
    the pseudo-inverse of the flattened basis, which is exact on T_x)."""
    E = M.tangent_basis(x)
    d = M.dim
    Ef = E.reshape(d, -1)
    g = np.array([M.inner(x, E[k], u) for k in range(d)])
    # w = c @ Ef  =>  c = w @ pinv(Ef)  =>  <w,u> = c @ g = w @ (pinv(Ef) @ g)
    return np.linalg.pinv(Ef) @ g


def coordinates(M, x, F, samples):
    """Coordinates <xi_i, F_k>_x of a stack of tangent vectors (n, *ambient) in the frame F."""
    A = np.stack([linear_functional(M, x, F[k]) for k in range(F.shape[0])], axis=1)  # (m, d)
    return samples.reshape(samples.shape[0], -1) @ A


def gaussian_law_pvalues(C, sigma):
    """p-values of three tests of "rows of C are iid N(0, sigma^2 I_d)":

    - ``cov``: likelihood-ratio test of the covariance with known mean 0,
      n [tr(S) - log det S - d] with S the sample second-moment matrix / sigma^2,
      asymptotically chi^2 with d(d+1)/2 degrees of freedom;
    - ``ks``: the smallest of the d one-sample KS p-values against N(0, sigma^2), times d
      (Bonferroni);
    - ``norm2``: two-sided exact test of sum ||c_i||^2 / sigma^2 ~ chi^2_{n d}.
    """
    n, d = C.shape
    S = (C.T @ C) / n / sigma**2
    sign, logdet = np.linalg.slogdet(S)
    lrt = n * (np.trace(S) - logdet - d)
    p_cov = float(stats.chi2.sf(lrt, d * (d + 1) // 2))
    p_ks = min(1.0, d * min(stats.kstest(C[:, k] / sigma, "norm").pvalue for k in range(d)))
    q = float(np.sum(C * C) / sigma**2)
    cdf = stats.chi2.cdf(q, n * d)
    p_norm = float(2 * min(cdf, 1 - cdf))
    return {"cov": p_cov, "ks": p_ks, "norm2": p_norm}


