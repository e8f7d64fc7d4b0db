"""Privacy policy of the private experiments (one place): the local noise rule, the privacy report of
a run, and the check of the paper's claim.

- :func:`local_sigma`: one agent's noise std, either 000's formula (Section 6: o_i = o~_i = 1,
  :func:`paper_sigma_dp_rsgd` / :func:`paper_sigma_dp_rsvrg`) or, with ``calibrate``, the smallest
  sigma for which the configured accountant (setting ``accountant``: "best", the default, is the
  tightest valid of PLD and RDP; "pld"; "rdp") certifies the local training (eps, delta)-DP
  (:func:`calibrate_sigma_dp_rsgd` / :func:`calibrate_sigma_dp_rsvrg`);
- :func:`privacy_of_run`: the paper's (eps', delta') of Theorem 4.2 (000) for the local
  (eps, delta), the rigorous eps of the run's own event at the same delta', and the rigorous eps of
  one agent's local training at the local delta;
- :func:`worst_privacy` and :func:`paper_claim_check`: the privacy columns of a report (the worst
  value over runs) and the check "the run is (eps', delta')-DP with eps' of Theorem 4.2".

Used by prirfed-fig1, -fig2, -fig3, -fig4, -fig5 and -fig6. Proofs notes:
``proofs_notes/experiment_prirfed_fig1.md`` (the rule and the report) and
``proofs_notes/experiments.md``.
"""

from __future__ import annotations

from prirfed.reference.accounting.calibration import (
    calibrate_sigma_dp_rsgd,
    calibrate_sigma_dp_rsvrg,
    paper_sigma_dp_rsgd,
    paper_sigma_dp_rsvrg,
)
from prirfed.reference.accounting.accountants import ACCOUNTANT_CHOICES, epsilon, lower_epsilon
from prirfed.reference.accounting.paper import theorem_4_2
from prirfed.reference.accounting.prirfed_accountant import dp_rsgd_event, dp_rsvrg_event

from .core import Check

__all__ = ["local_sigma", "epsilon_of", "privacy_of_run", "worst_privacy", "paper_claim_check", "PRIVACY_COLUMNS",
           "PAPER_CLAIM", "ACCOUNTANTS", "check_accountant", "lower_epsilon_of"]

#: the columns :func:`worst_privacy` fills (in a report's privacy.csv, after the experiment's own):
#: ``eps_rigorous`` is the accountant's upper bound, ``eps_rigorous_lower`` an attainable lower bound
#: (the eps of a pair a real mechanism matching the run's event produces), so the true eps lies between
PRIVACY_COLUMNS = ("eps_local_rigorous", "eps_paper", "delta_paper", "eps_rigorous_lower", "eps_rigorous")
PAPER_CLAIM = ("the run is (eps', delta')-DP with eps' of Theorem 4.2 (000), checked against the rigorous accountant "
               "(configuration key accountant) for the sigma used")
#: the accountant choices of every private experiment's ``accountant`` setting (``prirfed reproduce --accountant``)
ACCOUNTANTS = ACCOUNTANT_CHOICES


def check_accountant(where: str, config: dict) -> str:
    """The configuration's ``accountant`` ("best": the tightest valid of PLD and RDP; "pld"; "rdp"), or ValueError."""
    acc = config.get("accountant")
    if acc not in ACCOUNTANTS:
        raise ValueError(f"{where}: accountant must be one of {ACCOUNTANTS} (got {acc!r})")
    return acc


def local_sigma(local: str, eps: float, delta: float, K: int, tau: float, N_i: int, b: int, m: int,
                calibrate: bool, accountant: str = "best") -> float:
    """Noise std of one agent running ``local`` ("dp_rsgd": K steps of batches of b of its N_i samples;
    "dp_rsvrg": K epochs of m inner steps) with clipping threshold tau: 000's formula with o = 1, or
    the calibration to local (eps, delta) by ``accountant`` when ``calibrate``."""
    if local == "dp_rsgd":
        if calibrate:
            return float(calibrate_sigma_dp_rsgd(eps, delta, K, tau, N_i, b, accountant=accountant).sigma)
        return float(paper_sigma_dp_rsgd(eps, delta, K, tau, N_i))
    if calibrate:
        return float(calibrate_sigma_dp_rsvrg(eps, delta, m, K, tau, tau, N_i, accountant=accountant).sigma)
    return float(paper_sigma_dp_rsvrg(eps, delta, m, K, tau, N_i))


def lower_epsilon_of(event, delta: float) -> float:
    """The attainable lower bound of ``event``'s eps at ``delta``
    (:func:`prirfed.reference.accounting.accountants.lower_epsilon`), or NaN (shown as ``nan`` in the
    CSVs, never a made-up number) when the accountant cannot form the lower bound: for some events
    with very small noise (noise multiplier far below 1) the PLD's hull reaches losses whose
    exponential is not a float64 and ``lower_epsilon`` raises ``ValueError`` saying so (the upper
    bound is unaffected)."""
    try:
        return float(lower_epsilon(event, delta))
    except ValueError:
        return float("nan")


def epsilon_of(event, delta: float, accountant: str = "best") -> float:
    """eps at ``delta`` of a privacy event: the upper bound of ``accountant`` (default: the tightest
    valid of PLD and RDP, :func:`prirfed.reference.accounting.accountants.epsilon`)."""
    return float(epsilon(event, delta, accountant))


def privacy_of_run(event, eps: float, delta: float, N: int, s: int, T: int, delta_hat: float, K: int, b: int,
                   N_i: int, sigma: float, tau: float, local: str = "dp_rsgd", m: int = 1, accountant: str = "best") -> dict:
    """Paper's (eps', delta') of Theorem 4.2 (000) for local (eps, delta), and the rigorous eps of
    the run's event at the same delta': ``accountant``'s upper bound and the attainable lower bound
    (:func:`lower_epsilon`); also the rigorous eps of one agent's local training at the paper's delta
    (is the paper's local calibration (eps, delta)-DP?)."""
    eps_p, delta_p = theorem_4_2(eps, delta, N, s, T, delta_hat)
    local_event = dp_rsgd_event(sigma, tau, b, N_i, K) if local == "dp_rsgd" else dp_rsvrg_event(sigma, tau, tau, N_i, m, K)
    return dict(eps_paper=float(eps_p), delta_paper=float(delta_p), eps_rigorous=epsilon_of(event, delta_p, accountant),
                eps_rigorous_lower=lower_epsilon_of(event, delta_p),
                eps_local_rigorous=epsilon_of(local_event, delta, accountant))


def worst_privacy(runs) -> dict:
    """The privacy columns of a report row: the largest value of each over the runs' privacy dicts."""
    return {k: max(q[k] for q in runs) for k in PRIVACY_COLUMNS}


def paper_claim_check(rows, describe, note: str = "", prefix: str = "") -> Check:
    """The check of :data:`PAPER_CLAIM` over report rows (each with ``eps_rigorous`` and ``eps_paper``):
    shown when every rigorous eps is at most the paper's eps' (relative slack 1e-9); the evidence is
    ``prefix``, ``describe(row)`` for each row, then ``note``."""
    sound = all(p["eps_rigorous"] <= p["eps_paper"] * (1 + 1e-9) for p in rows)
    return Check(PAPER_CLAIM, sound, prefix + ", ".join(describe(p) for p in rows) + note)
