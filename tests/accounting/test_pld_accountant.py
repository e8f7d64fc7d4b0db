"""PLD accountant: closed forms against mpmath, the discretisation's direction and stated error bound,
the FFT error bound against long-double direct convolution, laws (Hypothesis), refusals, bad input.

Independent truths used here: 50-digit mpmath (closed forms and quadrature of hockey-stick
divergences), exact Gaussian composition (a K-fold Gaussian is one Gaussian), long-double direct
convolution. Peer comparisons (dp-accounting) are in test_peer_pld.py.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prirfed.reference.accounting import mp as mpx
from prirfed.reference.accounting import pld
from prirfed.reference.accounting import prirfed_accountant as pa
from prirfed.reference.accounting.events import ADD_REMOVE, REPLACE_ONE, Activation, Composed, EpsilonDelta, Gaussian, MixtureOfGaussians
from prirfed.reference.accounting.events import PoissonSampled, SampledWithoutReplacement, SelfComposed, WorstCase
from prirfed.reference.accounting.rdp import RdpAccountant


def hockey_mp(P, Q, gamma, lo=-60, hi=60, dps=30):
    """sup_S P(S) - gamma Q(S) = int (p - gamma q)_+ for 1-d densities whose likelihood ratio is
    monotone (one crossing): the crossing by bisection in mpmath, then quadrature of p - gamma q on
    the side where it is positive (no kink inside the integration range)."""
    c = mp.mp.clone()
    c.dps = dps
    g = lambda x: P(x) - gamma * Q(x)  # noqa: E731
    a, b = c.mpf(lo), c.mpf(hi)
    if g(a) > 0 and g(b) > 0 or g(a) <= 0 and g(b) <= 0:
        return c.quad(lambda x: max(g(x), 0), [-c.inf, a, b, c.inf])
    up = g(b) > 0  # positive on the right of the crossing
    for _ in range(200):
        m = (a + b) / 2
        if (g(m) > 0) == up:
            b = m
        else:
            a = m
    x0 = (a + b) / 2
    return c.quad(g, [x0, x0 + 10, c.inf]) if up else c.quad(g, [-c.inf, x0 - 10, x0])


# ------------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("mu", [0.05, 1.0, 4.0])
def test_gaussian_curve_matches_mpmath(mu):
    """Balle and Wang's curve against 50 digits, relative (abs=0: deltas down to 1e-91 are
    compared, which pytest's default absolute 1e-12 would accept whatever their value). The
    evaluation forms delta = Phi(a)(1 - e^x), x = eps + log Phi(b) - log Phi(a): x carries an
    absolute rounding error of a few u (eps + |log Phi(a)| + |log Phi(b)|), which 1 - e^x amplifies
    by e^x / (1 - e^x); the tolerance is 1e-13 plus 4 u times that condition number (at mu = 0.05,
    eps = 1, where x = -2.5e-3 and the logs are about -204, the error is 1.6e-11 against a bound
    of 7.3e-11)."""
    for e in [0.0, 0.3, 1.0, 5.0, 20.0]:
        want = mpx.gaussian_exact_delta(e, mu)
        got = pld.gaussian_delta(e, mu)
        if want > 1e-300:
            with mp.workdps(40):
                la, lb = mp.log(mp.ncdf(mu / 2 - e / mp.mpf(mu))), mp.log(mp.ncdf(-mu / 2 - e / mp.mpf(mu)))
                x = e + lb - la
                cond = float((e + abs(la) + abs(lb)) * mp.exp(x) / -mp.expm1(x))
            assert got == pytest.approx(float(want), rel=1e-13 + 4 * 2.0**-53 * cond, abs=0)


@pytest.mark.parametrize("q", [0.01, 0.1, 0.3, 0.5, 0.9])
@pytest.mark.parametrize("mu", [0.5, 3.0, 10.0])
def test_poisson_add_delta_at_the_end_of_its_support(q, mu):
    """The add direction H_g(N(0,1) || (1-q) N(0,1) + q N(mu,1)) is 0 from eps = -log(1 - q) on; just
    below, S = {x < x_eps} with (1 - q) + q e^{mu x_eps - mu^2/2} = e^-eps, and delta = Phi(x_eps) -
    g ((1 - q) Phi(x_eps) + q Phi(x_eps - mu)), a few ulps. At the end and 1, 2, 8 ulps and 1e-12
    relative below it, against that formula at 50 digits: finite, >= 0 and within 4 u (absolute)
    of it. (One ulp below, e^-eps - (1 - q) rounded to 0 or below and the function returned NaN
    at q = 0.01 and 0.1; a test at the end itself could not see it.)"""
    end = -math.log1p(-q)
    eps = [end, np.nextafter(end, 0), np.nextafter(np.nextafter(end, 0), 0), end - 8 * np.spacing(end), end * (1 - 1e-12)]
    got = pld.poisson_add_delta(np.array(eps), q, mu)
    with mp.workdps(50):
        for e, d in zip(eps, got):
            E, Q, M = mp.mpf(float(e)), mp.mpf(q), mp.mpf(mu)
            r = (mp.exp(-E) - (1 - Q)) / Q
            want = mp.mpf(0) if r <= 0 else (lambda x: mp.ncdf(x) - mp.exp(E) * ((1 - Q) * mp.ncdf(x) + Q * mp.ncdf(x - M)))((mp.log(r) + M * M / 2) / M)
            assert math.isfinite(d) and d >= 0, (e, d)
            assert abs(d - float(want)) <= 4 * 2.0**-53, (e, d, float(want))


def test_binomial_gaussian_delta_adds_the_mass_it_drops():
    """T = 50 activated Gaussian rounds, rho = 0.01, mu = 1, at eps = 100: the exact curve (the whole
    binomial sum at 60 digits) is 6.6e-101, while the weights below 1e-40 that the function drops
    (j >= 27) hold 8.6e-41, documented as added whole (pessimistic). So the result is that mass,
    above the exact value and at most T 1e-40 above it. (Subtracting the dropped mass instead, a
    negative delta here, survived: everywhere else the mass is far below the curve's last bit.)"""
    T, rho, mu, eps = 50, 0.01, 1.0, 100.0
    got = pld.binomial_gaussian_delta(eps, rho, mu, T)
    with mp.workdps(60):
        w = [mp.binomial(T, j) * mp.mpf(rho) ** j * (1 - mp.mpf(rho)) ** (T - j) for j in range(T + 1)]
        m = [mp.sqrt(j) * mu for j in range(T + 1)]
        exact = mp.fsum(w[j] * (mp.ncdf(m[j] / 2 - eps / m[j]) - mp.exp(eps) * mp.ncdf(-m[j] / 2 - eps / m[j])) for j in range(1, T + 1))
        dropped = mp.fsum(x for x in w[1:] if x < mp.exp(-92))
    assert 6.5e-101 < float(exact) < 6.7e-101 and 8.6e-41 < float(dropped) < 8.7e-41
    assert float(exact) <= got <= float(exact) + T * 1e-40
    assert got == pytest.approx(float(dropped), rel=1e-12, abs=0)


def test_error_bound_by_hand_and_of_a_pld_nothing_discretised():
    """error_bound's Hoeffding shift s = n h^2/8 + h sqrt(n log(1/eta) / 2) and eta' = eta + tails +
    2 slack, by hand at h = 0.1, delta = 1e-3 (eta = delta/100 = 1e-5), tails 4e-8, slack 1e-9:
    a PLD built directly has n_round = 0 (documented default: no base loss was discretised), so s = 0;
    with n_round = 4, s = 4 * 0.01 / 8 + 0.1 sqrt(2 log 1e5) = 0.005 + 0.4798525 = 0.4848525."""
    d = pld.DiscretePLD(h=0.1, lo=0, masses=np.array([0.9]), inf=0.1, slack=1e-9, tails=4e-8)
    assert d.n_round == 0
    assert d.error_bound(1e-3) == pytest.approx((0.0, 1e-5 + 4e-8 + 2e-9), rel=1e-14, abs=0)
    d4 = pld.DiscretePLD(h=0.1, lo=0, masses=np.array([0.9]), inf=0.1, slack=1e-9, tails=4e-8, n_round=4)
    assert d4.error_bound(1e-3)[0] == pytest.approx(0.005 + 0.1 * math.sqrt(2 * math.log(1e5)), rel=1e-14, abs=0)
    assert 0.48485 < d4.error_bound(1e-3)[0] < 0.48486


def test_kov_curve_is_the_canonical_pair():
    e0, d0 = 0.7, 1e-3
    A = [d0, (1 - d0) * math.exp(e0) / (1 + math.exp(e0)), (1 - d0) / (1 + math.exp(e0)), 0.0]
    B = [0.0, A[2], A[1], d0]
    for e in [0.0, 0.2, 0.69, 0.7, 2.0]:
        direct = sum(max(a - math.exp(e) * b, 0.0) for a, b in zip(A, B))
        assert pld.kov_delta(e, e0, d0) == pytest.approx(direct, rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("q,mu", [(0.1, 1.0), (0.01, 3.0), (0.5, 0.3)])
def test_poisson_and_subsampled_curves_match_quadrature(q, mu):
    """Remove direction H(mix||N(0,1)) = q delta_G(log(1 + (e^eps - 1)/q)) and add direction
    H(N(0,1)||mix), mix = (1-q) N(0,1) + q N(mu,1), against mpmath quadrature of the divergence."""
    phi = lambda x, m=0.0: mp.npdf(x, m, 1)  # noqa: E731
    mix = lambda x: (1 - q) * phi(x) + q * phi(x, mu)  # noqa: E731
    for e in [0.0, 0.05, 0.5, 2.0]:
        g = math.exp(e)
        rem = float(hockey_mp(mix, phi, g))
        add = float(hockey_mp(phi, mix, g))
        got_rem = float(pld.subsampled_delta(np.array([e]), q, lambda x: pld.gaussian_delta(x, mu))[0])
        got_add = float(pld.poisson_add_delta(np.array([e]), q, mu)[0])
        assert got_rem == pytest.approx(rem, rel=1e-8, abs=1e-14)
        assert got_add == pytest.approx(add, rel=1e-8, abs=1e-14)


def test_binomial_gaussian_is_a_mixture_of_gaussians():
    """T activated Gaussian rounds: sum_j Bin(j; T, rho) delta_G(eps; sqrt(j) mu), against mpmath."""
    rho, mu, T = 0.3, 0.8, 6
    for e in [0.0, 0.5, 2.0]:
        want = mp.fsum(mp.binomial(T, j) * mp.mpf(rho) ** j * (1 - mp.mpf(rho)) ** (T - j) * mpx.gaussian_exact_delta(e, mp.sqrt(j) * mu)
                       for j in range(1, T + 1))
        assert pld.binomial_gaussian_delta(e, rho, mu, T) == pytest.approx(float(want), rel=1e-11, abs=0)


def test_binomial_gaussian_keeps_every_weight_above_1e_40_deep_in_the_tail():
    """The documented cut: only weights below 1e-40 are dropped (their mass added). At T = 10,
    rho = 0.01 the smallest weight is rho^10 = 1e-20, which must be kept: the curve is 2.0e-22 at
    eps = 20 and 1.5e-28 at eps = 25, so adding that weight's whole mass instead (a cut at 1e-20)
    would be off by factors of 50 and 7e7. Against the 50-digit sum of the mixture."""
    rho, mu, T = 0.01, 1.0, 10
    for e in [20.0, 25.0]:
        want = mp.fsum(mp.binomial(T, j) * mp.mpf(rho) ** j * (1 - mp.mpf(rho)) ** (T - j) * mpx.gaussian_exact_delta(e, mp.sqrt(j) * mu)
                       for j in range(1, T + 1))
        assert float(want) < 1e-21
        assert pld.binomial_gaussian_delta(e, rho, mu, T) == pytest.approx(float(want), rel=1e-10, abs=0)


# ------------------------------------------------------------------------------- discretisation


@pytest.mark.parametrize("mu", [0.05, 0.7, 3.0])
def test_connect_the_dots_brackets_the_curve_and_is_a_valid_pair(mu):
    """Pessimistic CTD: curve >= exact everywhere (on and off the grid); optimistic: <= exact; both
    genuine pairs (P-mass 1, Q-mass <= 1); the excess is second order in h (halving h divides it by ~4)."""
    c = pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, mu))
    pairs = {h: (pld.connect_the_dots(c, h).fwd, pld.connect_the_dots(c, h, optimistic=True).fwd) for h in (2e-3, 1e-3)}
    for up, lo in pairs.values():
        for p in (up, lo):
            assert np.all(p.masses >= 0)
            assert p.masses.sum() + p.inf == pytest.approx(1.0, abs=1e-12)
            assert float(np.dot(p.masses, np.exp(-p.losses()))) <= 1 + 1e-12
    worst = {h: 0.0 for h in pairs}
    for e in np.linspace(0, 0.5 * mu * mu + 6 * mu, 1001) + 0.00037:
        exact = pld.gaussian_delta(e, mu)
        for h, (up, lo) in pairs.items():
            assert lo.delta(e) <= exact <= up.delta(e)
            worst[h] = max(worst[h], up.delta(e) - exact)
    assert 3.0 <= worst[2e-3] / worst[1e-3] <= 5.0, worst  # the largest excess shrinks like h^2


@pytest.mark.parametrize("mu", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("h", [1e-2, 0.1])
def test_optimistic_lowering_of_the_first_knot_is_within_its_documented_bound(mu, h):
    """The optimistic discretisation lowers each grid value by at most the interpolation-error bound
    (t_{i+1} - t_i)(s_{i+1} - s_{i-1})/4 of its steps (s the chord slopes, in t = e^eps). At the first
    knot (t = 1) the slope on its left is that of the curve left of t = 1, H_t(P||Q) = 1 - t + t
    H_{1/t}(Q||P) (Zhu, Dong and Wang (2022)), i.e. of the reverse side. Independent truth: that
    bound from the Gaussian's exact curve at 50 digits (mpx.gaussian_exact_delta), and delta(0)
    itself; the lowered delta(0) must lie in [exact - bound, exact]. (Using a left slope off by a
    factor, e.g. the reverse chord times e^h - 1 instead of divided by it, lowers it by about twice
    the bound.)"""
    c = pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, mu))
    lo = pld.connect_the_dots(c, h, optimistic=True).fwd
    with mp.workdps(50):
        d = lambda e: mpx.gaussian_exact_delta(e, mu)  # noqa: E731
        H = mp.mpf(h)
        v0, v1, v2 = d(0), d(H), d(2 * H)
        tm = mp.exp(-H)
        s_left = (v0 - (1 - tm + tm * d(H))) / (1 - tm)  # chord on [e^-h, 1] (the pair is symmetric)
        s_right = (v2 - v1) / (mp.exp(2 * H) - mp.exp(H))  # chord on [e^h, e^2h]
        bound = float(mp.expm1(H) * (s_right - s_left) / 4)
        exact = float(v0)
    got = lo.delta(0.0)
    assert got <= exact
    assert exact - got <= bound * (1 + 1e-9) + 2e-12  # 2e-12: the 1e-12 relative margin on the values


@pytest.mark.parametrize("q", [1e-3, 0.5])
def test_subsampled_delta_of_a_pure_dp_inner_is_the_closed_form_at_large_eps(q):
    """Balle, Barthe and Gaboardi's q h(log(1 + (e^eps - 1)/q)) with the pure eps0-DP curve
    h(x) = (e^eps0 - e^x)_+ / (1 + e^eps0) (KOV, delta0 = 0) is, worked by hand,
    (q e^eps0 - q - e^eps + 1)_+ / (1 + e^eps0): checked at 50 digits for eps from 10 to 40 nats
    with eps0 = 45, across the switch at 30 nats between the two float forms of the argument (both
    must be the same function: a cap of the first form at 15 nats left delta up to e^15 times too
    large on [15, 30))."""
    eps0 = 45.0
    es = np.array([10.0, 14.9, 15.0, 15.1, 20.0, 29.9, 30.0, 30.1, 40.0])
    got = pld.subsampled_delta(es, q, lambda x: pld.kov_delta(x, eps0, 0.0))
    with mp.workdps(50):
        E0 = mp.exp(mp.mpf(eps0))
        want = [max(q * E0 - q - mp.exp(mp.mpf(e)) + 1, 0) / (1 + E0) for e in es]
    for g, w, e in zip(got, want, es):
        assert g == pytest.approx(float(w), rel=1e-12, abs=1e-300), e


@pytest.mark.parametrize("q", [1e-3, 0.5])
def test_subsampled_delta_argument_is_exact_to_rounding_across_its_switch(q):
    """The argument x = log(1 + (e^eps - 1)/q) itself, read through the steep inner curve h(x) = e^-x,
    whose relative change is the absolute change of x: q h(x) = q^2 / (q + e^eps - 1) exactly.
    The pure-DP curve of the test above is flat there (a change of x moves it by e^(x - 45)), so
    it cannot see the last bits of the large-eps form eps - log q + log1p((q - 1) e^-eps): a sign
    flipped in (q - 1) moves x by 2 e^-eps = 1.9e-13 at 30 nats. Tolerance: x is formed with an
    error of a few ulps of x <= 37 (7.1e-15 each), so 2e-14 relative; 50-digit oracle."""
    es = np.array([29.9, 30.0, 30.1, 31.0])
    got = pld.subsampled_delta(es, q, lambda x: np.exp(-x))
    with mp.workdps(50):
        want = [q * q / (q + mp.expm1(mp.mpf(float(e)))) for e in es]
    for g, w, e in zip(got, want, es):
        assert g == pytest.approx(float(w), rel=2e-14, abs=0), e


def test_binomial_gaussian_delta_is_at_most_one():
    """A hockey-stick divergence of probability laws is at most 1, and the docstring promises the cap.
    At rho = 0.99, T = 10000, mu = 10 the binomial weights (from gammaln) sum to 1 + 9e-12 in float64,
    so an uncapped sum exceeds 1 at eps = 0. Bracket: the exact value is at least
    P(j >= 1) (2 Phi(mu/2) - 1) >= 1 - 6e-7 (one active round is a Gaussian of shift mu)."""
    got = pld.binomial_gaussian_delta(np.array([0.0, 1e-9]), 0.99, 10.0, 10000)
    assert np.all(got <= 1.0)
    assert np.all(got >= 1 - 6e-7)


@pytest.mark.parametrize("e0,d0", [(0.08758566734356829, 1e-6), (0.15, 1e-4), (1.2345, 0.0)])
def test_discretisation_of_a_kinked_curve_is_on_the_right_side(e0, d0):
    """Kairouz-Oh-Viswanath curves are piecewise linear with a kink at e^{eps0}, on or off the grid
    (Hypothesis once found the off-grid case where lowering by the chord error alone pushed a knot
    below 0 and the clipped interpolant rose above the curve): checked densely, both orders."""
    c = pld.PrivacyCurve(lambda e: pld.kov_delta(e, e0, d0), inf_f=d0, inf_r=d0)
    up = pld.connect_the_dots(c, 1e-3).fwd
    lo = pld.connect_the_dots(c, 1e-3, optimistic=True).fwd
    for p in (up, lo):
        assert p.masses.sum() + p.inf == pytest.approx(1.0, abs=1e-11) and np.all(p.masses >= 0)  # up to the 1e-12 value margin
    for e in np.linspace(0, e0 + 0.2, 20001):
        exact = pld.kov_delta(e, e0, d0)
        assert lo.delta(e) <= exact + 1e-15 and up.delta(e) >= exact - 1e-15


@pytest.mark.parametrize("q,mu", [(0.3, 1.0), (0.05, 2.0)])
def test_optimistic_discretisation_of_the_poisson_pair_is_below_its_reverse_curve(q, mu):
    """The attainable lower bound must stay below the pair's curve in the reverse order too. For the
    Poisson-subsampled Gaussian pair (P', Q) = ((1 - q) N(0, 1) + q N(mu, 1), N(0, 1)) the reverse
    curve is, by the definition H_g(Q||P') = E_Q[(1 - g P'/Q)_+] (the integrand is positive below
    x* = (log((1/g - 1 + q)/q) + mu^2/2)/mu), Phi(x*) (1 - g (1 - q)) - g q Phi(x* - mu), and 0 for
    g >= 1/(1 - q): evaluated at 50 digits at 400 eps of [0, -log(1 - q)]. (The slope left of g = 1
    that the first step's lowering uses is tested where it matters, on a pair whose first step attains
    the chord-error bound: test_optimistic_first_step_is_exact_where_the_chord_error_bound_is_attained.)"""
    base = pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, mu))
    lo = pld.connect_the_dots(pld._mixture_pair_curve(base, q), 1e-3, optimistic=True)
    end = -math.log1p(-q)
    with mp.workdps(50):
        Q, MU = mp.mpf(q), mp.mpf(mu)

        def rev(e):
            g = mp.exp(mp.mpf(float(e)))
            a = 1 / g - 1 + Q
            if a <= 0:
                return mp.mpf(0)
            x = (mp.log(a / Q) + MU * MU / 2) / MU
            return mp.ncdf(x) * (1 - g * (1 - Q)) - g * Q * mp.ncdf(x - MU)

        for e in np.linspace(0.0, end, 400):
            assert lo.rev.delta(e) <= float(rev(e)) + 1e-15, e


def _hockey(X, Y):
    """The curve eps -> H_{e^eps}(X||Y) = sum_x (X(x) - e^eps Y(x))_+ of a finite pair, by the definition
    (vectorised; e^eps capped at e^700: a finite pair's curve reaches its limit long before, and
    connect_the_dots probes up to 2048 nats)."""
    return lambda e: np.maximum(X[:, None] - np.exp(np.minimum(np.atleast_1d(np.asarray(e, dtype=float)), 700.0))[None, :] * Y[:, None], 0.0).sum(0)


def _first_step_pair(h):
    """A four-point pair (P, Q) built so that the optimistic grid's first step is as bad as a convex curve
    can make it. Likelihood ratios: e^{1.5 h} (point 1: a kink of the forward curve in its second step),
    e^{-h/2} (point 2: a kink of the reverse curve inside its first step), +inf (point 3: P-mass where Q
    has none) and 0 (point 4: Q-mass where P has none, so the reverse curve stays above 0). Q = (0.2,
    0.7, 0, 0.1). Both curves by the definition H_g(X||Y) = sum_x (X(x) - g Y(x))_+."""
    q1, q2, q4 = 0.2, 0.7, 0.1
    p1, p2 = q1 * math.exp(1.5 * h), q2 * math.exp(-0.5 * h)
    P, Q = np.array([p1, p2, 1.0 - p1 - p2, 0.0]), np.array([q1, q2, 0.0, q4])

    return P, Q, _hockey(P, Q), _hockey(Q, P)


@pytest.mark.parametrize("swap", [False, True])
def test_optimistic_first_step_is_exact_where_the_chord_error_bound_is_attained(swap):
    """The optimistic grid lowers each knot by the largest gap a convex curve can leave under the chord
    of a step, (t1 - t0)(s - alpha)(beta - s)/(beta - alpha) with alpha, beta the curve's slopes at the
    step's ends. On the first step of a side, alpha is the slope just left of g = 1, read from the other
    side: H_g(Q||P) = 1 - g + g H_{1/g}(P||Q) for g < 1 gives the slope -1 + H_1 - (the other side's
    slope at 1), and a chord of the other side bounds that slope by convexity. The pair of
    _first_step_pair, h = 0.1, makes the bound exact: the reverse curve (in u = e^eps) has slope -p2 on
    [1, e^{h/2}], then 0 to e^h and beyond (point 4's mass stays), so it is a triangle under the first
    chord; the forward curve is linear on its first step (slope -q1 - q3 = -q1), so the chord there gives
    alpha = -p2 exactly. The lowered first chord must then touch the curve at the kink eps = h/2: at or
    below the definition everywhere on [0, 3h] (1e-15: rounding), and within 1e-12 of it at the kink (the
    values' 1e-12 relative margin). In the swapped pair (Q, P) the roles of the two sides exchange. By
    hand: -1 halved or negated in that slope, or the other side's chord read over two steps (vf[2] for
    vf[1]), left the first chord 3e-3 to 1.3e-2 above the curve at the kink."""
    h = 0.1
    P, Q, fwd, rev = _first_step_pair(h)
    curve = pld.PrivacyCurve(rev, fwd, inf_f=Q[3], inf_r=P[2]) if swap else pld.PrivacyCurve(fwd, rev, inf_f=P[2], inf_r=Q[3])
    lo = pld.connect_the_dots(curve, h, optimistic=True)
    sides = ((lo.fwd, rev), (lo.rev, fwd)) if swap else ((lo.fwd, fwd), (lo.rev, rev))
    for d, exact in sides:
        for e in np.linspace(0.0, 3 * h, 301):
            assert d.delta(e) <= float(exact(e)[0]) + 1e-15, e
    kinked = lo.fwd if swap else lo.rev  # the side whose curve kinks inside its first step
    exact_at_kink = float(rev(h / 2)[0])  # H(Q||P) in either order
    assert exact_at_kink == pytest.approx(Q[3], rel=1e-12, abs=0)  # q2 - e^{h/2} p2 = 0: only point 4's mass is left
    assert kinked.delta(h / 2) >= exact_at_kink - 1e-12


def _two_point_pair(a, b):
    """The pair P = (p1, p2), Q = (q1, q2) with privacy losses log(p1/q1) = a and log(p2/q2) = -b, and
    its two curves by the definition H_g(P||Q) = sum_x (P(x) - g Q(x))_+ and H_g(Q||P) likewise."""
    q1 = -math.expm1(-b) / (math.exp(a) - math.exp(-b))
    P = np.array([math.exp(a) * q1, math.exp(-b) * (1 - q1)])
    Q = np.array([q1, 1 - q1])

    return P, Q, _hockey(P, Q), _hockey(Q, P)


def test_connect_the_dots_recovers_an_asymmetric_pair_in_both_orders():
    """A two-point pair whose losses a = 0.2 and -b = -0.5 lie on the grid h = 0.1: each side of its
    curve is linear in t = e^eps between grid points, so the pessimistic discretisation is the pair
    itself. Forward: P-masses p1 at 0.2 and p2 at -0.5. Reverse (the pair Q, P): Q-masses q1 at -0.2
    and q2 at +0.5. Each order must come from its own side's curve (the reverse order built from the
    forward values was the forward PLD again, and no symmetric-curve test could tell)."""
    P, Q, fwd, rev = _two_point_pair(0.2, 0.5)
    p = pld.connect_the_dots(pld.PrivacyCurve(fwd, rev), 0.1)
    for d, losses, masses in ((p.fwd, [-0.5, 0.2], P[::-1]), (p.rev, [-0.2, 0.5], Q)):
        nz = d.masses > 1e-12
        np.testing.assert_allclose(d.losses()[nz], losses, rtol=0, atol=1e-12)
        np.testing.assert_allclose(d.masses[nz], masses, rtol=1e-11, atol=0)
        assert d.masses.sum() + d.inf == pytest.approx(1.0, abs=1e-11)


def test_connect_the_dots_brackets_an_asymmetric_pair_in_both_orders():
    """The same kind of pair with losses 0.23 and -0.61 off the grid h = 0.07 (the curves' kinks fall
    between grid points): in each order the pessimistic delta is above the definition's and the
    optimistic one below, at 3001 points of [0, 0.8] (the reverse curve is positive up to 0.61, the
    forward one only up to 0.23, so an order built from the other side's values fails here)."""
    _, _, fwd, rev = _two_point_pair(0.23, 0.61)
    c = pld.PrivacyCurve(fwd, rev)
    up, lo = pld.connect_the_dots(c, 0.07), pld.connect_the_dots(c, 0.07, optimistic=True)
    for e in np.linspace(0.0, 0.8, 3001):
        for exact, u, l in ((float(fwd(e)[0]), up.fwd, lo.fwd), (float(rev(e)[0]), up.rev, lo.rev)):
            assert l.delta(e) <= exact + 1e-15 and u.delta(e) >= exact - 1e-15, e


@pytest.mark.parametrize("mu,k", [(0.3, 50), (1.0, 8), (0.05, 400)])
def test_composition_is_bracketed_and_the_stated_error_bound_holds(mu, k):
    """k-fold composition of a discretised Gaussian by FFT (not the closed form): the exact k-fold
    Gaussian (shift sqrt(k) mu) lies between the optimistic and pessimistic eps, and the pessimistic
    eps exceeds it by no more than DiscretePLD.error_bound states."""
    c = pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, mu))
    delta = 1e-5
    up = pld.connect_the_dots(c, 1e-3).fwd.self_compose(k)
    lo = pld.connect_the_dots(c, 1e-3, optimistic=True).fwd.self_compose(k)
    exact = float(mpx.gaussian_exact_epsilon(delta, math.sqrt(k) * mu))
    assert lo.epsilon(delta) <= exact <= up.epsilon(delta)
    s, eta = up.error_bound(delta)
    exact_at = float(mpx.gaussian_exact_epsilon(delta - eta, math.sqrt(k) * mu))
    assert up.epsilon(delta) <= exact_at + s
    assert up.epsilon(delta) - exact <= 1e-3 * exact  # and in practice far tighter than the bound


def _three_piece_bound(e):
    """A curve bound (not convex) with hull vertices at 0, 50 and 760 nats: concave in t = e^eps on
    [0, 50] (0.6 down to 0.3) and on [50, 760] (0.3 down to 0.01), then 0.01 e^-(eps - 760) up to
    770 nats and 0 after."""
    e = np.asarray(e, dtype=float)
    a = 0.6 - 0.3 * np.exp(2 * (np.minimum(e, 50.0) - 50.0))
    b = 0.3 - 0.29 * np.exp(2 * (np.minimum(e, 760.0) - 760.0))
    c = 0.01 * np.exp(760.0 - np.maximum(e, 760.0))
    return np.where(e <= 50, a, np.where(e <= 760, b, np.where(e <= 770, c, 0.0)))


@pytest.mark.parametrize("optimistic", [False, True])
def test_side_hull_fallback_keeps_a_vertex_before_a_chord_of_710_nats(optimistic, monkeypatch):
    """The hull's fallback (Andrew's chain, when 20 sweeps leave it non-convex) compares chords longer
    than 700 nats, whose slopes are scaled by e^-dx (e^dx overflows). The bound above, at h = 0.02,
    needs it: the drop to 0 after 770 nats is concave, and each sweep removes one vertex of the
    0.01 e^-eps piece before it (about log 2 / h = 35 sweeps). Its lower convex hull, by hand: the
    chord from (1, 0.6) to (e^50, 0.3), the chord from there to (e^760, 0.01) (the vertex at 50 is
    convex: the slope after it, about -0.29 e^-760, is above the one before, about -0.3 e^-50), then
    the A/t piece and its tangent to the first zero. So delta(eps) = 0.6 - 0.3 (e^eps - 1)/(e^50 - 1)
    on [0, 50] and 0.3 - 0.29 (e^eps - e^50)/(e^760 - e^50) on [50, 760], both orders of rounding
    (the values' 1e-12 relative margin and, optimistic, the chord-error lowering, zero on straight
    steps). A slope of the 760-nat chord 0 -> 760 scaled by e^+dx instead of e^-dx overflowed to -inf,
    popped the vertex at 50 and answered delta(50) = 0.6: twice the bound's own value, in both orders."""
    seen = []
    real = pld._scaled_slope
    monkeypatch.setattr(pld, "_scaled_slope", lambda dv, dx: seen.append(dx) or real(dv, dx))
    p = pld.connect_the_dots(pld.PrivacyCurve(_three_piece_bound, exact=False), 0.02, optimistic=optimistic).fwd
    assert max(seen) >= 700.0  # the fallback ran and compared a chord longer than 700 nats
    with mp.workdps(30):
        E = lambda x: mp.exp(mp.mpf(x))  # noqa: E731
        hull = {0.0: 0.6, 25.0: 0.6 - 0.3 * (E(25) - 1) / (E(50) - 1), 50.0: 0.3,
                400.0: 0.3 - 0.29 * (E(400) - E(50)) / (E(760) - E(50))}
    for e, want in hull.items():
        assert p.delta(e) == pytest.approx(float(want), rel=2e-12, abs=0), e
    if not optimistic:  # the vertex at 760 (optimistic: lowered by the chord error of the A/t piece after it)
        assert p.delta(760.0) == pytest.approx(0.01, rel=2e-12, abs=0)


def test_connect_the_dots_of_a_curve_still_above_the_tail_at_2048_nats():
    """The grid looks for the point where the curve is within ``tail`` of its limit up to 2048 nats
    (documented in _side_length); a curve still above it there, the bound F(eps) = e^(-eps / 1000) / 2
    (convex in t = e^eps, 0.065 at 2048), gets the whole range, 2048 nats and one step more, and the
    rest of the curve as mass at +inf, F at the last grid point. So at h = 0.1 the pessimistic eps at
    delta = 0.1 is the root of F, 1000 log 5 = 1609.4 nats, to within a step (the chord of a convex
    curve is above it, by at most h |F'| = 5e-6 here), and the grid's last loss is at least 2048.
    A range stopped at the previous probe (1024 nats, where F = 0.18 > 0.1) answered eps = inf."""
    F = lambda e: 0.5 * np.exp(-np.asarray(e, dtype=float) / 1000.0)  # noqa: E731
    d = pld.connect_the_dots(pld.PrivacyCurve(F, exact=False), 0.1).fwd
    assert d.hi * d.h >= 2048.0
    assert d.inf == pytest.approx(float(F(d.hi * d.h)), rel=1e-11, abs=0)  # the curve's value at the last grid point
    want = 1000.0 * math.log(5.0)
    assert want <= d.epsilon(0.1) <= want + 0.1


def test_junction_bridge_refuses_a_hull_vertex_beyond_709_nats_with_its_message():
    """The bridge of a concave junction works in g = e^eps, which overflows float64 beyond 709 nats. A
    bound with a concave junction (0.9 at eps = 0, 0.5 at 1 nat: the chord's slope -0.23 twice is below
    v0 - 1 = -0.1) whose next hull vertex after 1 nat is at 720 (concave in between) reaches that
    vertex while walking the bridge: connect_the_dots refuses with the ValueError that names the loss
    and the way out (accountant='rdp'), not with math.exp's bare OverflowError ('math range error'),
    which a guard at 1418 nats let through."""
    def F(e):
        e = np.asarray(e, dtype=float)
        a = 0.9 - 0.4 * (np.expm1(np.minimum(e, 1.0)) / math.expm1(1.0)) ** 2
        b = 0.5 - 0.3 * np.exp(2 * (np.clip(e, 1.0, 720.0) - 720.0))
        return np.where(e <= 1, a, np.where(e <= 720, b, 0.2 * np.exp(720.0 - np.maximum(e, 720.0))))

    with pytest.raises(ValueError, match=r"^PLD discretisation: the curve's hull has a vertex at privacy loss 720 nats "
                                         r"beyond the junction \(e\^loss overflows float64\).*accountant='rdp' still applies\)$"):
        pld.connect_the_dots(pld.PrivacyCurve(F, exact=False), 0.02)


@pytest.mark.parametrize("optimistic", [False, True])
def test_n_round_counts_the_discretised_losses_of_a_composition(optimistic):
    """n_round is the number of discretised base losses summed in a composition (DiscretePLD's
    documentation): 1 for a discretised curve, k for its k-fold composition, the sum for a product. It
    sets the Hoeffding term of error_bound, s = n h^2 / 8 + h sqrt(n log(1 / eta) / 2), checked by hand
    here at n = 1, 30 and 31 (a discretised curve counted as 0 or 2 rounded losses made that term
    wrong and no test saw it)."""
    h, delta = 1e-3, 1e-5
    d = pld.connect_the_dots(pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, 0.5)), h, optimistic=optimistic).fwd
    k = d.self_compose(30)
    both = k.compose(d)
    for p, n in ((d, 1), (k, 30), (both, 31)):
        assert p.n_round == n
        s, _ = p.error_bound(delta)
        assert s == pytest.approx(n * h * h / 8 + h * math.sqrt(n * math.log(100 / delta) / 2), rel=1e-14, abs=0)


def test_junction_bridge_on_a_concave_junction():
    """Curve bounds whose junction at g = 1 is concave: a Gaussian pair's curve plus 0.2 e^{-3 eps} in
    both orders (slope -0.6 added on each side at g = 1). The bridge gives a valid pair whose curve is
    above the genuine Gaussian pair's curve (the bounds' true object) everywhere, in both orders."""
    G = lambda e: np.asarray(pld.gaussian_delta(e, 1.0))  # noqa: E731
    bump = lambda e: G(e) + 0.2 * np.exp(-3 * np.asarray(e, dtype=float))  # noqa: E731
    c = pld.PrivacyCurve(bump, lambda e: bump(e) * 1.0, exact=False)
    p = pld.connect_the_dots(c, 1e-2)
    v0, sg = float(bump(0.0)), -(0.3085375387259869 + 0.6)
    assert 2 * sg < v0 - 1  # the junction is concave, so the bridge is used
    for d in (p.fwd, p.rev):
        assert np.all(d.masses >= 0)
        assert d.masses.sum() + d.inf == pytest.approx(1.0, abs=1e-9)
        for e in np.arange(0, 6.0, 0.013):
            assert d.delta(e) >= float(G(e)) - 1e-12


def _rr_plus_linear_bump(eps0, beta):
    """The randomized-response pair's curve plus ``beta (1 - e^{eps - eps0})_+`` (same in both orders).

    For ``g = e^eps`` in ``[1, e^{eps0}]`` both terms are linear in ``g``, so each side is a line in ``g``
    and the junction at ``g = 1`` is concave (the bump raises ``H_1`` by ``beta``)."""
    p = math.exp(eps0) / (1 + math.exp(eps0))

    def F(e):
        t = np.exp(np.minimum(np.asarray(e, dtype=float), 700.0))
        return np.maximum(0.0, p - t * (1 - p)) + beta * np.maximum(0.0, 1 - t * math.exp(-eps0))

    return F


@pytest.mark.parametrize("tail", [1e-15, 0.2])
def test_junction_bridge_recovers_randomized_response(tail):
    """Hand computation of the bridge. Let ``m`` be the last grid index where the sides are still
    lines (``n``, the last grid index, if the grid stops before the corner ``eps0``; else ``eps0/h``),
    ``x = e^{mh}``, ``y = F(mh)``. In ``g``: for ``g <= 1`` the curve ``1 - g + g F(log 1/g)`` is the
    line from ``(1/x, 1 - 1/x + y/x)`` to ``(1, F(0))``, for ``g >= 1`` the line from ``(1, F(0))`` to
    ``(x, y)``; left of ``1/x`` it has slope ``-(1 - y)``, right of ``x`` it is flat. The lower convex
    hull drops the concave junction: the chord between the two ends, slope ``-(1 - y)/(x + 1)``. Its
    slope jumps times ``g`` are the P-masses: ``x (1 - y)/(x + 1)`` at loss ``mh``, ``(1 - y)/(x + 1)``
    at ``-mh``, ``y`` at ``+inf`` (randomized response with ``eps0`` when ``y = 0``). ``tail = 0.2``
    stops the grid before the corner, so the bridge ends at the last vertex of both sides."""
    eps0, h = 1.0, 0.1
    F = _rr_plus_linear_bump(eps0, 0.2)
    p = pld.connect_the_dots(pld.PrivacyCurve(F, exact=False), h, tail=tail)
    d = p.fwd
    n = -d.lo
    assert len(d.masses) == 2 * n + 1
    if tail < 1e-3:  # the grid passes the corner (F = 0 after it): randomized response with eps0
        assert n * h > eps0
        m, y = round(eps0 / h), 0.0
    else:  # the grid stops at n < 10, where F is still above 0
        m, y = n, float(F(n * h))
        assert n * h < eps0 and 0.05 < y <= tail
    x = math.exp(m * h)
    want = np.zeros(2 * n + 1)
    want[n - m], want[n + m] = (1 - y) / (x + 1), x * (1 - y) / (x + 1)
    tol = 1e-10  # the 1e-12 relative inflation of the values, and rounding
    np.testing.assert_allclose(d.masses, want, rtol=0, atol=tol)
    assert d.inf == pytest.approx(y, abs=tol)
    for e in np.arange(0.0, n * h + 0.5, 0.037):
        hs = (1 - y) * max(x - math.exp(e), 0.0) / (x + 1) + y
        assert d.delta(e) == pytest.approx(hs, abs=tol)


def test_fft_error_bound_holds():
    """The a posteriori FFT bound (Higham 2002 Sec. 24.1) against long-double direct convolution."""
    rng = np.random.default_rng(7)
    x = rng.random(300) ** 8
    x /= x.sum() * (1 + 1e-7)
    p = pld.DiscretePLD(1e-3, -100, x.copy())
    for k in (3, 20):
        y = p.self_compose(k)
        ref = np.array([1.0], dtype=np.longdouble)
        for _ in range(k):
            ref = np.convolve(ref, x.astype(np.longdouble))
        a0 = y.lo - k * p.lo
        err = np.abs(ref[a0: a0 + len(y.masses)].astype(float) - y.masses).sum()
        assert err <= y.slack
        assert float(ref[:a0].sum() + ref[a0 + len(y.masses):].sum()) <= y.tails  # window tails accounted


_HAVE_EXTENDED = np.finfo(np.longdouble).eps < 2.0**-52  # x87 80-bit long double (x86-64 Linux); float64 elsewhere


@pytest.mark.skipif(not _HAVE_EXTENDED, reason="numpy.longdouble is float64 on this platform: there is no extended pass")
@pytest.mark.parametrize("k", [None, 3])
def test_extended_precision_convolution_and_its_bound_against_50_digits(k):
    """fft_convolve's extended pass (numpy.longdouble, unit roundoff 2^-64): its stated l1 error bound
    (the float64 formula with u = 2^-64, plus 2^-53 ||y||_1 for rounding back to float64) holds against
    the direct convolution at 50 digits (mpmath), and is below the float64 pass's bound by the ratio of
    the unit roundoffs, 2^-11, up to the final rounding term (the reason the pass exists)."""
    rng = np.random.default_rng(11)
    x = rng.random(40) ** 6
    x /= x.sum()
    y2 = rng.random(30)
    y2 /= y2.sum()
    xs = [x] if k is not None else [x, y2]
    n_full = (len(x) - 1) * k + 1 if k is not None else len(x) + len(y2) - 1
    nfft = 128
    got, err = pld.fft_convolve(xs, nfft, power=k, extended=True)
    _, err64 = pld.fft_convolve(xs, nfft, power=k, extended=False)
    with mp.workdps(50):
        a = [mp.mpf(float(v)) for v in x]
        b = a if k is not None else [mp.mpf(float(v)) for v in y2]
        ref = [mp.mpf(1)]
        for f in ([a] * k if k is not None else [a, b]):
            ref = [mp.fsum(ref[i] * f[j - i] for i in range(max(0, j - len(f) + 1), min(j, len(ref) - 1) + 1)) for j in range(len(ref) + len(f) - 1)]
        assert len(ref) == n_full
        l1 = float(mp.fsum(abs(mp.mpf(float(got[j])) - (ref[j] if j < n_full else 0)) for j in range(nfft)))
    assert l1 <= err
    assert err <= err64 * 2.0**-11 * 1.01 + 2.0**-53 * 1.01


def test_fft_convolve_escalates_exactly_above_its_threshold(monkeypatch):
    """The extended pass runs when the float64 bound exceeds FFT_ESCALATE, not when it equals it:
    with the threshold set to a convolution's own float64 bound, the float64 result is returned
    (same bound); one float below it, the extended pass (a smaller bound where longdouble is wider)."""
    x = np.random.default_rng(12).random(500)
    x /= x.sum()
    y64, e64 = pld.fft_convolve([x], 1024, power=4, extended=False)
    monkeypatch.setattr(pld, "FFT_ESCALATE", e64)
    y, e = pld.fft_convolve([x], 1024, power=4)
    assert e == e64 and np.array_equal(y, y64)
    monkeypatch.setattr(pld, "FFT_ESCALATE", math.nextafter(e64, 0.0))
    y, e = pld.fft_convolve([x], 1024, power=4)
    if _HAVE_EXTENDED:
        assert e < e64 / 100  # 2^-11 of it plus 2^-53 for the final rounding
    else:
        assert e == e64
    # asked for, the extended pass runs whatever the float64 bound (here below the threshold again)
    monkeypatch.setattr(pld, "FFT_ESCALATE", 1e-13)
    assert e64 < pld.FFT_ESCALATE
    y, e = pld.fft_convolve([x], 1024, power=4, extended=True)
    assert (e < e64 / 100) if _HAVE_EXTENDED else (e == e64)


@pytest.mark.skipif(not _HAVE_EXTENDED, reason="numpy.longdouble is float64 on this platform")
def test_unit_roundoff_of_the_extended_pass_is_the_x87_format_s():
    """x87 extended precision has a 64-bit significand: machine epsilon 2^-63, unit roundoff (half of
    it, round to nearest) 2^-64, the u that the extended pass's bound uses."""
    assert np.finfo(np.longdouble).nmant == 63
    assert pld._U_EXT == 2.0**-64


def test_poisson_run_at_delta_1e_10_is_finite_and_between_the_peers_bounds():
    """20 rounds of Poisson-subsampled Gaussians (q = 0.01, z = 1/3, add/remove). In float64 the FFT
    error bounds alone (2.9e-10 pessimistic, 4.4e-9 optimistic) exceeded delta = 1e-10, and eps was
    infinite; in extended precision they are below 1e-11. Independent bounds: the attainable lower
    bound of dp-accounting's optimistic PLD of the same pair is below ours, and the RDP accountant's
    value (a different method, Mironov et al.'s conversion) above it; and our attainable lower bound
    is below our upper one."""
    pytest.importorskip("dp_accounting")  # declared in the test extra
    from prirfed.testing import peer_pld as peer

    ev = SelfComposed(PoissonSampled(0.01, Gaussian(1 / 3, ADD_REMOVE)), 20)
    acc = pld.PldAccountant(relation=ADD_REMOVE).compose(ev)
    up, lo = acc.get_epsilon(1e-10), acc.get_epsilon_lower(1e-10)
    assert math.isfinite(up) and lo <= up
    assert up < RdpAccountant(relation=ADD_REMOVE).compose(ev).get_epsilon(1e-10)
    opt = peer.gaussian(1 / 3, pessimistic=False, h=1e-3, q=0.01).self_compose(20)
    assert opt.get_epsilon_for_delta(1e-10) <= up
    if _HAVE_EXTENDED:
        pairs = [r for r in acc._result(False) + acc._result(True) if isinstance(r, pld.PldPair)]
        assert pairs and max(d.slack for r in pairs for d in (r.fwd, r.rev) if d is not None) < 1e-11


def test_window_and_truncation_keep_the_bound_sound():
    """A wide PLD (large eps): the accountant retries on a coarser grid and stays an upper bound of the
    exact Gaussian composition."""
    acc = pld.PldAccountant().compose(SelfComposed(SampledWithoutReplacement(10, 10, Gaussian(0.02)), 1))
    exact = float(mpx.gaussian_exact_epsilon(1e-5, 50.0))
    assert acc.get_epsilon(1e-5) == pytest.approx(exact, rel=1e-10, abs=0)  # q = 1: one Gaussian, exact
    wide = pld.PldAccountant().compose(SelfComposed(Activation(0.5, SampledWithoutReplacement(100, 50, Gaussian(0.05))), 3))
    e = wide.get_epsilon(1e-5)
    assert wide.grid_used > 1e-3
    assert math.isfinite(e) and e >= wide.get_epsilon_lower(1e-5)


# ------------------------------------------------------------------------------- accountant


def test_supports_every_event_and_refuses_what_it_cannot():
    acc = pld.PldAccountant()
    for ev in [Gaussian(1.0), EpsilonDelta(1.0, 1e-5), SampledWithoutReplacement(10, 2, EpsilonDelta(1.0, 1e-6)),
               Activation(0.3, Gaussian(2.0)), MixtureOfGaussians(0.1, 1.0, 0.01, shift_sample=0.9),
               Composed((Gaussian(1.0), Activation(0.5, Gaussian(1.0)))), WorstCase((Gaussian(1.0), Gaussian(2.0)))]:
        assert acc.supports(ev)
    assert not acc.supports(PoissonSampled(0.1, Gaussian(1.0, ADD_REMOVE)))  # add/remove event, replace-one accountant
    assert pld.PldAccountant(relation=ADD_REMOVE).supports(PoissonSampled(0.1, Gaussian(1.0, ADD_REMOVE)))
    assert not pld.PldAccountant(relation=ADD_REMOVE).supports(PoissonSampled(0.1, SelfComposed(Gaussian(1.0, ADD_REMOVE), 2)))
    with pytest.raises(ValueError, match="PldAccountant: not an event"):
        acc.compose("Gaussian(1)")
    with pytest.raises(ValueError, match="PldAccountant: nothing composed yet"):
        pld.PldAccountant().get_epsilon(1e-5)
    for bad in (0.0, -1e-3, math.nan, "1e-3", None, True, 0.5):
        with pytest.raises(ValueError, match="PldAccountant: value_discretization_interval"):
            pld.PldAccountant(bad)
    with pytest.raises(ValueError, match="PldAccountant.get_epsilon: delta must lie in"):
        pld.PldAccountant().compose(Gaussian(1.0)).get_epsilon(1.5)
    with pytest.raises(ValueError, match="PldAccountant.get_delta: eps must be >= 0"):
        pld.PldAccountant().compose(Gaussian(1.0)).get_delta(-1.0)


def test_epsilon_delta_conversions_are_inverse():
    """Beside the independent checks above: delta(eps(d)) <= d and a slightly smaller eps misses d."""
    acc = pld.PldAccountant().compose(pa.prirfed_event(pa.dp_rsgd_event(0.45, 1.0, 60, 600, 3), 100, 5, 50))
    for d in (1e-3, 1e-6):
        e = acc.get_epsilon(d)
        assert acc.get_delta(e) <= d * (1 + 1e-9)
        assert acc.get_delta(e * (1 - 1e-6)) > d


events_strategy = st.one_of(
    st.builds(lambda z, k: SelfComposed(SampledWithoutReplacement(200, 20, Gaussian(z)), k), st.floats(0.6, 5.0), st.integers(1, 20)),
    st.builds(lambda z, r, T: SelfComposed(Activation(r, SelfComposed(SampledWithoutReplacement(100, 10, Gaussian(z)), 2)), T),
              st.floats(0.6, 5.0), st.floats(0.01, 1.0), st.integers(1, 40)),
    st.builds(lambda s, T: SelfComposed(MixtureOfGaussians(0.02 / s, (0.02 + 4) / s, 0.01, shift_sample=4 / s), T), st.floats(2.0, 20.0), st.integers(1, 30)),
    st.builds(lambda e0, r, T: SelfComposed(Activation(r, EpsilonDelta(e0, 1e-6)), T), st.floats(0.05, 1.0), st.floats(0.01, 1.0), st.integers(1, 30)),
)


@settings(max_examples=30)
@given(ev=events_strategy, delta=st.sampled_from([1e-3, 1e-5, 1e-8]))
def test_lower_bound_never_exceeds_upper_bound(ev, delta):
    acc = pld.PldAccountant().compose(ev)
    assert acc.get_epsilon_lower(delta) <= acc.get_epsilon(delta) + 1e-12


@settings(max_examples=10)
@given(z1=st.floats(0.6, 5.0), z2=st.floats(0.6, 5.0), k=st.integers(1, 30))
def test_eps_decreasing_in_noise_up_to_the_discretisation(z1, z2, k):
    lo, hi = sorted((z1, z2))
    ev = lambda z: SelfComposed(SampledWithoutReplacement(300, 30, Gaussian(z)), k)  # noqa: E731
    a, b = pld.PldAccountant().compose(ev(hi)), pld.PldAccountant().compose(ev(lo))
    assert a.get_epsilon(1e-5) <= b.get_epsilon(1e-5) * (1 + 2e-3) + 1e-9


@settings(max_examples=10)
@given(z=st.floats(0.5, 3.0), k=st.integers(1, 60))
def test_pld_is_never_above_rdp_for_subsampled_gaussians(z, k):
    """Both are upper bounds of the same quantity; the PLD of our pair should not lose to the RDP
    conversion (a regression guard, not a theorem: checked over this range)."""
    ev = SelfComposed(SampledWithoutReplacement(1000, 50, Gaussian(z)), k)
    assert pld.PldAccountant().compose(ev).get_epsilon(1e-5) <= RdpAccountant().compose(ev).get_epsilon(1e-5) * (1 + 1e-3)


def test_tiny_noise_lower_bound_is_a_clear_valueerror_and_best_still_bounds():
    """Noise multiplier 0.02 under subsampling and activation: the optimistic curve's hull has a
    vertex near 1700 nats, where e^loss is not a float64. lower_epsilon raised a bare OverflowError
    ("math range error"); it must be a ValueError that says why, and the default upper bound
    (which falls back to RDP when the PLD cannot be formed) must still be a finite number."""
    from prirfed.reference.accounting.accountants import epsilon, lower_epsilon
    from prirfed.reference.accounting.events import Activation, Gaussian, SampledWithoutReplacement

    ev = Activation(0.5, SampledWithoutReplacement(10, 5, Gaussian(0.02)))
    with pytest.raises(ValueError, match="overflows float64"):
        lower_epsilon(ev, 1e-5)
    eps = epsilon(ev, 1e-5)
    assert math.isfinite(eps) and eps > 0


@pytest.mark.parametrize("mu,delta", [(0.05, 1e-5), (0.3, 1e-3), (1.0, 1e-5), (4.0, 1e-6)])
def test_privacy_curve_epsilon_below_and_above_one_against_the_50_digit_inverse(mu, delta):
    """PrivacyCurve.epsilon of the exact Gaussian curve equals the 50-digit bisection of Balle and
    Wang's profile (mpx.gaussian_exact_epsilon), for eps below 1 (mu = 0.05, 0.3: the bracket starts
    at 0; a mutation starting it at 1 survived the area's tests) and above (mu = 4), and is not
    below it beyond rounding (the bisection keeps the upper end of its last bracket)."""
    curve = pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, mu))
    truth = float(mpx.gaussian_exact_epsilon(delta, mu))
    got = curve.epsilon(delta)
    assert got == pytest.approx(truth, rel=1e-9, abs=1e-12)
    assert got >= truth * (1 - 1e-12)


@pytest.mark.parametrize("h", [0.5, 0.3, 0.05])
@pytest.mark.parametrize("tail", [1e-10, 1e-6])
def test_grid_side_is_never_short(h, tail):
    """_side_length's contract ("rounded up, so the range is never short"): at the end of the grid
    the curve is within ``tail`` of its limit. Closed form: delta(e) = inf_mass + e^{-e} is within
    tail from e* = log(1/tail) on, so the grid of n steps of h must reach e* (a mutant that
    rounded down by two steps ended at 23.0 < e* = 23.03 for h = 0.5, tail = 1e-10)."""
    inf_mass = 1e-3
    n = pld._side_length(lambda e: inf_mass + np.exp(-np.asarray(e)), inf_mass, h, tail)
    assert n * h >= math.log(1.0 / tail)
    assert np.exp(-n * h) <= tail
    assert n * h <= math.log(1.0 / tail) * 1.02 + 2 * h  # and not needlessly long (refined to 1/64)


def test_mix_weights_every_error_term_like_the_masses():
    """DiscretePLD.mix(other, w) is the PLD of the labelled mixture w P + (1 - w) P': its masses,
    its mass at +inf and both error allowances (slack, tails) are the same convex combination.
    Hand-computed at w = 0.25: masses [0.25, 0.75 * 0.5 + 0, ...], inf 0.25*0.1 + 0.75*0.2 = 0.175,
    slack 0.25*1e-9 + 0.75*3e-9 = 2.5e-9, tails 0.25*4e-8 + 0.75*8e-8 = 7e-8."""
    a = pld.DiscretePLD(h=0.1, lo=0, masses=np.array([0.9]), inf=0.1, slack=1e-9, tails=4e-8)
    b = pld.DiscretePLD(h=0.1, lo=0, masses=np.array([0.5, 0.3]), inf=0.2, slack=3e-9, tails=8e-8)
    c = a.mix(b, 0.25)
    np.testing.assert_allclose(c.masses, [0.25 * 0.9 + 0.75 * 0.5, 0.75 * 0.3], rtol=1e-15)
    assert c.inf == pytest.approx(0.175, rel=1e-15, abs=0)
    assert c.slack == pytest.approx(2.5e-9, rel=1e-15, abs=0)
    assert c.tails == pytest.approx(7e-8, rel=1e-15, abs=0)


def test_pair_zip_keeps_both_orders_unless_both_pairs_are_symmetric():
    """PldPair.zip composes pairs order by order. Two symmetric pairs give a symmetric pair; a
    symmetric one with an asymmetric one must keep the reverse order (fn(a.fwd, b.rev)): dropping it
    would report only the forward order's delta, an unsound bound when the reverse is larger.
    The function is a labelled tuple, so each order's arguments can be read off."""
    a = pld.PldPair("a")
    b = pld.PldPair("b_fwd", "b_rev")
    fn = lambda x, y: (x, y)  # noqa: E731
    assert a.zip(pld.PldPair("c"), fn) == pld.PldPair(("a", "c"))
    z = a.zip(b, fn)
    assert not z.symmetric
    assert z.fwd == ("a", "b_fwd") and z.rev == ("a", "b_rev")
    z = b.zip(a, fn)
    assert z.fwd == ("b_fwd", "a") and z.rev == ("b_rev", "a")


def test_curve_at_counts_the_mass_at_infinity_like_the_definition():
    """delta(eps) = sum_{l > eps} m_l (1 - e^{eps - l}) + m_inf: on the grid h = 0.5 with losses
    -1, -0.5, 0, 0.5, 1 (masses 0.2, 0.3, 0.1, 0.15, 0.05) and 0.2 at +inf, curve_at and delta agree
    with the sum written out at eps = 0, 0.4, 0.7 and beyond the last loss (only m_inf is left)."""
    d = pld.DiscretePLD(h=0.5, lo=-2, masses=np.array([0.2, 0.3, 0.1, 0.15, 0.05]), inf=0.2)
    losses, masses = [-1.0, -0.5, 0.0, 0.5, 1.0], [0.2, 0.3, 0.1, 0.15, 0.05]
    for eps in (0.0, 0.4, 0.7, 3.0):
        want = sum(m * (1 - math.exp(eps - l)) for l, m in zip(losses, masses) if l > eps) + 0.2
        assert d.delta(eps) == pytest.approx(want, rel=1e-14, abs=0)
        assert d.curve_at([eps])[0] == pytest.approx(want, rel=1e-12, abs=0)


@pytest.mark.parametrize("delta,want", [(0.01, 0.1 + math.log(0.98)), (0.03, 0.1 + math.log(0.94)), (0.047, 0.1 + math.log(0.906))])
def test_epsilon_inside_the_first_grid_step_is_solved_exactly(delta, want):
    """Masses 0.5 at the losses 0 and h = 0.1: for eps in [0, h), delta(eps) = 0.5 (1 - e^{eps - 0.1})
    (the definition written out), so eps(delta) = 0.1 + log(1 - 2 delta): 0.0797973 at delta = 0.01,
    0.0381246 at 0.03, 0.0012840 at 0.047 (delta(0) = 0.0475813). The answer lies in the first grid
    step, where epsilon solves on the step below the first grid point that meets delta (a lookup one
    index off took the last point's E = 0 there and returned h = 0.1: sound but not the exact value,
    and it survived)."""
    d = pld.DiscretePLD(h=0.1, lo=0, masses=np.array([0.5, 0.5]))
    assert d.epsilon(delta) == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert d.delta(d.epsilon(delta)) == pytest.approx(delta, rel=1e-12, abs=0)


def test_is_exact_and_tight_names_the_attained_closed_forms_only():
    """is_exact_and_tight is True where the accountant's curve is the exact curve of a pair some
    mechanism attains: Gaussians composed (a Gaussian of shift sqrt(5) / 1.5) and activated Gaussian
    rounds (the binomial mixture); False for a Poisson-subsampled Gaussian (a discretised PLD, an
    upper bound) and for a composition holding one. Where True, epsilon(accountant="best") is that
    exact value: the closed form's eps at mu = sqrt(5) / 1.5 against the 50-digit oracle."""
    from prirfed.reference.accounting.accountants import epsilon

    gauss5 = SelfComposed(Gaussian(1.5), 5)
    assert pld.PldAccountant().compose(gauss5).is_exact_and_tight() is True
    assert pld.PldAccountant().compose(SelfComposed(Activation(0.2, Gaussian(1.0)), 10)).is_exact_and_tight() is True
    poisson = PoissonSampled(0.1, Gaussian(1.0, ADD_REMOVE))
    assert pld.PldAccountant(relation=ADD_REMOVE).compose(poisson).is_exact_and_tight() is False
    mixed = Composed([Gaussian(1.0, ADD_REMOVE), poisson])
    assert pld.PldAccountant(relation=ADD_REMOVE).compose(mixed).is_exact_and_tight() is False
    want = float(mpx.gaussian_exact_epsilon(1e-5, mp.sqrt(5) / mp.mpf(1.5)))
    assert epsilon(gauss5, 1e-5) == pytest.approx(want, rel=1e-9, abs=0)


def test_subsampled_delta_at_q_one_is_the_inner_curve_itself():
    """Documented: at q = 1 subsampled_delta returns inner(eps) itself. Read through the identity curve,
    the eps it passes on must be the eps given, bit for bit: the general path's log1p(expm1(eps)) / 1
    is eps only to an ulp (0.002392 and 0.003289 come back one ulp off), and a shortcut that was never
    taken survived."""
    eps = np.array([0.0, 0.002392, 0.003289, 0.5, 2.0, 35.0])
    assert np.array_equal(pld.subsampled_delta(eps, 1.0, lambda e: np.asarray(e, dtype=float)), eps)


@pytest.mark.parametrize("pessimistic", [True, False])
def test_delta_and_curve_at_carry_the_slack_and_stay_in_0_1(pessimistic):
    """delta(eps) = sum_{l > eps} m_l (1 - e^{eps - l}) + m_inf, plus the slack when pessimistic and
    minus it when optimistic, clipped to [0, 1] (the documented definition, written out here). On
    the grid h = 0.5 with losses -1 .. 1 (masses 0.2, 0.3, 0.1, 0.15, 0.05), 0.2 at +inf and a slack
    of 1e-3 (large, so that its sign shows), at eps between grid points, on them, at the last loss
    and beyond it; then the cap at 1: mass 0.5 at loss 50 and 0.5 at +inf give 1 + 1e-3 - 1e-22 at
    eps = 0 before the clip. (With slack 0 in every other test, curve_at subtracting the slack
    survived, and so did a cap at 2.)"""
    d = pld.DiscretePLD(h=0.5, lo=-2, masses=np.array([0.2, 0.3, 0.1, 0.15, 0.05]), inf=0.2, slack=1e-3, pessimistic=pessimistic)
    sign = 1.0 if pessimistic else -1.0
    losses, masses = [-1.0, -0.5, 0.0, 0.5, 1.0], [0.2, 0.3, 0.1, 0.15, 0.05]
    eps = [0.0, 0.3, 0.5, 0.7, 1.0, 1.4, 3.0]
    want = [min(1.0, max(0.0, sum(m * (1 - math.exp(e - l)) for l, m in zip(losses, masses) if l > e) + 0.2 + sign * 1e-3)) for e in eps]
    assert [d.delta(e) for e in eps] == pytest.approx(want, rel=1e-13, abs=0)
    assert list(d.curve_at(eps)) == pytest.approx(want, rel=1e-12, abs=0)
    full = pld.DiscretePLD(h=0.5, lo=100, masses=np.array([0.5]), inf=0.5, slack=1e-3, pessimistic=True)
    assert full.delta(0.0) == 1.0 and full.curve_at([0.0])[0] == 1.0


def test_best_epsilon_falls_back_to_rdp_when_the_pld_grid_cannot_hold_the_event():
    """A Poisson-subsampled Gaussian at noise multiplier 0.02, composed 50 times: its privacy loss
    spans more than the PLD accountant's largest grid (it refuses, naming the grid), but RDP bounds
    it; epsilon(accountant="best") returns the RDP bound instead of the PLD's refusal."""
    from prirfed.reference.accounting.accountants import epsilon
    from prirfed.reference.accounting.events import PoissonSampled, SelfComposed
    from prirfed.reference.accounting.rdp import RdpAccountant

    ev = SelfComposed(PoissonSampled(0.5, Gaussian(0.02, ADD_REMOVE)), 50)
    acc = pld.PldAccountant(relation=ADD_REMOVE)
    acc.compose(ev)
    with pytest.raises(ValueError, match="needs more than"):
        acc.get_epsilon(1e-5)
    r = RdpAccountant(relation=ADD_REMOVE)
    r.compose(ev)
    assert epsilon(ev, 1e-5) == pytest.approx(r.get_epsilon(1e-5), rel=1e-12, abs=0)


def test_symmetric_pair_curve_and_negative_eps_refused():
    """PldPair.curve of a symmetric pair (no reverse order) is a symmetric curve whose reverse
    mass at +inf is 0 and whose forward curve is the PLD's delta; the closed-form delta curves
    take eps >= 0 only: eps = -0.5 is refused by name."""
    d = pld.DiscretePLD(h=0.5, lo=-2, masses=np.array([0.2, 0.3, 0.1, 0.15, 0.05]), inf=0.2)
    c = pld.PldPair(d).curve()
    assert c.symmetric and c.inf_r == 0.0 and c.inf_f == 0.2
    assert c.fwd(np.array([0.4]))[0] == pytest.approx(d.delta(0.4), rel=1e-12, abs=0)
    with pytest.raises(ValueError, match="gaussian_delta: eps must be finite and >= 0"):
        pld.gaussian_delta(-0.5, 1.0)


@pytest.mark.parametrize("make,match", [
    (lambda: pld.PldAccountant(relation="user_level"), r"^PldAccountant: unknown relation 'user_level' \(use "),
    (lambda: pld.PldAccountant().compose(Gaussian(1.0, ADD_REMOVE)),
     r"^PldAccountant: event relation 'add_remove' differs from the accountant's 'replace_one'$"),
    (lambda: pld.PldAccountant(relation=ADD_REMOVE).compose(PoissonSampled(0.1, SelfComposed(Gaussian(1.0, ADD_REMOVE), 2))),
     r"^PldAccountant: PoissonSampled is only bounded for a Gaussian inner event \(ZDW22 Thm 11\)$"),
    (lambda: pld.DiscretePLD(1e-3, 0, np.ones(1)).compose(pld.DiscretePLD(2e-3, 0, np.ones(1))),
     r"^DiscretePLD: cannot combine grids h = 0\.001 and 0\.002 \(pessimistic True, True\)$"),
    (lambda: pld.DiscretePLD(1e-3, 0, np.ones(1)).mix(pld.DiscretePLD(1e-3, 0, np.ones(1), pessimistic=False), 0.5),
     r"^DiscretePLD: cannot combine grids h = 0\.001 and 0\.001 \(pessimistic True, False\)$"),
])
def test_pld_refusals_name_the_function_and_the_value(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_pld_accountant_accepts_the_coarsest_grid_and_the_add_remove_relation():
    """h = 0.1 is the documented largest grid step (0.5 is refused above), and add/remove is the
    other relation. A composition of Gaussians is one Gaussian and never discretised, so at any h
    the eps of Gaussian(1) is Balle and Wang's exact one: at 50 digits (mpmath bisection),
    delta(eps) = Phi(1/2 - eps) - e^eps Phi(-1/2 - eps) = 1e-5 at the reported eps (1e-9 relative)."""
    for rel in (REPLACE_ONE, ADD_REMOVE):
        acc = pld.PldAccountant(0.1, relation=rel)
        assert acc.h == 0.1 and acc.relation == rel
        eps = acc.compose(Gaussian(1.0, rel)).get_epsilon(1e-5)
        with mp.workdps(50):
            e = mp.mpf(eps)
            d = mp.ncdf(mp.mpf(1) / 2 - e) - mp.exp(e) * mp.ncdf(-mp.mpf(1) / 2 - e)
        assert abs(d / mp.mpf("1e-5") - 1) < 1e-9


def test_lower_bound_of_a_step_without_a_common_shift_is_zero():
    """The attainable lower bound of a DP-RSVRG step counts its full-gradient Gaussian only; with
    shift_common = 0 that Gaussian pair is two equal laws, whose eps is 0 at every delta (the PLD of
    the identity, not a Gaussian of shift 0, which gaussian_delta refuses). The upper bound still
    sees the rare shift 1: at least the eps of one Gaussian of shift 1 sampled with p = 0.1 is > 0."""
    acc = pld.PldAccountant().compose(MixtureOfGaussians(0.0, 1.0, 0.1))
    assert acc.get_epsilon_lower(1e-5) == 0.0
    assert acc.get_epsilon(1e-5) > 0.0
    # composed with Kairouz-Oh-Viswanath's (1, 1e-6) pair, that identity must sit at loss 0 (not shift
    # every loss): the lower bound is the KOV eps at delta = 0.1, from 1e-6 + (1 - 1e-6)(e - e^eps)/(1 + e)
    # = 0.1 in closed form (kink on the grid, so the optimistic grid is exact up to rounding)
    ev = Composed((MixtureOfGaussians(0.0, 1.0, 0.1), EpsilonDelta(1.0, 1e-6)))
    exact = math.log(math.e - (0.1 - 1e-6) * (1 + math.e) / (1 - 1e-6))
    low = pld.PldAccountant().compose(ev).get_epsilon_lower(0.1)
    assert exact - 1e-9 <= low <= exact


# ------------------------------------------------------------------------------- edges of the curves


_CURVES = [("gaussian_delta", lambda e: pld.gaussian_delta(e, 1.0)), ("kov_delta", lambda e: pld.kov_delta(e, 1.0, 1e-5)),
           ("subsampled_delta", lambda e: pld.subsampled_delta(e, 0.5, lambda x: x)),
           ("poisson_add_delta", lambda e: pld.poisson_add_delta(e, 0.5, 1.0)),
           ("binomial_gaussian_delta", lambda e: pld.binomial_gaussian_delta(e, 0.5, 1.0, 3))]


@pytest.mark.parametrize("name,curve", _CURVES)
@pytest.mark.parametrize("bad", [None, "0.5", True, ["a"], object(), -1e-300, math.nan, math.inf, [0.1, -0.2]])
def test_curves_refuse_an_eps_that_is_not_a_finite_number_at_least_0(name, curve, bad):
    """eps is a privacy loss level >= 0: strings, bools, None, non-numbers (refused by the float
    conversion itself), negatives down to -1e-300, NaN and inf are refused by name."""
    with pytest.raises(ValueError, match=rf"^{name}: eps must be finite and >= 0 \(got "):
        curve(bad)


@pytest.mark.parametrize("mu", [0.3, 2.0])
def test_gaussian_curve_at_eps_0_the_boundary_is_the_total_variation(mu):
    """eps = 0 itself is accepted: H_1 = TV(N(0,1), N(mu,1)) = 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2))."""
    assert float(pld.gaussian_delta(0.0, mu)) == pytest.approx(math.erf(mu / (2 * math.sqrt(2))), rel=1e-14, abs=0)


def test_curve_of_two_orders_is_their_maximum():
    """delta of a pair given in both orders is the larger of the two curves, whichever order it is in:
    here the Gaussian curve at mu = 2 (above the one at mu = 0.5 everywhere), against 50-digit mpmath;
    its eps at 1e-5 likewise."""
    g = lambda mu: lambda e: pld.gaussian_delta(e, mu)  # noqa: E731
    want_eps = float(mpx.gaussian_exact_epsilon(1e-5, 2.0))
    for c in (pld.PrivacyCurve(g(0.5), g(2.0)), pld.PrivacyCurve(g(2.0), g(0.5))):
        for e in (0.0, 0.5, 2.0):
            assert c.delta(e) == pytest.approx(float(mpx.gaussian_exact_delta(e, 2.0)), rel=1e-12, abs=0)
        assert c.epsilon(1e-5) == pytest.approx(want_eps, rel=1e-10, abs=0)


def test_epsilon_of_a_curve_at_its_two_ends():
    """PrivacyCurve.epsilon's early answers. Gaussian mu = 0.1: delta(0) = erf(0.1 / (2 sqrt 2)) =
    0.0398776; a delta above it needs eps = 0, one just below it a small eps (50-digit mpmath).
    (eps0, delta0) = (1, 1e-3) (KOV pair, P-mass delta0 at +inf): below delta0 no eps works (inf); at
    delta0 itself eps0 (delta(eps) = delta0 for every eps >= eps0); above, by hand, delta(eps) =
    delta0 + (1 - delta0)(e^eps0 - e^eps)/(1 + e^eps0), so eps = log(e - (delta - delta0)(1 + e)/(1 - delta0))."""
    a = pld.PldAccountant().compose(Gaussian(10.0))
    tv = math.erf(0.1 / (2 * math.sqrt(2)))
    assert a.get_epsilon(tv * (1 + 1e-9)) == 0.0
    d = tv * (1 - 1e-3)
    assert a.get_epsilon(d) == pytest.approx(float(mpx.gaussian_exact_epsilon(d, 0.1)), rel=1e-9, abs=0)
    b = pld.PldAccountant().compose(EpsilonDelta(1.0, 1e-3))
    assert b.get_epsilon(1e-3 * (1 - 1e-9)) == math.inf
    assert b.get_epsilon(1e-3) == pytest.approx(1.0, rel=1e-12, abs=0)
    assert b.get_epsilon(2e-3) == pytest.approx(math.log(math.e - 1e-3 * (1 + math.e) / (1 - 1e-3)), rel=1e-10, abs=0)


@pytest.mark.parametrize("root", [0.3, 6.5, 1234.5])
def test_epsilon_of_a_monotone_curve_is_the_smallest_float_that_meets_the_target(root):
    """On a curve whose computed values are monotone in eps, PrivacyCurve.epsilon is the smallest
    float64 that meets the target, bit for bit. The curve 0.5 e^{-eps/s} (NumPy's exp, monotone)
    reaches 0.25 at s log 2; the oracle walks the floats from the 50-digit root with nextafter until
    the computed condition flips. Roots below 1, in (4, 8) and in (1024, 2048): three brackets."""
    s = float(mp.mpf(root) / mp.log(2))
    curve = lambda e: 0.5 * np.exp(-np.asarray(e, dtype=float) / s)  # noqa: E731
    ok = lambda e: float(curve(np.atleast_1d(e))[0]) <= 0.25  # noqa: E731
    x = float(mp.mpf(s) * mp.log(2))
    while not ok(x):
        x = float(np.nextafter(x, math.inf))
    while ok(float(np.nextafter(x, 0.0))):
        x = float(np.nextafter(x, 0.0))
    assert pld.PrivacyCurve(curve).epsilon(0.25) == x


@pytest.mark.parametrize("mu,delta", [(0.05, 1e-5), (0.3, 1e-3), (1.0, 1e-5), (4.0, 1e-6)])
def test_epsilon_of_a_curve_is_the_upper_of_two_adjacent_floats_that_straddle_the_target(mu, delta):
    """The contract of PrivacyCurve.epsilon on the exact Gaussian curve, whose computed values are
    not monotone at the scale of an ulp (they cross 1e-5 several times within 40 ulps of the root at
    mu = 0.05): the answer e meets the target, the float just below it does not, and e lies within
    64 ulps of the 50-digit root (mpmath)."""
    c = pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, mu))
    truth = float(mpx.gaussian_exact_epsilon(delta, mu))
    e = c.epsilon(delta)
    assert c.delta(e) <= delta < c.delta(float(np.nextafter(e, 0.0)))
    assert abs(e - truth) <= 64 * np.spacing(truth)


@pytest.mark.parametrize("root,finite", [(69314.718, True), (3e5, True), (5.28e5, False), (7e5, False), (7e6, False)])
def test_epsilon_of_a_curve_gives_up_past_its_bracket(root, finite):
    """A curve 0.5 e^{-eps/s} reaches 0.25 at eps = s log 2: found to 1e-9 when the root is below
    2^19 = 524288 (the bracket is doubled from 1 and stops past 1e6, as documented), inf above."""
    s = root / math.log(2)
    c = pld.PrivacyCurve(lambda e: 0.5 * np.exp(-np.asarray(e, dtype=float) / s))
    got = c.epsilon(0.25)
    assert (got == pytest.approx(root, rel=1e-9, abs=0)) if finite else got == math.inf


def test_lower_bound_of_a_worst_case_is_the_worse_party_and_an_unknown_event_is_refused():
    """WorstCase of two Gaussian parties (z = 2 listed first, z = 1 second): the record is in one
    party's data, so the attained lower bound is the worse party's exact eps, mu = 1 (50-digit mpmath),
    whichever position it has; the upper bound discretises the maximum of the two curves
    pessimistically, so it lies in [exact, exact (1 + 1e-6)]. An event type the accountant does not
    know is refused by name."""
    from prirfed.reference.accounting.events import Event

    exact = float(mpx.gaussian_exact_epsilon(1e-5, 1.0))
    for parties in ((Gaussian(2.0), Gaussian(1.0)), (Gaussian(1.0), Gaussian(2.0))):
        w = pld.PldAccountant().compose(WorstCase(parties))
        assert w.get_epsilon_lower(1e-5) == pytest.approx(exact, rel=1e-9, abs=0)
        assert exact * (1 - 1e-12) <= w.get_epsilon(1e-5) <= exact * (1 + 1e-6)

    class Unknown(Event):
        pass

    assert not pld.PldAccountant().supports(Unknown())
    with pytest.raises(ValueError, match=r"^PldAccountant: cannot bound Unknown$"):
        pld.PldAccountant().compose(Unknown())


def test_optimistic_grid_of_a_kinked_mixture_stays_below_the_curve_next_to_the_kink():
    """A mixture of two randomised-response pairs (eps0 = 0.5003 off the grid, and 1.5), weights 1/2:
    delta(eps) = sum_k w_k max(0, (e^{eps0_k} - e^eps) / (1 + e^{eps0_k})) in closed form. Past the
    first kink the curve is still well above 0 and linear in e^eps, so the chord over the kinked step
    is lowered at both of its ends by the triangle height; lowering only one end leaves the
    interpolant up to 2e-5 above the curve there. The optimistic delta is at or below the exact one
    everywhere, and at most one step's drop below it: at the second kink (on the grid, value 0 after
    it) the step falls back to its right value 0, so the knot at 1.499 loses the whole of
    0.5 (e^1.5 - e^1.499) / (1 + e^1.5) = 4.0858e-4, the largest gap."""

    def rr(e, e0):
        return np.maximum(0.0, (math.exp(e0) - np.exp(np.minimum(e, 50.0))) / (1 + math.exp(e0)))

    def exact(e):
        return 0.5 * rr(e, 0.5003) + 0.5 * rr(e, 1.5)

    lo = pld.connect_the_dots(pld.PrivacyCurve(exact), 1e-3, optimistic=True).fwd
    es = np.concatenate([np.linspace(0.45, 0.55, 10001), np.linspace(1.45, 1.55, 2001), np.linspace(0.0, 1.6, 1601)])
    got = np.array([lo.delta(e) for e in es])
    want = exact(es)
    assert np.all(got <= want + 1e-15), float(np.max(got - want))
    gap = 0.5 * (math.exp(1.5) - math.exp(1.499)) / (1 + math.exp(1.5))
    assert np.all(got >= want - gap * (1 + 1e-9)), float(np.max(want - got))
    assert float(np.max(want - got)) == pytest.approx(gap, rel=1e-6, abs=0)


# ---------------------------------------------------------------------------------------------
# issue 18, coverage gaps of pld.py: each line reached and checked against an independent answer
# ---------------------------------------------------------------------------------------------


def _balle_wang_mp(e, mu):
    """Balle and Wang (2018), Theorem 8, written here in 50-digit mpmath: delta(eps) of the Gaussian
    pair at shift mu is Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)."""
    with mp.workdps(50):
        e, mu = mp.mpf(e), mp.mpf(mu)
        return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)


def _kov_epsilon(e0, d0, delta):
    """eps of the (e0, d0) pair at delta in (d0, delta(0)), by hand from KOV17 Thm 2.1: delta(eps) =
    d0 + (1 - d0)(e^e0 - e^eps)/(1 + e^e0) solved for eps."""
    return math.log(math.exp(e0) - (delta - d0) * (1 + math.exp(e0)) / (1 - d0))


@pytest.mark.parametrize("mu", [0.5, 2.0])
def test_sampling_everything_is_the_inner_curve(mu):
    """q = 1 (every record sampled): subsampled_delta is the inner curve itself, and the add direction
    of the Poisson-subsampled Gaussian, H(N(0,1) || N(mu,1)), is the Gaussian curve (Balle-Wang, 50-digit
    mpmath), including eps = 35 (past the switch of the log1p form at 30)."""
    es = np.array([0.0, 0.3, 2.0, 35.0])
    want = np.array([float(_balle_wang_mp(e, mu)) for e in es])
    got_sub = pld.subsampled_delta(es, 1.0, lambda x: pld.gaussian_delta(x, mu))
    got_add = pld.poisson_add_delta(es, 1.0, mu)
    for got in (got_sub, got_add):
        assert np.allclose(got, want, rtol=1e-10, atol=1e-300), (got, want)


def test_sampling_all_n_records_of_a_non_gaussian_event_is_the_event():
    """SampledWithoutReplacement(20, 20, EpsilonDelta(1, 1e-4)): sampling every record changes nothing,
    so the upper and the attainable lower bound are the (eps0, delta0) pair's eps, by hand (KOV17)."""
    ev = SampledWithoutReplacement(20, 20, EpsilonDelta(1.0, 1e-4))
    want = _kov_epsilon(1.0, 1e-4, 1e-2)
    acc = pld.PldAccountant().compose(ev)
    assert acc.get_epsilon(1e-2) == pytest.approx(want, rel=1e-9, abs=0)
    assert acc.get_epsilon_lower(1e-2) == pytest.approx(want, rel=1e-9, abs=0)


def test_the_empty_composition_releases_nothing():
    """Composed(()) is the identity: eps = 0 at every delta, delta(0) = 0, lower bound 0; composed
    with an (eps0, delta0) = (1, 1e-4) event it leaves that event's eps (by hand, KOV17) unchanged:
    the connect-the-dots grid of the KOV curve (kink at eps0 = 1000 h, on the grid) is exact, so
    both bounds are within 1e-9 relative; a grid point off (1e-3) or a doubled mass would show."""
    acc = pld.PldAccountant().compose(Composed(()))
    assert acc.get_epsilon(1e-5) == 0.0 and acc.get_delta(0.0) == 0.0 and acc.get_epsilon_lower(1e-5) == 0.0
    want = _kov_epsilon(1.0, 1e-4, 1e-2)
    acc = pld.PldAccountant().compose(Composed((Composed(()), EpsilonDelta(1.0, 1e-4))))
    assert acc.get_epsilon(1e-2) == pytest.approx(want, rel=1e-9, abs=0)
    assert acc.get_epsilon_lower(1e-2) == pytest.approx(want, rel=1e-9, abs=0)
    assert acc.get_epsilon_lower(1e-2) <= want * (1 + 1e-12) and acc.get_epsilon(1e-2) >= want * (1 - 1e-12)


def test_lower_bound_of_a_worst_case_inside_a_composition_is_its_first_party():
    """SelfComposed(WorstCase((Gaussian(2), Gaussian(1))), 4): a nested worst case takes its first
    party's attained pair (documented in _value): 4 rounds of mu = 1/2 are one Gaussian of mu = 1, so the
    lower bound is within 1e-5 below its exact eps (Balle-Wang, 50-digit mpmath, bisection here); the
    upper bound is at least the worse party's exact eps (mu = 2)."""
    from scipy.optimize import brentq

    def exact_eps(mu, delta):
        return brentq(lambda e: float(_balle_wang_mp(e, mu)) - delta, 0.0, 100.0, xtol=1e-13, rtol=1e-13)

    ev = SelfComposed(WorstCase((Gaussian(2.0), Gaussian(1.0))), 4)
    first, worse = exact_eps(1.0, 1e-5), exact_eps(2.0, 1e-5)
    acc = pld.PldAccountant().compose(ev)
    assert first * (1 - 1e-5) <= acc.get_epsilon_lower(1e-5) <= first * (1 + 1e-12)
    assert worse * (1 - 1e-12) <= acc.get_epsilon(1e-5) <= worse * (1 + 1e-3)


def test_inner_curve_of_a_sample_bounds_both_orders():
    """_max_curve of an asymmetric pair is the pointwise maximum of its two curves (BBG18's bound of
    a sample needs the inner curve of both orders). No replace-one event gives an asymmetric upper
    curve today (see the comment in _max_curve), so a hand-made pair: fwd = 0.2 e^-eps, rev =
    0.3 e^-2eps, which cross at eps = log 1.5."""
    c = pld.PrivacyCurve(lambda e: 0.2 * np.exp(-np.asarray(e, dtype=float)), lambda e: 0.3 * np.exp(-2 * np.asarray(e, dtype=float)))
    f = pld.PldAccountant()._max_curve(pld._Value(curve=c))
    es = np.array([0.0, 0.2, math.log(1.5), 1.0, 5.0])
    want = np.array([0.3, 0.3 * math.exp(-0.4), 0.2 / 1.5, 0.2 * math.exp(-1.0), 0.2 * math.exp(-5.0)])
    assert np.allclose(f(es), want, rtol=1e-14, atol=0)
    sym = pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, 1.0))
    assert pld.PldAccountant()._max_curve(pld._Value(curve=sym)) is sym.fwd


def test_worst_case_curve_keeps_the_reverse_order_of_asymmetric_parties():
    """_max_of_curves (a WorstCase's upper curve) is the pointwise maximum in each order; it may drop
    the reverse order only when every party is symmetric. Hand-made curves, values by hand:
    a = (0.2 e^-eps, 0.3 e^-2eps), b = (0.1 e^-eps, 0.4 e^-3eps); at eps = 0 the reverse maximum is
    0.4 (b's), above every forward value, so dropping it would understate delta. With one symmetric
    party (a Gaussian, which is its own reverse) the reverse order stays; with only symmetric
    parties the result is symmetric."""
    x = lambda e: np.asarray(e, dtype=float)  # noqa: E731
    a = pld.PrivacyCurve(lambda e: 0.2 * np.exp(-x(e)), lambda e: 0.3 * np.exp(-2 * x(e)))
    b = pld.PrivacyCurve(lambda e: 0.1 * np.exp(-x(e)), lambda e: 0.4 * np.exp(-3 * x(e)))
    g = pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, 1.0))
    es = np.array([0.0, 1.0])
    m = pld._max_of_curves([a, b])
    assert m.rev is not None
    assert np.allclose(m.fwd(es), [0.2, 0.2 * math.exp(-1.0)], rtol=1e-15, atol=0)
    assert np.allclose(m.rev(es), [0.4, max(0.3 * math.exp(-2.0), 0.4 * math.exp(-3.0))], rtol=1e-15, atol=0)
    mixed = pld._max_of_curves([a, g])
    assert mixed.rev is not None
    assert np.allclose(mixed.rev(es), np.maximum([0.3, 0.3 * math.exp(-2.0)], pld.gaussian_delta(es, 1.0)), rtol=1e-15, atol=0)
    assert pld._max_of_curves([g, g]).rev is None


def _kov_composed_epsilon(e0, k, delta):
    """eps of k compositions of an (e0, 0)-DP pair (KOV17 Theorem 3.3, the exact composition), 50-digit
    mpmath: the k-fold loss is (k - 2l) e0 with P-probability C(k, l) e^{(k-l) e0}/(1 + e^e0)^k, so
    delta(eps) = sum_l C(k, l) (e^{(k-l) e0} - e^{eps + l e0})_+ / (1 + e^e0)^k; bisection on [0, k e0]."""
    with mp.workdps(50):
        e0 = mp.mpf(e0)

        def d(eps):
            return mp.fsum(mp.binomial(k, l) * max(mp.exp((k - l) * e0) - mp.exp(eps + l * e0), 0) for l in range(k + 1)) / (1 + mp.exp(e0)) ** k

        lo, hi = mp.mpf(0), k * e0
        for _ in range(120):
            m = (lo + hi) / 2
            lo, hi = (m, hi) if d(m) > delta else (lo, m)
        return float(hi)


def test_a_convolution_too_wide_for_the_grid_is_redone_on_a_coarser_one(monkeypatch):
    """With MAX_GRID lowered to 1024 (the same logic at a small size): each of the two 16-fold
    (0.1, 0)-DP self-compositions fits (3201 points at h = 1e-3, at most 4 MAX_GRID), their
    convolution (6401 points) does not, so the accountant redoes the event on the 4x coarser grid
    (grid_used = 4e-3). The result is still an upper bound of the exact eps of the 32-fold
    composition (KOV17, 50-digit mpmath) and within 1e-6 relative of it (the atoms +-0.1 are on both grids)."""
    monkeypatch.setattr(pld, "MAX_GRID", 2**10)
    half = SelfComposed(EpsilonDelta(0.1, 0.0), 16)
    acc = pld.PldAccountant().compose(Composed((half, half)))
    want = _kov_composed_epsilon(0.1, 32, 1e-5)
    got = acc.get_epsilon(1e-5)
    assert acc.grid_used == pytest.approx(4e-3, rel=1e-12, abs=0)
    assert want * (1 - 1e-12) <= got <= want * (1 + 1e-6)


def test_a_pld_with_every_loss_beyond_the_grid_composes_to_inf():
    """(eps0, delta0) = (7000, 1e-6), composed twice: a side of the grid covers 2048 nats, so every
    P-mass lies at +inf and the discrete PLD has no finite mass. Its self-composition used to crash in
    the Chernoff window (numpy: zero-size array to reduction operation maximum); it is inf, a valid
    upper bound: by hand (KOV17) the loss 14000 has P-mass ((1 - d0) e^e0/(1 + e^e0))^2 > 1 - 3e-6, so
    the true delta(13999) >= (1 - 3e-6)(1 - e^-1) > 0.63 and the true eps at delta = 1e-3 exceeds
    13999. "best" has no RDP bound of it (delta0 > 0) and says inf too; the attainable lower bound is
    finite and below 14000."""
    from prirfed.reference.accounting.accountants import epsilon

    ev = SelfComposed(EpsilonDelta(7000.0, 1e-6), 2)
    acc = pld.PldAccountant().compose(ev)
    assert acc.get_epsilon(1e-3) == math.inf and epsilon(ev, 1e-3, "best") == math.inf
    assert 0.63 < acc.get_delta(13999.0) <= 1.0
    assert 0.0 < acc.get_epsilon_lower(1e-3) < 14000.0


def test_a_pld_without_a_positive_loss_has_delta_0():
    """A discrete PLD whose losses are all negative (-0.3, -0.2, -0.1 nats): (1 - e^{eps - L})_+ = 0 for
    every eps >= 0 > L, so delta(eps) = 0 (P-mass at +inf: none) and eps = 0 at any delta."""
    d = pld.DiscretePLD(0.1, -3, np.array([0.5, 0.3, 0.2]))
    assert d.hi == -1
    assert d.delta(0.0) == 0.0 and d.delta(1.0) == 0.0 and d.epsilon(1e-9) == 0.0


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(masses=[0.5, math.nan]), r"^DiscretePLD: masses must be finite \(got nan at index 1, 1 non-finite in all\)$"),
        (dict(masses=[math.inf, 0.5]), r"^DiscretePLD: masses must be finite \(got inf at index 0, 1 non-finite in all\)$"),
        (dict(masses=[[0.5], [0.5]]), r"^DiscretePLD: masses must be one-dimensional \(got shape \(2, 1\)\)$"),
        (dict(inf=math.nan), r"^DiscretePLD: inf must be finite \(got inf = nan\)$"),
        (dict(slack=math.inf), r"^DiscretePLD: slack must be finite \(got slack = inf\)$"),
        (dict(h=0.0), r"^DiscretePLD: h must be finite and > 0 \(got h = 0\)$"),
        (dict(h=math.nan), r"^DiscretePLD: h must be finite \(got h = nan\)$"),
        (dict(tails="0.1"), r"^DiscretePLD: tails must be a real number \(got '0\.1'\)$"),
        (dict(n_round=-1), r"^DiscretePLD: n_round must be >= 0 \(got n_round = -1, short by 1\)$"),
        (dict(n_round=1.5), r"^DiscretePLD: n_round must be an integer \(got 1\.5\)$"),
    ],
)
def test_discrete_pld_refuses_non_finite_input(kw, match):
    """A PLD built by hand with a NaN mass answered delta = 0 (Python's max(0.0, nan) is 0.0): the
    least private answer from a broken input. Non-finite masses, limit, slack and grid steps are
    refused where the PLD is built, naming the field and the first bad value, and so are a negative
    or fractional count of discretised losses (error_bound took its square root); the valid PLD (masses
    1/2 at losses 0 and 0.1) gives delta(0) = (1/2)(1 - e^-0.1) by hand."""
    base = dict(h=0.1, lo=0, masses=[0.5, 0.5])
    assert pld.DiscretePLD(**base).delta(0.0) == pytest.approx(0.5 * -math.expm1(-0.1), rel=1e-15, abs=0)
    with pytest.raises(ValueError, match=match):
        pld.DiscretePLD(**dict(base, **kw))


@pytest.mark.parametrize("name", ["slack", "tails"])
def test_discrete_pld_refuses_a_negative_error_allowance(name):
    """slack (an l1 bound on the masses' rounding error) and tails (the mass moved by truncations)
    are sizes: a negative one would lower a pessimistic delta below the computed one. A DP-RSVRG step
    that subtracted its split bounds' FFT slack instead of adding it survived every value test (the
    slack is about 1e-13); it is refused where the PLD is built, naming the field and the shortfall."""
    with pytest.raises(ValueError, match=rf"^DiscretePLD: {name} must be >= 0 \(got -1e-13, short by 1e-13\)$"):
        pld.DiscretePLD(0.1, 0, np.array([1.0]), **{name: -1e-13})
    assert getattr(pld.DiscretePLD(0.1, 0, np.array([1.0]), **{name: 0.0}), name) == 0.0


def test_pld_accountant_settings_and_bookkeeping_at_their_edges():
    """The documented range of the grid step, (0, 0.1]: 0.1 is accepted and the next float refused;
    compose's count is at least 1 (0 refused); supports answers the documented bool (False, not a
    falsy None) for an add/remove event on a replace-one accountant; and a result read before a
    further compose is not served again after it (the cache is cleared: T = 1 then T = 2 Gaussians of
    mu = 1 give the exact eps of mu = 1 and then of mu = sqrt(2))."""
    pld.PldAccountant(value_discretization_interval=0.1)
    with pytest.raises(ValueError, match=r"^PldAccountant: value_discretization_interval must be <= 0\.1 "):
        pld.PldAccountant(value_discretization_interval=math.nextafter(0.1, 1.0))
    with pytest.raises(ValueError, match=r"count"):
        pld.PldAccountant().compose(Gaussian(1.0), 0)
    assert pld.PldAccountant().supports(PoissonSampled(0.1, Gaussian(1.0, ADD_REMOVE))) is False
    acc = pld.PldAccountant().compose(Gaussian(1.0))
    one = acc.get_epsilon(1e-5)
    assert one == pytest.approx(float(mpx.gaussian_exact_epsilon(1e-5, 1.0)), rel=1e-9, abs=0)
    acc.compose(Gaussian(1.0))
    assert acc.get_epsilon(1e-5) == pytest.approx(float(mpx.gaussian_exact_epsilon(1e-5, math.sqrt(2.0))), rel=1e-9, abs=0)


@pytest.mark.parametrize("side", ["fwd", "rev"])
def test_connect_the_dots_refuses_a_curve_that_returns_nan(side):
    """A NaN of the reverse curve at eps = 0 vanished (min(vf[0], vr[0]) took the forward value) and
    the pair was built as if the curve were fine. Both sides are now checked where they are sampled,
    naming the side and the first eps with a non-finite value."""
    G = lambda e: np.asarray(pld.gaussian_delta(e, 1.0))  # noqa: E731
    broken = lambda e: np.where(np.asarray(e, dtype=float) == 0.0, math.nan, G(e))  # noqa: E731
    c = pld.PrivacyCurve(broken if side == "fwd" else G, broken if side == "rev" else G, exact=False)
    with pytest.raises(ValueError, match=rf"^connect_the_dots: the curve's {side} returned nan at eps = 0 "):
        pld.connect_the_dots(c, 1e-2)


@pytest.mark.parametrize("optimistic", [False, True])
def test_one_fold_composition_is_the_pld_itself(optimistic):
    """Composing a PLD once is the PLD: no window, no FFT, no error term. Its masses, limit mass,
    slack and delta at every eps are those of the PLD, bit for bit (an FFT round trip would add its
    rounding bound to the slack or the limit mass)."""
    c = pld.PrivacyCurve(lambda e: pld.gaussian_delta(e, 0.7))
    p = pld.connect_the_dots(c, 1e-3, optimistic=optimistic).fwd
    q = p.self_compose(1)
    assert q.lo == p.lo and np.array_equal(q.masses, p.masses)
    assert (q.inf, q.slack, q.tails) == (p.inf, p.slack, p.tails)
    for e in (0.0, 0.1, 0.5, 1.0, 2.0):
        assert q.delta(e) == p.delta(e)


def test_error_bound_by_hand_with_its_documented_default_eta():
    """error_bound(delta) = (n h^2 / 8 + h sqrt(n log(1 / eta) / 2), eta + tails + 2 slack) with the
    documented default eta = delta / 100. By hand at h = 0.01, n_round = 50, delta = 1e-5 (eta = 1e-7),
    tails = 1e-12, slack = 3e-13: s = 50e-4 / 8 + 0.01 sqrt(25 log(1e7)) = 0.000625 + 0.01 * 5 *
    sqrt(16.1181...) = 0.20136...; eta' = 1e-7 + 1e-12 + 6e-13."""
    p = pld.DiscretePLD(0.01, 0, np.array([1.0]), tails=1e-12, slack=3e-13, n_round=50)
    s, eta = p.error_bound(1e-5)
    assert s == pytest.approx(0.000625 + 0.05 * math.sqrt(7 * math.log(10)), rel=1e-14, abs=0)
    assert eta == pytest.approx(1e-7 + 1.6e-12, rel=1e-14, abs=0)
    assert p.error_bound(1e-5, 1e-5 / 100) == (s, eta)


@pytest.mark.parametrize("n,k", [(64, 3), (63, 3), (50, None), (51, None)])
def test_fft_error_bound_sums_its_formula_over_the_full_spectrum(n, k):
    """fft_error_bound reads half the spectrum (rfft) and weighs each frequency by how often it occurs
    in the full one: 1 for the zero frequency, 1 for n/2 when n is even, 2 for the others. Recomputed
    here over all n frequencies of the full complex FFT with the docstring's per-frequency terms (power:
    k e (|X| + e)^(k-1) + 2 k u |X|^k; product: e_a (|B| + e_b) + e_b |A| + u |A B|; plus c u log2(n) |Y|)."""
    rng = np.random.default_rng(n)
    u = 2.0**-53
    c = 8.0 * u * math.log2(n)
    x, y = rng.random(n // 2), rng.random(n // 3)
    X, Y = np.abs(np.fft.fft(x, n)), np.abs(np.fft.fft(y, n))
    if k is not None:
        e = c * x.sum()
        want = np.sum(k * e * (X + e) ** (k - 1) + 2 * k * u * X**k + c * X**k)
        got = pld.fft_error_bound([np.abs(np.fft.rfft(x, n))], [x.sum()], n, power=k)
    else:
        ea, eb = c * x.sum(), c * y.sum()
        want = np.sum(ea * (Y + eb) + eb * X + u * X * Y + c * X * Y)
        got = pld.fft_error_bound([np.abs(np.fft.rfft(x, n)), np.abs(np.fft.rfft(y, n))], [x.sum(), y.sum()], n, power=None)
    assert got == pytest.approx(want, rel=1e-12, abs=0)


@pytest.mark.parametrize("pessimistic", [True, False])
def test_truncate_moves_each_tail_of_at_most_tail_mass_by_hand(pessimistic):
    """TAIL_MASS = 1e-18. Masses (2e-19, 3e-19, 0.25, 0.5, 0.25, 4e-19, 1e-19) at losses (lo + i) h,
    lo = -3: the lower tail is the first two (5e-19 <= 1e-18, adding 0.25 would exceed it), the upper
    tail the last two (5e-19). By hand: the three middle masses are kept, from lo = -1; pessimistic,
    the lower tail joins the first kept loss (0.25 + 5e-19) and the upper tail goes to +inf
    (inf = 5e-19); optimistic, both are dropped. Either way tails = 1e-18 records what moved, and
    kept + inf + dropped is the original mass (a mutant that also kept the first mass of the upper
    tail, counting it twice, survived the accounting tests)."""
    m = np.array([2e-19, 3e-19, 0.25, 0.5, 0.25, 4e-19, 1e-19])
    p = pld.DiscretePLD(0.1, -3, m, pessimistic=pessimistic).truncate()
    assert pld.TAIL_MASS == 1e-18
    assert p.lo == -1 and p.h == 0.1 and p.tails == pytest.approx(1e-18, rel=1e-15, abs=0)
    want = [0.25 + 5e-19, 0.5, 0.25] if pessimistic else [0.25, 0.5, 0.25]
    np.testing.assert_array_equal(p.masses, want)
    assert p.inf == (pytest.approx(5e-19, rel=1e-15, abs=0) if pessimistic else 0.0)
    dropped = 0.0 if pessimistic else p.tails
    assert math.fsum(p.masses) + p.inf + dropped == pytest.approx(math.fsum(m), rel=1e-15, abs=0)


def test_truncate_a_lower_tail_alone_by_hand():
    """Masses (5e-19, 0.5, 0.5) from lo = 0: only the first is a tail (5e-19 <= TAIL_MASS = 1e-18, the
    upper one is 0.5). By hand, pessimistic: lo = 1, masses (0.5 + 5e-19, 0.5), inf 0, tails 5e-19 (a
    mutant that truncated only when both ends had a tail returned the PLD unchanged)."""
    p = pld.DiscretePLD(0.1, 0, np.array([5e-19, 0.5, 0.5])).truncate()
    assert p.lo == 1 and p.inf == 0.0 and p.tails == 5e-19
    np.testing.assert_array_equal(p.masses, [0.5 + 5e-19, 0.5])


def _delta_by_definition(h, lo, m, inf, e):
    """delta(eps) = sum_j m_j (1 - e^{eps - l_j})_+ + P(L = inf), l_j = (lo + j) h: the definition, summed."""
    losses = h * (lo + np.arange(len(m)))
    return float(np.sum(m * np.maximum(0.0, -np.expm1(e - losses)))) + inf


@pytest.mark.parametrize("target", [0.06, 0.08, 0.1])
def test_discrete_pld_epsilon_with_mass_at_infinity_against_the_definition(target):
    """A PLD built by hand, losses -0.2 .. 0.3 on the grid h = 0.1 with masses 0.3, 0.2, 0.15, 0.1,
    0.1, 0.1 and P(L = +inf) = 0.05: delta(eps) = sum_j m_j (1 - e^{eps - l_j})_+ + 0.05 (the
    definition, summed here). The eps returned meets the target and a hair below it does not. (The
    grid search that brackets eps compared D - P(L = inf) with the target instead of D + P(L = inf)
    and answered eps = 0, where delta is 0.104: unsound, and it survived every earlier test.)"""
    h, lo = 0.1, -2
    m = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.1])

    def by_definition(e):
        return _delta_by_definition(h, lo, m, 0.05, e)

    eps = pld.DiscretePLD(h, lo, m, inf=0.05).epsilon(target)
    assert 0 < eps < 0.3
    assert by_definition(eps) <= target * (1 + 1e-12)
    assert by_definition(eps * (1 - 1e-9)) > target


def test_discrete_pld_with_only_positive_losses_against_the_definition():
    """A PLD built by hand whose grid starts above 0 (lo = 2: losses 0.2, 0.3, 0.4 with masses 0.5,
    0.3, 0.2 at h = 0.1): delta(eps) = sum_j m_j (1 - e^{eps - l_j})_+ (the definition, summed here) at
    eps = 0, 0.25 and 0.35, and the eps for delta = 0.05 meets it while a hair below does not. (The
    grid curve copied masses from index max(-1, -lo) instead of max(0, -lo), keeping only the last
    mass when lo > 0, and survived: every tested PLD had a loss at or below 0.)"""
    h, lo = 0.1, 2
    m = np.array([0.5, 0.3, 0.2])

    def by_definition(e):
        return _delta_by_definition(h, lo, m, 0.0, e)

    P = pld.DiscretePLD(h, lo, m)
    for e in (0.0, 0.25, 0.35):
        assert P.delta(e) == pytest.approx(by_definition(e), rel=1e-12, abs=1e-15)
    eps = P.epsilon(0.05)
    assert by_definition(eps) <= 0.05 * (1 + 1e-12) and by_definition(eps * (1 - 1e-9)) > 0.05


def test_compose_of_hand_built_plds_with_mass_at_infinity_against_the_product_pair():
    """The PLD of a product pair: L = L1 + L2 (finite parts convolved, written out here as a double
    sum), P(L = inf) = 1 - (1 - P(L1 = inf))(1 - P(L2 = inf)) = 1 - 0.9 * 0.95 = 0.145, and the
    floating-point allowances add (slack >= 1e-9 + 2e-9, plus the FFT's own bound, below 1e-12 here),
    and so do the truncated tails (4e-8 + 8e-8) and the counts of discretised losses (2 + 3) that
    error_bound reads.
    Checked on the grid h = 0.1 with losses -0.1 .. 0.1 and -0.2 .. 0: masses, mass at infinity and
    delta(eps) against the definition. (1 + P(L1 = inf) in the product, and the slacks subtracted,
    both answered too small a delta, unsound, and survived, as did subtracted tails and counts, which
    shrink error_bound: every composed PLD had no mass at infinity, no slack and no tails.)"""
    a = pld.DiscretePLD(h=0.1, lo=-1, masses=np.array([0.3, 0.4, 0.2]), inf=0.1, slack=1e-9, tails=4e-8, n_round=2)
    b = pld.DiscretePLD(h=0.1, lo=-2, masses=np.array([0.5, 0.25, 0.2]), inf=0.05, slack=2e-9, tails=8e-8, n_round=3)
    c = a.compose(b)
    assert c.n_round == 5
    assert c.tails == pytest.approx(1.2e-7, rel=1e-15, abs=1e-18)
    want = np.zeros(5)
    for i, x in enumerate(a.masses):
        for j, y in enumerate(b.masses):
            want[i + j] += x * y
    assert c.lo == -3
    np.testing.assert_allclose(c.masses, want, rtol=0, atol=1e-15)
    assert c.inf == pytest.approx(0.145, rel=1e-15, abs=0)
    assert 3e-9 <= c.slack <= 3e-9 + 1e-12
    for e in (0.0, 0.05, 0.1):
        d = _delta_by_definition(0.1, -3, want, 0.145, e)
        assert d <= c.delta(e) <= d + 3e-9 + 1e-12


def test_mix_of_plds_on_different_grids_against_the_definition():
    """w P + (1 - w) P' for PLDs starting at different negative indices (losses -0.2 .. 0 and -0.1 ..
    0.1, h = 0.1), by hand at w = 0.3: masses 0.3 * 0.2 = 0.06 at -0.2, 0.3 * 0.3 + 0.7 * 0.6 = 0.51 at
    -0.1, 0.3 * 0.5 + 0.7 * 0.2 = 0.29 at 0 and 0.7 * 0.2 = 0.14 at 0.1; delta(0) = 0.14 (1 - e^-0.1).
    (A window of hi + lo + 1 points instead of hi - lo + 1 survived: every mixed PLD started at 0.)"""
    a = pld.DiscretePLD(h=0.1, lo=-2, masses=np.array([0.2, 0.3, 0.5]))
    b = pld.DiscretePLD(h=0.1, lo=-1, masses=np.array([0.6, 0.2, 0.2]))
    c = a.mix(b, 0.3)
    assert c.lo == -2
    np.testing.assert_allclose(c.masses, [0.06, 0.51, 0.29, 0.14], rtol=1e-15, atol=0)
    assert c.delta(0.0) == pytest.approx(0.14 * -math.expm1(-0.1), rel=1e-14, abs=0)


def test_activation_of_a_pld_with_only_negative_losses_by_hand():
    """(1 - rho) delta_0 + rho P for P with losses -0.3, -0.2, -0.1 (masses 0.5, 0.3, 0.2) and 0.1 at
    +inf, rho = 0.4: masses 0.2, 0.12, 0.08 at -0.3 .. -0.1, 0.6 at loss 0, and 0.04 at +inf, so
    delta(eps) = 0.04 at every eps >= 0. (A window ending at max(hi, -1) instead of max(hi, 0) has no
    room for the mass at loss 0 when hi < 0; it survived: every activated PLD had a loss >= 0.)"""
    p = pld.DiscretePLD(h=0.1, lo=-3, masses=np.array([0.5, 0.3, 0.2]), inf=0.1)
    a = p.activate(0.4)
    assert a.lo == -3
    np.testing.assert_allclose(a.masses, [0.2, 0.12, 0.08, 0.6], rtol=1e-15, atol=0)
    assert a.inf == pytest.approx(0.04, rel=1e-15, abs=0)
    assert a.delta(0.0) == pytest.approx(0.04, rel=1e-15, abs=0)


def _uniform_pld(k):
    """k equal masses 1/k on the grid h = 1e-3, centred on loss 0 (for the grid-size guards)."""
    return pld.DiscretePLD(h=1e-3, lo=-k // 2, masses=np.full(k, 1.0 / k))


def test_compose_refuses_a_grid_beyond_four_max_grid_points_and_not_at_it():
    """compose's guard: a product of n = len(a) + len(b) - 1 points is refused when n > 4 MAX_GRID
    (the accountant then coarsens the grid). At n = 4 MAX_GRID = 262144 it composes (uniform PLDs of
    2^17 and 2^17 + 1 points: total mass 1 up to rounding); at n = 4 MAX_GRID + 1 it refuses."""
    assert pld.MAX_GRID == 2**16
    n1 = 2**17
    c = _uniform_pld(n1).compose(_uniform_pld(n1 + 1))
    assert c.masses.sum() + c.tails == pytest.approx(1.0, rel=1e-9, abs=0)
    with pytest.raises(pld._GridTooLarge):
        _uniform_pld(n1).compose(_uniform_pld(n1 + 2))


def test_self_compose_puts_the_folded_tails_by_rounding_direction():
    """self_compose's window holds the k-fold sum up to TAIL_MASS = 1e-18 per side; the circular
    convolution folds what lies outside onto the window, which changes delta by at most 2 TAIL_MASS
    (its docstring): a pessimistic PLD adds it to the mass at +inf, an optimistic one to the slack it
    subtracts. Checked on masses 0.2, 0.3, 0.3, 0.2 at losses -0.2 .. 0.1, k = 3, no mass at +inf: the
    pessimistic result has inf = 2e-18 exactly, the optimistic one inf = 0 and a slack 2e-18 above the
    pessimistic one (both hold the same FFT bound, > 0), and both record 2e-18 as tails. (A factor 1
    or 3, the tail subtracted from inf or from the optimistic slack, and the FFT bound subtracted, each
    survived: they change delta by 1e-18 to 1e-14, below every value test.)"""
    assert pld.TAIL_MASS == 1e-18

    def cube(pessimistic):
        return pld.DiscretePLD(h=0.1, lo=-2, masses=np.array([0.2, 0.3, 0.3, 0.2]), pessimistic=pessimistic).self_compose(3)

    pes, opt = cube(True), cube(False)
    assert pes.inf == 2e-18 and opt.inf == 0.0
    assert pes.tails == 2e-18 and opt.tails == 2e-18
    assert pes.slack > 0
    assert opt.slack - pes.slack == pytest.approx(2e-18, rel=1e-6, abs=0)


def test_self_compose_refuses_a_window_beyond_four_max_grid_points_and_not_below():
    """self_compose's guard: refused when its window (here the whole support of the 2-fold sum of a
    uniform PLD, 2 L - 1 points) exceeds 4 MAX_GRID = 262144 points. L = 114688 gives 229375 points
    (3.5 MAX_GRID): composed, total mass 1 up to rounding; L = 131073 gives 262145: refused."""
    c = _uniform_pld(114688).self_compose(2)
    assert c.masses.sum() + c.inf == pytest.approx(1.0, rel=1e-9, abs=0)
    with pytest.raises(pld._GridTooLarge):
        _uniform_pld(131073).self_compose(2)


@pytest.mark.parametrize(
    "masses,inf,lo,kept,inf_after,tails",
    [
        # one upper point alone: its 5e-19 goes to +inf (pessimistic), on top of inf = 0.6
        ([0.5, 0.5, 5e-19], 0.0, 0, [0.5, 0.5], 5e-19, 5e-19),
        ([0.2, 0.2, 5e-19], 0.6, 0, [0.2, 0.2], 0.6 + 5e-19, 5e-19),
        # one point kept between a lower and an upper tail: lo moves to 1, both tails of 4e-19 move
        ([4e-19, 1.0 - 8e-19, 4e-19], 0.0, 1, [1.0 - 4e-19], 4e-19, 8e-19),
    ],
)
def test_truncate_an_upper_point_alone_and_down_to_one_point_by_hand(masses, inf, lo, kept, inf_after, tails):
    """Pessimistic truncation by hand (TAIL_MASS = 1e-18): a single upper point of 5e-19 goes to +inf,
    adding to a mass at +inf already there (0.6: the sum must not be capped below 1); masses (4e-19,
    1 - 8e-19, 4e-19) keep their middle point alone, the lower tail joining it and the upper going to
    +inf. (Dropping a lone upper point instead of moving it, capping inf at 0.5, and keeping all three
    points when one remains each survived: every tested tail had two points and no mass at +inf.)"""
    p = pld.DiscretePLD(0.1, 0, np.array(masses), inf=inf).truncate()
    assert p.lo == lo
    np.testing.assert_allclose(p.masses, kept, rtol=1e-15, atol=0)
    assert p.inf == pytest.approx(inf_after, rel=1e-15, abs=0)
    assert p.tails == pytest.approx(tails, rel=1e-15, abs=0)
