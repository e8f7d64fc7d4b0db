"""Problems, settings and a Flower-free driver shared by tests/flower.

``drive`` runs the server and client functions of :mod:`prirfed.flower.protocol` in one process,
in the order the Flower apps call them; ``drop`` removes chosen uploads (as a refusal or a
dropout would), so the expected iterates of a faulty Flower run are computed without Flower.
"""

from __future__ import annotations

import numpy as np

from prirfed.experiments.custom import build_problem
from prirfed.flower.protocol import RoundServer, Sizes, agent_shard, client_gradient, client_update, make_key

SPHERE = dict(problem={"kind": "sphere_pca", "paper": "000"},
              data={"source": "eigengap", "N": 5, "N_i": [24, 30, 27, 30, 21], "d": 5, "nu": 1e-3, "variant": "paper"})
SPD = dict(problem={"kind": "spd_frechet", "c": 1.0},
           data={"source": "wishart", "N": 4, "N_i": [10, 12, 9, 11], "r": 3, "D_W": 1.0})

#: PriRFed settings per (problem, local trainer): private (sigma > 0, finite clipping), Option 2
#: for one of them so the output draw is compared too
SETTINGS = {
    ("sphere", "dp_rsgd"): dict(T=4, s=3, alpha=0.5, local="dp_rsgd", K=2, b=8, sigma=0.05, tau=1.5),
    ("sphere", "dp_rsvrg"): dict(T=4, s=2, alpha=0.3, local="dp_rsvrg", K=2, m=3, sigma=0.05, tau=1.5, option=2),
    ("spd", "dp_rsgd"): dict(T=4, s=2, alpha=0.2, local="dp_rsgd", K=2, b=5, sigma=0.02, tau=2.0,
                             aggregation="karcher"),
    ("spd", "dp_rsvrg"): dict(T=4, s=3, alpha=0.1, local="dp_rsvrg", K=1, m=3, sigma=0.02, tau0=2.0, tau1=3.0),
}


def make_case(name: str, data_seed: int = 3, x0_seed: int = 1):
    """(config, problem, x0) of the named problem ("sphere" or "spd")."""
    cfg = {"sphere": SPHERE, "spd": SPD}[name]
    problem = build_problem(cfg, np.random.default_rng(data_seed))
    return cfg, problem, problem.manifold.random_point(np.random.default_rng(x0_seed))


def drive(problem, x0, algorithm, seed, *, drop=(), budget=None, delta=None, **settings):
    """The Flower run's rounds without Flower: RoundServer and client_update on shards; the uploads
    of (round, agent) in ``drop`` never reach the server. Returns the FlowerRunResult."""
    server = RoundServer(algorithm, Sizes.of(problem), x0, settings, make_key(seed), budget=budget, delta=delta)
    shards = {i: agent_shard(problem, i) for i in range(problem.N)}
    for t in range(server.T):
        if not server.may_run(t):
            break
        S = server.agents(t)
        full = None
        if algorithm == "rfedsvrg":
            full = server.full_gradient({i: client_gradient(shards[i], i, server.x) for i in range(problem.N)})
        accepted = {}
        for i in S:
            up = client_update(shards[i], i, server.x, server.instructions(t, i), server.key, full)
            if (t, i) not in drop:
                accepted[i] = server.check_upload(t, i, up)
        server.step(t, S, accepted)
        server.after_round(t)
    return server.result()
