"""The experiment runner behind ``prirfed reproduce`` (issue 7).

An :class:`Experiment` (defined in :mod:`prirfed.experiments.core`, re-exported here) is four
plain functions:

- ``make_config(mode, seed, backend) -> dict``: the exact, JSON-serialisable configuration
  (``mode`` is ``"full"`` (the paper's sizes), ``"quick"`` (scaled down) or ``"tiny"`` (tests));
- ``trial_specs(config) -> list[dict]``: one JSON-serialisable spec per trial;
- ``run_trial(config, spec, seed_sequence) -> dict``: one trial, all randomness from
  ``numpy.random.default_rng(seed_sequence)``; returns JSON-serialisable numbers;
- ``report(config, results, out) -> list[Check]``: writes the CSVs and plots from the results
  (in trial order) and returns the computed checks of the paper's qualitative claims.

:func:`reproduce` runs the trials through a ``concurrent.futures`` Executor (:func:`make_executor`:
serial by default, a process pool with ``workers > 1``, a Dask cluster with ``dask_scheduler``;
only the experiment's module-level ``run_trial`` and plain data travel to a worker). ``reproduce``
also accepts an :class:`Experiment` object instead of a registered name (``prirfed run`` builds
one from a TOML file, :mod:`prirfed.experiments.custom`). Trial ``i`` gets child ``i`` of
``numpy.random.SeedSequence(seed).spawn(n_trials)``, so results do not depend on the executor or
on the order in which trials finish. Each finished trial is written at once to
``out/trials/trial_NNNN.json`` (atomically: temporary file, then rename), so an interrupted run
keeps them and ``resume=True`` skips them (only if they carry the same configuration hash).
Outputs: ``config.json`` (configuration, seeds, configuration hash), the experiment's CSVs, PNG and
PDF plots, and ``summary.md`` (claims and whether the reproduction shows them, computed).
``calibrate=True`` sets the configuration key ``"calibrate"`` (private experiments only).
:func:`reproduce_all` runs every registered experiment into ``out/NAME`` and writes
``out/index.md`` (claims shown / total, links, times; a failure is recorded, the rest still run).
Proofs note: ``proofs_notes/experiments.md``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable

import numpy as np

from . import registry
from .core import (  # noqa: F401 - re-exported: the names experiment code imported from here since 0.1
    BACKENDS,
    MODES,
    Check,
    Experiment,
    config_hash,
    mean_and_spread,
    save_figure,
    trial_seeds,
    write_csv,
)

__all__ = [
    "Experiment",
    "Check",
    "SerialExecutor",
    "MODES",
    "BACKENDS",
    "reproduce",
    "reproduce_all",
    "make_executor",
    "config_hash",
    "trial_seeds",
    "write_csv",
    "mean_and_spread",
    "save_figure",
]

class SerialExecutor(Executor):
    """An Executor that runs each task in the calling process when it is submitted."""

    def submit(self, fn, /, *args, **kwargs):
        fut: Future = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            if isinstance(exc, KeyboardInterrupt):
                raise
            fut.set_exception(exc)
        return fut


def _run_one(run_trial: Callable, config: dict, index: int, spec: dict, seq: np.random.SeedSequence) -> tuple[int, dict]:
    return index, run_trial(config, spec, seq)


def _write_json_atomic(path: Path, obj) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=1, sort_keys=True, allow_nan=True)
    os.replace(tmp, path)


def _check_args(where, name, mode, seed, workers, backend):
    if isinstance(name, Experiment):
        exp = name
    elif name not in registry.EXPERIMENTS:
        raise ValueError(f"{where}: unknown experiment {name!r} (available: {', '.join(sorted(registry.EXPERIMENTS))})")
    else:
        exp = registry.EXPERIMENTS[name]
    if mode not in MODES:
        raise ValueError(f"{where}: mode must be one of {MODES} (got {mode!r})")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{where}: seed must be an integer >= 0 (got {seed!r})")
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"{where}: workers must be an integer >= 1 (got {workers!r})")
    if backend not in BACKENDS:
        raise ValueError(f"{where}: backend must be one of {BACKENDS} (got {backend!r})")
    return exp


DASK_MISSING = "--dask-scheduler needs dask.distributed: pip install 'prirfed[dask]'"


def make_executor(workers: int = 1, dask_scheduler: str | None = None, *, where: str = "reproduce"):
    """The Executor the trials run through, and a function that releases it.

    ``dask_scheduler`` (an address such as ``tcp://host:8786``) wins: ``distributed.Client(address)
    .get_executor()`` (imported lazily; missing package -> ValueError saying ``pip install
    'prirfed[dask]'``). Otherwise ``workers == 1`` is :class:`SerialExecutor` and ``workers > 1`` a
    ``ProcessPoolExecutor`` with the spawn start method.
    """
    if dask_scheduler is not None:
        if workers != 1:
            raise ValueError(f"{where}: give workers (local processes) or dask_scheduler (a Dask cluster), not both "
                             f"(got workers={workers!r}, dask_scheduler={dask_scheduler!r})")
        if not isinstance(dask_scheduler, str) or not dask_scheduler.strip():
            raise ValueError(f"{where}: dask_scheduler must be a non-empty address string (got {dask_scheduler!r})")
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - distributed is in the test extra
            raise ValueError(f"{where}: {DASK_MISSING} ({exc})") from None
        try:
            client = Client(dask_scheduler, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"{where}: cannot connect to the Dask scheduler {dask_scheduler!r} ({exc})") from None
        return client.get_executor(pure=False), client.close
    if workers == 1:
        return SerialExecutor(), lambda: None
    ex = ProcessPoolExecutor(max_workers=int(workers), mp_context=multiprocessing.get_context("spawn"))
    return ex, lambda: None


def _shutdown_now(executor) -> None:
    try:
        executor.shutdown(wait=False, cancel_futures=True)
    except TypeError:  # executors without cancel_futures (Dask's ClientExecutor)
        executor.shutdown(wait=False)


def reproduce(name, out, *, mode: str = "full", seed: int = 0, workers: int = 1, resume: bool = False,
              backend: str = "verified", progress: bool = True, overrides: dict | None = None,
              calibrate: bool = False, dask_scheduler: str | None = None, progress_position: int = 0) -> dict:
    """Run experiment ``name`` (a name of ``EXPERIMENTS`` or an :class:`Experiment`) into folder
    ``out``; returns ``{"config", "checks", "files", "ran", "skipped"}``.

    ``overrides`` replaces entries of the generated configuration (keys must exist); it is
    recorded in config.json like every other setting. ``calibrate=True`` sets the setting
    ``"calibrate"`` to True (the experiment then draws its noise with the sigma the rigorous
    accountant calibrates to the stated eps); an experiment without that setting is not private
    and is refused. ``dask_scheduler`` runs the trials on a Dask cluster (:func:`make_executor`).
    """
    where = "reproduce"
    exp = _check_args(where, name, mode, seed, workers, backend)
    name = exp.name
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{where}: output path {str(out)!r} exists and is not a folder")
    config = exp.make_config(mode, int(seed), backend)
    for k, v in (overrides or {}).items():
        if k not in config:
            raise ValueError(f"{where}: override {k!r} is not a setting of {name} (settings: {', '.join(sorted(config))})")
        config[k] = v
    if calibrate:
        if "calibrate" not in config:
            raise ValueError(f"{where}: experiment {name} is not private (no calibrate setting)")
        config["calibrate"] = True
    config = json.loads(json.dumps(config))  # exactly what config.json will hold
    specs = exp.trial_specs(config)
    n = len(specs)
    if n < 1:
        raise ValueError(f"{where}: the configuration of {name} gives no trials")
    chash = config_hash(config)
    seqs = trial_seeds(int(seed), n)
    trials_dir = out / "trials"
    cfg_path = out / "config.json"
    if resume and cfg_path.exists():
        old = json.loads(cfg_path.read_text())
        if old.get("config_hash") != chash:
            raise ValueError(f"{where}: --resume: {cfg_path} holds a different configuration (hash {old.get('config_hash')} "
                             f"vs {chash}); use another --out or drop --resume")
    trials_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        for p in trials_dir.glob("trial_*.json"):
            p.unlink()
    _write_json_atomic(cfg_path, dict(experiment=name, source=exp.source, config_hash=chash, config=config,
                                      seed=int(seed), n_trials=n,
                                      trial_seeds=[dict(entropy=str(s.entropy), spawn_key=list(s.spawn_key)) for s in seqs],
                                      trials=specs))
    results: list = [None] * n
    for i in range(n):
        p = trials_dir / f"trial_{i:04d}.json"
        if resume and p.exists():
            rec = json.loads(p.read_text())
            if rec.get("config_hash") != chash or rec.get("index") != i:
                raise ValueError(f"{where}: --resume: {p} was written by another configuration (hash {rec.get('config_hash')} vs {chash})")
            results[i] = rec["result"]
    todo = [i for i in range(n) if results[i] is None]
    skipped = n - len(todo)
    from tqdm import tqdm

    executor, release = make_executor(int(workers), dask_scheduler, where=where)
    bar = tqdm(total=n, initial=skipped, desc=name, unit="trial", file=sys.stderr, disable=not progress,
               position=progress_position, leave=progress_position == 0)

    def finish(fut):
        i, res = fut.result()
        _write_json_atomic(trials_dir / f"trial_{i:04d}.json", dict(index=i, config_hash=chash, spec=specs[i], result=res))
        results[i] = res
        bar.update(1)

    try:
        pending = []
        for i in todo:
            fut = executor.submit(_run_one, exp.run_trial, config, i, specs[i], seqs[i])
            if fut.done():  # the serial executor: written before the next trial starts
                finish(fut)
            else:
                pending.append(fut)
        for fut in as_completed(pending):
            finish(fut)
    except BaseException:
        # Ctrl-C or a failing trial: finished trials are on disk already; drop the queued ones.
        _shutdown_now(executor)
        raise
    else:
        executor.shutdown(wait=True)
    finally:
        bar.close()
        release()
    checks = exp.report(config, results, out)
    files = sorted(p.name for p in out.iterdir() if p.is_file())
    _write_summary(out, exp, config, chash, checks, n, skipped, workers)
    return dict(config=config, checks=checks, files=sorted(set(files) | {"summary.md"}), ran=len(todo), skipped=skipped)


def reproduce_all(out, *, names=None, mode: str = "full", seed: int = 0, workers: int = 1, resume: bool = False,
                  backend: str = "verified", progress: bool = True, calibrate: bool = False,
                  dask_scheduler: str | None = None) -> dict:
    """Run every experiment (``names``, default all of ``EXPERIMENTS`` in order) into ``out/NAME``
    and write ``out/index.md``: one row per experiment (claims shown / total, link to its
    summary.md, time taken, status) and a total line.

    A failing experiment does not stop the others: its error is recorded in index.md (and in the
    returned ``failed``), and the caller (the CLI) exits non-zero. Ctrl-C stops everything (the
    finished trials stay on disk; ``resume=True`` skips them). With ``calibrate=True`` the private
    experiments (those with a ``"calibrate"`` setting) are calibrated and the others run as they
    are (index.md says so). Returns ``{"rows": [...], "failed": [names], "index": path}``.
    """
    from tqdm import tqdm

    where = "reproduce_all"
    names = list(registry.EXPERIMENTS) if names is None else list(names)
    if not names:
        raise ValueError(f"{where}: no experiments to run")
    for nm in names:
        _check_args(where, nm, mode, seed, workers, backend)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{where}: output path {str(out)!r} exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    bar = tqdm(total=len(names), desc="experiments", unit="exp", file=sys.stderr, disable=not progress, position=0)
    try:
        for nm in names:
            bar.set_postfix_str(nm)
            exp = registry.EXPERIMENTS[nm]
            t0 = time.perf_counter()
            note = ""
            try:
                cal = bool(calibrate) and "calibrate" in exp.make_config(mode, int(seed), backend)
                note = "calibrated" if cal else ("not private: run without calibration" if calibrate else "")
                r = reproduce(nm, out / nm, mode=mode, seed=seed, workers=workers, resume=resume, backend=backend,
                              progress=progress, calibrate=cal, dask_scheduler=dask_scheduler, progress_position=1)
            except Exception as exc:  # noqa: BLE001 - recorded in index.md; the CLI exits non-zero
                msg = " ".join(f"{type(exc).__name__}: {exc}".split())
                rows.append(dict(name=nm, source=exp.source, shown=None, total=None, seconds=time.perf_counter() - t0,
                                 status="failed", error=msg, note=note))
            else:
                rows.append(dict(name=nm, source=exp.source, shown=sum(c.shown for c in r["checks"]),
                                 total=len(r["checks"]), seconds=time.perf_counter() - t0, status="ok", error="",
                                 note=note))
            bar.update(1)
            _write_index(out, rows, mode, seed, backend)  # after each experiment: a Ctrl-C keeps the table so far
    finally:
        bar.close()
    return dict(rows=rows, failed=[r["name"] for r in rows if r["status"] != "ok"], index=out / "index.md")


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _write_index(out: Path, rows: list, mode: str, seed: int, backend: str) -> None:
    lines = [
        "# prirfed reproduce all",
        "",
        f"Mode `{mode}`, seed {seed}, backend `{backend}`. Each experiment's folder holds config.json, CSVs, "
        "PNG/PDF plots and summary.md (the paper's claims and whether this run shows them).",
        "",
        "| experiment | source | claims shown | summary | time (s) | status |",
        "|---|---|---:|---|---:|---|",
    ]
    for r in rows:
        claims = f"{r['shown']} / {r['total']}" if r["status"] == "ok" else "-"
        link = f"[{r['name']}/summary.md]({r['name']}/summary.md)" if r["status"] == "ok" else "-"
        status = "ok" if r["status"] == "ok" else f"**failed**: {_md_cell(r['error'])}"
        if r["note"]:
            status += f" ({r['note']})"
        lines.append(f"| {r['name']} | {_md_cell(r['source'])} | {claims} | {link} | {r['seconds']:.1f} | {status} |")
    ok = [r for r in rows if r["status"] == "ok"]
    failed = len(rows) - len(ok)
    lines += ["", f"**Total**: {sum(r['shown'] for r in ok)} of {sum(r['total'] for r in ok)} claims shown by "
                  f"{len(ok)} experiments; {failed} failed; {sum(r['seconds'] for r in rows):.1f} s."]
    (out / "index.md").write_text("\n".join(lines) + "\n")


def _write_summary(out: Path, exp: Experiment, config: dict, chash: str, checks: list, n: int, skipped: int, workers: int):
    lines = [
        f"# {exp.name}: {exp.description}",
        "",
        f"Source: {exp.source}. Mode `{config.get('mode')}`, seed {config.get('seed')}, backend `{config.get('backend')}`, "
        f"{n} trials ({skipped} reused by --resume), configuration hash `{chash}` (config.json).",
        "",
        "| paper's claim | reproduced | evidence (computed from the CSVs of this run) |",
        "|---|---|---|",
    ]
    for c in checks:
        lines.append(f"| {c.claim} | {'yes' if c.shown else '**no**'} | {c.evidence} |")
    shown = sum(c.shown for c in checks)
    lines += ["", f"{shown} of {len(checks)} claims shown by this run."]
    if config.get("mode") in ("quick", "tiny"):
        lines += ["", f"Note: mode `{config.get('mode')}` uses scaled-down sizes; only mode `full` follows the paper's settings."]
    (out / "summary.md").write_text("\n".join(lines) + "\n")

