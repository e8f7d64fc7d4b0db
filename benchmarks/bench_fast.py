"""Issue 16 benchmark: PriRFed-DP-RSGD sphere PCA, verified vs the same algorithm written as a pymanopt
user would write it, per-round cost vs the copy-bandwidth bound, linearity in d, threads, memory and
cold start. Reported, never asserted.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_fast.py [--only peer,bound,marginal,optimum,persample,noise,linear,threads,memory,cold]``
(needs the ``bench`` extra for the peer: ``pip install -e '.[bench]'``). Prints Markdown.

Workloads (synthetic sphere PCA (6.1) of 000: rows z ~ N(0, I_D)/sqrt(D), agents of N_i rows, D = d + 1;
DP-RSGD local training, K = 1, b_i = N_i, clipping tau = 1, sigma = 0.5, alpha = 0.05, tangent mean):

- ``25``: D = 25, N = 20, N_i = 500, s = 20 agents per round;
- ``784``: D = 784, N = 50, N_i = 200, s = 5;
- ``3000``: D = 3000, N = 10, N_i = 100, s = 5.

The peer (``pymanopt_prirfed``): pymanopt's ``Sphere`` for exp, log and the projection, NumPy for
the batch (the per-sample gradients of a batch as one matrix, clipped row by row), NumPy's
Generator for the agent sets, batches and noise (the projected ambient Gaussian, as the verified
trainer). Its history, if asked, is f and ||grad f|| every round (what pymanopt's solvers log per
iteration). Both sides are timed in CPU time of the process (``time.process_time``; the machine is
shared), paired and interleaved: repeat r runs the peer then the verified trainer on the same
workload, and the speed-up is the median over repeats of the per-repeat ratio.

Bandwidth bound: B = bytes read + written by ``np.copyto`` / time (best of 5), at the size of the
workload's data and at 256 MiB (DRAM); the bytes a round must read are s K b (D + 1) 8 (each
sampled row and its gradient scale); bound = bytes / B; ratio = verified time per round without
history (``record_every=T``) / bound.

Marginal: the verified run without history at T and 3T rounds (CPU time, best of the repeats each);
the cost of one more round is (t(3T) - t(T)) / 2T and the fixed cost of a call (validation, the two
records at rounds 0 and T, the privacy event) is t(T) - T * marginal. ``bound`` above divides the
whole call by T, so at T = 10 (D = 3000) the fixed cost is part of its "per round".

History: "one record" is (t(every round) - t(no history)) T / (T - 1) (every round records T + 1
times, no history twice, at rounds 0 and T); the history share of the default is (records x one
record) / (the rest of the call). The runs share one problem whose optimum x* was computed outside the
timings: that cost, paid once per problem before the first recorded error, is the ``optimum`` section
(``SpherePCA.optimum`` on a new problem each repeat, beside the full ``numpy.linalg.eigh`` of A it used
before, A alone, and the training of the peer section's T rounds for scale).

Per sample: the sphere's ``add_clipped_batch`` (four samples a pass) and the generic one-at-a-time
sum (``add_clipped_batch_by_samples``) called in a compiled loop on b rows that stay in cache; wall
time per sample, best of the repeats.

Noise: the verified stream's normals (``normals_into``, the polar method on Philox) filled in a compiled
loop, CPU time per normal; a round draws s K D of them (one ambient Gaussian per local step, projected);
and the marginal round (as above) with sigma = 0.5 and with sigma = 0 (no draw at all).

Threads: wall time (``time.perf_counter``; CPU time counts both threads) of the verified trainer
with 1 and 2 Numba threads on a 784-wide workload with s = 10 agents, interleaved, with the output
of both compared bit for bit. On a shared machine the other jobs' load is printed beside it. Beside
it, the read ceiling: the same number of rows summed in a ``prange`` loop on 1 and 2 threads, which
bounds what a second thread can win on rounds that are bound by reading the data. ``--busy`` runs
the section beside a Python process that keeps one core busy, as on a shared machine.

Memory: a fresh process builds N = 1000 agents of N_i = 200 rows at D = 784 (1.25 GB) as one array
split into views, the verified problem, and runs 3 rounds (loops loaded from the cache first);
peak RSS (``resource.getrusage``) minus the RSS before the data, over the data's bytes.

Cold start: a fresh process with an empty ``NUMBA_CACHE_DIR`` times (CPU, ``resource.getrusage`` of the
child) its first verified ``prirfed`` call on a tiny problem of one geometry.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

from prirfed.verified.problems import SpherePCA  # noqa: E402
from prirfed.verified.randomness import normals_into, open_stream  # noqa: E402
from prirfed.verified.trainers.families import SphereDims  # noqa: E402
from prirfed.verified.trainers.geometry import add_clipped_batch_by_samples  # noqa: E402
from prirfed.verified.trainers.geometry_sphere import add_clipped_batch  # noqa: E402
from prirfed.verified.trainers.prirfed import prirfed  # noqa: E402

WORKLOADS = {
    "25": dict(D=25, N=20, N_i=500, s=20, T=100),
    "784": dict(D=784, N=50, N_i=200, s=5, T=50),
    "3000": dict(D=3000, N=10, N_i=100, s=5, T=10),
}
SETTINGS = dict(K=1, sigma=0.5, tau=1.0, alpha=0.05)


def make_data(D, N, N_i, seed=16):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((N * N_i, D)) / math.sqrt(D)
    return np.split(Z, N)


def start_point(D):
    x = np.ones(D)
    return x / np.linalg.norm(x)


# ---------------------------------------------------------------------------- the peer
def pymanopt_prirfed(Zs, x0, T, s, rng, record=False, K=1, sigma=0.5, tau=1.0, alpha=0.05):
    """PriRFed with DP-RSGD local training on sphere PCA (000 (6.1), c = 1, p_i = N_i / n), written as a
    pymanopt user would: pymanopt's Sphere for exp / log / projection, NumPy for the batch."""
    from pymanopt.manifolds import Sphere

    D = x0.shape[0]
    M = Sphere(D)
    N = len(Zs)
    sizes = np.array([z.shape[0] for z in Zs], dtype=float)
    p = sizes / sizes.sum()
    x = x0
    hist = []
    for _t in range(T):
        S = rng.choice(N, s, replace=False)
        v = np.zeros(D)
        wsum = sizes[S].sum()
        for i in S:
            xi = x
            Z = Zs[i]
            for _k in range(K):
                B = rng.choice(Z.shape[0], Z.shape[0], replace=False)
                Zb = Z[B]
                a = Zb @ xi
                G = -2.0 * a[:, None] * (Zb - a[:, None] * xi[None, :])  # per-sample Riemannian gradients
                nrm = np.linalg.norm(G, axis=1)
                G *= np.minimum(1.0, tau / np.maximum(nrm, 1e-300))[:, None]
                eta = G.mean(axis=0) + M.projection(xi, sigma * rng.standard_normal(D))
                xi = M.exp(xi, -alpha * eta)
            v += (sizes[i] / wsum) * M.log(x, xi)
        x = M.exp(x, v)
        if record:
            f = 0.0
            g = np.zeros(D)
            for i in range(N):
                a = Zs[i] @ x
                f += p[i] * -np.mean(a * a)
                g += p[i] * (-2.0 / Zs[i].shape[0]) * (Zs[i].T @ a)
            hist.append((f, M.norm(x, M.euclidean_to_riemannian_gradient(x, g))))
    return x, hist


# ---------------------------------------------------------------------------- helpers
def cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def verified_run(P, x0, T, s, record_every, seed=1, sigma=None):
    sigma = SETTINGS["sigma"] if sigma is None else sigma
    return prirfed(P, x0, T, s, SETTINGS["alpha"], np.random.default_rng(seed), K=SETTINGS["K"],
                   sigma=sigma, tau=SETTINGS["tau"], record_every=record_every)


def copy_bandwidth(nbytes):
    n = max(int(nbytes // 8), 1024)
    a = np.random.default_rng(0).standard_normal(n)
    b = np.empty_like(a)
    best = math.inf
    for _ in range(5):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 2 * a.nbytes / best


def fmt_t(s):
    return f"{s * 1e3:.3f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} us"


def header(title):
    print(f"\n## {title}\n")


def workload(name):
    """(settings, data, problem, x0, T, s) of a named workload, with the optimum computed and the loops
    loaded outside the timings."""
    w = WORKLOADS[name]
    Zs = make_data(w["D"], w["N"], w["N_i"])
    P = SpherePCA(Zs)
    x0 = start_point(w["D"])
    P.x_star  # noqa: B018 - the optimum, computed once, outside the timings
    verified_run(P, x0, 1, w["s"], 1)  # loads the loops
    return w, Zs, P, x0, w["T"], w["s"]


# ---------------------------------------------------------------------------- sections
def section_peer(names, repeats):
    header("End to end: verified (default history) vs the pymanopt-style loop, per round (CPU time)")
    print("| D, N, N_i, s | T | pymanopt loop, no history | pymanopt loop, f and grad norm every round | "
          "verified, default history (auto) | verified, history every round | verified, no history | "
          "speed-up (default history vs peer without history) | records (auto) | one record | "
          "history share (auto): records / training |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        w, Zs, P, x0, T, s = workload(name)
        peer, peer_h, auto, every, bare, ratios = [], [], [], [], [], []
        for r in range(repeats):
            tp, _ = cpu(lambda: pymanopt_prirfed(Zs, x0, T, s, np.random.default_rng(r)))
            ta, ra = cpu(lambda: verified_run(P, x0, T, s, "auto", r))
            tb, _ = cpu(lambda: verified_run(P, x0, T, s, T, r))
            peer.append(tp / T)
            auto.append(ta / T)
            bare.append(tb / T)
            ratios.append(tp / ta)
            if r < 2:
                th, _ = cpu(lambda: pymanopt_prirfed(Zs, x0, T, s, np.random.default_rng(r), record=True))
                te, _ = cpu(lambda: verified_run(P, x0, T, s, 1, r))
                peer_h.append(th / T)
                every.append(te / T)
        med = statistics.median
        # one record's cost: "every round" records T + 1 times, "no history" twice (rounds 0 and T)
        rec = (med(every) - med(bare)) * T / (T - 1)
        k = len(ra.history.rounds)
        share = k * rec / (med(auto) * T - k * rec)
        print(f"| {w['D']}, {w['N']}, {w['N_i']}, {s} | {T} | {fmt_t(med(peer))} | {fmt_t(med(peer_h))} | "
              f"{fmt_t(med(auto))} | {fmt_t(med(every))} | {fmt_t(med(bare))} | **{med(ratios):.0f}x** | "
              f"{k} | {fmt_t(rec)} | {100 * share:.1f}% |")


def section_bound(names, repeats):
    header("Time per round vs the copy-bandwidth bound (verified, no history)")
    print("| D, N, N_i, s | bytes read per round | data | copy bandwidth at the data size / DRAM | "
          "bound per round (data size / DRAM) | verified per round | ratio to the data-size bound | ratio to the DRAM bound |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    dram = copy_bandwidth(256 * 2**20)
    for name in names:
        w, Zs, P, x0, T, s = workload(name)
        per = statistics.median([cpu(lambda: verified_run(P, x0, T, s, T, r))[0] / T for r in range(repeats)])
        nbytes = s * SETTINGS["K"] * w["N_i"] * (w["D"] + 1) * 8
        data = w["N"] * w["N_i"] * w["D"] * 8
        bw = copy_bandwidth(data)
        print(f"| {w['D']}, {w['N']}, {w['N_i']}, {s} | {nbytes / 1e6:.2f} MB | {data / 1e6:.1f} MB | "
              f"{bw / 1e9:.1f} / {dram / 1e9:.1f} GB/s | {fmt_t(nbytes / bw)} / {fmt_t(nbytes / dram)} | {fmt_t(per)} | "
              f"{per / (nbytes / bw):.1f}x | {per / (nbytes / dram):.1f}x |")


def section_marginal(names, repeats):
    header("Fixed cost of a call and marginal cost of a round (verified, no history; CPU time, best of the repeats)")
    print("| D, N, N_i, s | T / 3T | fixed per call | per round (marginal) | marginal / data-size bound |")
    print("|---|---:|---:|---:|---:|")
    for name in names:
        w, Zs, P, x0, T, s = workload(name)
        t1 = min(cpu(lambda: verified_run(P, x0, T, s, T, r))[0] for r in range(repeats))
        t3 = min(cpu(lambda: verified_run(P, x0, 3 * T, s, 3 * T, r))[0] for r in range(repeats))
        marg = (t3 - t1) / (2 * T)
        nbytes = s * SETTINGS["K"] * w["N_i"] * (w["D"] + 1) * 8
        bound = nbytes / copy_bandwidth(w["N"] * w["N_i"] * w["D"] * 8)
        print(f"| {w['D']}, {w['N']}, {w['N_i']}, {s} | {T} / {3 * T} | {fmt_t(t1 - T * marg)} | {fmt_t(marg)} | "
              f"{marg / bound:.1f}x |")


def section_optimum(names, repeats):
    header("The history's optimum x*: once per problem, before the first recorded error (CPU time, best of the repeats)")
    print("| D, N, N_i | n | x* as computed now (`SpherePCA.optimum`) | full `numpy.linalg.eigh(A)` (the route before) | "
          "A alone | training, T rounds without history |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in names:
        w, Zs, P, x0, T, s = workload(name)
        n = w["N"] * w["N_i"]
        SpherePCA(Zs).optimum()  # the first call of a process pays for loading LAPACK's routines: not timed
        now = min(cpu(lambda: SpherePCA(Zs).optimum())[0] for _ in range(repeats))
        full = min(cpu(lambda: np.linalg.eigh(SpherePCA(Zs).A))[0] for _ in range(repeats))
        a_only = min(cpu(lambda: SpherePCA(Zs).A)[0] for _ in range(repeats))
        train = min(cpu(lambda: verified_run(P, x0, T, s, T, r))[0] for r in range(repeats))
        print(f"| {w['D']}, {w['N']}, {w['N_i']} | {n} | {fmt_t(now)} | {fmt_t(full)} | {fmt_t(a_only)} | "
              f"{fmt_t(train)} (T = {T}) |")


@numba.njit
def _batch_sums(dims, x, Z, C, perm, b, tau, reps, one_by_one):
    """reps minibatch sums of the first b rows of Z at x (the sphere's add_clipped_batch, or one
    add_clipped_grad per sample), for the per-sample timing."""
    acc = np.zeros(x.shape[0])
    work = np.empty(x.shape[0])
    for _r in range(reps):
        acc[:] = 0.0
        if one_by_one:
            add_clipped_batch_by_samples(dims, x, Z, C, perm, 0, b, tau, acc, work)
        else:
            add_clipped_batch(dims, x, Z, C, perm, 0, b, tau, acc, work)
    return acc


def section_persample(repeats):
    header("Per-sample cost of the sphere's clipped minibatch sum (data in cache; wall time, best of the repeats)")
    print("| D, b | tau | add_clipped_batch (four samples a pass) | one sample at a time |")
    print("|---|---:|---:|---:|")
    for D, b, reps in ((25, 500, 2000), (784, 200, 200), (3000, 100, 100)):
        rng = np.random.default_rng(0)
        Z = rng.standard_normal((b, D)) / math.sqrt(D)
        C = np.ones(b)
        x = start_point(D)
        perm = rng.permutation(b)
        dims = SphereDims(D)
        for tau in (1.0, math.inf):
            cells = []
            for one in (False, True):
                _batch_sums(dims, x, Z, C, perm, b, tau, 1, one)
                best = math.inf
                for _k in range(repeats):
                    t = time.perf_counter()
                    _batch_sums(dims, x, Z, C, perm, b, tau, reps, one)
                    best = min(best, time.perf_counter() - t)
                cells.append(f"{best / reps / b * 1e9:.1f} ns")
            print(f"| {D}, {b} | {tau} | {cells[0]} | {cells[1]} |")


@numba.njit
def _normals_loop(st, out, reps):
    """reps fills of out with the verified stream's normals (the polar method), for the per-normal timing."""
    for _r in range(reps):
        normals_into(st, out, 0.5)
    return out[0]


def section_noise(names, repeats):
    header("The noise's share of a round (verified, no history; CPU time, best of the repeats)")
    print("| D, N, N_i, s | normals per round (s K D) | per normal | their predicted time per round | "
          "marginal round, sigma = 0.5 | marginal round, sigma = 0 | difference | sigma = 0 / data-size bound |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    st = open_stream(np.array([16, 3], dtype=np.uint64), 1, 0, 0)
    for name in names:
        w, Zs, P, x0, T, s = workload(name)
        out = np.empty(w["D"])
        reps = max(1, 3_000_000 // w["D"])
        _normals_loop(st, out, 1)
        per_normal = math.inf
        for _k in range(repeats):
            t = time.process_time()
            _normals_loop(st, out, reps)
            per_normal = min(per_normal, (time.process_time() - t) / (reps * w["D"]))
        margs = []
        for sigma in (SETTINGS["sigma"], 0.0):
            t1 = min(cpu(lambda: verified_run(P, x0, T, s, T, r, sigma))[0] for r in range(repeats))
            t3 = min(cpu(lambda: verified_run(P, x0, 3 * T, s, 3 * T, r, sigma))[0] for r in range(repeats))
            margs.append((t3 - t1) / (2 * T))
        n = s * SETTINGS["K"] * w["D"]
        nbytes = s * SETTINGS["K"] * w["N_i"] * (w["D"] + 1) * 8
        bound = nbytes / copy_bandwidth(w["N"] * w["N_i"] * w["D"] * 8)
        print(f"| {w['D']}, {w['N']}, {w['N_i']}, {s} | {n} | {per_normal * 1e9:.2f} ns | {fmt_t(n * per_normal)} | "
              f"{fmt_t(margs[0])} | {fmt_t(margs[1])} | {fmt_t(margs[0] - margs[1])} | {margs[1] / bound:.1f}x |")


def section_linear(repeats):
    header("Linearity in d (verified, no history; N = 10, N_i = 100, s = 5, T = 20)")
    print("| D | per round | per round / (s N_i D) |")
    print("|---:|---:|---:|")
    for D in (25, 100, 400, 784, 1500, 3000):
        Zs = make_data(D, 10, 100)
        P = SpherePCA(Zs)
        x0 = start_point(D)
        verified_run(P, x0, 1, 5, 1)
        per = statistics.median([cpu(lambda: verified_run(P, x0, 20, 5, 20, r))[0] / 20 for r in range(repeats)])
        print(f"| {D} | {fmt_t(per)} | {per / (5 * 100 * D) * 1e9:.3f} ns |")


@numba.njit(parallel=True)
def _row_sums(Z, rows, out):
    """out[q] = sum of row rows[q] of Z, the rows in parallel: a read of the same rows a round reads, with
    nothing else to do (the read-bandwidth ceiling of the thread speed-up)."""
    for q in numba.prange(rows.shape[0]):
        z = Z[rows[q]]
        n8 = z.shape[0] - z.shape[0] % 8
        t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = 0.0  # eight independent sums: bound by the reads, not by add latency
        for k in range(0, n8, 8):
            t0 += z[k]
            t1 += z[k + 1]
            t2 += z[k + 2]
            t3 += z[k + 3]
            t4 += z[k + 4]
            t5 += z[k + 5]
            t6 += z[k + 6]
            t7 += z[k + 7]
        for k in range(n8, z.shape[0]):
            t0 += z[k]
        out[q] = ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + (t6 + t7))


def read_ceiling(Z, rows, repeats):
    """(median over paired repeats of t(1 thread) / t(2 threads), median GB/s on 1 thread, on 2) of
    :func:`_row_sums` (wall time, best of 3 inside each repeat): how much a second thread can win on a
    loop that only reads these rows."""
    out = np.empty(rows.shape[0])
    _row_sums(Z, rows, out)
    nbytes = Z.shape[1] * 8 * rows.shape[0]
    times = {1: [], 2: []}
    for _r in range(repeats):
        for threads in (1, 2):
            numba.set_num_threads(threads)
            best = math.inf
            for _k in range(3):
                t = time.perf_counter()
                _row_sums(Z, rows, out)
                best = min(best, time.perf_counter() - t)
            times[threads].append(best)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    ratio = statistics.median(t1 / t2 for t1, t2 in zip(times[1], times[2]))
    return ratio, nbytes / statistics.median(times[1]) / 1e9, nbytes / statistics.median(times[2]) / 1e9


def section_threads(repeats):
    header("Agents of a round in parallel: 1 vs 2 Numba threads (wall time; D = 784, N = 50, N_i = 200, s = 10, T = 30)")
    Zs = make_data(784, 50, 200)
    Zall = np.concatenate(Zs)
    pick = np.random.default_rng(3)
    # the rows 30 rounds read: each round 10 agents drawn without replacement, each agent's 200 rows in order
    rows = np.concatenate([np.arange(200 * i, 200 * (i + 1))
                           for _t in range(30) for i in pick.choice(50, 10, replace=False)])
    ceiling, bw1, bw2 = read_ceiling(Zall, rows, repeats)
    print(f"- read ceiling: a loop that only sums the rows that 30 rounds of 10 agents read ({Zall.nbytes / 1e6:.1f} MB "
          f"data, each agent's 200 rows in order, as the trainer reads them) reads {bw1:.1f} GB/s on 1 thread and "
          f"{bw2:.1f} GB/s on 2: **{ceiling:.2f}x** (median of {repeats} paired ratios). A trainer whose rounds are "
          f"bound by reading the data cannot gain more from a second thread.")
    del Zall
    P = SpherePCA(Zs)
    x0 = start_point(784)
    verified_run(P, x0, 1, 10, 1)
    times = {1: [], 2: []}
    outs = {}
    ratios = []
    for r in range(repeats):
        pair = {}
        for threads in (1, 2):
            numba.set_num_threads(threads)
            t = time.perf_counter()
            res = verified_run(P, x0, 30, 10, 30, seed=5)
            pair[threads] = time.perf_counter() - t
            times[threads].append(pair[threads])
            outs[threads] = res.x
        ratios.append(pair[1] / pair[2])
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    same = bool(np.array_equal(outs[1], outs[2]))
    print(f"- threading layer: {numba.threading_layer()}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}, "
          f"GOMP_SPINCOUNT={os.environ.get('GOMP_SPINCOUNT')}; load average at the end: {os.getloadavg()}")
    print(f"- 1 thread: median {statistics.median(times[1]):.3f} s; 2 threads: median {statistics.median(times[2]):.3f} s; "
          f"**speed-up {statistics.median(ratios):.2f}x** (median of {repeats} paired ratios: "
          f"{', '.join(f'{q:.2f}' for q in ratios)}); outputs bit-identical: {same}")


MEMORY_CHILD = r"""
import json, math, os, resource, sys
import numpy as np
from prirfed.verified.problems import SpherePCA
from prirfed.verified.trainers.prirfed import prirfed
P0 = SpherePCA([np.ones((2, 784)) / 28.0, np.eye(784)[:3]])
prirfed(P0, np.eye(784)[0], 1, 1, 0.1, np.random.default_rng(0), sigma=0.1, tau=1.0)  # loops loaded


def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
base = rss()
N, N_i, D = 1000, 200, 784
Z = np.random.default_rng(1).standard_normal((N * N_i, D))
Z /= math.sqrt(D)
data = Z.nbytes
P = SpherePCA(np.split(Z, N))
x0 = np.ones(D) / math.sqrt(D)
res = prirfed(P, x0, 3, 5, 0.05, np.random.default_rng(2), sigma=0.5, tau=1.0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(dict(data=data, base=base, peak=peak, shares=bool(np.shares_memory(P.Z[0], Z)))))
"""


def section_memory():
    header("Memory: N = 1000 agents x 200 rows at D = 784 (verified PriRFed, 3 rounds, default history)")
    res = subprocess.run([sys.executable, "-c", MEMORY_CHILD], capture_output=True, text=True, timeout=3600)
    if res.returncode != 0:
        print("failed:", res.stderr[-2000:])
        return
    m = json.loads(res.stdout.strip().splitlines()[-1])
    extra = m["peak"] - m["base"]
    print(f"- data {m['data'] / 2**30:.3f} GiB; RSS before the data {m['base'] / 2**20:.0f} MiB; peak RSS "
          f"{m['peak'] / 2**20:.0f} MiB; **peak - before = {extra / m['data']:.3f} x the data** "
          f"(the problem keeps views of the caller's array: {m['shares']})")


COLD_CHILD = r"""
import resource, sys, numpy as np
from prirfed.verified.trainers import warm
g = sys.argv[1]
from prirfed.verified.trainers.prirfed import prirfed
import numpy as np
rng = np.random.default_rng(0)
if g == "sphere":
    from prirfed.verified.problems import SpherePCA
    P, x0 = SpherePCA([np.array([[1.0, 0.2], [0.6, 0.8]])]), np.array([1.0, 0.0])
elif g == "spd":
    from prirfed.reference.manifolds import SPD
    from prirfed.verified.problems import SPDFrechetMean
    M = SPD(2)
    P, x0 = SPDFrechetMean([np.stack([M.random_point(rng) for _ in range(2)])]), np.eye(2)
elif g == "lorentz":
    from prirfed.reference.manifolds import Lorentz
    from prirfed.verified.problems.hsp import HyperbolicStructuredPrediction
    M = Lorentz(2)
    P = HyperbolicStructuredPrediction([rng.standard_normal((3, 2))], [np.stack([M.random_point(rng) for _ in range(3)])],
                                       np.zeros(2), 0.5, 1.0)
    x0 = M.origin()
else:
    from prirfed.verified.problems import StiefelKPCA
    P = StiefelKPCA([np.array([[1.0, 0.0, 0.1], [0.0, 2.0, 0.0]])], 1)
    x0 = np.array([[1.0], [0.0], [0.0]])
r0 = resource.getrusage(resource.RUSAGE_SELF)
prirfed(P, x0, 1, 1, 0.1, rng, sigma=0.1, tau=1.0)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
"""


def section_cold(geometries):
    header("Cold start: the first verified prirfed call of one geometry, empty Numba cache (CPU of the call)")
    print("| geometry | CPU seconds | message on stderr |")
    print("|---|---:|---|")
    for g in geometries:
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, NUMBA_CACHE_DIR=d)
            res = subprocess.run([sys.executable, "-c", COLD_CHILD, g], capture_output=True, text=True, env=env,
                                 timeout=3600)
        if res.returncode != 0:
            print(f"| {g} | failed | {res.stderr.strip().splitlines()[-1] if res.stderr else ''} |")
            continue
        msg = [ln for ln in res.stderr.splitlines() if ln.startswith("prirfed:")]
        print(f"| {g} | {float(res.stdout.strip().splitlines()[-1]):.1f} | {msg[0] if msg else '(none)'} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="peer,bound,marginal,optimum,persample,noise,linear,threads,memory,cold")
    ap.add_argument("--workloads", default="25,784,3000")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cold", default="sphere,spd,lorentz,stiefel")
    ap.add_argument("--busy", action="store_true",
                    help="run the threads section beside a process that keeps one core busy (a shared machine)")
    args = ap.parse_args()
    parts = args.only.split(",")
    names = args.workloads.split(",")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    print("# Issue 16 benchmark (benchmarks/bench_fast.py)\n")
    print(f"- command: `python benchmarks/bench_fast.py {' '.join(sys.argv[1:])}`")
    print(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; commit {commit}")
    print(f"- machine: {platform.machine()}, nproc {os.cpu_count()}, {platform.platform()}, Python "
          f"{platform.python_version()}, NumPy {np.__version__}, Numba {numba.__version__}, "
          f"Numba threads {numba.get_num_threads()}; load average at start {os.getloadavg()}")
    if "peer" in parts:
        section_peer([n for n in names if n != "3000"], args.repeats)
    if "bound" in parts:
        section_bound(names, args.repeats)
    if "marginal" in parts:
        section_marginal(names, args.repeats)
    if "optimum" in parts:
        section_optimum(names, args.repeats)
    if "persample" in parts:
        section_persample(args.repeats)
    if "noise" in parts:
        section_noise(names, args.repeats)
    if "linear" in parts:
        section_linear(args.repeats)
    if "threads" in parts:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
        try:
            section_threads(args.repeats)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
    if "memory" in parts:
        section_memory()
    if "cold" in parts:
        section_cold(args.cold.split(","))


if __name__ == "__main__":
    main()
