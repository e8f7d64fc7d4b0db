"""What 000's Figures 3 and 4 share (PriRFed-DP-RSGD vs PriRFed-DP-RSVRG, Frechet mean on SPD):
the settings of 000 Section 6.2, their checks, one test (:func:`run_spd_trial`) and the report
(:func:`spd_report`: CSVs, plot, the paper's claims). The data differ: synthetic Wishart
(``prirfed_fig3``) or covariance descriptors (``prirfed_fig4``).
Proofs note: ``proofs_notes/experiment_prirfed_fig3.md``.
"""

from __future__ import annotations

import numpy as np

from prirfed.backend import trainers
from prirfed.reference.problems.spd_frechet import SPDFrechetMean

from . import validate as v
from .core import Check, mean_and_spread, write_csv
from .plots import band, finish, new_figure
from .privacy import check_accountant, local_sigma, paper_claim_check, privacy_of_run, worst_privacy
from .verdicts import chain_both, describe, less

__all__ = ["ALGORITHMS", "LABELS", "spd_config", "validate_common", "run_spd_trial", "spd_report"]

ALGORITHMS = ("dp_rsgd", "dp_rsvrg")
LABELS = {"dp_rsgd": "PriRFed-DP-RSGD", "dp_rsvrg": "PriRFed-DP-RSVRG (legend 'DP-SRSGD')"}


def spd_config(mode: str, seed: int, backend: str, **sizes) -> dict:
    """000 Section 6.2's settings (eps = 0.15, delta = 1e-4, s_t = 1, K = 3, m = 10,
    tau = tau_0 = tau_1 = 1, alpha_t = 0.05; our b_i = N_i and delta_hat = 1e-3) and the sizes."""
    return dict(mode=mode, seed=seed, backend=backend, calibrate=False, accountant="best", eps=0.15, delta=1e-4,
                delta_hat=1e-3, s=1, K=3, m=10, tau=1.0, alpha=0.05, batch="full (b_i = N_i; our choice)",
                algorithms=list(ALGORITHMS), **sizes)


def validate_common(where: str, config: dict, n_available: int | None = None) -> None:
    """Check the settings shared by Figures 3 and 4 (ValueError naming the key and the value)."""
    for key, low in (("T", 1), ("repeats", 1), ("record_every", 1), ("K", 1), ("m", 1), ("s", 1)):
        v.check_int(where, key, config[key], low)
    for key in ("eps", "tau", "alpha"):
        v.check_positive(where, key, config[key])
    for key in ("delta", "delta_hat"):
        v.check_probability(where, key, config[key])
    v.check_bool(where, "calibrate", config["calibrate"])
    check_accountant(where, config)
    v.check_names(where, "algorithms", config["algorithms"], ALGORITHMS)
    v.check_scenarios(where, config["scenarios"], config["s"], n_available)


def _sigma(config: dict, alg: str, N_i: int) -> float:
    """Noise std of one agent (b_i = N_i): :func:`prirfed.experiments.privacy.local_sigma`."""
    return local_sigma(alg, config["eps"], config["delta"], config["K"], config["tau"], N_i, N_i, config["m"],
                       config["calibrate"], config["accountant"])


def run_spd_trial(config: dict, seq, samples_fn, where: str) -> dict:
    """One test of Figure 3 or 4: ``samples_fn(rng)`` gives the pooled SPD samples (n, k, k); every
    scenario splits them in order into N agents of N_i; the four runs share x^(0). A run whose
    iterates leave the double-precision SPD matrices (too much noise for the step size) raises a
    ValueError naming the run and its sigma."""
    scen = config["scenarios"]
    algs = config["algorithms"]
    data_seq, x0_seq, *run_seqs = seq.spawn(2 + len(scen) * len(algs))
    X = samples_fn(np.random.default_rng(data_seq))
    prirfed = trainers(config["backend"]).prirfed
    x0 = None
    out = {}
    it = iter(run_seqs)
    for N, N_i in scen:
        problem = SPDFrechetMean([X[i * N_i:(i + 1) * N_i] for i in range(N)])
        if x0 is None:
            x0 = problem.manifold.random_point(np.random.default_rng(x0_seq))
        x_star = problem.x_star  # Karcher flow to ||grad f|| <= 1e-12, cached: the trainers' history reuses it
        f_star = float(problem.f(x_star))
        gnorm = float(problem.manifold.norm(x_star, problem.grad(x_star)))
        for alg in algs:
            sigma = _sigma(config, alg, N_i)
            try:
                res = prirfed(problem, x0, config["T"], config["s"], config["alpha"], np.random.default_rng(next(it)),
                              local=alg, K=config["K"], b=N_i, m=config["m"], sigma=sigma, tau=config["tau"],
                              record_every=config["record_every"])
            except ValueError as exc:
                if not any(k in str(exc) for k in ("positive definite", "non-finite", "floating point")):
                    raise
                raise ValueError(
                    f"{where}: the {alg} run of scenario (N, N_i) = ({N}, {N_i}) "
                    f"with sigma = {sigma:.4g} left the SPD matrices representable in double precision (noise steps "
                    f"of length ~ alpha sigma sqrt(dim) = {config['alpha'] * sigma * (X.shape[1] * (X.shape[1] + 1) / 2) ** 0.5:.3g} "
                    f"per inner iteration); use a larger N_i, a smaller alpha or drop this algorithm ({exc})") from None
            h = res.history
            priv = privacy_of_run(res.event, config["eps"], config["delta"], N, config["s"], config["T"],
                                  config["delta_hat"], config["K"], N_i, N_i, sigma, config["tau"], alg, config["m"],
                                  config["accountant"])
            out[f"{N}x{N_i}/{alg}"] = dict(rounds=[int(r) for r in h.rounds], f=[float(v) for v in h.f],
                                           excess=[float(v) - f_star for v in h.f], sigma=sigma, **priv)
        out[f"{N}x{N_i}/f_star"] = f_star
        out[f"{N}x{N_i}/optimum_grad_norm"] = gnorm
    return dict(runs=out, k=int(X.shape[1]))


def spd_report(config: dict, results: list, out, stem: str, title: str) -> list:
    """CSVs (curves, privacy), plot and the checks of 000 Section 6.2 (shared by Figures 3 and 4)."""
    algs = config["algorithms"]
    scen = [tuple(p) for p in config["scenarios"]]
    curve_rows, priv_rows, summary = [], [], {}
    for N, N_i in scen:
        f_star = mean_and_spread([r["runs"][f"{N}x{N_i}/f_star"] for r in results])[0]
        for alg in algs:
            key = f"{N}x{N_i}/{alg}"
            rounds = results[0]["runs"][key]["rounds"]
            ex = np.array([r["runs"][key]["excess"] for r in results])
            fv = np.array([r["runs"][key]["f"] for r in results])
            for k, t in enumerate(rounds):
                e_m, e_s = mean_and_spread(ex[:, k])
                f_m, f_s = mean_and_spread(fv[:, k])
                curve_rows.append(dict(N=N, N_i=N_i, algorithm=alg, round=t, excess_mean=e_m, excess_std=e_s,
                                       f_mean=f_m, f_std=f_s, f_star_mean=f_star))
            mean_curve = ex.mean(axis=0)
            per_trial_auc = ex[:, 1:].mean(axis=1) if len(rounds) > 1 else ex[:, -1]
            summary[(N, N_i, alg)] = dict(final=float(mean_curve[-1]), auc=float(per_trial_auc.mean()),
                                          finals=ex[:, -1], aucs=per_trial_auc)
            rs = [r["runs"][key] for r in results]
            priv_rows.append(dict(
                N=N, N_i=N_i, algorithm=alg, eps_local=float(config["eps"]), delta_local=float(config["delta"]),
                sigma_mean=mean_and_spread([q["sigma"] for q in rs])[0], **worst_privacy(rs)))
    cols = ["N", "N_i", "algorithm", "round", "excess_mean", "excess_std", "f_mean", "f_std", "f_star_mean"]
    write_csv(out / "curves.csv", cols, curve_rows)
    write_csv(out / "privacy.csv", ["N", "N_i", "algorithm", "eps_local", "delta_local", "sigma_mean", "eps_local_rigorous",
                                    "eps_paper", "delta_paper", "eps_rigorous_lower", "eps_rigorous"], priv_rows)
    _plot(out, config, curve_rows, stem, title)

    checks = []
    if set(algs) == set(ALGORITHMS):
        for N, N_i in scen:
            a, b = summary[(N, N_i, "dp_rsgd")], summary[(N, N_i, "dp_rsvrg")]
            shown, links = chain_both(less(b["finals"], a["finals"]), less(b["aucs"], a["aucs"]))
            checks.append(Check(
                f"(N, N_i) = ({N}, {N_i}): PriRFed-DP-RSVRG outperforms PriRFed-DP-RSGD (000 section 6.2)",
                shown,
                f"mean excess risk f(x^(T)) - f(x*): DP-RSVRG {b['final']:.3g} vs DP-RSGD {a['final']:.3g}; "
                f"averaged over the recorded rounds t >= 1: {b['auc']:.3g} vs {a['auc']:.3g}; paired differences over "
                f"{len(results)} trials (final, average): {describe(links)}"))
        if len(scen) >= 2:
            lo = min(scen, key=lambda p: p[1])
            hi = max(scen, key=lambda p: p[1])
            ratio = {p: summary[(*p, "dp_rsgd")]["auc"] / summary[(*p, "dp_rsvrg")]["auc"] for p in (lo, hi)}
            checks.append(Check(
                "for a smaller N_i (more noise) PriRFed-DP-RSGD is notably slower than PriRFed-DP-RSVRG (000 section 6.2)",
                ratio[lo] > 1 and ratio[lo] > ratio[hi],
                f"ratio DP-RSGD / DP-RSVRG of the excess risk averaged over the recorded rounds: {ratio[lo]:.3g} at "
                f"N_i = {lo[1]} vs {ratio[hi]:.3g} at N_i = {hi[1]}"))
    checks.append(paper_claim_check(
        priv_rows, lambda p: f"({p['N']}, {p['N_i']}, {p['algorithm']}): {p['eps_rigorous']:.3g} vs {p['eps_paper']:.3g}",
        "; rigorous eps of one agent's local training at the local delta: "
        + ", ".join(f"{p['eps_local_rigorous']:.3g}" for p in priv_rows) + f" (claimed {config['eps']:g})",
        "rigorous eps vs paper eps' at the paper's delta' per (N, N_i, trainer): "))
    return checks


def _plot(out, config, curve_rows, stem, title):
    scen = [tuple(p) for p in config["scenarios"]]
    fig, axes = new_figure(2, len(scen), 4.4 * len(scen), 6.4)
    for j, (N, N_i) in enumerate(scen):
        f_star = None
        for alg in config["algorithms"]:
            rows = [r for r in curve_rows if r["N"] == N and r["N_i"] == N_i and r["algorithm"] == alg]
            t = [r["round"] for r in rows]
            f_star = rows[0]["f_star_mean"]
            for i, key in enumerate(("f", "excess")):
                m = np.array([r[f"{key}_mean"] for r in rows])
                # band mean +- std; on the log axis its lower edge is clipped at mean / 10
                band(axes[i, j], t, m, [r[f"{key}_std"] for r in rows], LABELS[alg], m / 10 if key == "excess" else None,
                     marker=".")
        axes[0, j].axhline(f_star, color="k", ls="--", label="True Value (steepest descent)")
        axes[0, j].set_ylabel("cost f(x^(t))")
        axes[1, j].set_yscale("log")
        axes[1, j].set_ylabel("excess risk f(x^(t)) - f(x*)")
        for i in range(2):
            axes[i, j].set_xlabel("iteration t")
        axes[0, j].set_title(f"{title}: N = {N}, N_i = {N_i}")
        axes[0, j].legend(fontsize=7)
    finish(fig, out, stem)
