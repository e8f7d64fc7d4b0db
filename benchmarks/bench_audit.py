"""Benchmark: empirical privacy audits of whole trainer runs (prirfed.testing.audit) against the accountant.

Run:  python benchmarks/bench_audit.py [--quick] [--only NAME] [--plot PATH]
(prints Markdown; nothing is asserted; wall and CPU time per setting: calibration, runs and bounds). Verified backend, delta = 1e-5, confidence 0.95 (each
error rate bounded at 0.975). For every setting sigma is calibrated so that the accountant's
upper bound ("best") is the target eps; the audit reports both bounds computed from the same runs:
"gdp" (a lower bound on mu, rigorous against the accountant's mu-GDP claim, only where the event
is a composition of Gaussians) and "threshold" (assumption-free (eps, delta) bound), the
accountant's attainable lower bound (the eps of a pair a real mechanism matching the event
produces), and which side a gap comes from:

- audit/upper small and attainable/upper close to 1: the gap is the audit's (power: runs, the
  one-dimensional statistic, or the view, e.g. the server iterate sees a mixture over rounds);
- attainable/upper well below 1: the accountant's slack is at most that factor, the rest is open.

Issue 20 targets: full-batch DP-RSGD audit within 2x of the upper bound at eps in {1, 4}; a full
audit of one setting under 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np

from prirfed.reference.accounting.calibration import calibrate_sigma
from prirfed.reference.accounting.accountants import epsilon
from prirfed.testing import audit as A

DELTA = 1e-5
CONF = 0.95
TAU = 0.5

CANARIES = {"sphere": A.sphere_pca_canary, "spd": A.spd_frechet_canary, "hsp": A.hsp_canary}


def settings(quick: bool):
    """(name, canary, trainer factory sigma -> Trainer, target eps, runs per dataset)."""
    n_big, n = (4000, 2000) if quick else (25000, 10000)
    one = (10,)
    two = (10, 10)
    four = (10, 10, 10, 10)
    S = []
    for eps in (1.0, 4.0):
        S.append((f"dp_rsgd_full_K1_eps{eps:g}", "sphere", one, eps, n_big,
                  lambda s: A.dp_rsgd_trainer("verified", K=1, b=10, sigma=s, tau=TAU, alpha=0.02)))
        S.append((f"dp_rsgd_full_K4_eps{eps:g}", "sphere", one, eps, n_big,
                  lambda s: A.dp_rsgd_trainer("verified", K=4, b=10, sigma=s, tau=TAU, alpha=0.02)))
    for c in ("spd", "hsp"):
        S.append((f"dp_rsgd_full_K4_{c}_eps4", c, one, 4.0, n,
                  lambda s: A.dp_rsgd_trainer("verified", K=4, b=10, sigma=s, tau=TAU, alpha=0.02)))
    S.append(("dp_rsgd_b5_K4_eps4", "sphere", one, 4.0, n,
              lambda s: A.dp_rsgd_trainer("verified", K=4, b=5, sigma=s, tau=TAU, alpha=0.02)))
    S.append(("dp_rsvrg_K1_m5_eps4", "sphere", one, 4.0, n,
              lambda s: A.dp_rsvrg_trainer("verified", K=1, m=5, sigma=s, tau=TAU, alpha=0.02)))
    S.append(("dp_rgd_full_T4_eps4", "sphere", two, 4.0, n,
              lambda s: A.dp_rgd_trainer("verified", T=4, b=20, sigma=s, tau=TAU, alpha=0.02)))
    S.append(("prirfed_rsgd_s=N_T3_eps4", "sphere", two, 4.0, n,
              lambda s: A.prirfed_trainer("verified", T=3, s=2, local="dp_rsgd", K=1, sigma=s, tau=TAU,
                                          alpha=0.02, others_sigma=1e-3 * TAU)))
    S.append(("prirfed_rsgd_s=N/2_T3_eps4", "sphere", two, 4.0, n,
              lambda s: A.prirfed_trainer("verified", T=3, s=1, local="dp_rsgd", K=1, sigma=s, tau=TAU,
                                          alpha=0.02, others_sigma=1e-3 * TAU)))
    S.append(("prirfed_rsgd_s=N/4_T3_eps4", "sphere", four, 4.0, n,
              lambda s: A.prirfed_trainer("verified", T=3, s=1, local="dp_rsgd", K=1, sigma=s, tau=TAU,
                                          alpha=0.02, others_sigma=1e-3 * TAU)))
    S.append(("prirfed_rsgd_s=N_T3_others_sigma_eps4", "sphere", two, 4.0, n,
              lambda s: A.prirfed_trainer("verified", T=3, s=2, local="dp_rsgd", K=1, sigma=s, tau=TAU,
                                          alpha=0.02)))
    S.append(("prirfed_rsvrg_s=N/2_T2_eps4", "sphere", two, 4.0, n,
              lambda s: A.prirfed_trainer("verified", T=2, s=1, local="dp_rsvrg", K=1, m=3, sigma=s, tau=TAU,
                                          alpha=0.02, others_sigma=1e-3 * TAU)))
    return S


def run(quick: bool, only: str | None):
    rows = []
    for name, cname, sizes, eps, n, make in settings(quick):
        if only and only not in name:
            continue
        canary = CANARIES[cname](TAU, sizes=sizes)
        t0, c0 = time.perf_counter(), time.process_time()
        sigma = calibrate_sigma(lambda s: epsilon(make(s).event(canary.datasets[0]), DELTA), eps, sigma0=1.0,
                                rtol=1e-6).sigma
        tr = make(sigma)
        event = tr.event(canary.datasets[0])
        s0, s1 = A.run_statistics(tr, canary, n, seed=2026)
        mu_claim = A.gdp_claim(event)
        thr = A.best_test_bound(s0, s1, DELTA, CONF, "threshold")
        gdp = A.best_test_bound(s0, s1, DELTA, CONF, "gdp") if mu_claim is not None else None
        upper = epsilon(event, DELTA)
        from prirfed.reference.accounting.accountants import lower_epsilon

        attain = lower_epsilon(event, DELTA)
        rows.append(dict(name=name, canary=canary.name, sizes=sizes, n=n, sigma=sigma, upper=upper, attain=attain,
                         thr=thr.eps_lower, gdp=None if gdp is None else gdp.eps_lower,
                         mu_lb=None if gdp is None else gdp.mu_lower, mu_claim=mu_claim,
                         shift=(float(np.mean(s1) - np.mean(s0)) / float(np.std(np.concatenate([s0 - s0.mean(), s1 - s1.mean()])))),
                         t=time.perf_counter() - t0, cpu=time.process_time() - c0))
        print_row(rows[-1], header=len(rows) == 1)
    return rows


def fmt(x, p=3):
    return "-" if x is None else f"{x:.{p}g}"


def print_row(r, header):
    if header:
        print("| setting | canary (agents x N_i) | runs/dataset | sigma | accountant upper | attainable lower | "
              "audit gdp | audit threshold | best audit / upper | attainable / upper | mu: audit lb / claimed | "
              "measured shift/std | wall (s) | CPU (s) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    best = max(r["thr"], r["gdp"] or 0.0)
    mu = "-" if r["mu_lb"] is None else f"{r['mu_lb']:.3f} / {r['mu_claim']:.3f}"
    print(f"| {r['name']} | {r['canary']} ({len(r['sizes'])} x {r['sizes'][0]}) | {r['n']} | {r['sigma']:.4g} | "
          f"{r['upper']:.3f} | {r['attain']:.3f} | {fmt(r['gdp'])} | {r['thr']:.3f} | {best / r['upper']:.2f} | "
          f"{r['attain'] / r['upper']:.2f} | {mu} | {r['shift']:.3f} | {r['t']:.1f} | {r['cpu']:.1f} |", flush=True)


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.42 * len(rows) + 1.2))
    y = np.arange(len(rows))[::-1]
    ax.barh(y + 0.2, [r["attain"] / r["upper"] for r in rows], height=0.38, color="#bbbbbb",
            label="accountant's attainable lower bound / upper bound")
    ax.barh(y - 0.2, [max(r["thr"], r["gdp"] or 0.0) / r["upper"] for r in rows], height=0.38, color="#1f77b4",
            label="audit lower bound (95%) / upper bound")
    ax.axvline(1.0, color="k", lw=1)
    ax.axvline(0.5, color="k", lw=0.8, ls=":")
    ax.set_yticks(y)
    ax.set_yticklabels([r["name"] for r in rows], fontsize=8)
    ax.set_xlim(0, 1.1)
    ax.set_xlabel("fraction of the accountant's upper bound on eps (delta = 1e-5)")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("Whole-run audits (verified backend): empirical eps lower bound vs accountant", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs (4000 / 2000 per dataset)")
    ap.add_argument("--only", default=None, help="run only the settings whose name contains this")
    ap.add_argument("--plot", default=None, help="write the bar plot to this PNG path")
    a = ap.parse_args()
    print(f"# Whole-run privacy audits ({platform.machine()}, Python {platform.python_version()}, "
          f"delta = {DELTA:g}, confidence {CONF}, tau = {TAU})\n")
    t0 = time.perf_counter()
    rows = run(a.quick, a.only)
    print(f"\nTotal {time.perf_counter() - t0:.0f} s (compile excluded only if the loops were cached).")
    if a.plot:
        plot(rows, a.plot)
        print(f"Plot: {a.plot}")


if __name__ == "__main__":
    main()
