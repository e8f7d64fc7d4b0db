"""Benchmark PriRFed-DP-RSGD end to end: reference trainer vs the fused verified (Numba) trainer.

Run: ``python benchmarks/bench_trainers.py`` (``--quick`` for fewer rounds). Prints a Markdown
table with the machine description. Times are CPU time of this process (robust to other jobs on a
shared machine); the compile time of the fused loop is measured separately in a subprocess with an
empty ``NUMBA_CACHE_DIR`` (a cold start), and the first call in this process (a cache load when
the on-disk cache is warm) is reported apart from the steady-state run. Reported, never asserted.
Both twins are run from the same seed; the table gives the largest difference of their final
iterates and whether they left the Generator in the same state.

Settings (000 section 6, as far as the extracted text states them):

- sphere PCA, Figure 1 first column: d + 1 = 25, eigengap nu = 1e-3 (Sigma_i, U_i, V_i per agent,
  000 section 6.1), s_t = N, K = 1, b_i = N_i, alpha_t = 1/(2 L_g), tau = L_g (000 section 6.1:
  "we set tau = tau_0 = tau_1 = L_g", L_g = 2 vartheta~), epsilon = 0.15, delta = 1e-5, sigma_i
  from the paper's formula (noise constant o_i = 1; ``paper_sigma_dp_rsgd``). N and N_i are in the
  figure's titles, which the extraction lost: N = 10, N_i = 100 here (N_i = 100 as in
  proofs_notes/accounting_noise_constants.md). T is not stated: T = 50 (``--quick``: 10).
  Not more: with alpha = 1/(2 L_g) = 1.38 here, BOTH twins' iterates leave the sphere
  geometrically (| ||x|| - 1 | grows about x1.28 per round from 2e-16: 6e-12 at round 50,
  1.4e-6 at round 100), because ``Sphere.exp`` does not renormalise and the gradient formula
  -2ca(z - ax) is not tangent when ||x|| != 1, so each step amplifies the normal rounding error;
  the reference raises ``not on the sphere`` near round 60. See
  proofs_notes/verified_trainers.md section 6.
- SPD Frechet mean 2 x 2 (000 section 6.2, Figure 3): Wishart W(I/2, 2) samples with
  dist(I, Z) < D_W = 1, N = 50, N_i = 100, s_t = 1, K = 3, tau = 1, alpha_t = 0.05,
  epsilon = 0.15, delta = 1e-4; b_i is not stated: full batch b_i = N_i. T = 200 (``--quick``: 20).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

from prirfed.reference.accounting.calibration import paper_sigma_dp_rsgd
from prirfed.reference.data.synthetic import bounded_wishart, federated_eigengap_data
from prirfed.reference.problems.spd_frechet import SPDFrechetMean as RefSPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA as RefSpherePCA
from prirfed.reference.trainers.base import History
from prirfed.reference.trainers.prirfed import prirfed as ref_prirfed
from prirfed.verified.problems import SPDFrechetMean, SpherePCA
from prirfed.verified.trainers.prirfed import prirfed as ver_prirfed
from prirfed.backend import trainers

clock = time.process_time

COLD_SNIPPET = """
import time, numpy as np
from prirfed.verified.problems import SpherePCA, SPDFrechetMean
from prirfed.verified.trainers.prirfed import prirfed
t = time.process_time()
P = SpherePCA([np.diag([2.0, 1.0]), np.eye(2)])
prirfed(P, np.array([1.0, 0.0]), 1, 1, 0.1, np.random.default_rng(0), sigma=0.1, tau=1.0)
Q = SPDFrechetMean([np.eye(2)[None], np.eye(2)[None]])
prirfed(Q, np.eye(2), 1, 1, 0.1, np.random.default_rng(0), sigma=0.1, tau=1.0)
print(time.process_time() - t)
"""


def cold_compile_seconds() -> float:
    """CPU time of the first call with an empty Numba cache (fresh subprocess)."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        out = subprocess.run([sys.executable, "-c", COLD_SNIPPET], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def sphere_setting(T):
    rng = np.random.default_rng(2024)
    N, N_i, d, nu = 10, 100, 24, 1e-3
    Z = [a.Z for a in federated_eigengap_data([N_i] * N, d, nu, rng)]
    ref, ver = RefSpherePCA(Z), SpherePCA(Z)
    L_g = ref.L_g
    sigma = paper_sigma_dp_rsgd(0.15, 1e-5, 1, L_g, N_i)
    x0 = ref.manifold.random_point(rng)
    kw = dict(local="dp_rsgd", K=1, b=None, sigma=sigma, tau=L_g)
    return "sphere PCA d+1=25, N=10, N_i=100 (000 Fig. 1 col. 1)", ref, ver, x0, T, N, 1.0 / (2.0 * L_g), kw


def spd_setting(T):
    rng = np.random.default_rng(2025)
    N, N_i = 50, 100
    Z = [bounded_wishart(N_i, 2, 1.0, rng).X for _ in range(N)]
    ref, ver = RefSPDFrechetMean(Z), SPDFrechetMean(Z)
    sigma = paper_sigma_dp_rsgd(0.15, 1e-4, 3, 1.0, N_i)
    x0 = np.eye(2)
    kw = dict(local="dp_rsgd", K=3, b=None, sigma=sigma, tau=1.0)
    return "SPD(2) Frechet mean, N=50, N_i=100 (000 sec. 6.2)", ref, ver, x0, T, 1, 0.05, kw


def timed(fn):
    t = clock()
    out = fn()
    return out, clock() - t


def run(setting):
    name, ref, ver, x0, T, s, alpha, kw = setting
    # warm the problem's optimum cache (used by the history of both twins) outside the timings
    ref.x_star, ver.x_star
    r_ref, r_ver = np.random.default_rng(1), np.random.default_rng(1)
    a, t_ref = timed(lambda: ref_prirfed(ref, x0, T, s, alpha, r_ref, **kw))
    _, t_first = timed(lambda: ver_prirfed(ver, x0, 1, s, alpha, np.random.default_rng(0), **kw))
    b, t_ver = timed(lambda: ver_prirfed(ver, x0, T, s, alpha, r_ver, **kw))
    # the loop alone: record only rounds 0 and T, minus the cost of those two history records
    _, t_two = timed(lambda: ver_prirfed(ver, x0, T, s, alpha, np.random.default_rng(1), record_every=T, **kw))
    _, t_hist = timed(lambda: [History().record(ver, 0, x0) for _ in range(2)])
    t_loop = max(t_two - t_hist, 1e-6)
    diff = float(np.max(np.abs(np.asarray(a.x) - np.asarray(b.x))))
    same_state = r_ref.bit_generator.state == r_ver.bit_generator.state
    return dict(name=name, T=T, t_ref=t_ref, t_first=t_first, t_ver=t_ver, t_loop=t_loop, diff=diff, same=same_state)


def run_others(T):
    """RGD, DP-RGD (001 Alg. 1) and RFedSVRG/RFedAvg/RFedProx (002) on the sphere setting, reference vs
    verified, both recording only rounds 0 and T (the history would otherwise dominate both)."""
    _, ref, ver, x0, _, N, alpha, kw = sphere_setting(T)
    ref.x_star, ver.x_star
    n = sum(ref.sizes)
    calls = [
        ("rgd (fixed step)", lambda P, rng: (P, x0, alpha, T), {}),
        ("dp_rgd (b = 100, output 3)", lambda P, rng: (P, x0, alpha, T, 100, kw["sigma"], rng),
         dict(tau=kw["tau"], output=3)),
        ("rfedsvrg (k = N, tau_i = 5)", lambda P, rng: (P, x0, T, N, alpha, 5, rng), {}),
        ("rfedavg (k = N, tau_i = 5)", lambda P, rng: (P, x0, T, N, alpha, 5, rng), {}),
        ("rfedprox (k = N, tau_i = 5, mu = 0.1)", lambda P, rng: (P, x0, T, N, alpha, 5, 0.1, rng), {}),
    ]
    rows = []
    R, V = trainers("reference"), trainers("verified")
    for label, args, extra in calls:
        name = label.split()[0]
        r_ref, r_ver = np.random.default_rng(1), np.random.default_rng(1)
        getattr(V, name)(*args(ver, np.random.default_rng(0)), record_every=T, **extra)  # compile / cache load
        a, t_ref = timed(lambda: getattr(R, name)(*args(ref, r_ref), record_every=T, **extra))
        b, t_ver = timed(lambda: getattr(V, name)(*args(ver, r_ver), record_every=T, **extra))
        diff = float(np.max(np.abs(np.asarray(a.x) - np.asarray(b.x))))
        rows.append(dict(name=label, T=T, t_ref=t_ref, t_ver=t_ver, diff=diff,
                         same=r_ref.bit_generator.state == r_ver.bit_generator.state))
    return rows


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    rows = [run(sphere_setting(10 if quick else 50)), run(spd_setting(20 if quick else 200))]
    cold = cold_compile_seconds()
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} "
          f"{platform.release()}; Python {platform.python_version()}, NumPy {np.__version__}, Numba {numba.__version__}")
    print(f"Command: python benchmarks/bench_trainers.py{' --quick' if quick else ''}  (CPU time of the process)")
    print()
    print(f"Cold compile of the fused loop (both problems, empty NUMBA_CACHE_DIR, subprocess): {cold:.1f} s")
    print("Both twins record the history (f, ||grad f||, error to the optimum) every round with the problem's own")
    print("methods; for SPD that costs N * N_i scipy eighs per record and dominates the verified end-to-end time.")
    print()
    print("| setting | T | reference (s) | verified, first call T=1 (s) | verified, history every round (s) "
          "| verified, fused loop only (s) | speed-up end to end | speed-up (reference vs loop only) | max abs diff of outputs | same Generator state |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['name']} | {r['T']} | {r['t_ref']:.3f} | {r['t_first']:.3f} | {r['t_ver']:.3f} | {r['t_loop']:.4f} "
              f"| {r['t_ref'] / r['t_ver']:.1f}x | {r['t_ref'] / r['t_loop']:.0f}x | {r['diff']:.1e} | {r['same']} |")
    others = run_others(10 if quick else 50)
    print()
    print("Other trainers on the sphere PCA setting above (same data, step 1/(2 L_g), sigma and tau), through")
    print("prirfed.backend.trainers('reference' | 'verified'); history at rounds 0 and T only; first call excluded.")
    print()
    print("| trainer | T | reference (s) | verified (s) | speed-up | max abs diff of outputs | same Generator state |")
    print("|---|---|---|---|---|---|---|")
    for r in others:
        print(f"| {r['name']} | {r['T']} | {r['t_ref']:.3f} | {r['t_ver']:.4f} | {r['t_ref'] / max(r['t_ver'], 1e-6):.0f}x "
              f"| {r['diff']:.1e} | {r['same']} |")


if __name__ == "__main__":
    main()
