r"""Bounds of Li and Ma (2023) (Li and Ma, federated learning on Riemannian manifolds): Lemma 6, Theorems 7 and 9.

One function per statement, in the paper's symbols, preconditions checked (``ValueError`` naming
the violated one). Theorem 8 is not implemented: its constant :math:`\rho` is "an absolute
constant specified in the proof", its step size is :math:`\eta\le\mathcal O(1/(nL\zeta^2))`, and the
proof's explicit values do not fit together (see ``proofs_notes/theorem_002_theorem_7.md``, section on Theorem 8).
Derivations and tests: ``proofs_notes/theorem_002_*.md``.

``L`` is the smoothness constant of :math:`f = \frac1n\sum_i f_i` in the sense of Li and Ma (2023) Definition 4
(:math:`f(y)\le f(x)+\langle\mathrm{grad}f(x),\mathrm{Exp}_x^{-1}y\rangle+\frac L2 d^2(x,y)`); Li and Ma's (2023)
Assumption 1 takes :math:`L=\sum_iL_i`, which is one valid (loose) choice.
"""

from __future__ import annotations

import numpy as np

from prirfed.reference.checks import check_int, check_real
from prirfed.reference.manifolds.base import zeta

__all__ = ["lemma_6_bound", "theorem_7_bound", "theorem_7_bound_printed", "theorem_9_bound", "theorem_9_bound_printed"]






def _rfedsvrg_settings(where, option, tau, required_option=1):
    if option != required_option:
        raise ValueError(f"{where}: the theorem is about Algorithm 1 with Option {required_option} (got option={option!r})")
    taus = np.atleast_1d(np.asarray(tau))
    if taus.size == 0 or np.any(taus != 1):
        raise ValueError(f"{where}: the theorem needs tau_i = 1 local step for every agent (got tau={tau!r})")


def _theorem_7_settings(where, Delta0, L, eta, T, option, tau):
    """Theorem 7's preconditions (Algorithm 1, Option 1, tau_i = 1, eta <= 1/L) and constants, checked."""
    _rfedsvrg_settings(where, option, tau)
    Delta0 = check_real(where, "Delta0", Delta0, allow_zero=True)
    L = check_real(where, "L", L)
    eta = check_real(where, "eta", eta)
    T = check_int(where, "T", T)
    if eta > 1.0 / L * (1 + 1e-12):
        raise ValueError(f"{where}: Theorem 7 needs eta <= 1/L (got eta = {eta:.6g}, 1/L = {1 / L:.6g})")
    return Delta0, L, eta, T


def lemma_6_bound(distances) -> float:
    r"""Lemma 6 of Li and Ma (2023): for the tangent space consensus (8),
    :math:`d(x_{t+1},x_t)\le\frac1k\sum_{i\in S_t}d(x^{(i)},x_t)`.

    ``distances`` are :math:`d(x^{(i)}, x_t)` for the ``k`` uploaded points; returns their mean.
    Valid whenever every :math:`\mathrm{Exp}_{x_t}^{-1}(x^{(i)})` is the minimising logarithm and
    :math:`\mathrm{Exp}_{x_t}` is minimising on their mean (inside the injectivity radius), so that
    :math:`d(x_t,\mathrm{Exp}_{x_t}v)=\|v\|` (the proof's first equality).

    Parameters
    ----------
    distances : array_like
        Distances :math:`d(x^{(i)}, x_t)` of the uploaded points.

    Returns
    -------
    float
        The mean of ``distances``, the bound on :math:`d(x_{t+1}, x_t)`.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "lemma_6_bound"
    d = np.asarray(distances, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"{where}: distances must be a non-empty 1-D array (got shape {d.shape})")
    if not np.all(np.isfinite(d)) or np.any(d < 0):
        raise ValueError(f"{where}: distances must be finite and >= 0 (min = {np.nanmin(d) if np.any(np.isfinite(d)) else 'nan'})")
    return float(np.mean(d))


def theorem_7_bound(Delta0: float, L: float, eta: float, T: int, *, option: int = 1, tau=1) -> float:
    r"""Theorem 7 of Li and Ma (2023) (nonconvex, :math:`\tau_i=1`, Option 1), explicit and corrected (E41):

    .. math:: \min_{t=0,\dots,T-1}\|\mathrm{grad}f(x_t)\|^2 \le
              \frac{\Delta_0}{T\,\eta(1-\eta L/2)},\qquad \Delta_0 = f(x_0)-f^*,

    for :math:`0<\eta\le1/L`, any :math:`k`. At :math:`\eta=1/L` this is :math:`2L\Delta_0/T`, the
    printed :math:`\mathcal O(L\Delta_0/T)` with the proof's constant 2; for smaller :math:`\eta` the
    printed rate is false (it would need :math:`\eta` bounded below by a multiple of :math:`1/L`).
    The printed :math:`\min_{t=0..T}` needs :math:`x_{T+1}`, one round more than ``T`` rounds give.

    Parameters
    ----------
    Delta0 : float
        Initial gap :math:`\Delta_0 = f(x_0) - f^*`.
    L : float
        Smoothness constant :math:`L`.
    eta : float
        Step size.
    T : int
        Number of rounds (iterations).
    option : int, optional
        The algorithm's output option (checked against the theorem's).
    tau : int, optional
        Local steps :math:`\tau_i` (checked against the theorem's).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_7_bound"
    Delta0, L, eta, T = _theorem_7_settings(where, Delta0, L, eta, T, option, tau)
    return Delta0 / (T * eta * (1.0 - eta * L / 2.0))


def theorem_7_bound_printed(Delta0: float, L: float, eta: float, T: int, *, option: int = 1, tau=1) -> float:
    r"""The bound of the proof of Theorem 7 of Li and Ma (2023) as printed, :math:`2L\Delta_0/T` (its step
    :math:`f(x_{t+1})-f(x_t)\le-\frac1{2L}\|\mathrm{grad}f(x_t)\|^2` "by taking :math:`\eta\le1/L`"),
    with the printed precondition :math:`\eta\le1/L`. Kept to show the erratum E41.


    Parameters
    ----------
    Delta0 : float
        Initial gap :math:`\Delta_0 = f(x_0) - f^*`.
    L : float
        Smoothness constant :math:`L`.
    eta : float
        Step size.
    T : int
        Number of rounds (iterations).
    option : int, optional
        The algorithm's output option (checked against the theorem's).
    tau : int, optional
        Local steps :math:`\tau_i` (checked against the theorem's).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_7_bound_printed"
    Delta0, L, eta, T = _theorem_7_settings(where, Delta0, L, eta, T, option, tau)
    return 2.0 * L * Delta0 / T


def _theorem_9_common(where, L, eta, T, kappa_min, D, option, tau, k, n):
    _rfedsvrg_settings(where, option, tau)
    n = check_int(where, "n", n)
    k = check_int(where, "k", k)
    if k != n:
        raise ValueError(f"{where}: Theorem 9 needs full participation S_t = [n] (got k = {k}, n = {n})")
    L = check_real(where, "L", L)
    eta = check_real(where, "eta", eta)
    T = check_int(where, "T", T)
    D = check_real(where, "D", D)
    if eta > 1.0 / (2.0 * L) * (1 + 1e-12):
        raise ValueError(f"{where}: Theorem 9 needs eta <= 1/(2L) (got eta = {eta:.6g}, 1/(2L) = {1 / (2 * L):.6g})")
    return L, eta, T, zeta(kappa_min, D), D


def theorem_9_bound(Delta0: float, dist0: float, L: float, eta: float, T: int, kappa_min: float, D: float, *,
                    option: int = 1, tau=1, k: int = 1, n: int = 1) -> float:
    r"""Theorem 9 of Li and Ma (2023) (geodesically convex :math:`f_i`, :math:`\tau_i=1`, :math:`S_t=[n]`, Option 1,
    :math:`\eta\le1/(2L)`), the explicit bound its proof gives once the telescoping is redone:

    .. math:: f(x_T)-f^* \le \frac{(\zeta-1)\Delta_0 + d^2(x_0,x^*)/(2\eta)}{\zeta+T-1},

    :math:`\zeta=\zeta(\kappa_{\min},D)` of (11) with ``D`` the diameter of the set of Assumption 2,
    ``dist0`` :math:`=d(x_0,x^*)\le D`, ``Delta0`` :math:`=f(x_0)-f^*`.

    Parameters
    ----------
    Delta0 : float
        Initial gap :math:`\Delta_0 = f(x_0) - f^*`.
    dist0 : float
        Initial distance :math:`d(x_0, x^*) \le D`.
    L : float
        Smoothness constant :math:`L`.
    eta : float
        Step size.
    T : int
        Number of rounds (iterations).
    kappa_min : float
        Lower bound of the sectional curvature.
    D : float
        Diameter of the set of Assumption 2.
    option : int, optional
        The algorithm's output option (checked against the theorem's).
    tau : int, optional
        Local steps :math:`\tau_i` (checked against the theorem's).
    k : int, optional
        Agents per round (checked against the theorem's :math:`S_t = [n]`).
    n : int, optional
        Number of agents.

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_9_bound"
    L, eta, T, z, D = _theorem_9_common(where, L, eta, T, kappa_min, D, option, tau, k, n)
    Delta0 = check_real(where, "Delta0", Delta0, allow_zero=True)
    dist0 = check_real(where, "dist0", dist0, allow_zero=True)
    if dist0 > D * (1 + 1e-12):
        raise ValueError(f"{where}: d(x_0, x*) must not exceed the diameter D (got {dist0:.6g} > {D:.6g})")
    return ((z - 1.0) * Delta0 + dist0 * dist0 / (2.0 * eta)) / (z + T - 1.0)


def theorem_9_bound_printed(L: float, eta: float, T: int, kappa_min: float, D: float, *,
                            option: int = 1, tau=1, k: int = 1, n: int = 1) -> float:
    r"""(24) of Li and Ma (2023), the last line of the proof of Theorem 9: :math:`\zeta D^2/(2\eta(\zeta+T-2))`.
    It is implied by :func:`theorem_9_bound` (a weaker but valid statement; undefined at
    :math:`\zeta=1,T=1`, where this raises).


    Parameters
    ----------
    L : float
        Smoothness constant :math:`L`.
    eta : float
        Step size.
    T : int
        Number of rounds (iterations).
    kappa_min : float
        Lower bound of the sectional curvature.
    D : float
        Diameter of the set of Assumption 2.
    option : int, optional
        The algorithm's output option (checked against the theorem's).
    tau : int, optional
        Local steps :math:`\tau_i` (checked against the theorem's).
    k : int, optional
        Agents per round (checked against the theorem's :math:`S_t = [n]`).
    n : int, optional
        Number of agents.

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_9_bound_printed"
    L, eta, T, z, D = _theorem_9_common(where, L, eta, T, kappa_min, D, option, tau, k, n)
    if z + T - 2.0 <= 0:
        raise ValueError(f"{where}: (24) divides by zeta + T - 2 = {z + T - 2.0:.3g} (zeta = 1, T = 1)")
    return z * D * D / (2.0 * eta * (z + T - 2.0))
