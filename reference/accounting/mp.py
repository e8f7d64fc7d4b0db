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
    """Theorem 4.2 of Huang et al. (2024) as printed (eps_tilde outside the square root)."""
    c = _ctx()
    eps, delta, delta_hat = c.mpf(eps), c.mpf(delta), c.mpf(delta_hat)
    rho = c.mpf(s) / N
    et = c.log(1 + rho * (c.exp(s * eps) - 1))
    dt = rho * s * delta
    adv = c.sqrt(2 * T * c.log(1 / delta_hat)) * et + T * et * (c.exp(et) - 1)
    return min(T * et, adv), delta_hat + T * dt


def subsampling_lemma_4_1(eps, delta, rho):
    c = _ctx()
    return c.log(1 + c.mpf(rho) * (c.exp(c.mpf(eps)) - 1)), c.mpf(rho) * c.mpf(delta)


def advanced_composition(eps, k, delta_prime):
    c = _ctx()
    eps = c.mpf(eps)
    return c.sqrt(2 * k * c.log(1 / c.mpf(delta_prime))) * eps + k * eps * (c.exp(eps) - 1)


def gaussian_rdp(alpha, z):
    c = _ctx()
    return c.mpf(alpha) / (2 * c.mpf(z) ** 2)


def wbk19_gaussian_log_a(alpha: int, q, z):
    """Theorem 9 of WBK19 for the Gaussian (eps(inf) = inf), summed term by term."""
    c = _ctx()
    q, z = c.mpf(q), c.mpf(z)
    e = lambda j: c.mpf(j) / (2 * z * z)  # noqa: E731
    A = 1 + q**2 * c.binomial(alpha, 2) * min(4 * (c.exp(e(2)) - 1), 2 * c.exp(e(2)))
    for j in range(3, alpha + 1):
        A += q**j * c.binomial(alpha, j) * c.exp((j - 1) * e(j)) * 2
    return c.log(A)


def poisson_gaussian_log_a_sum(alpha: int, q, z):
    """MTZ19 integer-order binomial sum for the Poisson-subsampled Gaussian."""
    c = _ctx()
    q, z = c.mpf(q), c.mpf(z)
    return c.log(c.fsum(c.binomial(alpha, k) * (1 - q) ** (alpha - k) * q**k * c.exp((k * k - k) / (2 * z * z)) for k in range(alpha + 1)))


def poisson_gaussian_log_a_quad(alpha, q, z):
    """``log E_{x~N(0,z^2)}[(1 - q + q e^{(2x-1)/(2z^2)})^alpha]`` by adaptive quadrature (any alpha)."""
    c = _ctx()
    q, z, alpha = c.mpf(q), c.mpf(z), c.mpf(alpha)
    f = lambda x: c.npdf(x, 0, z) * (1 - q + q * c.exp((2 * x - 1) / (2 * z * z))) ** alpha  # noqa: E731
    pts = [-c.inf, -20 * z, -5 * z, 0, c.mpf(1) / 2, 1, 5 * z + alpha, 20 * z + 2 * alpha, c.inf]
    return c.log(c.quad(f, sorted(set(pts), key=lambda t: float(t))))


def activation_rdp(alpha, rho, eps_alpha):
    c = _ctx()
    a = c.mpf(alpha)
    return c.log(1 + c.mpf(rho) * (c.exp((a - 1) * c.mpf(eps_alpha)) - 1)) / (a - 1)


def mixture_of_gaussians_rdp(alpha, c_shift, d_shift, p):
    c = _ctx()
    a, cs, ds, p = c.mpf(alpha), c.mpf(c_shift), c.mpf(d_shift), c.mpf(p)
    g = (a - 1) * a / 2
    return c.log((1 - p) * c.exp(g * cs * cs) + p * c.exp(g * ds * ds)) / (a - 1)


def renyi_gaussian_mixtures_quad(alpha, means_p, means_q, weights, dps=DPS):
    """``D_alpha(sum w_l N(mu_l, 1) || sum w_l N(nu_l, 1))`` in one dimension, by quadrature."""
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
    c = _ctx()
    return c.mpf(rdp) + c.log(1 / c.mpf(delta)) / (c.mpf(alpha) - 1)


def rdp_to_dp_improved(alpha, rdp, delta):
    c = _ctx()
    a = c.mpf(alpha)
    return c.mpf(rdp) + c.log((a - 1) / a) - (c.log(c.mpf(delta)) + c.log(a)) / (a - 1)


def gaussian_exact_delta(eps, mu):
    """Exact privacy profile of the Gaussian mechanism, ``mu = Delta / sigma`` (Balle & Wang 2018)."""
    c = _ctx()
    eps, mu = c.mpf(eps), c.mpf(mu)
    return c.ncdf(-eps / mu + mu / 2) - c.exp(eps) * c.ncdf(-eps / mu - mu / 2)


def gaussian_exact_epsilon(delta, mu):
    """Root of ``gaussian_exact_delta(eps, mu) = delta`` by 200 bisection steps (profile decreasing in eps)."""
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
    """Kairouz-Oh-Viswanath (2015/17) Thm 3.3: k-fold composition of (eps, delta) is
    ``((k - 2i) eps, 1 - (1-delta)^k (1 - delta_i))``-DP, optimally, with
    ``delta_i = sum_{l<i} C(k,l) (e^{(k-l) eps} - e^{(k-2i+l) eps}) / (1+e^eps)^k``."""
    c = _ctx()
    eps, delta = c.mpf(eps), c.mpf(delta)
    di = c.fsum(c.binomial(k, l) * (c.exp((k - l) * eps) - c.exp((k - 2 * i + l) * eps)) for l in range(i)) / (1 + c.exp(eps)) ** k
    return (k - 2 * i) * eps, 1 - (1 - delta) ** k * (1 - di)


def blackbox_exact_delta(eps, delta, rho, T, eps_prime):
    """Hockey-stick divergence of the T-fold product of the activated canonical pair, by brute force."""
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
    """``E[(e^{mu x - mu^2/2} - 1)^j]`` for even ``j`` by the alternating forward difference at ``dps`` digits
    (enough to absorb the cancellation), odd ``j`` by the Cauchy-Schwarz mean of its even neighbours."""
    c = _ctx()
    c.dps = dps
    mu = c.mpf(mu)

    def even(k):
        return c.fsum(c.binomial(k, i) * (-1) ** (k - i) * c.exp(mu * mu * i * (i - 1) / 2) for i in range(k + 1))

    return even(j) if j % 2 == 0 else c.sqrt(even(j - 1) * even(j + 1))


def wbk19_gaussian_specific_log_a(alpha: int, q, z, dps=400):
    """WBK19's Gaussian-specific without-replacement bound, summed term by term at ``dps`` digits."""
    c = _ctx()
    c.dps = dps
    q, z = c.mpf(q), c.mpf(z)
    A = c.mpf(1)
    for j in range(2, alpha + 1):
        A += q**j * c.binomial(alpha, j) * min(4 * gaussian_chi_moment(1 / z, j, dps), 2 * c.exp((j - 1) * c.mpf(j) / (2 * z * z)))
    return c.log(A)
