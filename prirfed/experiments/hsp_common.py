"""What 000's Figures 5 and 6 share (PriRFed on hyperbolic structured prediction, WordNet mammals):
the configuration and its checks, the data set and problem (6.3) of a configuration (cached per
process), and one run of the four methods (:func:`run_methods`). Figure 5 reports the curves,
Figure 6 the predictions on the Poincare disk. The settings and our choices are documented in
``prirfed_fig5``'s docstring. Proofs note: ``proofs_notes/experiment_prirfed_fig5.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math

import numpy as np

from prirfed.backend import trainers
from prirfed.reference.data import wordnet as wn
from prirfed.reference.data.partition import partition_equal
from prirfed.reference.data.real import shared_data_dir
from prirfed.reference.manifolds.lorentz_rows import dist_rows
from prirfed.reference.trainers.privacy import prirfed_run_event
from prirfed.verified.problems.cached import BatchedHSP

from . import validate as v
from .privacy import check_accountant, local_sigma, privacy_of_run

__all__ = ["METHODS", "LABELS", "PRIVATE", "DATA_SPAWN_KEY", "DATA_KEYS", "FEATURE_SCALES", "WIDTH_SWEEP", "closure_available",
           "make_config", "validate", "tree_closure", "data_title", "feature_scale_factor", "scale_features", "build_setting",
           "data_sentence", "width_sweep", "run_privacy", "run_methods", "training_pool", "subset_problem"]

METHODS = ("rsgd", "dp_rsgd", "rsvrg", "dp_rsvrg")
LABELS = {"rsgd": "PriRFed-RSGD", "dp_rsgd": "PriRFed-DP-RSGD", "rsvrg": "PriRFed-RSVRG", "dp_rsvrg": "PriRFed-DP-RSVRG"}
PRIVATE = ("dp_rsgd", "dp_rsvrg")
#: spawn key of the data's SeedSequence (entropy = the experiment's seed): distinct from the trials'
#: keys (0,), (1,), ... so the data set is the same in every trial and independent of the runs.
DATA_SPAWN_KEY = (1 << 30,)
#: Settings that determine the data set and the problem (the key of the per-process cache).
DATA_KEYS = ("seed", "data", "tree_branching", "tree_depth", "test_word", "r", "embed_epochs", "embed_burnin", "N",
             "lam", "gamma_rule", "v_bar", "kernel", "M", "eps", "delta", "K", "m", "calibrate", "accountant")
#: ``feature_scale``: "median_unit" (Figures 5/6's default) divides the eigenmap features by the
#: median pairwise distance of the training features (:func:`scale_features`); "none" keeps them as
#: computed. A configuration without the key gets "none" (the frontier's carries it: it uses the
#: scaled features of Figures 5/6).
FEATURE_SCALES = ("median_unit", "none")
#: kernel widths v of the sensitivity table (:func:`width_sweep`), in units of the scaled features
WIDTH_SWEEP = (0.1, 0.2, 0.3, 0.5, 1.0)


def closure_available() -> bool:
    root = shared_data_dir()
    return root is not None and (root / wn.MAMMAL_CLOSURE).is_file()


def make_config(mode: str, seed: int, backend: str) -> dict:
    sizes = {
        "full": dict(T=300, runs=10, embed_epochs=10, embed_burnin=5, tree_depth=5),
        "quick": dict(T=150, runs=3, embed_epochs=5, embed_burnin=2, tree_depth=5),
        "tiny": dict(T=8, runs=2, embed_epochs=3, embed_burnin=1, tree_depth=3, N=3, alpha=0.05),
    }[mode]
    sizes.setdefault("N", 9)
    sizes.setdefault("alpha", 0.3)
    if mode == "tiny":
        data, note = "synthetic", "tiny mode: an uneven tree's transitive closure (subtrees of branching 2, 3, 4, 5; depth 3, 73 nodes; N = 3 agents), not WordNet"
    elif closure_available():
        data, note = "wordnet", "WordNet mammal closure from the shared data folder (1180 nodes, 6540 edges)"
    else:
        data, note = "synthetic", ("FALLBACK: wordnet/mammal_closure.tsv is absent from the shared data folder, so the "
                                   "transitive closure of an uneven tree (root with subtrees of branching 2, 3, 4, 5; depth 5, "
                                   "1275 nodes; its eigenmap features do not depend on the eigen-solver) stands in")
    return dict(mode=mode, seed=seed, backend=backend, calibrate=False, accountant="best", data=data, data_note=note,
                tree_branching=[2, 3, 4, 5], test_word="primate.n.02", r=3, lam=1e-5, gamma_rule="n_lambda", v_bar=0.3,
                kernel="gaussian", feature_scale="median_unit", M=4.0, eps=0.15, delta=1e-4, delta_hat=1e-3, s=1, K=3, m=5,
                methods=list(METHODS), **sizes)


def validate(where: str, config: dict) -> None:
    """Raise ``ValueError`` naming ``where`` and the setting for every bad configuration value."""
    for key, low in (("T", 1), ("runs", 1), ("N", 1), ("s", 1), ("K", 1), ("m", 1), ("r", 1), ("embed_epochs", 0),
                     ("embed_burnin", 0), ("tree_depth", 2)):
        v.check_int(where, key, config[key], low)
    tb = config["tree_branching"]
    if isinstance(tb, list):
        if not tb:
            raise ValueError(f"{where}: tree_branching must be an integer >= 1 or a non-empty list of them (got [])")
        for b in tb:
            v.check_int(where, "tree_branching", b, 1)
    else:
        v.check_int(where, "tree_branching", tb, 1)
    if config["s"] > config["N"]:
        raise ValueError(f"{where}: s must be <= N = {config['N']} (got {config['s']})")
    for key in ("lam", "v_bar", "M", "eps", "alpha"):
        v.check_positive(where, key, config[key])
    for key in ("delta", "delta_hat"):
        v.check_probability(where, key, config[key])
    v.check_choice(where, "data", config["data"], ("wordnet", "synthetic"))
    if config["data"] == "wordnet" and not closure_available():
        raise ValueError(f"{where}: data = 'wordnet' but {wn.MAMMAL_CLOSURE} is not in the shared data folder "
                         f"({shared_data_dir()}); use data = 'synthetic'")
    v.check_choice(where, "gamma_rule", config["gamma_rule"], ("n_lambda", "printed"))
    v.check_choice(where, "kernel", config["kernel"], ("gaussian", "printed"))
    v.check_choice(where, "feature_scale", config["feature_scale"], FEATURE_SCALES)
    v.check_names(where, "methods", config["methods"], METHODS)
    v.check_bool(where, "calibrate", config["calibrate"])
    check_accountant(where, config)


# ----------------------------------------------------------------------------- data and problem


def tree_closure(branching, depth: int) -> wn.MammalClosure:
    """Transitive closure of a tree of the given depth, as a :class:`MammalClosure`: nodes named by
    their path (``"t"``, ``"t.0"``, ``"t.0.1"``, ...), one edge ``(descendant, ancestor)`` for every
    proper ancestor. ``branching`` an int b: the balanced b-ary tree, n = (b^(depth+1) - 1)/(b - 1)
    nodes (depth + 1 for b = 1) and sum_k k b^k edges (k = depth of the descendant). ``branching`` a
    list [b_0, ..., b_{m-1}]: the root has m children and every node below child i has b_i children
    (uneven subtrees: the fallback of Figures 5/6, whose Laplacian's smallest eigenvalues are simple,
    so the eigenmap features do not depend on the eigen-solver; a balanced tree's are repeated)."""
    uneven = isinstance(branching, (list, tuple))
    paths = [("t",)]
    frontier = [("t",)]
    for level in range(depth):
        if uneven and level == 0:
            frontier = [p + (str(c),) for p in frontier for c in range(len(branching))]
        elif uneven:
            frontier = [p + (str(c),) for p in frontier for c in range(branching[int(p[1])])]
        else:
            frontier = [p + (str(c),) for p in frontier for c in range(branching)]
        paths += frontier
    names = tuple(sorted(".".join(p) for p in paths))
    index = {s: i for i, s in enumerate(names)}
    edges = [(index[".".join(p)], index[".".join(p[:k])]) for p in paths for k in range(1, len(p))]
    return wn.MammalClosure(names=names, edges=np.array(edges, dtype=np.int64).reshape(-1, 2), index=index)


def feature_scale_factor(W) -> float:
    """1 / (median Euclidean distance over the distinct pairs of rows of ``W``): the factor that gives
    the features a unit median pairwise distance.

    Why (derived in proofs_notes/experiment_prirfed_fig5.md, "Revision: feature scale and kernel width"): the Gaussian kernel
    exp(-||w - w'||^2 / (2 v^2)) depends on the features only through ||w - w'|| / v, so a width v
    means something only against the features' own scale. The Laplacian eigenmap normalises
    f^T D f = 1 (Belkin & Niyogi 2003), so its entries are ~ 1 / sqrt(sum of degrees): ~1e-3 on the
    1180-node mammal closure, where v = 0.3 gives a kernel of 0.98-1.0 for every pair (the ridge
    regression then averages all targets). Dividing by the median pairwise distance makes the
    typical pair's distance 1 whatever the graph (the kernel of the median pair is
    exp(-1 / (2 v^2)) = 0.0039 at v = 0.3), is invariant to any rescaling of the input features,
    and is deterministic (a median of fixed numbers). The median, not the mean, so a few far nodes do
    not set the scale. Raises ``ValueError`` with fewer than 2 rows or a zero median (more than half
    of the pairs coincide)."""
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] < 2 or not np.all(np.isfinite(W)):
        raise ValueError(f"feature_scale_factor: W must be a finite 2-D array with at least 2 rows (got shape {W.shape})")
    i, j = np.triu_indices(W.shape[0], k=1)
    med = float(np.median(np.sqrt(np.sum((W[i] - W[j]) ** 2, axis=1))))
    if not med > 0:
        raise ValueError(f"feature_scale_factor: the median pairwise distance of the {W.shape[0]} rows is {med!r}: more than "
                         "half of the pairs coincide, no scale can be read from them")
    return 1.0 / med


def scale_features(data: wn.HSPData, rule: str = "median_unit") -> tuple[wn.HSPData, float]:
    """The HSP data with features scaled by ``rule`` (one of :data:`FEATURE_SCALES`) and the factor:
    ``"median_unit"`` multiplies every feature (training and test) by :func:`feature_scale_factor` of
    the TRAINING features (the test word's feature does not set its own scale); ``"none"`` returns
    the data unchanged with factor 1."""
    if rule not in FEATURE_SCALES:
        raise ValueError(f"scale_features: rule must be one of {FEATURE_SCALES} (got {rule!r})")
    if rule == "none":
        return data, 1.0
    c = feature_scale_factor(data.w[data.train])
    return dataclasses.replace(data, w=data.w * c), c


def _data_rng(config: dict) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(int(config["seed"]), spawn_key=DATA_SPAWN_KEY))


def _sigma(config: dict, method: str, tau: float, N_i: int) -> float:
    """Noise std of a private method (b_i = N_i): :func:`prirfed.experiments.privacy.local_sigma`."""
    return local_sigma(method, config["eps"], config["delta"], config["K"], tau, N_i, N_i, config["m"], config["calibrate"],
                       config["accountant"])


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
    data, factor = scale_features(data, config["feature_scale"])
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
    sigmas = {m: _sigma(config, m, tau, N_i) for m in PRIVATE}
    Y_train = np.concatenate(problem.Y)
    M_obj = problem.manifold
    related = {int(a) for c, a in closure.edges if c == data.test} | {int(c) for c, a in closure.edges if a == data.test}
    return dict(closure=closure, data=data, feature_factor=factor, problem=problem, h_w=h_w, y_true=y_true, tau=tau, sigmas=sigmas,
                N_i=N_i, gamma=gamma, agent_nodes=[k.tolist() for k in idx], Y_train=Y_train,
                related=sorted(related), test_name=test_name,
                d_opt_true=float(M_obj.dist(h_w, y_true)),
                max_dist_opt=float(np.max(dist_rows(np.broadcast_to(h_w, Y_train.shape), Y_train))))


def data_sentence(config: dict) -> str:
    """Where the data of this configuration come from, said from the setting actually built (so an
    override of ``data`` cannot leave a stale description)."""
    c = build_setting(config)["closure"]
    if config["data"] == "wordnet":
        return f"WordNet mammal closure from the shared data folder ({c.n} nodes, {c.edges.shape[0]} edges)"
    why = ("FALLBACK: the shared WordNet closure is absent; " if config["mode"] != "tiny" and not closure_available()
           else "")
    tb = config["tree_branching"]
    shape = (f"an uneven tree (root with {len(tb)} subtrees of branching {tb})" if isinstance(tb, list)
             else f"a balanced {tb}-ary tree")
    return (f"{why}synthetic: the transitive closure of {shape}, depth {config['tree_depth']} ({c.n} nodes, "
            f"{c.edges.shape[0]} edges), not WordNet")


def data_title(config: dict) -> str:
    """The data of a configuration in a figure title ("data: ...")."""
    if config["data"] == "wordnet":
        return "data: WordNet mammal closure (shared data folder)"
    return "data: synthetic tree closure" + (" (FALLBACK, WordNet absent)" if config["mode"] != "tiny" else "")


def build_setting(config: dict) -> dict:
    """The data set, problem (6.3), h(w), tau and the sigmas of one configuration (cached per process)."""
    key = {k: config[k] for k in DATA_KEYS}
    key["feature_scale"] = config.get("feature_scale", "none")
    return _setting(json.dumps(key, sort_keys=True))


def width_sweep(config: dict, widths=WIDTH_SWEEP) -> list[dict]:
    """Sensitivity of problem (6.3) to the kernel width: for each v in ``widths``, with the data, the
    split and the feature scale of ``config``, the kernel's off-diagonal spread over the training
    pairs (10%, 50%, 90% quantiles), the ridge weights' range, and the minimiser h(w) (what the
    non-private methods converge to) with its distance to the held-out node's true embedding."""
    st = build_setting(config)
    p0 = st["problem"]
    Wtr = np.concatenate(p0.W)
    i, j = np.triu_indices(Wtr.shape[0], k=1)
    d2 = np.sum((Wtr[i] - Wtr[j]) ** 2, axis=1)
    rows = []
    for v_bar in widths:
        p = BatchedHSP(p0.W, p0.Y, p0.w, gamma=p0.gamma, v_bar=float(v_bar), kernel=config["kernel"])
        s2 = 2.0 * v_bar * v_bar if config["kernel"] == "gaussian" else 4.0 * v_bar * v_bar
        q10, q50, q90 = np.quantile(np.exp(-d2 / s2), [0.1, 0.5, 0.9])
        a = np.concatenate(p.alpha)
        rows.append(dict(v_bar=float(v_bar), kernel_q10=float(q10), kernel_median=float(q50), kernel_q90=float(q90),
                         alpha_min=float(a.min()), alpha_max=float(a.max()),
                         dist_h_true=float(p.manifold.dist(p.x_star, st["y_true"]))))
    return rows


def run_privacy(event, method: str, config: dict, sigma: float, tau: float, N_i: int) -> dict:
    """:func:`prirfed.experiments.privacy.privacy_of_run` of a private method's run (full batch b_i = N_i)."""
    return privacy_of_run(event, config["eps"], config["delta"], config["N"], config["s"], config["T"], config["delta_hat"],
                          config["K"], N_i, N_i, sigma, tau, method, config["m"], config["accountant"])


def run_methods(config: dict, seq, *, with_privacy: bool = True) -> dict:
    """One run: x^(0) a uniformly random training embedding, then each method of ``config["methods"]``
    from x^(0) (children 1.. of ``seq``); curves of f, d^2 and dist to the true embedding, dist to h(w),
    ||grad f||, and the output x^(T)."""
    st = build_setting(config)
    problem, y_true = st["problem"], st["y_true"]
    x0_seq, *run_seqs = seq.spawn(1 + len(METHODS))
    j0 = int(np.random.default_rng(x0_seq).integers(st["Y_train"].shape[0]))
    x0 = st["Y_train"][j0].copy()
    prirfed = trainers(config["backend"]).prirfed
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
                          local=local, K=config["K"], b=st["N_i"], m=config["m"], sigma=sigma, tau=tau, keep_iterates=True,
                          record_every=1)
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
                run.update(run_privacy(event, method, config, sigma, st["tau"], st["N_i"]))
            runs[method] = run
            continue
        X = np.asarray(res.history.iterates)
        d_true = dist_rows(X, np.broadcast_to(y_true, X.shape))
        run = dict(diverged="", f=[float(v) for v in res.history.f], grad_norm=[float(v) for v in res.history.grad_norm],
                   dist_opt=[float(v) for v in res.history.dist_to_opt], dist_true=[float(v) for v in d_true],
                   x_out=[float(v) for v in res.x], sigma=float(sigma), tau=float(tau))
        if private and with_privacy:
            run.update(run_privacy(res.event, method, config, sigma, st["tau"], st["N_i"]))
        runs[method] = run
    return dict(x0_index=j0, x0=[float(v) for v in x0], runs=runs)




# ----------------------------------------------------------------------------- subsets (frontier)


def training_pool(config: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W, Y, w): the training features w_ij exactly as the problem of :func:`build_setting` uses
    them (after whatever feature map the setting applies), their embeddings y_ij in H^d (rows, the
    agents' parts concatenated) and the test feature w. Other experiments draw subsets of training
    nodes from this pool (the frontier: :func:`subset_problem`), so they see the same features as
    Figures 5 and 6."""
    p = build_setting(config)["problem"]
    return np.concatenate(p.W), np.concatenate(p.Y), np.array(p.w, dtype=np.float64)


def subset_problem(config: dict, W_parts, Y_parts, w) -> BatchedHSP:
    """Problem (6.3) of 000 on the agents' features ``W_parts`` and embeddings ``Y_parts`` (equal
    sizes N_i) for the test feature ``w``, with this configuration's ridge rule (gamma = lam N_i for
    ``gamma_rule = "n_lambda"``, lam for ``"printed"``), kernel width ``v_bar`` and ``kernel``."""
    sizes = {len(Wi) for Wi in W_parts}
    if len(sizes) != 1:
        raise ValueError(f"subset_problem: the agents must hold equally many nodes (got sizes {sorted(sizes)})")
    N_i = sizes.pop()
    gamma = config["lam"] * N_i if config["gamma_rule"] == "n_lambda" else config["lam"]
    return BatchedHSP(list(W_parts), list(Y_parts), w, gamma=gamma, v_bar=config["v_bar"], kernel=config["kernel"])
