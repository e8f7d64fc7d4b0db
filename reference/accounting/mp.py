"""50-digit mpmath twins of the scalar accounting formulas (test oracles; not for production use).

Each function mirrors one float function of :mod:`.paper`, :mod:`.rdp` or
:mod:`.prirfed_accountant` but is written from the formula directly (sums, quadrature), so an
error in the vectorised/log-space float code shows up as a disagreement.
"""

from __future__ import annotations

import mpmath as mp

DPS = 50


def _ctx():
    ctx = mp.mp.clone()
    ctx.dps = DPS
    return ctx


def theorem_4_2(eps, delta, N, s, T, delta_hat):
    r"""Theorem 4.2 of Huang et al. (2024) as printed (eps_tilde outside the square root).

    With :math:`\rho = s/N`, :math:`\tilde\epsilon = \log(1 + \rho(e^{s\epsilon} - 1))` and
    :math:`\tilde\delta = \rho s\delta`: :math:`\epsilon_{\mathrm{tot}} = \min\{T\tilde\epsilon,
    \sqrt{2T\log(1/\hat\delta)}\,\tilde\epsilon + T\tilde\epsilon(e^{\tilde\epsilon} - 1)\}`,
    :math:`\delta_{\mathrm{tot}} = \hat\delta + T\tilde\delta`. Oracle of
    :func:`prirfed.reference.accounting.paper.theorem_4_2`.

    Parameters
    ----------
    eps, delta : float
        Per-step privacy of the local algorithm.
    N : int
        Number of agents.
    s : int
        Agents activated per round.
    T : int
        Rounds.
    delta_hat : float
        The :math:`\hat\delta` of advanced composition.

    Returns
    -------
    eps_total, delta_total : mpmath.mpf
        The theorem's :math:`(\epsilon, \delta)`, at 50 digits.
    """
    c = _ctx()
    eps, delta, delta_hat = c.mpf(eps), c.mpf(delta), c.mpf(delta_hat)
    rho = c.mpf(s) / N
    et = c.log(1 + rho * (c.exp(s * eps) - 1))
    dt = rho * s * delta
    adv = c.sqrt(2 * T * c.log(1 / delta_hat)) * et + T * et * (c.exp(et) - 1)
    return min(T * et, adv), delta_hat + T * dt


def subsampling_lemma_4_1(eps, delta, rho):
    r"""Subsampling as Huang et al. (2024), Lemma 4.1 states it: ``(log(1 + rho (e^eps - 1)), rho delta)``.

    Oracle of :func:`prirfed.reference.accounting.paper.subsampling_lemma_4_1`.

    Parameters
    ----------
    eps, delta : float
        Privacy of the mechanism on the subsample.
    rho : float
        Sampling ratio.

    Returns
    -------
    eps_sub, delta_sub : mpmath.mpf
        :math:`(\log(1 + \rho(e^\epsilon - 1)), \rho\delta)` at 50 digits.
    """
    c = _ctx()
    return c.log(1 + c.mpf(rho) * (c.exp(c.mpf(eps)) - 1)), c.mpf(rho) * c.mpf(delta)


def advanced_composition(eps, k, delta_prime):
    r"""Advanced composition (Dwork, Rothblum and Vadhan (2010)): ``sqrt(2k log(1/delta')) eps + k eps (e^eps - 1)``.

    Oracle of :func:`prirfed.reference.accounting.paper.advanced_composition` (its eps part).

    Parameters
    ----------
    eps : float
        Per-mechanism :math:`\epsilon`.
    k : int
        Number of compositions.
    delta_prime : float
        The slack :math:`\delta'`.

    Returns
    -------
    mpmath.mpf
        The composed :math:`\epsilon` at 50 digits.
    """
    c = _ctx()
    eps = c.mpf(eps)
    return c.sqrt(2 * k * c.log(1 / c.mpf(delta_prime))) * eps + k * eps * (c.exp(eps) - 1)


def gaussian_rdp(alpha, z):
    r"""Gaussian RDP ``alpha / (2 z^2)`` (Mironov (2017), Proposition 7) at 50 digits.

    Parameters
    ----------
    alpha : float
        Order > 1.
    z : float
        Noise multiplier.

    Returns
    -------
    mpmath.mpf
        :math:`\alpha/(2z^2)`.
    """
    c = _ctx()
    return c.mpf(alpha) / (2 * c.mpf(z) ** 2)


def wbk19_gaussian_log_a(alpha: int, q, z):
    r"""Theorem 9 of WBK19 for the Gaussian (eps(inf) = inf), summed term by term.

    Wang, Balle, Kasiviswanathan (2019), Theorem 9, with :math:`\epsilon(j) = j/(2z^2)`: oracle of
    :func:`prirfed.reference.accounting.rdp.wbk19_theorem9_log_a`.

    Parameters
    ----------
    alpha : int
        Integer order >= 2.
    q : float
        Sampling ratio.
    z : float
        Noise multiplier.

    Returns
    -------
    mpmath.mpf
        :math:`\log A(\alpha)` at 50 digits.
    """
    c = _ctx()
    q, z = c.mpf(q), c.mpf(z)
    e = lambda j: c.mpf(j) / (2 * z * z)  # noqa: E731
    A = 1 + q**2 * c.binomial(alpha, 2) * min(4 * (c.exp(e(2)) - 1), 2 * c.exp(e(2)))
    for j in range(3, alpha + 1):
        A += q**j * c.binomial(alpha, j) * c.exp((j - 1) * e(j)) * 2
    return c.log(A)


def poisson_gaussian_log_a_sum(alpha: int, q, z):
    r"""MTZ19 integer-order binomial sum for the Poisson-subsampled Gaussian.

    Mironov, Talwar and Zhang (2019), eq. (3.2):
    :math:`A = \sum_k \binom{\alpha}{k}(1-q)^{\alpha-k}q^k e^{(k^2-k)/(2z^2)}`.

    Parameters
    ----------
    alpha : int
        Integer order >= 2.
    q : float
        Poisson sampling probability.
    z : float
        Noise multiplier.

    Returns
    -------
    mpmath.mpf
        :math:`\log A_\alpha` at 50 digits.
    """
    c = _ctx()
    q, z = c.mpf(q), c.mpf(z)
    return c.log(c.fsum(c.binomial(alpha, k) * (1 - q) ** (alpha - k) * q**k * c.exp((k * k - k) / (2 * z * z)) for k in range(alpha + 1)))


def poisson_gaussian_log_a_quad(alpha, q, z):
    r"""``log E_{x~N(0,z^2)}[(1 - q + q e^{(2x-1)/(2z^2)})^alpha]`` by adaptive quadrature (any alpha).

    The definition of Mironov, Talwar and Zhang (2019), Section 3, integrated directly.

    Parameters
    ----------
    alpha : float
        Order > 1 (fractional allowed).
    q : float
        Poisson sampling probability.
    z : float
        Noise multiplier.

    Returns
    -------
    mpmath.mpf
        :math:`\log A_\alpha` at 50 digits.
    """
    c = _ctx()
    q, z, alpha = c.mpf(q), c.mpf(z), c.mpf(alpha)
    f = lambda x: c.npdf(x, 0, z) * (1 - q + q * c.exp((2 * x - 1) / (2 * z * z))) ** alpha  # noqa: E731
    pts = [-c.inf, -20 * z, -5 * z, 0, c.mpf(1) / 2, 1, 5 * z + alpha, 20 * z + 2 * alpha, c.inf]
    return c.log(c.quad(f, sorted(set(pts), key=lambda t: float(t))))


def activation_rdp(alpha, rho, eps_alpha):
    """Activation bound ``log(1 + rho (e^{(alpha-1) eps} - 1)) / (alpha - 1)`` at 50 digits.

    Joint convexity of the Rényi divergence (Mironov (2017)); oracle of
    :func:`prirfed.reference.accounting.rdp.activation_rdp`.

    Parameters
    ----------
    alpha : float
        Order > 1.
    rho : float
        Activation probability.
    eps_alpha : float
        The inner RDP at ``alpha``.

    Returns
    -------
    mpmath.mpf
        The activated RDP bound.
    """
    c = _ctx()
    a = c.mpf(alpha)
    return c.log(1 + c.mpf(rho) * (c.exp((a - 1) * c.mpf(eps_alpha)) - 1)) / (a - 1)


def mixture_of_gaussians_rdp(alpha, c_shift, d_shift, p):
    """Paired-mixture bound ``log((1-p) e^{g c^2} + p e^{g d^2}) / (alpha - 1)``, ``g = (alpha-1) alpha / 2``.

    Gaussian RDP (Mironov (2017), Proposition 7) combined by joint convexity; oracle of
    :func:`prirfed.reference.accounting.rdp.mixture_of_gaussians_rdp`.

    Parameters
    ----------
    alpha : float
        Order > 1.
    c_shift, d_shift : float
        Common and rare shifts in noise standard deviations.
    p : float
        Weight of the rare component.

    Returns
    -------
    mpmath.mpf
        The RDP bound at 50 digits.
    """
    c = _ctx()
    a, cs, ds, p = c.mpf(alpha), c.mpf(c_shift), c.mpf(d_shift), c.mpf(p)
    g = (a - 1) * a / 2
    return c.log((1 - p) * c.exp(g * cs * cs) + p * c.exp(g * ds * ds)) / (a - 1)


def renyi_gaussian_mixtures_quad(alpha, means_p, means_q, weights, dps=DPS):
    r"""``D_alpha(sum w_l N(mu_l, 1) || sum w_l N(nu_l, 1))`` in one dimension, by quadrature.

    The Rényi divergence of Mironov (2017), Definition 3, integrated directly.

    Parameters
    ----------
    alpha : float
        Order > 1.
    means_p, means_q : sequence of float
        Component means of the two mixtures.
    weights : sequence of float
        Common component weights.
    dps : int, optional
        Working decimal digits (default 50).

    Returns
    -------
    mpmath.mpf
        :math:`D_\alpha(P\|Q)`.
    """
    c = _ctx()
    c.dps = dps
    a = c.mpf(alpha)
    P = lambda x: c.fsum(w * c.npdf(x, m, 1) for w, m in zip(weights, means_p))  # noqa: E731
    Q = lambda x: c.fsum(w * c.npdf(x, m, 1) for w, m in zip(weights, means_q))  # noqa: E731
    lo = min(min(means_p), min(means_q)) - 40
    hi = max(max(means_p), max(means_q)) + 40
    grid = sorted(set([lo] + [c.mpf(m) for m in list(means_p) + list(means_q)] + [hi]))
    val = c.quad(lambda x: P(x) ** a * Q(x) ** (1 - a), [-c.inf] + grid + [c.inf])
    return c.log(val) / (a - 1)


def rdp_to_dp_classical(alpha, rdp, delta):
    r"""Classical conversion ``rdp + log(1/delta)/(alpha-1)`` (Mironov (2017), Proposition 3) at 50 digits.

    Parameters
    ----------
    alpha : float
        Order > 1.
    rdp : float
        RDP at ``alpha``.
    delta : float
        Target :math:`\delta`.

    Returns
    -------
    mpmath.mpf
        :math:`\epsilon`.
    """
    c = _ctx()
    return c.mpf(rdp) + c.log(1 / c.mpf(delta)) / (c.mpf(alpha) - 1)


def rdp_to_dp_improved(alpha, rdp, delta):
    r"""Improved conversion (Canonne, Kamath and Steinke (2020), Proposition 12) at 50 digits.

    :math:`\epsilon = \mathrm{rdp} + \log((\alpha-1)/\alpha) - (\log\delta + \log\alpha)/(\alpha-1)`,
    without the clamp at 0 of :func:`prirfed.reference.accounting.rdp.rdp_to_dp_improved`.

    Parameters
    ----------
    alpha : float
        Order > 1.
    rdp : float
        RDP at ``alpha``.
    delta : float
        Target :math:`\delta`.

    Returns
    -------
    mpmath.mpf
        :math:`\epsilon`.
    """
    c = _ctx()
    a = c.mpf(alpha)
    return c.mpf(rdp) + c.log((a - 1) / a) - (c.log(c.mpf(delta)) + c.log(a)) / (a - 1)


def gaussian_exact_delta(eps, mu):
    r"""Exact privacy profile of the Gaussian mechanism, ``mu = Delta / sigma`` (Balle & Wang 2018).

    Balle and Wang (2018), Theorem 8:
    :math:`\delta(\epsilon) = \Phi(-\epsilon/\mu + \mu/2) - e^\epsilon\Phi(-\epsilon/\mu - \mu/2)`.

    Parameters
    ----------
    eps : float
        :math:`\epsilon \ge 0`.
    mu : float
        :math:`\mu = \Delta/\sigma > 0`.

    Returns
    -------
    mpmath.mpf
        :math:`\delta(\epsilon)` at 50 digits.
    """
    c = _ctx()
    eps, mu = c.mpf(eps), c.mpf(mu)
    return c.ncdf(-eps / mu + mu / 2) - c.exp(eps) * c.ncdf(-eps / mu - mu / 2)


def gaussian_exact_epsilon(delta, mu):
    r"""Root of ``gaussian_exact_delta(eps, mu) = delta`` by 120 bisection steps (profile decreasing in eps).

    Inverts the profile of Balle and Wang (2018), Theorem 8 (:func:`gaussian_exact_delta`).

    Parameters
    ----------
    delta : float
        Target :math:`\delta`.
    mu : float
        :math:`\mu = \Delta/\sigma > 0`.

    Returns
    -------
    mpmath.mpf
        The upper end of the final bracket (:math:`\delta(\epsilon) \le \delta` there).
    """
    c = _ctx()
    lo, hi = c.mpf(0), c.mpf(1)
    while gaussian_exact_delta(hi, mu) > delta:
        hi *= 2
    for _ in range(120):
        mid = (lo + hi) / 2
        if gaussian_exact_delta(mid, mu) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def kov_optimal_delta(eps, delta, k, i):
    r"""Kairouz-Oh-Viswanath (2015/17) Thm 3.3: optimal k-fold composition of (eps, delta).

    Kairouz, Oh and Viswanath (2017), Theorem 3.3: the :math:`k`-fold composition of
    :math:`(\epsilon, \delta)`-DP is :math:`((k - 2i)\epsilon, 1 - (1-\delta)^k(1 - \delta_i))`-DP,
    optimally, with :math:`\delta_i = \sum_{l<i}\binom{k}{l}(e^{(k-l)\epsilon} -
    e^{(k-2i+l)\epsilon})/(1+e^\epsilon)^k`.

    Parameters
    ----------
    eps, delta : float
        Per-mechanism privacy.
    k : int
        Number of compositions.
    i : int
        Index of the point on the optimal curve, ``0 <= i <= k/2``.

    Returns
    -------
    eps_i, delta_i : mpmath.mpf
        The :math:`i`-th point :math:`((k-2i)\epsilon, 1 - (1-\delta)^k(1-\delta_i))`.
    """
    c = _ctx()
    eps, delta = c.mpf(eps), c.mpf(delta)
    di = c.fsum(c.binomial(k, l) * (c.exp((k - l) * eps) - c.exp((k - 2 * i + l) * eps)) for l in range(i)) / (1 + c.exp(eps)) ** k
    return (k - 2 * i) * eps, 1 - (1 - delta) ** k * (1 - di)


def blackbox_exact_delta(eps, delta, rho, T, eps_prime):
    r"""Hockey-stick divergence of the T-fold product of the activated canonical pair, by brute force.

    The canonical :math:`(\epsilon, \delta)` pair of Kairouz, Oh and Viswanath (2017), activated with
    probability :math:`\rho` and composed :math:`T` times; the divergence summed over all outcome
    counts. Oracle of
    :func:`prirfed.reference.accounting.prirfed_accountant.blackbox_exact_delta`.

    Parameters
    ----------
    eps, delta : float
        Per-round privacy of the local algorithm.
    rho : float
        Activation probability.
    T : int
        Rounds.
    eps_prime : float
        The :math:`\epsilon'` at which :math:`\delta(\epsilon')` is evaluated.

    Returns
    -------
    mpmath.mpf
        :math:`\delta(\epsilon')` at 50 digits.
    """
    c = _ctx()
    eps, delta, rho, ep = c.mpf(eps), c.mpf(delta), c.mpf(rho), c.mpf(eps_prime)
    hi = (1 - delta) * c.exp(eps) / (1 + c.exp(eps))
    lo = (1 - delta) / (1 + c.exp(eps))
    ap, am, a0 = rho * hi, rho * lo, 1 - rho
    tot = 1 - (1 - rho * delta) ** T
    for i in range(T + 1):
        for j in range(T + 1 - i):
            k = T - i - j
            A = c.factorial(T) / (c.factorial(i) * c.factorial(j) * c.factorial(k)) * ap**i * am**j * a0**k
            B = c.factorial(T) / (c.factorial(i) * c.factorial(j) * c.factorial(k)) * am**i * ap**j * a0**k
            tot += max(0, A - c.exp(ep) * B)
    return tot


def gaussian_chi_moment(mu, j, dps=400):
    r"""``E[(e^{mu x - mu^2/2} - 1)^j]`` by the alternating forward difference (even j) or Cauchy-Schwarz (odd j).

    The moment :math:`B_j` of Wang, Balle, Kasiviswanathan (2019), Theorem 27, at ``dps`` digits
    (enough to absorb the cancellation); odd ``j`` by the geometric mean of its even neighbours.
    Oracle of :func:`prirfed.reference.accounting.rdp.gaussian_chi_moments`.

    Parameters
    ----------
    mu : float
        Shift :math:`\mu > 0`.
    j : int
        Moment index >= 2.
    dps : int, optional
        Working decimal digits (default 400).

    Returns
    -------
    mpmath.mpf
        :math:`B_j` (even ``j``) or :math:`\sqrt{B_{j-1}B_{j+1}}` (odd ``j``).
    """
    c = _ctx()
    c.dps = dps
    mu = c.mpf(mu)

    def even(k):
        return c.fsum(c.binomial(k, i) * (-1) ** (k - i) * c.exp(mu * mu * i * (i - 1) / 2) for i in range(k + 1))

    return even(j) if j % 2 == 0 else c.sqrt(even(j - 1) * even(j + 1))


def wbk19_gaussian_specific_log_a(alpha: int, q, z, dps=400):
    r"""WBK19's Gaussian-specific without-replacement bound, summed term by term at ``dps`` digits.

    Wang, Balle, Kasiviswanathan (2019), Theorem 27; oracle of
    :func:`prirfed.reference.accounting.rdp.wbk19_gaussian_log_a`.

    Parameters
    ----------
    alpha : int
        Integer order >= 2.
    q : float
        Sampling ratio.
    z : float
        Noise multiplier.
    dps : int, optional
        Working decimal digits (default 400).

    Returns
    -------
    mpmath.mpf
        :math:`\log A(\alpha)`.
    """
    c = _ctx()
    c.dps = dps
    q, z = c.mpf(q), c.mpf(z)
    A = c.mpf(1)
    for j in range(2, alpha + 1):
        A += q**j * c.binomial(alpha, j) * min(4 * gaussian_chi_moment(1 / z, j, dps), 2 * c.exp((j - 1) * c.mpf(j) / (2 * z * z)))
    return c.log(A)
