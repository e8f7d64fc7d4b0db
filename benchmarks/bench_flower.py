"""PriRFed on Flower's simulation engine against the in-process runs: per-round time, overhead, rounds/s.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_flower.py [--workloads small,large]

Workloads (sphere PCA, PriRFed with DP-RSGD, K = 2, b = 10, sigma = 0.1, tau = 1; agent i's
records are N_i rows of a standard normal / sqrt(D) drawn from ``default_rng([1, i])``):

- ``small``: N = 20 agents, s = 5 per round, D = d + 1 = 25, N_i = 50, T = 10 rounds;
- ``large``: N = 1000 agents, s = 50 per round, D = d + 1 = 784, N_i = 20, T = 5 rounds.

For each: the in-process verified run (``prirfed.verified``'s fused loop; warm, compile excluded)
and reference run (``prirfed.reference``), time per round = wall time / T; the Flower simulation
(``prirfed.flower.run_simulation``, one SuperNode per agent, each node building its agent's
records itself with ``OneAgent``, the ClientApps running the reference local trainer, epsilon
logged after every round by the 'best' accountant): time per round = median gap between the ends
of consecutive rounds (the ServerApp's clock), and the start-up (Ray and the engine) = wall time
- the rounds. The overhead is Flower's round minus the in-process round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")

import numpy as np  # noqa: E402

WORKLOADS = {
    "small": dict(D=25, N=20, s=5, N_i=50, T=10),
    "large": dict(D=784, N=1000, s=50, N_i=20, T=5),
}
SETTINGS = dict(alpha=0.5, local="dp_rsgd", K=2, b=10, sigma=0.1, tau=1.0)


def agent_records(i: int, N_i: int, D: int) -> np.ndarray:
    return np.random.default_rng([1, i]).standard_normal((N_i, D)) / np.sqrt(D)


def run(name: str) -> dict:
    from prirfed.backend import trainers
    from prirfed.flower import run_simulation
    from prirfed.flower.protocol import OneAgent, Sizes
    from prirfed.reference.problems.sphere_pca import SpherePCA

    w = WORKLOADS[name]
    D, N, s, N_i, T = w["D"], w["N"], w["s"], w["N_i"], w["T"]
    problem = SpherePCA([agent_records(i, N_i, D) for i in range(N)])
    x0 = np.zeros(D)
    x0[0] = 1.0
    kw = dict(SETTINGS, T=T, s=s)
    out = dict(workload=name, **w)

    verified = trainers("verified").prirfed
    verified(problem, x0, rng=np.random.default_rng(0), **dict(kw, T=1))  # compile / load the cache
    t0 = time.perf_counter()
    ver = verified(problem, x0, rng=np.random.default_rng(5), record_every=T, **kw)
    out["verified_round_s"] = (time.perf_counter() - t0) / T

    from prirfed.reference.trainers.prirfed import prirfed as reference

    t0 = time.perf_counter()
    ref = reference(problem, x0, rng=np.random.default_rng(5), record_every=T, **kw)
    out["reference_round_s"] = (time.perf_counter() - t0) / T

    sizes = Sizes.of(problem)
    del problem  # the Flower run's nodes build their own agents' records

    def load_agent(i):
        return OneAgent(SpherePCA([agent_records(i, N_i, D)]), i, [N_i] * N)

    t0 = time.perf_counter()
    res = run_simulation(sizes, x0, seed=5, load_agent=load_agent, delta=1e-5, **kw)
    wall = time.perf_counter() - t0
    ends = res.info["round_times"]
    gaps = np.diff(ends)
    out["flower_round_s"] = float(statistics.median(gaps))
    out["flower_startup_s"] = wall - (ends[-1] - ends[0]) - out["flower_round_s"]
    out["flower_wall_s"] = wall
    out["max_rel_diff_vs_reference"] = float(np.max(np.abs(res.x - ref.x)) / np.max(np.abs(ref.x)))
    out["max_rel_diff_vs_verified"] = float(np.max(np.abs(res.x - ver.x)) / np.max(np.abs(ver.x)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="small,large")
    args = ap.parse_args(argv)
    rows = [run(n) for n in args.workloads.split(",")]
    print("| workload | N | s | D | N_i | T | verified in-process (ms/round) | reference in-process (ms/round) "
          "| Flower simulation (ms/round) | Flower rounds/s | overhead vs verified (ms/round) "
          "| overhead vs reference (ms/round) | Flower start-up (s) | final x: max rel. diff vs reference |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['workload']} | {r['N']} | {r['s']} | {r['D']} | {r['N_i']} | {r['T']} "
              f"| {1e3 * r['verified_round_s']:.2f} | {1e3 * r['reference_round_s']:.1f} | {1e3 * r['flower_round_s']:.0f} "
              f"| {1 / r['flower_round_s']:.2f} | {1e3 * (r['flower_round_s'] - r['verified_round_s']):.0f} "
              f"| {1e3 * (r['flower_round_s'] - r['reference_round_s']):.0f} | {r['flower_startup_s']:.1f} "
              f"| {r['max_rel_diff_vs_reference']:.1e} |")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
