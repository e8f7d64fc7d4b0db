"""Empirical privacy audits of whole trainer runs, held against the accountant.

A trainer is run many times on two neighbouring datasets that differ in one crafted record (a
*canary*); every run is reduced to one number (the statistic: the component along the canary
direction ``u`` of ``Log_{x0}(x_out)``, the final point seen from the common start), and the best
threshold test between the two samples of that number is turned into a statistical lower bound
on the trainer's epsilon. A lower bound above the accountant's upper bound for the same settings
is evidence of a privacy bug (a factor wrong in a trainer or in the accountant); its probability
for a correct trainer is at most ``1 - confidence`` (the false-alarm probability of the audit).

The statistics (derivations: ``proofs_notes/audit_whole_runs.md``):

- :func:`clopper_pearson_upper`: one-sided exact binomial upper confidence bound (Clopper and
  Pearson 1934).
- :func:`eps_from_error_rates`: (eps, delta)-DP implies ``FPR + e^eps FNR >= 1 - delta`` and the
  swapped inequality for every test (Kairouz, Oh and Viswanath 2015, Theorem 2.1; Wasserman and
  Zhou 2010), so upper bounds on both error rates give a lower bound on eps. Assumption-free.
- :func:`gdp_mu_from_error_rates`: a mu-GDP mechanism has ``FNR >= Phi(Phi^{-1}(1 - FPR) - mu)``
  for every test (Dong, Roth and Su 2022, Definition 2.6), so ``mu >= Phi^{-1}(1 - FPR_u) -
  Phi^{-1}(FNR_u)``. A valid falsifier of a *GDP claim*, which is what the accountant makes exactly
  for full-batch runs (a composition of Gaussian mechanisms: ``rdp.effective_gaussian``); the
  audit refuses this method for any other event.
- The threshold (and the side of the test) is chosen on the first half of the runs of each
  dataset and the errors are counted on the second half only, so the choice does not bias the
  counts; the two one-sided bounds are taken at level ``(1 - confidence) / 2`` each (union bound).

Canaries (:func:`sphere_pca_canary`, :func:`spd_frechet_canary`, :func:`hsp_canary`): at the start
``x0`` the canary record's gradient has norm ``margin * tau`` (so it is clipped to ``tau``) and points
along ``+u`` in one dataset and ``-u`` in the other, so the two clipped gradients differ by
``2 tau``, the replace-one sensitivity the accountant assumes; the other records have zero
gradient at ``x0`` (orthogonal data, or records at ``x0`` itself). The runs are seeded from
``numpy.random.SeedSequence([seed, dataset, run])``: the audit depends on the trainers' public
signatures only, not on how they consume their generator.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import optimize, special, stats

from prirfed.reference.accounting.accountants import epsilon as accountant_epsilon
from prirfed.reference.accounting.accountants import lower_epsilon
from prirfed.reference.accounting.events import Activation, Event, SelfComposed
from prirfed.reference.accounting.rdp import effective_gaussian
from prirfed.reference.mechanisms import clip, gaussian_delta
from prirfed.reference.problems import HyperbolicStructuredPrediction, SPDFrechetMean, SpherePCA

__all__ = [
    "clopper_pearson_upper", "eps_from_error_rates", "gdp_mu_from_error_rates", "gdp_epsilon",
    "Canary", "sphere_pca_canary", "spd_frechet_canary", "hsp_canary", "canary_statistic",
    "Trainer", "dp_rsgd_trainer", "dp_rsvrg_trainer", "dp_rgd_trainer", "prirfed_trainer",
    "gdp_claim", "TestBound", "best_test_bound", "AuditResult", "run_statistics", "audit",
]

METHODS = ("threshold", "gdp")


def _confidence(where: str, confidence) -> float:
    c = float(confidence)
    if not (0.0 < c < 1.0):
        raise ValueError(f"{where}: confidence must be in (0, 1) (got {confidence!r})")
    return c


def _delta(where: str, delta) -> float:
    d = float(delta)
    if not (0.0 <= d < 1.0):
        raise ValueError(f"{where}: delta must be in [0, 1) (got {delta!r})")
    return d


def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson upper bound p_u with P(p <= p_u) >= 1 - alpha for k successes in
    n Bernoulli(p) trials: the (1 - alpha) quantile of Beta(k + 1, n - k), and 1 when k = n
    (Clopper and Pearson 1934).

    Parameters
    ----------
    k : int
        Successes, ``0 <= k <= n``.
    n : int
        Trials, >= 1.
    alpha : float
        Level in (0, 1).

    Returns
    -------
    float
        The upper bound :math:`p_u`.

    Raises
    ------
    ValueError
        If ``n`` is not an integer >= 1, ``k`` not an integer in [0, n], or ``alpha`` not in (0, 1).
    """
    where = "clopper_pearson_upper"
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"{where}: n must be an integer >= 1 (got {n!r})")
    if not (isinstance(k, (int, np.integer)) and 0 <= k <= n):
        raise ValueError(f"{where}: k must be an integer in [0, n = {n}] (got {k!r})")
    if not (0.0 < alpha < 1.0):
        raise ValueError(f"{where}: alpha must be in (0, 1) (got {alpha!r})")
    return 1.0 if k >= n else float(stats.beta.ppf(1.0 - alpha, int(k) + 1, int(n) - int(k)))


def eps_from_error_rates(fpr_u: float, fnr_u: float, delta: float) -> float:
    r"""Lower bound on eps from upper bounds on a test's error rates: (eps, delta)-DP implies
    FPR + e^eps FNR >= 1 - delta and FNR + e^eps FPR >= 1 - delta (Kairouz, Oh, Viswanath 2015,
    Thm 2.1), so eps >= max(log((1 - delta - FNR_u) / FPR_u), log((1 - delta - FPR_u) / FNR_u)).
    Returns 0 when neither ratio exceeds 1 (eps >= 0 always).

    Parameters
    ----------
    fpr_u, fnr_u : float
        Upper bounds on the false positive and false negative rates.
    delta : float
        The :math:`\delta \in [0, 1)` of the claim.

    Returns
    -------
    float
        The lower bound on :math:`\epsilon`, >= 0.

    Raises
    ------
    ValueError
        If ``delta`` is not in [0, 1).
    """
    delta = _delta("eps_from_error_rates", delta)
    out = 0.0
    for a, b in ((fnr_u, fpr_u), (fpr_u, fnr_u)):
        if 1.0 - delta - a > 0.0 and b > 0.0:
            out = max(out, math.log((1.0 - delta - a) / b))
    return out


def gdp_mu_from_error_rates(fpr_u: float, fnr_u: float) -> float:
    r"""Lower bound on mu for a mu-GDP mechanism: its trade-off function is
    G_mu(a) = Phi(Phi^{-1}(1 - a) - mu) (Dong, Roth, Su 2022, Def. 2.6), so every test has
    mu >= Phi^{-1}(1 - FPR) - Phi^{-1}(FNR) >= Phi^{-1}(1 - FPR_u) - Phi^{-1}(FNR_u).
    Returns max(0, that) (both sides of the test are tried by the caller).

    Parameters
    ----------
    fpr_u, fnr_u : float
        Upper bounds on the error rates, in [0, 1].

    Returns
    -------
    float
        The lower bound on :math:`\mu`, >= 0.

    Raises
    ------
    ValueError
        If a rate is outside [0, 1].
    """
    if not (0.0 <= fpr_u <= 1.0 and 0.0 <= fnr_u <= 1.0):
        raise ValueError(f"gdp_mu_from_error_rates: rates must be in [0, 1] (got {fpr_u!r}, {fnr_u!r})")
    return max(0.0, float(special.ndtri(1.0 - fpr_u) - special.ndtri(fnr_u)))


def gdp_epsilon(mu: float, delta: float) -> float:
    r"""eps at delta of mu-GDP, i.e. of the Gaussian mechanism with sensitivity/sigma = mu
    (Dong, Roth, Su 2022, Cor. 2.13 = Balle and Wang 2018, Thm 8; ``gaussian_delta`` inverted):
    0 when delta(0) <= delta.

    Parameters
    ----------
    mu : float
        :math:`\mu \ge 0`, finite.
    delta : float
        :math:`\delta \in [0, 1)`.

    Returns
    -------
    float
        :math:`\epsilon` at :math:`\delta`.

    Raises
    ------
    ValueError
        If ``mu`` is not finite and >= 0 or ``delta`` is not in [0, 1).
    """
    where = "gdp_epsilon"
    delta = _delta(where, delta)
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"{where}: mu must be finite and >= 0 (got {mu!r})")
    if mu == 0.0 or gaussian_delta(0.0, 1.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(hi, 1.0, mu) > delta:
        hi *= 2.0
    return float(optimize.brentq(lambda e: gaussian_delta(e, 1.0, mu) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12))


# ---------------------------------------------------------------------------------------- canaries
@dataclass(frozen=True)
class Canary:
    """Two neighbouring problems (``datasets[0]``, ``datasets[1]``: the same records except record
    ``record`` of agent ``agent``), the common start ``x0`` and the unit tangent direction ``u`` at
    ``x0`` along which the canary's clipped gradient is ``-tau u`` in one and ``+tau u`` in the other.

    Parameters
    ----------
    name : str
        Name shown in reports.
    datasets : tuple
        The two neighbouring problems.
    x0 : numpy.ndarray
        The common start.
    u : numpy.ndarray
        Unit tangent direction at ``x0``.
    agent : int
        The canary's agent.
    record : int
        The canary's record index in that agent.
    tau : float
        Clipping threshold the canary is built for.
    """

    name: str
    datasets: tuple
    x0: np.ndarray
    u: np.ndarray
    agent: int
    record: int
    tau: float

    def clipped_difference(self) -> float:
        """``||clip_tau(grad f_canary; D1) - clip_tau(grad f_canary; D0)||_{x0}``: 2 tau for a canary at
        the sensitivity the accountant assumes.

        Returns
        -------
        float
            The metric norm of the difference of the two clipped canary gradients at ``x0``.
        """
        P0, P1 = self.datasets
        M = P0.manifold
        g0 = clip(M, self.x0, P0.grad_sample(self.x0, self.agent, self.record), self.tau)
        g1 = clip(M, self.x0, P1.grad_sample(self.x0, self.agent, self.record), self.tau)
        return float(M.norm(self.x0, g1 - g0))


def _layout(where, sizes, agent, margin, tau):
    sizes = [int(n) for n in sizes]
    if not sizes or min(sizes) < 1:
        raise ValueError(f"{where}: sizes must be a non-empty list of positive integers (got {sizes!r})")
    if not (isinstance(agent, (int, np.integer)) and 0 <= agent < len(sizes)):
        raise ValueError(f"{where}: agent must be in [0, {len(sizes) - 1}] (got {agent!r})")
    if not (math.isfinite(margin) and margin >= 1.0):
        raise ValueError(f"{where}: margin must be finite and >= 1 (got {margin!r})")
    if not (math.isfinite(tau) and tau > 0):
        raise ValueError(f"{where}: tau must be positive and finite (got {tau!r})")
    return sizes


def sphere_pca_canary(tau: float, sizes=(8,), agent: int = 0, d: int = 3, margin: float = 4.0, seed: int = 0) -> Canary:
    """Sphere PCA (Huang et al. (2024), eq. (6.1), c_i = 1) on S^d, d >= 2: x0 = e_0, u = e_1; the canary (record 0 of
    ``agent``) is z = a (x0 +- u) / sqrt(2) with a^2 = margin tau, whose gradient at x0 is
    -2 (z^T x0)(z - (z^T x0) x0) = -+ a^2 u (norm margin tau, clipped to tau); every other record
    lies in span(e_2, ..., e_d), orthogonal to x0 and u, so its gradient at x0 is 0.

    Parameters
    ----------
    tau : float
        Clipping threshold, > 0.
    sizes : sequence of int, optional
        Records per agent (default ``(8,)``).
    agent : int, optional
        The canary's agent (default 0).
    d : int, optional
        Sphere dimension, >= 2 (default 3).
    margin : float, optional
        Canary gradient norm over ``tau``, >= 1 (default 4).
    seed : int, optional
        Seed of the other records (default 0).

    Returns
    -------
    Canary
        The two problems and the audit direction.

    Raises
    ------
    ValueError
        If ``sizes`` is empty or has a non-positive entry, ``agent`` is out of range, ``margin < 1``,
        ``tau`` is not finite and > 0, or ``d < 2``.
    """
    where = "sphere_pca_canary"
    sizes = _layout(where, sizes, agent, margin, tau)
    if d < 2:
        raise ValueError(f"sphere_pca_canary: d must be >= 2 (the others need a direction besides x0, u; got {d})")
    rng = np.random.default_rng(seed)
    x0, u = np.eye(d + 1)[0], np.eye(d + 1)[1]
    a = math.sqrt(margin * tau)
    Z = []
    for n in sizes:
        Zi = np.zeros((n, d + 1))
        Zi[:, 2:] = rng.standard_normal((n, d - 1))
        Z.append(Zi)
    out = []
    for sign in (-1.0, 1.0):
        Zs = [z.copy() for z in Z]
        Zs[agent][0] = a * (x0 + sign * u) / math.sqrt(2.0)
        out.append(SpherePCA(Zs))
    return Canary("sphere PCA", tuple(out), x0, u, agent, 0, float(tau))


def spd_frechet_canary(tau: float, sizes=(8,), agent: int = 0, n: int = 2, margin: float = 4.0) -> Canary:
    """SPD Frechet mean (Huang et al. (2024), eq. (6.2), c = 1) on SPD(n): X0 = I, U = diag(1, 0, ...) (unit at I);
    the canary is Z = Exp_I(+-r U) with r = margin tau / 2, whose gradient -2 Log_I(Z) = -+ 2 r U
    has norm margin tau (clipped to tau); every other record is I, with gradient 0 at X0.

    Parameters
    ----------
    tau : float
        Clipping threshold, > 0.
    sizes : sequence of int, optional
        Records per agent (default ``(8,)``).
    agent : int, optional
        The canary's agent (default 0).
    n : int, optional
        Matrix size, >= 1 (default 2).
    margin : float, optional
        Canary gradient norm over ``tau``, >= 1 (default 4).

    Returns
    -------
    Canary
        The two problems and the audit direction.

    Raises
    ------
    ValueError
        If ``sizes`` is empty or has a non-positive entry, ``agent`` is out of range, ``margin < 1``,
        ``tau`` is not finite and > 0, or ``n < 1``.
    """
    where = "spd_frechet_canary"
    sizes = _layout(where, sizes, agent, margin, tau)
    if n < 1:
        raise ValueError(f"{where}: n must be >= 1 (got {n})")
    X0 = np.eye(n)
    U = np.zeros((n, n))
    U[0, 0] = 1.0
    r = margin * tau / 2.0
    out = []
    for sign in (-1.0, 1.0):
        Zs = [np.broadcast_to(X0, (m, n, n)).copy() for m in sizes]
        Zs[agent][0] = X0 + (math.exp(sign * r) - 1.0) * U  # Exp_I(sign r U) = expm(sign r U)
        out.append(SPDFrechetMean(Zs))
    return Canary("SPD Frechet mean", tuple(out), X0, U, agent, 0, float(tau))


def hsp_canary(tau: float, sizes=(8,), agent: int = 0, d: int = 2, margin: float = 4.0, gamma: float = 1.0) -> Canary:
    r"""Hyperbolic structured prediction (Huang et al. (2024), eq. (6.3)) on the Lorentz model H^d: every feature equals
    the test feature w, so the kernel matrix of agent i is the all-ones matrix and
    alpha_ij = 1 / (N_i + gamma) (the solution of (K + gamma I) alpha = 1); x0 = e_0, u = e_1; the
    canary embedding is ``y = Exp_{x0}(+-r u)`` with 2 alpha r = margin tau, whose gradient
    ``-2 alpha Log_{x0}(y)`` has norm margin tau (clipped to tau); every other embedding is x0.
    The neighbouring relation replaces the canary's embedding (its label), keeping its feature:
    replacing a feature changes every alpha_ij of the agent, which per-sample clipping does not
    bound (see proofs_notes/audit_whole_runs.md).

    Parameters
    ----------
    tau : float
        Clipping threshold, > 0.
    sizes : sequence of int, optional
        Records per agent (default ``(8,)``).
    agent : int, optional
        The canary's agent (default 0).
    d : int, optional
        Hyperbolic dimension, >= 1 (default 2).
    margin : float, optional
        Canary gradient norm over ``tau``, >= 1 (default 4).
    gamma : float, optional
        Ridge :math:`\gamma` of the kernel weights (default 1).

    Returns
    -------
    Canary
        The two problems and the audit direction.

    Raises
    ------
    ValueError
        If ``sizes`` is empty or has a non-positive entry, ``agent`` is out of range, ``margin < 1``,
        ``tau`` is not finite and > 0, or ``d < 1``.
    """
    where = "hsp_canary"
    sizes = _layout(where, sizes, agent, margin, tau)
    if d < 1:
        raise ValueError(f"{where}: d must be >= 1 (got {d})")
    x0, u = np.eye(d + 1)[0], np.eye(d + 1)[1]
    w = np.zeros(1)
    r = margin * tau * (sizes[agent] + gamma) / 2.0
    W = [np.zeros((m, 1)) for m in sizes]
    out = []
    for sign in (-1.0, 1.0):
        Ys = [np.broadcast_to(x0, (m, d + 1)).copy() for m in sizes]
        Ys[agent][0] = math.cosh(r) * x0 + math.sinh(r) * sign * u  # Exp_{x0}(sign r u)
        out.append(HyperbolicStructuredPrediction(W, Ys, w, gamma=gamma, v_bar=1.0))
    return Canary("HSP", tuple(out), x0, u, agent, 0, float(tau))


def canary_statistic(canary: Canary, x) -> float:
    """``<Log_{x0}(x), u>_{x0}``: the displacement of a run's output along the canary direction.

    Parameters
    ----------
    canary : Canary
        The canary.
    x : array_like
        A run's output point.

    Returns
    -------
    float
        The statistic.
    """
    M = canary.datasets[0].manifold
    return float(M.inner(canary.x0, M.log(canary.x0, np.asarray(x, dtype=np.float64)), canary.u))


# ---------------------------------------------------------------------------------------- trainers
@dataclass(frozen=True)
class Trainer:
    """A trainer as the audit sees it: ``run(problem, x0, rng)`` returns the audited output (a point)
    and ``event(problem)`` the privacy event the accountant holds for a record of the canary's agent.

    Parameters
    ----------
    name : str
        Name shown in reports.
    backend : str
        ``"reference"`` or ``"verified"``.
    run : callable
        ``run(problem, x0, rng)``, the audited output.
    event : callable
        ``event(problem)``, the accounted event.
    settings : dict, optional
        The settings, recorded in the result.
    """

    name: str
    backend: str
    run: Callable
    event: Callable
    settings: dict = field(default_factory=dict)


def _backend(where, backend):
    if backend not in ("reference", "verified"):
        raise ValueError(f"{where}: backend must be 'reference' or 'verified' (got {backend!r})")
    return backend


def _local(where, backend):
    """The local-training module of ``backend`` (the twins share names and signatures)."""
    if _backend(where, backend) == "reference":
        from prirfed.reference.trainers import local
    else:
        from prirfed.verified.trainers import local
    return local


def dp_rsgd_trainer(backend: str, K: int, b: int, sigma: float, tau: float, alpha: float, agent: int = 0,
                    run_sigma: float | None = None, run_tau: float | None = None) -> Trainer:
    """DP-RSGD local training of ``agent`` (Algorithm 2 of Huang et al. (2024)), output x_K; event
    ``dp_rsgd_event(sigma, tau, b, N_i, K)``. ``run_sigma`` / ``run_tau`` (default sigma, tau)
    are what the run uses: a trainer whose run differs from its accounting is a broken trainer.

    Parameters
    ----------
    backend : str
        ``"reference"`` or ``"verified"``.
    K : int
        Local steps.
    b : int
        Batch size.
    sigma : float
        Accounted noise standard deviation.
    tau : float
        Accounted clipping threshold.
    alpha : float
        Step size.
    agent : int, optional
        The trained agent (default 0).
    run_sigma, run_tau : float or None, optional
        Noise and threshold the run uses (default ``sigma``, ``tau``).

    Returns
    -------
    Trainer
        The audited trainer.

    Raises
    ------
    ValueError
        If ``backend`` is unknown.
    """
    from prirfed.reference.accounting.prirfed_accountant import dp_rsgd_event

    local = _local("dp_rsgd_trainer", backend)
    rs, rt = (sigma if run_sigma is None else run_sigma), (tau if run_tau is None else run_tau)

    def run(problem, x0, rng):
        return local.dp_rsgd_local(problem, agent, x0, K, b, rs, rt, alpha, rng)

    def event(problem):
        return dp_rsgd_event(sigma, tau, b, problem.sizes[agent], K)

    return Trainer("DP-RSGD", backend, run, event, dict(K=K, b=b, sigma=sigma, tau=tau, alpha=alpha,
                                                         run_sigma=rs, run_tau=rt))


def dp_rsvrg_trainer(backend: str, K: int, m: int, sigma: float, tau: float, alpha: float, agent: int = 0,
                     run_sigma: float | None = None, run_tau: float | None = None) -> Trainer:
    """DP-RSVRG local training of ``agent`` (Algorithm 3 of Huang et al. (2024), tau0 = tau1 = tau), output x_{K,m};
    event ``dp_rsvrg_event(sigma, tau, tau, N_i, m, K)``.

    Parameters
    ----------
    backend : str
        ``"reference"`` or ``"verified"``.
    K : int
        Outer local iterations.
    m : int
        Inner-loop length.
    sigma : float
        Accounted noise standard deviation.
    tau : float
        Accounted clipping threshold (both thresholds).
    alpha : float
        Step size.
    agent : int, optional
        The trained agent (default 0).
    run_sigma, run_tau : float or None, optional
        Noise and threshold the run uses (default ``sigma``, ``tau``).

    Returns
    -------
    Trainer
        The audited trainer.

    Raises
    ------
    ValueError
        If ``backend`` is unknown.
    """
    from prirfed.reference.accounting.prirfed_accountant import dp_rsvrg_event

    local = _local("dp_rsvrg_trainer", backend)
    rs, rt = (sigma if run_sigma is None else run_sigma), (tau if run_tau is None else run_tau)

    def run(problem, x0, rng):
        return local.dp_rsvrg_local(problem, agent, x0, K, m, rs, rt, rt, alpha, rng)

    def event(problem):
        return dp_rsvrg_event(sigma, tau, tau, problem.sizes[agent], m, K)

    return Trainer("DP-RSVRG", backend, run, event, dict(K=K, m=m, sigma=sigma, tau=tau, alpha=alpha,
                                                          run_sigma=rs, run_tau=rt))


def dp_rgd_trainer(backend: str, T: int, b: int, sigma: float, tau: float, alpha: float,
                   run_sigma: float | None = None, run_tau: float | None = None) -> Trainer:
    """DP-RGD of Han et al. (2024) (Algorithm 1, with the clipping of Huang et al. (2024)) on the pooled data, output w_T; event
    the run's own (``dp_rgd_run_event``: T steps, batch b of n, sensitivity 2 tau / b).

    Parameters
    ----------
    backend : str
        ``"reference"`` or ``"verified"``.
    T : int
        Steps.
    b : int
        Batch size.
    sigma : float
        Accounted noise standard deviation.
    tau : float
        Accounted clipping threshold.
    alpha : float
        Step size.
    run_sigma, run_tau : float or None, optional
        Noise and threshold the run uses (default ``sigma``, ``tau``).

    Returns
    -------
    Trainer
        The audited trainer.

    Raises
    ------
    ValueError
        If ``backend`` is unknown.
    """
    from prirfed.backend import trainers
    from prirfed.reference.trainers.privacy import dp_rgd_run_event

    tr = trainers(_backend("dp_rgd_trainer", backend))
    rs, rt = (sigma if run_sigma is None else run_sigma), (tau if run_tau is None else run_tau)

    def run(problem, x0, rng):
        return tr.dp_rgd(problem, x0, alpha, T, b, rs, rng, tau=rt, record_every=T).x

    def event(problem):
        return dp_rgd_run_event(n=int(sum(problem.sizes)), b=b, T=T, sigma=sigma, sensitivity_radius=tau)[0]

    return Trainer("DP-RGD", backend, run, event, dict(T=T, b=b, sigma=sigma, tau=tau, alpha=alpha,
                                                        run_sigma=rs, run_tau=rt))


def prirfed_trainer(backend: str, T: int, s: int, local: str, K: int, sigma: float, tau: float, alpha: float,
                    agent: int = 0, b=None, m: int = 1, others_sigma: float | None = None,
                    run_sigma: float | None = None, run_tau: float | None = None) -> Trainer:
    """PriRFed (Algorithm 1 of Huang et al. (2024)) with ``local`` training, output the final server iterate x^(T).

    The canary's ``agent`` trains with noise ``sigma`` (``run_sigma`` in the run); the other agents
    with ``others_sigma`` (default sigma). A record of ``agent`` is private by ``agent``'s own event
    (parallel composition: the others' computations are post-processing of the server iterates),
    ``prirfed_event(local_event_agent, N, s, T)``, so a small ``others_sigma`` keeps the accounted
    privacy of the canary unchanged and makes the server view close to the canary's uploads.

    Parameters
    ----------
    backend : str
        ``"reference"`` or ``"verified"``.
    T : int
        Rounds.
    s : int
        Agents sampled per round.
    local : str
        ``"dp_rsgd"`` or ``"dp_rsvrg"``.
    K : int
        Local iterations.
    sigma : float
        The canary agent's accounted noise.
    tau : float
        Accounted clipping threshold.
    alpha : float
        Step size.
    agent : int, optional
        The canary's agent (default 0).
    b : int, array_like or None, optional
        DP-RSGD batch size(s) (default: full batch).
    m : int, optional
        DP-RSVRG inner-loop length (default 1).
    others_sigma : float or None, optional
        Noise of the other agents (default ``sigma``).
    run_sigma, run_tau : float or None, optional
        Noise and threshold the canary's agent uses in the run (default ``sigma``, ``tau``).

    Returns
    -------
    Trainer
        The audited trainer.

    Raises
    ------
    ValueError
        If ``backend`` is unknown.
    """
    from prirfed.backend import trainers
    from prirfed.reference.accounting.prirfed_accountant import dp_rsgd_event, dp_rsvrg_event, prirfed_event

    tr = trainers(_backend("prirfed_trainer", backend))
    rs, rt = (sigma if run_sigma is None else run_sigma), (tau if run_tau is None else run_tau)
    os_ = sigma if others_sigma is None else others_sigma

    def run(problem, x0, rng):
        sig = np.full(problem.N, float(os_))
        sig[agent] = rs
        return tr.prirfed(problem, x0, T, s, alpha, rng, local=local, K=K, b=b, m=m, sigma=sig, tau=rt,
                          record_every=T).x

    def event(problem):
        N_i = problem.sizes[agent]
        if local == "dp_rsgd":
            bi = N_i if b is None else int(np.broadcast_to(np.asarray(b), (problem.N,))[agent])
            ev = dp_rsgd_event(sigma, tau, bi, N_i, K)
        else:
            ev = dp_rsvrg_event(sigma, tau, tau, N_i, m, K)
        return prirfed_event(ev, problem.N, s, T)

    return Trainer(f"PriRFed ({local})", backend, run, event,
                   dict(T=T, s=s, local=local, K=K, b=b, m=m, sigma=sigma, tau=tau, alpha=alpha,
                        others_sigma=os_, run_sigma=rs, run_tau=rt))


# ---------------------------------------------------------------------------------------- the audit
def gdp_claim(event: Event) -> float | None:
    r"""mu when the accountant's claim for ``event`` is exactly mu-GDP, else None: a composition of
    Gaussians (``rdp.effective_gaussian``: mu = 1 / z_eff, Dong, Roth, Su 2022 Cor. 3.3), also
    inside the ``Activation(1, .)`` of a PriRFed round with every agent sampled (s = N).

    Parameters
    ----------
    event : Event
        The accounted event.

    Returns
    -------
    float or None
        :math:`\mu` (``inf`` for zero noise), or ``None``.
    """
    def strip(e):
        if isinstance(e, Activation) and e.rho == 1.0:
            return strip(e.inner)
        if isinstance(e, SelfComposed):
            return SelfComposed(strip(e.inner), e.k)
        return e

    z = effective_gaussian(strip(event))
    return None if z is None else (math.inf if z == 0 else 1.0 / z)


@dataclass(frozen=True)
class TestBound:
    r"""The chosen test (``side`` +1: "statistic > threshold means dataset 1", -1: "<") and its
    counted errors on the evaluation halves, the Clopper-Pearson upper bounds and the bound.

    Parameters
    ----------
    method : str
        ``"threshold"`` or ``"gdp"``.
    threshold : float
        The chosen threshold.
    side : int
        +1 or -1.
    false_positives, n0 : int
        Errors and runs on dataset 0's evaluation half.
    false_negatives, n1 : int
        Errors and runs on dataset 1's evaluation half.
    fpr_upper, fnr_upper : float
        Clopper-Pearson upper bounds of the two rates.
    eps_lower : float
        The lower bound on :math:`\epsilon`.
    mu_lower : float or None
        The lower bound on :math:`\mu` (GDP method), else ``None``.
    """

    __test__ = False  # not a pytest class

    method: str
    threshold: float
    side: int
    false_positives: int
    n0: int
    false_negatives: int
    n1: int
    fpr_upper: float
    fnr_upper: float
    eps_lower: float
    mu_lower: float | None


def _bound_of(method, fp, n0, fn, n1, a, delta, final=True):
    """(FPR_u, FNR_u, eps bound, mu bound or None); while selecting (final=False) the GDP branch
    skips the eps conversion (monotone in mu)."""
    fpr_u = clopper_pearson_upper(fp, n0, a)
    fnr_u = clopper_pearson_upper(fn, n1, a)
    if method == "threshold":
        return fpr_u, fnr_u, eps_from_error_rates(fpr_u, fnr_u, delta), None
    mu = gdp_mu_from_error_rates(fpr_u, fnr_u)
    return fpr_u, fnr_u, (gdp_epsilon(mu, delta) if final else math.nan), mu


def _errors(s0, s1, t, side):
    if side > 0:
        return int(np.sum(s0 > t)), int(np.sum(s1 <= t))
    return int(np.sum(s0 < t)), int(np.sum(s1 >= t))


def best_test_bound(s0, s1, delta: float, confidence: float = 0.95, method: str = "threshold",
                    n_thresholds: int = 400) -> TestBound:
    r"""Lower bound on eps (``method="threshold"``) or on mu (``"gdp"``) from the statistics of the
    runs on dataset 0 (``s0``) and dataset 1 (``s1``), both sides of the test: the threshold
    maximising the bound on the first halves, errors counted on the second halves; each error
    rate bounded at level (1 - confidence) / 2, so the returned bound exceeds the truth with
    probability <= 1 - confidence.

    Parameters
    ----------
    s0, s1 : array_like
        1-D finite statistics, at least 4 runs each.
    delta : float
        :math:`\delta \in [0, 1)`.
    confidence : float, optional
        In (0, 1) (default 0.95).
    method : str, optional
        ``"threshold"`` (default) or ``"gdp"``.
    n_thresholds : int, optional
        Candidate thresholds (quantiles of the selection halves; default 400).

    Returns
    -------
    TestBound
        The chosen test and its bound.

    Raises
    ------
    ValueError
        If ``method`` is unknown, ``confidence`` not in (0, 1), ``delta`` not in [0, 1), a sample is
        not 1-D with at least 4 runs, or a statistic is not finite.
    """
    where = "best_test_bound"
    if method not in METHODS:
        raise ValueError(f"{where}: method must be one of {METHODS} (got {method!r})")
    confidence = _confidence(where, confidence)
    delta = _delta(where, delta)
    s0, s1 = np.asarray(s0, dtype=np.float64), np.asarray(s1, dtype=np.float64)
    if s0.ndim != 1 or s1.ndim != 1 or min(s0.size, s1.size) < 4:
        raise ValueError(f"{where}: need two 1-D samples of at least 4 runs (got shapes {s0.shape}, {s1.shape})")
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise ValueError(f"{where}: the statistics are not all finite")
    a = (1.0 - confidence) / 2.0
    h0, h1 = s0.size // 2, s1.size // 2
    sel0, ev0, sel1, ev1 = s0[:h0], s0[h0:], s1[:h1], s1[h1:]
    pooled = np.concatenate([sel0, sel1])
    cands = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_thresholds)))
    best = (-math.inf, None, None)
    for side in (1, -1):
        for t in cands:
            fp, fn = _errors(sel0, sel1, t, side)
            e = _bound_of(method, fp, h0, fn, h1, a, delta, final=False)
            key = e[3] if method == "gdp" else e[2]
            if key > best[0]:
                best = (key, t, side)
    _, t, side = best
    fp, fn = _errors(ev0, ev1, t, side)
    fpr_u, fnr_u, eps, mu = _bound_of(method, fp, ev0.size, fn, ev1.size, a, delta)
    return TestBound(method, float(t), int(side), fp, int(ev0.size), fn, int(ev1.size), fpr_u, fnr_u, eps, mu)


def run_statistics(trainer: Trainer, canary: Canary, n_runs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The statistic of ``n_runs`` runs of ``trainer`` on each dataset of ``canary``; run r on
    dataset k uses ``default_rng(SeedSequence([seed, k, r]))``.

    Parameters
    ----------
    trainer : Trainer
        The audited trainer.
    canary : Canary
        The canary.
    n_runs : int
        Runs per dataset, >= 4.
    seed : int
        Base seed.

    Returns
    -------
    s0, s1 : numpy.ndarray
        The statistics on dataset 0 and dataset 1.

    Raises
    ------
    ValueError
        If ``n_runs`` is not an integer >= 4.
    """
    if not (isinstance(n_runs, (int, np.integer)) and n_runs >= 4):
        raise ValueError(f"run_statistics: n_runs must be an integer >= 4 (got {n_runs!r})")
    out = []
    for k, problem in enumerate(canary.datasets):
        s = np.empty(n_runs)
        for r in range(n_runs):
            rng = np.random.default_rng(np.random.SeedSequence([int(seed), k, r]))
            s[r] = canary_statistic(canary, trainer.run(problem, canary.x0, rng))
        out.append(s)
    return out[0], out[1]


@dataclass(frozen=True)
class AuditResult:
    r"""One audit: the empirical lower bound (``bound``), the accountant's upper bound
    ``eps_upper`` and attainable lower bound ``eps_attainable`` (the eps of a pair the accountant
    knows a mechanism matching the event produces) at ``delta``; ``mu_claimed`` the GDP parameter
    the accountant claims when the event is a Gaussian composition (else None).

    Parameters
    ----------
    trainer, backend, canary : str
        What was audited.
    n_runs, seed : int
        Runs per dataset and base seed.
    delta, confidence : float
        The audit's :math:`\delta` and confidence.
    bound : TestBound
        The empirical bound.
    eps_upper : float
        The accountant's upper bound.
    eps_attainable : float
        The accountant's attainable lower bound.
    mu_claimed : float or None
        The claimed GDP parameter, if any.
    seconds : float
        Wall time of the runs.
    settings : dict
        The trainer's settings.
    """

    trainer: str
    backend: str
    canary: str
    n_runs: int
    seed: int
    delta: float
    confidence: float
    bound: TestBound
    eps_upper: float
    eps_attainable: float
    mu_claimed: float | None
    seconds: float
    settings: dict

    @property
    def eps_lower(self) -> float:
        return self.bound.eps_lower

    @property
    def ratio(self) -> float:
        """eps_lower / eps_upper (1 is a tight audit; > 1 a privacy bug, up to the false-alarm probability)."""
        return self.eps_lower / self.eps_upper if self.eps_upper > 0 else math.inf

    @property
    def violation(self) -> bool:
        """The audit contradicts the accountant: eps_lower > eps_upper, or (GDP audits) mu_lower > mu_claimed."""
        if self.bound.mu_lower is not None and self.mu_claimed is not None:
            return self.bound.mu_lower > self.mu_claimed
        return self.eps_lower > self.eps_upper

    def row(self) -> dict:
        """

        Returns
        -------
        dict
            The result's fields for a table row.
        """
        return dict(trainer=self.trainer, backend=self.backend, canary=self.canary, n_runs=self.n_runs,
                    method=self.bound.method, eps_lower=self.eps_lower, eps_upper=self.eps_upper,
                    eps_attainable=self.eps_attainable, ratio=self.ratio, mu_lower=self.bound.mu_lower,
                    mu_claimed=self.mu_claimed, seconds=self.seconds)


def audit(trainer: Trainer, canary: Canary, n_runs: int, seed: int, delta: float = 1e-5, confidence: float = 0.95,
          method: str = "threshold", accountant="best") -> AuditResult:
    r"""Audit ``trainer`` with ``canary``: ``n_runs`` seeded runs per dataset, the best test's
    lower bound (:func:`best_test_bound`) and the accountant's bounds for the same settings.
    ``method="gdp"`` requires an event that is a composition of Gaussians (the accountant's claim
    is then exactly mu-GDP); ``ValueError`` otherwise.

    Parameters
    ----------
    trainer : Trainer
        The audited trainer.
    canary : Canary
        The canary.
    n_runs : int
        Runs per dataset, >= 4.
    seed : int
        Base seed.
    delta : float, optional
        :math:`\delta` (default 1e-5).
    confidence : float, optional
        In (0, 1) (default 0.95).
    method : str, optional
        ``"threshold"`` (default) or ``"gdp"``.
    accountant : str or object, optional
        The accountant of the upper bound (default ``"best"``).

    Returns
    -------
    AuditResult
        The audit.

    Raises
    ------
    ValueError
        If ``method`` is unknown, the trainer's event is not an Event, ``method="gdp"`` is asked for
        an event that is not a composition of Gaussians, or as :func:`run_statistics` and
        :func:`best_test_bound`.
    """
    where = "audit"
    if method not in METHODS:
        raise ValueError(f"{where}: method must be one of {METHODS} (got {method!r})")
    event = trainer.event(canary.datasets[0])
    if not isinstance(event, Event):
        raise ValueError(f"{where}: the trainer's event is not an Event (got {event!r})")
    mu_claimed = gdp_claim(event)
    if method == "gdp" and mu_claimed is None:
        raise ValueError(f"{where}: method='gdp' needs an event that is a composition of Gaussians (the accountant "
                         f"then claims mu-GDP); {type(event).__name__} is not: use method='threshold'")
    t0 = time.perf_counter()
    s0, s1 = run_statistics(trainer, canary, n_runs, seed)
    secs = time.perf_counter() - t0
    bound = best_test_bound(s0, s1, delta, confidence, method)
    return AuditResult(trainer=trainer.name, backend=trainer.backend, canary=canary.name, n_runs=int(n_runs),
                       seed=int(seed), delta=float(delta), confidence=float(confidence), bound=bound,
                       eps_upper=float(accountant_epsilon(event, delta, accountant, where)),
                       eps_attainable=float(lower_epsilon(event, delta, where)), mu_claimed=mu_claimed,
                       seconds=secs, settings=dict(trainer.settings))
