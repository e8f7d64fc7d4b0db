"""Convergence bounds of Huang et al. (2024) (PriRFed) Section 5, one function per theorem, preconditions checked.

Every function takes the theorem's parameters, checks the theorem's preconditions (raising
``ValueError`` naming the violated one) and returns the right-hand side of the bound. The
derivations, the corrections and the empirical checks are in
``proofs_notes/theorem_000_5_1.md`` ... ``theorem_000_5_6.md``.

Symbols (Huang et al. (2024) Section 5): T rounds, alpha step size, L_f / L_g the geodesic Lipschitz / smoothness
constants of every f_ij (Assumptions 5.1, 5.2), d the manifold dimension, N_i the agents' sample
counts, sigma_i the per-agent noise standard deviations (E||eps_i||^2 = d sigma_i^2, Lemma A.3),
zeta the curvature constant (5.1) (:func:`prirfed.reference.manifolds.zeta`), ``gap0`` the initial
optimality gap f(x^(0)) - f(x*).
"""

from __future__ import annotations

import math

import numpy as np

from prirfed.reference.checks import check_int, check_real
from prirfed.reference.manifolds import zeta as _zeta

__all__ = [
    "theorem_5_1_bound",
    "theorem_5_2_step_sizes_ok",
    "theorem_5_2_bound",
    "theorem_5_3_bound",
    "theorem_5_4_bound",
    "theorem_5_5_bound",
    "theorem_5_6_bound",
    "theorem_5_6_m",
]


# ---------------------------------------------------------------------------------------- helpers




def _full_participation_settings(where, T, alpha, L_g, d, N_i, sigma, s, K, b):
    """The constants and preconditions Theorems 5.1 and 5.3 share (s_t = N, K = 1, b_i = N_i), checked:
    (T, alpha, L_g, d, N_i as floats, sigma_i as floats)."""
    T = check_int(where, "T", T)
    alpha, L_g = check_real(where, "alpha", alpha), check_real(where, "L_g", L_g)
    d = check_int(where, "d", d)
    n, sg = _agents(where, N_i, sigma)
    _full_participation(where, n, s, K, b)
    return T, alpha, L_g, d, n, sg


def _agents(where, N_i, sigma):
    """(N_i, sigma_i) as float arrays of one length N: N_i positive integers, sigma_i >= 0."""
    n = np.asarray(N_i, dtype=np.float64).reshape(-1)
    if n.size == 0 or np.any(~np.isfinite(n)) or np.any(n < 1) or np.any(n != np.round(n)):
        raise ValueError(f"{where}: N_i must be a non-empty sequence of positive integers (got {N_i!r})")
    s = np.asarray(sigma, dtype=np.float64)
    s = np.full(n.size, float(s)) if s.ndim == 0 else s.reshape(-1)
    if s.shape != n.shape:
        raise ValueError(f"{where}: sigma has {s.size} entries, expected a scalar or one per agent ({n.size})")
    if np.any(~np.isfinite(s)) or np.any(s < 0):
        raise ValueError(f"{where}: sigma must be finite and >= 0 (got {sigma!r})")
    return n, s


def _noise_sum(n, s):
    """sum_i p_i^2 sigma_i^2 with p_i = N_i / sum_k N_k (the variance factor of the aggregated noise)."""
    return float(np.sum(n**2 * s**2) / np.sum(n) ** 2)


def _full_participation(where, n, s, K, b):
    N = n.size
    if check_int(where, "s", s) != N:
        raise ValueError(f"{where}: precondition s_t = N violated (s = {s}, N = {N})")
    if check_int(where, "K", K) != 1:
        raise ValueError(f"{where}: precondition K = 1 violated (K = {K})")
    if b is not None:
        bb = np.asarray(b, dtype=np.float64)
        bb = np.full(N, float(bb)) if bb.ndim == 0 else bb.reshape(-1)
        if bb.shape != n.shape or np.any(bb != n):
            raise ValueError(f"{where}: precondition b_i = N_i (full batch) violated (b = {b!r}, N_i = {n.astype(int).tolist()})")


# ---------------------------------------------------------------------------------- Theorem 5.1
def theorem_5_1_bound(gap0, T, alpha, L_g, d, N_i, sigma, *, s, K=1, b=None):
    r"""Theorem 5.1 of Huang et al. (2024) (nonconvex, K = 1), inequality (5.2):

    .. math::
        \min_{0\le t<T}\mathbb E\|\operatorname{grad}f(x^{(t)})\|^2
        \le \frac{2}{T\alpha}\,(f(x^{(0)})-f^*) + \frac{d L_g\alpha}{(\sum_i N_i)^2}\sum_i N_i^2\sigma_i^2 .

    The proof (A.1)-(A.2) bounds the average over t = 0..T-1, so the minimum over those rounds.
    Preconditions: s_t = N, K = 1, b_i = N_i (``b=None`` means full batch), alpha <= 1/L_g;
    Option 1; clipping inactive (tau >= L_f) so that eta = grad f_i + eps.

    Parameters
    ----------
    gap0 : float
        Initial optimality gap :math:`f(x^{(0)}) - f^*` (>= 0).
    T : int
        Number of rounds (iterations).
    alpha : float
        Step size (> 0).
    L_g : float
        Geodesic smoothness constant of every :math:`f_{i,j}` (Assumption 5.2).
    d : int
        Dimension of the manifold.
    N_i : array_like of int
        Sample counts of the agents.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    s : int
        Agents per round (the theorem's participation precondition is checked).
    K : int, optional
        Local steps per round (checked against the theorem's precondition).
    b : int or array_like, optional
        Batch sizes; None means full batch (checked against the precondition).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_5_1_bound"
    gap0 = check_real(where, "gap0 = f(x0) - f*", gap0, allow_zero=True)
    T, alpha, L_g, d, n, sg = _full_participation_settings(where, T, alpha, L_g, d, N_i, sigma, s, K, b)
    if alpha > 1.0 / L_g:
        raise ValueError(f"{where}: precondition alpha <= 1/L_g violated (alpha = {alpha}, 1/L_g = {1.0 / L_g})")
    return 2.0 * gap0 / (T * alpha) + d * L_g * alpha * _noise_sum(n, sg)


# ---------------------------------------------------------------------------------- Theorem 5.2
def theorem_5_2_step_sizes_ok(a, p, L_g, delta) -> bool:
    r"""Conditions (5.3) of Theorem 5.2 of Huang et al. (2024) for the schedule :math:`\alpha_t = a/(t+1)^p`, t >= 0.

    (5.3): sum_t alpha_t = infinity, sum_t alpha_t^2 < infinity and L_g alpha_t <= 2 delta with a
    constant delta in (0, 1). For this schedule the first two hold iff 1/2 < p <= 1 (p-series) and
    the third iff L_g a <= 2 delta (alpha_t <= alpha_0 = a). Returns True iff all three hold;
    invalid inputs (a <= 0, L_g <= 0, delta outside (0, 1), non-finite) raise ``ValueError``.

    Parameters
    ----------
    a : float
        Scale of the schedule :math:`\alpha_t = a/(t+1)^p` (> 0).
    p : float
        Exponent of the schedule.
    L_g : float
        Geodesic smoothness constant of every :math:`f_{i,j}` (Assumption 5.2).
    delta : float
        The constant :math:`\delta \in (0, 1)` of (5.3).

    Returns
    -------
    bool
        True iff the three conditions (5.3) hold.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_5_2_step_sizes_ok"
    a, L_g = check_real(where, "a", a), check_real(where, "L_g", L_g)
    p = check_real(where, "p", p, allow_zero=True)
    delta = check_real(where, "delta", delta)
    if not delta < 1:
        raise ValueError(f"{where}: delta must lie in (0, 1) (got {delta})")
    return bool(0.5 < p <= 1.0 and L_g * a <= 2.0 * delta)


def theorem_5_2_bound(gap0, alphas, L_g, delta, d, N_i, sigma, *, s, K=1, b=None):
    r"""Theorem 5.2 of Huang et al. (2024) (nonconvex, K = 1, decaying steps), in the finite-T form (A.3):

    .. math::
        \sum_{t<T}\frac{\alpha_t}{\sum_{u<T}\alpha_u}\mathbb E\|\operatorname{grad}f(x^{(t)})\|^2
        \le \frac{f(x^{(0)})-f^*}{(1-\delta)\sum_t\alpha_t}
          + \frac{L_g d\sum_t\alpha_t^2}{2(1-\delta)\sum_t\alpha_t}\sum_i p_i^2\sigma_i^2 .

    The extracted conclusion is garbled ("liminf E[||grad f|| 0]"); restated: under (5.3) the
    right-hand side tends to 0, hence :math:`\liminf_{t\to\infty}\mathbb E\|\operatorname{grad}f(x^{(t)})\|^2=0`.
    Preconditions: s = N, K = 1, b_i = N_i, 0 < delta < 1, L_g alpha_t <= 2 delta for all t.

    Parameters
    ----------
    gap0 : float
        Initial optimality gap :math:`f(x^{(0)}) - f^*` (>= 0).
    alphas : array_like
        Step sizes :math:`\alpha_0, \dots, \alpha_{T-1}`.
    L_g : float
        Geodesic smoothness constant of every :math:`f_{i,j}` (Assumption 5.2).
    delta : float
        The constant :math:`\delta \in (0, 1)` of (5.3).
    d : int
        Dimension of the manifold.
    N_i : array_like of int
        Sample counts of the agents.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    s : int
        Agents per round (the theorem's participation precondition is checked).
    K : int, optional
        Local steps per round (checked against the theorem's precondition).
    b : int or array_like, optional
        Batch sizes; None means full batch (checked against the precondition).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_5_2_bound"
    gap0 = check_real(where, "gap0 = f(x0) - f*", gap0, allow_zero=True)
    L_g, delta = check_real(where, "L_g", L_g), check_real(where, "delta", delta)
    if not delta < 1:
        raise ValueError(f"{where}: precondition 0 < delta < 1 violated (delta = {delta})")
    a = np.asarray(alphas, dtype=np.float64).reshape(-1)
    if a.size == 0 or np.any(~np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{where}: step sizes must be a non-empty sequence of positive numbers (got {alphas!r})")
    d = check_int(where, "d", d)
    n, sg = _agents(where, N_i, sigma)
    _full_participation(where, n, s, K, b)
    worst = float(np.max(L_g * a))
    if worst > 2.0 * delta:
        raise ValueError(f"{where}: precondition L_g alpha_t <= 2 delta violated (max L_g alpha_t = {worst}, 2 delta = {2 * delta})")
    A1, A2 = float(np.sum(a)), float(np.sum(a**2))
    return gap0 / ((1 - delta) * A1) + L_g * d * A2 / (2 * (1 - delta) * A1) * _noise_sum(n, sg)


# ---------------------------------------------------------------------------------- Theorem 5.3
def theorem_5_3_bound(dist0, T, alpha, L_g, d, N_i, sigma, kappa_min, M, *, s, K=1, b=None):
    r"""Theorem 5.3 of Huang et al. (2024) (geodesically convex, K = 1), inequality (5.4):

    .. math::
        \mathbb E[f(x^{(T)})-f^*] \le \frac{\zeta\,\mathrm{dist}^2(x^{(0)},x^*)}{2\alpha(\zeta+T-1)}
        + \frac{T(6\zeta+T-1)\,d}{16L_g(\zeta+T-1)(\sum_iN_i)^2}\sum_iN_i^2\sigma_i^2,

    zeta = zeta(kappa_min, M) of (5.1) with M the diameter of the set W holding the iterates and
    x*. Preconditions: s = N, K = 1, b_i = N_i, alpha <= 1/(2 L_g), Option 1, f_i geodesically
    convex on W (not checkable here). The proof's step Delta^0 <= L_g dist (lead 10) is replaced
    by Delta^0 <= (L_g/2) dist^2 <= dist^2/(2 alpha), which gives the same conclusion.

    Parameters
    ----------
    dist0 : float
        Initial distance :math:`\mathrm{dist}(x^{(0)}, x^*)`.
    T : int
        Number of rounds (iterations).
    alpha : float
        Step size (> 0).
    L_g : float
        Geodesic smoothness constant of every :math:`f_{i,j}` (Assumption 5.2).
    d : int
        Dimension of the manifold.
    N_i : array_like of int
        Sample counts of the agents.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    kappa_min : float
        Lower bound of the sectional curvature.
    M : float
        Diameter of the set holding the iterates and the optimum (for :math:`\zeta`).
    s : int
        Agents per round (the theorem's participation precondition is checked).
    K : int, optional
        Local steps per round (checked against the theorem's precondition).
    b : int or array_like, optional
        Batch sizes; None means full batch (checked against the precondition).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_5_3_bound"
    dist0 = check_real(where, "dist0 = dist(x0, x*)", dist0, allow_zero=True)
    T, alpha, L_g, d, n, sg = _full_participation_settings(where, T, alpha, L_g, d, N_i, sigma, s, K, b)
    if alpha > 1.0 / (2.0 * L_g):
        raise ValueError(f"{where}: precondition alpha <= 1/(2 L_g) violated (alpha = {alpha}, 1/(2 L_g) = {0.5 / L_g})")
    z = _zeta(kappa_min, M)
    return (z * dist0**2 / (2 * alpha * (z + T - 1))
            + T * (6 * z + T - 1) * d / (16 * L_g * (z + T - 1)) * _noise_sum(n, sg))


# ---------------------------------------------------------------------------------- Theorem 5.4
def theorem_5_4_bound(gap0, T, alpha, L_g, mu, d, v, N_i, sigma, *, s, K=1, b=None, printed_kappa_1=False):
    r"""Theorem 5.4 of Huang et al. (2024) (RPL, K = 1, partial participation), inequality (5.5), corrected:

    .. math::
        \mathbb E f(x^{(T)}) - f^* \le P^T(f(x^{(0)})-f^*) + (1-P^T)\Big(\kappa_0\,\frac{\overline{\sigma^2}}{S}
        + \kappa_1\frac{N-S}{S(N-1)}\Big),

    P = 1 - 2 mu alpha + mu alpha^2 L_g, kappa_0 = L_g alpha d / (2 mu (2 - L_g alpha)) and
    kappa_1 = L_g alpha v / (2 mu (2 - L_g alpha)) = v kappa_0 / d (the printed kappa_1 = v kappa_0
    carries a spurious factor d: valid but looser; ``printed_kappa_1=True`` returns the printed
    form). :math:`\overline{\sigma^2} = \frac1N\sum_i\sigma_i^2` is E over S_t of
    :math:`\frac1S\sum_{i\in S_t}\sigma_i^2` (the printed sum over the random set S).
    v = (1/N) sum_i v_i with v_i >= sup_x ||grad f_i(x) - grad f(x)||^2; mu the RPL constant
    f(x) - f* <= ||grad f(x)||^2 / (2 mu) (the printed f_i(x) on the left is lead 12).
    Preconditions: all N_i equal, s = S < N, K = 1, b_i = N_i, alpha <= 1/L_g, Option 1.

    Parameters
    ----------
    gap0 : float
        Initial optimality gap :math:`f(x^{(0)}) - f^*` (>= 0).
    T : int
        Number of rounds (iterations).
    alpha : float
        Step size (> 0).
    L_g : float
        Geodesic smoothness constant of every :math:`f_{i,j}` (Assumption 5.2).
    mu : float
        Riemannian Polyak-Lojasiewicz constant.
    d : int
        Dimension of the manifold.
    v : float
        Heterogeneity bound :math:`\frac1N\sum_i v_i`, :math:`v_i \ge \sup_x\lVert\operatorname{grad} f_i(x) - \operatorname{grad} f(x)\rVert^2`.
    N_i : array_like of int
        Sample counts of the agents.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    s : int
        Agents per round (the theorem's participation precondition is checked).
    K : int, optional
        Local steps per round (checked against the theorem's precondition).
    b : int or array_like, optional
        Batch sizes; None means full batch (checked against the precondition).
    printed_kappa_1 : bool, optional
        Return the printed (looser) :math:`\kappa_1` instead of the corrected one.

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_5_4_bound"
    gap0 = check_real(where, "gap0 = f(x0) - f*", gap0, allow_zero=True)
    T = check_int(where, "T", T)
    alpha, L_g, mu = check_real(where, "alpha", alpha), check_real(where, "L_g", L_g), check_real(where, "mu", mu)
    d = check_int(where, "d", d)
    v = check_real(where, "v", v, allow_zero=True)
    n, sg = _agents(where, N_i, sigma)
    N = n.size
    S = check_int(where, "s", s)
    if not S < N:
        raise ValueError(f"{where}: precondition s_t = S < N violated (S = {S}, N = {N})")
    if np.any(n != n[0]):
        raise ValueError(f"{where}: precondition N_i = N_j for all agents violated (N_i = {n.astype(int).tolist()})")
    if check_int(where, "K", K) != 1:
        raise ValueError(f"{where}: precondition K = 1 violated (K = {K})")
    if b is not None and np.any(np.asarray(b, dtype=np.float64) != n[0]):
        raise ValueError(f"{where}: precondition b_i = N_i (full batch) violated (b = {b!r}, N_i = {int(n[0])})")
    if alpha > 1.0 / L_g:
        raise ValueError(f"{where}: precondition alpha <= 1/L_g violated (alpha = {alpha}, 1/L_g = {1.0 / L_g})")
    if mu > L_g:
        raise ValueError(f"{where}: RPL constant mu = {mu} exceeds L_g = {L_g} (impossible for an L_g-smooth f)")
    P = 1.0 - 2.0 * mu * alpha + mu * alpha**2 * L_g
    kappa_0 = L_g * alpha * d / (2 * mu * (2 - L_g * alpha))
    kappa_1 = v * kappa_0 if printed_kappa_1 else L_g * alpha * v / (2 * mu * (2 - L_g * alpha))
    PT = P**T
    return PT * gap0 + (1 - PT) * (kappa_0 * float(np.mean(sg**2)) / S + kappa_1 * (N - S) / (S * (N - 1)))


# ---------------------------------------------------------------------------------- Theorem 5.5
def theorem_5_5_bound(gap0, T, K, alpha, beta, L_g, L_f, d, sigma, kappa_min, M, *, s=1):
    r"""Theorem 5.5 of Huang et al. (2024) (nonconvex, K > 1, DP-RSGD, Option 2):

    .. math::
        \mathbb E\|\operatorname{grad}f(\tilde x)\|^2 \le \frac{f(x^{(0)})-f^*}{KT\delta_{\min}} + q_0 q,

    delta_min = alpha (1 - (1 + alpha beta)^(K-1) / beta),
    q_0 = alpha beta (L_g + 2 (1 + alpha beta)^(K-1) zeta) / (2 (beta - (1 + alpha beta)^(K-1))),
    q = L_f^2 + d sigma^2, sigma = max_i sigma_i, zeta = zeta(kappa_min, M).
    Preconditions: s_t = 1, K > 1, beta > 1, alpha < (beta^(1/(K-1)) - 1)/beta (equivalently
    delta_min > 0). The proof's gaps (heterogeneous agents, Option 2 restarts) are in the note.

    Parameters
    ----------
    gap0 : float
        Initial optimality gap :math:`f(x^{(0)}) - f^*` (>= 0).
    T : int
        Number of rounds (iterations).
    K : int
        Local steps per round (checked against the theorem's precondition).
    alpha : float
        Step size (> 0).
    beta : float
        The theorem's parameter :math:`\beta > 1`.
    L_g : float
        Geodesic smoothness constant of every :math:`f_{i,j}` (Assumption 5.2).
    L_f : float
        Geodesic Lipschitz constant of every :math:`f_{i,j}` (Assumption 5.1).
    d : int
        Dimension of the manifold.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    kappa_min : float
        Lower bound of the sectional curvature.
    M : float
        Diameter of the set holding the iterates and the optimum (for :math:`\zeta`).
    s : int, optional
        Agents per round (the theorem's participation precondition is checked).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_5_5_bound"
    gap0 = check_real(where, "gap0 = f(x0) - f*", gap0, allow_zero=True)
    T = check_int(where, "T", T)
    K = check_int(where, "K", K)
    if K < 2:
        raise ValueError(f"{where}: precondition K > 1 violated (K = {K})")
    if check_int(where, "s", s) != 1:
        raise ValueError(f"{where}: precondition s_t = 1 violated (s = {s})")
    alpha, beta = check_real(where, "alpha", alpha), check_real(where, "beta", beta)
    L_g, L_f = check_real(where, "L_g", L_g), check_real(where, "L_f", L_f, allow_zero=True)
    d = check_int(where, "d", d)
    sig = np.asarray(sigma, dtype=np.float64).reshape(-1)
    if sig.size == 0 or np.any(~np.isfinite(sig)) or np.any(sig < 0):
        raise ValueError(f"{where}: sigma must be finite and >= 0 (got {sigma!r})")
    if not beta > 1:
        raise ValueError(f"{where}: precondition beta > 1 violated (beta = {beta})")
    a_max = (beta ** (1.0 / (K - 1)) - 1.0) / beta
    if not alpha < a_max:
        raise ValueError(f"{where}: precondition alpha < (beta^(1/(K-1)) - 1)/beta violated (alpha = {alpha}, bound = {a_max})")
    c1 = (1.0 + alpha * beta) ** (K - 1)
    delta_min = alpha * (1.0 - c1 / beta)
    if not delta_min > 0:  # rounding at the edge of the admissible range
        raise ValueError(f"{where}: delta_min = {delta_min} is not > 0 (alpha too close to its bound {a_max})")
    z = _zeta(kappa_min, M)
    q0 = alpha * beta * (L_g + 2.0 * c1 * z) / (2.0 * (beta - c1))
    q = L_f**2 + d * float(np.max(sig)) ** 2
    return gap0 / (K * T * delta_min) + q0 * q


# ---------------------------------------------------------------------------------- Theorem 5.6
def theorem_5_6_m(N, kappa_min, M) -> int:
    r"""The inner-loop length of Theorem 5.6 of Huang et al. (2024) as printed: m = floor(10 N / (3 zeta^(1/2))).

    Parameters
    ----------
    N : int
        Number of agents.
    kappa_min : float
        Lower bound of the sectional curvature.
    M : float
        Diameter of the set holding the iterates and the optimum (for :math:`\zeta`).

    Returns
    -------
    int
        :math:`m`.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    N = check_int("theorem_5_6_m", "N", N)
    return int(math.floor(10.0 * N / (3.0 * math.sqrt(_zeta(kappa_min, M)))))


def theorem_5_6_bound(gap0, T, K, m, alpha, c, L_g, N, d, sigma, kappa_min, M, *, s=1):
    r"""Theorem 5.6 of Huang et al. (2024) (nonconvex, K > 1, m > 1, DP-RSVRG, Option 2), as printed:

    .. math::
        \mathbb E\|\operatorname{grad}f(\tilde x)\|^2 \le c\,\frac{L_g\zeta^{1/2}}{N^{1/3}KT}(f(x^{(0)})-f^*)
        + \frac{d\sigma^2}{100\,\zeta^{1/2}}\Big(\frac1{N^{2/3}}+\frac1N\Big),

    sigma = max_i sigma_i. Preconditions: s_t = 1, K > 1, m = floor(10 N / (3 zeta^(1/2))) > 1,
    alpha <= 1/(10 L_g N^(2/3) zeta^(1/2)), c > 10 N / (3 m). The constants come from ZJRS16
    Theorem 2 through a universal constant nu that Huang et al. (2024) does not give; see the note for what is
    and is not established.

    Parameters
    ----------
    gap0 : float
        Initial optimality gap :math:`f(x^{(0)}) - f^*` (>= 0).
    T : int
        Number of rounds (iterations).
    K : int
        Local steps per round (checked against the theorem's precondition).
    m : int
        Inner-loop length of DP-RSVRG.
    alpha : float
        Step size (> 0).
    c : float
        The theorem's constant :math:`c > 10N/(3m)`.
    L_g : float
        Geodesic smoothness constant of every :math:`f_{i,j}` (Assumption 5.2).
    N : int
        Number of agents.
    d : int
        Dimension of the manifold.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    kappa_min : float
        Lower bound of the sectional curvature.
    M : float
        Diameter of the set holding the iterates and the optimum (for :math:`\zeta`).
    s : int, optional
        Agents per round (the theorem's participation precondition is checked).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_5_6_bound"
    gap0 = check_real(where, "gap0 = f(x0) - f*", gap0, allow_zero=True)
    T, K, m, N = (check_int(where, k, v) for k, v in (("T", T), ("K", K), ("m", m), ("N", N)))
    if K < 2:
        raise ValueError(f"{where}: precondition K > 1 violated (K = {K})")
    if check_int(where, "s", s) != 1:
        raise ValueError(f"{where}: precondition s_t = 1 violated (s = {s})")
    alpha, c, L_g = check_real(where, "alpha", alpha), check_real(where, "c", c), check_real(where, "L_g", L_g)
    d = check_int(where, "d", d)
    sig = np.asarray(sigma, dtype=np.float64).reshape(-1)
    if sig.size == 0 or np.any(~np.isfinite(sig)) or np.any(sig < 0):
        raise ValueError(f"{where}: sigma must be finite and >= 0 (got {sigma!r})")
    z = _zeta(kappa_min, M)
    m_req = int(math.floor(10.0 * N / (3.0 * math.sqrt(z))))
    if m != m_req:
        raise ValueError(f"{where}: precondition m = floor(10 N / (3 zeta^(1/2))) violated (m = {m}, required {m_req})")
    if not m > 1:
        raise ValueError(f"{where}: precondition m > 1 violated (m = {m})")
    a_max = 1.0 / (10.0 * L_g * N ** (2.0 / 3.0) * math.sqrt(z))
    if alpha > a_max:
        raise ValueError(f"{where}: precondition alpha <= 1/(10 L_g N^(2/3) zeta^(1/2)) violated (alpha = {alpha}, bound = {a_max})")
    if not c > 10.0 * N / (3.0 * m):
        raise ValueError(f"{where}: precondition c > 10 N / (3 m) violated (c = {c}, 10 N/(3 m) = {10.0 * N / (3.0 * m)})")
    sg2 = float(np.max(sig)) ** 2
    return (c * L_g * math.sqrt(z) / (N ** (1.0 / 3.0) * K * T) * gap0
            + d * sg2 / (100.0 * math.sqrt(z)) * (N ** (-2.0 / 3.0) + 1.0 / N))
