"""Benchmark: privacy accounting (reference/accounting): speed, and tightness against an independent PLD.

Run:  python benchmarks/bench_accounting.py [--section timing|tightness|calibration|inverse|fft|orders|search|all]
(prints Markdown; nothing is asserted). Targets (issues 3 and 13, reported, not asserted):
calibrating sigma for a whole PriRFed run N = 100, s = 5, T = 500, K = 3 (b = 60 of N_i = 600) with
the PLD accountant in under 50 ms; activated Gaussian and full-batch DP-RSGD within 1.01x of exact;
b < N_i at or below both the WBK19 Gaussian RDP bound and the coupling PLD bound; the sigma calibrated
for eps = 1 at most 0.6x the RDP value before issue 13 (0.452); black-box exact composition at
T = 1e5 under a second.

"tightness" needs dp-accounting (the test extra): the independent PLD is dp-accounting driven with
explicit Gaussian PLDs (sensitivity 1, std z), its identity for activation, its own FFT, h = 1e-4.
"calibration" compares with the accountant of `main` before issue 13 when git can show it (the
script copies main's reference/accounting into a temporary package); otherwise that column is empty.
"""

from __future__ import annotations

import argparse
import importlib
import math
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from prirfed.reference.accounting import calibration as cal
from prirfed.reference.accounting import pld, rdp
from prirfed.reference.accounting import prirfed_accountant as pa
from prirfed.reference.accounting.accountants import privacy_report
from prirfed.reference.accounting.events import Gaussian
from prirfed.reference.accounting.paper import table_1

DELTA = 1e-5


def best_ms(fn, repeat=7):
    fn()  # warm caches (lru-cached binomial tables, imports)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return 1e3 * ts[0], 1e3 * ts[len(ts) // 2]


def full_run(sigma, b=60, trainer="dp_rsgd", T=500, s=5):
    local = pa.dp_rsgd_event(sigma, 1.0, b, 600, 3) if trainer == "dp_rsgd" else pa.dp_rsvrg_event(sigma, 1.0, 1.0, 600, 10, 3)
    return pa.prirfed_event(local, 100, s, T)


def timing():
    cases = [
        ("calibrate PriRFed N=100 s=5 T=500, DP-RSGD K=3 full batch (N_i=600), eps=1 (PLD: exact binomial curve)",
         lambda: cal.calibrate_sigma_prirfed(1.0, DELTA, 100, 5, 500, trainer="dp_rsgd", K=3, tau=1.0, N_i=600, b=600, accountant="pld")),
        ("calibrate PriRFed N=100 s=5 T=500, DP-RSGD K=3 b=60 of N_i=600, eps=1, accountant=pld",
         lambda: cal.calibrate_sigma_prirfed(1.0, DELTA, 100, 5, 500, trainer="dp_rsgd", K=3, tau=1.0, N_i=600, b=60, accountant="pld")),
        ("calibrate the same, accountant=best (PLD and RDP at every step)",
         lambda: cal.calibrate_sigma_prirfed(1.0, DELTA, 100, 5, 500, trainer="dp_rsgd", K=3, tau=1.0, N_i=600, b=60, accountant="best")),
        ("calibrate the same, accountant=rdp",
         lambda: cal.calibrate_sigma_prirfed(1.0, DELTA, 100, 5, 500, trainer="dp_rsgd", K=3, tau=1.0, N_i=600, b=60, accountant="rdp")),
        ("calibrate PriRFed N=100 s=5 T=50, DP-RSVRG m=10 K=3 N_i=600, eps=1, accountant=pld",
         lambda: cal.calibrate_sigma_prirfed(1.0, DELTA, 100, 5, 50, trainer="dp_rsvrg", m=10, K=3, tau0=1.0, tau1=1.0, N_i=600, accountant="pld")),
        ("eps of one PriRFed run (DP-RSGD b=60, sigma=0.126), PLD", lambda: pld.PldAccountant().compose(full_run(0.126)).get_epsilon(DELTA)),
        ("eps of one PriRFed run (DP-RSGD b=60, sigma=0.126), RDP (adaptive orders, WBK19 Gaussian)",
         lambda: rdp.RdpAccountant().compose(full_run(0.126)).get_epsilon(DELTA)),
        ("[lower, upper] report of that run (privacy_report)", lambda: privacy_report(full_run(0.126), DELTA)),
        ("Table 1 of 000 (48 cells, paper accountant)", table_1),
        ("rigorous Table 1 (48 exact black-box eps', cold cache)",
         lambda: (pa._blackbox_delta_terms.cache_clear(), pa.rigorous_table_1())),
        ("black-box exact eps, T = 1e5 rounds (rho = 0.05, (0.15, 1e-4) trainer, delta' = 0.5)",
         lambda: (pa._blackbox_delta_terms.cache_clear(), pa.blackbox_exact_epsilon(0.15, 1e-4, 0.05, 100_000, 0.5))),
    ]
    print("| call | best of 7 (ms) | median (ms) |")
    print("|---|---:|---:|")
    for name, fn in cases:
        b, m = best_ms(fn)
        print(f"| {name} | {b:.2f} | {m:.2f} |")


# ------------------------------------------------------------------------------------------------ tightness


def _peer():
    from prirfed.testing import peer_pld as peer

    import dp_accounting  # noqa: F401  (ImportError when the test extra is missing)

    return (lambda z, pess=True, q=1.0: peer.gaussian(z, pess, q=q), lambda p, rho, pess=True: peer.activate(p, rho, pess),
            peer.stitched_without_replacement)


def tightness():
    try:
        gauss, act, stitched = _peer()
    except ImportError:
        print("dp-accounting is not installed (pip install 'prirfed[test]'): section skipped")
        return
    print("Columns: prirfed's [lower, upper] (PLD, h = 1e-3; upper by the default accountant), the independent")
    print("PLD of dp-accounting (h = 1e-4) [optimistic, pessimistic] for the attained pair, and for a valid")
    print("upper pair, the RDP accountant, and ratios. eps at delta = 1e-5.\n")

    print("### Activated Gaussian local trainer (Gaussian(z = 1) per round, N = 100)\n")
    print("| s | T | prirfed lower | prirfed upper | upper/lower | peer [opt, pess] | upper / peer pess | RDP | RDP / upper |")
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for s in (1, 5, 10):
        for T in (50, 500):
            ev = pa.prirfed_event(Gaussian(1.0), 100, s, T)
            r = privacy_report(ev, DELTA)
            po = act(gauss(1.0, pess=False), s / 100, pess=False).self_compose(T).get_epsilon_for_delta(DELTA)
            pp = act(gauss(1.0), s / 100).self_compose(T).get_epsilon_for_delta(DELTA)
            e_rdp = rdp.RdpAccountant().compose(ev).get_epsilon(DELTA)
            print(f"| {s} | {T} | {r.lower:.5f} | {r.upper:.5f} | {r.ratio:.4f} | [{po:.5f}, {pp:.5f}] | {r.upper / pp:.4f} | {e_rdp:.5f} | {e_rdp / r.upper:.3f} |")

    print("\n### Full run N = 100, s = 5, T = 500, DP-RSGD K = 3, N_i = 600\n")
    print("| b | sigma | prirfed lower | prirfed upper | upper/lower | peer attained pair [opt, pess] | peer same (stitched) pair | coupling PLD (peer) | RDP (WBK19 Gaussian) | upper / min(coupling, RDP) |")
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for b, sigma in ((600, 0.1134), (60, 0.1262), (60, 0.2600), (60, 0.452)):
        ev = full_run(sigma, b)
        r = privacy_report(ev, DELTA)
        z = sigma * b / 2
        e_rdp = rdp.RdpAccountant().compose(ev).get_epsilon(DELTA)
        if b == 600:
            zr = z / math.sqrt(3)
            po = act(gauss(zr, pess=False), 0.05, pess=False).self_compose(500).get_epsilon_for_delta(DELTA)
            pp = act(gauss(zr), 0.05).self_compose(500).get_epsilon_for_delta(DELTA)
            print(f"| {b} | {sigma} | {r.lower:.5f} | {r.upper:.5f} | {r.ratio:.4f} | [{po:.5f}, {pp:.5f}] | (exact) | — | {e_rdp:.5f} | {r.upper / e_rdp:.3f} |")
            continue
        q = b / 600
        po = act(gauss(z, pess=False, q=q).self_compose(3), 0.05, pess=False).self_compose(500).get_epsilon_for_delta(DELTA)
        pp = act(gauss(z, q=q).self_compose(3), 0.05).self_compose(500).get_epsilon_for_delta(DELTA)
        st = act(stitched(z, q).self_compose(3), 0.05).self_compose(500).get_epsilon_for_delta(DELTA)
        cp = act(act(gauss(z), q).self_compose(3), 0.05).self_compose(500).get_epsilon_for_delta(DELTA)
        print(f"| {b} | {sigma} | {r.lower:.5f} | {r.upper:.5f} | {r.ratio:.4f} | [{po:.5f}, {pp:.5f}] | {st:.5f} | {cp:.5f} | {e_rdp:.5f} | {r.upper / min(cp, e_rdp):.3f} |")

    print("\n### DP-RSVRG full run N = 100, s = 5, T = 50, m = 10, K = 3, N_i = 600 (sigma the RDP accountant calibrates for eps = 1)\n")
    sigma = cal.calibrate_sigma_prirfed(1.0, DELTA, 100, 5, 50, trainer="dp_rsvrg", m=10, K=3, tau0=1.0, tau1=1.0, N_i=600, accountant="rdp").sigma
    ev = full_run(sigma, trainer="dp_rsvrg", T=50)
    r = privacy_report(ev, DELTA)
    c, d, s_, p = (2 / 600) / sigma, (2 / 600 + 4) / sigma, 4 / sigma, 1 / 600
    lab = gauss(1 / c).compute_mixture(gauss(1 / d), 1 - p)
    lab_e = act(lab.self_compose(30), 0.05).self_compose(50).get_epsilon_for_delta(DELTA)
    g_lo = act(gauss(1 / c, pess=False).self_compose(30), 0.05, pess=False).self_compose(50).get_epsilon_for_delta(DELTA)
    print("| sigma | prirfed lower (full-gradient Gaussian, attained) | prirfed upper (PLD) | upper/lower | peer labelled-mixture PLD | peer full-gradient Gaussian (opt) | RDP (before: the only bound) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {sigma:.4f} | {r.lower:.5f} | {r.upper:.5f} | {r.ratio:.2f} | {lab_e:.5f} | {g_lo:.5f} | {r.rdp:.5f} |")


# ------------------------------------------------------------------------------------------------ calibration


def _old_accounting():
    """main's reference/accounting before issue 13, as a temporary package ``oldacct`` (None if unavailable)."""
    root = Path(__file__).resolve().parent.parent
    try:
        base = subprocess.run(["git", "-C", str(root), "merge-base", "HEAD", "bc8a695"], capture_output=True, text=True, check=True).stdout.strip()
        names = subprocess.run(["git", "-C", str(root), "ls-tree", "--name-only", f"{base}:reference/accounting"], capture_output=True, text=True, check=True).stdout.split()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None
    tmp = Path(tempfile.mkdtemp()) / "oldacct"
    tmp.mkdir()
    for n in names:
        if n.endswith(".py"):
            src = subprocess.run(["git", "-C", str(root), "show", f"{base}:reference/accounting/{n}"], capture_output=True, text=True, check=True).stdout
            (tmp / n).write_text(src)
    sys.path.insert(0, str(tmp.parent))
    return importlib.import_module("oldacct.calibration")


def calibration():
    old = _old_accounting()
    print("Full run N = 100, s = 5, T = 500, K = 3, b = 60 of N_i = 600, tau = 1, delta = 1e-5. \"before\": the")
    print("RDP accountant of main before issue 13 (commit bc8a695); \"after\": each accountant now.\n")
    print("| eps | sigma before (RDP, old) | sigma after: rdp | sigma after: pld | sigma after: best (default) | best / before | [lower, upper] eps at the best sigma | calibration time, pld (ms) |")
    print("|---:|---:|---:|---:|---:|---:|---|---:|")
    kw = dict(trainer="dp_rsgd", K=3, tau=1.0, N_i=600, b=60)
    for eps in (0.1, 0.15, 1.0, 8.0):
        before = old.calibrate_sigma_prirfed(eps, DELTA, 100, 5, 500, **kw).sigma if old is not None else float("nan")
        after = {a: cal.calibrate_sigma_prirfed(eps, DELTA, 100, 5, 500, accountant=a, **kw).sigma for a in ("rdp", "pld", "best")}
        r = privacy_report(full_run(after["best"]), DELTA)
        t, _ = best_ms(lambda: cal.calibrate_sigma_prirfed(eps, DELTA, 100, 5, 500, accountant="pld", **kw), repeat=5)
        print(f"| {eps} | {before:.4f} | {after['rdp']:.4f} | {after['pld']:.4f} | {after['best']:.4f} | {after['best'] / before:.3f} | "
              f"[{r.lower:.4f}, {r.upper:.4f}] | {t:.1f} |")


def inverse(n=400, seed=7):
    """PrivacyCurve.epsilon on the exact Gaussian curve against the 50-digit root (mpmath bisection)
    on ``n`` random (mu, delta): mu log-uniform in [0.01, 30], delta in [1e-12, 0.1]. Prints the
    error in relative terms and in ulps of the root, split at mu = 0.05, and the mean number of
    evaluations of the curve per inversion (cases with eps = 0 are left out)."""
    import numpy as np

    from prirfed.reference.accounting import mp as mpx

    rng = np.random.default_rng(seed)
    cases = [(float(10 ** rng.uniform(-2, 1.5)), float(10 ** rng.uniform(-12, -1))) for _ in range(n)]
    rows, evals = [], []
    for mu, d in cases:
        count = [0]

        def curve(e, mu=mu, count=count):
            count[0] += 1
            return pld.gaussian_delta(e, mu)

        got = pld.PrivacyCurve(curve).epsilon(d)
        if got == 0.0:
            continue
        truth = float(mpx.gaussian_exact_epsilon(d, mu))
        rows.append((mu, (got - truth) / truth, (got - truth) / np.spacing(truth)))
        evals.append(count[0])
    print("| mu | cases | relative error (min, max) | ulps of the root (min, max) |")
    print("| --- | ---: | --- | --- |")
    for name, keep in (("[0.01, 0.05)", lambda m: m < 0.05), ("[0.05, 30]", lambda m: m >= 0.05)):
        sel = [r for r in rows if keep(r[0])]
        print(f"| {name} | {len(sel)} | {min(r[1] for r in sel):.2e}, {max(r[1] for r in sel):.2e} | "
              f"{min(r[2] for r in sel):.0f}, {max(r[2] for r in sel):.0f} |")
    print(f"\n{len(rows)} inversions (of {n}; the rest have eps = 0), {np.mean(evals):.1f} curve evaluations each on average")


def fft():
    """The FFT rounding allowance with and without the extended-precision pass (pld.FFT_ESCALATE): for
    Poisson-subsampled Gaussian runs (add/remove), the largest slack of the upper and lower PLDs, eps
    at four deltas (upper, and lower at 1e-10), the RDP accountant's eps at 1e-10, and the time of one
    accountant (compose and both results). "float64 only" sets the threshold to infinity."""
    from prirfed.reference.accounting.events import ADD_REMOVE, Gaussian, PoissonSampled, SelfComposed

    print("| q | z | T | FFT | slack (upper, lower) | eps 1e-5 | eps 1e-8 | eps 1e-9 | eps 1e-10 | lower 1e-10 | RDP 1e-10 | ms |")
    print("| --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    keep = pld.FFT_ESCALATE
    try:
        for q, z, T in ((0.01, 1 / 3, 20), (0.01, 0.3, 100), (0.1, 0.5, 20), (0.01, 1.0, 1000)):
            ev = SelfComposed(PoissonSampled(q, Gaussian(z, ADD_REMOVE)), T)
            r = rdp.RdpAccountant(relation=ADD_REMOVE).compose(ev).get_epsilon(1e-10)
            for name, thr in (("float64 only", math.inf), ("escalating", keep)):
                pld.FFT_ESCALATE = thr
                t0 = time.perf_counter()
                acc = pld.PldAccountant(relation=ADD_REMOVE).compose(ev)
                up = [acc.get_epsilon(d) for d in (1e-5, 1e-8, 1e-9, 1e-10)]
                lo = acc.get_epsilon_lower(1e-10)
                ms = (time.perf_counter() - t0) * 1e3
                sl = [max(d.slack for p in acc._result(lower) if isinstance(p, pld.PldPair) for d in (p.fwd, p.rev) if d is not None)
                      for lower in (False, True)]
                print(f"| {q} | {z:.3g} | {T} | {name} | {sl[0]:.2g}, {sl[1]:.2g} | " + " | ".join(f"{e:.4f}" for e in up)
                      + f" | {lo:.4f} | {r:.4f} | {ms:.0f} |")
    finally:
        pld.FFT_ESCALATE = keep


def orders(runs: int = 1000, seed: int = 1):
    """The RDP accountant's order search against brute force: seeded random runs of the event kinds
    whose eps is not unimodal in the order (sampling without replacement, which switches bounds at
    WBK19_MAX_ORDER = 256; DP-RSVRG steps, whose triangle bound kinks at half-integer orders; PriRFed
    runs of them and of DP-RSGD), each at a random delta. Brute force: eps at every integer order from
    65 to 1024 (to 512 for the DP-RSVRG and DP-RSGD kinds) and every 50th (40th) canonical order below
    64, each composed in one batch. A miss is an accountant eps above the brute-force minimum (by more
    than 1e-12 relative); the brute force samples below 64 only coarsely, so it can miss on the other
    side, never report a false miss."""
    import numpy as np

    from prirfed.reference.accounting.events import Gaussian, SampledWithoutReplacement, SelfComposed
    from prirfed.reference.accounting.prirfed_accountant import dp_rsgd_event, dp_rsvrg_event, prirfed_event

    def brute(ev, delta, step, top):
        low = [rdp.canonical_order(k) for k in range(0, rdp.canonical_index(64.0, up=False) + 1, step)]
        o = np.concatenate([low, np.arange(65.0, top + 1.0)])
        r = rdp.RdpAccountant(orders=o).compose(ev).rdp_curve
        e = np.maximum(r + np.log1p(-1 / o) - (math.log(delta) + np.log(o)) / (o - 1), 0.0)
        return float(e.min()), float(o[int(np.argmin(e))])

    print("| kind | runs | misses | worst miss (relative) | best orders above 256 (brute force) | s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for kind in ("without replacement", "DP-RSVRG / PriRFed"):
        rng = np.random.default_rng(seed)
        t0, misses, worst, above = time.perf_counter(), 0, 0.0, 0
        for i in range(runs):
            if kind == "without replacement":
                N = int(rng.integers(100, 5000))
                m = int(rng.integers(1, max(2, N // 10)))
                z = float(np.exp(rng.uniform(math.log(5), math.log(500))))
                ev = SelfComposed(SampledWithoutReplacement(N, m, Gaussian(z)), int(rng.integers(1, 50)))
                step, top = 50, 1024
            else:
                sig, N_i = float(np.exp(rng.uniform(math.log(0.3), math.log(30)))), int(rng.integers(20, 2000))
                if i % 3 == 0:
                    ev = dp_rsvrg_event(sig, 1.0, float(rng.uniform(0.2, 3)), N_i, int(rng.integers(1, 50)), int(rng.integers(1, 6)))
                elif i % 3 == 1:
                    ev = prirfed_event(dp_rsvrg_event(sig, 1.0, 1.0, N_i, int(rng.integers(1, 50)), int(rng.integers(1, 4))),
                                       int(rng.integers(2, 50)), 1, int(rng.integers(1, 200)))
                else:
                    ev = prirfed_event(dp_rsgd_event(sig, 1.0, int(rng.integers(1, N_i)), N_i, int(rng.integers(1, 10))),
                                       int(rng.integers(2, 50)), 1, int(rng.integers(1, 200)))
                step, top = 40, 512
            delta = float(10 ** rng.uniform(-12, -3))
            got = rdp.RdpAccountant().compose(ev).get_epsilon(delta)
            best, at = brute(ev, delta, step, top)
            above += at > 256
            if got > best * (1 + 1e-12):
                misses += 1
                worst = max(worst, got / best - 1)
        print(f"| {kind} | {runs} | {misses} | {worst:.2g} | {above} | {time.perf_counter() - t0:.0f} |")


def search():
    """The RDP accountant's order search alone: eps, best order and the time of
    ``get_epsilon_and_order`` (best and median of 5, after one warm call; the events composed once)
    on twelve events, from a Gaussian whose best order is near 1 to runs whose best order is far above
    the default grid's top 1024 (where the search goes on to MAX_ORDER)."""
    from prirfed.reference.accounting.events import (ADD_REMOVE, Gaussian, PoissonSampled, SampledWithoutReplacement,
                                                      SelfComposed)
    from prirfed.reference.accounting.prirfed_accountant import dp_rsgd_event, dp_rsvrg_event, prirfed_event

    cases = [
        ("Gaussian z = 1", None, Gaussian(1.0), 1e-5, "improved"),
        ("Gaussian z = 1e-4 (classical; best order below 1.001)", None, Gaussian(1e-4), 0.5, "classical"),
        ("Gaussian z = 1e4 (best order above 1024)", None, Gaussian(1e4), 1e-5, "improved"),
        ("Poisson q = 0.01, z = 1, T = 100", ADD_REMOVE, SelfComposed(PoissonSampled(0.01, Gaussian(1.0, ADD_REMOVE)), 100), 1e-6, "improved"),
        ("Poisson q = 0.1, z = 1, T = 20", ADD_REMOVE, SelfComposed(PoissonSampled(0.1, Gaussian(1.0, ADD_REMOVE)), 20), 1e-5, "improved"),
        ("Poisson q = 0.001, z = 300, T = 100 (best order above 1024)", ADD_REMOVE,
         SelfComposed(PoissonSampled(0.001, Gaussian(300.0, ADD_REMOVE)), 100), 1e-6, "improved"),
        ("without replacement 10 of 1000, z = 5, T = 50", None, SelfComposed(SampledWithoutReplacement(1000, 10, Gaussian(5.0)), 50), 1e-6, "improved"),
        ("without replacement 250 of 500, z = 50, T = 50", None, SelfComposed(SampledWithoutReplacement(500, 250, Gaussian(50.0)), 50), 1e-6, "improved"),
        ("DP-RSVRG sigma = 0.5, N_i = 200, m = 10, K = 3", None, dp_rsvrg_event(0.5, 1.0, 1.0, 200, 10, 3), 1e-6, "improved"),
        ("PriRFed DP-RSGD sigma = 0.5 (b = 20 of 200, K = 5), N = 10, T = 50", None,
         prirfed_event(dp_rsgd_event(0.5, 1.0, 20, 200, 5), 10, 1, 50), 1e-6, "improved"),
        ("PriRFed DP-RSVRG sigma = 0.5 (m = 5, K = 2), N = 10, T = 50", None,
         prirfed_event(dp_rsvrg_event(0.5, 1.0, 1.0, 200, 5, 2), 10, 1, 50), 1e-8, "improved"),
        ("PriRFed DP-RSGD sigma = 0.126 (b = 60 of 600, K = 3), N = 100, s = 5, T = 500", None, full_run(0.126), DELTA, "improved"),
    ]
    count = [0]
    curve_at = rdp.RdpAccountant._curve_at

    def counting(self, a):  # the orders at which the search evaluates the composed RDP
        count[0] += len(a)
        return curve_at(self, a)

    print("| event | delta | eps | order | orders evaluated | best (ms) | median (ms) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, rel, ev, d, method in cases:
        acc = (rdp.RdpAccountant(relation=rel) if rel else rdp.RdpAccountant()).compose(ev)
        rdp.RdpAccountant._curve_at = counting
        try:
            count[0] = 0
            eps, order = acc.get_epsilon_and_order(d, method)
        finally:
            rdp.RdpAccountant._curve_at = curve_at
        b, m = best_ms(lambda: acc.get_epsilon_and_order(d, method), repeat=5)
        print(f"| {name} | {d:g} | {eps:.6g} | {order:.8g} | {count[0]} | {b:.2f} | {m:.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--section", choices=("timing", "tightness", "calibration", "inverse", "fft", "orders", "search", "all"), default="all")
    ap.add_argument("--runs", type=int, default=1000, help="random runs of each kind (section orders)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the random runs (section orders)")
    args = ap.parse_args()
    import numpy
    import scipy

    print(f"Python {platform.python_version()}, {platform.machine()}, NumPy {numpy.__version__}, SciPy {scipy.__version__}\n")
    if args.section in ("timing", "all"):
        print("### Timings\n")
        timing()
        print()
    if args.section in ("tightness", "all"):
        tightness()
        print()
    if args.section in ("calibration", "all"):
        print("### Calibrated sigma before and after\n")
        calibration()
        print()
    if args.section in ("inverse", "all"):
        print("### Inverting the exact Gaussian curve (PrivacyCurve.epsilon) against 50 digits\n")
        inverse()
    if args.section in ("fft", "all"):
        print("\n### The FFT rounding allowance, float64 only and escalating to extended precision\n")
        fft()
    if args.section in ("orders", "all"):
        print(f"\n### The RDP order search against brute force (seed {args.seed})\n")
        orders(args.runs, args.seed)
    if args.section in ("search", "all"):
        print(f"\n### The RDP order search: eps, order and time of get_epsilon_and_order (rdp from {rdp.__file__})\n")
        search()


if __name__ == "__main__":
    main()
