"""The paper accountant (000 Sections 2 and 4) against the numbers printed in 000.

Known answers: Table 1 of 000, typed from the paper (``a.bc_k`` = a.bc x 10^k), compared at the
printed precision (three significant digits, i.e. half a unit in the last printed digit).
"""

import math
import mpmath as mp

import pytest

from prirfed.reference.accounting import paper, theorem_4_2
from prirfed.reference.accounting.paper import (
    TABLE_1_ROWS,
    TABLE_1_T,
    advanced_composition,
    group_privacy,
    preprocessing_theorem_4_1,
    sequential_composition,
    subsampling_lemma_4_1,
    table_1,
)
from prirfed.reference.accounting import mp as mpx

# Table 1 of 000 as printed: for each (N, s): rho, then (eps', delta') for T = 50..500.
TABLE_1_PRINTED = {
    (100, 1): (1.00e-2, [(4.26e-2, 1.05e-3), (6.04e-2, 1.10e-3), (8.55e-2, 1.20e-3), (1.05e-1, 1.30e-3), (1.21e-1, 1.40e-3), (1.36e-1, 1.50e-3)]),
    (100, 5): (5.00e-2, [(1.58, 2.25e-3), (2.32, 3.50e-3), (3.46, 6.00e-3), (4.41, 8.50e-3), (5.25, 1.10e-2), (6.03, 1.35e-2)]),
    (200, 1): (5.00e-3, [(2.13e-2, 1.03e-3), (3.01e-2, 1.05e-3), (4.26e-2, 1.10e-3), (5.23e-2, 1.15e-3), (6.04e-2, 1.20e-3), (6.76e-2, 1.25e-3)]),
    (500, 5): (1.00e-2, [(2.98e-1, 1.25e-3), (4.25e-1, 1.50e-3), (6.09e-1, 2.00e-3), (7.52e-1, 2.50e-3), (8.75e-1, 3.00e-3), (9.85e-1, 3.50e-3)]),
    (300, 5): (1.67e-2, [(5.02e-1, 1.42e-3), (7.20e-1, 1.83e-3), (1.04, 2.67e-3), (1.29, 3.50e-3), (1.51, 4.33e-3), (1.70, 5.17e-3)]),
    (300, 10): (3.33e-2, [(3.52, 2.67e-3), (5.36, 4.33e-3), (8.32, 7.67e-3), (1.09e1, 1.10e-2), (1.33e1, 1.43e-2), (1.55e1, 1.77e-2)]),
    (400, 5): (1.25e-2, [(3.74e-1, 1.31e-3), (5.35e-1, 1.63e-3), (7.68e-1, 2.25e-3), (9.51e-1, 2.88e-3), (1.11, 3.50e-3), (1.25, 4.13e-3)]),
    (400, 10): (2.50e-2, [(2.56, 2.25e-3), (3.83, 3.50e-3), (5.84, 6.00e-3), (7.55, 8.50e-3), (9.11, 1.10e-2), (1.06e1, 1.35e-2)]),
}


def _printed_tol(x):
    """Half a unit in the third significant digit of the printed number."""
    return 0.5 * 10 ** (math.floor(math.log10(abs(x))) - 2) * (1 + 1e-9)


def test_table_1_rows_match_the_paper():
    assert tuple(TABLE_1_PRINTED) == TABLE_1_ROWS
    assert TABLE_1_T == (50, 100, 200, 300, 400, 500)


@pytest.mark.parametrize("N,s", TABLE_1_ROWS)
def test_table_1_all_cells(N, s):
    """All 48 (eps', delta') cells of Table 1 of 000 from theorem_4_2, at the printed precision."""
    rho_printed, cells = TABLE_1_PRINTED[(N, s)]
    assert abs(s / N - rho_printed) <= _printed_tol(rho_printed)
    for T, (e_pr, d_pr) in zip(TABLE_1_T, cells):
        e, d = theorem_4_2(0.15, 1e-4, N, s, T, 1e-3)
        assert abs(e - e_pr) <= _printed_tol(e_pr), (N, s, T, e, e_pr)
        assert abs(d - d_pr) <= _printed_tol(d_pr), (N, s, T, d, d_pr)


def test_table_1_function_returns_all_48_cells_equal_to_theorem_4_2():
    cells = table_1()
    assert len(cells) == 48
    for c in cells:
        assert (c["eps_prime"], c["delta_prime"]) == theorem_4_2(0.15, 1e-4, c["N"], c["s"], c["T"], 1e-3)


def test_sqrt_placement_eps_tilde_inside_contradicts_table_1():
    """The extraction prints sqrt(2T ln(1/delta_hat) eps_tilde); that reading misses Table 1 (N=100, s=1, T=50)."""
    rho = 0.01
    et = math.log1p(rho * math.expm1(0.15))
    garbled = min(50 * et, math.sqrt(2 * 50 * math.log(1e3) * et) + 50 * et * math.expm1(et))
    assert abs(garbled - 4.26e-2) > 10 * _printed_tol(4.26e-2)


@pytest.mark.parametrize("N,s", TABLE_1_ROWS)
@pytest.mark.parametrize("T", TABLE_1_T)
def test_theorem_4_2_matches_mpmath(N, s, T):
    e, d = theorem_4_2(0.15, 1e-4, N, s, T, 1e-3)
    em, dm = mpx.theorem_4_2(0.15, 1e-4, N, s, T, 1e-3)
    assert math.isclose(e, float(em), rel_tol=1e-13)
    assert math.isclose(d, float(dm), rel_tol=1e-13)


def test_closed_forms():
    assert sequential_composition([0.1, 0.2], [1e-5, 2e-5]) == pytest.approx((0.3, 3e-5), rel=1e-15, abs=0)
    e, d = advanced_composition(0.1, 1e-6, 10, 1e-5)
    assert e == pytest.approx(math.sqrt(20 * math.log(1e5)) * 0.1 + 10 * 0.1 * math.expm1(0.1), rel=1e-15, abs=0)
    assert d == pytest.approx(1e-5 + 1e-5, rel=1e-15, abs=0)
    # Lemma 4.1 at rho = 1 is the identity
    assert subsampling_lemma_4_1(0.7, 1e-5, 1.0) == pytest.approx((0.7, 1e-5), rel=1e-15, abs=0)
    # pre-processing with c = 1 is the identity; group privacy of size 2
    assert preprocessing_theorem_4_1(0.3, 1e-5, 1) == pytest.approx((0.3, 1e-5), rel=1e-15, abs=0)
    assert group_privacy(0.3, 1e-5, 2) == pytest.approx((0.6, 2 * math.exp(0.3) * 1e-5), rel=1e-15, abs=0)
    for args in [(0.3, 1e-5, 0.2), (2.0, 1e-3, 0.01)]:
        want_eps, want_delta = mpx.subsampling_lemma_4_1(*args)
        assert subsampling_lemma_4_1(*args) == pytest.approx((float(want_eps), float(want_delta)), rel=1e-14, abs=0)
    # Lemma 4.1 by hand at rho = 0.2: delta' = 0.2 * 1e-5 = 2e-6 and eps' = log(1 + 0.2 (e^0.3 - 1)),
    # e^0.3 - 1 = 0.3498588075760032 (to 16 digits), so eps' = log(1.0699717615152006); the oracle's
    # delta to 1e-20 absolute, its eps to the 16 digits of the hand value
    with mp.workdps(50):
        oe, od = mpx.subsampling_lemma_4_1(0.3, 1e-5, 0.2)
        assert abs(od - mp.mpf("2e-6")) <= mp.mpf("1e-20")  # the floats 0.2 and 1e-5 are 1e-17 off their decimals
        assert abs(oe - mp.log(mp.mpf("1.0699717615152006"))) <= mp.mpf("1e-16")
    assert advanced_composition(0.1, 1e-6, 10, 1e-5)[0] == pytest.approx(float(mpx.advanced_composition(0.1, 10, 1e-5)), rel=1e-14, abs=0)


def test_theorem_4_2_with_every_agent_sampled():
    """s = N (rho = 1, every agent in every round) is a setting of the theorem, not an error. By hand at
    eps = 0.01, delta = 1e-6, N = s = 5, T = 10, delta_hat = 1e-5: eps_tilde = log(1 + (e^0.05 - 1))
    = 0.05, the sequential 10 * 0.05 = 0.5 beats the advanced sqrt(20 ln 1e5) 0.05 + 10 * 0.05 (e^0.05 - 1)
    = 0.7843, and delta' = 1e-5 + 10 * 5 * 1e-6 = 6e-5. One agent more than N is refused."""
    assert theorem_4_2(0.01, 1e-6, 5, 5, 10, 1e-5) == pytest.approx((0.5, 6e-5), rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"s = 6 exceeds N = 5 \(by 1\)"):
        theorem_4_2(0.01, 1e-6, 5, 6, 10, 1e-5)


def test_group_privacy_and_pre_processing_where_the_group_size_shows():
    """(c eps, c e^{(c-1) eps} delta) of Dwork and Roth at c = 3, eps = 0.5, delta = 1e-6, by hand:
    (1.5, 3 e^1 1e-6 = 8.15484548537714e-6); Theorem 4.1's pre-processing by a 3-stable map is the
    same (c = 1, the only value tested before, is the identity for every formula of this kind);
    delta = 0 stays 0 at c = 4, and at c = 700 the large exponent is still evaluated:
    700 e^699 1e-6 = 2.7e300 (mpmath; a delta above 1 says nothing, but it is the formula's value)."""
    want = (1.5, 3 * math.e * 1e-6)
    assert group_privacy(0.5, 1e-6, 3) == pytest.approx(want, rel=1e-15, abs=0)
    assert preprocessing_theorem_4_1(0.5, 1e-6, 3) == pytest.approx(want, rel=1e-15, abs=0)
    assert group_privacy(0.5, 0.0, 4) == (2.0, 0.0)
    e, d = group_privacy(1.0, 1e-6, 700)
    assert e == 700.0 and d == pytest.approx(float(700 * mp.exp(699) * mp.mpf("1e-6")), rel=1e-13, abs=0)


@pytest.mark.parametrize("eps,delta,got", [([0.1], [1e-5, 1e-5], "1 and 2"), ([], [], "0 and 0")])
def test_sequential_composition_refuses_unmatched_or_empty_lists(eps, delta, got):
    with pytest.raises(ValueError, match=rf"^sequential_composition: need as many eps as delta, at least one \(got {got}\)$"):
        sequential_composition(eps, delta)


@pytest.mark.parametrize(
    "args,match",
    [
        ((0.0, 1e-4, 100, 1, 50, 1e-3), "eps must be > 0"),
        ((-0.1, 1e-4, 100, 1, 50, 1e-3), "eps must be > 0"),
        ((0.15, 1.0, 100, 1, 50, 1e-3), "delta must lie in"),
        ((0.15, -1e-4, 100, 1, 50, 1e-3), "delta must lie in"),
        ((0.15, 1e-4, 100, 101, 50, 1e-3), "exceeds N = 100 \\(by 1\\)"),
        ((0.15, 1e-4, 100, 1, 0, 1e-3), "T must be >= 1"),
        ((0.15, 1e-4, 100, 1, 50, 0.0), "delta_hat must lie in"),
        ((0.15, 1e-4, 100, 1, 50, 1.5), "delta_hat must lie in"),
        ((float("nan"), 1e-4, 100, 1, 50, 1e-3), "finite"),
    ],
)
def test_theorem_4_2_bad_input(args, match):
    with pytest.raises(ValueError, match="theorem_4_2: .*" + match):
        theorem_4_2(*args)


def test_paper_accountant_supports_and_refuses():
    from prirfed.reference.accounting.events import Activation, EpsilonDelta, Gaussian, SelfComposed

    acc = paper.PaperAccountant(delta_prime=1e-3)
    ev = SelfComposed(EpsilonDelta(0.15, 1e-4), 50)
    assert acc.supports(ev) is True
    assert acc.epsilon_delta(ev) == advanced_composition(0.15, 1e-4, 50, 1e-3)
    from prirfed.reference.accounting.events import Composed

    # a composition is supported only if every part is (a mutant taking "any part" survived), and
    # an empty one is not (there is nothing to bound)
    for bad in [Gaussian(1.0), Activation(0.5, EpsilonDelta(1.0, 0.0)), Composed((Gaussian(1.0),)),
                Composed((EpsilonDelta(0.1, 1e-6), Gaussian(1.0))), Composed(())]:
        # a bool, as documented (``supports(...) == False`` must hold: a mutant returning None survived)
        assert acc.supports(bad) is False
        with pytest.raises(ValueError, match="PaperAccountant.epsilon_delta"):
            acc.epsilon_delta(bad)


@pytest.mark.parametrize("N,s,T", [(100, 1, 1), (100, 5, 1), (10, 2, 3), (50, 10, 2)])
def test_theorem_4_2_takes_basic_composition_where_it_is_smaller(N, s, T):
    """Theorem 4.2 is min(T eps_t, advanced composition) with eps_t = log(1 + rho (e^{s eps} - 1)),
    rho = s / N, and delta = delta_hat + T rho s delta. For few rounds the basic term T eps_t is the
    smaller one (advanced composition adds sqrt(2 T log(1/delta_hat)) eps_t >= eps_t for T <= 2 log(1/delta_hat)),
    so both the accountant and its 50-digit oracle must return T eps_t, computed here by hand (Table
    1's settings all sit on the advanced branch: a mutant oracle with T / eps_t survived them)."""
    eps, delta, dh = 0.15, 1e-4, 1e-3
    rho = s / N
    et = math.log1p(rho * math.expm1(s * eps))
    adv = math.sqrt(2 * T * math.log(1 / dh)) * et + T * et * math.expm1(et)
    assert T * et < adv
    e, d = theorem_4_2(eps, delta, N, s, T, dh)
    em, dm = mpx.theorem_4_2(eps, delta, N, s, T, dh)
    assert e == pytest.approx(T * et, rel=1e-14, abs=0) and float(em) == pytest.approx(T * et, rel=1e-14, abs=0)
    assert d == pytest.approx(dh + T * rho * s * delta, rel=1e-14, abs=0) and float(dm) == pytest.approx(d, rel=1e-14, abs=0)


def test_theorem_4_2_refuses_no_agents_by_name():
    """N = 0 is refused as N, with the shortfall (a mutant allowing N >= 0 refused it later as s > N)."""
    with pytest.raises(ValueError, match=r"^theorem_4_2: N must be >= 1 \(got N = 0, short by 1\)$"):
        theorem_4_2(0.15, 1e-4, 0, 1, 5, 1e-3)


def test_paper_accountant_on_subsampled_composed_and_few_rounds():
    """Each branch of the paper's accountant against its closed form, by hand: Lemma 4.1 of 000 on
    sampling 10 of 100 from a (1, 1e-5)-DP mechanism, (log(1 + 0.1 (e - 1)), 0.1 * 1e-5);
    sequential composition of (0.1, 1e-6) and (0.2, 2e-6), (0.3, 3e-6); 50 rounds of (0.15, 1e-4)
    without delta' (basic composition only), (7.5, 5e-3); 2 rounds with delta' = 1e-3, where
    advanced composition (sqrt(4 log 1000) 0.15 + 2 * 0.15 (e^0.15 - 1) = 0.837) is above the basic
    (0.3, 2e-4), so the basic one is returned."""
    from prirfed.reference.accounting.events import Composed, EpsilonDelta, SampledWithoutReplacement, SelfComposed

    acc = paper.PaperAccountant()
    e, d = acc.epsilon_delta(SampledWithoutReplacement(100, 10, EpsilonDelta(1.0, 1e-5)))
    assert e == pytest.approx(math.log(1 + 0.1 * (math.e - 1)), rel=1e-15, abs=0) and d == pytest.approx(1e-6, rel=1e-15, abs=0)
    assert acc.epsilon_delta(Composed((EpsilonDelta(0.1, 1e-6), EpsilonDelta(0.2, 2e-6)))) == pytest.approx((0.3, 3e-6), rel=1e-15, abs=0)
    assert acc.epsilon_delta(SelfComposed(EpsilonDelta(0.15, 1e-4), 50)) == pytest.approx((7.5, 5e-3), rel=1e-15, abs=0)
    assert paper.PaperAccountant(delta_prime=1e-3).epsilon_delta(SelfComposed(EpsilonDelta(0.15, 1e-4), 2)) == pytest.approx((0.3, 2e-4), rel=1e-15, abs=0)


def test_lemma_4_1_where_both_terms_of_the_large_eps_form_count():
    """log(1 + rho (e^eps - 1)) at eps = 700 is evaluated as eps + log(rho + (1 - rho) e^{-eps}); with
    rho = 1e-304 both terms are about 1e-304 (e^-700 = 9.9e-305), so the (1 - rho) weight shows:
    50-digit mpmath gives 0.700238008480711 (1e-12 relative)."""
    with mp.workdps(50):
        want = mp.log1p(mp.mpf(1e-304) * mp.expm1(700))
    assert subsampling_lemma_4_1(700.0, 0.0, 1e-304) == pytest.approx((float(want), 0.0), rel=1e-12, abs=0)


def test_lemma_4_1_on_both_sides_of_the_switch_to_the_large_eps_form():
    """log(1 + rho (e^eps - 1)) where the two evaluations differ (50-digit mpmath): at eps = 400,
    rho = 1e-304 the value is 5.22e-131, which the large-eps form eps + log(rho + (1 - rho) e^-eps)
    loses to cancellation (it gives 0); at eps = 710 e^eps overflows float64, so only the
    large-eps form is finite: 710 - log 2 + log(1 + e^-710) = 709.306852819440 at rho = 1/2."""
    for eps, rho in ((400.0, 1e-304), (710.0, 0.5)):
        with mp.workdps(50):
            want = float(mp.log1p(mp.mpf(rho) * mp.expm1(eps)))
        e, d = subsampling_lemma_4_1(eps, 0.0, rho)
        assert e == pytest.approx(want, rel=1e-14, abs=0) and d == 0.0


def test_advanced_composition_where_e_to_the_eps_is_large_or_overflows():
    """sqrt(2 k log(1/delta')) eps + k eps (e^eps - 1) at eps = 400, k = 1, delta' = 1/2:
    2.08858787590566e176 (50-digit mpmath; e^400 is a float64); at eps = 710 e^eps overflows and the
    bound is inf (vacuous), as documented, not an OverflowError. k = 0 (documented: k >= 1) is refused
    at the boundary."""
    with mp.workdps(50):
        want = float(mp.sqrt(2 * mp.log(2)) * 400 + 400 * mp.expm1(400))
    e, d = advanced_composition(400.0, 1e-7, 1, 0.5)
    assert e == pytest.approx(want, rel=1e-14, abs=0) and d == pytest.approx(0.5 + 1e-7, rel=1e-15, abs=0)
    assert advanced_composition(710.0, 0.0, 3, 0.5) == (math.inf, 0.5)
    with pytest.raises(ValueError, match=r"^advanced_composition: k must be >= 1 \(got k = 0, short by 1\)$"):
        advanced_composition(0.1, 1e-6, 0, 1e-5)  # no composition: refused, not (0, delta') at the boundary


@pytest.mark.parametrize("c,eps,delta,rel", [
    (400, 1.0, 1e-6, 1e-15),  # e^399 is a float64: the direct product, three roundings
    (710, 1.0, 1e-6, 1e-12),  # e^709 * 710e-6 = 5.8e305: finite
    (710, 1.0, 1e-320, 1e-12),  # e^709 * 7.1e-318 = 5.8e-10
    (570, 1.25, 1e-320, 1e-12),  # e^711.25 overflows; the product is 1.4e-8
])
def test_group_privacy_where_e_to_the_exponent_is_large_or_overflows(c, eps, delta, rel):
    """(c eps, c e^{(c-1) eps} delta) of Dwork and Roth against 50-digit mpmath on the same float delta
    (1e-320 is a subnormal): a finite delta where e^{(c-1) eps} overflows float64 (it was inf), and
    the direct product to rounding where it does not (rel 1e-12 allows the log form's error,
    about 700 ulp of its exponent)."""
    with mp.workdps(50):
        want = float(c * mp.exp((c - 1) * mp.mpf(eps)) * mp.mpf(delta))
    e, d = group_privacy(eps, delta, c)
    assert e == c * eps and d == pytest.approx(want, rel=rel, abs=0)


def test_group_privacy_beyond_float64_and_its_refusal():
    """c e^{(c-1) eps} delta = 800 e^998.75 1e-6 (eps = 1.25) is about e^991.6, above 1.8e308: inf
    (documented), with c eps = 1000; delta = 0 stays 0 at that size (0 times a finite number); a
    group of 0 is refused at the boundary c = 0."""
    assert group_privacy(1.25, 1e-6, 800) == (1000.0, math.inf)
    assert group_privacy(1.25, 0.0, 800) == (1000.0, 0.0)
    with pytest.raises(ValueError, match=r"^group_privacy: c must be >= 1"):
        group_privacy(1.0, 1e-6, 0)
