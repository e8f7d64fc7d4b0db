"""What the server and the clients of a Flower run compute, without Flower (importable without flwr).

The Flower apps (:mod:`prirfed.flower.apps`) only carry messages; every decision is made here, by
the same reference functions the in-process trainers call, so that a Flower run equals the
in-process run round by round:

- the run key is ``run_key(rng)`` (one draw from the caller's Generator, as the trainers);
- in round t the server draws S_t with ``sample_without_replacement(server_stream(key, t), N, s)``
  (Algorithm 1 of Huang et al. (2024), line 2; Algorithms 1-3 of Li and Ma (2023)), and agent i trains on
  ``agent_stream(key, t, i)`` (:mod:`prirfed.reference.randomness`), wherever it runs;
- the server step is :func:`prirfed.reference.trainers.aggregation.server_step` (the tangent mean
  (3.2) of Huang et al. (2024) / (8) of Li and Ma (2023), or the Karcher mean (3.1) / (7)) over the accepted uploads, in the
  order of S_t; Option 2 draws the output from the server's stream of round T;
- PriRFed's privacy event after t rounds is
  :func:`prirfed.reference.trainers.privacy.prirfed_run_event` with T = t (the record-level
  activation event of the accountant of Huang et al. (2024) Theorem 4.2, made rigorous in the proofs notes), and
  epsilon is computed by ``run_epsilon(event, delta, accountant)`` (default ``"best"``, the
  tightest valid accountant).

Agents' data: a client holds :func:`agent_shard` of the problem, a copy that keeps agent i's
records only (the other agents' arrays are replaced by ``None``, so any read of them fails).

Trust: the run key is shared by the server and the clients, as in the in-process simulation: a
server that knows the key can recompute an agent's noise. The equality with the in-process run
needs this; a deployment whose server is not trusted with the noise gives each client its own key
(``client_key`` in :func:`client_update`), and then equals no in-process run.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field

import numpy as np

from prirfed.reference.randomness import agent_stream, run_key, server_stream
from prirfed.reference.trainers.aggregation import server_step
from prirfed.reference.trainers.base import sample_without_replacement

__all__ = ["ALGORITHMS", "agent_shard", "OneAgent", "agents_of_node", "Sizes", "RoundServer", "client_update", "client_gradient",
           "key_words", "key_from_words", "FlowerRunResult", "make_key"]

#: the federated algorithms a Flower run can run (the names of the in-process trainers)
ALGORITHMS = ("prirfed", "rfedsvrg", "rfedavg", "rfedprox")


def key_words(key) -> list[str]:
    """The run key (uint64 array of shape (2,)) as two decimal strings (messages carry no uint64)."""
    k = np.asarray(key)
    if k.shape != (2,) or k.dtype != np.uint64:
        raise ValueError(f"key_words: the run key must be a uint64 array of shape (2,) (got {k.dtype}, {k.shape})")
    return [str(int(w)) for w in k]


def key_from_words(words) -> np.ndarray:
    """Inverse of :func:`key_words`."""
    if len(words) != 2:
        raise ValueError(f"key_from_words: need two words (got {len(words)})")
    vals = [int(w) for w in words]
    if any(not 0 <= v < 2**64 for v in vals):
        raise ValueError(f"key_from_words: words must lie in [0, 2^64) (got {words!r})")
    return np.array(vals, dtype=np.uint64)


def agent_shard(problem, i: int):
    """A copy of ``problem`` holding agent i's records only: every per-agent list attribute of length
    N (the records ``Z`` / ``data`` and per-agent matrices such as ``A_i``) keeps a copy of entry i
    (its own memory, not a view of a buffer shared with the other agents) and has ``None``
    elsewhere; cached optima are dropped. The per-agent constants (N_i, p_i, c_i) stay, so
    ``grad_sample(x, i, j)`` and ``grad_agent(x, i)`` are those of the full problem (tested)."""
    N = problem.N
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= int(i) < N:
        raise ValueError(f"agent_shard: agent index must be an integer in [0, {N - 1}] (got {i!r})")
    i = int(i)
    shard = copy.copy(problem)
    for name, value in list(vars(problem).items()):
        if isinstance(value, list) and len(value) == N and name != "N_i" and all(isinstance(v, np.ndarray) for v in value):
            # a copy: the problem may keep its agents' records as views of one buffer, which a view would keep alive
            setattr(shard, name, [np.array(v, copy=True) if k == i else None for k, v in enumerate(value)])
    for name in ("_x_star", "_opt"):
        if name in vars(shard):
            setattr(shard, name, None)
    shard.flower_agent = i
    return shard


class OneAgent:
    """Agent i of a federated problem built from agent i's records alone: ``inner`` is a problem of
    one agent (e.g. ``SpherePCA([Z_i])``) and ``sizes`` the N_i of all agents. It answers the calls
    a client makes (``grad_sample(x, i, j)``, ``grad_agent(x, i)``, ``sizes``, ``N``, ``manifold``)
    with agent 0 of ``inner``; valid when the per-sample loss of agent i depends on its own records
    and N_i only (true of every problem of prirfed.reference.problems: c_i and the gradients do
    not involve p_i; tested against the full problem)."""

    def __init__(self, inner, i: int, sizes):
        if inner.N != 1:
            raise ValueError(f"OneAgent: inner must be a problem of one agent (got N = {inner.N})")
        sizes = [int(n) for n in sizes]
        if not 0 <= int(i) < len(sizes) or inner.sizes[0] != sizes[int(i)]:
            raise ValueError(f"OneAgent: agent {i} must exist and hold N_i = {inner.sizes[0]} records "
                             f"(sizes give {sizes[int(i)] if 0 <= int(i) < len(sizes) else 'no such agent'})")
        self.inner, self.i, self._sizes = inner, int(i), sizes
        self.manifold = inner.manifold

    def _agent(self, i) -> int:
        if int(i) != self.i:
            raise ValueError(f"OneAgent: this node holds agent {self.i} only (asked for agent {i})")
        return 0

    @property
    def N(self) -> int:
        return len(self._sizes)

    @property
    def sizes(self) -> list:
        return list(self._sizes)

    def grad_sample(self, x, i, j):
        return self.inner.grad_sample(x, self._agent(i), j)

    def grad_agent(self, x, i):
        return self.inner.grad_agent(x, self._agent(i))


def agents_of_node(N: int, partition: int, n_partitions: int) -> list[int]:
    """The agents a SuperNode holds: i with i mod n_partitions = partition (round robin)."""
    if not (isinstance(n_partitions, int) and 1 <= n_partitions <= N):
        raise ValueError(f"agents_of_node: the number of SuperNodes must be an integer in [1, N = {N}] (got {n_partitions!r})")
    if not (isinstance(partition, int) and 0 <= partition < n_partitions):
        raise ValueError(f"agents_of_node: partition must be an integer in [0, {n_partitions - 1}] (got {partition!r})")
    return list(range(partition, N, n_partitions))


@dataclass
class Sizes:
    """What the server knows of the problem: its manifold, the agents' sizes N_i and weights p_i
    (the settings checks of the trainers read only these)."""

    manifold: object
    sizes: list
    weights: np.ndarray

    @property
    def N(self) -> int:
        return len(self.sizes)

    @classmethod
    def of(cls, problem) -> "Sizes":
        return cls(problem.manifold, list(problem.sizes), np.asarray(problem.weights, dtype=np.float64))


@dataclass
class FlowerRunResult:
    """The outcome of a Flower run: ``x`` (Option 1: x^(T); Option 2: the drawn iterate),
    ``iterates`` x^(0..rounds), the privacy ``event`` of the rounds run (None when not private),
    ``epsilons[t]`` after round t+1 (PriRFed with a delta), ``refused`` (round, agent, reason) of
    every refused upload, ``missing`` (round, agent, reason) of every upload that did not arrive,
    ``rounds`` run and ``stopped`` (why the run ended before T, else None)."""

    x: np.ndarray
    iterates: list
    event: object
    epsilons: list = field(default_factory=list)
    refused: list = field(default_factory=list)
    missing: list = field(default_factory=list)
    rounds: int = 0
    stopped: str | None = None
    info: dict = field(default_factory=dict)


_PRIRFED_KEYS = ("T", "s", "alpha", "local", "K", "b", "m", "sigma", "tau", "tau0", "tau1", "option", "local_option",
                 "aggregation", "maps")
_RFED_KEYS = {"rfedsvrg": ("T", "k", "eta", "tau", "option", "aggregation", "weighting", "maps"),
              "rfedavg": ("T", "k", "eta", "tau", "aggregation", "weighting", "maps"),
              "rfedprox": ("T", "k", "eta", "tau", "mu", "aggregation", "weighting", "maps")}


class RoundServer:
    """The server of a Flower run, without Flower: S_t, the clients' instructions, the upload checks,
    the server step, the accountant and the budget.

    Parameters
    ----------
    algorithm : "prirfed" | "rfedsvrg" | "rfedavg" | "rfedprox"
    sizes : :class:`Sizes` (manifold, N_i, p_i)
    x0 : the initial point
    settings : the trainer's keyword arguments (those of ``prirfed.reference.trainers.prirfed.prirfed``
        or of ``rfedsvrg`` / ``rfedavg`` / ``rfedprox``), checked by the trainers' own settings checks
    key : the run key (uint64 array of shape (2,))
    budget : (eps, delta) or None. PriRFed: a round runs only if the event of the rounds so far
        plus this one has epsilon <= eps at delta; epsilon is logged after every round. For the
        non-private algorithms a budget is refused.
    accountant : "best" (default), "pld", "rdp" or an accountant object
    delta : the delta at which epsilon is logged when no budget is given (None: no epsilon)
    log : a callable taking one line of text (default: nothing)
    """

    def __init__(self, algorithm, sizes: Sizes, x0, settings: dict, key, *, budget=None, accountant="best",
                 delta=None, log=None):
        from prirfed.reference.manifolds.retracted import geometry

        where = "prirfed.flower"
        if algorithm not in ALGORITHMS:
            raise ValueError(f"{where}: algorithm must be one of {ALGORITHMS} (got {algorithm!r})")
        allowed = _PRIRFED_KEYS if algorithm == "prirfed" else _RFED_KEYS[algorithm]
        for k in settings:
            if k not in allowed:
                raise ValueError(f"{where}: {algorithm} has no setting {k!r} (allowed: {', '.join(allowed)})")
        self.algorithm = algorithm
        self.sizes = sizes
        self.settings = dict(settings)
        self.key = np.asarray(key)
        self.accountant = accountant
        self.log = log if log is not None else (lambda line: None)
        maps = settings.get("maps", "exp")
        self.M = geometry(sizes.manifold, maps)
        self.maps = maps
        self.x = self.M.check_point(x0, where=f"{where}: x0")
        self.iterates = [self.x]
        N = sizes.N
        if algorithm == "prirfed":
            from prirfed.reference.checks import check_int
            from prirfed.reference.trainers.base import check_tau
            from prirfed.reference.trainers.prirfed import prirfed_settings

            st = self.settings
            local = st.get("local", "dp_rsgd")
            option = st.get("option", 1)
            aggregation = st.get("aggregation", "tangent")
            T, s, alphas, sigmas, b = prirfed_settings(where, sizes, st.get("T"), st.get("s"), st.get("alpha"), option,
                                                       local, aggregation, st.get("sigma", 0.0), st.get("b"))
            # the clipping thresholds by the trainers' shared check (the clients' trainers would refuse
            # a bad one too, but later and from a SuperNode)
            tau = check_tau(where, "tau", st.get("tau", math.inf))
            self.plan = dict(T=T, per_round=s, alphas=alphas, sigmas=sigmas, bs=b.astype(int), local=local,
                             option=option, local_option=option if st.get("local_option") is None else st["local_option"],
                             aggregation=aggregation, K=check_int(where, "K", st.get("K", 1)),
                             m=check_int(where, "m", st.get("m", 1)), tau=tau,
                             tau0=tau if st.get("tau0") is None else check_tau(where, "tau0", st["tau0"]),
                             tau1=tau if st.get("tau1") is None else check_tau(where, "tau1", st["tau1"]))
        else:
            from prirfed.reference.trainers.base import check_nonnegative
            from prirfed.reference.trainers.rfed import federated_settings

            st = self.settings
            option = st.get("option", 1) if algorithm == "rfedsvrg" else 1
            aggregation = st.get("aggregation", "tangent")
            weighting = st.get("weighting", "uniform")
            T, k, etas, taus, _ = federated_settings(where, sizes, st.get("T"), st.get("k"), st.get("eta"), st.get("tau"),
                                                     option, aggregation, weighting, 1)
            mu = check_nonnegative(where, "mu", st.get("mu", 0.0))
            self.plan = dict(T=T, per_round=k, etas=etas, taus=taus, option=option, aggregation=aggregation,
                             weighting=weighting, mu=mu)
        if budget is not None:
            if algorithm != "prirfed":
                raise ValueError(f"{where}: a privacy budget applies to 'prirfed' only ({algorithm} is not private)")
            eps_b, delta_b = budget
            if not (math.isfinite(eps_b) and eps_b > 0 and 0 < delta_b < 1):
                raise ValueError(f"{where}: budget must be (eps > 0 finite, 0 < delta < 1) (got {budget!r})")
            delta = delta_b
        self.budget = budget
        self.delta = delta
        self.epsilons = []
        self.refused = []
        self.missing = []
        self.stopped = None
        self.round_times = []  # time.perf_counter() at the end of each round (benchmarks)
        self._eps = {}  # rounds -> epsilon (may_run and after_round ask for the same one)

    # ----------------------------------------------------------------- rounds
    @property
    def T(self) -> int:
        return int(self.plan["T"])

    def agents(self, t: int) -> list[int]:
        """S_t: s (or k) of N agents without replacement from the server's stream of round t."""
        return [int(i) for i in sample_without_replacement(server_stream(self.key, t), self.sizes.N,
                                                           self.plan["per_round"])]

    def instructions(self, t: int, i: int) -> dict:
        """What agent i needs in round t besides x^(t) (and, for RFedSVRG, grad f(x^(t))): its
        settings, scalars only (a Flower ConfigRecord)."""
        p = self.plan
        if self.algorithm == "prirfed":
            return dict(algorithm="prirfed", t=t, agent=i, local=p["local"], K=p["K"], b=int(p["bs"][i]), m=p["m"],
                        sigma=float(p["sigmas"][i]), tau=p["tau"], tau0=p["tau0"], tau1=p["tau1"],
                        alpha=float(p["alphas"][t]), option=int(p["local_option"]), maps=self.maps)
        return dict(algorithm=self.algorithm, t=t, agent=i, eta=float(p["etas"][i]), tau=int(p["taus"][i]),
                    option=int(p["option"]), mu=p["mu"], maps=self.maps)

    def check_upload(self, t: int, i: int, upload, *, tangent: bool = False):
        """Agent i's upload as a float64 array if it has the manifold's shape, is finite and is a point
        (for a gradient: a tangent vector at x^(t)) within the manifold's tolerance; else None, with
        the reason logged and kept in ``refused``."""
        where = f"upload of agent {i} in round {t}"
        try:
            if tangent:
                return self.M.check_tangent(self.x, upload, where=where)
            return self.M.check_point(upload, where=where)
        except (ValueError, TypeError) as exc:
            reason = " ".join(str(exc).split())
            self.refused.append((t, i, reason))
            self.log(f"round {t}: refused: {reason}")
            return None

    def note_missing(self, t: int, i: int, reason: str) -> None:
        """An upload that did not arrive (the node failed or timed out): logged, not aggregated."""
        self.missing.append((t, i, reason))
        self.log(f"round {t}: no upload from agent {i} ({reason})")

    def full_gradient(self, grads: dict):
        """RFedSVRG's grad f(x^(t)) = P_x(sum_i p_i grad f_i(x^(t))) from every agent's gradient
        (Li and Ma (2023) Algorithm 1, line 3), summed in agent order as ``FederatedProblem.rgrad``."""
        p = self.sizes.weights
        return self.M.proj(self.x, sum(p[i] * grads[i] for i in range(self.sizes.N)))

    def weight(self, i: int) -> float:
        if self.algorithm == "prirfed" or self.plan["weighting"] == "size":
            return self.sizes.sizes[i]
        return 1.0

    def step(self, t: int, S: list, accepted: dict) -> np.ndarray:
        """x^(t+1) from the accepted uploads, in the order of S_t. With no accepted upload the
        iterate stays (the round still counts for privacy: the agents were sampled and ran)."""
        order = [i for i in S if i in accepted]
        if order:
            self.x = server_step(self.M, self.x, [accepted[i] for i in order], [self.weight(i) for i in order],
                                 self.plan["aggregation"])
        else:
            self.log(f"round {t}: no upload accepted; x kept")
        self.iterates.append(self.x)
        return self.x

    # ----------------------------------------------------------------- privacy
    def event(self, rounds: int):
        """(event, reason) of the first ``rounds`` rounds (PriRFed; (None, reason) otherwise)."""
        if self.algorithm != "prirfed":
            return None, f"not private: {self.algorithm} adds no noise"
        if rounds == 0:
            return None, "no round run"
        from prirfed.reference.trainers.privacy import prirfed_run_event

        p = self.plan
        return prirfed_run_event(self.sizes, local=p["local"], N=self.sizes.N, s=p["per_round"], T=rounds, K=p["K"],
                                 m=p["m"], sigmas=p["sigmas"], bs=p["bs"], tau=p["tau"], tau0=p["tau0"], tau1=p["tau1"])

    def epsilon(self, rounds: int):
        """epsilon at ``delta`` of the first ``rounds`` rounds by the accountant (None: no delta or not private)."""
        if rounds in self._eps:
            return self._eps[rounds]
        ev, _ = self.event(rounds)
        if ev is None or self.delta is None:
            return None
        from prirfed.reference.trainers.privacy import run_epsilon

        self._eps[rounds] = float(run_epsilon(ev, self.delta, self.accountant))
        return self._eps[rounds]

    def may_run(self, t: int) -> bool:
        """Whether round t fits the budget: epsilon of rounds 0..t at delta <= eps (always True without a budget)."""
        if self.budget is None:
            return True
        eps = self.epsilon(t + 1)
        if eps is not None and eps > self.budget[0]:
            self.stopped = (f"stopped before round {t}: it would spend eps = {eps:.6g} > budget {self.budget[0]:g} "
                            f"at delta = {self.budget[1]:g}")
            self.log(self.stopped)
            return False
        return True

    def after_round(self, t: int) -> None:
        """Log epsilon after round t (PriRFed with a delta)."""
        self.round_times.append(time.perf_counter())
        eps = self.epsilon(t + 1)
        if eps is not None:
            self.epsilons.append(eps)
            self.log(f"round {t}: eps = {eps:.6g} at delta = {self.delta:g} ({self.accountant} accountant)")

    def result(self) -> FlowerRunResult:
        """The run's output (Option 2: drawn from the server's stream of round T, the in-process rule)."""
        rounds = len(self.iterates) - 1
        option = self.plan["option"]
        if option == 2 and rounds == self.T:
            x_out = self.iterates[1 + int(server_stream(self.key, self.T).integers(1, self.T + 1)) - 1]
        else:
            x_out = self.x
        ev, why = self.event(rounds)
        return FlowerRunResult(x=x_out, iterates=list(self.iterates), event=ev, epsilons=list(self.epsilons),
                               refused=list(self.refused), missing=list(self.missing), rounds=rounds,
                               stopped=self.stopped, info=dict(algorithm=self.algorithm, privacy=why, T=self.T,
                                                               round_times=list(self.round_times)))


# --------------------------------------------------------------------------- clients


def client_update(shard, i: int, x, cfg: dict, key, full_grad=None, *, client_key=None):
    """Agent i's upload in round ``cfg["t"]`` from x^(t): DP-RSGD (Algorithm 2 of Huang et al. (2024)) or DP-RSVRG
    (Algorithm 3 of Huang et al. (2024)) for PriRFed; tau_i local steps of RFedSVRG (9) / RFedAvg / RFedProx (28) of
    Li and Ma (2023) otherwise, with Option 2's draw from the agent's stream. Randomness: ``agent_stream(key, t, i)``
    (``client_key`` in place of ``key`` when given: the agent's own secret key)."""
    from prirfed.reference.manifolds.retracted import geometry

    t = int(cfg["t"])
    stream = agent_stream(key if client_key is None else client_key, t, i)
    maps = cfg.get("maps", "exp")
    if cfg["algorithm"] == "prirfed":
        from prirfed.reference.trainers.local import dp_rsgd_local, dp_rsvrg_local

        if cfg["local"] == "dp_rsgd":
            return dp_rsgd_local(shard, i, x, int(cfg["K"]), int(cfg["b"]), float(cfg["sigma"]), float(cfg["tau"]),
                                 float(cfg["alpha"]), stream, int(cfg["option"]), maps)
        return dp_rsvrg_local(shard, i, x, int(cfg["K"]), int(cfg["m"]), float(cfg["sigma"]), float(cfg["tau0"]),
                              float(cfg["tau1"]), float(cfg["alpha"]), stream, int(cfg["option"]), maps)
    from prirfed.reference.trainers.rfed import prox_gradient

    M = geometry(shard.manifold, maps)
    algorithm, eta, tau_i = cfg["algorithm"], float(cfg["eta"]), int(cfg["tau"])
    x_t = M.check_point(x, where=f"client {i}: x^(t)")
    correction = None
    if algorithm == "rfedsvrg":
        correction = shard.grad_agent(x_t, i) - full_grad
    xl, path = x_t, []
    for _ell in range(tau_i):
        g = shard.grad_agent(xl, i)
        if algorithm == "rfedsvrg":
            g = g - M.transp(x_t, xl, correction)
        elif algorithm == "rfedprox":
            g = prox_gradient(M, xl, x_t, g, float(cfg["mu"]))
        xl = M.exp(xl, -eta * g)
        path.append(xl)
    if int(cfg["option"]) == 1:
        return path[-1]
    return path[int(stream.integers(1, tau_i + 1)) - 1]


def client_gradient(shard, i: int, x):
    """grad f_i(x^(t)), the gradient agent i sends for RFedSVRG's full gradient (Li and Ma (2023) Algorithm 1)."""
    return shard.grad_agent(x, i)


def make_key(seed_or_rng) -> np.ndarray:
    """The run key from a seed (``np.random.default_rng(seed)``) or a Generator: the in-process
    trainers' ``run_key(rng)``, so the same seed gives the same run."""
    rng = seed_or_rng if isinstance(seed_or_rng, np.random.Generator) else np.random.default_rng(seed_or_rng)
    return run_key(rng)
