"""Flower's simulation engine running a prirfed job (needs ``pip install 'prirfed[flower]'``)."""

from __future__ import annotations

import logging
import os

from .protocol import RoundServer, Sizes, make_key

__all__ = ["run_simulation", "simulation_backend_config"]


def simulation_backend_config(cpus: int | None = None) -> dict:
    """Ray settings of a local simulation: ``cpus`` CPUs for Ray (default: the CPUs this process may
    use), one per ClientApp, no dashboard, logs to the driver."""
    n = len(os.sched_getaffinity(0)) if cpus is None else int(cpus)
    return {"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
            "init_args": {"num_cpus": n, "num_gpus": 0, "include_dashboard": False, "log_to_driver": True}}


def run_simulation(problem, x0, algorithm: str = "prirfed", *, rng=None, seed=None, supernodes: int | None = None,
                   budget=None, delta=None, accountant: str = "best", timeout: float = 600.0, upload_hook=None,
                   fail_hook=None, log=None, cpus: int | None = None, verbose: bool = False, load_agent=None,
                   **settings):
    """Run ``algorithm`` ("prirfed", "rfedsvrg", "rfedavg", "rfedprox") on ``problem`` from ``x0`` in
    Flower's simulation engine (Ray) and return a :class:`~prirfed.flower.protocol.FlowerRunResult`.

    ``settings`` are the in-process trainer's keyword arguments (``T, s, alpha, local, K, b, sigma,
    tau, ...`` for PriRFed; ``T, k, eta, tau, ...`` for the RFed family). ``rng`` (a Generator) or
    ``seed`` gives the run key exactly as the in-process trainer draws it, so that
    ``run_simulation(problem, x0, T=..., rng=np.random.default_rng(7), ...)`` and
    ``prirfed(problem, x0, ..., rng=np.random.default_rng(7))`` give the same iterates.
    ``supernodes``: simulated SuperNodes (default N, one agent each; agent i on node i mod
    supernodes). ``budget=(eps, delta)``: PriRFed stops before a round that would exceed it;
    ``delta`` alone: epsilon is logged after every round. ``upload_hook(t, i, upload)`` and
    ``fail_hook(t, i)`` (raise to make a node fail) are for fault-injection tests.

    ``problem`` may be a :class:`~prirfed.flower.protocol.Sizes` (what the server knows: manifold,
    N_i, p_i) with ``load_agent(i)`` returning agent i's shard, built on the node that holds it
    (so that the agents' data never travels, e.g. for data larger than memory); by default a node
    holds :func:`~prirfed.flower.protocol.agent_shard` of ``problem`` for each of its agents.
    """
    if (rng is None) == (seed is None):
        raise ValueError("prirfed.flower.run_simulation: give exactly one of rng (a numpy Generator) and seed")
    from .apps import build_client_app, build_server_app, shards_for_node

    os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")
    from flwr.simulation import run_simulation as flwr_run_simulation

    key = make_key(rng if rng is not None else seed)
    sizes = problem if isinstance(problem, Sizes) else Sizes.of(problem)
    if isinstance(problem, Sizes) and load_agent is None:
        raise ValueError("prirfed.flower.run_simulation: with Sizes in place of a problem, give load_agent(i)")
    lines = []
    sink = log if log is not None else lines.append
    server = RoundServer(algorithm, sizes, x0, settings, key, budget=budget, delta=delta, accountant=accountant,
                         log=sink)
    n_nodes = sizes.N if supernodes is None else int(supernodes)
    if not 1 <= n_nodes <= sizes.N:
        raise ValueError(f"prirfed.flower.run_simulation: supernodes must lie in [1, N = {sizes.N}] (got {supernodes!r})")
    out = {}

    def on_result(result, context):
        out["result"] = result

    hook = upload_hook
    if fail_hook is not None:
        def hook(t, i, up, _inner=upload_hook):
            fail_hook(t, i)
            return up if _inner is None else _inner(t, i, up)

    server_app = build_server_app(lambda context: server, on_result=on_result, min_nodes=lambda context: n_nodes,
                                  timeout=timeout)
    if load_agent is None:
        client_app = build_client_app(lambda context: shards_for_node(problem, context), upload_hook=hook)
    else:
        client_app = build_client_app(lambda context: shards_for_node(sizes, context, load_agent), upload_hook=hook)
    level = logging.getLogger("flwr").level
    try:
        flwr_run_simulation(server_app=server_app, client_app=client_app, num_supernodes=n_nodes,
                            backend_config=simulation_backend_config(cpus), verbose_logging=verbose)
    finally:
        logging.getLogger("flwr").setLevel(level)
    if "result" not in out:
        raise RuntimeError("prirfed.flower.run_simulation: the ServerApp ended without a result (see Flower's log above)")
    res = out["result"]
    res.info["log"] = lines if log is None else None
    res.info["supernodes"] = n_nodes
    return res

