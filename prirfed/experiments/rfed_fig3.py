"""``rfed-fig3``: Figure 3 of 002 (Section 5.2), RFedSVRG vs RFedAvg vs RFedProx on kPCA (3), synthetic data.

002 Section 5.2: "In the first experiment we sample 10000 data points in R^200 and partition them
into n agents, each of which contains equal number of data. We test our codes with different
number of agents n, and again set k = n/10. Here we take (d, r) = (200, 5). The results are given
in Figure 3, where we see that RFedSVRG can efficiently decrease ||grad f(x_t)|| and the principal
angle in all tested cases." Caption: "The y-axis of the figures in the first row denotes
||grad f(x_t)||, and the y-axis of the figures in the second row denotes the principal angle
between x_t and x*. The experiments are repeated and averaged over 10 times." "Again" carries over
from the PCA experiment: at most 600 rounds, tau_i = 1 for RFedSVRG and 5 for RFedAvg/RFedProx,
mu = n/10, constant step sizes. Section 5: "we adopted the projection-like retraction [2] and the
inverse of it [13] to approximate the exponential and the logarithm mappings" (``maps="retraction"``:
the polar retraction and its inverse of :class:`Stiefel`; the authors' code uses QR, ERRATA E30).

Not printed, from the authors' code (JasonJiaxiangLi/Fed_manifold,
``plots_stiefel_synthetic_changing_nk.py``, read, not copied): n in {50, 100, 500, 1000},
eta = 1e-4, 2e-4, 3e-4, 4e-4 (RFedAvg and RFedProx, per n) and 1e-2 (RFedSVRG). The "principal
angle" is the sum of the r principal angles (the authors' code: ``sum(subspace_angles(x, x*))``).

Modes: ``full`` the above; ``quick`` n in {50, 100} with 100 rounds and 1 repetition; ``tiny`` d = 10, r = 2,
200 points, n in {10, 20}, 30 rounds. Proofs note: ``proofs_notes/experiment_rfed_figs.md``.
"""

from __future__ import annotations

from . import rfed_common as rc
from .core import experiment

__all__ = ["EXPERIMENT", "setting"]

NAME = "rfed-fig3"

#: the authors' step sizes per n (plots_stiefel_synthetic_changing_nk.py)
ETA_AVG = {50: 1e-4, 100: 2e-4, 500: 3e-4, 1000: 4e-4}
ETA_SVRG = 1e-2


def setting(n: int, T: int, eta_avg: float, eta_svrg: float = ETA_SVRG) -> dict:
    """One column of Figure 3: n agents, k = n/10, tau = 5 / 5 / 1, mu = n/10."""
    k = max(1, n // 10)
    return dict(label=f"n={n}, k={k}", n=n, k=k, T=T, tau=dict(rfedavg=5, rfedprox=5, rfedsvrg=1),
                eta=dict(rfedavg=eta_avg, rfedprox=eta_avg, rfedsvrg=eta_svrg), mu=n / 10)


def make_config(mode: str, seed: int, backend: str) -> dict:
    if mode == "full":
        d, r, total, reps, sweep = 200, 5, 10000, 10, [setting(n, 600, ETA_AVG[n]) for n in (50, 100, 500, 1000)]
    elif mode == "quick":
        d, r, total, reps, sweep = 200, 5, 10000, 1, [setting(n, 100, ETA_AVG[n]) for n in (50, 100)]
    else:
        d, r, total, reps, sweep = 10, 2, 200, 2, [setting(10, 30, 2e-3, 3e-2), setting(20, 30, 2e-3, 3e-2)]
    return rc.synthetic_config(mode, seed, backend, "stiefel_kpca", d, r, total, "retraction", reps, sweep,
                               "n grid and step sizes from the authors' code (plots_stiefel_synthetic_changing_nk.py); "
                               "polar retraction and its inverse (002 section 5); the same x_0 for the three algorithms")



def report(config: dict, results: list, out) -> list:
    fin = rc.write_outputs(config, results, out, "fig3", "002 Figure 3: kPCA (3), synthetic")
    return rc.standard_checks(fin, "RFedSVRG can efficiently decrease ‖grad f(x_t)‖ and the principal angle in all "
                                   "tested cases (002 section 5.2)")


run_trial = rc.run_trial
trial_specs = rc.specs_for(NAME)


EXPERIMENT = experiment(__name__, NAME, "002 Figure 3: RFedSVRG vs RFedAvg vs RFedProx on kPCA (3) on St(200, 5), synthetic Gaussian data",
                        "002 Section 5.2, Figure 3")
