"""Riemannian (stochastic) gradient descent and DP-RGD/DP-RSGD of Han et al. (2024) (Algorithm 1).

The single-dataset trainers see the federated problem's data pooled: sample number g in
[0, n), n = sum_i N_i, is sample j of agent i in concatenation order. Since p_i = N_i / n, the
pooled mean (1/n) sum_g f_g is the global objective f of (2.1).

``maps="retraction"`` uses the manifold's retraction and its inverse in place of Exp and Log.

Randomness (the policy in :mod:`prirfed.reference.randomness`): the run key is drawn once from the
caller's Generator; step t of RSGD / DP-RGD reads the stream ``agent_stream(key, t, 0)`` (the pooled
data are agent 0): the batch (``batch_indices(stream, n, b)``: none drawn for a full batch b = n) then, if sigma > 0, the
tangent noise (``tangent_noise``, the O(dim) closed form); Output 2 draws ``integers(0, T)`` from
``server_stream(key, T)`` at the end. RGD draws nothing.
"""

from __future__ import annotations

import math

import numpy as np

from prirfed.reference.checks import check_int, real_or_nan
from prirfed.reference.manifolds.retracted import geometry

from prirfed.reference.randomness import agent_stream, run_key, server_stream

from .base import (History, TrainResult, check_flag, check_generator, check_nonnegative, check_tau, is_choice, record_schedule,
                   batch_indices)
from .local import clip_or_identity, tangent_noise
from .prirfed import step_sizes
from .privacy import dp_rgd_run_event

__all__ = ["rgd", "dp_rgd", "rsgd", "pooled_index", "dp_rgd_settings", "rgd_settings"]


def pooled_index(problem, g: int) -> tuple[int, int]:
    """Map a pooled sample number g to (agent i, sample j).

    Helper, not a paper formula: index bookkeeping.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    g : int
        Pooled sample number.

    Returns
    -------
    i, j : int
        Agent and sample.

    Raises
    ------
    ValueError
        If ``g`` is not below the number of samples.
    """
    for i, n_i in enumerate(problem.sizes):
        if g < n_i:
            return i, g
        g -= n_i
    raise ValueError(f"pooled_index: sample number out of range (n = {sum(problem.sizes)})")


def rgd_settings(where: str, problem, T, alpha, record_every, gtol, armijo, c, shrink, keep_iterates=False):
    """The settings of :func:`rgd` that both twins check the same way.

    T >= 0 steps, the step sizes (:func:`~prirfed.reference.trainers.prirfed.step_sizes`),
    record_every >= 1 or "auto" (:func:`~prirfed.reference.trainers.base.record_schedule`, a step
    reads all n samples), gtol a number >= 0 (inf stops at once), armijo True or False and, with the
    line search, c and shrink in (0, 1) (Absil, Mahony, Sepulchre 2008, Algorithm 1),
    keep_iterates True or False.

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`); its samples are pooled.
    T : int
        Steps, >= 0.
    alpha : float, sequence or callable
        Step sizes (read only when T > 0).
    record_every : int or str
        History period, an int >= 1 or ``"auto"``.
    gtol : float
        Gradient-norm tolerance, >= 0.
    armijo : bool
        Whether the Armijo line search is used.
    c, shrink : float
        Armijo's sufficient-decrease constant and step shrink factor, each in (0, 1) (checked only
        with ``armijo=True``).
    keep_iterates : bool, optional
        Must be True or False (default False).

    Returns
    -------
    T : int
        Steps.
    alphas : numpy.ndarray
        Step sizes, shape ``(T,)``.
    record_every : int
        The resolved history period.
    gtol : float
        The tolerance as a float.

    Raises
    ------
    ValueError
        If a setting is out of range or not a number of the right kind.
    """
    T = check_int(where, "T", T, 0)
    alphas = step_sizes(where, alpha, T) if T > 0 else np.zeros(0)
    n = int(sum(problem.sizes))
    record_every = record_schedule(where, record_every, T, n, n)
    g = real_or_nan(gtol)
    if not g >= 0:
        raise ValueError(f"{where}: gtol must be >= 0 (got {gtol!r})")
    if check_flag(where, "armijo", armijo):
        for name, value in (("c", c), ("shrink", shrink)):
            if not 0 < real_or_nan(value) < 1:
                raise ValueError(f"{where}: the Armijo parameter {name} must be in (0, 1) (got {value!r})")
    check_flag(where, "keep_iterates", keep_iterates)
    return T, alphas, record_every, g


def rgd(problem, x0, alpha, T, *, armijo=False, c=1e-4, shrink=0.5, record_every="auto", keep_iterates=False,
        gtol=0.0, maps="exp"):
    """Riemannian steepest descent ``x_{t+1} = Exp_{x_t}(-alpha_t grad f(x_t))``.

    With ``armijo=True``, alpha is the initial trial step of a backtracking line search accepting
    f(Exp_x(-a g)) <= f(x) - c a ||g||^2, a <- shrink * a (Absil, Mahony, Sepulchre 2008, Alg. 1); after
    60 trial steps without one, it raises ``ValueError`` naming the last a.
    Stops early when ||grad f|| <= gtol, and (Armijo) when the first trial decrease
    alpha ||grad f||^2 is below the rounding level ``4 eps (1 + |f(x)|)`` of f, where the sufficient
    decrease condition can no longer be evaluated; ``info["stopped"]`` says why. A line search that
    fails anywhere else raises.

    Absil, Mahony and Sepulchre (2008), Algorithm 1 (Armijo) and Section 4.2.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    x0 : numpy.ndarray
        Start point.
    alpha : float or sequence
        Step sizes (the initial trial step with ``armijo``).
    T : int
        Iterations, >= 0.
    armijo : bool, optional
        Backtracking line search (default ``False``).
    c : float, optional
        Sufficient-decrease constant (default 1e-4).
    shrink : float, optional
        Backtracking factor (default 0.5).
    record_every : int or str, optional
        History period (1: every round); ``"auto"`` (default): :func:`~prirfed.reference.trainers.base.record_schedule`.
    keep_iterates : bool, optional
        Keep the recorded iterates in the history (default ``False``).
    gtol : float, optional
        Stop when the gradient norm is at most this (default 0).
    maps : str, optional
        ``"exp"`` (Exp/Log, default) or ``"retraction"`` (the retraction and its inverse).

    Returns
    -------
    TrainResult
        Final point and history; ``info["stopped"]`` says why it stopped early.

    Raises
    ------
    ValueError
        If a setting is out of range, or the Armijo search finds no acceptable step.
    """
    where = "rgd"
    M = geometry(problem.manifold, maps, where)
    T, alphas, record_every, gtol = rgd_settings(where, problem, T, alpha, record_every, gtol, armijo, c, shrink,
                                                 keep_iterates)
    x = M.check_point(x0, where=where)
    hist = History()
    hist.record(problem, 0, x, keep_iterates)
    stopped = None
    for t in range(T):
        g = problem.grad(x)
        gn2 = M.inner(x, g, g)
        if math.sqrt(gn2) <= gtol:
            stopped = f"||grad f|| <= gtol at iteration {t}"
            break
        a = float(alphas[t])
        if armijo:
            fx = problem.f(x)
            if a * gn2 <= 4.0 * np.finfo(float).eps * (1.0 + abs(fx)):
                stopped = f"stationary to working precision at iteration {t} (alpha ||grad||^2 below f's rounding)"
                break
            for _ in range(60):
                y = M.exp(x, -a * g)
                if problem.f(y) <= fx - c * a * gn2:
                    break
                a *= shrink
            else:
                raise ValueError(f"rgd: Armijo backtracking found no acceptable step (last a = {a:.3e}, "
                                 f"||grad f|| = {math.sqrt(gn2):.3e})")
            x = y
        else:
            x = M.exp(x, -a * g)
        if (t + 1) % record_every == 0 or t + 1 == T:
            hist.record(problem, t + 1, x, keep_iterates)
    if stopped is not None and hist.rounds[-1] != t:
        hist.record(problem, t, x, keep_iterates)
    return TrainResult(x=x, history=hist, info=dict(stopped=stopped))


def dp_rgd_settings(where: str, problem, T, b, sigma, output, averaging, alpha, *, tau=math.inf, lipschitz=None,
                    record_every="auto", keep_iterates=False):
    """The settings of Han et al.'s (2024) Algorithm 1 that both twins check the same way.

    T >= 1 steps, the batch b in [1, n] over the n pooled samples, sigma finite and >= 0, output
    1-3, the averaging rule, the step sizes, the clipping threshold tau > 0 (inf: none), the
    Lipschitz bound L_0 (None or a number > 0), record_every (an int >= 1 or "auto":
    :func:`~prirfed.reference.trainers.base.record_schedule`, a step reads b samples) and
    keep_iterates True or False.

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    T : int
        Rounds (steps), >= 1.
    b : int
        Batch size, in [1, n] over the n pooled samples.
    sigma : float
        Noise standard deviation, finite and >= 0.
    output : int
        1, 2 or 3.
    averaging : str
        ``"convex"`` or ``"strongly_convex"``.
    alpha : float, sequence or callable
        Step sizes (:func:`~prirfed.reference.trainers.prirfed.step_sizes`).
    tau : float, optional
        Clipping threshold, > 0 (default ``inf``: no clipping).
    lipschitz : float or None, optional
        Bound :math:`L_0` on every per-sample gradient norm, > 0 (default None).
    record_every : int or str, optional
        History period, an int >= 1 or ``"auto"`` (default).
    keep_iterates : bool, optional
        Must be True or False (default False).

    Returns
    -------
    T, n, b : int
        Steps, pooled samples, batch size.
    alphas : numpy.ndarray
        Step sizes, shape ``(T,)``.
    record_every : int
        The resolved history period.
    sigma, tau : float
        Noise standard deviation and clipping threshold as floats.
    lipschitz : float or None
        :math:`L_0` as a float, None when not given.

    Raises
    ------
    ValueError
        If a setting is out of range, not a number of the right kind, or unknown.
    """
    T = check_int(where, "T", T)
    n = int(sum(problem.sizes))
    b = check_int(where, "b", b, 1, n)
    sigma = check_nonnegative(where, "sigma", sigma)
    if not is_choice(output, (1, 2, 3)):
        raise ValueError(f"{where}: output must be 1, 2 or 3 (got {output!r})")
    if not is_choice(averaging, ("convex", "strongly_convex")):
        raise ValueError(f"{where}: averaging must be 'convex' or 'strongly_convex' (got {averaging!r})")
    tau = check_tau(where, "tau", tau)
    if lipschitz is not None:
        L0 = real_or_nan(lipschitz)
        if not L0 > 0:
            raise ValueError(f"{where}: lipschitz (L_0) must be None or a number > 0 (got {lipschitz!r})")
        lipschitz = L0
    alphas = step_sizes(where, alpha, T)
    record_every = record_schedule(where, record_every, T, n, b)
    check_flag(where, "keep_iterates", keep_iterates)
    return T, n, b, alphas, record_every, sigma, tau, lipschitz


def dp_rgd(problem, x0, alpha, T, b, sigma, rng, *, output=1, tau=math.inf, lipschitz=None, averaging="convex",
           record_every="auto", keep_iterates=False, maps="exp"):
    r"""Algorithm 1 of Han et al. (2024): differentially private Riemannian (stochastic) gradient descent.

    The algorithm box, line by line:

    .. code-block:: text

        for t = 0..T-1:
          3: B_t of size b, uniformly without replacement;
          4: zeta_t = (1/b) sum_{z in B_t} grad f(w_t; z) + eps_t,  eps_t ~ N_{w_t}(0, sigma^2);
          5: w_{t+1} = Exp_{w_t}(-eta_t zeta_t).
        Output 1: w_T.  Output 2: uniform from {w_0, ..., w_{T-1}}.
        Output 3: geodesic averaging (Theorems 2 and 3): wbar_1 = w_1,
          wbar_{t+1} = Exp_{wbar_t}(c_t Log_{wbar_t}(w_{t+1})), c_t = 1/(t+1) ("convex", Thm 2) or
          2/(t+1) ("strongly_convex", Thm 3).

    The box prints :math:`\operatorname{Exp}^{-1}_{\bar x_t}(x_{t+1})` in Theorem 2 (notation slip).
    Han et al. (2024) bound the sensitivity with the Lipschitz constant :math:`L_0` and do not
    clip; ``tau`` < inf adds the clipping of Huang et al. (2024), Algorithm 2. sigma = 0, tau = inf,
    b = n is RGD; sigma = 0 is RSGD. ``lipschitz`` (a bound on every per-sample gradient norm)
    makes the run's event computable without clipping; with both, the smaller radius bounds the
    sensitivity.

    Parameters
    ----------
    problem : FederatedProblem
        The problem; its samples are pooled (:func:`pooled_index`).
    x0 : numpy.ndarray
        Start point.
    alpha : float, sequence or callable
        Step sizes :math:`\eta_t`.
    T : int
        Steps, >= 1.
    b : int
        Batch size, in [1, n].
    sigma : float
        Noise standard deviation, finite and >= 0.
    rng : numpy.random.Generator
        The caller's Generator.
    output : int, optional
        Output 1 (default), 2 or 3.
    tau : float, optional
        Clipping threshold (default ``inf``: none).
    lipschitz : float or None, optional
        Bound :math:`L_0` on every per-sample gradient norm.
    averaging : str, optional
        ``"convex"`` (default) or ``"strongly_convex"`` (Output 3).
    record_every : int or str, optional
        History period (default ``"auto"``).
    keep_iterates : bool, optional
        Keep the recorded iterates (default ``False``).
    maps : str, optional
        ``"exp"`` (default) or ``"retraction"``.

    Returns
    -------
    TrainResult
        Output point, history and privacy event (``None`` when not private).

    Raises
    ------
    ValueError
        If a setting is out of range or unknown (:func:`dp_rgd_settings`), or the start is not on
        the manifold.
    """
    where = "dp_rgd"
    check_generator(where, rng)
    M = geometry(problem.manifold, maps, where)
    T, n, b, alphas, record_every, sigma, tau, lipschitz = dp_rgd_settings(
        where, problem, T, b, sigma, output, averaging, alpha, tau=tau, lipschitz=lipschitz, record_every=record_every,
        keep_iterates=keep_iterates)
    w = M.check_point(x0, where=where)
    key = run_key(rng)
    hist = History()
    hist.record(problem, 0, w, keep_iterates)
    iterates = [w]
    wbar = None
    for t in range(T):
        stream = agent_stream(key, t, 0)
        B = batch_indices(stream, n, b)
        mean = np.zeros(M.ambient_shape)
        for g in B:
            i, j = pooled_index(problem, int(g))
            mean = mean + clip_or_identity(M, w, problem.grad_sample(w, i, j), tau)
        zeta = mean / b + tangent_noise(M, w, sigma, stream)
        w = M.exp(w, -float(alphas[t]) * zeta)
        iterates.append(w)
        # geodesic averaging over w_1, w_2, ... (t + 1 is the index of the new iterate)
        if wbar is None:
            wbar = w
        else:
            ct = (1.0 if averaging == "convex" else 2.0) / (t + 1)
            wbar = M.exp(wbar, ct * M.log(wbar, w))
        if (t + 1) % record_every == 0 or t + 1 == T:
            hist.record(problem, t + 1, w, keep_iterates)
    if output == 1:
        x_out = w
    elif output == 2:
        x_out = iterates[int(server_stream(key, T).integers(0, T))]
    else:
        x_out = wbar
    radius = min(tau, math.inf if lipschitz is None else float(lipschitz))
    event, why = dp_rgd_run_event(n=n, b=b, T=T, sigma=sigma, sensitivity_radius=radius)
    return TrainResult(x=x_out, history=hist, event=event,
                       info=dict(T=T, b=b, sigma=sigma, tau=tau, n=n, output=output, privacy=why))


def rsgd(problem, x0, alpha, T, b, rng, **kw):
    """Riemannian SGD (Bonnabel 2013): DP-RGD with sigma = 0 and no clipping.

    Bonnabel (2013).

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    x0 : numpy.ndarray
        Start point.
    alpha : float, sequence or callable
        Step size: a constant, one per round, or a function of the round.
    T : int
        Rounds (steps), >= 1.
    b : int
        Batch size, in [1, N_i] (the pooled n for the single-dataset trainers).
    rng : numpy.random.Generator
        The caller's Generator (the run key is drawn from it once).
    kw
        Further keyword arguments, passed to :func:`dp_rgd`.

    Returns
    -------
    TrainResult
        Final point and history.

    Raises
    ------
    ValueError
        As :func:`dp_rgd`.
    """
    return dp_rgd(problem, x0, alpha, T, b, 0.0, rng, **kw)
