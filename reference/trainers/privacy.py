"""The privacy event of a trainer run, computed from the run's own settings (DESIGN.md section 4).

Every private trainer attaches ``TrainResult.event`` (an event of
:mod:`prirfed.reference.accounting.events`, record-level, replace-one) so that the privacy of
a run is computed by an accountant, never asserted. ``event`` is ``None`` exactly when the run
is not differentially private (sigma = 0 somewhere, or no clipping and no Lipschitz bound:
unbounded sensitivity); ``info["privacy"]`` then says why. :func:`run_epsilon` and
:func:`run_privacy_report` compute the eps of a run with a chosen accountant (default: the
tightest valid one).
"""

from __future__ import annotations

import math

from prirfed.reference.accounting.events import (
    EpsilonDelta,
    Gaussian,
    SampledWithoutReplacement,
    SelfComposed,
    WorstCase,
)
from prirfed.reference.accounting.prirfed_accountant import dp_rsgd_event, dp_rsvrg_event, prirfed_event

__all__ = ["prirfed_run_event", "dp_rgd_run_event", "output_perturbation_event", "run_epsilon", "run_privacy_report"]


def _event_of(where, run):
    """The event of a TrainResult (or an event given directly); ValueError if the run is not private."""
    from prirfed.reference.accounting.events import Event

    if isinstance(run, Event):
        return run
    ev = getattr(run, "event", None)
    if ev is None:
        why = getattr(run, "info", {}).get("privacy", "it carries no privacy event") if hasattr(run, "info") else "it carries no privacy event"
        raise ValueError(f"{where}: the run is not differentially private ({why})")
    return ev


def run_epsilon(run, delta, accountant="best"):
    """eps at ``delta`` of a trainer run (its ``TrainResult``, or its event), by ``accountant``:
    ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``,
    ``"rdp"`` or an accountant object (``prirfed.reference.accounting.accountants``)."""
    from prirfed.reference.accounting.accountants import epsilon

    return epsilon(_event_of("run_epsilon", run), delta, accountant, "run_epsilon")


def run_privacy_report(run, delta, accountant="best"):
    """``[lower, upper]`` eps of a trainer run at ``delta``: the upper bound by ``accountant`` and an
    attainable lower bound (``prirfed.reference.accounting.accountants.privacy_report``)."""
    from prirfed.reference.accounting.accountants import privacy_report

    return privacy_report(_event_of("run_privacy_report", run), delta, accountant)


def prirfed_run_event(problem, *, local, N, s, T, K, m, sigmas, bs, tau, tau0, tau1):
    """Event of a PriRFed run: for the agent i holding the record, T rounds of
    ``Activation(s/N, local_event_i)`` (parallel composition across agents, activation with
    rho = s/N; proofs_notes/accounting_theorem_4_2.md); ``WorstCase`` over agents whose local
    settings differ. Returns (event or None, reason)."""
    if any(sig == 0 for sig in sigmas):
        return None, "not private: sigma_i = 0 for some agent"
    clip = (tau,) if local == "dp_rsgd" else (tau0, tau1)
    if any(c == math.inf for c in clip):
        return None, "not private: no clipping (tau = inf), the sensitivity is unbounded"
    per_agent = []
    for i in range(N):
        N_i = problem.sizes[i]
        if local == "dp_rsgd":
            ev = dp_rsgd_event(float(sigmas[i]), tau, int(bs[i]), N_i, K)
        else:
            ev = dp_rsvrg_event(float(sigmas[i]), tau0, tau1, N_i, m, K)
        per_agent.append(prirfed_event(ev, N, s, T))
    distinct = tuple(dict.fromkeys(per_agent))
    return (distinct[0] if len(distinct) == 1 else WorstCase(distinct)), "record-level, replace-one"


def dp_rgd_run_event(*, n, b, T, sigma, sensitivity_radius):
    """Event of DP-RGD (Han et al. (2024) Alg. 1) / DP-PGD: T steps, batch b of n without replacement, the batch
    mean of gradients of norm <= r has replace-one sensitivity 2r/b, noise std sigma."""
    if sigma == 0:
        return None, "not private: sigma = 0"
    if not sensitivity_radius > 0:
        raise ValueError(f"dp_rgd_run_event: the sensitivity radius min(tau, lipschitz) must be > 0 (got {sensitivity_radius!r})")
    if sensitivity_radius == math.inf:
        return None, "not private: no clipping and no Lipschitz bound, the sensitivity is unbounded"
    g = Gaussian(sigma * b / (2.0 * sensitivity_radius))
    step = g if b == n else SampledWithoutReplacement(n, b, g)
    return SelfComposed(step, T), "record-level, replace-one"


def output_perturbation_event(eps):
    """Pure eps-DP release (Laplace-type output perturbation, DP-FM)."""
    return EpsilonDelta(eps, 0.0), "pure eps-DP given the stated sensitivity 2 D / n"
