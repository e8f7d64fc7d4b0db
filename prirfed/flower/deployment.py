"""A prirfed job on Flower's deployment engine: a SuperLink, SuperNodes and ``flwr run``.

A *job* (:func:`make_job`) is everything the ServerApp and the ClientApps of a run need, as JSON:
the algorithm and its settings, the run key, x^(0), the budget, and the data as a ``prirfed run``
configuration (its [problem] and [data] sections) with the data seed, from which each SuperNode
builds the problem and keeps only its agents' shards. The job travels in the Flower run config
(key ``prirfed-job``), so it reaches every SuperNode through the SuperLink.

:func:`run_deployment` starts ``flower-superlink`` and ``flower-supernode`` processes on 127.0.0.1
(insecure local mode, free ports, a private ``FLWR_HOME``), submits the run with ``flwr run``,
waits for the ServerApp's result file (at most ``timeout`` seconds), and ends the processes it
started by their process ids. The apps of :mod:`prirfed.flower.app` (:func:`deployed_apps`) are the
components of the Flower App it writes (also usable with your own SuperLink; see the docs page
"Federated runs with Flower").
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .protocol import FlowerRunResult, RoundServer, Sizes, key_from_words, key_words, make_key

__all__ = ["make_job", "problem_of_job", "run_deployment", "app_pyproject", "result_from_file", "result_to_file", "deployed_apps"]


def make_job(config: dict, data_seed: int, x0, algorithm: str, settings: dict, *, seed, supernodes: int,
             budget=None, delta=None, accountant: str = "best", timeout: float = 600.0) -> dict:
    """The JSON job of a run: ``config`` a ``prirfed run`` configuration (at least its [problem]
    and [data] tables, as :func:`prirfed.experiments.custom.config_from_toml` returns), the data
    drawn by ``np.random.default_rng(data_seed)``, the run key from ``seed`` (as the in-process
    trainers draw it)."""
    key = make_key(seed)
    return dict(algorithm=algorithm, settings=dict(settings), key=key_words(key),
                x0=np.asarray(x0, dtype=np.float64).tolist(), budget=None if budget is None else list(budget),
                delta=delta, accountant=accountant, timeout=float(timeout), supernodes=int(supernodes),
                data=dict(problem=config["problem"], data=config["data"], data_seed=int(data_seed)))


def problem_of_job(job: dict):
    """The federated problem of a job (every SuperNode builds it, then keeps its agents' shards)."""
    from prirfed.experiments.custom import build_problem

    d = job["data"]
    return build_problem(dict(problem=d["problem"], data=d["data"]), np.random.default_rng(d["data_seed"]))


def _server_of_job(job: dict, log) -> RoundServer:
    problem = problem_of_job(job)
    budget = None if job["budget"] is None else tuple(job["budget"])
    return RoundServer(job["algorithm"], Sizes.of(problem), np.asarray(job["x0"]), job["settings"],
                       key_from_words(job["key"]), budget=budget, delta=job["delta"], accountant=job["accountant"],
                       log=log)


def result_to_file(result: FlowerRunResult, path) -> None:
    """Write a run's result (JSON; arrays as nested lists: float64 round-trips exactly through JSON),
    atomically (a reader never sees half a file)."""
    out = dict(x=np.asarray(result.x).tolist(), iterates=[np.asarray(v).tolist() for v in result.iterates],
               epsilons=result.epsilons, refused=result.refused, missing=result.missing, rounds=result.rounds,
               stopped=result.stopped, info={k: v for k, v in result.info.items() if k != "log"},
               log=result.info.get("log"))
    part = Path(str(path) + ".part")
    part.write_text(json.dumps(out))
    os.replace(part, path)


def result_from_file(path, job: dict) -> FlowerRunResult:
    """The result written by the deployed ServerApp; the privacy event is rebuilt from the job and
    the number of rounds run (the same function the server used)."""
    d = json.loads(Path(path).read_text())
    server = _server_of_job(job, None)
    event, _ = server.event(d["rounds"])
    info = dict(d["info"], log=d["log"])
    return FlowerRunResult(x=np.array(d["x"]), iterates=[np.array(v) for v in d["iterates"]], event=event,
                           epsilons=d["epsilons"], refused=[tuple(r) for r in d["refused"]],
                           missing=[tuple(r) for r in d["missing"]], rounds=d["rounds"], stopped=d["stopped"], info=info)


def deployed_apps():
    """(server_app, client_app) of the deployed Flower App: the job from the run config's
    ``prirfed-job``, the result to the file ``prirfed-result`` (the module :mod:`prirfed.flower.app` holds them)."""
    from .apps import build_client_app, build_server_app, shards_for_node

    lines = []

    def make_server(context):
        lines.clear()
        return _server_of_job(json.loads(context.run_config["prirfed-job"]), lines.append)

    def on_result(result, context):
        result.info["log"] = list(lines)
        result_to_file(result, context.run_config["prirfed-result"])

    def min_nodes(context):
        return json.loads(context.run_config["prirfed-job"])["supernodes"]

    def load(context):
        return shards_for_node(problem_of_job(json.loads(context.run_config["prirfed-job"])), context)

    timeout = float(os.environ.get("PRIRFED_FLOWER_TIMEOUT", "600"))
    return build_server_app(make_server, on_result=on_result, min_nodes=min_nodes, timeout=timeout), build_client_app(load)


def app_pyproject(name: str = "prirfed-flower-run") -> str:
    """The pyproject.toml of the Flower App that runs prirfed jobs (components: this module)."""
    return f"""[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{name}"
version = "1.0.0"
description = "A prirfed job on Flower (written by prirfed.flower.deployment)"
dependencies = []

[tool.hatch.build.targets.wheel]
packages = ["."]

[tool.flwr.app]
publisher = "prirfed"

[tool.flwr.app.components]
serverapp = "prirfed.flower.app:server_app"
clientapp = "prirfed.flower.app:client_app"

[tool.flwr.app.config]
prirfed-job = ""
prirfed-result = ""
"""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bin(name: str) -> str:
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"prirfed.flower.run_deployment: {name} not found (pip install 'prirfed[flower]')")
    return found


def _toml_string(s: str) -> str:
    return json.dumps(s)  # a JSON string literal is a valid TOML basic string


def run_deployment(job: dict, *, workdir=None, timeout: float = 600.0, log=None) -> FlowerRunResult:
    """Run ``job`` (:func:`make_job`) on a local SuperLink and ``job["supernodes"]`` SuperNodes
    (127.0.0.1, insecure), each started here and ended by its process id when the run is over or
    ``timeout`` seconds have passed; returns the run's :class:`FlowerRunResult`. ``workdir``
    (default: a temporary folder, removed afterwards) keeps the app, the logs and the result."""
    from . import require_flwr

    require_flwr()
    say = log if log is not None else (lambda line: None)
    tmp = None
    if workdir is None:
        tmp = tempfile.mkdtemp(prefix="prirfed-flower-")
        workdir = tmp
    work = Path(workdir)
    app = work / "app"
    app.mkdir(parents=True, exist_ok=True)
    (app / "pyproject.toml").write_text(app_pyproject())
    (app / "prirfed_job.py").write_text('"""A prirfed job: the apps are prirfed.flower.deployment\'s."""\n')
    home = work / "flwr-home"
    home.mkdir(exist_ok=True)
    port = _free_port()
    (home / "config.toml").write_text(f'[superlink]\ndefault = "prirfed-local"\n\n[superlink.prirfed-local]\n'
                                      f'address = "127.0.0.1:{port}"\ninsecure = true\n')
    result_path = (work / "result.json").resolve()
    if result_path.exists():
        result_path.unlink()
    # the SuperLink starts its own helpers (flower-superexec) by name: the interpreter's scripts folder
    # goes first on PATH, so a venv that is not activated (CI calls .venv/bin/python) still finds them
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = dict(os.environ, FLWR_HOME=str(home), FLWR_TELEMETRY_ENABLED="0", PRIRFED_FLOWER_TIMEOUT=str(timeout),
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PATH=path)
    procs = []
    logs = []

    def start(name, args):
        f = open(work / f"{name}.log", "w")
        logs.append(f)
        p = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=work, start_new_session=True)
        procs.append((name, p))
        say(f"started {name} (pid {p.pid})")
        return p

    deadline = time.monotonic() + timeout
    try:
        start("superlink", [_bin("flower-superlink"), "--insecure", "--host", "127.0.0.1", "--port", str(port)])
        n = int(job["supernodes"])
        for p in range(n):
            start(f"supernode-{p}", [_bin("flower-supernode"), "--insecure", "--superlink", f"127.0.0.1:{port}",
                                     "--host", "127.0.0.1", "--port", str(_free_port()),
                                     "--node-config", f"partition-id={p} num-partitions={n}"])
        overrides = work / "run-config.toml"
        overrides.write_text(f"prirfed-job = {_toml_string(json.dumps(job))}\n"
                             f"prirfed-result = {_toml_string(str(result_path))}\n")
        submit = None
        accept_by = min(deadline, time.monotonic() + 60.0)  # the SuperLink listens within seconds
        while submit is None or submit.returncode != 0:
            if time.monotonic() > accept_by:
                raise RuntimeError(f"prirfed.flower.run_deployment: flwr run was not accepted "
                                   f"(last output: {'' if submit is None else (submit.stdout + submit.stderr)[-2000:]})")
            submit = subprocess.run([_bin("flwr"), "run", str(app), "--run-config", str(overrides)], env=env, cwd=work,
                                    capture_output=True, text=True, timeout=max(1.0, deadline - time.monotonic()))
            if submit.returncode != 0:
                time.sleep(1.0)  # the SuperLink may not listen yet
        say(f"flwr run: {submit.stdout.strip().splitlines()[-1] if submit.stdout.strip() else 'submitted'}")
        while not result_path.exists():
            for name, p in procs:
                if p.poll() is not None:
                    raise RuntimeError(f"prirfed.flower.run_deployment: {name} exited with code {p.returncode} "
                                       f"(log: {work / (name + '.log')})")
            if time.monotonic() > deadline:
                raise TimeoutError(f"prirfed.flower.run_deployment: no result within {timeout:g} s (logs in {work})")
            time.sleep(0.2)
        return result_from_file(result_path, job)
    finally:
        for name, p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)  # its own session: the process and the app processes it started
        for name, p in reversed(procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
            say(f"ended {name} (pid {p.pid}, exit code {p.returncode})")
        for f in logs:
            f.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
