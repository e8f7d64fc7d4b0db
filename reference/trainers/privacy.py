"""The privacy event of a trainer run, computed from the run's own settings.

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
    r"""eps at ``delta`` of a trainer run (its ``TrainResult``, or its event), by ``accountant``:
    ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``,
    ``"rdp"`` or an accountant object (``prirfed.reference.accounting.accountants``).

    Accounted by the event algebra of :mod:`prirfed.reference.accounting` (Huang et al. (2024), Algorithm 1, corrected: see the errata page).

    Parameters
    ----------
    run : TrainResult or Event
        The run, or its event.
    delta : float
        Target :math:`\delta`.
    accountant : str or object, optional
        ``"best"`` (default), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    float
        :math:`\epsilon`.

    Raises
    ------
    ValueError
        If the run carries no privacy event (not differentially private), or as the accountant.
    """
    from prirfed.reference.accounting.accountants import epsilon

    return epsilon(_event_of("run_epsilon", run), delta, accountant, "run_epsilon")


def run_privacy_report(run, delta, accountant="best"):
    r"""``[lower, upper]`` eps of a trainer run at ``delta``: the upper bound by ``accountant`` and an
    attainable lower bound (``prirfed.reference.accounting.accountants.privacy_report``).

    Accounted by the event algebra of :mod:`prirfed.reference.accounting` (Huang et al. (2024), Algorithm 1, corrected: see the errata page).

    Parameters
    ----------
    run : TrainResult or Event
        The run, or its event.
    delta : float
        Target :math:`\delta`.
    accountant : str or object, optional
        ``"best"`` (default), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    PrivacyReport
        The lower and upper bounds.

    Raises
    ------
    ValueError
        If the run carries no privacy event, or as the accountant.
    """
    from prirfed.reference.accounting.accountants import privacy_report

    return privacy_report(_event_of("run_privacy_report", run), delta, accountant)


def prirfed_run_event(problem, *, local, N, s, T, K, m, sigmas, bs, tau, tau0, tau1):
    """Event of a PriRFed run: for the agent i holding the record, T rounds of
    ``Activation(s/N, local_event_i)`` (parallel composition across agents, activation with
    rho = s/N; proofs_notes/accounting_theorem_4_2.md); ``WorstCase`` over agents whose local
    settings differ. Returns (event or None, reason).

    Huang et al. (2024), Algorithm 1, accounted at record level (:func:`prirfed.reference.accounting.prirfed_accountant.prirfed_event`).

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    local : str
        ``"dp_rsgd"`` or ``"dp_rsvrg"``.
    N : int
        Number of agents.
    s : int
        Agents per round, in [1, N].
    T : int
        Rounds (steps), >= 1.
    K : int
        Local iterations, >= 1.
    m : int
        Inner-loop length, >= 1.
    sigmas : numpy.ndarray
        Noise per agent.
    bs : numpy.ndarray
        Batch size per agent.
    tau : float
        Clipping threshold (``inf``: no clipping).
    tau0 : float
        DP-RSVRG threshold of the full gradient.
    tau1 : float
        DP-RSVRG threshold of the per-sample terms.

    Returns
    -------
    event : Event or None
        The run's event, ``None`` when it is not private.
    reason : str
        Why (shown in ``info["privacy"]``).
    """
    if any(sig == 0 for sig in sigmas):
        return None, "not private: sigma_i = 0 for some agent"
    clip = (tau,) if local == "dp_rsgd" else (tau0, tau1)
    if any(c == math.inf for c in clip):
        return None, "not private: no clipping (tau = inf), the sensitivity is unbounded"
    per_setting = {}  # agents with the same (sigma_i, b_i, N_i) have the same event: built once
    per_agent = []
    for i in range(N):
        setting = (float(sigmas[i]), int(bs[i]), int(problem.sizes[i]))
        if setting not in per_setting:
            sigma_i, b_i, N_i = setting
            if local == "dp_rsgd":
                ev = dp_rsgd_event(sigma_i, tau, b_i, N_i, K)
            else:
                ev = dp_rsvrg_event(sigma_i, tau0, tau1, N_i, m, K)
            per_setting[setting] = prirfed_event(ev, N, s, T)
        per_agent.append(per_setting[setting])
    distinct = tuple(dict.fromkeys(per_agent))
    return (distinct[0] if len(distinct) == 1 else WorstCase(distinct)), "record-level, replace-one"


def dp_rgd_run_event(*, n, b, T, sigma, sensitivity_radius):
    """Event of DP-RGD (Han et al. (2024) Alg. 1) / DP-PGD: T steps, batch b of n without replacement, the batch
    mean of gradients of norm <= r has replace-one sensitivity 2r/b, noise std sigma.

    Parameters
    ----------
    n : int
        Number of (pooled) samples.
    b : int
        Batch size, in [1, N_i] (the pooled n for the single-dataset trainers).
    T : int
        Rounds (steps), >= 1.
    sigma : float
        Noise standard deviation (0: no noise, no draw).
    sensitivity_radius : float
        Bound :math:`r` on each clipped gradient's norm, > 0 (``inf``: none).

    Returns
    -------
    event : Event or None
        The event, ``None`` when not private.
    reason : str
        Why.

    Raises
    ------
    ValueError
        If ``sensitivity_radius`` is not > 0.
    """
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
    r"""Pure eps-DP release (Laplace-type output perturbation, DP-FM).

    Han et al. (2024), Section 5.2 (DP-FM).

    Parameters
    ----------
    eps : float
        The release's :math:`\epsilon`.

    Returns
    -------
    event : EpsilonDelta
        ``EpsilonDelta(eps, 0)``.
    reason : str
        Why.
    """
    return EpsilonDelta(eps, 0.0), "pure eps-DP given the stated sensitivity 2 D / n"
