r"""Bounds of Han et al. (2024) (Han et al., differentially private Riemannian optimisation), Section 4.

One function per statement, in the paper's symbols, with the statement's preconditions checked
(``ValueError`` naming the violated one). Where the paper leaves a constant unspecified ("for some
constant c", ``O(.)``) only the explicit part is implemented and the constant is a parameter.
Derivations, corrections and the tests that check each line: ``proofs_notes/theorem_001_*.md``.

Notation: ``L0`` geodesic Lipschitz constant of every ``f(.; z)``, ``L1`` smoothness constant,
``d`` intrinsic dimension, ``sigma`` the standard deviation of the tangent Gaussian noise,
``c_l`` the lower bound of the metric tensor in the chosen coordinates (``c_l = 1`` in orthonormal
coordinates, which is how every manifold of this project draws its noise), ``varsigma`` the
curvature constant of Lemma 1, ``n`` the number of samples, ``b`` the batch size.
"""

from __future__ import annotations

import math

import numpy as np

from prirfed.reference.accounting.calibration import paper_sigma_dp_rsgd
from prirfed.reference.checks import check_int, check_real
from prirfed.reference.manifolds.base import zeta

__all__ = [
    "lemma_1_bound",
    "lemma_4_bound",
    "theorem_1_sigma",
    "theorem_2_step_size",
    "theorem_2_bound",
    "theorem_3_step_sizes",
    "theorem_3_bound",
    "theorem_4_bound",
    "theorem_4_bound_printed",
    "theorem_4_T",
    "theorem_5_bound",
]


# ----------------------------------------------------------------------------- checks




def _output(where, output, required):
    if output != required:
        raise ValueError(f"{where}: the theorem is about Algorithm 1 with output {required} (got output={output!r})")


def _batch(where, b, n):
    n = check_int(where, "n", n)
    b = check_int(where, "b", b)
    if b > n:
        raise ValueError(f"{where}: batch size b must be <= n (got b = {b}, n = {n})")
    return b, n


def _c_l(where, c_l):
    c_l = check_real(where, "c_l", c_l)
    if c_l > 1.0:
        raise ValueError(f"{where}: c_l must be <= 1: with the density of Definition 3, E||eps||_w^2 = d sigma^2 "
                         f"for every metric, so d sigma^2 / c_l understates it when c_l > 1 (got c_l = {c_l:.6g}; ERRATA E42)")
    return c_l


def _G2(L0, d, sigma, c_l):
    """L0^2 + d sigma^2 / c_l: the right-hand side of Lemma 4."""
    return L0 * L0 + d * sigma * sigma / c_l


# ----------------------------------------------------------------------------- lemmas
def lemma_1_bound(b: float, c: float, A: float, kappa_min: float, D: float) -> float:
    r"""Lemma 1 of Han et al. (2024) (trigonometric distance bound; Zhang & Sra 2016, Lemma 5).

    For a geodesic triangle in a totally normal neighbourhood of diameter ``D`` with sectional
    curvature ``>= kappa_min``, sides ``b = l_0``, ``c = l_2`` meeting at the angle ``A = theta``
    and opposite side ``a = l_1``:

    .. math:: a^2 \le \varsigma\, b^2 + c^2 - 2 b c \cos A,\qquad
              \varsigma = \zeta(\kappa_{\min}, D).

    Returns the right-hand side. Preconditions: ``0 <= b, c <= D`` (both sides lie in the
    neighbourhood, whose diameter bounds them) and ``0 <= A <= pi``.

    Parameters
    ----------
    b : float
        Side :math:`b = l_0` of the triangle (``lemma_1_bound``); else the batch size.
    c : float
        Side :math:`c = l_2` of the triangle (``lemma_1_bound``); else the paper's unspecified constant.
    A : float
        Angle between the sides ``b`` and ``c``, in :math:`[0, \pi]`.
    kappa_min : float
        Lower bound of the sectional curvature.
    D : float
        Diameter :math:`D_{\mathcal W}` of the domain.

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "lemma_1_bound"
    b = check_real(where, "b", b, allow_zero=True)
    c = check_real(where, "c", c, allow_zero=True)
    D = check_real(where, "D", D, allow_zero=True)
    A = float(A)
    if not (0.0 <= A <= math.pi):
        raise ValueError(f"{where}: the angle A must lie in [0, pi] (got A = {A!r})")
    tol = 1e-12 * max(1.0, D)
    if b > D + tol or c > D + tol:
        raise ValueError(f"{where}: the sides must not exceed the diameter D (got b = {b:.6g}, c = {c:.6g}, D = {D:.6g})")
    vs = zeta(kappa_min, D)
    return vs * b * b + c * c - 2.0 * b * c * math.cos(A)


def lemma_4_bound(L0: float, d: int, sigma: float, c_l: float = 1.0) -> float:
    r"""Lemma 4 of Han et al. (2024): :math:`\mathbb E\|\zeta\|_w^2 \le L_0^2 + d\sigma^2 c_l^{-1}` for
    :math:`\zeta = \frac1b\sum_{z\in\mathcal B}\mathrm{grad} f(w;z) + \epsilon`,
    :math:`\epsilon\sim\mathcal N_w(0,\sigma^2)` (any batch size). With the density of Definition 3,
    :math:`\mathbb E\|\epsilon\|_w^2 = d\sigma^2` exactly for every metric (the proof's
    :math:`\sigma^2\mathrm{tr}(G_w^{-1})` is the Euclidean norm of the coordinates), so the printed
    bound holds only for ``c_l <= 1`` (checked; ERRATA E42); ``c_l = 1`` in orthonormal coordinates.


    Parameters
    ----------
    L0 : float
        Lipschitz constant :math:`L_0` of the per-sample losses.
    d : int
        Dimension of the manifold.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    c_l : float, optional
        Lower bound :math:`c_l` of the metric's eigenvalues in the coordinates used (1 in orthonormal coordinates).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "lemma_4_bound"
    L0 = check_real(where, "L0", L0, allow_zero=True)
    d = check_int(where, "d", d)
    sigma = check_real(where, "sigma", sigma, allow_zero=True)
    c_l = _c_l(where, c_l)
    return _G2(L0, d, sigma, c_l)


# ----------------------------------------------------------------------------- Theorem 1
def theorem_1_sigma(eps: float, delta: float, T: int, L0: float, n: int, c: float = 1.0) -> float:
    r"""Theorem 1 of Han et al. (2024) (Algorithm 1 line 4): :math:`\sigma^2 = c\,T\log(1/\delta)L_0^2/(n^2\epsilon^2)`.

    ``c`` is the paper's unspecified constant ("for some constant c"); the value that makes the
    run :math:`(\epsilon,\delta)`-DP is not given by Han et al. (2024) (Huang et al. (2024) and the authors' code use 1, which is
    not enough: ERRATA E5). Use :mod:`prirfed.reference.accounting.calibration` for a certified
    sigma. This is :func:`~prirfed.reference.accounting.calibration.paper_sigma_dp_rsgd` with
    ``K = T``, ``tau = L0``, ``N_i = n``, ``o = c`` (the same formula, not duplicated).

    Parameters
    ----------
    eps : float
        Target :math:`\epsilon`.
    delta : float
        Target :math:`\delta`.
    T : int
        Number of rounds (iterations).
    L0 : float
        Lipschitz constant :math:`L_0` of the per-sample losses.
    n : int
        Number of samples.
    c : float, optional
        Side :math:`c = l_2` of the triangle (``lemma_1_bound``); else the paper's unspecified constant.

    Returns
    -------
    float
        The noise standard deviation :math:`\sigma`.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    return paper_sigma_dp_rsgd(eps, delta, K=T, tau=L0, N_i=n, o=c)


# ----------------------------------------------------------------------------- Theorem 2
def theorem_2_step_size(D: float, L0: float, d: int, sigma: float, varsigma: float, T: int, c_l: float = 1.0) -> float:
    r"""Step size of Theorem 2 of Han et al. (2024): :math:`\eta = D_{\mathcal W}/\sqrt{(L_0^2+d\sigma^2c_l^{-1})\varsigma T}`.

    Parameters
    ----------
    D : float
        Diameter :math:`D_{\mathcal W}` of the domain.
    L0 : float
        Lipschitz constant :math:`L_0` of the per-sample losses.
    d : int
        Dimension of the manifold.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    varsigma : float
        Curvature constant :math:`\varsigma = \zeta(\kappa_{\min}, D)`.
    T : int
        Number of rounds (iterations).
    c_l : float, optional
        Lower bound :math:`c_l` of the metric's eigenvalues in the coordinates used (1 in orthonormal coordinates).

    Returns
    -------
    float
        The step size :math:`\eta`.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_2_step_size"
    D = check_real(where, "D", D)
    G2 = lemma_4_bound(L0, d, sigma, c_l)
    if G2 <= 0:
        raise ValueError(f"{where}: L0^2 + d sigma^2 / c_l must be > 0 (got L0 = {L0!r}, sigma = {sigma!r})")
    varsigma = _varsigma(where, varsigma)
    T = check_int(where, "T", T)
    return D / math.sqrt(G2 * varsigma * T)


def _varsigma(where, varsigma):
    varsigma = check_real(where, "varsigma", varsigma)
    if varsigma < 1.0:
        raise ValueError(f"{where}: the curvature constant varsigma is >= 1 by definition (got {varsigma!r})")
    return varsigma


def _check_eta(where, eta, expected):
    if eta is None:
        return
    eta = np.asarray(eta, dtype=float)
    expected = np.asarray(expected, dtype=float)
    if eta.shape not in ((), expected.shape) or not np.allclose(eta, expected, rtol=1e-9, atol=0.0):
        raise ValueError(f"{where}: the theorem's step size is {np.array2string(expected, precision=6, threshold=4)}; got eta = "
                         f"{np.array2string(eta, precision=6, threshold=4)}")


def theorem_2_bound(D: float, L0: float, d: int, sigma: float, varsigma: float, T: int, c_l: float = 1.0, *,
                    eta=None, output: int = 3, averaging: str = "convex") -> float:
    r"""Theorem 2 of Han et al. (2024) (geodesically convex, output 3 with weights ``1/(t+1)``):

    .. math:: \mathbb E[F(w^{\rm priv})] - F(w^*) \le D_{\mathcal W}
              \sqrt{\frac{(L_0^2 + d\sigma^2 c_l^{-1})\varsigma}{T}}

    at :math:`\eta_t = D_{\mathcal W}/\sqrt{(L_0^2+d\sigma^2c_l^{-1})\varsigma T}`
    (:func:`theorem_2_step_size`). Preconditions checked: output 3, ``averaging="convex"`` and, if
    ``eta`` is given, that it is the theorem's step size. The assumptions on ``f`` (geodesic
    convexity, ``L0``-Lipschitz, iterates and ``w^*`` in a totally normal ``W`` of diameter ``D``)
    are the caller's to establish. Any batch size (Lemma 4 holds for every ``b``).

    Parameters
    ----------
    D : float
        Diameter :math:`D_{\mathcal W}` of the domain.
    L0 : float
        Lipschitz constant :math:`L_0` of the per-sample losses.
    d : int
        Dimension of the manifold.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    varsigma : float
        Curvature constant :math:`\varsigma = \zeta(\kappa_{\min}, D)`.
    T : int
        Number of rounds (iterations).
    c_l : float, optional
        Lower bound :math:`c_l` of the metric's eigenvalues in the coordinates used (1 in orthonormal coordinates).
    eta : float, optional
        Step size; if given, checked against the theorem's.
    output : int, optional
        Which output of Algorithm 1 (checked against the theorem's).
    averaging : str, optional
        Averaging weights of output 3 (checked against the theorem's).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_2_bound"
    _output(where, output, 3)
    if averaging != "convex":
        raise ValueError(f"{where}: Theorem 2 averages with c_t = 1/(t+1) (averaging='convex'), got averaging={averaging!r}")
    step = theorem_2_step_size(D, L0, d, sigma, varsigma, T, c_l)
    _check_eta(where, eta, step)
    return D * math.sqrt(lemma_4_bound(L0, d, sigma, c_l) * varsigma / T)


# ----------------------------------------------------------------------------- Theorem 3
def theorem_3_step_sizes(beta: float, T: int) -> np.ndarray:
    r"""Step sizes of Theorem 3 of Han et al. (2024): :math:`\eta_t = 1/(\beta(t+1))`, ``t = 0..T-1``.

    Parameters
    ----------
    beta : float
        Strong convexity constant :math:`\beta > 0`.
    T : int
        Number of rounds (iterations).

    Returns
    -------
    numpy.ndarray
        The step sizes :math:`\eta_0, \dots, \eta_{T-1}`.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_3_step_sizes"
    beta = check_real(where, "beta", beta)
    T = check_int(where, "T", T)
    return 1.0 / (beta * (np.arange(T) + 1.0))


def theorem_3_bound(beta: float, L0: float, d: int, sigma: float, varsigma: float, T: int, c_l: float = 1.0, *,
                    eta=None, output: int = 3, averaging: str = "strongly_convex") -> float:
    r"""Theorem 3 of Han et al. (2024) (geodesically ``beta``-strongly convex, output 3 with weights ``2/(t+1)``):

    .. math:: \mathbb E[F(w^{\rm priv})] - F(w^*) \le \frac{2\varsigma(L_0^2 + d\sigma^2c_l^{-1})}{\beta T}

    at :math:`\eta_t = 1/(\beta(t+1))` (:func:`theorem_3_step_sizes`). Strong convexity is
    :math:`F(w')\ge F(w)+\langle\mathrm{grad}F(w),\xi\rangle+\frac\beta2 d^2(w,w')` (Han et al. (2024) §2).
    The printed proof is one line ("adapts [55, Theorem 12]"); see the note for what is and is
    not reproduced. Preconditions checked: output 3, ``averaging="strongly_convex"``, the step sizes.

    Parameters
    ----------
    beta : float
        Strong convexity constant :math:`\beta > 0`.
    L0 : float
        Lipschitz constant :math:`L_0` of the per-sample losses.
    d : int
        Dimension of the manifold.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    varsigma : float
        Curvature constant :math:`\varsigma = \zeta(\kappa_{\min}, D)`.
    T : int
        Number of rounds (iterations).
    c_l : float, optional
        Lower bound :math:`c_l` of the metric's eigenvalues in the coordinates used (1 in orthonormal coordinates).
    eta : float, optional
        Step size; if given, checked against the theorem's.
    output : int, optional
        Which output of Algorithm 1 (checked against the theorem's).
    averaging : str, optional
        Averaging weights of output 3 (checked against the theorem's).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_3_bound"
    _output(where, output, 3)
    if averaging != "strongly_convex":
        raise ValueError(f"{where}: Theorem 3 averages with c_t = 2/(t+1) (averaging='strongly_convex'), got averaging={averaging!r}")
    varsigma = _varsigma(where, varsigma)
    _check_eta(where, eta, theorem_3_step_sizes(beta, T))
    return 2.0 * varsigma * lemma_4_bound(L0, d, sigma, c_l) / (beta * T)


# ----------------------------------------------------------------------------- Theorem 4
def _theorem_4_common(where, Delta0, tau, L0, L1, eta, d, sigma, T, c_l, b, n, output):
    _output(where, output, 1)
    Delta0 = check_real(where, "Delta0", Delta0, allow_zero=True)
    tau = check_real(where, "tau", tau)
    L0 = check_real(where, "L0", L0, allow_zero=True)
    L1 = check_real(where, "L1", L1)
    eta = check_real(where, "eta", eta)
    d = check_int(where, "d", d)
    sigma = check_real(where, "sigma", sigma, allow_zero=True)
    T = check_int(where, "T", T, low=0)
    c_l = _c_l(where, c_l)
    b, n = _batch(where, b, n)
    if not eta < 1.0 / L1:
        raise ValueError(f"{where}: Theorem 4 needs eta < 1/L1 (got eta = {eta:.6g}, 1/L1 = {1 / L1:.6g})")
    return Delta0, tau, L0, L1, eta, d, sigma, T, c_l, b, n


def theorem_4_bound(Delta0: float, tau: float, L1: float, eta: float, d: int, sigma: float, T: int, c_l: float = 1.0, *,
                    L0: float = 0.0, b: int = 1, n: int = 1, output: int = 1) -> float:
    r"""Theorem 4 of Han et al. (2024) (Riemannian PL), explicit bound as derived in the note (printed one: E40).

    PL as Han et al. (2024) defines it: :math:`F(w)-F(w^*)\le\tau\|\mathrm{grad}F(w)\|_w^2`. With
    :math:`\eta<1/L_1`, output 1 (:math:`w^{\rm priv}=w_T`), :math:`\Delta_0 = F(w_0)-F(w^*)`:

    - full batch (``b == n``): :math:`\mathbb E F(w_T)-F^* \le (1-\frac{\eta}{2\tau})^T\Delta_0
      + \tau L_1\eta\, d\sigma^2 c_l^{-1}`;
    - ``b < n``: :math:`\le (1-\frac{\eta}{\tau})^T\Delta_0 + \frac{\tau L_1\eta}{2}(L_0^2+d\sigma^2c_l^{-1})`
      (needs ``eta <= tau``; ``L0`` must then be given).

    Preconditions checked: output 1, ``eta < 1/L1``, ``tau >= 1/(2 L1)`` (implied by
    ``L1``-smoothness for any non-constant ``F``: otherwise the assumptions are inconsistent).
    ``T`` is free here; :func:`theorem_4_T` gives the paper's choice.

    Parameters
    ----------
    Delta0 : float
        Initial gap :math:`\Delta_0 = F(w_0) - F(w^*)`.
    tau : float
        Polyak-Lojasiewicz constant :math:`\tau` (Han et al. (2024)'s definition).
    L1 : float
        Smoothness constant :math:`L_1`.
    eta : float
        Step size; if given, checked against the theorem's.
    d : int
        Dimension of the manifold.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    T : int
        Number of rounds (iterations).
    c_l : float, optional
        Lower bound :math:`c_l` of the metric's eigenvalues in the coordinates used (1 in orthonormal coordinates).
    L0 : float, optional
        Lipschitz constant :math:`L_0` of the per-sample losses.
    b : float, optional
        Side :math:`b = l_0` of the triangle (``lemma_1_bound``); else the batch size.
    n : int, optional
        Number of samples.
    output : int, optional
        Which output of Algorithm 1 (checked against the theorem's).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_4_bound"
    Delta0, tau, L0, L1, eta, d, sigma, T, c_l, b, n = _theorem_4_common(
        where, Delta0, tau, L0, L1, eta, d, sigma, T, c_l, b, n, output)
    if tau < 1.0 / (2.0 * L1):
        raise ValueError(f"{where}: an L1-smooth F with F - F* <= tau ||grad F||^2 has tau >= 1/(2 L1) "
                         f"(got tau = {tau:.6g}, 1/(2 L1) = {1 / (2 * L1):.6g})")
    if b == n:
        return (1.0 - eta / (2.0 * tau)) ** T * Delta0 + tau * L1 * eta * d * sigma * sigma / c_l
    if eta > tau:
        raise ValueError(f"{where}: the stochastic case (b < n) needs eta <= tau (got eta = {eta:.6g}, tau = {tau:.6g})")
    return (1.0 - eta / tau) ** T * Delta0 + 0.5 * tau * L1 * eta * _G2(L0, d, sigma, c_l)


def theorem_4_bound_printed(Delta0: float, tau: float, L1: float, eta: float, d: int, sigma: float, T: int,
                            c_l: float = 1.0, *, output: int = 1) -> float:
    r"""The explicit bound printed in the proof of Theorem 4 of Han et al. (2024) (full batch):
    :math:`(1-\frac{\tau\eta}{2})^T\Delta_0 + \frac{d\sigma^2c_l^{-1}}{2\tau}`, with the printed
    precondition :math:`\eta<\min\{1/L_1, 1/\tau\}`. Kept to show the erratum E40 (it is violated
    under Han et al.'s (2024) PL definition and, by a factor up to 2, under the reciprocal one its proof uses).


    Parameters
    ----------
    Delta0 : float
        Initial gap :math:`\Delta_0 = F(w_0) - F(w^*)`.
    tau : float
        Polyak-Lojasiewicz constant :math:`\tau` (Han et al. (2024)'s definition).
    L1 : float
        Smoothness constant :math:`L_1`.
    eta : float
        Step size; if given, checked against the theorem's.
    d : int
        Dimension of the manifold.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    T : int
        Number of rounds (iterations).
    c_l : float, optional
        Lower bound :math:`c_l` of the metric's eigenvalues in the coordinates used (1 in orthonormal coordinates).
    output : int, optional
        Which output of Algorithm 1 (checked against the theorem's).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_4_bound_printed"
    Delta0, tau, _, L1, eta, d, sigma, T, c_l, _, _ = _theorem_4_common(
        where, Delta0, tau, 0.0, L1, eta, d, sigma, T, c_l, 1, 1, output)
    if not eta < 1.0 / tau:
        raise ValueError(f"{where}: the printed Theorem 4 needs eta < 1/tau (got eta = {eta:.6g}, 1/tau = {1 / tau:.6g})")
    return (1.0 - tau * eta / 2.0) ** T * Delta0 + d * sigma * sigma / (2.0 * tau * c_l)


def theorem_4_T(n: int, eps: float, delta: float, d: int, L0: float, c_l: float = 1.0) -> float:
    r"""The paper's choice in Theorem 4 of Han et al. (2024): :math:`T=\log\big(n^2\epsilon^2c_l/(dL_0^2\log(1/\delta))\big)`
    (a real number; round it up to run). Raises if it is not positive (the theorem then says nothing).


    Parameters
    ----------
    n : int
        Number of samples.
    eps : float
        Target :math:`\epsilon`.
    delta : float
        Target :math:`\delta`.
    d : int
        Dimension of the manifold.
    L0 : float
        Lipschitz constant :math:`L_0` of the per-sample losses.
    c_l : float, optional
        Lower bound :math:`c_l` of the metric's eigenvalues in the coordinates used (1 in orthonormal coordinates).

    Returns
    -------
    float
        The paper's :math:`T` (a real number).

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_4_T"
    n = check_int(where, "n", n)
    eps = check_real(where, "eps", eps)
    delta = check_real(where, "delta", delta)
    if delta >= 1:
        raise ValueError(f"{where}: delta must be in (0, 1) (got {delta!r})")
    d = check_int(where, "d", d)
    L0 = check_real(where, "L0", L0)
    c_l = _c_l(where, c_l)
    T = math.log(n * n * eps * eps * c_l / (d * L0 * L0 * math.log(1.0 / delta)))
    if T <= 0:
        raise ValueError(f"{where}: T = log(n^2 eps^2 c_l / (d L0^2 log(1/delta))) = {T:.6g} is not positive")
    return T


# ----------------------------------------------------------------------------- Theorem 5
def theorem_5_bound(Delta0: float, L1: float, d: int, sigma: float, T: int, c_l: float = 1.0, *, eta: float | None = None,
                    L0: float = 0.0, b: int = 1, n: int = 1, output: int = 2) -> float:
    r"""Theorem 5 of Han et al. (2024) (nonconvex), explicit bound of its proof, output 2 (uniform over
    :math:`w_0..w_{T-1}`), :math:`\eta = 1/L_1`:

    - full batch: :math:`\mathbb E\|\mathrm{grad}F(w^{\rm priv})\|^2 \le \frac{2L_1\Delta_0}{T} + d\sigma^2c_l^{-1}`;
    - ``b < n``: :math:`\le \frac{L_1\Delta_0}{T} + \frac{L_0^2 + d\sigma^2c_l^{-1}}{2}`.

    ``Delta0`` bounds :math:`F(w_0) - \inf F`. The printed left-hand side
    :math:`\mathbb E\|F(w^{\rm priv})\|^2` means the gradient norm (notation). Preconditions
    checked: output 2 and, if given, ``eta == 1/L1``. The theorem's ``T`` is free here (the
    printed choice only balances the two terms).

    Parameters
    ----------
    Delta0 : float
        Initial gap :math:`\Delta_0 = F(w_0) - F(w^*)`.
    L1 : float
        Smoothness constant :math:`L_1`.
    d : int
        Dimension of the manifold.
    sigma : float or array_like
        Noise standard deviation, a scalar or one per agent (>= 0).
    T : int
        Number of rounds (iterations).
    c_l : float, optional
        Lower bound :math:`c_l` of the metric's eigenvalues in the coordinates used (1 in orthonormal coordinates).
    eta : float, optional
        Step size; if given, checked against the theorem's.
    L0 : float, optional
        Lipschitz constant :math:`L_0` of the per-sample losses.
    b : float, optional
        Side :math:`b = l_0` of the triangle (``lemma_1_bound``); else the batch size.
    n : int, optional
        Number of samples.
    output : int, optional
        Which output of Algorithm 1 (checked against the theorem's).

    Returns
    -------
    float
        The right-hand side of the bound.

    Raises
    ------
    ValueError
        If a precondition of the result is violated or an argument is out of range (the message names it).
    """
    where = "theorem_5_bound"
    _output(where, output, 2)
    Delta0 = check_real(where, "Delta0", Delta0, allow_zero=True)
    L1 = check_real(where, "L1", L1)
    d = check_int(where, "d", d)
    sigma = check_real(where, "sigma", sigma, allow_zero=True)
    T = check_int(where, "T", T)
    c_l = _c_l(where, c_l)
    L0 = check_real(where, "L0", L0, allow_zero=True)
    b, n = _batch(where, b, n)
    if eta is not None:
        _check_eta(where, eta, 1.0 / L1)
    if b == n:
        return 2.0 * L1 * Delta0 / T + d * sigma * sigma / c_l
    return L1 * Delta0 / T + 0.5 * _G2(L0, d, sigma, c_l)
