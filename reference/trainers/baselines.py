"""The baselines Han et al. (2024) compares DP-RGD against: DP-PGD (section 5.1) and DP-FM (section 5.2).

- DP-PGD: projected gradient descent on the sphere with Gaussian noise in the *ambient* space,
  w_{t+1} = (w_t - eta zeta_t) / ||w_t - eta zeta_t||, zeta_t = grad_E F(w_t) + eps_t,
  eps_t ~ N(0, sigma^2 I_{d+1}). Han et al. (2024) prints w_t + zeta_t (a sign slip for a minimisation, and
  no step size although it states eta = 0.2 for both methods).
- DP-FM (Reimherr, Bharath, Soto 2021): output perturbation of the Frechet mean on SPD with the
  intrinsic Riemannian Laplace law p(X) ~ exp(-dist(X, W_hat) / sigma) (density with respect to
  the Riemannian volume), sigma = Delta / eps, Delta = 2 D_W / n (Han et al. (2024) section 5.2, [42, Thm 2]).
  Sampled by affine invariance and polar coordinates (Hajri et al. 2016; Said et al. 2017):
  X = W_hat^{1/2} U diag(exp(lambda)) U^T W_hat^{1/2}, U Haar on O(n), and lambda in R^n with
  density proportional to ``exp(-||lambda||_2 / sigma) prod_{i<j} sinh(|lambda_i - lambda_j| / 2)``,
  drawn by random-walk Metropolis.

Randomness (the policy in :mod:`prirfed.reference.randomness`): both draw the run key once from the
caller's Generator. DP-PGD's step t reads ``agent_stream(key, t, 0)``: the batch, then d+1 normals.
DP-FM reads ``agent_stream(key, 0, 0)``: the Haar matrix (n*n normals), then the Metropolis chain
(n normals and one uniform per step).
"""

from __future__ import annotations

import math

import numpy as np

from prirfed.reference.checks import check_int, check_positive
from prirfed.reference.manifolds.sphere import Sphere

from .aggregation import karcher_mean
from prirfed.reference.randomness import agent_stream, run_key

from .base import History, TrainResult, batch_indices, record_schedule
from .prirfed import step_sizes
from .privacy import dp_rgd_run_event, output_perturbation_event
from .rgd import pooled_index

__all__ = ["dp_pgd", "dp_frechet_mean", "sample_spd_laplace_eigenvalues", "haar_orthogonal", "spd_laplace_log_density",
           "laplace_sigma_max"]


def dp_pgd(problem, x0, eta, T, b, sigma, rng, *, tau=math.inf, record_every="auto", keep_iterates=False):
    """DP-PGD of Han et al. (2024) section 5.1 on the sphere (noise in the ambient space R^{d+1}).

    Uses the problem's per-sample Euclidean gradients ``egrad_ij`` (clipped in the Euclidean norm
    when ``tau`` < inf) on a batch of size b drawn without replacement from the pooled data.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    x0 : numpy.ndarray
        Start point.
    eta : float, sequence or callable
        Step sizes.
    T : int
        Rounds (steps), >= 1.
    b : int
        Batch size, in [1, n].
    sigma : float
        Noise standard deviation (0: no noise, no draw).
    rng : numpy.random.Generator
        The caller's Generator (the run key is drawn from it once).
    tau : float, optional
        Clipping threshold (``inf``: no clipping).
    record_every : int or str, optional
        History period (1: every round); ``"auto"`` (default): :func:`~prirfed.reference.trainers.base.record_schedule`.
    keep_iterates : bool, optional
        Keep the recorded iterates in the history (default ``False``).

    Returns
    -------
    TrainResult
        Final point, history and privacy event.

    Raises
    ------
    ValueError
        If the manifold is not the sphere, ``T`` or ``b`` is out of range, ``sigma`` is not finite and
        >= 0, or a step size is not positive.
    """
    where = "dp_pgd"
    M = problem.manifold
    if not isinstance(M, Sphere):
        raise ValueError(f"{where}: DP-PGD is defined on the sphere (001 section 5.1), got {type(M).__name__}")
    T = check_int(where, "T", T)
    n = int(sum(problem.sizes))
    b = check_int(where, "b", b, 1, n)
    if not (math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"{where}: sigma must be finite and >= 0 (got {sigma!r})")
    etas = step_sizes(where, eta, T)
    record_every = record_schedule(where, record_every, T, n, b)
    w = M.check_point(x0, where=where)
    key = run_key(rng)
    hist = History()
    hist.record(problem, 0, w, keep_iterates)
    for t in range(T):
        stream = agent_stream(key, t, 0)
        B = batch_indices(stream, n, b)
        g = np.zeros(M.ambient_shape)
        for k in B:
            i, j = pooled_index(problem, int(k))
            gij = problem.egrad_ij(w, i, j)
            nrm = float(np.linalg.norm(gij))
            if tau != math.inf and nrm > tau:
                gij = gij * (tau / nrm)
            g = g + gij
        zeta = g / b
        if sigma > 0:
            zeta = zeta + sigma * stream.standard_normal(M.ambient_shape)
        y = w - etas[t] * zeta
        ny = float(np.linalg.norm(y))
        if ny == 0.0:
            raise ValueError(f"{where}: the projected step vanished at iteration {t} (w - eta zeta = 0)")
        w = y / ny
        if (t + 1) % record_every == 0 or t + 1 == T:
            hist.record(problem, t + 1, w, keep_iterates)
    event, why = dp_rgd_run_event(n=n, b=b, T=T, sigma=sigma, sensitivity_radius=tau)
    return TrainResult(x=w, history=hist, event=event, info=dict(T=T, b=b, sigma=sigma, tau=tau, privacy=why))


def haar_orthogonal(n: int, rng) -> np.ndarray:
    """U Haar-distributed on O(n): QR of an n x n standard Gaussian with diag(R) made positive (Mezzadri 2007).

    Mezzadri (2007).

    Parameters
    ----------
    n : int
        Dimension.
    rng : numpy.random.Generator or Stream
        Source of the Gaussian matrix.

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` orthogonal matrix.
    """
    G = rng.standard_normal((n, n))
    Q, R = np.linalg.qr(G)
    return Q * np.sign(np.diag(R))


def spd_laplace_log_density(lam, sigma: float) -> float:
    r"""log of ``exp(-||lambda|| / sigma) prod_{i<j} sinh(|lambda_i - lambda_j| / 2)`` (unnormalised; -inf on ties).

    The eigenvalue density of the Riemannian Laplace law on SPD used by Han et al. (2024), Section 5.2.

    Parameters
    ----------
    lam : array_like
        Log-eigenvalues :math:`\lambda`.
    sigma : float
        Scale, > 0.

    Returns
    -------
    float
        The unnormalised log density.
    """
    lam = np.asarray(lam, dtype=np.float64)
    out = -float(np.linalg.norm(lam)) / sigma
    n = lam.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            a = abs(lam[i] - lam[j]) / 2.0
            if a == 0.0:
                return -math.inf
            # log sinh(a) = a + log(1 - exp(-2a)) - log 2, stable for large and small a
            out += a + math.log(-math.expm1(-2.0 * a)) - math.log(2.0)
    return out


def laplace_sigma_max(n: int) -> float:
    """Supremum of the sigma for which the Riemannian Laplace law on SPD(n) exists (is normalisable).

    In polar coordinates the density of lambda is exp(-||lambda|| / sigma) prod_{i<j}
    ``sinh(|lambda_i - lambda_j| / 2)`` (:func:`spd_laplace_log_density`). Far out along a unit
    direction u (sorted), the product grows like exp(sum_{i<j} (u_j - u_i) R / 2) = exp(c . u R / 2),
    c_k = 2k - n - 1, whose maximum over unit u is ||c|| = sqrt(n (n^2 - 1) / 3). The integral
    converges iff 1 / sigma > ||c|| / 2: sigma < 2 / sqrt(n (n^2 - 1) / 3) (sqrt 2 for n = 2;
    no bound for n = 1). Han et al. (2024) section 5.2 does not state this bound; its sigma = 2 D_W / (n eps)
    with D_W = 1, eps = 0.1 exceeds it for sample sizes n <= 14 (proofs_notes/algorithm_baselines_001.md).

    Parameters
    ----------
    n : int
        Matrix size, >= 1.

    Returns
    -------
    float
        The supremum (``inf`` for ``n = 1``).

    Raises
    ------
    ValueError
        If ``n`` is not an integer >= 1.
    """
    n = check_int("laplace_sigma_max", "n", n)
    if n == 1:
        return math.inf
    return 2.0 / math.sqrt(n * (n * n - 1) / 3.0)


def sample_spd_laplace_eigenvalues(n: int, sigma: float, rng, n_steps: int = 2000, step=None, lam0=None) -> np.ndarray:
    r"""Random-walk Metropolis for lambda with the density of :func:`spd_laplace_log_density`.

    Proposal lambda' = lambda + step * N(0, I_n) (symmetric), ``step`` default 2.4 sigma / sqrt(n)
    (Roberts, Gelman, Gilks 1997 scaling). Returns the state after ``n_steps`` steps.

    The eigenvalue draw of the Riemannian Laplace law on SPD, Han et al. (2024), Section 5.2.

    Parameters
    ----------
    n : int
        Matrix size.
    sigma : float
        Scale, > 0 and below :func:`laplace_sigma_max`.
    rng : numpy.random.Generator or Stream
        Source of the proposals.
    n_steps : int, optional
        Chain length (default 2000).
    step : float or None, optional
        Proposal scale (default :math:`2.4\sigma/\sqrt{n}`).
    lam0 : array_like or None, optional
        Start (default a small spread around 0).

    Returns
    -------
    numpy.ndarray
        The state after ``n_steps`` steps.

    Raises
    ------
    ValueError
        If ``n``, ``sigma``, ``n_steps`` or ``step`` is out of range, or ``sigma`` is not below
        :func:`laplace_sigma_max`.
    """
    where = "sample_spd_laplace_eigenvalues"
    n = check_int(where, "n", n)
    sigma = check_positive(where, "sigma", sigma)
    smax = laplace_sigma_max(n)
    if not sigma < smax:
        raise ValueError(f"{where}: sigma = {sigma:.6g} is not below {smax:.6g}, where the Riemannian Laplace law on "
                         f"SPD({n}) stops being normalisable (no such distribution; laplace_sigma_max)")
    n_steps = check_int(where, "n_steps", n_steps)
    step = 2.4 * sigma / math.sqrt(n) if step is None else check_positive(where, "step", step)
    lam = np.linspace(-1e-3, 1e-3, n) * sigma if lam0 is None else np.array(lam0, dtype=np.float64)
    lp = spd_laplace_log_density(lam, sigma)
    for _ in range(n_steps):
        prop = lam + step * rng.standard_normal(n)
        lq = spd_laplace_log_density(prop, sigma)
        if math.log(rng.random()) < lq - lp:
            lam, lp = prop, lq
    return lam


def dp_frechet_mean(problem, eps, D, rng, *, n_steps=2000, tol=1e-12, W_hat=None):
    r"""DP-FM of Han et al. (2024) section 5.2: Frechet mean W_hat perturbed by the Riemannian Laplace law on SPD.

    sigma = Delta / eps with Delta = 2 D / n (the sensitivity of the Frechet mean of n points in a
    ball of diameter D on a Hadamard manifold, [42, Thm 2] as quoted by Han et al. (2024)). Pure eps-DP.
    Returns a TrainResult whose ``info`` holds W_hat, sigma and Delta.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    eps : float
        Target :math:`\epsilon > 0`.
    D : float
        Diameter bound of the data, > 0.
    rng : numpy.random.Generator
        The caller's Generator (the run key is drawn from it once).
    n_steps : int, optional
        Metropolis steps of the eigenvalue draw (default 2000).
    tol : float, optional
        Tolerance of the Karcher mean (default 1e-12).
    W_hat : numpy.ndarray or None, optional
        The non-private Fréchet mean, if known.

    Returns
    -------
    TrainResult
        The private mean, a one-point history and the pure-DP event.

    Raises
    ------
    ValueError
        If the manifold is not SPD, ``eps`` or ``D`` is not positive, or :math:`\sigma = 2D/(n\epsilon)` is not
        below :func:`laplace_sigma_max`.
    """
    from prirfed.reference.manifolds.spd import SPD

    where = "dp_frechet_mean"
    M = problem.manifold
    if not isinstance(M, SPD):
        raise ValueError(f"{where}: DP-FM samples the Riemannian Laplace law on SPD, got {type(M).__name__}")
    eps = check_positive(where, "eps", eps)
    D = check_positive(where, "D", D)
    n = int(sum(problem.sizes))
    if W_hat is None:
        pts = [problem.Z[i][j] for i in range(problem.N) for j in range(problem.sizes[i])]
        W_hat, _ = karcher_mean(M, pts, tol=tol, max_iter=10_000)
    W_hat = M.check_point(W_hat, where=where)
    Delta = 2.0 * D / n
    sigma = Delta / eps
    smax = laplace_sigma_max(M.n)
    if not sigma < smax:
        raise ValueError(f"{where}: sigma = 2 D / (n eps) = {sigma:.6g} (D = {D:g}, n = {n}, eps = {eps:g}) is not below "
                         f"{smax:.6g}: the Riemannian Laplace law on SPD({M.n}) does not exist there "
                         f"(needs n > {2.0 * D / (eps * smax):.6g})")
    stream = agent_stream(run_key(rng), 0, 0)
    U = haar_orthogonal(M.n, stream)
    lam = sample_spd_laplace_eigenvalues(M.n, sigma, stream, n_steps=n_steps)
    Z = (U * np.exp(lam)) @ U.T
    w, V = np.linalg.eigh(W_hat)
    Wh = (V * np.sqrt(w)) @ V.T
    X = Wh @ Z @ Wh
    X = 0.5 * (X + X.T)
    hist = History()
    hist.record(problem, 0, X)
    event, why = output_perturbation_event(eps)
    return TrainResult(x=X, history=hist, event=event,
                       info=dict(W_hat=W_hat, sigma=sigma, Delta=Delta, eps=eps, privacy=why))
