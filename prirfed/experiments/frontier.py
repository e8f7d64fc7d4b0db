"""``frontier``: privacy-utility frontiers of PriRFed: at which total data size N * N_i does a
private run, with sigma calibrated to (eps, delta) by the tightest sound accountant, learn as well
as the non-private one?

Per problem (sphere PCA on synthetic data and on MNIST, the SPD Frechet mean, Stiefel kPCA, HSP on
the WordNet mammals), per total size N * N_i of a grid (N = 10 agents, N_i growing) and per
eps in {0.1, 0.3, 1, 3, 10} (delta = 1e-5): PriRFed with DP-RSGD local training, sigma from
:func:`prirfed.reference.accounting.calibration.calibrate_sigma_prirfed` (the whole run, record
level, ``accountant`` = ``"best"`` by default: the tightest valid of PLD and RDP), against the
same run with sigma = 0 and no clipping, from the same data and x^(0). Every round is recorded.

Reading. gap(t) = f(x^(t)) - f*, averaged over the last ``window`` rounds (the output of a noisy
run fluctuates); the private run is *within 10%* when its final gap exceeds the non-private one by
at most ``tolerance`` = 0.1 times the initial gap f(x^(0)) - f*. With R repeats (independent data,
x^(0) and noise), the excess e_r = (gap_priv - gap_np) / gap(0) has mean m and standard error se;
the verdict is "reached" when m + z se <= 0.1, "not reached" when m - z se > 0.1 and
"inconclusive" otherwise, with z the one-sided 1% quantile of Student's t with R - 1 degrees of
freedom (:func:`prirfed.experiments.verdicts.t_quantile`: a 1% false-alarm rate per decided
comparison for normal excesses; both the 10% tolerance and the level are our choices, not a paper's). The frontier of a (problem, eps) is
the smallest N * N_i of the grid from which on every larger size is "reached".

The trainer settings are those a careful practitioner would pick, fixed before the sizes vary
(``PROBLEMS``, documented and derived in ``proofs_notes/experiment_frontier.md``): clipping tau =
the per-sample gradient bound of the problem at its data scale (unit-norm records, so clipping
never biases the non-private direction), full participation s = N (averaging s agents' noise),
K = 5 local steps on batches of b = N_i / 10, T rounds with the step size that makes the
non-private run converge within T rounds. HSP: tau = L_f(M) = 2 max|alpha_ij(w)| M of each draw
(as the PriRFed paper's experiment sets it; the accounting takes the kernel-ridge weights and tau
as given, a caveat of the proofs note) and the step alpha / L_loc with L_loc =
:func:`hsp_smoothness` (a bound on every agent's Hessian within distance M of its data; the
features scaled as in Figures 5/6, so the kernel-ridge weights vary in sign and size from draw to
draw and a fixed step diverged). The expected shape: the noise std per
step is sigma sqrt(dim) with sigma = 2 tau z(eps, delta, T K, b / N_i) / b, so at fixed sampling
rate the noise falls like 1 / N_i and the size needed grows like z, about 1 / eps (proofs note).

Data: the synthetic problems draw their records per trial; MNIST uses the t10k images of the shared
data folder (``$PRIRFED_DATA`` or ``../shared/data``), falling back to scikit-learn's 8x8 digits
(said in the title of every figure and in the summary); HSP draws its records (training nodes)
from the training pool of Figures 5/6 (:func:`hsp_common.training_pool`: the WordNet mammal closure,
fallback and tiny mode the synthetic tree closure of :mod:`hsp_common`), so its total size is
capped by the number of training nodes (the cap is the grid's largest size). Quick mode (5 repeats,
N * N_i up to 100,000) took 353 s of CPU with the shared data and the Numba cache warm (README).
Proofs note: ``proofs_notes/experiment_frontier.md``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from prirfed.backend import trainers
from prirfed.reference.accounting.accountants import ACCOUNTANT_CHOICES
from prirfed.reference.accounting.calibration import calibrate_sigma_prirfed
from prirfed.reference.data import real
from prirfed.reference.data.synthetic import bounded_wishart
from prirfed.reference.manifolds.base import zeta
from prirfed.reference.problems.spd_frechet import SPDFrechetMean
from prirfed.reference.trainers.privacy import prirfed_run_event
from prirfed.verified.problems.cached import CachedSpherePCA, CachedStiefelKPCA

from . import hsp_common
from . import validate as v
from .core import Check, experiment, mean_and_spread, write_csv
from .plots import finish, new_figure
from .privacy import epsilon_of, lower_epsilon_of
from .verdicts import t_quantile

__all__ = ["EXPERIMENT", "PROBLEMS", "EPS", "verdict", "frontier_size", "calibrated_sigma", "spiked_records",
           "hsp_smoothness"]

EPS = [0.1, 0.3, 1.0, 3.0, 10.0]

#: Per problem: dimension of the manifold, clipping tau (the per-sample gradient bound at the data
#: scale used), step size alpha (the non-private run converges within T rounds), and the N_i grid
#: of each mode (N = 10 agents). ``cap``: the data hold at most this many records in total.
PROBLEMS = {
    "sphere_synthetic": dict(label="sphere PCA, synthetic (S^19)", tau=1.0, alpha=1.0,
                             grid={"full": [30, 100, 300, 1000, 3000, 10000, 30000], "quick": [30, 100, 300, 1000, 3000, 10000],
                                   "tiny": [10, 30]}),
    "sphere_mnist": dict(label="sphere PCA, MNIST 14x14 (S^195)", tau=1.0, alpha=1.0,
                         grid={"full": [30, 100, 300, 1000], "quick": [30, 100, 300, 1000], "tiny": [10, 20]}),
    "spd_frechet": dict(label="SPD Frechet mean (SPD(3))", tau=2.0, alpha=0.5,
                        grid={"full": [10, 30, 100, 300, 1000, 3000], "quick": [10, 30, 100, 300, 1000], "tiny": [10, 20]}),
    "stiefel_kpca": dict(label="Stiefel kPCA (St(20, 2))", tau=0.5, alpha=2.0,
                         grid={"full": [30, 100, 300, 1000, 3000, 10000, 30000], "quick": [30, 100, 300, 1000, 3000, 10000],
                               "tiny": [10, 30]}),
    # HSP: tau is not a constant of the data scale but L_f(M) = 2 max|alpha_ij(w)| M of each trial's
    # problem (as 000 section 6.3 sets it, with the derived factor 2; M from hsp_common's config), and
    # the step is alpha / hsp_smoothness(problem, M) (the weights of scaled features change sign and
    # size with the draw; a step of 0.01 N_i made 4 of 5 non-private runs at N_i = 10 overflow; proofs
    # note). The grid is capped by the training nodes: N_i <= floor(pool / N) (make_config adds that
    # largest size).
    "hsp": dict(label="HSP, WordNet mammals (H^2, Lorentz)", tau=None, alpha=0.5,
                grid={"full": [10, 30, 100], "quick": [10, 30, 100], "tiny": [6]}),
}


#: HSP subsets redrawn at most this often when Newton finds no minimiser (see :func:`_problem`).
HSP_REDRAWS = 5


def spiked_records(n: int, dim: int, spikes, rng: np.random.Generator) -> np.ndarray:
    """``n`` unit-norm records in R^dim: z = g / ||g|| with g ~ N(0, I + sum_k spikes[k] e_k e_k^T) (our
    synthetic data; the spikes set the eigengaps of E[z z^T], the unit norm bounds every per-sample
    gradient)."""
    g = rng.standard_normal((n, dim))
    g[:, : len(spikes)] *= np.sqrt(1.0 + np.asarray(spikes, dtype=np.float64))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def _mnist_available() -> bool:
    root = real.shared_data_dir()
    return root is not None and (root / real.MNIST_T10K_IMAGES).is_file() and (root / real.MNIST_T10K_LABELS).is_file()


@functools.lru_cache(maxsize=2)
def _images(source: str) -> np.ndarray:
    """Unit-norm image rows (per-record maps: no privacy cost): MNIST t10k pooled 2x2 to 14x14 pixels
    (dim 196: the noise norm grows like sqrt(dim), proofs note) or the 8x8 digits."""
    if source == "mnist":
        root = real.shared_data_dir()
        images, _ = real.load_mnist(root / real.MNIST_T10K_IMAGES, root / real.MNIST_T10K_LABELS)
        a = np.asarray(images, dtype=np.float64) / 255.0
        Z = a.reshape(a.shape[0], 14, 2, 14, 2).mean(axis=(2, 4)).reshape(a.shape[0], 196)
    else:
        Z = real.load_digits()[0] / 16.0
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


def _data_label(config: dict) -> str:
    return ("MNIST t10k (10,000 images, pooled to 14x14)" if config["mnist"] == "mnist"
            else "FALLBACK: scikit-learn 8x8 digits (1,797 images)")


def hsp_data_config(mode: str, seed: int, backend: str) -> dict:
    """The settings of :mod:`hsp_common` that build the HSP data set (its ``DATA_KEYS``, the
    ``feature_scale`` (scaled as in Figures 5/6), the ``mode`` and the distance bound ``M``), from ``hsp_common.make_config(mode, seed, backend)``: the frontier
    draws its HSP records from the training pool of Figures 5/6 (:func:`hsp_common.training_pool`)
    with their features, kernel and ridge rule, so it changes when they do."""
    hc = hsp_common.make_config(mode, seed, backend)
    return {k: hc[k] for k in (*hsp_common.DATA_KEYS, "feature_scale", "mode", "M")}


def hsp_smoothness(problem, M: float) -> float:
    """L_loc = max_i (2 zeta(-1, M) / N_i) sum_j |alpha_ij(w)|: a bound on the operator norm of the
    Riemannian Hessian of every agent's f_i(x) = (1/N_i) sum_j alpha_ij dist^2(x, y_ij) at points x
    within distance M of all y_ij (on H^n the Hessian of dist^2(., y) has eigenvalues 2 (radial) and
    2 t coth t = 2 zeta(-1, t) <= 2 zeta(-1, M) (tangential), t = dist(x, y); a negative weight
    flips the sign, not the size). The frontier's HSP step is alpha / L_loc."""
    M = v.check_positive("hsp_smoothness", "M", M)
    return max(2.0 * zeta(-1.0, M) * float(np.sum(np.abs(a))) / len(a) for a in problem.alpha)


def hsp_pool_size(hsp: dict) -> int:
    """Number of training nodes of the HSP pool (the cap on N * N_i)."""
    return int(hsp_common.training_pool(hsp)[0].shape[0])


def make_config(mode: str, seed: int, backend: str) -> dict:
    T = {"full": 40, "quick": 30, "tiny": 3}[mode]
    repeats = {"full": 8, "quick": 5, "tiny": 2}[mode]
    N, K, eps = (4, 2, [0.3, 3.0]) if mode == "tiny" else (10, 5, list(EPS))
    mnist = "mnist" if _mnist_available() else "digits"
    problems = {k: dict(tau=p["tau"], alpha=p["alpha"], N_i=list(p["grid"][mode])) for k, p in PROBLEMS.items()}
    if mnist == "digits":  # 1,797 images: N * N_i <= 1,797
        problems["sphere_mnist"]["N_i"] = [n for n in problems["sphere_mnist"]["N_i"] if N * n <= 1797] or [10]
    hsp = hsp_data_config(mode, seed, backend)
    cap = hsp_pool_size(hsp) // N  # the largest N_i the training nodes allow
    problems["hsp"]["N_i"] = sorted({n for n in problems["hsp"]["N_i"] if n <= cap} | {cap})
    return dict(mode=mode, seed=seed, backend=backend, accountant="best", eps=eps, delta=1e-5, N=N, s=N, K=K,
                batch_fraction=0.1, T=T, repeats=repeats, window=max(1, T // 10), tolerance=0.1,
                mnist=mnist, hsp=hsp, problems=problems)


def trial_specs(config: dict) -> list:
    where = "frontier"
    for key, low in (("N", 1), ("s", 1), ("K", 1), ("T", 1), ("repeats", 2), ("window", 1)):
        v.check_int(where, key, config[key], low)
    if config["s"] > config["N"]:
        raise ValueError(f"{where}: s must be <= N = {config['N']} (got {config['s']})")
    if config["window"] > config["T"]:
        raise ValueError(f"{where}: window must be <= T = {config['T']} (got {config['window']})")
    v.check_choice(where, "accountant", config["accountant"], ACCOUNTANT_CHOICES)
    v.check_choice(where, "mnist", config["mnist"], ("mnist", "digits"))
    if config["mnist"] == "mnist" and not _mnist_available():
        raise ValueError(f"{where}: mnist = 'mnist' but the MNIST t10k files are not in the shared data folder "
                         f"({real.shared_data_dir()}); use mnist = 'digits'")
    v.check_probability(where, "delta", config["delta"])
    for key in ("batch_fraction", "tolerance"):
        v.check_probability(where, key, config[key])
    eps = config["eps"]
    if not isinstance(eps, list) or not eps or any(isinstance(e, bool) or not isinstance(e, (int, float)) or not e > 0 for e in eps):
        raise ValueError(f"{where}: eps must be a non-empty list of positive numbers (got {eps!r})")
    probs = config["problems"]
    if not isinstance(probs, dict) or not probs or any(k not in PROBLEMS for k in probs):
        raise ValueError(f"{where}: problems must be a non-empty dict with keys among {tuple(PROBLEMS)} (got {probs!r})")
    specs = []
    for name, p in probs.items():
        if name == "hsp":
            if p["tau"] is not None:
                raise ValueError(f"{where}: problems.hsp.tau must be None (tau = L_f(M) of each trial's problem; got "
                                 f"{p['tau']!r})")
        else:
            v.check_positive(where, f"problems.{name}.tau", p["tau"])
        v.check_positive(where, f"problems.{name}.alpha", p["alpha"])
        sizes = p["N_i"]
        if not isinstance(sizes, list) or not sizes or sizes != sorted(set(sizes)):
            raise ValueError(f"{where}: problems.{name}.N_i must be an increasing list of integers (got {sizes!r})")
        for n in sizes:
            v.check_int(where, f"problems.{name}.N_i", n, 2)
            if name == "sphere_mnist" and config["N"] * n > _images(config["mnist"]).shape[0]:
                raise ValueError(f"{where}: problems.sphere_mnist.N_i = {n}: N * N_i = {config['N'] * n} exceeds the "
                                 f"{_images(config['mnist']).shape[0]} images of {config['mnist']}")
            if name == "hsp" and config["N"] * n > hsp_pool_size(config["hsp"]):
                raise ValueError(f"{where}: problems.hsp.N_i = {n}: N * N_i = {config['N'] * n} exceeds the "
                                 f"{hsp_pool_size(config['hsp'])} training nodes of the HSP data")
        specs += [dict(problem=name, N_i=n, rep=r) for n in sizes for r in range(config["repeats"])]
    return specs


def _problem(name: str, N: int, N_i: int, config: dict, rng: np.random.Generator):
    """(problem, its optimal value f*, redraws) of one trial; records drawn with ``rng``. ``redraws``
    counts the HSP subsets rejected because Newton found no minimiser of (6.3) (possible when
    kernel-ridge weights are negative and f is not convex; at most ``HSP_REDRAWS``); 0 elsewhere."""
    if name == "sphere_synthetic":
        Z = spiked_records(N * N_i, 20, [9.0], rng)
        problem = CachedSpherePCA([Z[i * N_i:(i + 1) * N_i] for i in range(N)], paper="000")
        return problem, -float(problem.eigenvalues()[0]), 0
    if name == "sphere_mnist":
        pool = _images(config["mnist"])
        Z = pool[rng.permutation(pool.shape[0])[: N * N_i]]
        problem = CachedSpherePCA([Z[i * N_i:(i + 1) * N_i] for i in range(N)], paper="000")
        return problem, -float(problem.eigenvalues()[0]), 0
    if name == "spd_frechet":
        X = bounded_wishart(N * N_i, 3, 1.0, rng).X
        problem = SPDFrechetMean([X[i * N_i:(i + 1) * N_i] for i in range(N)], c=0.5)
        return problem, float(problem.f(problem.optimum())), 0
    if name == "stiefel_kpca":
        # rows z / sqrt(N_i): then A_i = Z_i^T Z_i is the agents' mean second moment and the per-sample
        # gradient -N_i z z^T X has norm <= ||z_unit||^2 = 1 (StiefelKPCA's f_ij carries the factor N_i / 2)
        Z = spiked_records(N * N_i, 20, [9.0, 4.0], rng) / math.sqrt(N_i)
        problem = CachedStiefelKPCA([Z[i * N_i:(i + 1) * N_i] for i in range(N)], 2)
        return problem, float(problem.f(problem.optimum())), 0
    if name == "hsp":
        # N * N_i training nodes drawn without replacement from the pool of Figures 5/6 (same features,
        # kernel and ridge rule: hsp_common.subset_problem); the test feature w is the pool's
        W, Y, w = hsp_common.training_pool(config["hsp"])
        for redraws in range(HSP_REDRAWS + 1):
            idx = rng.permutation(W.shape[0])[: N * N_i]
            parts = [idx[i * N_i:(i + 1) * N_i] for i in range(N)]
            problem = hsp_common.subset_problem(config["hsp"], [W[k] for k in parts], [Y[k] for k in parts], w)
            try:
                return problem, float(problem.f(problem.optimum())), redraws
            except ValueError as exc:
                last = " ".join(str(exc).split())
        raise ValueError(f"frontier: HSP with N = {N}, N_i = {N_i}: no minimiser of (6.3) found in {HSP_REDRAWS + 1} "
                         f"draws of the training nodes (last: {last})")
    raise ValueError(f"frontier: unknown problem {name!r} (choose from {tuple(PROBLEMS)})")


@functools.lru_cache(maxsize=512)
def calibrated_sigma(eps: float, delta: float, N: int, s: int, T: int, K: int, tau: float, N_i: int, b: int,
                     accountant: str) -> float:
    """sigma making the whole PriRFed run (DP-RSGD local training) (eps, delta)-DP at record level by
    ``accountant`` (:func:`calibrate_sigma_prirfed`; cached: the same for every repeat)."""
    return float(calibrate_sigma_prirfed(eps, delta, N, s, T, "dp_rsgd", accountant=accountant, K=K, tau=tau, N_i=N_i,
                                         b=b).sigma)


@functools.lru_cache(maxsize=512)
def _report(key):
    """(attainable lower bound, upper bound by the accountant) of the run's own event at delta."""
    event, delta, accountant = key[0], key[1], key[2]
    return lower_epsilon_of(event, delta), epsilon_of(event, delta, accountant)


def run_trial(config: dict, spec: dict, seq) -> dict:
    name, N_i, N = spec["problem"], spec["N_i"], config["N"]
    p = config["problems"][name]
    data_seq, x0_seq, *run_seqs = seq.spawn(2 + 1 + len(config["eps"]))
    problem, f_star, redraws = _problem(name, N, N_i, config, np.random.default_rng(data_seq))
    x0_rng = np.random.default_rng(x0_seq)
    if name == "hsp":  # a uniformly random training embedding (as in Figures 5/6): far points overflow x_0
        Y_all = np.concatenate(problem.Y)
        x0 = Y_all[int(x0_rng.integers(Y_all.shape[0]))].copy()
        tau = float(problem.L_f(config["hsp"]["M"]))
        step = p["alpha"] / hsp_smoothness(problem, config["hsp"]["M"])
    else:
        x0 = problem.manifold.random_point(x0_rng)
        tau, step = float(p["tau"]), p["alpha"]
    b = max(1, int(round(config["batch_fraction"] * N_i)))
    prirfed = trainers(config["backend"]).prirfed
    kw = dict(local="dp_rsgd", K=config["K"], b=b, record_every=1)  # every round recorded (the curves are compared)
    T, s = config["T"], config["s"]
    try:
        res = prirfed(problem, x0, T, s, step, np.random.default_rng(run_seqs[0]), sigma=0.0, **kw)
    except ValueError as exc:  # the baseline must converge: a diverging one is a bad step size, not a result
        raise ValueError(f"frontier: the non-private run of {name} at N_i = {N_i} (repeat {spec['rep']}) failed with "
                         f"step {step:.4g}: {' '.join(str(exc).split())}; lower problems.{name}.alpha") from exc
    runs = {"inf": dict(gap=[float(f) - f_star for f in res.history.f], sigma=0.0, eps_lower=0.0, eps_upper=math.inf)}
    for eps, rseq in zip(config["eps"], run_seqs[1:]):
        # the event depends on sigma / tau only (sensitivity 2 tau / b), so sigma scales with tau: one
        # calibration at tau = 1 serves every trial (HSP's tau changes with the drawn nodes)
        sigma = tau * calibrated_sigma(float(eps), config["delta"], N, s, T, config["K"], 1.0, N_i, b, config["accountant"])
        try:
            with np.errstate(invalid="ignore", over="ignore"):
                res = prirfed(problem, x0, T, s, step, np.random.default_rng(rseq), sigma=sigma, tau=tau, **kw)
            if not np.all(np.isfinite(res.history.f)):
                raise ValueError(f"f(x^(t)) is not finite at round {int(np.argmin(np.isfinite(res.history.f)))}")
        except ValueError as exc:
            # noise so large that the iterate leaves the manifold's float range (e.g. an SPD matrix that
            # is no longer positive definite after Exp, a Lorentz point beyond x_0 = 2^500, or f not
            # finite) or that the server's Stiefel Log of an agent's iterate is beyond the injectivity
            # radius: a result ("diverged"), not a crash
            event = prirfed_run_event(problem, local="dp_rsgd", N=N, s=s, T=T, K=config["K"], m=1, sigmas=[sigma] * N,
                                      bs=[b] * N, tau=tau, tau0=tau, tau1=tau)[0]
            lo, up = _report((event, config["delta"], config["accountant"]))
            runs[repr(float(eps))] = dict(gap=None, diverged=" ".join(str(exc).split()), sigma=sigma, eps_lower=lo, eps_upper=up)
            continue
        lo, up = _report((res.event, config["delta"], config["accountant"]))
        runs[repr(float(eps))] = dict(gap=[float(f) - f_star for f in res.history.f], diverged="", sigma=sigma, eps_lower=lo,
                                      eps_upper=up)
    return dict(problem=name, N_i=N_i, b=b, tau=tau, f_star=f_star, redraws=redraws, runs=runs)


def verdict(excess, tolerance: float, z: float | None = None) -> tuple[str, float, float]:
    """("reached" | "not reached" | "inconclusive", mean, standard error) of the relative excesses
    ``excess`` (one per repeat) against ``tolerance``: reached when mean + z se <= tolerance, not
    reached when mean - z se > tolerance; z defaults to the one-sided 1% Student t quantile with
    R - 1 degrees of freedom (:func:`prirfed.experiments.verdicts.t_quantile`)."""
    e = np.asarray(excess, dtype=np.float64)
    m = float(e.mean())
    if e.size < 2:
        return "inconclusive", m, math.inf
    se = float(e.std(ddof=1) / math.sqrt(e.size))
    z = t_quantile(e.size - 1) if z is None else z
    if m + z * se <= tolerance:
        return "reached", m, se
    if m - z * se > tolerance:
        return "not reached", m, se
    return "inconclusive", m, se


def frontier_size(rows) -> int | None:
    """The smallest total size N * N_i from which on every larger size of ``rows`` (one problem and
    eps, with ``total`` and ``verdict``) is "reached"; None when the largest is not."""
    best = None
    for r in sorted(rows, key=lambda r: r["total"], reverse=True):
        if r["verdict"] != "reached":
            break
        best = r["total"]
    return best


def _final(gap, window: int) -> float:
    return float(np.mean(gap[-window:]))


def report(config: dict, results: list, out) -> list:
    N, window, tol = config["N"], config["window"], config["tolerance"]
    keys = ["inf"] + [repr(float(e)) for e in config["eps"]]
    rows, curve_rows = [], []
    for name, p in config["problems"].items():
        for N_i in p["N_i"]:
            res = [r for r in results if r["problem"] == name and r["N_i"] == N_i]
            g0 = np.array([r["runs"]["inf"]["gap"][0] for r in res])
            np_final = np.array([_final(r["runs"]["inf"]["gap"], window) for r in res])
            for key in keys:
                div = sum(bool(r["runs"][key].get("diverged")) for r in res)
                if not div:
                    G = np.array([r["runs"][key]["gap"] for r in res])
                    for t in range(G.shape[1]):
                        m, sd = mean_and_spread(G[:, t])
                        curve_rows.append(dict(problem=name, N_i=N_i, total=N * N_i, eps=key, round=t, gap_mean=m, gap_std=sd))
                if key == "inf":
                    continue
                if div:  # a diverged repeat: its gap is unbounded, so the size does not reach the tolerance
                    fin = np.full(len(res), math.inf)
                    verdict_, m, se = f"not reached ({div} of {len(res)} diverged)", math.inf, math.inf
                else:
                    fin = np.array([_final(g, window) for g in G])
                    verdict_, m, se = verdict((fin - np_final) / g0, tol)
                first = res[0]["runs"][key]
                rows.append(dict(problem=name, N=N, N_i=N_i, total=N * N_i, b=res[0]["b"], eps=float(key), tau=res[0]["tau"],
                                 sigma=first["sigma"],
                                 eps_lower=max(q["runs"][key]["eps_lower"] for q in res),
                                 eps_upper=max(q["runs"][key]["eps_upper"] for q in res),
                                 gap0_mean=float(g0.mean()), gap_np_mean=float(np_final.mean()),
                                 gap_priv_mean=float(fin.mean()), excess_mean=m, excess_se=se, verdict=verdict_,
                                 redraws=sum(int(q.get("redraws", 0)) for q in res)))
    write_csv(out / "frontier.csv", ["problem", "N", "N_i", "total", "b", "eps", "tau", "sigma", "eps_lower", "eps_upper", "gap0_mean",
                                     "gap_np_mean", "gap_priv_mean", "excess_mean", "excess_se", "verdict", "redraws"], rows)
    write_csv(out / "curves.csv", ["problem", "N_i", "total", "eps", "round", "gap_mean", "gap_std"], curve_rows)
    fr = []
    for name in config["problems"]:
        for eps in config["eps"]:
            sel = [r for r in rows if r["problem"] == name and r["eps"] == float(eps)]
            fr.append(dict(problem=name, eps=float(eps), frontier_total=frontier_size(sel) or "not reached",
                           largest_total=max(r["total"] for r in sel)))
    write_csv(out / "frontier_summary.csv", ["problem", "eps", "frontier_total", "largest_total"], fr)
    _plot(config, rows, fr, curve_rows, out)
    return _checks(config, rows, fr)


def _title(config: dict, name: str) -> str:
    if name == "hsp":
        c = hsp_common.build_setting(config["hsp"])["closure"]
        data = (f"WordNet mammal closure ({c.n} nodes)" if config["hsp"]["data"] == "wordnet"
                else f"{'FALLBACK: ' if config['mode'] != 'tiny' else ''}synthetic tree closure ({c.n} nodes), not WordNet")
        label = PROBLEMS[name]["label"] if config["hsp"]["data"] == "wordnet" else "HSP (H^2, Lorentz)"
        return f"{label}\ndata: {data}"
    data = {"sphere_synthetic": "synthetic spiked data", "sphere_mnist": _data_label(config),
            "spd_frechet": "synthetic bounded Wishart", "stiefel_kpca": "synthetic spiked data"}[name]
    label = "sphere PCA, 8x8 digits (S^63)" if name == "sphere_mnist" and config["mnist"] == "digits" else PROBLEMS[name]["label"]
    return f"{label}\ndata: {data}"


def _panels(n: int, width: float = 4.2, height: float = 3.8):
    """(figure, the n panel axes, the axis that holds the shared legend): 3 panels a row; the legend
    gets a spare slot when there is one, else a row of its own, so it never covers a curve."""
    ncols = min(3, n)
    nrows = -(-n // ncols) + (1 if n % ncols == 0 else 0)
    fig, axes = new_figure(nrows, ncols, width * ncols, height * nrows)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.axis("off")
    return fig, flat[:n], flat[n]


def _legend(fig, axes, slot) -> None:
    handles, labels = {}, []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    slot.legend([handles[lab] for lab in labels], labels, loc="center", fontsize=9, frameon=False)


def _plot(config: dict, rows, fr, curve_rows, out) -> None:
    names = list(config["problems"])
    fig, axes, slot = _panels(len(names))
    for ax, name in zip(axes, names):
        mine = [r for r in rows if r["problem"] == name]
        top = 3.0 * max([1.0] + [r["excess_mean"] + r["excess_se"] for r in mine if math.isfinite(r["excess_mean"] + r["excess_se"])])
        for k, eps in enumerate(config["eps"]):
            sel = sorted((r for r in mine if r["eps"] == float(eps)), key=lambda r: r["total"])
            fin = [r for r in sel if math.isfinite(r["excess_mean"])]
            m = np.array([r["excess_mean"] for r in fin])
            color = f"C{k + 1}"  # fixed per eps (C0 is the non-private run of the curves), whatever is missing
            ax.errorbar([r["total"] for r in fin], np.maximum(m, 1e-4), yerr=[r["excess_se"] for r in fin], marker="o",
                        capsize=2, color=color, label=f"private, eps = {eps:g}")
            div = [r["total"] for r in sel if not math.isfinite(r["excess_mean"])]
            if div:  # a diverged repeat: infinite excess, drawn as x at the top edge
                ax.plot(div, [top / 1.5 * 0.7 ** k] * len(div), ls="none", marker="x", color=color)
        if any(not math.isfinite(r["excess_mean"]) for r in mine):
            ax.plot([], [], ls="none", marker="x", color="gray", label="x: a repeat diverged (infinite excess)")
        ax.axhline(config["tolerance"], color="k", ls="--", lw=1, label="tolerance: 10% of the initial gap")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(5e-5, top)
        ax.set_xlabel("total records N * N_i")
        ax.set_ylabel("excess gap / initial gap (floor 1e-4)")
        ax.set_title(_title(config, name), fontsize=9)
    _legend(fig, axes, slot)
    slot.set_title(f"mean over {config['repeats']} repeats +- standard error;\nexcess = (final gap private - final gap "
                   "non-private) / gap(0)", fontsize=8)
    finish(fig, out, "frontier")

    fig, axes = new_figure(1, 1, 7.0, 6.2)
    ax = axes[0, 0]
    styles = [("o", "-", 9), ("s", "--", 7), ("^", "-.", 7), ("D", ":", 5), ("v", "-", 5)]
    for k, name in enumerate(names):
        pts = [(r["eps"], r["frontier_total"]) for r in fr if r["problem"] == name and r["frontier_total"] != "not reached"]
        marker, ls, ms = styles[k % len(styles)]
        if pts:  # distinct markers and line styles: problems with equal sizes stay visible
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, ls=ls, ms=ms, mfc="none", mew=1.5,
                    label=_title(config, name).replace("\n", ", "))
        else:  # named in the legend all the same: a problem missing from the plot would read as forgotten
            largest = max(r["largest_total"] for r in fr if r["problem"] == name)
            ax.plot([], [], ls="none", marker="x", color="gray",
                    label=f"{_title(config, name)}".replace("\n", ", ") + f": not reached at any eps (sizes up to {largest})")
    e = np.array(config["eps"], dtype=np.float64)
    ax.plot(e, 1e3 / e, color="gray", ls=":", label="slope -1 (1 / eps, proofs note)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("eps (delta = %g)" % config["delta"])
    ax.set_ylabel("smallest N * N_i within 10%")
    ax.set_title("privacy-utility frontier of PriRFed: smallest size within 10% of the non-private run\n"
                 "(an eps not reached at any size of the grid has no point)", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1, frameon=False)
    finish(fig, out, "frontier_sizes")

    fig, axes, slot = _panels(len(names))
    for ax, name in zip(axes, names):
        N_i = config["problems"][name]["N_i"][-1]
        for k, key in enumerate(["inf"] + [repr(float(e_)) for e_ in config["eps"]]):
            sel = [r for r in curve_rows if r["problem"] == name and r["N_i"] == N_i and r["eps"] == key]
            if sel:  # none when a repeat diverged
                t = [r["round"] for r in sel]
                m, sd = np.array([r["gap_mean"] for r in sel]), np.array([r["gap_std"] for r in sel])
                # fixed colour per run kind (curve and band alike), so a missing (diverged) eps shifts nothing
                ax.plot(t, m, color=f"C{k}", label="non-private" if key == "inf" else f"private, eps = {float(key):g}")
                ax.fill_between(t, np.maximum(m - sd, np.maximum(m / 10, 1e-12)), m + sd, color=f"C{k}", alpha=0.2)
        ax.set_yscale("log")
        ax.set_xlabel("round t")
        ax.set_ylabel("f(x^(t)) - f*")
        ax.set_title(f"{_title(config, name)}\nN * N_i = {config['N'] * N_i} (a diverged eps has no curve)", fontsize=9)
    _legend(fig, axes, slot)
    slot.set_title(f"largest size of each grid; mean +- std over {config['repeats']} repeats\n(band's lower edge "
                   "clipped at a tenth of the mean: log axes)", fontsize=8)
    finish(fig, out, "curves")


def _checks(config: dict, rows, fr) -> list:
    checks = []
    for name in config["problems"]:
        sel = [r for r in rows if r["problem"] == name]
        largest = max(r["total"] for r in sel)
        big = [r for r in sel if r["total"] == largest]
        learns = all(r["gap_np_mean"] <= config["tolerance"] * r["gap0_mean"] for r in big)
        checks.append(Check(f"{name}: the non-private run learns (final gap <= 10% of the initial gap; threshold ours)",
                            learns, f"N * N_i = {largest}: gap(0) = {big[0]['gap0_mean']:.3g}, final non-private gap = "
                            f"{big[0]['gap_np_mean']:.3g}", kind="ours"))
        front = [r for r in fr if r["problem"] == name]
        sizes = ", ".join(f"eps {r['eps']:g}: {r['frontier_total']}" for r in front)
        reached = [r["frontier_total"] for r in front if r["frontier_total"] != "not reached"]
        checks.append(Check(f"{name}: a private run gets within 10% of the non-private one at some eps and size of the grid "
                            "(ours)", bool(reached), f"smallest N * N_i per eps: {sizes}", kind="ours"))
        mono = [r["frontier_total"] for r in front]
        ok = all((b_ == "not reached") <= (a == "not reached") and (a == "not reached" or b_ == "not reached" or b_ <= a)
                 for a, b_ in zip(mono, mono[1:]))
        if len(reached) < 2:  # nothing to compare: the check says so instead of passing vacuously
            ok = None
        checks.append(Check(f"{name}: the frontier size does not grow with eps (expected ~ 1 / eps, proofs note; ours)", ok,
                            f"smallest N * N_i per eps {config['eps']}: {mono}" +
                            (f" (reached at {len(reached)} eps: nothing to compare)" if ok is None else ""), kind="ours"))
        sound = all(r["eps_upper"] <= r["eps"] * (1 + 1e-6) for r in sel)
        worst = max(r["eps_upper"] / r["eps"] for r in sel)
        checks.append(Check(f"{name}: every private run meets its eps (upper bound of the run's own event; ours)", sound,
                            f"max eps_upper / eps = {worst:.6f}; eps_lower / eps_upper between "
                            f"{min(r['eps_lower'] / r['eps_upper'] for r in sel):.3f} and "
                            f"{max(r['eps_lower'] / r['eps_upper'] for r in sel):.3f} ({config['accountant']} accountant)",
                            kind="ours"))
    return checks


EXPERIMENT = experiment(__name__, "frontier", "privacy-utility frontiers of PriRFed (smallest N * N_i within 10% of the "
                        "non-private run, eps in {0.1, 0.3, 1, 3, 10}, delta = 1e-5)", "ours (not a paper figure)",
                        figures=("frontier", "frontier_sizes", "curves"))
