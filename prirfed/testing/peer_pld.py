"""dp-accounting, driven as a careful user would, for independent PLD checks (tests and benchmarks).

Explicit Gaussian PLDs (sensitivity 1, standard deviation z: dp-accounting's REPLACE_ONE
sensitivity convention, its issue #378, plays no role), mixtures with its identity PLD for the
activation and the coupling pair, its own FFT composition, pessimistic or optimistic rounding.
Needs the ``test`` extra (``pip install 'prirfed[test]'``).
"""

from __future__ import annotations

import math

__all__ = ["gaussian", "activate", "stitched_without_replacement"]


def gaussian(z: float, pessimistic: bool = True, h: float = 1e-4, q: float = 1.0):
    """dp-accounting's PLD of N(0, z^2) vs N(1, z^2); for ``q < 1`` its Poisson remove/add pair."""
    from dp_accounting.pld import privacy_loss_distribution as dpld

    return dpld.from_gaussian_mechanism(z, sensitivity=1.0, value_discretization_interval=h, pessimistic_estimate=pessimistic,
                                        use_connect_dots=pessimistic, sampling_prob=q)


def activate(pld, rho: float, pessimistic: bool = True, h: float = 1e-4):
    """``(1 - rho) identity + rho pld``: the activation with a disjoint U (the coupling pair when rho = q)."""
    from dp_accounting.pld import privacy_loss_distribution as dpld

    return pld if rho == 1 else pld.compute_mixture(dpld.identity(h, pessimistic), rho)


def stitched_without_replacement(z: float, q: float, h: float = 1e-4):
    """prirfed's replace-one without-replacement pair (proofs_notes/accounting_pld.md), built from
    dp-accounting's own pessimistic remove PMF of the Poisson pair: the positive losses of the remove
    pair, their mirror image on the negative side (P-mass at -l is e^{-l} times the mass at +l), the
    rest at 0."""
    from dp_accounting.pld import privacy_loss_distribution as dpld

    rem = gaussian(z, q=q, h=h)._pmf_remove
    masses = rem._loss_probs if hasattr(rem, "_loss_probs") else {rem._lower_loss + i: p for i, p in enumerate(rem._probs)}
    out: dict[int, float] = {}
    for k, p in masses.items():
        if k > 0:
            out[k] = out.get(k, 0.0) + p
            out[-k] = out.get(-k, 0.0) + p * math.exp(-k * h)
    out[0] = 1.0 - sum(out.values()) - rem._infinity_mass
    if out[0] < 0:
        raise ValueError(f"stitched_without_replacement: the mirrored masses exceed 1 (by {-out[0]:.3g})")
    return dpld.PrivacyLossDistribution.create_from_rounded_probability(out, rem._infinity_mass, h)
