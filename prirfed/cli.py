"""The ``prirfed`` command line (console script ``prirfed = prirfed.cli:main``).

Subcommands live in :data:`SUBCOMMANDS` (name -> (help, add_arguments, run)); other parts of the
project add theirs (``reproduce``, ``run``, ``list``) by registering an entry there.

- ``prirfed privacy-table [--format text|csv|markdown] [--accountant best|pld]``: Table 1 of Huang et al. (2024)
  (Theorem 4.2 as printed) beside the rigorous eps' for the same settings (black-box (0.15, 1e-4)
  local trainer, same delta') and an attainable lower bound.
- ``prirfed account [--accountant best|pld|rdp]``: eps of a noise std for DP-RSGD / DP-RSVRG,
  alone or inside a PriRFed run, or the sigma for a target eps; prints ``[lower, upper]``
  (attainable lower bound, accountant's upper bound) and their ratio.
- ``prirfed list``: the experiments of :mod:`prirfed.experiments`, one line each.
- ``prirfed reproduce EXPERIMENT [--quick|--tiny] [--out DIR] [--seed S] [--set KEY=VALUE ...]
  [--workers N | --dask-scheduler ADDRESS] [--resume | --overwrite] [--backend reference|verified]
  [--calibrate] [--no-progress]``: run one experiment into DIR (default ``prirfed-results/EXPERIMENT``):
  config.json, CSVs, PNG/PDF plots, summary.md (:func:`prirfed.experiments.framework.reproduce`).
  ``--set`` replaces a setting of the generated configuration (VALUE read as JSON).
- ``prirfed reproduce all [--quick|--tiny] [--out DIR] ...``: every experiment into DIR/NAME
  (default DIR ``prirfed-results``) and DIR/index.md (claims shown / total, link to each
  summary.md, time); a failing experiment is recorded there and the others still run; exit code
  1 if any failed (:func:`prirfed.experiments.framework.reproduce_all`). The README's main job is
  ``prirfed reproduce all --quick --out outputs``.
- ``prirfed run CONFIG.toml [--out DIR] [--workers N | --dask-scheduler ADDRESS] [--resume | --overwrite]
  [--backend reference|verified] [--calibrate] [--no-progress]``: any problem / data / trainer /
  privacy setting from a TOML file (schema: :mod:`prirfed.experiments.custom`; examples in
  ``examples/``), same outputs as ``reproduce`` (default DIR ``prirfed-results/run-CONFIGSTEM``).

- ``prirfed warmup [--geometry NAME ...]``: compile (or load from Numba's cache) the fused verified
  loops of the given geometries ahead of time (default: every geometry; names: sphere,
  sphere-retraction, spd, lorentz, stiefel, stiefel-retraction), saying on stderr what it compiles.

Common options: ``--workers N`` runs the trials in N processes; ``--dask-scheduler ADDRESS`` on
a Dask cluster (``pip install 'prirfed[dask]'``); results are identical for every executor (trial
i's seed is child i of ``SeedSequence(seed).spawn(n)``). ``--resume`` keeps the finished trials of
the same configuration in the output folder (Ctrl-C leaves them on disk; exit code 130).
``--overwrite`` lets a run use a non-empty output folder after moving its contents into the sibling
``OUT.old-TIMESTAMP`` (nothing is deleted); without ``--resume`` or ``--overwrite`` a non-empty
folder is refused, and a second run into a folder in use fails at once
(:mod:`prirfed.experiments.outputs`). ``--calibrate`` sets the configuration key ``calibrate``
(the noise std comes from the rigorous accountant at the stated eps); a non-private experiment
refuses it.

Every failure prints one line ``prirfed CMD: error: ...`` on stderr (:func:`describe_failure`) and
exits with code 2 for bad input (unknown experiment, bad ``--set``, bad TOML, a bad setting, an
output folder the run may not use, a damaged file under ``--resume``) or 1 for a runtime failure
(unwritable or full disk, a locked folder, a dead worker, out of memory, an unanticipated
exception). ``--debug`` (before or after the subcommand) or ``PRIRFED_DEBUG=1`` prints the
traceback first. Docs page: "Running experiments: output folders and errors" (docs/running.md).
"""

from __future__ import annotations

import argparse
import csv
import sys
import textwrap
from typing import Callable

from prirfed.papers import PAPERS, name_papers

__all__ = ["main", "SUBCOMMANDS", "privacy_table_rows"]

PRIVACY_TABLE_COLUMNS = ("N", "s", "rho", "T", "eps_paper", "delta_paper", "eps_rigorous", "eps_lower")


def privacy_table_rows(accountant: str = "best") -> list[dict]:
    """Rows of ``prirfed privacy-table``: Table 1 of Huang et al. (2024) and the sound eps' at the same delta'.

    ``eps_rigorous``: ``accountant="best"`` (default) is the exact optimal composition of the
    activated rounds for any (0.15, 1e-4)-DP local trainer (``blackbox_exact_epsilon``; nothing
    sound is smaller), ``"pld"`` the PLD accountant on the same event (an upper bound of it); RDP
    cannot bound an (eps, delta) trainer with delta > 0. ``eps_lower``: the attainable lower bound
    (the same activated Kairouz-Oh-Viswanath pair, optimistic grid).

    Parameters
    ----------
    accountant : str, optional
        ``"best"`` (default) or ``"pld"``.

    Returns
    -------
    list of dict
        One row per cell, keys ``N, s, rho, T, eps_paper, delta_paper, eps_rigorous, eps_lower``.

    Raises
    ------
    ValueError
        If ``accountant`` is unknown or names the RDP accountant (or an accountant object).
    """
    from prirfed.reference.accounting.accountants import resolve_accountant
    from prirfed.reference.accounting.events import Activation, EpsilonDelta, SelfComposed
    from prirfed.reference.accounting.paper import TABLE_1_DELTA, TABLE_1_EPS
    from prirfed.reference.accounting.pld import PldAccountant
    from prirfed.reference.accounting.prirfed_accountant import rigorous_table_1

    acc = resolve_accountant("prirfed privacy-table", accountant)
    if acc == "rdp" or not isinstance(acc, str):
        raise ValueError("prirfed privacy-table: --accountant must be best or pld (RDP has no finite bound for an (eps, delta) "
                         "local trainer with delta > 0)")
    rows = []
    for r in rigorous_table_1():
        ev = SelfComposed(Activation(r["rho"], EpsilonDelta(TABLE_1_EPS, TABLE_1_DELTA)), r["T"])
        pld = PldAccountant().compose(ev)
        upper = r["eps_exact"] if acc == "best" else pld.get_epsilon(r["delta_prime"])
        rows.append(dict(N=r["N"], s=r["s"], rho=r["rho"], T=r["T"], eps_paper=r["eps_prime"], delta_paper=r["delta_prime"],
                         eps_rigorous=upper, eps_lower=pld.get_epsilon_lower(r["delta_prime"])))
    return rows


def _fmt(x) -> str:
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def _accept_negative_numbers(p: argparse.ArgumentParser) -> None:
    """Let ``--delta -1e-5`` reach our validation (argparse takes ``-1e-5`` for an option otherwise)."""
    import re

    p._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|nan)$", re.IGNORECASE)


def _add_privacy_table(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "csv", "markdown"), default="text",
                   help="output format (csv prints full precision)")
    p.add_argument("--accountant", choices=("best", "pld", "rdp"), default="best",
                   help="best: exact optimal composition (default); pld: the PLD accountant (rdp cannot bound delta > 0)")


def _run_privacy_table(args, out) -> int:
    try:
        rows = privacy_table_rows(args.accountant)
    except ValueError as exc:
        msg = str(exc)
        prefix = "prirfed privacy-table: "
        raise ValueError(msg[len(prefix):] if msg.startswith(prefix) else msg) from None
    cols = PRIVACY_TABLE_COLUMNS
    if args.format == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([repr(r[c]) if isinstance(r[c], float) else r[c] for c in cols])
        return 0
    if args.format == "markdown":
        out.write("| " + " | ".join(cols) + " |\n")
        out.write("|" + "|".join("---:" for _ in cols) + "|\n")
        for r in rows:
            out.write("| " + " | ".join(_fmt(r[c]) for c in cols) + " |\n")
        return 0
    how = ("exact optimal eps'" if args.accountant == "best" else "the PLD accountant's eps' (an upper bound)")
    out.write(
        f"Table 1 of {PAPERS['000'].short} (Theorem 4.2 as printed; local training (eps, delta) = (0.15, 1e-4), delta_hat = 1e-3)\n"
        f"beside eps_rigorous: {how} at the same delta' for ANY (0.15, 1e-4)-DP local trainer\n"
        "(activation per round, parallel composition; see proofs_notes/accounting_theorem_4_2.md), and eps_lower:\n"
        "the eps' of a trainer that attains it (randomized response activated per round; optimistic grid).\n\n"
    )
    widths = [max(len(c), *(len(_fmt(r[c])) for r in rows)) for c in cols]
    out.write("  ".join(c.rjust(wd) for c, wd in zip(cols, widths)) + "\n")
    for r in rows:
        out.write("  ".join(_fmt(r[c]).rjust(wd) for c, wd in zip(cols, widths)) + "\n")
    return 0


def _add_account(p: argparse.ArgumentParser) -> None:
    _accept_negative_numbers(p)
    p.add_argument("--trainer", choices=("dp-rsgd", "dp-rsvrg"), required=True, help="the local trainer")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--sigma", type=float, help="noise std: print the eps it gives (this or --eps is required)")
    g.add_argument("--eps", type=float, help="target eps: print the sigma it needs (this or --sigma is required)")
    p.add_argument("--delta", type=float, required=True, help="delta of the (eps, delta) guarantee")
    p.add_argument("--K", type=int, required=True, help="local iterations (outer loops for DP-RSVRG)")
    p.add_argument("--N-i", dest="N_i", type=int, required=True, help="local dataset size (records of the agent)")
    p.add_argument("--tau", type=float, default=1.0, help="clip radius (DP-RSGD; DP-RSVRG's tau0 and tau1 unless given)")
    p.add_argument("--batch", type=int, help="DP-RSGD batch size b (default: N_i, the full batch)")
    p.add_argument("--m", type=int, help="DP-RSVRG inner steps (required with --trainer dp-rsvrg)")
    p.add_argument("--tau0", type=float, help="DP-RSVRG full-gradient clip radius (default: --tau)")
    p.add_argument("--tau1", type=float, help="DP-RSVRG per-sample clip radius (default: --tau)")
    p.add_argument("--N", type=int, help="PriRFed: number of agents; with --s and --T, account the whole run "
                                          "(default: none, the local trainer alone)")
    p.add_argument("--s", type=int, help="PriRFed: agents sampled per round (default: none)")
    p.add_argument("--T", type=int, help="PriRFed: rounds (default: none)")
    p.add_argument("--accountant", choices=("best", "pld", "rdp"), default="best",
                   help="best: smallest valid upper bound of PLD and RDP (default); pld; rdp")


def _run_account(args, out) -> int:
    """``prirfed account``; a ValueError's own ``prirfed account: `` prefix is dropped (main adds it)."""
    try:
        return _account(args, out)
    except ValueError as exc:
        msg = str(exc)
        prefix = "prirfed account: "
        raise ValueError(msg[len(prefix):] if msg.startswith(prefix) else msg) from None


#: largest ``--eps`` that ``prirfed account`` calibrates for
ACCOUNT_EPS_MAX = 100.0


def _account(args, out) -> int:
    from prirfed.reference.accounting import calibration as cal
    from prirfed.reference.accounting.accountants import privacy_report
    from prirfed.reference.accounting.events import check_delta, check_epsilon, check_int, check_positive
    from prirfed.reference.accounting.prirfed_accountant import dp_rsgd_event, dp_rsvrg_event, prirfed_event

    where = "prirfed account"
    delta = check_delta(where, args.delta, "--delta")
    K = check_int(where, "--K", args.K, 1)
    N_i = check_int(where, "--N-i", args.N_i, 1)
    tau = check_positive(where, "--tau", args.tau)
    if args.sigma is not None:
        check_positive(where, "--sigma", args.sigma)
    else:
        check_epsilon(where, args.eps, "--eps")
        if args.eps > ACCOUNT_EPS_MAX:
            raise ValueError(f"prirfed account: --eps = {args.eps:g} exceeds {ACCOUNT_EPS_MAX:g} (by {args.eps - ACCOUNT_EPS_MAX:g}): "
                             "such an eps is no privacy guarantee, and the accountants' bounds are not checked there "
                             "(calibrating took minutes, and at eps near 1300 the bounds contradict each other)")
    run = [args.N, args.s, args.T]
    if any(v is not None for v in run) and not all(v is not None for v in run):
        raise ValueError("prirfed account: give all of --N, --s, --T (or none)")
    if args.N is not None:
        N, s_, T = (check_int(where, f"--{n}", v, 1) for n, v in zip(("N", "s", "T"), run))
        if s_ > N:
            raise ValueError(f"prirfed account: --s = {s_} exceeds --N = {N} (by {s_ - N})")
    if args.trainer == "dp-rsgd":
        b = N_i if args.batch is None else check_int(where, "--batch", args.batch, 1)
        if b > N_i:
            raise ValueError(f"prirfed account: --batch = {b} exceeds --N-i = {N_i} (by {b - N_i})")
        make = lambda sg: dp_rsgd_event(sg, tau, b, N_i, K)  # noqa: E731
        what = f"DP-RSGD (K={K}, b={b}, N_i={N_i}, tau={tau:g})"
    else:
        if args.m is None:
            raise ValueError("prirfed account: --m is required for dp-rsvrg")
        m = check_int(where, "--m", args.m, 1)
        t0 = tau if args.tau0 is None else check_positive(where, "--tau0", args.tau0)
        t1 = tau if args.tau1 is None else check_positive(where, "--tau1", args.tau1)
        make = lambda sg: dp_rsvrg_event(sg, t0, t1, N_i, m, K)  # noqa: E731
        what = f"DP-RSVRG (m={m}, K={K}, N_i={N_i}, tau0={t0:g}, tau1={t1:g})"
    if args.N is not None:
        local = make
        make = lambda sg: prirfed_event(local(sg), N, s_, T)  # noqa: E731
        what = f"PriRFed (N={N}, s={s_}, T={T}) with {what}"
    acc = args.accountant
    if args.sigma is not None:
        sigma = args.sigma
        rep = privacy_report(make(sigma), delta, acc)
        out.write(f"{what}: sigma = {sigma:.6g} gives eps = {rep.upper:.6g} at delta = {delta:g} (accountant {acc}: {rep.accountant})\n")
    else:
        c = cal.calibrate_sigma(lambda sg: cal.epsilon_of_event(make(sg), delta, acc), args.eps, sigma0=1.0)
        sigma = c.sigma
        rep = privacy_report(make(sigma), delta, acc)
        out.write(
            f"{what}: eps = {args.eps:g} at delta = {delta:g} needs sigma = {sigma:.6g} "
            f"(bracket [{c.bracket[0]:.8g}, {c.bracket[1]:.8g}], rtol {c.rtol:.1e}; accountant {acc}: {rep.accountant})\n"
        )
    extra = "".join(f", {n} {v:.6g}" for n, v in (("pld", rep.pld), ("rdp", rep.rdp)) if v is not None)
    out.write(f"  eps in [{rep.lower:.6g}, {rep.upper:.6g}] at sigma = {sigma:.6g}: attainable lower bound {rep.lower:.6g}, "
              f"upper bound {rep.upper:.6g}, upper/lower = {rep.ratio:.4g} (upper bounds{extra})\n")
    return 0


def _add_list(p: argparse.ArgumentParser) -> None:
    pass


def _run_list(args, out) -> int:
    from prirfed.experiments import EXPERIMENTS

    width = max(len(n) for n in EXPERIMENTS)
    for name, exp in EXPERIMENTS.items():
        out.write(f"{name.ljust(width)}  {name_papers(exp.description)} [{name_papers(exp.source)}]\n")
    return 0


def _add_common_run_options(p: argparse.ArgumentParser, backend_default: str | None = "verified") -> None:
    p.add_argument("--workers", type=int, default=1, help="processes (1 = serial, in this process)")
    p.add_argument("--dask-scheduler", dest="dask_scheduler", default=None, metavar="ADDRESS",
                   help="run the trials on a Dask cluster (needs pip install 'prirfed[dask]'; default: none, run locally)")
    p.add_argument("--resume", action="store_true", help="keep finished trials of the same configuration in --out")
    p.add_argument("--overwrite", action="store_true",
                   help="use a non-empty --out: its contents are first moved into the sibling folder OUT.old-TIMESTAMP "
                        "(nothing is deleted)")
    p.add_argument("--backend", choices=("reference", "verified"), default=backend_default,
                   help="implementation that runs the trials: verified (Numba) or reference (NumPy), equal results"
                   + ("" if backend_default else " (default: the TOML's [run] backend, itself verified by default)"))
    p.add_argument("--calibrate", action="store_true",
                   help="noise std from the rigorous accountant at the stated eps (private experiments only)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    p.add_argument("--accountant", choices=("best", "pld", "rdp"), default=None,
                   help="accountant of every epsilon and calibration of the private experiments (default: the "
                        "configuration's, best = the tightest valid of PLD and RDP)")


def _add_reproduce(p: argparse.ArgumentParser) -> None:
    p.add_argument("experiment", help="experiment name (see `prirfed list`), or `all`")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="scaled-down sizes (minutes, not hours; without "
                                                            "--quick or --tiny: the papers' sizes)")
    size.add_argument("--tiny", action="store_true", help="smallest sizes (seconds; for tests)")
    p.add_argument("--out", default=None,
                   help="output folder (default: prirfed-results/EXPERIMENT; for `all`, the parent folder, "
                        "default: prirfed-results)")
    p.add_argument("--seed", type=int, default=0, help="root seed: trial i uses SeedSequence(seed).spawn(n)[i]")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="replace a setting of the configuration (VALUE as JSON, else a string); repeatable "
                        "(default: none)")
    _add_common_run_options(p)


def parse_overrides(items) -> dict:
    """``KEY=VALUE`` strings of ``--set`` -> dict; VALUE is read as JSON (numbers, lists, true/false,
    quoted strings), and taken as a plain string when it is not JSON."""
    import json

    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE (got {item!r})")
        if key.strip() in out:
            raise ValueError(f"--set {key.strip()} given twice ({out[key.strip()]!r} and {value!r}); give it once")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def _run_reproduce(args, out) -> int:
    from prirfed.experiments import reproduce
    from prirfed.experiments.framework import reproduce_all

    mode = "quick" if args.quick else "tiny" if args.tiny else "full"
    overrides = parse_overrides(args.overrides)
    common = dict(mode=mode, seed=args.seed, workers=args.workers, resume=args.resume, backend=args.backend,
                  progress=not args.no_progress, calibrate=args.calibrate, dask_scheduler=args.dask_scheduler,
                  overwrite=args.overwrite, accountant=args.accountant)
    if args.experiment == "all":
        if overrides:
            raise ValueError("--set applies to one experiment, not to `all`")
        dest = args.out if args.out is not None else "prirfed-results"
        r = reproduce_all(dest, **common)
        ok = [row for row in r["rows"] if row["status"] == "ok"]
        out.write(f"reproduce all: {len(ok)} of {len(r['rows'])} experiments ran; "
                  f"{sum(row['shown'] for row in ok)} of {sum(row['total'] for row in ok)} claims shown; index in {r['index']}"
                  f"{_moved(r)}\n")
        if r["failed"]:
            sys.stderr.write(f"prirfed reproduce: error: {len(r['failed'])} experiment(s) failed: {', '.join(r['failed'])} "
                             f"(see {r['index']})\n")
            return 1
        return 0
    dest = args.out if args.out is not None else f"prirfed-results/{args.experiment}"
    r = reproduce(args.experiment, dest, overrides=overrides, **common)
    shown = sum(c.shown is True for c in r["checks"])
    out.write(f"{args.experiment}: {r['ran']} trials run, {r['skipped']} reused; {shown} of {len(r['checks'])} claims shown; "
              f"outputs in {dest}: {', '.join(r['files'])}{_moved(r)}\n")
    return 0


def _moved(r: dict) -> str:
    return f"; the folder's previous contents are in {r['moved_to']}" if r.get("moved_to") else ""


def _add_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="TOML file: [problem], [data], [trainer], [privacy], [run] (see examples/)")
    p.add_argument("--out", default=None, help="output folder (default: prirfed-results/run-CONFIGSTEM)")
    p.add_argument("--engine", choices=("inprocess", "flower"), default="inprocess",
                   help="inprocess: the trainers in this process; flower: Flower's simulation engine "
                        "(needs pip install 'prirfed[flower]'; prirfed, rfedsvrg, rfedavg, rfedprox; the same iterates)")
    p.add_argument("--supernodes", type=int, default=None,
                   help="with --engine flower: simulated SuperNodes, agent i on node i mod N (default: one per agent)")
    # the TOML's [run] backend unless --backend is given (the examples name the faster one for their size)
    _add_common_run_options(p, backend_default=None)


def _run_run(args, out) -> int:
    from pathlib import Path

    from prirfed.experiments.custom import run_toml

    dest = args.out if args.out is not None else f"prirfed-results/run-{Path(args.config).stem}"
    runner = None
    if args.engine == "flower":
        from prirfed.flower.engine import flower_trial as runner
    r = run_toml(args.config, dest, workers=args.workers, resume=args.resume, backend=args.backend,
                 progress=not args.no_progress, calibrate=args.calibrate, dask_scheduler=args.dask_scheduler,
                 overwrite=args.overwrite, accountant=args.accountant,
                 engine=args.engine, supernodes=args.supernodes, runner=runner)
    shown = sum(c.shown is True for c in r["checks"])
    out.write(f"run {args.config}: {r['ran']} trials run, {r['skipped']} reused; {shown} of {len(r['checks'])} checks shown; "
              f"outputs in {dest}: {', '.join(r['files'])}{_moved(r)}\n")
    return 0


#: the geometries of ``prirfed warmup`` (prirfed.verified.trainers.warm.GEOMETRIES; written out so that
#: building the parser does not import Numba; tests/verified/test_trainer_layout.py checks they agree)
WARMUP_GEOMETRIES = ("sphere", "sphere-retraction", "spd", "lorentz", "stiefel", "stiefel-retraction")


def _add_warmup(p: argparse.ArgumentParser) -> None:
    p.add_argument("--geometry", action="append", choices=WARMUP_GEOMETRIES, default=None, metavar="NAME",
                   help=f"compile only this geometry's loops (repeatable; one of {', '.join(WARMUP_GEOMETRIES)}; "
                        "default all)")


def _run_warmup(args, out) -> int:
    import time

    from prirfed.verified.trainers.warmup import warmup

    geometries = args.geometry or list(WARMUP_GEOMETRIES)
    t0 = time.process_time()
    done = warmup(geometries)
    out.write(f"warmup: {len(done)} trainer calls over {', '.join(geometries)} in {time.process_time() - t0:.1f} s of "
              f"CPU; the fused loops are in Numba's cache now\n")
    return 0


def _cli_errors(run: Callable) -> Callable:
    """A run subcommand (``reproduce``, ``run``): Ctrl-C prints a hint and returns 130 (the finished
    trials are on disk); every other failure is left to :func:`main`."""

    def wrapped(args, out):
        try:
            return run(args, out)
        except KeyboardInterrupt:
            sys.stderr.write(f"prirfed {args.command}: interrupted; finished trials are kept, rerun with --resume to skip them\n")
            return 130

    wrapped.__doc__ = run.__doc__
    return wrapped


SUBCOMMANDS: dict[str, tuple[str, Callable, Callable]] = {
    "privacy-table": (f"Table 1 of {PAPERS['000'].short} beside the rigorous accountant", _add_privacy_table, _run_privacy_table),
    "account": ("eps of a sigma (or sigma for an eps) of DP-RSGD / DP-RSVRG / PriRFed", _add_account, _run_account),
    "list": ("the experiments `prirfed reproduce` can run", _add_list, _run_list),
    "reproduce": ("run one experiment (or `all`) into an output folder (config, CSVs, plots, summary)", _add_reproduce, _cli_errors(_run_reproduce)),
    "run": ("run a TOML configuration (any problem, data, trainer, privacy) into an output folder", _add_run, _cli_errors(_run_run)),
    "warmup": ("compile the fused verified loops ahead of time (one geometry or all)", _add_warmup, _cli_errors(_run_warmup)),
}


# What each subcommand does and how it is called: shown by ``prirfed COMMAND --help`` (every
# example is run or parsed by tests/test_cli_help.py).
DESCRIPTIONS: dict[str, tuple[str, list[str]]] = {
    "privacy-table": (
        f"Print Table 1 of {PAPERS['000'].short}: the (eps', delta') that their Theorem 4.2 claims for a whole "
        "PriRFed run (N agents, s sampled per round, T rounds) with a (0.15, 1e-4)-DP local trainer, beside "
        "eps_rigorous, the exact record-level eps' at the same delta' for any such trainer. For s = 1 the "
        "theorem understates eps' in every cell.",
        ["prirfed privacy-table", "prirfed privacy-table --format csv"]),
    "account": (
        "Privacy of DP-RSGD or DP-RSVRG local training, alone or inside a whole PriRFed run (--N, --s, --T), "
        "by the rigorous record-level accountant: the eps of a noise std (--sigma), or the smallest noise std "
        "that reaches an eps (--eps).",
        ["prirfed account --trainer dp-rsgd --sigma 1.0 --delta 1e-5 --K 5 --N-i 1000 --batch 50",
         "prirfed account --trainer dp-rsgd --eps 1.0 --delta 1e-5 --K 5 --N-i 1000 --batch 50 --N 20 --s 5 --T 30",
         "prirfed account --trainer dp-rsvrg --sigma 2.0 --delta 1e-4 --K 3 --m 5 --N-i 500"]),
    "list": (
        "List the experiments that `prirfed reproduce` runs: name, what it reproduces, and the paper and "
        "section it comes from.",
        ["prirfed list"]),
    "reproduce": (
        "Run one experiment of the papers (names: `prirfed list`), or all of them, into an output folder: "
        "config.json (the exact settings and seeds), CSVs of every curve, PNG and PDF plots, and summary.md "
        "(the paper's claims and whether this run shows them). Without the shared data folder ($PRIRFED_DATA) "
        "the real-data experiments fall back to bundled or synthetic data and say so.",
        ["prirfed reproduce prirfed-fig1 --quick --out outputs/prirfed-fig1",
         "prirfed reproduce all --quick --out outputs",
         "prirfed reproduce rfed-table1 --tiny --seed 1 --workers 2 --out outputs/table1",
         "prirfed reproduce prirfed-fig1 --quick --calibrate --out outputs/fig1-calibrated"]),
    "run": (
        "Run any problem, data, trainer and privacy setting from a TOML file (schema: the module "
        "prirfed.experiments.custom; examples in the examples/ folder of the source distribution), with the "
        "same outputs as `prirfed reproduce`.",
        ["prirfed run examples/sphere_pca_prirfed.toml --out outputs/run",
         "prirfed run examples/sphere_pca_prirfed.toml --backend reference --resume --out outputs/run",
         "prirfed run examples/sphere_pca_prirfed.toml --engine flower --supernodes 2 --out outputs/run-flower"]),
    "warmup": (
        "Compile the fused loops of the verified backend ahead of time, so that the first verified run does "
        "not pay for it: each geometry's loops compile once per machine (tens of seconds of CPU each) and "
        "Numba's on-disk cache serves every later process until the sources change.",
        ["prirfed warmup --geometry sphere",
         "prirfed warmup"]),
}


class _HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Descriptions and examples as written; every option shows its default: ``(default: X)``
    appended from the parser, ``(default: off)`` for a flag, or stated in the help text itself
    (an option whose default is computed, e.g. ``--batch``: ``default: N_i``)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or "required" in text or action.default is argparse.SUPPRESS:
            return text
        if action.required:
            return text + " (required)"
        if isinstance(action, argparse._StoreTrueAction):
            return text + " (default: off)"
        if action.option_strings and action.default is not None:
            return text + " (default: %(default)s)"
        return text


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``prirfed CMD: error: ...``) and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def _examples(lines: list[str]) -> str:
    return "examples:\n" + "\n".join(f"  {ln}" for ln in lines)


DEBUG_ENV = "PRIRFED_DEBUG"
#: the longest error line printed (a longer message is cut, with the cut marked)
MAX_ERROR_CHARS = 2000


def _add_debug(p: argparse.ArgumentParser, default) -> None:
    p.add_argument("--debug", action="store_true", default=default,
                   help=f"on an error, print the Python traceback too (also: environment variable {DEBUG_ENV}=1; "
                        "default: off)")


def build_parser() -> argparse.ArgumentParser:
    from prirfed import __version__

    parser = _Parser(
        prog="prirfed", formatter_class=_HelpFormatter,
        description=textwrap.fill("Differentially private federated learning on Riemannian manifolds: reproduce "
                                  "the papers' experiments, run your own settings, and account the privacy of a run.", 79),
        epilog="Run `prirfed COMMAND --help` for the options of a command.\n\n"
               + _examples(["prirfed list", "prirfed reproduce all --quick --out outputs", "prirfed privacy-table"]))
    parser.add_argument("--version", action="version", version=f"prirfed {__version__}",
                        help="print the version and exit")
    _add_debug(parser, False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_, add, _) in SUBCOMMANDS.items():
        description, examples = DESCRIPTIONS.get(name, (help_, []))
        p = sub.add_parser(name, help=help_, description=textwrap.fill(description, 79), formatter_class=_HelpFormatter,
                           epilog=_examples(examples) if examples else None)
        add(p)
        _add_debug(p, argparse.SUPPRESS)  # --debug after the subcommand too, without resetting one given before it
    return parser


#: the library functions behind ``reproduce`` / ``run``, whose name starts their errors; the command
#: line names the command instead
_API_PREFIXES = ("reproduce: ", "reproduce_all: ", "run_toml: ")


def _one_line(text: str, command: str) -> str:
    msg = " ".join(str(text).split())
    prefix = f"prirfed {command}: "
    while msg.startswith(prefix):
        msg = msg[len(prefix):]
    if command in ("reproduce", "run"):
        msg = next((msg[len(p):] for p in _API_PREFIXES if msg.startswith(p)), msg)
    if len(msg) > MAX_ERROR_CHARS:
        msg = msg[:MAX_ERROR_CHARS] + f" ... [{len(msg) - MAX_ERROR_CHARS} more characters; --debug shows all]"
    return msg


def describe_failure(exc: BaseException, command: str) -> tuple[int, str]:
    """(exit code, one-line message) of a failed subcommand: 2 for bad input (a ``ValueError``: a bad
    setting, a refused output folder, a corrupt file under --resume), 1 for a runtime failure (the
    output folder unwritable or full, a lock held by another run, a dead worker process, out of
    memory, anything unexpected). The message names what failed and where; the notes the runner
    attaches (``in trial 3 of NAME``) follow in parentheses."""
    from concurrent.futures.process import BrokenProcessPool

    from prirfed.experiments.framework import WorkerDied
    from prirfed.experiments.outputs import OutputError

    notes = "".join(f" ({n})" for n in getattr(exc, "__notes__", ()) or ())
    if isinstance(exc, ValueError):
        return 2, _one_line(f"{exc}{notes}", command)
    if isinstance(exc, (OutputError, WorkerDied)):
        return 1, _one_line(f"{exc}{notes}", command)
    if isinstance(exc, BrokenProcessPool):
        return 1, _one_line(f"a worker process died (killed, or out of memory){notes}; finished trials are kept: rerun "
                            "with --resume", command)
    if isinstance(exc, MemoryError):
        what = str(exc) or "no details"
        return 1, _one_line(f"out of memory{notes}: {what}; try smaller settings", command)
    if isinstance(exc, OSError):
        where = "" if exc.filename is None else f"{exc.filename}: "
        if where and getattr(exc, "filename2", None) is not None:
            where = f"{exc.filename} -> {exc.filename2}: "
        return 1, _one_line(f"{where}{exc.strerror or exc}{notes}", command)
    text = str(exc)
    return 1, _one_line(f"{type(exc).__name__}{': ' + text if text else ''}{notes} (unexpected; rerun with --debug for "
                        "the traceback and report it)", command)


def main(argv: list[str] | None = None, out=None) -> int:
    """Entry point; ``argv`` defaults to ``sys.argv[1:]``, output to ``sys.stdout``.

    Every failure is one line on stderr, ``prirfed CMD: error: ...``, with exit code 2 for bad input
    and 1 for a runtime failure (:func:`describe_failure`); ``--debug`` (or ``PRIRFED_DEBUG=1``)
    prints the traceback before that line.

    Parameters
    ----------
    argv : list of str or None, optional
        Command-line arguments (default ``sys.argv[1:]``).
    out : file-like or None, optional
        Where the results go (default ``sys.stdout``).

    Returns
    -------
    int
        Exit status: 0 on success, 2 for bad input, 1 for a runtime failure, 130 on Ctrl-C (and the
        subcommand's own status otherwise).
    """
    import os

    out = sys.stdout if out is None else out
    args = build_parser().parse_args(argv)
    debug = bool(getattr(args, "debug", False)) or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    try:
        return SUBCOMMANDS[args.command][2](args, out)
    except KeyboardInterrupt:
        sys.stderr.write(f"prirfed {args.command}: interrupted\n")
        return 130
    except BrokenPipeError as exc:
        if out is sys.stdout:
            # the reader of our output went away (`prirfed list | head -1`): nothing more to say to it
            _silence_stdout()
            return 1
        return _report_failure(exc, args.command, debug)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line and an exit code
        return _report_failure(exc, args.command, debug)


def _report_failure(exc: BaseException, command: str, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exception(exc)
    code, line = describe_failure(exc, command)
    sys.stderr.write(f"prirfed {command}: error: {line}\n")
    return code


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
