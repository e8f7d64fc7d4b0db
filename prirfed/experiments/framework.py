"""The experiment runner behind ``prirfed reproduce``.

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
from concurrent.futures.process import BrokenProcessPool
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
from .outputs import (
    LOCK_NAME,
    RECORD_NAME,
    SUMMARY_NAME,
    TRIALS_NAME,
    CorruptRunFile,
    FolderLock,
    FolderRefused,
    OutputError,
    RunFolder,
    inspect_folder,
    move_aside,
    refusal,
    write_text,
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
    "plan_run",
    "check_override",
    "check_executor",
    "WorkerDied",
    "SET_BY_ARGUMENT",
    "MAX_WORKERS",
]

class SerialExecutor(Executor):
    """An Executor that runs each task in the calling process when it is submitted."""

    def submit(self, fn, /, *args, **kwargs):
        """Run ``fn(*args, **kwargs)`` now, in this process, and return a completed future.

        Parameters
        ----------
        fn : callable
            The function.
        args, kwargs
            Its positional and keyword arguments.

        Returns
        -------
        concurrent.futures.Future
            Holding the result, or the exception ``fn`` raised (``KeyboardInterrupt`` is re-raised at once).
        """
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


class WorkerDied(RuntimeError):
    """A worker process of the pool died (killed, out of memory) while trials ran (the CLI exits 1)."""


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
    if workers > MAX_WORKERS:
        raise ValueError(f"{where}: workers must be at most {MAX_WORKERS} (got {workers!r})")
    if backend not in BACKENDS:
        raise ValueError(f"{where}: backend must be one of {BACKENDS} (got {backend!r})")
    return exp


DASK_MISSING = "--dask-scheduler needs dask.distributed: pip install 'prirfed[dask]'"


def check_executor(workers: int = 1, dask_scheduler: str | None = None, *, where: str = "reproduce") -> None:
    """The executor settings without starting anything: workers or a Dask address, not both; the
    address a non-empty string.

    Parameters
    ----------
    workers : int, optional
        Local processes (default 1).
    dask_scheduler : str or None, optional
        Address of a Dask scheduler.
    where : str, optional
        Function named in the error message (default ``"reproduce"``).

    Raises
    ------
    ValueError
        If both ``workers != 1`` and ``dask_scheduler`` are given, or ``dask_scheduler`` is not a
        non-empty string.
    """
    if dask_scheduler is not None:
        if workers != 1:
            raise ValueError(f"{where}: give workers (local processes) or dask_scheduler (a Dask cluster), not both "
                             f"(got workers={workers!r}, dask_scheduler={dask_scheduler!r})")
        if not isinstance(dask_scheduler, str) or not dask_scheduler.strip():
            raise ValueError(f"{where}: dask_scheduler must be a non-empty address string (got {dask_scheduler!r})")


def make_executor(workers: int = 1, dask_scheduler: str | None = None, *, where: str = "reproduce"):
    """The Executor the trials run through, and a function that releases it.

    ``dask_scheduler`` (an address such as ``tcp://host:8786``) wins: ``distributed.Client(address)
    .get_executor()`` (imported lazily; missing package -> ValueError saying ``pip install
    'prirfed[dask]'``). Otherwise ``workers == 1`` is :class:`SerialExecutor` and ``workers > 1`` a
    ``ProcessPoolExecutor`` with the spawn start method.

    Parameters
    ----------
    workers : int, optional
        Local processes (default 1).
    dask_scheduler : str or None, optional
        Address of a Dask scheduler.
    where : str, optional
        Function named in the error message (default ``"reproduce"``).

    Returns
    -------
    executor : concurrent.futures.Executor
        The executor.
    release : callable
        Call it (no arguments) to shut the executor down.

    Raises
    ------
    ValueError
        As :func:`check_executor`, or if ``distributed`` is not installed or the Dask scheduler
        cannot be reached when a Dask address is given.
    """
    check_executor(workers, dask_scheduler, where=where)
    if dask_scheduler is not None:
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


#: configuration keys that only reproduce's own arguments set (make_config derives other settings from
#: them, or the trials' root seed is the argument): an override would be recorded but not honoured
SET_BY_ARGUMENT = {"seed": "--seed (seed=...)", "mode": "--quick / --tiny (mode=...)"}
#: the most worker processes ``workers`` may ask for
MAX_WORKERS = 4096
INT64_LIMIT = 2**63


def _kind(v) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a table (JSON object)"
    return type(v).__name__


def _as_json(v) -> str:
    """``v`` as it is written after ``--set KEY=`` (JSON), else its repr."""
    try:
        return json.dumps(v)
    except (TypeError, ValueError):
        return repr(v)


def _fits(v) -> bool:
    """Every integer inside ``v`` fits a signed 64-bit integer (what NumPy and the trainers use)."""
    if isinstance(v, bool):
        return True
    if isinstance(v, int):
        return -INT64_LIMIT < v < INT64_LIMIT
    if isinstance(v, list):
        return all(_fits(x) for x in v)
    if isinstance(v, dict):
        return all(_fits(x) for x in v.values())
    return True


def check_override(where: str, name: str, key: str, value, default):
    """An override of setting ``key`` (``default`` = the generated value) must keep its kind: a
    number stays a number (not true/false, not the string "4"), true/false stays true/false, a
    string a string, a list a list, a table a table; null (a setting not given) is always accepted
    and so is anything for a setting generated as null (the experiment's own checks judge ranges,
    integers against floats and null). Integers must fit 64 bits. ``seed`` and ``mode`` are refused with the option to use instead:
    the trials' root seed is the ``seed`` argument and ``make_config`` derives the sizes from
    ``mode``, so an override would be recorded in config.json but not honoured. (``backend`` and
    ``calibrate`` are read by the trials from the configuration, so their overrides are honoured;
    ``backend`` must be one of :data:`BACKENDS`.)

    Parameters
    ----------
    where : str
        Function named in the error message.
    name : str
        The experiment.
    key : str
        The setting.
    value : object
        The override.
    default : object
        The generated value.

    Returns
    -------
    object
        ``value``, accepted.

    Raises
    ------
    ValueError
        If ``key`` is set by an argument (``seed``, ``mode``), ``value`` changes the kind of the
        setting, an integer does not fit 64 bits, or a ``backend`` override is not one of
        :data:`BACKENDS`.
    """
    if key in SET_BY_ARGUMENT:
        raise ValueError(f"{where}: override {key!r} is set by {SET_BY_ARGUMENT[key]}, not by --set; "
                         f"an override would not reach the trials")
    if default is not None and value is not None:
        number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
        ok = {bool: lambda v: isinstance(v, bool), int: number, float: number, str: lambda v: isinstance(v, str),
              list: lambda v: isinstance(v, list), dict: lambda v: isinstance(v, dict)}.get(type(default), lambda v: True)
        if not ok(value):
            raise ValueError(f"{where}: {name}: {key} must be {_kind(default)} like its generated value "
                             f"{_as_json(default)} (the override {_as_json(value)} is {_kind(value)})")
    if not _fits(value):
        raise ValueError(f"{where}: {name}: {key}: integers must lie in (-2^63, 2^63) (override got {value!r})")
    if key == "backend" and value not in BACKENDS:
        raise ValueError(f"{where}: {name}: backend must be one of {BACKENDS} (override got {value!r})")
    return value


class _Plan:
    """Everything reproduce decides before it touches the output folder."""

    def __init__(self, exp, config, specs, seed):
        self.exp, self.config, self.specs, self.seed = exp, config, specs, seed
        self.n = len(specs)
        self.chash = config_hash(config)
        self.identity = dict(experiment=exp.name, config_hash=self.chash, seed=seed)


def _set_accountant(where: str, name: str, config: dict, accountant) -> None:
    from .privacy import ACCOUNTANTS

    if accountant not in ACCOUNTANTS:
        raise ValueError(f"{where}: accountant must be one of {ACCOUNTANTS} (got {accountant!r})")
    if "accountant" in config:
        config["accountant"] = accountant
    elif isinstance(config.get("privacy"), dict) and config["privacy"]:  # prirfed run: [privacy] accountant
        config["privacy"]["accountant"] = accountant
    else:
        raise ValueError(f"{where}: experiment {name} computes no epsilon (no accountant setting)")


def plan_run(name, *, mode: str = "full", seed: int = 0, backend: str = "verified", overrides: dict | None = None,
             calibrate: bool = False, workers: int = 1, dask_scheduler: str | None = None,
             where: str = "reproduce", accountant: str | None = None) -> _Plan:
    """Build and check the run of ``name`` (configuration, overrides, trial specs, executor
    settings): every bad input raises here, before anything is written.

    Parameters
    ----------
    name : str or Experiment
        The experiment.
    mode : str, optional
        ``"full"`` (default), ``"quick"`` or ``"tiny"``.
    seed : int, optional
        Root seed (default 0).
    backend : str, optional
        ``"verified"`` (default) or ``"reference"``.
    overrides : dict or None, optional
        Settings to replace (:func:`check_override`).
    calibrate : bool, optional
        Calibrate the noise to the stated eps (default ``False``).
    workers : int, optional
        Local processes (default 1).
    dask_scheduler : str or None, optional
        Address of a Dask scheduler.
    where : str, optional
        Function named in error messages (default ``"reproduce"``).
    accountant : str or None, optional
        ``"best"``, ``"pld"`` or ``"rdp"``; ``None`` keeps the configuration's.

    Returns
    -------
    _Plan
        The checked plan (configuration, trial specs, executor settings).

    Raises
    ------
    ValueError
        If an argument is invalid: unknown experiment, mode, backend or accountant; a bad seed or
        worker count; an override that is not a setting or changes its kind; ``calibrate`` or
        ``accountant`` for an experiment without that setting; a configuration that is not JSON; or
        bad executor settings.
    """
    exp = _check_args(where, name, mode, seed, workers, backend)
    check_executor(workers, dask_scheduler, where=where)
    name = exp.name
    config = exp.make_config(mode, int(seed), backend)
    if not isinstance(overrides, (dict, type(None))):
        raise ValueError(f"{where}: overrides must be a dict of settings (got {type(overrides).__name__})")
    for k, v in (overrides or {}).items():
        if k not in config:
            raise ValueError(f"{where}: override {k!r} is not a setting of {name} (settings: {', '.join(sorted(config))})")
        config[k] = check_override(where, name, k, v, config[k])
    if calibrate:
        if "calibrate" not in config:
            raise ValueError(f"{where}: experiment {name} is not private (no calibrate setting)")
        config["calibrate"] = True
    if accountant is not None:
        _set_accountant(where, name, config, accountant)
    try:
        config = json.loads(json.dumps(config, allow_nan=True))  # exactly what config.json will hold
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: the configuration of {name} is not JSON ({exc})") from None
    if "seed" in config and config["seed"] != int(seed):
        # the trials' root seed is the recorded one; a disagreement would mislabel the run
        raise ValueError(f"{where}: seed={seed!r} but the configuration of {name} records seed {config['seed']!r} "
                         f"(prirfed run: the TOML's [run] seed); pass that seed")
    try:
        specs = exp.trial_specs(config)
    except (TypeError, KeyError, AttributeError, IndexError) as exc:
        if not overrides:
            raise
        # an override of the right kind that the experiment cannot use (null for a list it iterates):
        # the user's input, so a one-line refusal that names it, not an internal error
        given = ", ".join(f"{k}={json.dumps(v, allow_nan=True)}" for k, v in overrides.items())
        raise ValueError(f"{where}: {name} cannot run with the override {given} "
                         f"({type(exc).__name__}: {exc})") from None
    if not isinstance(specs, list) or len(specs) < 1:
        raise ValueError(f"{where}: the configuration of {name} gives no trials")
    try:
        specs = json.loads(json.dumps(specs, allow_nan=True))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: the trial specs of {name} are not JSON ({exc})") from None
    return _Plan(exp, config, specs, int(seed))


def _trial_record(folder: RunFolder, i: int, plan: _Plan, where: str):
    """Trial i's result from a resumed folder, or None; a record that is not trial i of this
    configuration is named and refused."""
    rec = folder.read_trial(i)
    if rec is None:
        return None
    shown = folder.path / TRIALS_NAME / folder.trial_name(i)
    if not isinstance(rec, dict) or "result" not in rec:
        raise CorruptRunFile(f"{where}: --resume: {shown} is not a trial record (no result); delete it to recompute "
                             "that trial, or start again with --overwrite")
    if rec.get("config_hash") != plan.chash or rec.get("index") != i:
        raise ValueError(f"{where}: --resume: {shown} was written by another configuration (hash {rec.get('config_hash')} "
                         f"vs {plan.chash}, index {rec.get('index')!r} vs {i})")
    return rec["result"]


def reproduce(name, out, *, mode: str = "full", seed: int = 0, workers: int = 1, resume: bool = False,
              backend: str = "verified", progress: bool = True, overrides: dict | None = None,
              calibrate: bool = False, dask_scheduler: str | None = None, progress_position: int = 0,
              overwrite: bool = False, accountant: str | None = None) -> dict:
    """Run experiment ``name`` (a name of ``EXPERIMENTS`` or an :class:`Experiment`) into folder
    ``out``; returns ``{"config", "checks", "files", "ran", "skipped", "moved_to"}``.

    ``overrides`` replaces entries of the generated configuration (keys must exist and keep their
    kind, :func:`check_override`; ``seed``, ``mode``, ``backend`` and ``calibrate`` are this
    function's arguments and cannot be overridden); it is recorded in config.json like every other
    setting. ``calibrate=True`` sets the setting ``"calibrate"`` to True (the experiment then draws
    its noise with the sigma the rigorous accountant calibrates to the stated eps); an experiment
    without that setting is not private and is refused. ``accountant`` ("best", "pld" or "rdp";
    None keeps the configuration's, whose default is "best": the tightest valid of PLD and RDP) sets
    the setting ``"accountant"`` that computes every epsilon and calibrates every sigma of a private
    experiment; a non-private one refuses it. ``dask_scheduler`` runs the trials on a Dask cluster
    (:func:`make_executor`).

    The output folder (:class:`~prirfed.experiments.outputs.RunFolder`): everything above is
    checked before the folder is touched; then it is locked (a second run into it fails at once);
    a non-empty folder is refused unless ``resume=True`` and it holds this configuration's run
    (its finished trials are reused) or ``overwrite=True`` (its entries are moved into the sibling
    ``moved_to``, never deleted). ``files`` lists config.json, summary.md and exactly what this
    run's report wrote.

    Parameters
    ----------
    name : str or Experiment
        The experiment.
    out : str or os.PathLike
        Output folder.
    mode : str, optional
        ``"full"`` (default), ``"quick"`` or ``"tiny"``.
    seed : int, optional
        Root seed (default 0).
    workers : int, optional
        Local processes (default 1).
    resume : bool, optional
        Reuse the finished trials of this configuration in ``out`` (default ``False``).
    backend : str, optional
        ``"verified"`` (default) or ``"reference"``.
    progress : bool, optional
        Show a progress bar (default ``True``).
    overrides : dict or None, optional
        Settings to replace.
    calibrate : bool, optional
        Calibrate the noise to the stated eps (default ``False``).
    dask_scheduler : str or None, optional
        Address of a Dask scheduler.
    progress_position : int, optional
        Line of the progress bar (default 0).
    overwrite : bool, optional
        Move a non-empty folder's contents aside first (default ``False``).
    accountant : str or None, optional
        ``"best"``, ``"pld"`` or ``"rdp"``; ``None`` keeps the configuration's.

    Returns
    -------
    dict
        ``{"config", "checks", "files", "ran", "skipped", "moved_to"}``.

    Raises
    ------
    ValueError
        As :func:`plan_run`, or (``FolderRefused``, a ``ValueError``) if the output folder is
        refused: non-empty without ``resume`` or ``overwrite``, or holding another configuration.
    prirfed.experiments.outputs.FolderLocked
        If another run is using the folder.
    """
    where = "reproduce"
    plan = plan_run(name, mode=mode, seed=seed, backend=backend, overrides=overrides, calibrate=calibrate,
                    workers=workers, dask_scheduler=dask_scheduler, where=where, accountant=accountant)
    exp, config, specs, n, chash = plan.exp, plan.config, plan.specs, plan.n, plan.chash
    name = exp.name
    seqs = trial_seeds(plan.seed, n)
    record = dict(experiment=name, source=exp.source, config_hash=chash, config=config, seed=plan.seed, n_trials=n,
                  trial_seeds=[dict(entropy=str(s.entropy), spawn_key=list(s.spawn_key)) for s in seqs], trials=specs)
    with RunFolder.open(out, identity=plan.identity, resume=resume, overwrite=overwrite, where=where) as folder:
        folder.write_json(RECORD_NAME, record)
        results: list = [None] * n
        if resume:
            for i in range(n):
                results[i] = _trial_record(folder, i, plan, where)
        todo = [i for i in range(n) if results[i] is None]
        skipped = n - len(todo)
        _run_trials(exp, config, specs, seqs, todo, results, folder, chash, workers=workers, dask_scheduler=dask_scheduler,
                    progress=progress, progress_position=progress_position, skipped=skipped, where=where)
        with folder.staging() as (stage, published):
            checks = exp.report(config, results, stage)
        folder.write_text(SUMMARY_NAME, _summary_text(exp, config, chash, checks, n, skipped, workers))
        return dict(config=config, checks=checks, files=sorted(set(published) | {RECORD_NAME, SUMMARY_NAME}), ran=len(todo),
                    skipped=skipped, moved_to=folder.moved_to)


def _note(exc: BaseException, text: str) -> None:
    """Say where an exception happened, keeping its type (shown by the CLI after the message)."""
    if text not in getattr(exc, "__notes__", ()):
        exc.add_note(text)


def _run_trials(exp, config, specs, seqs, todo, results, folder, chash, *, workers, dask_scheduler, progress,
                progress_position, skipped, where):
    """Run trials ``todo`` through the executor; each finished trial is written at once."""
    from tqdm import tqdm

    name, n = exp.name, len(specs)
    executor, release = make_executor(int(workers), dask_scheduler, where=where)
    bar = tqdm(total=n, initial=skipped, desc=name, unit="trial", file=sys.stderr, disable=not progress,
               position=progress_position, leave=progress_position == 0)
    index_of: dict = {}

    def finish(fut):
        i = index_of[fut]
        try:
            _, res = fut.result()
        except BrokenProcessPool as exc:
            done = sum(r is not None for r in results)
            kept = (f"the {done} finished trials are kept in {folder.path / TRIALS_NAME}: rerun with --resume" if done
                    else "no trial had finished yet: rerun with --resume (the folder holds this run's config.json)")
            raise WorkerDied(f"{where}: a worker process of {name} died (killed, or out of memory) while trial {i} or "
                             f"another was running; {kept}") from exc
        except Exception as exc:
            _note(exc, f"in trial {i} of {name}")
            raise
        folder.write_trial(i, dict(index=i, config_hash=chash, spec=specs[i], result=res))
        results[i] = res
        bar.update(1)

    try:
        pending = []
        for i in todo:
            try:
                fut = executor.submit(_run_one, exp.run_trial, config, i, specs[i], seqs[i])
            except BrokenProcessPool as exc:
                raise WorkerDied(f"{where}: a worker process of {name} died (killed, or out of memory); the finished "
                                 f"trials are kept in {folder.path / TRIALS_NAME}: rerun with --resume") from exc
            index_of[fut] = i
            if fut.done():  # the serial executor: written before the next trial starts
                finish(fut)
            else:
                pending.append(fut)
        for fut in as_completed(pending):
            finish(fut)
    except BaseException:
        # Ctrl-C, a failing trial or a dead worker: keep every trial that did finish, drop the queued ones.
        _shutdown_now(executor)
        _keep_finished(index_of, results, folder, specs, chash)
        raise
    else:
        executor.shutdown(wait=True)
    finally:
        bar.close()
        release()


def _keep_finished(index_of: dict, results: list, folder, specs, chash) -> None:
    """Write the trials whose futures finished without error but were not written yet (a process
    pool's other workers, when one trial failed)."""
    for fut, i in index_of.items():
        if results[i] is not None or not fut.done() or fut.cancelled():
            continue
        try:
            if fut.exception(timeout=0) is not None:
                continue
            _, res = fut.result(timeout=0)
            folder.write_trial(i, dict(index=i, config_hash=chash, spec=specs[i], result=res))
            results[i] = res
        except Exception:  # noqa: BLE001 - best effort while another error is on its way to the caller
            continue


def reproduce_all(out, *, names=None, mode: str = "full", seed: int = 0, workers: int = 1, resume: bool = False,
                  backend: str = "verified", progress: bool = True, calibrate: bool = False,
                  dask_scheduler: str | None = None, overwrite: bool = False, accountant: str | None = None) -> dict:
    """Run every experiment (``names``, default all of ``EXPERIMENTS`` in order) into ``out/NAME``
    and write ``out/index.md``: one row per experiment (claims shown / total, link to its
    summary.md, time taken, status) and a total line.

    A failing experiment does not stop the others: its error is recorded in index.md (and in the
    returned ``failed``), and the caller (the CLI) exits non-zero. Ctrl-C stops everything (the
    finished trials stay on disk; ``resume=True`` skips them). With ``calibrate=True`` the private
    experiments (those with a ``"calibrate"`` setting) are calibrated and the others run as they
    are (index.md says so). Returns ``{"rows": [...], "failed": [names], "index": path, "moved_to"}``.

    The folder ``out`` is locked for the whole run and checked before any experiment runs: a
    non-empty ``out`` is refused unless ``resume=True`` (then every ``out/NAME`` must be empty or
    hold that experiment's run of this configuration, and an existing index.md must be one this
    function wrote) or ``overwrite=True`` (every entry of ``out`` is moved into the sibling
    ``moved_to``, :func:`~prirfed.experiments.outputs.move_aside`).

    Parameters
    ----------
    out : str or os.PathLike
        Output folder.
    names : sequence of str or None, optional
        Experiments (default all, in order).
    mode : str, optional
        ``"full"`` (default), ``"quick"`` or ``"tiny"``.
    seed : int, optional
        Root seed (default 0).
    workers : int, optional
        Local processes (default 1).
    resume : bool, optional
        Reuse finished trials (default ``False``).
    backend : str, optional
        ``"verified"`` (default) or ``"reference"``.
    progress : bool, optional
        Show progress bars (default ``True``).
    calibrate : bool, optional
        Calibrate the private experiments (default ``False``).
    dask_scheduler : str or None, optional
        Address of a Dask scheduler.
    overwrite : bool, optional
        Move a non-empty folder's contents aside first (default ``False``).
    accountant : str or None, optional
        Accountant of the private experiments.

    Returns
    -------
    dict
        ``{"rows": [...], "failed": [names], "index": path, "moved_to"}``.

    Raises
    ------
    ValueError
        If an argument is invalid or (``FolderRefused``) the output folder is refused, both checked
        before any experiment runs.
    prirfed.experiments.outputs.FolderLocked
        If another run is using the folder.
    """
    from tqdm import tqdm

    where = "reproduce_all"
    names = list(registry.EXPERIMENTS) if names is None else list(names)
    if not names:
        raise ValueError(f"{where}: no experiments to run")
    for nm in names:
        _check_args(where, nm, mode, seed, workers, backend)
    if resume and overwrite:
        raise ValueError(f"{where}: --resume and --overwrite exclude each other (resume keeps the finished trials, "
                         "overwrite moves them aside)")
    out = Path(out)
    state = inspect_folder(out)
    if state.kind == "not_a_folder":
        raise FolderRefused(f"{where}: output path {str(out)!r} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the output folder {out}: {exc.strerror or exc}") from exc
    with _locked(out) as lock:
        moved_to = None
        entries = sorted(e for e in os.listdir(out) if not e.startswith(".prirfed-") and e != LOCK_NAME)
        if entries and overwrite:
            moved_to = move_aside(lock.dfd, out)
        elif entries and not resume:
            raise FolderRefused(f"{where}: {out} is not empty ({len(entries)} entries: "
                                f"{', '.join(map(repr, entries[:3]))}{', ...' if len(entries) > 3 else ''}); add --resume "
                                "to continue its runs, or --overwrite to move its contents aside")
        elif entries:
            _check_resumable(out, names, mode=mode, seed=seed, backend=backend, calibrate=calibrate, where=where)
        rows = []
        bar = tqdm(total=len(names), desc="experiments", unit="exp", file=sys.stderr, disable=not progress, position=0)
        try:
            for nm in names:
                bar.set_postfix_str(nm)
                exp = registry.EXPERIMENTS[nm]
                t0 = time.perf_counter()
                note = ""
                try:
                    cfg0 = exp.make_config(mode, int(seed), backend)
                    cal = bool(calibrate) and "calibrate" in cfg0
                    acc = accountant if "accountant" in cfg0 else None  # the non-private experiments ignore it
                    note = "calibrated" if cal else ("not private: run without calibration" if calibrate else "")
                    r = reproduce(nm, out / nm, mode=mode, seed=seed, workers=workers, resume=resume, backend=backend,
                                  progress=progress, calibrate=cal, dask_scheduler=dask_scheduler, progress_position=1,
                                  accountant=acc)
                except Exception as exc:  # noqa: BLE001 - recorded in index.md; the CLI exits non-zero
                    notes = "".join(f" ({n})" for n in getattr(exc, "__notes__", ()))
                    msg = " ".join(f"{type(exc).__name__}: {exc}{notes}".split())
                    rows.append(dict(name=nm, source=exp.source, shown=None, total=None, seconds=time.perf_counter() - t0,
                                     status="failed", error=msg, note=note))
                else:
                    rows.append(dict(name=nm, source=exp.source, shown=sum(c.shown is True for c in r["checks"]),
                                     total=len(r["checks"]), seconds=time.perf_counter() - t0, status="ok", error="",
                                     note=note))
                bar.update(1)
                _write_index(out, rows, mode, seed, backend)  # after each experiment: a Ctrl-C keeps the table so far
        finally:
            bar.close()
    return dict(rows=rows, failed=[r["name"] for r in rows if r["status"] != "ok"], index=out / "index.md",
                moved_to=moved_to)


INDEX_TITLE = "# prirfed reproduce all"


class _locked:
    """The lock of a folder (:class:`~prirfed.experiments.outputs.FolderLock`) as a context manager."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> FolderLock:
        try:
            self.dfd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise OutputError(f"cannot open the output folder {self.path}: {exc.strerror or exc}") from exc
        try:
            self.lock = FolderLock(self.dfd, str(self.path))
        except BaseException:
            os.close(self.dfd)
            raise
        return self.lock

    def __exit__(self, *exc) -> None:
        try:
            self.lock.release()
        finally:
            os.close(self.dfd)


def _check_resumable(out: Path, names, *, mode, seed, backend, calibrate, where) -> None:
    """Under --resume, before anything runs: each out/NAME must be empty or hold that experiment's run
    of this configuration, and index.md (if any) must be one reproduce_all wrote. An experiment
    whose configuration cannot be built is left to fail in its turn (recorded in index.md)."""
    index = out / "index.md"
    if index.is_symlink() or (index.exists() and not index.is_file()):
        raise FolderRefused(f"{where}: --resume: {index} is not a regular file")
    if index.exists():
        with open(index, "rb") as fh:
            head = fh.read(len(INDEX_TITLE))
        if head != INDEX_TITLE.encode():
            raise FolderRefused(f"{where}: --resume: {index} was not written by prirfed reproduce all (it does not start "
                                f"with {INDEX_TITLE!r}); move it away or use --overwrite")
    for nm in names:
        exp = registry.EXPERIMENTS[nm]
        try:
            cal = bool(calibrate) and "calibrate" in exp.make_config(mode, int(seed), backend)
            plan = plan_run(nm, mode=mode, seed=seed, backend=backend, calibrate=cal, where=where)
        except Exception:  # noqa: BLE001 - reported by the experiment's own run
            continue
        st = inspect_folder(out / nm, plan.identity)
        why = refusal(st, str(out / nm), resume=True, where=where)
        if why is not None:
            raise FolderRefused(why)


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _write_index(out: Path, rows: list, mode: str, seed: int, backend: str) -> None:
    lines = [
        INDEX_TITLE,
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
    write_text(out / "index.md", "\n".join(lines) + "\n")


def _summary_text(exp: Experiment, config: dict, chash: str, checks: list, n: int, skipped: int, workers: int) -> str:
    lines = [
        f"# {exp.name}: {exp.description}",
        "",
        f"Source: {exp.source}. Mode `{config.get('mode')}`, seed {config.get('seed')}, backend `{config.get('backend')}`, "
        f"{n} trials ({skipped} reused by --resume), configuration hash `{chash}` (config.json).",
    ]
    for kind, head, what in (("paper", "paper's claim", "claims of the paper"),
                             ("ours", "our check (thresholds and settings ours, not the paper's)", "sanity checks of ours")):
        part = [c for c in checks if c.kind == kind]
        if not part:
            continue
        lines += ["", f"**{what[0].upper() + what[1:]}**", "", f"| {head} | reproduced | evidence (computed from the CSVs of this run) |",
                  "|---|---|---|"]
        lines += [f"| {c.claim} | {c.verdict} | {c.evidence} |" for c in part]
        inc = sum(c.shown is None for c in part)
        lines += ["", f"{sum(c.shown is True for c in part)} of {len(part)} {what} shown by this run"
                  + (f" ({inc} inconclusive)." if inc else ".")]
    if config.get("mode") in ("quick", "tiny"):
        lines += ["", f"Note: mode `{config.get('mode')}` uses scaled-down sizes; only mode `full` follows the paper's settings."]
    return "\n".join(lines) + "\n"

