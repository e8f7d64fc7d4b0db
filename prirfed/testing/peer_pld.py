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
    """dp-accounting's PLD of :math:`N(0, z^2)` against :math:`N(1, z^2)`; for ``q < 1`` its Poisson-subsampled remove/add pair.

    Parameters
    ----------
    z : float
        Noise standard deviation in units of the sensitivity.
    pessimistic : bool, optional
        Pessimistic (upper-bound) rounding and connect-the-dots, else optimistic (default True).
    h : float, optional
        Value discretisation interval (default 1e-4).
    q : float, optional
        Poisson sampling probability (default 1, no sampling).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        The peer library's PLD.
    """
    from dp_accounting.pld import privacy_loss_distribution as dpld

    return dpld.from_gaussian_mechanism(z, sensitivity=1.0, value_discretization_interval=h, pessimistic_estimate=pessimistic,
                                        use_connect_dots=pessimistic, sampling_prob=q)


def activate(pld, rho: float, pessimistic: bool = True, h: float = 1e-4):
    r"""The activation :math:`(1 - \rho)\,\mathrm{identity} + \rho\,\mathrm{pld}` with a disjoint U, in dp-accounting (the coupling pair when :math:`\rho = q`).

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        The PLD of the activated mechanism.
    rho : float
        Activation probability.
    pessimistic : bool, optional
        Rounding of the identity PLD (default True).
    h : float, optional
        Value discretisation interval (default 1e-4).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        The mixture.
    """
    from dp_accounting.pld import privacy_loss_distribution as dpld

    return pld if rho == 1 else pld.compute_mixture(dpld.identity(h, pessimistic), rho)


def stitched_without_replacement(z: float, q: float, h: float = 1e-4):
    """prirfed's replace-one without-replacement pair (proofs note ``accounting_pld``) built from dp-accounting's pessimistic remove PMF of the Poisson pair.

    The positive losses of the remove pair, their mirror image on the negative side (the mass at
    :math:`-l` is :math:`e^{-l}` times the mass at :math:`+l`), the rest at 0.

    Parameters
    ----------
    z : float
        Noise standard deviation in units of the sensitivity.
    q : float
        Sampling ratio.
    h : float, optional
        Value discretisation interval (default 1e-4).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        The symmetric pair, as a dp-accounting PLD.
    """
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
