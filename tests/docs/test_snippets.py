"""Snippets that the docs ``literalinclude`` (docs/accounting_example.md).

Each function between ``# [name]`` and ``# [/name]`` markers is shown on a page; the tests below
run it, so the code on the pages is tested. The numbers on the accounting page are produced at
build time by docs/gen_pages.py calling these same functions (never typed by hand).
"""

import math

import pytest
from hypothesis import Phase, settings

from prirfed.reference.accounting.paper import TABLE_1_DELTA, TABLE_1_DELTA_HAT, TABLE_1_EPS, TABLE_1_T, theorem_4_2
from prirfed.reference.accounting.prirfed_accountant import blackbox_advanced, blackbox_exact_epsilon
from prirfed.reference.manifolds.sphere import Sphere
from prirfed.testing.manifold_contract import ManifoldContract


# [theorem_4_2_by_hand]
def theorem_4_2_by_hand(eps, delta, N, s, T, delta_hat):
    """Theorem 4.2 of 000 as printed, one line per symbol (sqrt placement: see erratum E1)."""
    rho = s / N                                              # probability that an agent is sampled
    eps_tilde = math.log(1 + rho * (math.exp(s * eps) - 1))  # amplified per-round epsilon
    delta_tilde = rho * s * delta                            # per-round delta
    naive = T * eps_tilde                                    # sequential composition of T rounds
    advanced = math.sqrt(2 * T * math.log(1 / delta_hat)) * eps_tilde + T * eps_tilde * (math.exp(eps_tilde) - 1)
    return min(naive, advanced), delta_hat + T * delta_tilde
# [/theorem_4_2_by_hand]


# [counterexample]
def counterexample_gap(eps, delta_hat=1e-3):
    """N = 2 agents, s = 1, T = 1; agent i holds one bit z_i and releases (i, RR_eps(z_i)).

    Returns P_D(S) - exp(eps') P_D'(S) - delta' for D = (0, 0), D' = (1, 0), S = {(1, 0)}, where
    (eps', delta') is what Theorem 4.2 claims: positive means the claim is violated.
    """
    keep = math.exp(eps) / (1 + math.exp(eps))               # RR keeps the bit with this probability

    def prob_output(D, agent, bit):                          # law of the round's output (agent, bit)
        p_bit = keep if D[agent] == bit else 1 - keep
        return 0.5 * p_bit                                   # each agent is sampled w.p. rho = 1/2

    eps_claim, delta_claim = theorem_4_2(eps, 0.0, N=2, s=1, T=1, delta_hat=delta_hat)
    D, D_prime = (0, 0), (1, 0)                              # neighbours: agent 0's record changes
    return prob_output(D, 0, 0) - math.exp(eps_claim) * prob_output(D_prime, 0, 0) - delta_claim
# [/counterexample]


# [rigorous_row]
def table_1_row(N, s):
    """One row of Table 1 of 000: the paper's (eps', delta') beside the sound record-level eps'."""
    rows = []
    for T in TABLE_1_T:
        eps_paper, delta_paper = theorem_4_2(TABLE_1_EPS, TABLE_1_DELTA, N, s, T, TABLE_1_DELTA_HAT)
        eps_exact = blackbox_exact_epsilon(TABLE_1_EPS, TABLE_1_DELTA, s / N, T, delta_paper)  # same delta'
        eps_adv, delta_adv = blackbox_advanced(TABLE_1_EPS, TABLE_1_DELTA, N, s, T, TABLE_1_DELTA_HAT)
        rows.append(dict(T=T, eps_paper=eps_paper, delta_paper=delta_paper, eps_exact=eps_exact,
                         eps_advanced=eps_adv, delta_advanced=delta_adv))
    return rows
# [/rigorous_row]


# Table 1 of 000, row N = 100, s = 1 (typed from the paper; the same numbers as
# tests/accounting/test_paper_accountant.py): (eps', delta') for T = 50, 100, ..., 500.
PRINTED_ROW_100_1 = [(4.26e-2, 1.05e-3), (6.04e-2, 1.10e-3), (8.55e-2, 1.20e-3), (1.05e-1, 1.30e-3),
                     (1.21e-1, 1.40e-3), (1.36e-1, 1.50e-3)]


def _half_unit_third_digit(x):
    return 0.5 * 10 ** (math.floor(math.log10(abs(x))) - 2) * (1 + 1e-9)


def test_hand_computation_reproduces_the_printed_row():
    for T, (e_pr, d_pr) in zip(TABLE_1_T, PRINTED_ROW_100_1):
        e, d = theorem_4_2_by_hand(0.15, 1e-4, 100, 1, T, 1e-3)
        assert abs(e - e_pr) <= _half_unit_third_digit(e_pr), (T, e, e_pr)
        assert abs(d - d_pr) <= _half_unit_third_digit(d_pr), (T, d, d_pr)
        assert (e, d) == pytest.approx(theorem_4_2(0.15, 1e-4, 100, 1, T, 1e-3), rel=1e-13, abs=0)


@pytest.mark.parametrize("eps", [0.15, 1.0])
def test_counterexample_violates_the_claim_by_the_closed_form(eps):
    """Closed form of the gap (proofs_notes/accounting_theorem_4_2.md): (e^eps - 1)/(4(1 + e^eps)) - delta_hat."""
    closed = (math.exp(eps) - 1) / (4 * (1 + math.exp(eps))) - 1e-3
    assert counterexample_gap(eps) == pytest.approx(closed, rel=1e-12, abs=0)
    assert counterexample_gap(eps) > 0


def test_rigorous_row_is_consistent():
    """For s = 1 the sound eps' exceeds the paper's in every column (Theorem 4.2 understates it)
    and never exceeds the sound advanced-composition value at that value's (smaller) delta'."""
    for r in table_1_row(100, 1):
        assert r["eps_exact"] > r["eps_paper"]
        assert r["delta_advanced"] <= r["delta_paper"] + 1e-15
        assert blackbox_exact_epsilon(0.15, 1e-4, 0.01, r["T"], r["delta_advanced"]) <= r["eps_advanced"]


class _ProjectionIsNotTransport(Sphere):
    def transp(self, x, y, v):
        return self.proj(y, v)          # a vector transport, but neither isometric nor parallel


def test_the_contract_catches_a_wrong_transport():
    """The suite can fail: projecting onto T_y is not parallel transport (shrinks by cos(dist))."""

    class T(ManifoldContract):
        manifold = _ProjectionIsNotTransport(3)

    # no shrinking: the first failing example is enough here (shrinking took ~15 s)
    check = settings(phases=[Phase.explicit, Phase.generate])(T.test_transp_is_linear_isometric_into_Ty)
    with pytest.raises(AssertionError):
        check(T())
