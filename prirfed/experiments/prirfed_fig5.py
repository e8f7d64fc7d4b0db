"""``prirfed-fig5``: Figure 5 of 000 (Section 6.3), PriRFed on hyperbolic structured prediction, WordNet mammals.

000 Section 6.3, quoted: "the word "primate" is selected as the test sample, and the remainder is
used to train. [...] We conduct the experiment under the scenarios: N = 9 (thus N_i = 131 for agent
i), and set the problem parameters as gamma = 10^-5, v = 0.3, L_f = max_ij |alpha_ij(w)| M,
L_g = max_ij |alpha_ij(w)| M / tanh(M) with M = 4 (estimated from samples), the privacy parameters
as eps = 0.15, delta = 10^-4, and the algorithm parameters as s_t = 1, K = 3, m = 5, and
alpha_t = 0.3. The Riemannian distance averaged over 10 runs between the prediction and the true
embedding on H^2 and the values of cost averaged over 10 runs against the number of iterations are
plotted in Figure 5", and "we set tau = tau_0 = tau_1 = L_f". Noise (000 Section 6):
sigma_i^2 = K log(1/delta) tau^2 / (N_i^2 eps^2) (DP-RSGD, o_i = 1) and
m K log(1/delta) tau^2 / (N_i^2 eps^2) (DP-RSVRG, o~_i = 1). Four curves (caption of Fig. 5):
PriRFed-RSGD, PriRFed-DP-RSGD, PriRFed-RSVRG, PriRFed-DP-RSVRG (the non-private ones: sigma = 0
and no clipping).

Data (:mod:`prirfed.reference.data.wordnet`, ``proofs_notes/data_hsp.md``): the 1180-node mammal
closure of the shared data folder, features w_i in R^3 from the Laplacian eigenmap of its
adjacency, targets y_i in H^2 from a Lorentz embedding we train (000 used NK17's pretrained one;
not shipped), test word ``primate.n.02``, the 1179 others split uniformly at random into N = 9
agents of N_i = 131. Without the shared file: the transitive closure of a balanced tree, same
pipeline, said in config.json (``data``, ``data_note``) and in the summary.

What 000 does not state, and we chose (recorded in the configuration):
- gamma: the authors' HSP code (DP-RiemOpt ``structuredlearning.py``, lead 16,
  ``proofs_notes/authors_code.md``) solves (K + n lambda I) alpha = K_w, so ``gamma_rule =
  "n_lambda"``: gamma = N_i lambda with lambda = 1e-5 the printed value (``"printed"``: gamma = 1e-5);
- the kernel exp(-||w - w'||^2 / (2 v^2)) (``kernel = "gaussian"``, ``problem_hsp.md``);
- b_i = N_i (full batch: the noise formula above is that of full-batch DP-RGD, HMJG24 Thm 1);
- T (the figure's axis is not in the text): 300 rounds in mode full;
- x^(0): a uniformly random training embedding per run, the same for the four methods of a run
  (as the authors' dp_hsp.py initialises);
- delta_hat = 1e-3 for Theorem 4.2 (as 000's Table 1);
- the distance curve is the squared geodesic distance to the held-out node's true embedding
  (dp_hsp.py plots ``loss.eval(ytest, yt)``, lead 16); the CSV also has the distance itself and the
  distance to the minimiser h(w) of (6.3).

Modes: full = the settings above (10 runs, T = 300, 10-epoch embedding); quick = 3 runs, T = 150,
5-epoch embedding, the full 1180-node closure; tiny (tests) = the 121-node tree, N = 3, T = 8,
2 runs, alpha_t = 0.05. A private run whose iterate leaves the float range (Lorentz.exp refuses
it; this happens to DP-RSVRG at the RDP-calibrated sigma) is recorded as diverged and reported by a
check, not raised.

One trial = one run (one "test" of the paper's 10): the data set (embedding, split) is the same in
every run, built from the experiment's seed (``DATA_SPAWN_KEY``); x^(0) and the trainers' noise
come from the trial's SeedSequence. Privacy, per private method: the paper's claim (Theorem 4.2 of
000 with the local (eps, delta)) and the rigorous eps of the sigma actually used, from the run's
own event composed in :class:`RdpAccountant` at the same delta'. ``calibrate = True`` draws the
noise with the sigma that the RDP accountant calibrates so that the local training is
(eps, delta)-DP (``calibrate_sigma_dp_rsgd`` / ``calibrate_sigma_dp_rsvrg``).
Proofs note: ``proofs_notes/experiment_prirfed_fig5.md``.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np

from prirfed.reference.accounting.calibration import (
    calibrate_sigma_dp_rsgd,
    calibrate_sigma_dp_rsvrg,
    paper_sigma_dp_rsgd,
    paper_sigma_dp_rsvrg,
)
from prirfed.reference.accounting.paper import theorem_4_2
from prirfed.reference.accounting.prirfed_accountant import dp_rsgd_event, dp_rsvrg_event
from prirfed.reference.accounting.rdp import RdpAccountant
from prirfed.reference.data import wordnet as wn
from prirfed.reference.data.partition import partition_equal
from prirfed.reference.data.real import shared_data_dir
from prirfed.reference.problems.hsp import HyperbolicStructuredPrediction, lorentz_weighted_mean
from prirfed.reference.trainers.privacy import prirfed_run_event

from .framework import Check, Experiment, mean_and_spread, save_figure, write_csv

__all__ = ["EXPERIMENT", "METHODS", "LABELS", "BatchedHSP", "tree_closure", "build_setting", "data_sentence", "run_methods",
           "privacy_of_run", "validate", "make_config", "trial_specs"]

METHODS = ("rsgd", "dp_rsgd", "rsvrg", "dp_rsvrg")
LABELS = {"rsgd": "PriRFed-RSGD", "dp_rsgd": "PriRFed-DP-RSGD", "rsvrg": "PriRFed-RSVRG", "dp_rsvrg": "PriRFed-DP-RSVRG"}
PRIVATE = ("dp_rsgd", "dp_rsvrg")
#: spawn key of the data's SeedSequence (entropy = the experiment's seed): distinct from the trials'
#: keys (0,), (1,), ... so the data set is the same in every trial and independent of the runs.
DATA_SPAWN_KEY = (1 << 30,)
#: Settings that determine the data set and the problem (the key of the per-process cache).
DATA_KEYS = ("seed", "data", "tree_branching", "tree_depth", "test_word", "r", "embed_epochs", "embed_burnin", "N",
             "lam", "gamma_rule", "v_bar", "kernel", "M", "eps", "delta", "K", "m", "calibrate")


def _closure_available() -> bool:
    root = shared_data_dir()
    return root is not None and (root / wn.MAMMAL_CLOSURE).is_file()


def make_config(mode: str, seed: int, backend: str) -> dict:
    sizes = {
        "full": dict(T=300, runs=10, embed_epochs=10, embed_burnin=5, tree_depth=6),
        "quick": dict(T=150, runs=3, embed_epochs=5, embed_burnin=2, tree_depth=6),
        "tiny": dict(T=8, runs=2, embed_epochs=3, embed_burnin=1, tree_depth=4, N=3, alpha=0.05),
    }[mode]
    sizes.setdefault("N", 9)
    sizes.setdefault("alpha", 0.3)
    if mode == "tiny":
        data, note = "synthetic", "tiny mode: a balanced tree's transitive closure (3-ary, depth 4, 121 nodes; N = 3 agents), not WordNet"
    elif _closure_available():
        data, note = "wordnet", "WordNet mammal closure from the shared data folder (1180 nodes, 6540 edges)"
    else:
        data, note = "synthetic", ("FALLBACK: wordnet/mammal_closure.tsv is absent from the shared data folder, so the "
                                   "transitive closure of a balanced 3-ary tree of depth 6 (1093 nodes) stands in")
    return dict(mode=mode, seed=seed, backend=backend, calibrate=False, data=data, data_note=note,
                tree_branching=3, test_word="primate.n.02", r=3, lam=1e-5, gamma_rule="n_lambda", v_bar=0.3,
                kernel="gaussian", M=4.0, eps=0.15, delta=1e-4, delta_hat=1e-3, s=1, K=3, m=5,
                methods=list(METHODS), **sizes)


def _int(where, config, key, low):
    v = config[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ValueError(f"{where}: {key} must be an integer >= {low} (got {v!r})")


def _pos(where, config, key, upper=None):
    v = config[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0) or (upper is not None and not v < upper):
        rng = f"in (0, {upper:g})" if upper is not None else "> 0 and finite"
        raise ValueError(f"{where}: {key} must be a number {rng} (got {v!r})")


def validate(where: str, config: dict) -> None:
    """Raise ``ValueError`` naming ``where`` and the setting for every bad configuration value."""
    for key, low in (("T", 1), ("runs", 1), ("N", 1), ("s", 1), ("K", 1), ("m", 1), ("r", 1), ("embed_epochs", 0),
                     ("embed_burnin", 0), ("tree_branching", 1), ("tree_depth", 2)):
        _int(where, config, key, low)
    if config["s"] > config["N"]:
        raise ValueError(f"{where}: s must be <= N = {config['N']} (got {config['s']})")
    for key in ("lam", "v_bar", "M", "eps", "alpha"):
        _pos(where, config, key)
    for key in ("delta", "delta_hat"):
        _pos(where, config, key, upper=1.0)
    if config["data"] not in ("wordnet", "synthetic"):
        raise ValueError(f"{where}: data must be 'wordnet' or 'synthetic' (got {config['data']!r})")
    if config["data"] == "wordnet" and not _closure_available():
        raise ValueError(f"{where}: data = 'wordnet' but {wn.MAMMAL_CLOSURE} is not in the shared data folder "
                         f"({shared_data_dir()}); use data = 'synthetic'")
    if config["gamma_rule"] not in ("n_lambda", "printed"):
        raise ValueError(f"{where}: gamma_rule must be 'n_lambda' or 'printed' (got {config['gamma_rule']!r})")
    if config["kernel"] not in ("gaussian", "printed"):
        raise ValueError(f"{where}: kernel must be 'gaussian' or 'printed' (got {config['kernel']!r})")
    methods = config["methods"]
    if not isinstance(methods, list) or not methods or any(m not in METHODS for m in methods) or len(set(methods)) != len(methods):
        raise ValueError(f"{where}: methods must be a non-empty list of distinct names from {list(METHODS)} (got {methods!r})")
    if not isinstance(config["calibrate"], bool):
        raise ValueError(f"{where}: calibrate must be true or false (got {config['calibrate']!r})")


def trial_specs(config: dict) -> list:
    validate("prirfed-fig5", config)
    return [dict(run=r) for r in range(config["runs"])]


# ----------------------------------------------------------------------------- data and problem


def tree_closure(branching: int, depth: int) -> wn.MammalClosure:
    """Transitive closure of the balanced ``branching``-ary tree of the given depth, as a
    :class:`MammalClosure`: nodes named by their path (``"t"``, ``"t.0"``, ``"t.0.1"``, ...), one edge
    ``(descendant, ancestor)`` for every proper ancestor. n = (b^(depth+1) - 1)/(b - 1) nodes
    (depth + 1 nodes for b = 1) and sum_k k b^k edges (k = depth of the descendant)."""
    paths = [("t",)]
    frontier = [("t",)]
    for _ in range(depth):
        frontier = [p + (str(c),) for p in frontier for c in range(branching)]
        paths += frontier
    names = tuple(sorted(".".join(p) for p in paths))
    index = {s: i for i, s in enumerate(names)}
    edges = [(index[".".join(p)], index[".".join(p[:k])]) for p in paths for k in range(1, len(p))]
    return wn.MammalClosure(names=names, edges=np.array(edges, dtype=np.int64).reshape(-1, 2), index=index)


class BatchedHSP(HyperbolicStructuredPrediction):
    """Problem (6.3) of 000, :class:`HyperbolicStructuredPrediction` unchanged, except that the global
    objective f and its gradient (read by the trainers' per-round ``History`` only; the trainers use the
    per-sample gradients, the verified ones the problem's arrays) are evaluated over all samples at
    once, and :meth:`optimum` starts Newton from the data point of least f found by one batched
    pairwise-distance matrix instead of 1179 per-point evaluations (the parent takes ~90 s on the
    mammal data, most of it to pick that start).

    f(x) = sum_ij a_ij dist^2(x, y_ij), a_ij = p_i alpha_ij(w) / N_i;
    grad f(x) = sum_ij a_ij 2 dist(x, y_ij) grad dist(., y_ij)(x) = -2 sum_ij a_ij Log_x(y_ij),
    with the batched Lorentz formulas of :mod:`prirfed.reference.data.wordnet` (``_l_dist``,
    ``_grad_dist``; tested against the Lorentz class there). Equal to the parent's f, grad and
    optimum: ``tests/experiments/test_prirfed_fig5.py::test_batched_problem_equals_the_reference``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._Y_all = np.concatenate(self.Y)
        self._a_all = np.concatenate([self.p[i] * self.alpha[i] / self.N_i[i] for i in range(self.N)])

    def _f(self, x) -> float:
        d = wn._l_dist(x[None, :], self._Y_all)
        return float(np.sum(self._a_all * d * d))

    def _rgrad(self, x) -> np.ndarray:
        X = np.broadcast_to(x, self._Y_all.shape)
        d = wn._l_dist(X, self._Y_all)
        G = wn._grad_dist(X, self._Y_all, d)
        return self.manifold.proj(x, np.sum((2.0 * self._a_all * d)[:, None] * G, axis=0))

    def optimum(self, tol: float = 1e-10, max_iter: int = 200, return_info: bool = False):
        """h(w) = argmin f (:func:`lorentz_weighted_mean`, weights a_ij), started at the data point of least f."""
        Y, a = self._Y_all, self._a_all
        D = wn._l_dist(Y[:, None, :], Y[None, :, :])
        x0 = Y[int(np.argmin((D * D) @ a))]
        try:
            x, info = lorentz_weighted_mean(self.manifold, Y, a, tol=tol, max_iter=max_iter, x0=x0)
        except ValueError as exc:
            raise ValueError(f"BatchedHSP.optimum: {exc}") from None
        return (x, info) if return_info else x


def _data_rng(config: dict) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(int(config["seed"]), spawn_key=DATA_SPAWN_KEY))


def _local_sigma(config: dict, method: str, tau: float, N_i: int) -> float:
    """Noise std of a private method: the paper's formula (o = 1), or the RDP calibration at (eps, delta)."""
    eps, delta, K, m = config["eps"], config["delta"], config["K"], config["m"]
    if method == "dp_rsgd":
        if config["calibrate"]:
            return float(calibrate_sigma_dp_rsgd(eps, delta, K, tau, N_i, N_i).sigma)
        return float(paper_sigma_dp_rsgd(eps, delta, K, tau, N_i))
    if config["calibrate"]:
        return float(calibrate_sigma_dp_rsvrg(eps, delta, m, K, tau, tau, N_i).sigma)
    return float(paper_sigma_dp_rsvrg(eps, delta, m, K, tau, N_i))


@functools.lru_cache(maxsize=2)
def _setting(key: str) -> dict:
    config = json.loads(key)
    where = "prirfed-fig5"
    rng = _data_rng(config)
    if config["data"] == "wordnet":
        closure = wn.load_mammal_closure(shared_data_dir() / wn.MAMMAL_CLOSURE)
        test_name = config["test_word"]
    else:
        closure = tree_closure(config["tree_branching"], config["tree_depth"])
        test_name = "t.0.0"  # an inner node two levels below the root, as primate is in the mammal tree
    data = wn.hsp_dataset(closure, rng, r=config["r"], test_name=test_name, epochs=config["embed_epochs"],
                          burnin_epochs=config["embed_burnin"])
    N = config["N"]
    n_train = data.train.size
    N_i = n_train // N
    if N_i < 1:
        raise ValueError(f"{where}: {n_train} training nodes cannot feed N = {N} agents")
    parts = partition_equal(n_train, N, rng, n_per_agent=N_i) if n_train % N else partition_equal(n_train, N, rng)
    idx = [data.train[p] for p in parts]
    gamma = config["lam"] * N_i if config["gamma_rule"] == "n_lambda" else config["lam"]
    problem = BatchedHSP([data.w[k] for k in idx], [data.y[k] for k in idx], data.w[data.test], gamma=gamma,
                         v_bar=config["v_bar"], kernel=config["kernel"])
    h_w = problem.x_star
    y_true = data.y[data.test]
    tau = float(problem.paper_L_f(config["M"]))  # 000 section 6.3: tau = tau_0 = tau_1 = L_f = max|alpha| M
    sigmas = {m: _local_sigma(config, m, tau, N_i) for m in PRIVATE}
    Y_train = np.concatenate(problem.Y)
    M_obj = problem.manifold
    related = {int(a) for c, a in closure.edges if c == data.test} | {int(c) for c, a in closure.edges if a == data.test}
    return dict(closure=closure, data=data, problem=problem, h_w=h_w, y_true=y_true, tau=tau, sigmas=sigmas,
                N_i=N_i, gamma=gamma, agent_nodes=[k.tolist() for k in idx], Y_train=Y_train,
                related=sorted(related), test_name=test_name,
                d_opt_true=float(M_obj.dist(h_w, y_true)),
                max_dist_opt=float(np.max(wn._l_dist(np.broadcast_to(h_w, Y_train.shape), Y_train))))


def data_sentence(config: dict) -> str:
    """Where the data of this configuration come from, said from the setting actually built (so an
    override of ``data`` cannot leave a stale description)."""
    c = build_setting(config)["closure"]
    if config["data"] == "wordnet":
        return f"WordNet mammal closure from the shared data folder ({c.n} nodes, {c.edges.shape[0]} edges)"
    why = ("FALLBACK: the shared WordNet closure is absent; " if config["mode"] != "tiny" and not _closure_available()
           else "")
    return (f"{why}synthetic: the transitive closure of a balanced {config['tree_branching']}-ary tree of depth "
            f"{config['tree_depth']} ({c.n} nodes, {c.edges.shape[0]} edges), not WordNet")


def build_setting(config: dict) -> dict:
    """The data set, problem (6.3), h(w), tau and the sigmas of one configuration (cached per process)."""
    return _setting(json.dumps({k: config[k] for k in DATA_KEYS}, sort_keys=True))


def _trainer(backend: str):
    from prirfed.backend import trainers

    return trainers(backend).prirfed


def privacy_of_run(event, method: str, config: dict, sigma: float, tau: float, N_i: int) -> dict:
    """Paper's (eps', delta') of Theorem 4.2 (000) for the local (eps, delta); the rigorous eps of the
    run's event at the same delta' (RDP accountant); and the rigorous eps of one agent's local
    training at the paper's delta (is the paper's local calibration (eps, delta)-DP?)."""
    eps, delta = config["eps"], config["delta"]
    eps_p, delta_p = theorem_4_2(eps, delta, config["N"], config["s"], config["T"], config["delta_hat"])
    eps_run = RdpAccountant().compose(event).get_epsilon(delta_p)
    local = (dp_rsgd_event(sigma, tau, N_i, N_i, config["K"]) if method == "dp_rsgd"
             else dp_rsvrg_event(sigma, tau, tau, N_i, config["m"], config["K"]))
    eps_local = RdpAccountant().compose(local).get_epsilon(delta)
    return dict(eps_paper=float(eps_p), delta_paper=float(delta_p), eps_rigorous=float(eps_run),
                eps_local_rigorous=float(eps_local))


def run_methods(config: dict, seq, *, with_privacy: bool = True) -> dict:
    """One run: x^(0) a uniformly random training embedding, then each method of ``config["methods"]``
    from x^(0) (children 1.. of ``seq``); curves of f, d^2 and dist to the true embedding, dist to h(w),
    ||grad f||, and the output x^(T)."""
    st = build_setting(config)
    problem, y_true = st["problem"], st["y_true"]
    x0_seq, *run_seqs = seq.spawn(1 + len(METHODS))
    j0 = int(np.random.default_rng(x0_seq).integers(st["Y_train"].shape[0]))
    x0 = st["Y_train"][j0].copy()
    prirfed = _trainer(config["backend"])
    M = problem.manifold
    runs = {}
    for method, rseq in zip(METHODS, run_seqs):
        if method not in config["methods"]:
            continue
        private = method in PRIVATE
        sigma = st["sigmas"][method] if private else 0.0
        tau = st["tau"] if private else math.inf
        local = "dp_rsgd" if method in ("rsgd", "dp_rsgd") else "dp_rsvrg"
        try:
            res = prirfed(problem, x0, config["T"], config["s"], config["alpha"], np.random.default_rng(rseq),
                          local=local, K=config["K"], b=st["N_i"], m=config["m"], sigma=sigma, tau=tau, keep_iterates=True)
        except ValueError as exc:
            # A noisy run whose iterate leaves the float range (Lorentz.exp refuses it) is a result, not a
            # crash: recorded as diverged (with the message) and reported as such; anything else raises.
            if not private or "overflow" not in str(exc):
                raise
            run = dict(diverged=str(exc), sigma=float(sigma), tau=float(tau))
            if with_privacy:
                event, _ = prirfed_run_event(problem, local=local, N=problem.N, s=config["s"], T=config["T"],
                                             K=config["K"], m=config["m"], sigmas=[sigma] * problem.N,
                                             bs=[st["N_i"]] * problem.N, tau=tau, tau0=tau, tau1=tau)
                run.update(privacy_of_run(event, method, config, sigma, st["tau"], st["N_i"]))
            runs[method] = run
            continue
        X = np.asarray(res.history.iterates)
        d_true = wn._l_dist(X, np.broadcast_to(y_true, X.shape))
        run = dict(diverged="", f=[float(v) for v in res.history.f], grad_norm=[float(v) for v in res.history.grad_norm],
                   dist_opt=[float(v) for v in res.history.dist_to_opt], dist_true=[float(v) for v in d_true],
                   x_out=[float(v) for v in res.x], sigma=float(sigma), tau=float(tau))
        if private and with_privacy:
            run.update(privacy_of_run(res.event, method, config, sigma, st["tau"], st["N_i"]))
        runs[method] = run
    return dict(x0_index=j0, x0=[float(v) for v in x0], runs=runs)


def run_trial(config: dict, spec: dict, seq) -> dict:
    return run_methods(config, seq)


# ----------------------------------------------------------------------------- report


def _window(T: int) -> int:
    return max(1, T // 10)


def window_means(y, w: int) -> np.ndarray:
    """Means of ``y`` over the windows of ``w`` consecutive rounds: entry k = mean(y[k : k + w])."""
    return np.convolve(np.asarray(y, dtype=np.float64), np.ones(w) / w, mode="valid")


def half_gap_round(f_mean, f_star: float):
    """First round t with f(x^(t)) - f* <= (f(x^(0)) - f*) / 2, or None."""
    gap0 = f_mean[0] - f_star
    hit = np.nonzero(np.asarray(f_mean) - f_star <= 0.5 * gap0)[0]
    return int(hit[0]) if hit.size else None


def problem_row(config: dict) -> dict:
    st = build_setting(config)
    p = st["problem"]
    return dict(data=config["data"], n_nodes=int(st["closure"].n), n_edges=int(st["closure"].edges.shape[0]),
                test_word=st["test_name"], N=int(p.N), N_i=int(st["N_i"]), gamma=float(st["gamma"]),
                alpha_max=float(p.alpha_max), alpha_sum=float(sum(float(a.sum()) for a in p.alpha)),
                tau_L_f=float(st["tau"]), f_star=float(p.f(st["h_w"])), dist_opt_true=st["d_opt_true"],
                max_dist_opt_samples=st["max_dist_opt"])


def report(config: dict, results: list, out) -> list:
    T = config["T"]
    methods = [m for m in METHODS if m in config["methods"]]
    prow = problem_row(config)
    f_star = prow["f_star"]
    curve_rows, priv_rows, final = [], [], {}
    diverged = {m: [k for k, r in enumerate(results) if r["runs"][m]["diverged"]] for m in methods}
    curve_methods = [m for m in methods if len(diverged[m]) < len(results)]
    for meth in methods:
        if meth in PRIVATE:
            rs = [r["runs"][meth] for r in results]
            priv_rows.append(dict(method=LABELS[meth], calibrated=str(bool(config["calibrate"])),
                                  eps_local=float(config["eps"]), delta_local=float(config["delta"]),
                                  sigma=rs[0]["sigma"], tau=rs[0]["tau"],
                                  eps_local_rigorous=max(q["eps_local_rigorous"] for q in rs),
                                  eps_paper=max(q["eps_paper"] for q in rs), delta_paper=max(q["delta_paper"] for q in rs),
                                  eps_rigorous=max(q["eps_rigorous"] for q in rs), diverged_runs=len(diverged[meth])))
        if meth not in curve_methods:
            continue
        ok = [r["runs"][meth] for r in results if not r["runs"][meth]["diverged"]]
        F = np.array([q["f"] for q in ok])
        DT = np.array([q["dist_true"] for q in ok])
        DO = np.array([q["dist_opt"] for q in ok])
        G = np.array([q["grad_norm"] for q in ok])
        for t in range(T + 1):
            row = dict(method=LABELS[meth], round=t, runs=len(ok))
            for name, arr in (("f", F[:, t]), ("d2_true", DT[:, t] ** 2), ("dist_true", DT[:, t]),
                              ("dist_opt", DO[:, t]), ("grad_norm", G[:, t])):
                row[f"{name}_mean"], row[f"{name}_std"] = mean_and_spread(arr)
            curve_rows.append(row)
        final[meth] = dict(f=F.mean(axis=0), d2=(DT ** 2).mean(axis=0), runs=len(ok))
    cols = ["method", "round"] + [f"{n}_{s}" for n in ("f", "d2_true", "dist_true", "dist_opt", "grad_norm") for s in ("mean", "std")] + ["runs"]
    write_csv(out / "curves.csv", cols, curve_rows)
    if priv_rows:
        write_csv(out / "privacy.csv", ["method", "calibrated", "eps_local", "delta_local", "sigma", "tau", "eps_local_rigorous",
                                        "eps_paper", "delta_paper", "eps_rigorous", "diverged_runs"], priv_rows)
    write_csv(out / "problem.csv", list(prow), [prow])
    _plot(out, curve_methods, curve_rows, f_star, prow["dist_opt_true"] ** 2)

    w = _window(T)
    checks = []
    data_ev = f"Data: {data_sentence(config)}. "
    for meth in (m for m in methods if diverged[m]):
        msg = next(r["runs"][meth]["diverged"] for r in results if r["runs"][meth]["diverged"])
        checks.append(Check(
            f"{LABELS[meth]} runs stay finite (000 section 6.3 plots all of them)", False,
            f"{len(diverged[meth])} of {len(results)} runs left the float range (runs {diverged[meth]}): {msg}; "
            f"sigma = {results[0]['runs'][meth]['sigma']:.3g}" + (" (calibrated)" if config["calibrate"] else "")
            + "; their curves are left out of curves.csv and the plot"))
    for meth in (m for m in PRIVATE if m in methods):
        if meth not in curve_methods:
            checks.append(Check(f"{LABELS[meth]} converges to the pretrained (true) embedding of the test word (000 section 6.3, Fig. 5(b))",
                                False, data_ev + "every run diverged"))
            continue
        d2 = final[meth]["d2"]
        end = float(d2[-w:].mean())
        checks.append(Check(
            f"{LABELS[meth]} converges to the pretrained (true) embedding of the test word (000 section 6.3, Fig. 5(b))",
            end <= 0.1 * float(d2[0]),
            data_ev + f"mean d^2(x^(t), y_true): {float(d2[0]):.3g} at t = 0, {end:.3g} over the last {w} rounds "
            f"(criterion: <= 10% of the start; d^2(h(w), y_true) = {prow['dist_opt_true'] ** 2:.3g} for the minimiser h(w) of (6.3))"))
    if "dp_rsgd" in curve_methods and "dp_rsvrg" in curve_methods:
        hs = {m: half_gap_round(final[m]["f"], f_star) for m in ("dp_rsgd", "dp_rsvrg")}
        ok = hs["dp_rsvrg"] is not None and (hs["dp_rsgd"] is None or hs["dp_rsvrg"] < hs["dp_rsgd"])
        checks.append(Check(
            "PriRFed-DP-RSVRG outperforms PriRFed-DP-RSGD in the number of iterations (000 section 6.3)",
            ok, "first round at which the mean cost gap f - f(h(w)) is half its start: "
            + ", ".join(f"{LABELS[m]}: {hs[m] if hs[m] is not None else f'not within {T}'}" for m in ("dp_rsgd", "dp_rsvrg"))))
    for meth in (m for m in ("rsvrg", "dp_rsvrg") if m in curve_methods):
        sm = window_means(final[meth]["d2"], w)
        k = int(np.argmin(sm))
        checks.append(Check(
            f"{LABELS[meth]} converges rapidly to an acceptable solution and then the iterates leave it (overfitting; 000 section 6.3)",
            k + w <= 0.5 * T and sm[-1] >= 1.1 * sm[k],
            f"means of d^2 to the true embedding over windows of {w} rounds: least {sm[k]:.3g} (rounds {k}..{k + w - 1}), "
            f"last {sm[-1]:.3g} (criterion: rapid = the least window ends by T/2, and then left = the last is >= 1.1 x the least; the "
            f"iterates tend to h(w), at d^2 = {prow['dist_opt_true'] ** 2:.3g} from the true embedding)"))
    if priv_rows:
        sound = [p for p in priv_rows if p["eps_rigorous"] <= p["eps_paper"] * (1 + 1e-9)]
        checks.append(Check(
            "the run is (eps', delta')-DP with eps' of Theorem 4.2 (000), checked against the RDP accountant for the sigma used",
            len(sound) == len(priv_rows),
            "rigorous eps vs paper eps' at the paper's delta': " + ", ".join(
                f"{p['method']}: {p['eps_rigorous']:.3g} vs {p['eps_paper']:.3g} (local: rigorous {p['eps_local_rigorous']:.3g} "
                f"vs stated {p['eps_local']:g})" for p in priv_rows)
            + (" (sigma calibrated by the RDP accountant)" if config["calibrate"] else " (sigma of the paper's formula, o = 1)")))
    return checks


def _plot(out, methods, curve_rows, f_star: float, d2_opt: float):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.0, 4.2))
    axes = fig.subplots(1, 2)
    for meth in methods:
        rows = [r for r in curve_rows if r["method"] == LABELS[meth]]
        t = [r["round"] for r in rows]
        for ax, key in ((axes[0], "f"), (axes[1], "d2_true")):
            m = np.array([r[f"{key}_mean"] for r in rows])
            s = np.array([r[f"{key}_std"] for r in rows])
            ax.plot(t, m, label=LABELS[meth])
            ax.fill_between(t, np.maximum(m - s, 1e-300), m + s, alpha=0.2)  # clipped by the axis limits
    axes[0].axhline(f_star, color="k", ls="--", lw=0.8, label="f(h(w)), minimiser of (6.3)")
    axes[1].axhline(d2_opt, color="k", ls="--", lw=0.8, label="d^2(h(w), y_true)")
    axes[0].set_ylabel("cost f(x^(t))")
    axes[1].set_ylabel("d^2(x^(t), true embedding)")
    for ax, key, title in zip(axes, ("f", "d2_true"), ("(a) cost", "(b) distance to the true embedding")):
        means = np.array([r[f"{key}_mean"] for r in curve_rows])
        if np.all(means > 0):  # log axis over the means' range; a std band that reaches 0 is clipped, not bent
            ax.set_yscale("log")
            lines = np.concatenate([means, [f_star if key == "f" else d2_opt]])
            if np.all(lines > 0):
                ax.set_ylim(lines.min() / 1.5, lines.max() * 1.5)
        ax.set_xlabel("iteration t")
        ax.set_title(title)
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, out, "fig5")


EXPERIMENT = Experiment(
    name="prirfed-fig5",
    description="000 Fig. 5: PriRFed-(DP-)RSGD / (DP-)RSVRG on hyperbolic structured prediction, WordNet mammals, 'primate'",
    source="000 Section 6.3, Figure 5",
    make_config=make_config,
    trial_specs=trial_specs,
    run_trial=run_trial,
    report=report,
    nondeterministic_files=("fig5.png", "fig5.pdf"),
)
