"""Choose the trainers' backend: ``trainers("verified")`` or ``trainers("reference")``.

    >>> from prirfed.backend import trainers
    >>> tr = trainers("verified")
    >>> res = tr.prirfed(problem, x0, T, s, alpha, rng, sigma=0.5, tau=1.0)   # doctest: +SKIP

Both namespaces hold ``prirfed``, ``rgd``, ``dp_rgd``, ``rfedsvrg``, ``rfedavg`` and ``rfedprox`` with
the signatures of :mod:`prirfed.reference.trainers` (the reference functions themselves for
``"reference"``). The verified functions (:mod:`prirfed.verified.trainers`, fused Numba loops,
proven equal to the reference by ``tests/verified/``) support the tangent-mean and Karcher
aggregations, fixed-step RGD, the problems sphere PCA, the SPD Frechet mean, HSP on the Lorentz
model and Stiefel kPCA (every trainer), ``maps="exp"`` everywhere and ``maps="retraction"`` on the
sphere and on Stiefel. For any other setting the ``"verified"`` namespace runs the reference
function instead and emits a :class:`BackendFallbackWarning` saying which setting the verified trainer
refuses. The decision is made from the arguments before anything runs (no draw is consumed), so
a fallback run is exactly the reference run. Invalid inputs are not a fallback: they raise the
verified trainer's ``ValueError``.
Proofs note: ``proofs_notes/verified_trainers.md`` (section 4e).
"""

from __future__ import annotations

import functools
import inspect
import types
import warnings

import numpy as np

from prirfed.reference.trainers import prirfed as _ref_prirfed
from prirfed.reference.trainers import rfed as _ref_rfed
from prirfed.reference.trainers import rgd as _ref_rgd

__all__ = ["trainers", "refusal", "BackendFallbackWarning", "TRAINER_NAMES"]

TRAINER_NAMES = ("prirfed", "rgd", "dp_rgd", "rfedsvrg", "rfedavg", "rfedprox")

_REFERENCE = {
    "prirfed": _ref_prirfed.prirfed,
    "rgd": _ref_rgd.rgd,
    "dp_rgd": _ref_rgd.dp_rgd,
    "rfedsvrg": _ref_rfed.rfedsvrg,
    "rfedavg": _ref_rfed.rfedavg,
    "rfedprox": _ref_rfed.rfedprox,
}


class BackendFallbackWarning(UserWarning):
    """The verified backend ran the reference trainer because the verified one refuses a setting."""


def _verified(name):
    from prirfed.verified.trainers import prirfed as vp
    from prirfed.verified.trainers import rfed as vf
    from prirfed.verified.trainers import rgd as vr

    return {"prirfed": vp.prirfed, "rgd": vr.rgd, "dp_rgd": vr.dp_rgd, "rfedsvrg": vf.rfedsvrg,
            "rfedavg": vf.rfedavg, "rfedprox": vf.rfedprox}[name]


def refusal(name, arguments):
    """Why the verified trainer ``name`` refuses a call with these arguments, or None if it accepts it.

    A refusal: an unsupported problem, ``maps="retraction"`` off the sphere and Stiefel, or
    ``armijo=True`` for ``rgd``. Invalid values (an unknown ``maps`` or ``aggregation``) are not
    refusals: the verified trainer raises its ``ValueError``.

    Parameters
    ----------
    name : str
        A trainer name of :data:`TRAINER_NAMES`.
    arguments : dict
        The call's bound arguments, defaults applied.

    Returns
    -------
    str or None
        The reason, or None.

    Raises
    ------
    ValueError
        If ``name`` is not a trainer name.
    """
    from prirfed.verified.trainers.prirfed import problem_arrays

    if name not in _REFERENCE:
        raise ValueError(f"refusal: unknown trainer {name!r} (expected one of {TRAINER_NAMES})")
    armijo = arguments.get("armijo", False)
    if name == "rgd" and isinstance(armijo, (bool, np.bool_)) and armijo:  # any other value: the trainer's ValueError
        return "armijo=True (the Armijo line search is reference-only)"
    problem = arguments["problem"]
    try:
        problem_arrays("backend", problem)
    except ValueError:
        return (f"the problem {type(problem).__name__} on {type(getattr(problem, 'manifold', None)).__name__} "
                "(fused: SpherePCA, SPDFrechetMean, HyperbolicStructuredPrediction, StiefelKPCA)")
    maps = arguments.get("maps", "exp")
    if isinstance(maps, str) and maps == "retraction":  # never an element-wise comparison
        try:
            problem_arrays("backend", problem, maps)
        except ValueError:
            return (f"maps='retraction' on {type(problem.manifold).__name__} "
                    "(the retraction is fused on the sphere and Stiefel)")
    return None


def _dispatching(name):
    ref = _REFERENCE[name]
    sig = inspect.signature(ref)

    @functools.wraps(ref)
    def run(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{name} (verified backend): {exc}") from None
        bound.apply_defaults()
        why = refusal(name, bound.arguments)
        if why is None:
            return _verified(name)(*args, **kwargs)
        warnings.warn(f"prirfed.backend: the verified {name} refuses {why}; running the reference {name}",
                      BackendFallbackWarning, stacklevel=2)
        return ref(*args, **kwargs)

    run.__doc__ = (f"Verified {name} (:mod:`prirfed.verified.trainers`), or the reference {name} with a "
                   f":class:`BackendFallbackWarning` for settings the verified one refuses.\n\n" + (ref.__doc__ or ""))
    return run


def trainers(backend: str = "verified") -> types.SimpleNamespace:
    """The trainers of ``backend`` as a namespace.

    Parameters
    ----------
    backend : {'verified', 'reference'}, optional
        The fused Numba twins (default; a setting they refuse runs the reference trainer with a
        :class:`BackendFallbackWarning`) or the reference trainers.

    Returns
    -------
    types.SimpleNamespace
        Attributes ``prirfed``, ``rgd``, ``dp_rgd``, ``rfedsvrg``, ``rfedavg``, ``rfedprox`` and
        ``backend``.

    Raises
    ------
    ValueError
        If ``backend`` is neither.
    """
    if isinstance(backend, str) and backend == "reference":
        return types.SimpleNamespace(backend="reference", **_REFERENCE)
    if isinstance(backend, str) and backend == "verified":
        return types.SimpleNamespace(backend="verified", **{n: _dispatching(n) for n in TRAINER_NAMES})
    raise ValueError(f"trainers: backend must be 'verified' or 'reference' (got {backend!r})")
