"""The accountant is a choice everywhere eps is computed; "best" is the tightest valid bound."""

import math

import numpy as np
import pytest

from prirfed.reference.accounting import calibration as cal
from prirfed.reference.accounting import prirfed_accountant as pa
from prirfed.reference.accounting.accountants import PrivacyReport, epsilon, lower_epsilon, privacy_report, resolve_accountant
from prirfed.reference.accounting.events import EpsilonDelta, Gaussian, SampledWithoutReplacement, SelfComposed
from prirfed.reference.accounting.pld import PldAccountant
from prirfed.reference.accounting.rdp import RdpAccountant

WOR = SelfComposed(SampledWithoutReplacement(600, 60, Gaussian(0.9)), 200)


def test_best_is_the_minimum_of_the_valid_bounds():
    p, r, b = (epsilon(WOR, 1e-5, a) for a in ("pld", "rdp", "best"))
    assert b == min(p, r) and p < r
    # an exact, attained curve cannot be beaten: best skips RDP there and equals the exact value
    g = SelfComposed(Gaussian(2.0), 4)
    assert epsilon(g, 1e-5, "best") == epsilon(g, 1e-5, "pld") < epsilon(g, 1e-5, "rdp")
    # an (eps, delta) event: RDP cannot bound it, best uses the PLD
    ed = SelfComposed(EpsilonDelta(0.1, 1e-6), 10)
    assert not RdpAccountant().supports(ed)
    assert epsilon(ed, 1e-4, "best") == epsilon(ed, 1e-4, "pld")
    with pytest.raises(ValueError, match="RdpAccountant"):
        epsilon(ed, 1e-4, "rdp")


def test_every_epsilon_takes_the_accountant():
    local = pa.dp_rsgd_event(0.45, 1.0, 60, 600, 3)
    acc_obj = PldAccountant(2e-3)
    for a in ("best", "pld", "rdp", acc_obj, RdpAccountant(orders=[2.0, 4.0, 8.0, 16.0, 32.0])):
        e1 = pa.prirfed_epsilon(local, 100, 5, 500, 1e-5, accountant=a)
        e2 = cal.epsilon_prirfed(local, 100, 5, 500, 1e-5, accountant=a)
        e3 = cal.epsilon_of_event(pa.prirfed_event(local, 100, 5, 500), 1e-5, accountant=a)
        assert e1 == e2 == e3
    assert acc_obj._events == []  # the object is a template: left unchanged
    assert cal.epsilon_dp_rsgd(0.45, 1e-5, 3, 1.0, 600, 60, accountant="pld") <= cal.epsilon_dp_rsgd(0.45, 1e-5, 3, 1.0, 600, 60, accountant="rdp")
    assert cal.epsilon_dp_rsvrg(5.0, 1e-5, 10, 3, 1.0, 1.0, 600, accountant="pld") < cal.epsilon_dp_rsvrg(5.0, 1e-5, 10, 3, 1.0, 1.0, 600, accountant="rdp")
    c_p = cal.calibrate_sigma_prirfed(1.0, 1e-5, 100, 5, 500, trainer="dp_rsgd", K=3, tau=1.0, N_i=600, b=60, accountant="pld")
    c_r = cal.calibrate_sigma_prirfed(1.0, 1e-5, 100, 5, 500, trainer="dp_rsgd", K=3, tau=1.0, N_i=600, b=60, accountant="rdp")
    assert c_p.sigma < 0.6 * 0.452 and c_p.sigma < 0.5 * c_r.sigma  # issue 13: at most 0.6x the old 0.452
    assert pa.prirfed_epsilon(pa.dp_rsgd_event(c_p.sigma, 1.0, 60, 600, 3), 100, 5, 500, 1e-5, accountant="pld") <= 1.0
    assert pa.prirfed_epsilon(pa.dp_rsgd_event(c_p.bracket[0], 1.0, 60, 600, 3), 100, 5, 500, 1e-5, accountant="pld") > 1.0
    # explicit RDP orders keep their old meaning
    assert pa.prirfed_epsilon(local, 100, 5, 500, 1e-5, orders=[2.0, 8.0]) == RdpAccountant([2.0, 8.0]).compose(pa.prirfed_event(local, 100, 5, 500)).get_epsilon(1e-5)
    for bad in ("moments", None, 3, True):
        with pytest.raises(ValueError, match="accountant must be one of"):
            resolve_accountant("f", bad)


def test_trainer_runs_report_lower_and_upper():
    from prirfed.reference.manifolds import Euclidean
    from prirfed.reference.problems.frechet_mean import FrechetMean
    from prirfed.reference.trainers.prirfed import prirfed
    from prirfed.reference.trainers.privacy import run_epsilon, run_privacy_report

    rng = np.random.default_rng(0)
    P = FrechetMean(Euclidean(2), [rng.standard_normal((6, 2)) for _ in range(4)])
    r = prirfed(P, np.zeros(2), T=3, s=2, alpha=0.1, rng=rng, K=2, b=3, sigma=0.8, tau=1.5)
    rep = run_privacy_report(r, 1e-5)
    assert rep.lower <= rep.upper == run_epsilon(r, 1e-5) <= run_epsilon(r, 1e-5, "rdp")
    assert rep.lower == pytest.approx(lower_epsilon(r.event, 1e-5), rel=1e-12, abs=0)
    assert rep == privacy_report(r.event, 1e-5)
    r0 = prirfed(P, np.zeros(2), T=1, s=1, alpha=0.1, rng=rng)
    with pytest.raises(ValueError, match="run_epsilon: the run is not differentially private \\(not private: sigma_i = 0"):
        run_epsilon(r0, 1e-5)
    assert math.isfinite(run_epsilon(r.event, 1e-5, "pld"))


@pytest.mark.parametrize("lower,upper,want", [(0.0, 0.5, math.inf), (0.0, 0.0, 1.0), (0.25, 0.5, 2.0)])
def test_privacy_report_ratio_when_the_lower_bound_is_zero(lower, upper, want):
    """PrivacyReport.ratio = upper / lower, inf when only the lower bound is 0 and 1 when both are
    (a mutant testing lower <= -1 divided by zero)."""
    assert PrivacyReport(1e-5, lower, upper, "pld").ratio == want


def test_best_says_why_when_no_accountant_bounds_the_event():
    """Poisson sampling of a composition (not of a Gaussian): ZDW22's Theorem 11 and the RDP bound of
    Mironov, Talwar and Zhang both need a Gaussian inner event, so neither accountant supports it,
    and "best" refuses with the PLD accountant's reason (not a bare min() of nothing)."""
    from prirfed.reference.accounting.events import ADD_REMOVE, PoissonSampled

    ev = PoissonSampled(0.1, SelfComposed(Gaussian(1.0, ADD_REMOVE), 2))
    assert not PldAccountant(relation=ADD_REMOVE).supports(ev) and not RdpAccountant(relation=ADD_REMOVE).supports(ev)
    with pytest.raises(ValueError, match=r"^PldAccountant: PoissonSampled is only bounded for a Gaussian inner event \(ZDW22 Thm 11\)$"):
        epsilon(ev, 1e-5)


def test_privacy_report_with_an_accountant_that_cannot_bound_the_event_says_why():
    """An (eps, delta) event with delta > 0 has no finite RDP (Mironov 2017: the Renyi divergence of
    such a pair is infinite), so a report asked of the RDP accountant is refused with its reason."""
    with pytest.raises(ValueError, match=r"^RdpAccountant: an \(eps, delta\) event with delta = 1e-06 > 0 has no finite RDP bound$"):
        privacy_report(SelfComposed(EpsilonDelta(0.1, 1e-6), 3), 1e-4, accountant="rdp")


def test_worst_case_of_asymmetric_parties_is_the_worse_party():
    """Parallel composition (McSherry 2009): the record is in one party's data, so eps of the worst
    case is the larger of the parties' eps. Two Poisson-subsampled Gaussians (add/remove: the two
    orders of each pair differ, so the maximum of the curves is taken per order) against each
    party alone (each checked against dp-accounting in test_peer_pld): never below, and above by at
    most 2% (the maximum of the two discrete curves is discretised once more, pessimistically: 0.8%
    here)."""
    from prirfed.reference.accounting.events import ADD_REMOVE, PoissonSampled, WorstCase

    parties = (SelfComposed(PoissonSampled(0.1, Gaussian(1.0, ADD_REMOVE)), 20), SelfComposed(PoissonSampled(0.3, Gaussian(2.0, ADD_REMOVE)), 20))
    each = [PldAccountant(relation=ADD_REMOVE).compose(p).get_epsilon(1e-5) for p in parties]
    both = PldAccountant(relation=ADD_REMOVE).compose(WorstCase(parties)).get_epsilon(1e-5)
    assert max(each) * (1 - 1e-9) <= both <= max(each) * 1.02


def _rdp_gaussian_bracket(z, delta):
    """[minimum over real alpha > 1, minimum over the integers 2..64] of the improved conversion
    (Canonne, Kamath and Steinke 2020, Prop. 12) f(a) = a / (2 z^2) + log((a - 1)/a) - (log delta +
    log a)/(a - 1) of the Gaussian's RDP a / (2 z^2) (Mironov 2017), in 50-digit mpmath; the real
    minimum is where f'(a) = 1/(2 z^2) + 1/(a (a - 1)) - ((a - 1)/a - log delta - log a)/(a - 1)^2
    vanishes. The accountant's orders include the integers 2..64, so its eps lies between."""
    import mpmath as mp

    with mp.workdps(50):
        z, dl = mp.mpf(z), mp.log(mp.mpf(delta))
        f = lambda a: a / (2 * z**2) + mp.log((a - 1) / a) - (dl + mp.log(a)) / (a - 1)  # noqa: E731
        fp = lambda a: 1 / (2 * z**2) + 1 / (a * (a - 1)) - ((a - 1) / a - dl - mp.log(a)) / (a - 1) ** 2  # noqa: E731
        ints = min(f(mp.mpf(a)) for a in range(2, 65))
        cont = f(mp.findroot(fp, (2, 64), solver="anderson"))
        return float(cont), float(ints)


class _TooLow:
    """An accountant object (compose, get_epsilon) whose bound is the given number, whatever the event."""

    def __init__(self, value):
        self.value = value

    def compose(self, event):
        return self

    def get_epsilon(self, delta):
        return self.value


def test_privacy_report_reads_each_bound_and_names_its_source():
    """One Gaussian, z = 2 (mu = 1/2): its PLD curve is exact, so lower = pld = the exact eps (50-digit
    mpmath); the RDP bound lies in the bracket of _rdp_gaussian_bracket. Each choice of accountant
    reports its own upper bound and name, and both upper bounds where it computed them; gap = upper -
    lower."""
    from prirfed.reference.accounting import mp as mpx

    d = 1e-5
    exact = float(mpx.gaussian_exact_epsilon(d, 0.5))
    lo_r, hi_r = _rdp_gaussian_bracket(2.0, d)
    assert exact < lo_r
    for acc, name in (("pld", "pld"), ("rdp", "rdp"), ("best", "pld"), (PldAccountant(1e-3), "PldAccountant")):
        r = privacy_report(Gaussian(2.0), d, acc)
        assert r.lower == pytest.approx(exact, rel=1e-9, abs=0) and r.accountant == name and r.delta == d
        if isinstance(acc, str):
            assert r.pld == pytest.approx(exact, rel=1e-9, abs=0) and lo_r * (1 - 1e-12) <= r.rdp <= hi_r * (1 + 1e-12)
        else:
            assert r.pld is None and r.rdp is None
        up = r.rdp if name == "rdp" else exact
        assert r.upper == pytest.approx(up, rel=1e-9, abs=0) and r.gap == pytest.approx(up - exact, abs=1e-9 * up)


def test_privacy_report_refuses_an_upper_bound_below_the_attained_lower_bound():
    """An accountant object claiming eps below the attained lower bound (the exact eps of a Gaussian,
    z = 2) is a contradiction, refused by name; within the guard's 1e-9 relative slack it is not."""
    d = 1e-5
    low = lower_epsilon(Gaussian(2.0), d)
    with pytest.raises(ValueError, match=r"^privacy_report: the attainable lower bound eps = .* exceeds the _TooLow upper bound"):
        privacy_report(Gaussian(2.0), d, _TooLow(low * (1 - 1e-8)))
    for f in (1 - 1e-12, 1 - 7e-10):
        r = privacy_report(Gaussian(2.0), d, _TooLow(low * f))
        assert r.upper == low * f and r.accountant == "_TooLow"


@pytest.mark.parametrize("fn,where", [(epsilon, "epsilon"), (lower_epsilon, "lower_epsilon"), (privacy_report, "privacy_report")])
def test_functions_refuse_what_is_not_an_event(fn, where):
    for bad in ("Gaussian(1.0)", 3, None):
        with pytest.raises(ValueError, match=rf"^{where}: not an event: "):
            fn(bad, 1e-5)


def test_an_accountant_object_needs_both_compose_and_get_epsilon():
    """The duck type of an accountant object is compose and get_epsilon, both callable: an object with
    only one of them (or a non-callable attribute) is refused."""

    class OnlyCompose:
        def compose(self, event):
            return self

    class OnlyEpsilon:
        def get_epsilon(self, delta):
            return 1.0

    class NotCallable(OnlyCompose):
        get_epsilon = 1.0

    for bad in (OnlyCompose(), OnlyEpsilon(), NotCallable()):
        with pytest.raises(ValueError, match=r"^f: accountant must be one of \('best', 'pld', 'rdp'\) or an accountant object"):
            resolve_accountant("f", bad)
    ok = _TooLow(1.0)
    assert resolve_accountant("f", ok) is ok


def test_best_takes_the_rdp_bound_where_the_pld_gives_up():
    """Sampling 9 of 10 records for a Gaussian with z = 0.01 (mu = 100): the PLD accountant reports inf
    here (its losses of thousands of nats are beyond its grid), the RDP accountant a finite bound, and
    "best" takes the finite one while "pld" stays inf. Bracket of the true eps, by hand: above 5000,
    since the attained pair (0.1 N(0,1) + 0.9 N(100,1), N(0,1)) has delta(5000) = 0.9 delta_G(log(1 +
    (e^5000 - 1)/0.9)) ~ 0.9 Phi(-0.001) ~ 0.45 > 1e-5; the RDP bound is above the truth and within 2%
    of the unsubsampled Gaussian's exact eps (50-digit mpmath), which is above the truth too."""
    from prirfed.reference.accounting import mp as mpx

    ev = SampledWithoutReplacement(10, 9, Gaussian(0.01))
    assert epsilon(ev, 1e-5, "pld") == math.inf
    b = epsilon(ev, 1e-5, "best")
    assert b == epsilon(ev, 1e-5, "rdp")
    assert 5000.0 < b < 1.02 * float(mpx.gaussian_exact_epsilon(1e-5, 100.0))


def test_best_passes_on_the_pld_refusal_when_rdp_cannot_bound_the_event():
    """30 rounds of an activated (eps0, delta0) = (1000, 1e-9) event: the PLD accountant supports it
    but its privacy losses span +-30000 nats, more than 4 MAX_GRID points even at grid step 0.1, so
    it refuses (documented in PldAccountant.get_epsilon); delta0 > 0 has no finite RDP (Mironov
    2017), so "best" has no bound at all and must re-raise the PLD accountant's reason (not return
    the minimum of no candidates)."""
    from prirfed.reference.accounting.events import Activation

    ev = SelfComposed(Activation(0.5, EpsilonDelta(1000.0, 1e-9)), 30)
    assert PldAccountant().supports(ev) and not RdpAccountant().supports(ev)
    msg = r"^PldAccountant: the privacy loss distribution needs more than 65536 points even at grid step 0\.1; eps is far beyond any useful range here$"
    for acc in ("best", "pld"):
        with pytest.raises(ValueError, match=msg):
            epsilon(ev, 1e-5, acc)
