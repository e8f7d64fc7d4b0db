"""End-to-end benchmark of the paper's settings (issue 5): reference vs verified PriRFed, and time per
round against a memory-bandwidth lower bound.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_end_to_end.py`` (``--quick``: smaller T, fewer
repeats, for a smoke run; ``--only NAME,...`` runs a subset by the short names below). Prints
Markdown tables (machine, command, date first). Reported, never asserted.

What is timed (CPU time of the process, ``time.process_time``, median of repeats; wall time on the
shared project machine measured the other jobs' load, not the code):

- *compile / cache load*: the first verified call of the process (T = 1), reported apart and
  excluded from every other column. A cold compile (empty ``NUMBA_CACHE_DIR``) is measured in a
  subprocess with ``--cold``.
- *reference* and *verified*, each in two modes: ``record_every=1`` (the default: the history f,
  ||grad f||, error to the optimum is computed in Python after every round by both twins) and
  ``record_every=T`` (history only at rounds 0 and T: the loop alone, as a sweep would run it).
  Speed-up = reference / verified in the same mode. Both twins start from the same seed; the table
  gives the largest entrywise difference of their outputs (they follow the same trajectory).
- *history share*: (verified with record_every=1 - verified with record_every=T) / the former.

Settings (the paper's where printed; our choices where not, each stated):

- ``fig1a``: 000 Fig. 1 column (a): sphere PCA (6.1), d + 1 = 25, eigengap nu = 1e-3, N = 10,
  N_i = 300 (prirfed-fig1 "full" sizes; the figure titles with N, N_i were lost in extraction),
  DP-RSGD, s_t = N, K = 1, b_i = N_i, alpha_t = 1/(2 L_g), tau = L_g, eps = 0.15, delta = 1e-5,
  sigma from the paper's formula (o_i = 1). Settings from
  :func:`prirfed.experiments.prirfed_fig1.column_settings`.
- ``fig1b``: column (b): s_t = 1, K = 5, b_i = N_i/2, alpha_t = 1.
- ``fig1c``: column (c): DP-RSVRG, s_t = 1, K = 2, m = floor(10 N/3), alpha_t = 1/(10 N^(2/3) L_g).
- ``mnist_rsgd`` / ``mnist_rsvrg``: MNIST-sized sphere PCA, d + 1 = 784, N = 50, N_i = 200 (issue 5's
  size; 000 sec. 6.1 runs N_i = 1200 on the 60,000 training images): the 10,000 MNIST test images
  (pixels / 255, one image per sample, agents = consecutive blocks of 200) when
  ``/work/shared/data/mnist`` is present, else synthetic data of the same size (uniform [0, 1]
  pixels; the table says which). 000 sec. 6.1 MNIST: eps = 0.15, delta = 1e-4, K = 3,
  m = floor(10 N/3), alpha_t = 0.1; s_t is not printed for MNIST: s_t = 5 here; b_i = N_i; tau = L_g.
- ``spd``: SPD(2) Frechet mean (000 sec. 6.2): Wishart W(I/2, 2) samples with dist(I, Z) < 1, N = 50,
  N_i = 100, s_t = 1, K = 3, tau = 1, alpha_t = 0.05, eps = 0.15, delta = 1e-4, b_i = N_i.
- ``hsp``: HSP on H^2 (000 sec. 6.3, problem (6.3)), synthetic: N = 10 agents of N_i = 50 pairs
  (w_ij in R^3 standard normal, y_ij = Exp_o of a tangent vector with N(0, 1/4) coordinates), test
  feature w = 0, gamma = 0.5, v = 2, DP-RSGD, s_t = 2, K = 3, b_i = N_i, tau = 1, alpha_t = 0.1,
  eps = 0.15, delta = 1e-5.

Bandwidth bound: B = bytes read + written by ``np.copyto`` of a large array / time (best of 5),
measured at 256 MiB (DRAM) and at the size of the setting's data (the data of all agents, which
for every setting here fits in the caches). The bytes a round must read: DP-RSGD
s_t K b_i (D + 1) 8 (each sampled row of D float64 and its gradient scale), DP-RSVRG
s_t K (N_i + m) (D + 1) 8 (a full gradient over N_i rows and m single rows per epoch), D the flat
dimension (d + 1 for the sphere and H^d in R^{d+1}, n^2 for SPD(n)). Lower bound per round =
bytes / B. ``ratio`` = measured verified time per round (record_every = T) / bound.
"""

from __future__ import annotations

import copy
import datetime
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

from prirfed.experiments.prirfed_fig1 import column_settings  # noqa: E402
from prirfed.reference.accounting.calibration import paper_sigma_dp_rsgd, paper_sigma_dp_rsvrg  # noqa: E402
from prirfed.reference.data.synthetic import bounded_wishart, federated_eigengap_data  # noqa: E402
from prirfed.reference.manifolds import Lorentz  # noqa: E402
from prirfed.reference.problems.hsp import HyperbolicStructuredPrediction as RefHSP  # noqa: E402
from prirfed.reference.problems.spd_frechet import SPDFrechetMean as RefSPD  # noqa: E402
from prirfed.reference.problems.sphere_pca import SpherePCA as RefSpherePCA  # noqa: E402
from prirfed.reference.trainers.prirfed import prirfed as ref_prirfed  # noqa: E402
from prirfed.verified.problems import HyperbolicStructuredPrediction as VerHSP  # noqa: E402
from prirfed.verified.problems import SPDFrechetMean as VerSPD  # noqa: E402
from prirfed.verified.problems import SpherePCA as VerSpherePCA  # noqa: E402
from prirfed.reference.trainers.base import History  # noqa: E402
from prirfed.reference.trainers.base import per_agent  # noqa: E402
from prirfed.reference.trainers.prirfed import step_sizes  # noqa: E402
from prirfed.reference.randomness import run_key  # noqa: E402
from prirfed.verified.trainers.arrays import history_optimum, problem_arrays  # noqa: E402
from prirfed.verified.trainers.codes import AGG_KARCHER, AGG_TANGENT, LOCAL_DP_RSGD, LOCAL_DP_RSVRG  # noqa: E402
from prirfed.verified.trainers.prirfed import prirfed_loop  # noqa: E402
from prirfed.verified.trainers.prirfed import prirfed as ver_prirfed  # noqa: E402

# CPU time of this process: the project machine is shared (load average ~10 on 2 cores while the other
# helpers run), so wall time measured the queue, not the code. Every run here is single-threaded
# (OPENBLAS_NUM_THREADS=1, no parallel Numba), so on an idle machine CPU time ~ wall time.
clock = time.process_time


# ------------------------------------------------------------------------------------------ settings
class Setting:
    """One benchmark setting: the two problem objects (reference and verified classes on the same
    data), x0, the trainer keywords, T, and the byte count of one round."""

    def __init__(self, key, label, ref, ver, x0, T, kw, D, data_note="", T_hist=None):
        self.key, self.label, self.ref, self.ver, self.x0, self.T, self.kw = key, label, ref, ver, x0, T, kw
        self.T_hist = T if T_hist is None else T_hist
        self.D = D
        self.data_note = data_note
        N_i = np.asarray(ref.sizes)
        s, K = kw["s"], kw["K"]
        if kw["local"] == "dp_rsgd":
            b = kw["b"] if kw["b"] is not None else int(N_i.max())
            rows = s * K * b
        else:
            rows = s * K * (int(N_i.max()) + kw["m"])
        self.bytes_round = rows * (D + 1) * 8
        self.fused = True
        self.data_bytes = int(N_i.sum()) * (D + 1) * 8


def _sphere_fig1(column, T):
    rng = np.random.default_rng(2024)
    N, N_i, D, nu = 10, 300, 25, 1e-3
    Z = [a.Z for a in federated_eigengap_data([N_i] * N, D - 1, nu, rng)]
    ref, ver = RefSpherePCA(Z, paper="000"), VerSpherePCA(Z, paper="000")
    L_g = ref.L_g
    cs = column_settings(column, N, N_i, L_g)
    eps, delta, tau = 0.15, 1e-5, L_g
    if cs["local"] == "dp_rsgd":
        sigma = paper_sigma_dp_rsgd(eps, delta, cs["K"], tau, N_i)
    else:
        sigma = paper_sigma_dp_rsvrg(eps, delta, cs["m"], cs["K"], tau, N_i)
    x0 = ref.manifold.random_point(rng)
    kw = dict(s=cs["s"], alpha=cs["alpha"], local=cs["local"], K=cs["K"], b=cs["b"], m=cs["m"], sigma=sigma, tau=tau)
    name = {"a": "DP-RSGD, s=N, K=1, b=N_i", "b": "DP-RSGD, s=1, K=5, b=N_i/2", "c": f"DP-RSVRG, s=1, K=2, m={cs['m']}"}[column]
    return Setting(f"fig1{column}", f"000 Fig. 1 ({column}): sphere PCA d+1=25, N=10, N_i=300, {name}", ref, ver, x0, T,
                   kw, D)


def _sphere_karcher(T):
    """Column (a) with the Karcher-mean aggregation (3.1) of 000 instead of the tangent mean (3.2)."""
    S = _sphere_fig1("a", T)
    S.kw["aggregation"] = "karcher"
    S.key, S.label = "fig1a_karcher", S.label + ", Karcher-mean aggregation (3.1)"
    return S


def _stiefel(T):
    """Stiefel kPCA (002 (3)) under PriRFed: Gaussian data of 002 sec. 5.2 (X_i in R^{d x p}, records the columns),
    d = 20, r = 3, N = 10 agents of N_i = 100 records; DP-RSGD, s_t = 2, K = 3, b_i = 50, tau = 1, alpha_t = 0.05,
    eps = 0.15, delta = 1e-5 (our choices: 000 runs no Stiefel experiment)."""
    from prirfed.reference.data.synthetic import kpca_gaussian_data
    from prirfed.reference.problems.stiefel_kpca import StiefelKPCA as RefKPCA
    from prirfed.verified.problems.stiefel_kpca import StiefelKPCA as VerKPCA

    rng = np.random.default_rng(2028)
    N, N_i, d, r = 10, 100, 20, 3
    Z = [X.T for X in kpca_gaussian_data(N, N_i, d, rng).X]
    ref, ver = RefKPCA(Z, r), VerKPCA(Z, r)
    x0 = ref.manifold.random_point(rng)
    kw = dict(s=2, alpha=0.05, local="dp_rsgd", K=3, b=50, m=1, sigma=paper_sigma_dp_rsgd(0.15, 1e-5, 3, 1.0, N_i), tau=1.0)
    S = Setting("stiefel", "002 (3): Stiefel kPCA St(20, 3) (synthetic), N=10, N_i=100, s=2, K=3, b=50", ref, ver, x0, T,
                kw, d)
    S.fused = False  # the Stiefel specialisation of the same loops, not timed alone here
    return S


def _mnist_rows(n, rng):
    """(n, 784) rows in [0, 1]: the MNIST test images if present, else uniform synthetic pixels."""
    from prirfed.reference.data.real import load_mnist, mnist_vectors, shared_data_dir

    base = shared_data_dir()
    if base is not None and (base / "mnist" / "t10k-images-idx3-ubyte.gz").exists():
        images, _ = load_mnist(base / "mnist" / "t10k-images-idx3-ubyte.gz", base / "mnist" / "t10k-labels-idx1-ubyte.gz")
        Z = mnist_vectors(images)
        if Z.shape[0] >= n:
            return Z[:n], "MNIST test images / 255"
    return rng.uniform(0.0, 1.0, size=(n, 784)), "synthetic uniform [0, 1] pixels (MNIST files absent)"


def _mnist(local, T):
    rng = np.random.default_rng(2026)
    N, N_i = 50, 200
    Zall, note = _mnist_rows(N * N_i, rng)
    Z = [Zall[i * N_i:(i + 1) * N_i] for i in range(N)]
    ref, ver = RefSpherePCA(Z, paper="000"), VerSpherePCA(Z, paper="000")
    eps, delta, K, tau, s = 0.15, 1e-4, 3, ref.L_g, 5
    m = (10 * N) // 3
    if local == "dp_rsgd":
        sigma = paper_sigma_dp_rsgd(eps, delta, K, tau, N_i)
    else:
        sigma = paper_sigma_dp_rsvrg(eps, delta, m, K, tau, N_i)
    x0 = ref.manifold.random_point(rng)
    kw = dict(s=s, alpha=0.1, local=local, K=K, b=None, m=m if local == "dp_rsvrg" else 1, sigma=sigma, tau=tau)
    what = "DP-RSGD, K=3, b=N_i" if local == "dp_rsgd" else f"DP-RSVRG, K=3, m={m}"
    return Setting(f"mnist_{local[3:]}", f"MNIST-sized sphere PCA d+1=784, N=50, N_i=200, s=5, {what}", ref, ver, x0, T,
                   kw, 784, note)


def _spd(T):
    rng = np.random.default_rng(2025)
    N, N_i = 50, 100
    Z = [bounded_wishart(N_i, 2, 1.0, rng).X for _ in range(N)]
    ref, ver = RefSPD(Z), VerSPD(Z)
    kw = dict(s=1, alpha=0.05, local="dp_rsgd", K=3, b=None, m=1, sigma=paper_sigma_dp_rsgd(0.15, 1e-4, 3, 1.0, N_i),
              tau=1.0)
    return Setting("spd", "000 sec. 6.2: SPD(2) Frechet mean, N=50, N_i=100, s=1, K=3, b=N_i", ref, ver, np.eye(2), T,
                   kw, 4)


def _hsp(T):
    rng = np.random.default_rng(2027)
    N, N_i, r, d = 10, 50, 3, 2
    M = Lorentz(d)
    o = M.origin()
    W = [rng.standard_normal((N_i, r)) for _ in range(N)]
    Y = [np.stack([M.exp(o, np.concatenate([[0.0], 0.5 * rng.standard_normal(d)])) for _ in range(N_i)]) for _ in range(N)]
    args = (W, Y, np.zeros(r), 0.5, 2.0)
    ref, ver = RefHSP(*args), VerHSP(*args)
    kw = dict(s=2, alpha=0.1, local="dp_rsgd", K=3, b=None, m=1, sigma=paper_sigma_dp_rsgd(0.15, 1e-5, 3, 1.0, N_i),
              tau=1.0)
    return Setting("hsp", "000 sec. 6.3: HSP on H^2 (synthetic), N=10, N_i=50, s=2, K=3, b=N_i", ref, ver, o, T, kw, 3)


def settings(quick):
    """(make, T, T_hist, reference repeats or None for the default): T for the runs recording rounds 0
    and T only, T_hist for the runs recording every round (smaller where one record costs seconds);
    chosen so that one reference run takes a few seconds of CPU on the project machine."""
    q = (lambda T: max(1, T // 10)) if quick else (lambda T: T)
    return [
        (lambda T: _sphere_fig1("a", T), q(50), q(50), None),
        (lambda T: _sphere_fig1("b", T), q(200), q(200), None),
        (lambda T: _sphere_fig1("c", T), q(100), q(100), None),
        (lambda T: _mnist("dp_rsgd", T), q(40), 1, None),
        (lambda T: _mnist("dp_rsvrg", T), 1, 1, 1),
        (lambda T: _spd(T), q(150), q(15), None),
        (lambda T: _hsp(T), q(150), q(50), None),
        (lambda T: _sphere_karcher(T), q(30), q(30), None),
        (lambda T: _stiefel(T), q(60), q(60), None),
    ]


# ------------------------------------------------------------------------------------------ timing
def median_time(fn, repeats):
    ts, out = [], None
    for _ in range(repeats):
        t = clock()
        out = fn()
        ts.append(clock() - t)
    return statistics.median(ts), out


def fused_call(S: Setting, T, rng):
    """A closure calling :func:`prirfed_loop` itself with the arguments the verified wrapper builds (the
    same preparation: problem_arrays, step sizes, per-agent sigma and b), history at rounds 0 and T."""
    kw = S.kw
    arrays = problem_arrays("bench", S.ver)
    N = S.ver.N
    alphas = step_sizes("bench", kw["alpha"], T)
    sigmas = per_agent("bench", "sigma", kw["sigma"], N)
    bs = per_agent("bench", "b", S.ver.sizes if kw["b"] is None else kw["b"], N).astype(np.int64)
    x0 = np.ascontiguousarray(S.x0, dtype=np.float64).ravel()
    tau = float(kw["tau"])
    agg = AGG_KARCHER if kw.get("aggregation", "tangent") == "karcher" else AGG_TANGENT
    local = LOCAL_DP_RSGD if kw["local"] == "dp_rsgd" else LOCAL_DP_RSVRG
    xstar = history_optimum(S.ver)
    return lambda: prirfed_loop(*arrays, xstar, x0, T, kw["s"], alphas, run_key(rng), local, kw["K"], bs, kw["m"], sigmas,
                                tau, tau, tau, 1, 1, T, False, agg)


def run_setting(S: Setting, repeats_ref, repeats_ver):
    kw = dict(S.kw)
    s, alpha = kw.pop("s"), kw.pop("alpha")
    T, Th = S.T, S.T_hist
    S.ref.x_star, S.ver.x_star  # the optimum (used by the history of both) is cached outside the timings

    def ref(T_, record_every, seed=1):
        return ref_prirfed(S.ref, S.x0, T_, s, alpha, np.random.default_rng(seed), record_every=record_every, **kw)

    def ver(T_, record_every, seed=1):
        return ver_prirfed(S.ver, S.x0, T_, s, alpha, np.random.default_rng(seed), record_every=record_every, **kw)

    t0 = clock()
    ver(1, 1, seed=0)
    t_first = clock() - t0
    t_rec_ref, _ = median_time(lambda: History().record(S.ref, 0, S.x0), 3)
    t_rec_ver, _ = median_time(lambda: History().record(S.ver, 0, S.x0), 3)
    t_ref1, a1 = median_time(lambda: ref(Th, 1), repeats_ref)
    t_ver1, b1 = median_time(lambda: ver(Th, 1), repeats_ver)
    t_refT, a = median_time(lambda: ref(T, T), repeats_ref)
    t_verT, b = median_time(lambda: ver(T, T), repeats_ver)
    if S.fused:
        _, x_loop = fused_call(S, T, np.random.default_rng(1))()  # the same draws as ver(T, T)
        calls = iter([fused_call(S, T, np.random.default_rng(1)) for _ in range(repeats_ver)])  # prepared outside the timing
        t_loop, _ = median_time(lambda: next(calls)(), repeats_ver)
        diff_loop = float(np.max(np.abs(np.asarray(b.x).ravel() - x_loop)))
    else:
        t_loop, diff_loop = math.nan, math.nan
    diff = float(np.max(np.abs(np.asarray(a.x) - np.asarray(b.x))))
    # one record if SpherePCA.angle_to_optimum used the cached optimum x_star instead of recomputing optimum()
    # (an eigh of the (d+1) x (d+1) matrix A rebuilt from all agents' data, at every record)
    t_rec_cached = math.nan
    if hasattr(S.ver, "angle_to_optimum") and hasattr(S.ver, "eigenvalues"):
        P2 = copy.copy(S.ver)
        x_star = S.ver.x_star
        P2.optimum = lambda: x_star
        t_rec_cached, _ = median_time(lambda: History().record(P2, 0, S.x0), 3)
    fa, fb = np.asarray(a1.history.f), np.asarray(b1.history.f)
    hist_diff = float(np.max(np.abs(fa - fb) / (1.0 + np.abs(fa))))
    return dict(T=T, T_hist=Th, t_first=t_first, t_rec_ref=t_rec_ref, t_rec_ver=t_rec_ver, t_rec_cached=t_rec_cached, t_ref1=t_ref1 / Th,
                t_ver1=t_ver1 / Th, t_refT=t_refT / T, t_verT=t_verT / T,
                t_ref_loop=max(t_refT - 2 * t_rec_ref, 1e-9) / T, t_loop=t_loop / T, diff=diff, diff_loop=diff_loop,
                hist_diff=hist_diff)


def copy_bandwidth(nbytes, min_time=0.05):
    """Bytes read + written per second by np.copyto on float64 arrays of ``nbytes`` each (best of 5 runs,
    each repeating the copy until ``min_time`` s have passed)."""
    n = max(1, nbytes // 8)
    src = np.random.default_rng(0).standard_normal(n)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = math.inf
    for _ in range(5):
        reps, t0 = 0, clock()
        while True:
            np.copyto(dst, src)
            reps += 1
            el = clock() - t0
            if el >= min_time:
                break
        best = min(best, el / reps)
    return 2.0 * n * 8 / best


COLD_SNIPPET = """
import time, numpy as np
from prirfed.verified.problems import SpherePCA
from prirfed.verified.trainers.prirfed import prirfed
t = time.perf_counter()
P = SpherePCA([np.diag([2.0, 1.0]), np.eye(2)])
prirfed(P, np.array([1.0, 0.0]), 1, 1, 0.1, np.random.default_rng(0), sigma=0.1, tau=1.0)
print(time.perf_counter() - t)
"""


def cold_compile_seconds():
    """Wall time of the first prirfed call with an empty Numba cache (fresh subprocess): the cold compile
    of the fused loop (one compiled function serves every problem, local trainer and option)."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        out = subprocess.run([sys.executable, "-c", COLD_SNIPPET], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------ where the time goes
# Benchmark-only prototypes of two fixes for the fused loops (owned by verified/trainers): each is checked
# against the kernels the loop uses today, on the same inputs and the same random draws.
from numba import njit  # noqa: E402

from prirfed.verified.manifolds.sphere import norm_kernel as _sph_norm  # noqa: E402
from prirfed.verified.manifolds.sphere import tangent_basis_kernel as _sph_basis  # noqa: E402
from prirfed.verified.mechanisms import clip_kernel, sample_tangent_gaussian_kernel  # noqa: E402
from prirfed.verified.problems.sphere_pca import sphere_pca_rgrad_kernel  # noqa: E402


@njit
def _noise_as_today(rng, x, sigma, reps):
    """The fused loop's sphere noise: build the (d, d+1) tangent basis, then combine d normals (O(d^2))."""
    out = np.zeros(x.shape[0])
    for _ in range(reps):
        out += sample_tangent_gaussian_kernel(rng, _sph_basis(x), sigma)
    return out


@njit
def _noise_linear(rng, x, sigma, reps):
    """The same vector in O(d): the basis rows are E_k = e_{k+1} - x_{k+1} m, m = (x + s e_0)/(1 + s x_0),
    s = sign(x_0), so sum_k z_k E_k = (0, z_0, ..., z_{d-1}) - (sum_k z_k x_{k+1}) m; the same d draws."""
    n = x.shape[0]
    out = np.zeros(n)
    sg = 1.0 if x[0] >= 0.0 else -1.0
    den = 1.0 + sg * x[0]
    for _ in range(reps):
        z = sigma * rng.standard_normal(n - 1)
        a = 0.0
        for k in range(n - 1):
            a += z[k] * x[k + 1]
        out[0] += -a * (x[0] + sg) / den
        for k in range(1, n):
            out[k] += z[k - 1] - a * x[k] / den
    return out


@njit
def _batch_as_today(x, Z, C, rows, tau, reps):
    """DP-RSGD's clipped batch mean as in the fused loop: per sample a new gradient array, a new clipped
    array and a new running sum (three allocations of d+1 floats per sample)."""
    D = x.shape[0]
    mean = np.zeros(D)
    for _ in range(reps):
        mean = np.zeros(D)
        for q in range(rows.shape[0]):
            g = sphere_pca_rgrad_kernel(x, Z[rows[q]], C[rows[q]])
            mean = mean + clip_kernel(g, _sph_norm(x, g), tau)
    return mean / rows.shape[0]


@njit
def _batch_in_place(x, Z, C, rows, tau, reps):
    """The same sum accumulated in place: a = z.x, ||g||^2 from g_k = -2 c a (z_k - a x_k) in one pass,
    then mean += min(1, tau/||g||) g in a second pass; no allocation per sample."""
    D = x.shape[0]
    mean = np.zeros(D)
    for _ in range(reps):
        mean[:] = 0.0
        for q in range(rows.shape[0]):
            z = Z[rows[q]]
            a = 0.0
            for k in range(D):
                a += z[k] * x[k]
            sc = -2.0 * C[rows[q]] * a
            nn = 0.0
            for k in range(D):
                g = sc * (z[k] - a * x[k])
                nn += g * g
            nrm = math.sqrt(nn)
            f = 1.0
            if nrm != 0.0 and tau / nrm < 1.0:
                f = tau / nrm
            for k in range(D):
                mean[k] += f * (sc * (z[k] - a * x[k]))
    return mean / rows.shape[0]


def _per_call(fn, *args, reps):
    fn(*args, 1)  # compile outside the timing
    t, _ = median_time(lambda: fn(*args, reps), 3)
    return t / reps


def where_time_goes(rows):
    """Unit costs of the two dominant pieces of the sphere loops (tangent noise, clipped batch gradient)
    today and with the prototype fixes, and the share of the fused loop they explain."""
    print("## Where the fused loop's time goes (sphere settings) and two fixes")
    print()
    print("Unit costs inside compiled code (a loop of calls in one njit function; median of 3). 'today' = the kernels")
    print("the fused loop calls now; 'fix' = the benchmark's prototype (same inputs, same Generator draws).")
    print()
    print("| d+1 | tangent noise today (basis + combine) | O(d) noise (fix) | max abs diff | clipped batch mean today, per sample | in place (fix), per sample | max abs diff |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    unit = {}
    for D, b in ((25, 300), (784, 200)):
        rng = np.random.default_rng(5)
        x = rng.standard_normal(D)
        x /= np.linalg.norm(x)
        Z = rng.uniform(0.0, 1.0, size=(b, D))
        C = np.ones(b)
        rows_ = np.arange(b)
        tau = float(np.median(2 * np.abs(Z @ x) * np.linalg.norm(Z, axis=1)))  # about half the samples clipped
        reps_n = 2000 if D == 25 else 100
        n_today = _per_call(lambda r: _noise_as_today(np.random.default_rng(9), x, 0.3, r), reps=reps_n)
        n_fix = _per_call(lambda r: _noise_linear(np.random.default_rng(9), x, 0.3, r), reps=reps_n)
        dn = float(np.max(np.abs(_noise_as_today(np.random.default_rng(9), x, 0.3, 3) - _noise_linear(np.random.default_rng(9), x, 0.3, 3))))
        reps_b = 200 if D == 25 else 20
        b_today = _per_call(lambda r: _batch_as_today(x, Z, C, rows_, tau, r), reps=reps_b) / b
        b_fix = _per_call(lambda r: _batch_in_place(x, Z, C, rows_, tau, r), reps=reps_b) / b
        db = float(np.max(np.abs(_batch_as_today(x, Z, C, rows_, tau, 1) - _batch_in_place(x, Z, C, rows_, tau, 1))))
        unit[D] = (n_today, n_fix, b_today, b_fix)
        print(f"| {D} | {n_today * 1e6:.2f} us | {n_fix * 1e6:.3f} us | {dn:.1e} | {b_today * 1e9:.0f} ns | {b_fix * 1e9:.0f} ns | {db:.1e} |")
    print()
    print("Counts per round from the settings; estimated share = count x unit cost today / fused loop per round;")
    print("'estimated loop with both fixes' replaces those unit costs (other work unchanged).")
    print()
    print("| setting | noise draws per round | per-sample gradients per round | fused loop per round | noise share (est.) | gradient share (est.) | estimated loop with both fixes | est. gain |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for S, r in rows:
        if S.D not in unit or not S.fused:
            continue
        kw = S.kw
        N_i = int(max(S.ver.sizes))
        if kw["local"] == "dp_rsgd":
            b = kw["b"] if kw["b"] is not None else N_i
            draws, grads = kw["s"] * kw["K"], kw["s"] * kw["K"] * b
        else:
            draws, grads = kw["s"] * kw["K"] * kw["m"], kw["s"] * kw["K"] * (N_i + 2 * kw["m"])
        n_today, n_fix, b_today, b_fix = unit[S.D]
        loop = r["t_loop"]
        est = max(loop - draws * (n_today - n_fix) - grads * (b_today - b_fix), draws * n_fix + grads * b_fix)
        print(f"| {S.key} | {draws} | {grads} | {fmt_t(loop)} | {draws * n_today / loop:.0%} | {grads * b_today / loop:.0%} "
              f"| {fmt_t(est)} | {loop / est:.1f}x |")
    print()


# ------------------------------------------------------------------------------------------ report
def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{cpu}, nproc = {os.cpu_count()}, {platform.system()} {platform.release()}, Python {platform.python_version()}, "
            f"NumPy {np.__version__}, Numba {numba.__version__}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")


def git_commit():
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        head = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--", "../verified", "../reference"],
                               capture_output=True, text=True, check=True).stdout.split("\n")
        dirty = [ln[3:] for ln in dirty if ln.strip() and not ln.startswith("??")]
        return head + (f" plus uncommitted changes to {', '.join(dirty)}" if dirty else " (verified/ and reference/ clean)")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt_t(t):
    if t < 1e-3:
        return f"{t * 1e6:.0f} us"
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    only = None
    if "--only" in argv:
        only = set(argv[argv.index("--only") + 1].split(","))
    repeats_ref, repeats_ver = (1, 3) if quick else (3, 3)
    print("# End-to-end benchmark: PriRFed reference vs verified (issue 5)")
    print()
    print(f"- command: `python benchmarks/bench_end_to_end.py{' ' + ' '.join(argv) if argv else ''}`")
    print(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; git commit {git_commit()}")
    print(f"- machine: {machine()}")
    print(f"- CPU time of the process (time.process_time: the machine is shared, see the module docstring); "
          f"median of {repeats_ref} (reference; 1 for mnist_rsvrg) and {repeats_ver} (verified) repeats; "
          f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print()
    rows = []
    for make, T, T_hist, reps in settings(quick):
        S = make(T)
        S.T_hist = T_hist
        if only is not None and S.key not in only:
            continue
        r = run_setting(S, reps or repeats_ref, repeats_ver)
        rows.append((S, r))
        print(f"<!-- done {S.key} -->", file=sys.stderr, flush=True)

    target = {25: 20.0, 784: 5.0}
    print("## End to end, reference vs verified (compile excluded; CPU time per round)")
    print()
    print("Three ways to run: (1) `record_every=1` (the default: f, ||grad f|| and the error to the optimum")
    print("recorded after every round, in Python, by both twins), T_hist rounds; (2) `record_every=T` (history at")
    print("rounds 0 and T only), T rounds; (3) the fused loop `prirfed_loop` alone (verified) against the reference")
    print("`record_every=T` run minus its two history records. 'record' = one `History.record` call (the history")
    print("cost of one round; for sphere PCA also the verified record if `angle_to_optimum` reused the cached x*).")
    print("The target of issue 5 is met when the end-to-end speed-ups (1) and (2) reach it.")
    print()
    print("| setting | T_hist / T | first verified call (compile or cache load) | one record: ref / ver "
          "| (1) ref / ver per round | speed-up (1) | (2) ref / ver per round | speed-up (2) "
          "| (3) ref loop / fused loop per round | speed-up (3) | target | met? | max abs diff x_out (ref vs ver; ver vs loop) | max rel diff of f history |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for S, r in rows:
        sp1, spT, spL = r["t_ref1"] / r["t_ver1"], r["t_refT"] / r["t_verT"], r["t_ref_loop"] / r["t_loop"]
        cached_txt = "" if math.isnan(r["t_rec_cached"]) else f" ({fmt_t(r['t_rec_cached'])} with x* cached)"
        loop_txt = f"{fmt_t(r['t_ref_loop'])} / {fmt_t(r['t_loop'])} | {spL:.0f}x" if S.fused else "n/a (own loop) | n/a"
        tg = target.get(S.D)
        if tg is None:
            met = "(no target)"
        elif min(sp1, spT) >= tg:
            met = "yes"
        elif spT >= tg:
            met = "only with record_every=T"
        elif S.fused and spL >= tg:
            met = "loop only: no end to end"
        else:
            met = "no"
        label = S.label + (f" [{S.data_note}]" if S.data_note else "")
        print(f"| {label} | {r['T_hist']} / {r['T']} | {fmt_t(r['t_first'])} | {fmt_t(r['t_rec_ref'])} / {fmt_t(r['t_rec_ver'])}"
              f"{cached_txt} "
              f"| {fmt_t(r['t_ref1'])} / {fmt_t(r['t_ver1'])} | {sp1:.1f}x "
              f"| {fmt_t(r['t_refT'])} / {fmt_t(r['t_verT'])} | {spT:.1f}x "
              f"| {loop_txt} "
              f"| {'' if tg is None else f'>= {tg:.0f}x'} | {met} | {r['diff']:.1e}; {r['diff_loop']:.1e} | {r['hist_diff']:.1e} |")
    print()

    bw_dram = copy_bandwidth(256 * 2**20)
    print("## Time per round vs a memory-bandwidth lower bound")
    print()
    print(f"Copy bandwidth (np.copyto of float64 arrays, bytes read + written / time, best of 5): 256 MiB arrays "
          f"(DRAM) {bw_dram / 1e9:.1f} GB/s; at each setting's data size in the table. Bound = bytes a round must read "
          f"/ bandwidth; ratio = fused loop per round / bound.")
    print()
    print("| setting | bytes read per round | data of all agents | copy bandwidth at the data size | bound per round (DRAM) "
          "| bound per round (data-size bandwidth) | fused loop per round | ratio to DRAM bound | ratio to data-size bound "
          "| verified end to end per round (2) | reference per round (2) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for S, r in rows:
        if not S.fused:
            continue
        bw_ws = copy_bandwidth(max(S.data_bytes, 256 * 1024))
        lb_dram, lb_ws = S.bytes_round / bw_dram, S.bytes_round / bw_ws
        print(f"| {S.key} | {S.bytes_round / 1e3:.1f} kB | {S.data_bytes / 1e6:.2f} MB | {bw_ws / 1e9:.1f} GB/s "
              f"| {lb_dram * 1e6:.2f} us | {lb_ws * 1e6:.2f} us | {r['t_loop'] * 1e6:.1f} us | {r['t_loop'] / lb_dram:.0f}x "
              f"| {r['t_loop'] / lb_ws:.0f}x | {fmt_t(r['t_verT'])} | {fmt_t(r['t_refT'])} |")
    print()
    where_time_goes(rows)
    if "--cold" in argv:
        print(f"Cold compile of the fused PriRFed loop (empty NUMBA_CACHE_DIR, fresh process, wall): {cold_compile_seconds():.1f} s")
        print()


if __name__ == "__main__":
    main()
