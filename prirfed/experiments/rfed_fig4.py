"""``rfed-fig4``: Figure 4 of 002 (Section 5.2), kPCA (3) with tau = 1, 10, 50, 100 inner steps.

002 Section 5.2: "In the second experiment we test the effect of the number of inner loops tau_i.
We generate 10000 standard Gaussian vectors. We set (d, r) = (200, 5), k = 10 and n = 100 so that
p = 100. We choose tau = [1, 10, 50, 100] for the inner steps for all three algorithms. The results
are presented in Figure 4. From this figure we again observe the great performance of RFedSVRG."
Caption: "The y-axis of the figures in the first row denotes ||grad f(x_t)||, and the one in the
second row denotes the principal angle between x_t and x*. The experiments are repeated and
averaged over 10 times." Retraction and its inverse in place of Exp and Log (002 section 5).

Not printed, from the authors' code (JasonJiaxiangLi/Fed_manifold,
``plots_stiefel_synthetic_changing_tau.py``, read, not copied): rounds T = 500, 300, 200, 200 per
tau; eta = 1e-3, 2e-4, 5e-5, 1e-5 (RFedAvg, RFedProx) and 1e-2, 1e-3, 2e-4, 7e-5 (RFedSVRG);
mu = 50 (not 002's n/10 = 10 of the PCA experiment: the paper does not state mu here).

Modes: ``full`` the above; ``quick`` tau in {1, 10} with 60 rounds, 1 repetition; ``tiny`` d = 10, r = 2, 200 points, n = 20, k = 2, tau in {1, 5}, 20 rounds.
Proofs note: ``proofs_notes/experiment_rfed_figs.md``.
"""

from __future__ import annotations

from . import rfed_common as rc
from .core import experiment

__all__ = ["EXPERIMENT", "setting"]

NAME = "rfed-fig4"

#: tau -> (T, eta RFedAvg/RFedProx, eta RFedSVRG) of the authors' code
AUTHORS = {1: (500, 1e-3, 1e-2), 10: (300, 2e-4, 1e-3), 50: (200, 5e-5, 2e-4), 100: (200, 1e-5, 7e-5)}


def setting(tau: int, n: int, k: int, T: int, eta_avg: float, eta_svrg: float, mu: float) -> dict:
    """One column of Figure 4: the same tau for the three algorithms."""
    return dict(label=f"tau={tau}", n=n, k=k, T=T, tau=dict(rfedavg=tau, rfedprox=tau, rfedsvrg=tau),
                eta=dict(rfedavg=eta_avg, rfedprox=eta_avg, rfedsvrg=eta_svrg), mu=mu)


def make_config(mode: str, seed: int, backend: str) -> dict:
    if mode == "full":
        d, r, total, reps = 200, 5, 10000, 10
        sweep = [setting(t, 100, 10, T, ea, es, 50.0) for t, (T, ea, es) in AUTHORS.items()]
    elif mode == "quick":
        d, r, total, reps = 200, 5, 10000, 1
        sweep = [setting(t, 100, 10, 60, AUTHORS[t][1], AUTHORS[t][2], 50.0) for t in (1, 10)]
    else:
        d, r, total, reps = 10, 2, 200, 2
        sweep = [setting(1, 20, 2, 20, 2e-3, 3e-2, 2.0), setting(5, 20, 2, 20, 1e-3, 5e-3, 2.0)]
    return rc.synthetic_config(mode, seed, backend, "stiefel_kpca", d, r, total, "retraction", reps, sweep,
                               "rounds, step sizes and mu = 50 from the authors' code (plots_stiefel_synthetic_changing_tau.py); "
                               "polar retraction and its inverse (002 section 5); the same x_0 for the three algorithms")



def report(config: dict, results: list, out) -> list:
    fin = rc.write_outputs(config, results, out, "fig4", "002 Figure 4: kPCA (3), tau sweep")
    return rc.standard_checks(fin, "great performance of RFedSVRG for every tau (002 section 5.2)")


run_trial = rc.run_trial
trial_specs = rc.specs_for(NAME)


EXPERIMENT = experiment(__name__, NAME, "002 Figure 4: kPCA (3) on St(200, 5) with tau = 1, 10, 50, 100 local steps",
                        "002 Section 5.2, Figure 4")
