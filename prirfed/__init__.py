"""prirfed: differentially private federated learning on Riemannian manifolds.

The public API in one namespace::

    import prirfed as pr

    M = pr.Sphere(24)                                      # manifolds
    problem = pr.SpherePCA(agent_data)                     # problems
    res = pr.prirfed(problem, x0, T, s, alpha, rng, sigma=0.5, tau=1.0)    # trainers (reference)
    fast = pr.trainers("verified")                         # the Numba twins, same signatures
    eps = pr.RdpAccountant().compose(res.event).get_epsilon(1e-5)           # accounting

The trainers here are the reference ones (plain NumPy, read like the papers); ``pr.trainers
("verified")`` gives the fused Numba twins (proven equal by the test suite) with a reference
fallback for settings they refuse. Everything is imported on first use (PEP 562), so
``import prirfed`` loads neither SciPy nor Numba and compiles nothing. The full layout:
``prirfed.reference`` (the citation-grade code), ``prirfed.verified`` (its Numba twins),
``prirfed.experiments`` and the ``prirfed`` command (ARCHITECTURE.md).
"""

import os
from importlib import import_module

# The verified trainers run the agents of a round in parallel (Numba's OpenMP layer). OpenMP threads
# wait for work by spinning unless told otherwise: on a shared or oversubscribed machine that cost
# 10x the CPU of the round (benchmarks/RESULTS.md, "Threads"). Passive waiting, unless the user has
# chosen a policy; set before any OpenMP runtime starts (importing prirfed.verified imports this first).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

_REF = "prirfed.reference"
#: public name -> module that defines it (imported on first access)
_EXPORTS = {
    # manifolds
    **{n: f"{_REF}.manifolds" for n in ("Manifold", "Euclidean", "Sphere", "SPD", "Lorentz", "Stiefel")},
    "Retracted": f"{_REF}.manifolds.retracted",
    "karcher_mean": f"{_REF}.manifolds.means",
    "tangent_mean": f"{_REF}.manifolds.means",
    # problems
    **{n: f"{_REF}.problems" for n in ("FederatedProblem", "SpherePCA", "SPDFrechetMean",
                                        "HyperbolicStructuredPrediction", "StiefelKPCA", "FrechetMean")},
    # mechanisms
    "clip": f"{_REF}.mechanisms",
    "sample_tangent_gaussian": f"{_REF}.mechanisms",
    # trainers (reference)
    "prirfed": f"{_REF}.trainers.prirfed",
    "dp_rsgd": f"{_REF}.trainers.local",
    "dp_rsvrg": f"{_REF}.trainers.local",
    "rgd": f"{_REF}.trainers.rgd",
    "dp_rgd": f"{_REF}.trainers.rgd",
    "rsgd": f"{_REF}.trainers.rgd",
    "rfedsvrg": f"{_REF}.trainers.rfed",
    "rfedavg": f"{_REF}.trainers.rfed",
    "rfedprox": f"{_REF}.trainers.rfed",
    "TrainResult": f"{_REF}.trainers.base",
    "History": f"{_REF}.trainers.base",
    "trainers": "prirfed.backend",
    # accounting: accountants, events, calibration
    "RdpAccountant": f"{_REF}.accounting.rdp",
    "PaperAccountant": f"{_REF}.accounting.paper",
    **{n: f"{_REF}.accounting.events" for n in ("Event", "Gaussian", "EpsilonDelta", "SampledWithoutReplacement",
                                                 "PoissonSampled", "Composed", "SelfComposed", "Activation",
                                                 "MixtureOfGaussians", "WorstCase")},
    **{n: f"{_REF}.accounting.prirfed_accountant" for n in ("dp_rsgd_event", "dp_rsvrg_event", "prirfed_event")},
    **{n: f"{_REF}.accounting.calibration" for n in ("calibrate_sigma", "calibrate_sigma_dp_rsgd",
                                                      "calibrate_sigma_dp_rsvrg", "calibrate_sigma_prirfed",
                                                      "paper_sigma_dp_rsgd", "paper_sigma_dp_rsvrg", "epsilon_dp_rsgd",
                                                      "epsilon_dp_rsvrg", "epsilon_prirfed")},
    "theorem_4_2": f"{_REF}.accounting.paper",
}
#: facade names that differ from the defining module's name
_RENAMED = {"dp_rsgd": "dp_rsgd_local", "dp_rsvrg": "dp_rsvrg_local"}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), _RENAMED.get(name, name))
        globals()[name] = value  # later accesses skip this function
        return value
    raise AttributeError(f"module 'prirfed' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
