"""Calibration of the (tangent) Gaussian mechanism: 001 Proposition 2 (classical, eps < 1) and
the analytic Gaussian mechanism (Balle & Wang 2018), against mpmath at 50 digits and against
dp-accounting (a peer implementation, test dependency)."""

import math

import mpmath as mp
import pytest
from dp_accounting import gaussian_mechanism as peer_gm
from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference import mechanisms as R

log_eps = st.floats(math.log(1e-3), math.log(30.0))
log_mu = st.floats(math.log(1e-2), math.log(20.0))
eps_below_1 = st.floats(1e-3, 0.999)
deltas = st.floats(1e-12, 0.5)
sens = st.floats(1e-3, 1e3)


def mp_delta(eps, sigma, Delta):
    """The same formula at 50 digits: Phi(D/(2s) - e s/D) - e^e Phi(-D/(2s) - e s/D)."""
    with mp.workdps(50):
        eps, s, D = mp.mpf(eps), mp.mpf(sigma), mp.mpf(Delta)
        return +(mp.ncdf(D / (2 * s) - eps * s / D) - mp.exp(eps) * mp.ncdf(-D / (2 * s) - eps * s / D))


# ---------------------------------------------------------------------------- exact delta(eps)
@given(le=log_eps, lm=log_mu, Delta=sens)
def test_gaussian_delta_matches_mpmath(le, lm, Delta):
    """Relative error <= 1e-9 against the 50-digit evaluation wherever delta >= 1e-200 (over
    eps in [1e-3, 30], Delta/sigma in [1e-2, 20]; the subtraction loses at most ~1e-10 there)."""
    eps, mu = math.exp(le), math.exp(lm)
    sigma = Delta / mu
    want = mp_delta(eps, sigma, Delta)
    got = R.gaussian_delta(eps, sigma, Delta)
    if want > mp.mpf("1e-200"):
        assert abs(got - want) <= 1e-9 * want, (got, want)
    else:
        assert 0.0 <= got < 1e-190


@given(le=st.floats(math.log(1e-2), math.log(10.0)), lm=st.floats(math.log(0.05), math.log(5.0)))
def test_gaussian_delta_matches_dp_accounting_pld(le, lm):
    """dp-accounting's GaussianPrivacyLoss.get_delta_for_epsilon (exact for the Gaussian) agrees to
    1e-8 relative (or 1e-14 absolute)."""
    eps, mu = math.exp(le), math.exp(lm)
    peer = GaussianPrivacyLoss(1.0 / mu, sensitivity=1.0).get_delta_for_epsilon(eps)
    got = R.gaussian_delta(eps, 1.0 / mu, 1.0)
    assert abs(got - peer) <= max(1e-8 * peer, 1e-14)


def test_gaussian_delta_known_values():
    """eps = 0 gives the total variation 2 Phi(mu/2) - 1; Delta/sigma = 1, eps = 0.5 against the
    50-digit value; delta decreases in sigma and in eps."""
    with mp.workdps(50):
        tv = 2 * mp.ncdf(mp.mpf(1) / 2) - 1
    assert abs(R.gaussian_delta(0.0, 1.0, 1.0) - tv) < 1e-15
    assert abs(R.gaussian_delta(0.5, 1.0, 1.0) - mp_delta(0.5, 1, 1)) < 1e-16
    ds = [R.gaussian_delta(0.5, s, 1.0) for s in (0.5, 1.0, 2.0, 4.0)]
    assert all(a > b for a, b in zip(ds, ds[1:]))
    de = [R.gaussian_delta(e, 1.0, 1.0) for e in (0.1, 0.5, 1.0, 2.0)]
    assert all(a > b for a, b in zip(de, de[1:]))
    # extreme arguments underflow to 0 (never NaN): sigma/Delta = 1e160, and eps = 1e6
    assert R.gaussian_delta(1.0, 1e160, 1.0) == 0.0
    assert R.gaussian_delta(1e6, 1.0, 1.0) == 0.0


# ---------------------------------------------------------------------------- classical sigma
@given(eps=eps_below_1, delta=deltas, Delta=sens)
def test_classical_sigma_formula_and_validity(eps, delta, Delta):
    """sigma = Delta sqrt(2 log(1.25/delta))/eps (mpmath, rtol 1e-14), and it is (eps, delta)-DP:
    the exact delta(eps) at that sigma (50 digits) is <= delta (Dwork & Roth Thm A.1, eps < 1)."""
    s = R.gaussian_mechanism_sigma_classical(eps, delta, Delta)
    with mp.workdps(50):
        want = mp.mpf(Delta) * mp.sqrt(2 * mp.log(mp.mpf("1.25") / mp.mpf(delta))) / mp.mpf(eps)
    assert abs(s - want) <= 1e-14 * want
    assert mp_delta(eps, s, Delta) <= delta


@pytest.mark.parametrize("eps", [1.0, 1.5, 10.0])
def test_classical_sigma_refuses_eps_at_least_one(eps):
    with pytest.raises(ValueError, match="requires 0 < eps < 1"):
        R.gaussian_mechanism_sigma_classical(eps, 1e-5, 1.0)


def test_classical_formula_fails_beyond_its_precondition():
    """Why eps < 1 is enforced: at eps = 10, delta = 1e-5 the formula's sigma
    sqrt(2 log(1.25e5))/10 = 0.4845 gives delta(10) = 2.27e-5 > 1e-5 (50 digits): the printed
    bound is false there (the extracted 001 Prop. 2 omits the condition; 000 section 2 too)."""
    s = math.sqrt(2 * math.log(1.25 / 1e-5)) / 10.0
    d = mp_delta(10.0, s, 1.0)
    assert d > 2e-5
    assert R.analytic_gaussian_sigma(10.0, 1e-5, 1.0) > s  # the tight sigma is larger here


# ---------------------------------------------------------------------------- analytic sigma
@given(eps=st.floats(1e-2, 20.0), delta=deltas, Delta=sens)
def test_analytic_sigma_is_the_smallest_valid_sigma(eps, delta, Delta):
    """delta(eps; sigma_a) <= delta as computed, and at 50 digits within 1e-9 relative (the
    search ends on adjacent floats; d delta / d log sigma is moderate); sigma_a (1 - 1e-9) is not
    valid (minimality, at 50 digits)."""
    s = R.analytic_gaussian_sigma(eps, delta, Delta)
    assert R.gaussian_delta(eps, s, Delta) <= delta
    assert abs(mp_delta(eps, s, Delta) - delta) <= 1e-9 * delta
    assert mp_delta(eps, s * (1 - 1e-9), Delta) > delta


@given(eps=eps_below_1, delta=deltas, Delta=sens)
def test_analytic_sigma_is_at_most_classical(eps, delta, Delta):
    """Where both apply (eps < 1) the tight sigma is no larger than Proposition 2's."""
    assert R.analytic_gaussian_sigma(eps, delta, Delta) <= R.gaussian_mechanism_sigma_classical(eps, delta, Delta)


@given(eps=st.floats(1e-2, 20.0), delta=st.floats(1e-12, 0.5))
def test_analytic_sigma_matches_dp_accounting(eps, delta):
    """dp-accounting's get_sigma_gaussian (Balle & Wang's calibration, brentq at xtol 1e-12)
    agrees to 1e-8 relative; sigma scales linearly with the sensitivity."""
    peer = peer_gm.get_sigma_gaussian(eps, delta)
    ours = R.analytic_gaussian_sigma(eps, delta, 1.0)
    assert abs(ours - peer) <= 1e-8 * peer
    assert abs(R.analytic_gaussian_sigma(eps, delta, 7.0) - 7.0 * ours) <= 1e-10 * 7.0 * ours


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("fn", [R.gaussian_mechanism_sigma_classical, R.analytic_gaussian_sigma])
@pytest.mark.parametrize("eps,delta,Delta,what", [
    (0.0, 1e-5, 1.0, "eps"), (-0.1, 1e-5, 1.0, "eps"), (math.nan, 1e-5, 1.0, "eps"),
    (0.5, 0.0, 1.0, "delta"), (0.5, 1.0, 1.0, "delta"), (0.5, -1e-3, 1.0, "delta"), (0.5, math.nan, 1.0, "delta"),
    (0.5, 1e-5, 0.0, "sensitivity"), (0.5, 1e-5, -2.0, "sensitivity"), (0.5, 1e-5, math.inf, "sensitivity"),
])
def test_calibration_bad_input(fn, eps, delta, Delta, what):
    with pytest.raises(ValueError, match=f"{fn.__name__}: {what}"):
        fn(eps, delta, Delta)


@pytest.mark.parametrize("eps,sigma,Delta,what", [
    (-1.0, 1.0, 1.0, "eps"), (math.inf, 1.0, 1.0, "eps"), (0.5, 0.0, 1.0, "sigma"),
    (0.5, -1.0, 1.0, "sigma"), (0.5, 1.0, 0.0, "sensitivity"),
])
def test_gaussian_delta_bad_input(eps, sigma, Delta, what):
    with pytest.raises(ValueError, match=f"gaussian_delta: {what}"):
        R.gaussian_delta(eps, sigma, Delta)


@pytest.mark.parametrize("eps,sigma,Delta", [(1e-300, 1.34217728e308, 1e300), (0.0, 1.7e308, 1e300),
                                             (1e-3, 1e308, 1e307), (0.5, 9.5e307, 9e307)])
def test_gaussian_delta_with_sigma_near_the_top_of_float64(eps, sigma, Delta):
    """sigma above 9e307, where 2 sigma overflows: delta against 50 digits (it was -0.0 at sigma =
    1.3e308, Delta = 1e300, eps = 1e-300, against Delta / (sigma sqrt(2 pi)) = 3.0e-9; found by a
    mutant of analytic_gaussian_sigma's bracket guard, which that wrong 0 made unreachable)."""
    got = R.gaussian_delta(eps, sigma, Delta)
    want = float(mp_delta(eps, sigma, Delta))
    assert got == pytest.approx(want, rel=1e-6, abs=0)
    assert got > 0


def test_analytic_sigma_refuses_a_calibration_beyond_float64():
    """eps = 1e-300 at Delta = 1e300 needs sigma ~ Delta / eps: the bracket doubles past 1.8e308 and the
    calibration is refused with its one-line reason (it returned 1.34e308, whose delta is 3e-9, far
    above the asked 1e-300, while gaussian_delta returned 0 there)."""
    with pytest.raises(ValueError, match=r"^analytic_gaussian_sigma: no float64 sigma calibrates eps=1e-300, delta=1e-300, "
                                         r"sensitivity=1e\+300 \(the bracket left \(0, 1\.8e308\) at sigma = inf\)$"):
        R.analytic_gaussian_sigma(1e-300, 1e-300, 1e300)


@pytest.mark.parametrize("delta", ["x", None, [0.1]])
def test_analytic_sigma_refuses_a_delta_that_is_not_a_number(delta):
    with pytest.raises(ValueError, match=r"^analytic_gaussian_sigma: delta must be a real number \(got "):
        R.analytic_gaussian_sigma(1.0, delta, 1.0)


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-5), (0.5, 1e-3), (2.0, 1e-5), (8.0, 1e-9)])
def test_analytic_sigma_ends_on_adjacent_floats_within_its_evaluation_budget(eps, delta, monkeypatch):
    """The bisection of the bracket's bit patterns ends on adjacent floats and returns the upper one
    (documented), in at most 63 halvings after the bracket (doubling or halving from the sensitivity
    takes a few steps here): counted with a budget of 90 delta evaluations. The answer meets the
    target as computed and the float just below it does not (documented; at these eps, all below
    20, the computed delta is monotone, so this is the smallest such float). Independent check with 50-digit mpmath of Balle and Wang's delta(eps; sigma): sigma
    is within 1e-13 relative of the exact sigma*, and sound to the accuracy of the float64 delta the
    search evaluates (about 1e-14 relative: at adjacent floats the exact delta(sigma) may exceed the
    target by that much, 1.7e-15 relative at eps = 0.5)."""
    calls = []
    plain = R.gaussian_delta

    def budgeted(*args, **kwargs):
        calls.append(1)
        assert len(calls) <= 90, "the bisection did not stop on adjacent floats within 63 halvings"
        return plain(*args, **kwargs)

    monkeypatch.setattr(R, "gaussian_delta", budgeted)
    sigma = R.analytic_gaussian_sigma(eps, delta, 1.0)

    def mp_delta(s):
        s, e = mp.mpf(s), mp.mpf(eps)
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)

    assert plain(eps, sigma, 1.0) <= delta
    assert plain(eps, math.nextafter(sigma, 0.0), 1.0) > delta
    with mp.workdps(50):
        assert mp_delta(sigma) <= delta * (1 + mp.mpf(1e-13))
        exact = mp.findroot(lambda s: mp_delta(s) - delta, mp.mpf(sigma))
        assert sigma >= exact * (1 - mp.mpf(1e-13)) and sigma <= exact * (1 + mp.mpf(1e-13))


@given(eps=st.floats(1e-3, 50.0), delta=st.floats(1e-15, 0.9), Delta=st.floats(1e-6, 1e6))
def test_analytic_sigma_meets_the_target_and_the_float_below_does_not(eps, delta, Delta):
    """The documented answer, a certificate that needs no second search: the returned sigma meets
    the target as computed and the next float below it does not. A search that stops early (a
    wider final bracket), bisects the wrong half or returns the lower end fails one of the two."""
    s = R.analytic_gaussian_sigma(eps, delta, Delta)
    assert R.gaussian_delta(eps, s, Delta) <= delta
    assert R.gaussian_delta(eps, math.nextafter(s, 0.0), Delta) > delta


def test_gaussian_delta_is_zero_where_phi_a_underflows_and_large_eps_calibrates():
    """eps / mu >= 2.6e9: Phi(a) = Phi(mu/2 - eps/mu) is below the smallest float64, and
    0 <= delta <= Phi(a), so delta is 0 in float64; the exponent eps + log Phi(b) - log Phi(a) of
    the evaluation loses all its digits there (log Phi(a) ~ -3.6e18), and it used to be refused,
    which made analytic_gaussian_sigma refuse every eps >= 2.7e9 at Delta = 1 (its bracket starts at
    sigma = Delta) although it is documented valid for every eps > 0. Independent truth: Balle and
    Wang's delta at 50 digits (mpmath), for delta(eps; sigma) and for the calibrated sigma's
    validity (<= delta up to the float64 evaluation, 1e-9) and minimality (sigma (1 - 1e-9) fails)."""
    eps = 2673841615.839944  # refused before the fix ("computed 1.024e+03")
    assert R.gaussian_delta(eps, 1.0, 1.0) == 0.0
    assert 0 <= mp_delta(eps, 1.0, 1.0) < mp.mpf("1e-300")
    for eps in (eps, 1e10, 1e12):
        s = R.analytic_gaussian_sigma(eps, 1e-5, 1.0)
        assert mp_delta(eps, s, 1.0) <= 1e-5 * (1 + 1e-9)
        assert mp_delta(eps, s * (1 - 1e-9), 1.0) > 1e-5


def test_gaussian_delta_refuses_an_exponent_that_lost_its_digits():
    """mu = 1e15, eps = mu^2/2 + 9 mu: a = mu/2 - eps/mu = -9, so Phi(a) = 1.1e-19 is a float64, but
    eps (5e29) and log Phi(b) (-5e29) cancel in the exponent, whose rounding error (u 5e29 = 6e13) is
    far above 700: the refusal names the function and the arguments."""
    with pytest.raises(ValueError, match=r"^gaussian_delta: delta cannot be evaluated in float64 at eps=5\.00000000000009e\+29, "
                                         r"sigma=1e-15, sensitivity=1\.0: .* loses all its digits \(computed "):
        R.gaussian_delta(5.00000000000009e+29, 1e-15, 1.0)


def test_classical_sigma_refuses_a_sigma_beyond_float64():
    """Delta sqrt(2 log(1.25/delta)) / eps at Delta = 1e300, eps = 1e-300, delta = 0.5 is
    1e600 sqrt(2 log 2.5) = 1.35e600 (by hand), above the float64 range 1.8e308."""
    with pytest.raises(ValueError, match=r"^gaussian_mechanism_sigma_classical: the calibrated sigma overflows float64 "
                                         r"\(sensitivity=1e\+300, eps=1e-300, delta=0\.5\)$"):
        R.gaussian_mechanism_sigma_classical(1e-300, 0.5, 1e300)


def test_analytic_sigma_refuses_when_the_bracket_halves_to_zero():
    """eps = 1e308 at Delta = 1e-300: delta(eps; sigma) <= 0.5 needs only mu = Delta / sigma of about
    sqrt(2 eps) = 1.4e154 (Phi(mu/2 - eps/mu) < 1/2 needs mu^2 < 2 eps), i.e. it holds down to
    sigma = 1e-300 / 1.4e154 = 7e-455, below the smallest float64 (4.9e-324): the halving of the
    bracket reaches 0 and the calibration is refused with the reason, naming sigma = 0.0 (not
    gaussian_delta's complaint about a zero sigma)."""
    with pytest.raises(ValueError, match=r"^analytic_gaussian_sigma: no float64 sigma calibrates eps=1e\+308, delta=0\.5, "
                                         r"sensitivity=1e-300 \(the bracket left \(0, 1\.8e308\) at sigma = 0\.0\)$"):
        R.analytic_gaussian_sigma(1e308, 0.5, 1e-300)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-3), (0.3, 1e-6), (1.0, 1e-5)])
def test_analytic_sigma_is_within_float_rounding_of_the_exact_sigma(eps, delta):
    """sigma* <= sigma <= sigma* (1 + 1e-14) up to 1e-14 relative, sigma* the root of Balle and
    Wang's delta(eps; sigma) = delta at 50 digits (mpmath): the search ends on adjacent floats, so
    only the float64 evaluation of delta separates its answer from sigma* (a final bracket of the
    old default width, 1e-12 relative, would end up to 1.4e-12 above sigma* at eps = 0.1,
    delta = 1e-3)."""
    sigma = R.analytic_gaussian_sigma(eps, delta, 1.0)
    with mp.workdps(50):
        exact = mp.findroot(lambda s: mp_delta(eps, s, 1.0) - delta, mp.mpf(sigma))
        assert exact * (1 - mp.mpf(1e-14)) <= sigma <= exact * (1 + mp.mpf(1e-14))


def test_gaussian_delta_refuses_an_exponent_whose_sign_is_lost_and_is_never_negative():
    """mu = Delta / sigma = 1e9, eps = mu^2/2 + 5 mu: a = mu/2 - eps/mu = -5, so Phi(a) = 2.9e-7 is a
    float64, but eps = 5e17 and log Phi(b) = -5e17 cancel in the exponent eps + log Phi(b) - log
    Phi(a) (about -19), whose rounding error is about u 5e17 = 55: the exponent came out +15 and delta
    -0.99999971, a negative delta. It is refused now. At mu = 1e8 the rounding error (0.6) is far below
    |e| = 16 and delta is evaluated: it matches Balle and Wang's delta at 50 digits (mpmath), as at
    mu = 2e8 and 3e8; at mu = 6e8 the bound exceeds |e|: refused."""
    mu = 1e9
    with pytest.raises(ValueError, match=r"^gaussian_delta: delta cannot be evaluated in float64 at eps=5\.00000005e\+17, "
                                         r"sigma=1e-09, sensitivity=1\.0: .* loses all its digits \(computed "):
        R.gaussian_delta(mu * mu / 2 + 5 * mu, 1 / mu, 1.0)
    # the bound 4u (|log Phi(b)| + |log Phi(a)| + |eps + log Phi(b)|) against |e| on both sides (same
    # family): at mu = 6e8 the bound is 1.6 |e| (refused); at mu = 3e8 and 2e8 it is 0.8 and 0.42 |e|
    with pytest.raises(ValueError, match=r"^gaussian_delta: delta cannot be evaluated in float64"):
        R.gaussian_delta(6e8 * 6e8 / 2 + 5 * 6e8, 1 / 6e8, 1.0)
    for mu in (1e8, 2e8, 3e8):
        eps = mu * mu / 2 + 5 * mu
        got = R.gaussian_delta(eps, 1 / mu, 1.0)
        assert got == pytest.approx(float(mp_delta(eps, 1 / mu, 1.0)), rel=1e-6, abs=0)
        assert got > 0


def test_analytic_sigma_refuses_where_delta_cannot_be_evaluated_instead_of_calibrating_on_a_negative_delta():
    """eps = 1e18 at Delta = 1, delta = 1e-5: the search reaches sigma near 7e-10 (mu = 1.4e9), where
    eps and log Phi(b) cancel in gaussian_delta's exponent. Before gaussian_delta refused there it
    returned a negative delta (-1.4e-84), the search took it as <= 1e-5 and returned sigma =
    7.071067714613098e-10, whose delta is 1.0 (Balle and Wang's formula at 80 digits, computed
    here): not private at all. The calibration is refused, with gaussian_delta's reason."""
    with mp.workdps(80):
        s, e = mp.mpf(7.071067714613098e-10), mp.mpf(1e18)
        old = mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)
        assert old > mp.mpf("0.999")
    with pytest.raises(ValueError, match=r"^analytic_gaussian_sigma: gaussian_delta: delta cannot be evaluated in float64 "
                                         r"at eps=1e\+18, "):
        R.analytic_gaussian_sigma(1e18, 1e-5, 1.0)


@pytest.mark.parametrize("eps,Delta,what", [("x", 1.0, r"eps must be a real number \(got 'x'\)"),
                                            (1.0, None, r"sensitivity must be a real number \(got None\)")])
def test_analytic_sigma_refuses_an_eps_or_sensitivity_that_is_not_a_number(eps, Delta, what):
    with pytest.raises(ValueError, match=rf"^analytic_gaussian_sigma: {what}$"):
        R.analytic_gaussian_sigma(eps, 1e-5, Delta)
