"""Private local training of one agent: DP-RSGD (Algorithm 2 of Huang et al. (2024)) and DP-RSVRG (Algorithm 3 of Huang et al. (2024)).

Each function reads like its algorithm box; line numbers refer to the box. Randomness (the
contract with the verified twins; the policy in :mod:`prirfed.reference.randomness`): a local
trainer reads ONE stream, agent i's stream of its round. Called with a ``numpy.random.Generator``
(standalone), it draws the run key from it (:func:`~prirfed.reference.randomness.run_key`, one
call) and reads agent i's stream of round 0; PriRFed passes the stream of (round t, agent i)
itself. In that stream, in order:

- DP-RSGD, per step k: the batch B_k (``batch_indices``: b_i bounded integers, none for a full
  batch b_i = N_i), then,
  if sigma > 0, the tangent noise (:func:`tangent_noise`: one ``standard_normal`` call of
  ``closed_form_normals(M)`` values); after the loop, Option 2 draws one ``integers(0, K + 1)``.
- DP-RSVRG, per inner step j: the index l_j (``integers(0, N_i)``), then the noise if
  sigma > 0; after the loops, Option 2 draws one ``integers(0, K * m)``.

sigma = 0 draws no noise (the non-private trainers); tau = inf disables clipping;
``maps="retraction"`` replaces Exp/Log by the manifold's retraction and its inverse (as Li and Ma (2023) did
on Stiefel; :mod:`prirfed.reference.manifolds.retracted`).
"""

from __future__ import annotations

import math

import numpy as np

from prirfed.reference.checks import check_int, real_or_nan
from prirfed.reference.manifolds.retracted import geometry

from prirfed.reference.randomness import ROLE_AGENT, Stream, agent_stream, run_key

from .base import batch_indices, check_nonnegative, check_tau, is_choice

__all__ = ["clip_or_identity", "tangent_noise", "dp_rsgd_local", "dp_rsvrg_local", "rsvrg_local", "check_local_args",
           "check_option", "check_local_rng", "local_stream"]


def clip_or_identity(M, x, v, tau: float):
    """clip_tau of Algorithm 2 line 4 (v * min(1, tau/||v||_x)); identity for tau = inf.

    Huang et al. (2024), Algorithm 2, line 4.

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : numpy.ndarray
        Point on the manifold.
    v : numpy.ndarray
        Tangent vector at ``x``.
    tau : float
        Clipping threshold (``inf``: no clipping).

    Returns
    -------
    numpy.ndarray
        The clipped vector (``v`` itself for ``tau = inf``).

    Raises
    ------
    ValueError
        As :func:`prirfed.reference.mechanisms.clip`.
    """
    if tau == math.inf:
        return v
    from prirfed.reference.mechanisms import clip

    return clip(M, x, v, tau)


def tangent_noise(M, x, sigma: float, rng):
    """epsilon ~ N_x(0, sigma^2) (Definition 2.5 of Huang et al. (2024)) by the O(dim) closed form
    (:func:`~prirfed.reference.mechanisms.sample_tangent_gaussian_closed_form`: the projected ambient
    Gaussian on the sphere and Stiefel, the transported one on H^d, X^{1/2} S X^{1/2} on SPD); the
    zero vector, with no draw, when sigma = 0.

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : numpy.ndarray
        Point on the manifold.
    sigma : float
        Noise standard deviation (0: no noise, no draw).
    rng : numpy.random.Generator or Stream
        Source of the normals.

    Returns
    -------
    numpy.ndarray
        The noise (zeros for ``sigma = 0``).
    """
    if sigma == 0.0:
        return np.zeros(M.ambient_shape)
    from prirfed.reference.mechanisms import sample_tangent_gaussian_closed_form

    return sample_tangent_gaussian_closed_form(M, x, sigma, rng)


def check_local_rng(where, rng, i):
    """The ``rng`` a local trainer accepts: a ``numpy.random.Generator`` or agent i's unread stream.

    The stream is a :class:`~prirfed.reference.randomness.Stream` (PriRFed passes agent i's stream
    of round t); anything else raises ``ValueError`` naming ``where``. Both twins call it before any
    draw, so they refuse alike (the fused loop can only open a stream at its start).

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    rng : numpy.random.Generator or Stream
        The value to check.
    i : int
        Agent index (a Stream must be agent i's).

    Returns
    -------
    numpy.random.Generator or Stream
        ``rng``.

    Raises
    ------
    ValueError
        If ``rng`` is neither a Generator nor an unread Stream of agent ``i`` (role agent).
    """
    if isinstance(rng, Stream):
        if rng.words != 0 or rng.role != ROLE_AGENT or rng.i != i:
            raise ValueError(f"{where}: a Stream passed as rng must be agent {i}'s and unread (got {rng!r})")
        return rng
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator or a randomness.Stream "
                         f"(got {type(rng).__name__})")
    return rng


def local_stream(where, rng, i) -> Stream:
    """The stream a local trainer reads: a :class:`~prirfed.reference.randomness.Stream` as given
    (PriRFed's stream of (round t, agent i)); from a ``numpy.random.Generator``, the run key (one
    draw) and agent i's stream of round 0 (:func:`check_local_rng` first).

    Helper, not a paper formula: stream selection.

    Parameters
    ----------
    where : str
        Function named in error messages.
    rng : numpy.random.Generator or Stream
        The caller's randomness.
    i : int
        Agent index.

    Returns
    -------
    Stream
        The stream to read.

    Raises
    ------
    ValueError
        If ``rng`` is neither a Generator nor agent i's unread Stream.
    """
    rng = check_local_rng(where, rng, i)
    if isinstance(rng, Stream):
        return rng
    return agent_stream(run_key(rng), 0, i)


def check_local_args(where, problem, i, K, sigma, alpha, **taus):
    """The arguments both local trainers share: agent i of ``problem``, K >= 1 steps, sigma finite and
    >= 0, step alpha positive and finite, and the clipping thresholds given by keyword (``tau=`` for
    DP-RSGD, ``tau0=``, ``tau1=`` for DP-RSVRG), each a number > 0 (inf: none). ``ValueError``
    naming ``where``, the parameter and the value otherwise; the verified twins call it too.

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    i : int
        Agent index, in [0, N-1].
    K : int
        Local iterations, >= 1.
    sigma : float
        Noise standard deviation, finite and >= 0 (0: no noise, no draw).
    alpha : float
        Step size, positive and finite.
    tau, tau0, tau1 : float, optional
        The clipping thresholds, by keyword (``**taus``: ``tau=`` for DP-RSGD, ``tau0=`` and
        ``tau1=`` for DP-RSVRG), each > 0 (``inf``: no clipping;
        :func:`~prirfed.reference.trainers.base.check_tau`).

    Returns
    -------
    tuple
        ``(i, K, sigma, alpha, *taus)``: ``i`` and ``K`` as ints, the others as floats, the
        thresholds in the order given.

    Raises
    ------
    ValueError
        If an argument is out of range or not a number of the right kind.
    """
    i = check_int(where, "i", i, 0, problem.N - 1)
    K = check_int(where, "K", K)
    sigma = check_nonnegative(where, "sigma", sigma)
    tau_values = [check_tau(where, name, value) for name, value in taus.items()]
    a = real_or_nan(alpha)
    if not (math.isfinite(a) and a > 0):
        raise ValueError(f"{where}: step size alpha must be positive and finite (got {alpha!r})")
    return (i, K, sigma, a, *tau_values)


def check_option(where, option):
    """Option 1 (the last iterate) or 2 (a uniformly drawn iterate) of Algorithms 2 and 3 of Huang et al. (2024).

    Parameters
    ----------
    where : str
        Function named in error messages.
    option : int
        1 or 2.

    Raises
    ------
    ValueError
        If ``option`` is not 1 or 2 (bools, floats and arrays included, :func:`~prirfed.reference.trainers.base.is_choice`).
    """
    if not is_choice(option, (1, 2)):
        raise ValueError(f"{where}: option must be 1 or 2 (got {option!r})")


def dp_rsgd_local(problem, i, x, K, b, sigma, tau, alpha, rng, option=1, maps="exp"):
    r"""Algorithm 2 of Huang et al. (2024) (DP-RSGD local training of agent i), returns x~_i^(t+1).

    The algorithm box, line by line:

    .. code-block:: text

        1: x_0 <- x;  for k = 0..K-1:
        3:   B_k subset of [N_i], |B_k| = b, uniformly without replacement;
        4:   eta_k <- (1/b) sum_{p in B_k} clip_tau(grad f_{i,p}(x_k)) + eps_k,  eps_k ~ N_{x_k}(0, sigma^2);
        5:   x_{k+1} <- Exp_{x_k}(-alpha eta_k);
        7:   Option 1: x_K;   8: Option 2: uniform from {x_0, ..., x_K}.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem.
    i : int
        The agent, in [0, N).
    x : numpy.ndarray
        The start point (the server point :math:`x^{(t)}`).
    K : int
        Local steps, >= 1.
    b : int
        Batch size, in [1, N_i].
    sigma : float
        Noise standard deviation, finite and >= 0 (0: no noise, no draw).
    tau : float
        Clipping threshold, > 0 (``inf``: no clipping).
    alpha : float
        Step size, positive and finite.
    rng : numpy.random.Generator or Stream
        A Generator (standalone: the run key is drawn from it, agent i's stream of round 0 is read)
        or the stream of (round t, agent i) that PriRFed passes.
    option : int, optional
        1 (default, the last iterate) or 2 (an iterate drawn uniformly).
    maps : str, optional
        ``"exp"`` (default) or ``"retraction"``.

    Returns
    -------
    numpy.ndarray
        The agent's upload :math:`\tilde x_i^{(t+1)}`.

    Raises
    ------
    ValueError
        If an argument is out of range (:func:`check_local_args`, :func:`check_option`, ``b``), the
        start is not on the manifold, or ``rng`` is neither a Generator nor a Stream.
    """
    where = "dp_rsgd_local"
    i, K, sigma, alpha, tau = check_local_args(where, problem, i, K, sigma, alpha, tau=tau)
    check_option(where, option)
    N_i = problem.sizes[i]
    b = check_int(where, "b", b, 1, N_i)
    check_local_rng(where, rng, i)
    M = geometry(problem.manifold, maps, where)
    xk = M.check_point(x, where=where) if M.validate else np.asarray(x, dtype=np.float64)
    rng = local_stream(where, rng, i)
    iterates = [xk]
    for _k in range(K):
        B = batch_indices(rng, N_i, b)
        mean = np.zeros(M.ambient_shape)
        for p in B:
            mean = mean + clip_or_identity(M, xk, problem.grad_sample(xk, i, int(p)), tau)
        eta = mean / b + tangent_noise(M, xk, sigma, rng)
        xk = M.exp(xk, -alpha * eta)
        iterates.append(xk)
    if option == 1:
        return xk
    return iterates[int(rng.integers(0, K + 1))]


def dp_rsvrg_local(problem, i, x, K, m, sigma, tau0, tau1, alpha, rng, option=1, maps="exp"):
    """Algorithm 3 of Huang et al. (2024) (DP-RSVRG of Utpala et al. (2023), local training of agent i), returns x~_i^(t+1).

    The algorithm box, line by line (the box prints sigma_i in line 7; see the notes):

    .. code-block:: text

        1: x~_0 <- x;  for k = 0..K-1:
        3:   x_{k+1,0} <- x~_k;
        4:   g_{k+1} <- (1/N_i) sum_j clip_tau0(grad f_{i,j}(x~_k));
             for j = 0..m-1:
        6:     l_j uniform in [N_i];   7: eps ~ N_{x_{k+1,j}}(0, sigma^2);
        8:     eta <- clip_tau1(grad f_{i,l}(x_{k+1,j})) - Gamma_{x~_k}^{x_{k+1,j}}(clip_tau1(grad f_{i,l}(x~_k)) - g_{k+1}) + eps;
        9:     x_{k+1,j+1} <- Exp_{x_{k+1,j}}(-alpha eta);
        11:  x~_{k+1} <- x_{k+1,m};
        13: Option 1: x_{K,m};  14: Option 2: uniform from {x_{k+1,j}: k < K, j < m}.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem.
    i : int
        The agent, in [0, N).
    x : numpy.ndarray
        The start point.
    K : int
        Outer iterations, >= 1.
    m : int
        Inner-loop length, >= 1.
    sigma : float
        Noise standard deviation, finite and >= 0.
    tau0 : float
        Clipping threshold of the full gradient, > 0 (``inf``: none).
    tau1 : float
        Clipping threshold of the per-sample terms, > 0 (``inf``: none).
    alpha : float
        Step size, positive and finite.
    rng : numpy.random.Generator or Stream
        A Generator (standalone) or the stream of (round t, agent i).
    option : int, optional
        1 (default) or 2.
    maps : str, optional
        ``"exp"`` (default) or ``"retraction"``.

    Returns
    -------
    numpy.ndarray
        The agent's upload.

    Raises
    ------
    ValueError
        If an argument is out of range, the start is not on the manifold, or ``rng`` is neither a
        Generator nor a Stream.
    """
    where = "dp_rsvrg_local"
    i, K, sigma, alpha, tau0, tau1 = check_local_args(where, problem, i, K, sigma, alpha, tau0=tau0, tau1=tau1)
    check_option(where, option)
    m = check_int(where, "m", m)
    check_local_rng(where, rng, i)
    M = geometry(problem.manifold, maps, where)
    N_i = problem.sizes[i]
    x_tilde = M.check_point(x, where=where) if M.validate else np.asarray(x, dtype=np.float64)
    rng = local_stream(where, rng, i)
    inner_points = []
    for _k in range(K):
        xkj = x_tilde
        g = np.zeros(M.ambient_shape)
        for j in range(N_i):
            g = g + clip_or_identity(M, x_tilde, problem.grad_sample(x_tilde, i, j), tau0)
        g = g / N_i
        for _j in range(m):
            inner_points.append(xkj)
            l = int(rng.integers(0, N_i))
            eps = tangent_noise(M, xkj, sigma, rng)
            correction = clip_or_identity(M, x_tilde, problem.grad_sample(x_tilde, i, l), tau1) - g
            eta = (clip_or_identity(M, xkj, problem.grad_sample(xkj, i, l), tau1)
                   - M.transp(x_tilde, xkj, correction) + eps)
            xkj = M.exp(xkj, -alpha * eta)
        x_tilde = xkj
    if option == 1:
        return x_tilde
    return inner_points[int(rng.integers(0, K * m))]


def rsvrg_local(problem, i, x, K, m, alpha, rng, option=1, maps="exp"):
    """Non-private RSVRG (Zhang, Reddi, Sra 2016) as local training: Algorithm 3 with sigma = 0, no clipping.

    Zhang, Reddi and Sra (2016), RSVRG.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    i : int
        Agent index.
    x : numpy.ndarray
        Point on the manifold.
    K : int
        Local iterations, >= 1.
    m : int
        Inner-loop length, >= 1.
    alpha : float, sequence or callable
        Step size: a constant, one per round, or a function of the round.
    rng : numpy.random.Generator
        The caller's Generator (the run key is drawn from it once).
    option : int, optional
        Option 1 (last iterate) or 2 (an iterate drawn uniformly).
    maps : str, optional
        ``"exp"`` (Exp/Log, default) or ``"retraction"`` (the retraction and its inverse).

    Returns
    -------
    numpy.ndarray
        The agent's final point.

    Raises
    ------
    ValueError
        As :func:`dp_rsvrg_local`.
    """
    return dp_rsvrg_local(problem, i, x, K, m, 0.0, math.inf, math.inf, alpha, rng, option, maps)
