"""``prirfed run CONFIG.toml``: any problem / data / trainer / privacy setting as an :class:`Experiment`.

A TOML file (read with :mod:`tomllib`) describes one run; :func:`experiment_from_toml` turns it
into an :class:`~prirfed.experiments.framework.Experiment` that :func:`~prirfed.experiments.framework.reproduce`
runs like the papers' experiments, so the outputs are the same: ``config.json``, ``curves.csv``
(f, ||grad f|| and the error to the optimum per recorded round, mean and sample standard
deviation over the repeats), ``privacy.csv``, ``curves.png`` / ``curves.pdf`` and ``summary.md``.
This module defines no module-level ``EXPERIMENT`` (it is not a paper experiment, so ``prirfed
list`` and ``reproduce all`` do not show it).

Schema (every section and key is checked; an unknown key is an error naming the section, the
key and the allowed keys; examples in ``examples/*.toml``). Types are never converted: a
boolean is not a number, the string ``"0.1"`` is not a number, a TOML date or time is no setting,
and an integer must fit 64 bits; each trainer key has its kind (:data:`TRAINER_KEY_KINDS`: an
integer, a number, a number or a per-agent list, a string, ...); trainer counts are at most
2^53 (:data:`MAX_COUNT`); at most :data:`MAX_AGENTS` agents and :data:`MAX_REPEATS` repeats::

    [problem]
    kind = "sphere_pca"        # sphere_pca | spd_frechet | stiefel_kpca | frechet_mean
    # sphere_pca:   paper = "000" | "001"             (default "000")
    # spd_frechet:  c = 1.0                           (000 (6.2) scale, default 1)
    # stiefel_kpca: r = 2 (columns), weights = "uniform" (002 (3), p_i = 1/N) | "samples" (p_i = N_i / sum N_k)
    # frechet_mean: (no keys; the generic Frechet mean on SPD(r) of the data)

    [data]
    source = "eigengap"        # eigengap | spiked | wishart | kpca_gaussian | iris | wine | digits
    N = 5                      # agents
    N_i = 40                   # records per agent: an integer or a list of N integers
    # eigengap (sphere_pca):       d (sphere dimension, points in R^(d+1)), nu = 1e-3, variant = "paper" | "authors_code"
    # wishart (spd_frechet, frechet_mean): r (matrix size), D_W = 1.0 (radius around I)
    # spiked (sphere_pca):         d (sphere dimension), spike = 9.0: unit-norm records z = g / ||g||,
    #     g ~ N(0, I + spike e_1 e_1^T) (prirfed.experiments.frontier.spiked_records; per-sample gradients <= 1)
    # kpca_gaussian (stiefel_kpca): d (dimension); agent i holds N_i Gaussian points
    # iris | wine | digits (sphere_pca, stiefel_kpca): preprocess = "standardize" | "center" | "none";
    #     a uniformly random subset of sum N_i records is split into the agents

    [trainer]
    name = "prirfed"           # prirfed | rgd | dp_rgd | rfedsvrg | rfedavg | rfedprox | dp_pgd | dp_frechet_mean
    # every other key is a keyword argument of that trainer (prirfed.reference.trainers / baselines),
    # e.g. T, s, alpha, local, K, b, sigma, tau for prirfed; problem, x0, rng, record_every and
    # keep_iterates are set by the runner. Kinds: T, s, K, m, k, n_steps, option, local_option,
    # output integers; b an integer or a per-agent list; alpha, sigma, eta, tau a number or a list;
    # tau0, tau1, mu, c, shrink, gtol, lipschitz, eps, D, tol numbers; armijo true/false; local,
    # aggregation, maps, averaging, weighting strings; W_hat a matrix (list of rows).

    [privacy]                  # optional
    eps = 1.0                  # the target of --calibrate, and the eps the run is checked against
    delta = 1e-5               # (dp_frechet_mean is pure eps-DP: delta is not used)
    accountant = "best"        # best (the tightest valid of PLD and RDP) | pld | rdp

    [run]                      # optional
    seed = 0                   # root seed (trial i: child i of SeedSequence(seed).spawn(repeats))
    repeats = 3                # independent runs (data, x0 and the trainer's draws all redrawn)
    record_every = 1           # record f, ||grad f||, error every this many rounds
    backend = "verified"       # "reference" or "verified" (fused Numba, compiled once per geometry);
                               # used when the command line gives no --backend

Privacy: the rigorous eps of the noise actually used is always reported (the run's own event,
``TrainResult.event``, composed in ``[privacy] accountant`` (default "best": the tightest valid of PLD
and RDP) and converted at ``[privacy] delta``, beside the attainable lower bound of that event; pure
eps for DP-FM). ``--calibrate`` (config key ``calibrate``) replaces the trainer's ``sigma`` by the
smallest sigma whose rigorous eps at ``delta`` is at most ``[privacy] eps``
(:func:`prirfed.reference.accounting.calibration.calibrate_sigma` on the same event builder the
trainer uses: :func:`~prirfed.reference.trainers.privacy.prirfed_run_event` or
:func:`~prirfed.reference.trainers.privacy.dp_rgd_run_event`); for ``dp_frechet_mean`` it sets
``eps``. The non-private trainers (rgd, rfedsvrg, rfedavg, rfedprox) refuse ``--calibrate``.
``--backend verified`` runs the fused Numba trainers where they exist (prirfed, rgd, dp_rgd,
rfed*; :mod:`prirfed.backend`, which falls back to the reference with a warning for settings it
does not fuse); dp_pgd and dp_frechet_mean are reference-only.
Proofs note: ``proofs_notes/experiments.md`` (section "prirfed run").
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import tomllib
from pathlib import Path

import numpy as np

from prirfed.reference.accounting.calibration import calibrate_sigma

from .core import BACKENDS, Check, Experiment, mean_and_spread, write_csv
from .framework import reproduce
from .plots import band, finish, new_figure
from .privacy import ACCOUNTANTS, epsilon_of, lower_epsilon_of

__all__ = ["experiment_from_toml", "config_from_toml", "load_toml", "PROBLEMS", "SOURCES", "TRAINERS", "SCHEMA",
           "TRAINER_KEY_KINDS", "MAX_AGENTS", "MAX_REPEATS", "MAX_COUNT", "FLOWER_TRAINERS"]

PROBLEMS = ("sphere_pca", "spd_frechet", "stiefel_kpca", "frechet_mean")
SOURCES = ("eigengap", "spiked", "wishart", "kpca_gaussian", "iris", "wine", "digits")
TRAINERS = ("prirfed", "rgd", "dp_rgd", "rfedsvrg", "rfedavg", "rfedprox", "dp_pgd", "dp_frechet_mean")
PRIVATE = {"prirfed": "sigma", "dp_rgd": "sigma", "dp_pgd": "sigma", "dp_frechet_mean": "eps"}

# problem kind -> its own keys with defaults
_PROBLEM_KEYS = {
    "sphere_pca": {"paper": "000"},
    "spd_frechet": {"c": 1.0},
    "stiefel_kpca": {"r": None, "weights": "uniform"},
    "frechet_mean": {},
}
# data source -> its own keys with defaults (None = required), and the problems it feeds
_SOURCE_KEYS = {
    "eigengap": {"d": None, "nu": 1e-3, "variant": "paper"},
    "spiked": {"d": None, "spike": 9.0},
    "wishart": {"r": None, "D_W": 1.0},
    "kpca_gaussian": {"d": None},
    "iris": {"preprocess": "standardize"},
    "wine": {"preprocess": "standardize"},
    "digits": {"preprocess": "center"},
}
_FEEDS = {
    "sphere_pca": ("eigengap", "spiked", "iris", "wine", "digits"),
    "spd_frechet": ("wishart",),
    "frechet_mean": ("wishart",),
    "stiefel_kpca": ("kpca_gaussian", "iris", "wine", "digits"),
}
_RUNNER_SET = ("problem", "x0", "rng", "record_every", "keep_iterates")
_SECTIONS = ("problem", "data", "trainer", "privacy", "run")
_RUN_KEYS = {"seed": 0, "repeats": 3, "record_every": 1, "backend": "verified"}
_PRIVACY_KEYS = ("eps", "delta", "accountant")

SCHEMA = dict(problems=PROBLEMS, sources=SOURCES, trainers=TRAINERS, sections=_SECTIONS)

#: the most agents a configuration may have (config.json lists N_i per agent)
MAX_AGENTS = 1_000_000
#: the most repeats (trials) a configuration may ask for (config.json lists every trial's seed)
MAX_REPEATS = 100_000
INT64_LIMIT = 2**63
#: the largest count (rounds, steps, batch sizes) a trainer key may hold: float64 holds every integer up to 2^53
MAX_COUNT = 2**53

# The kind of value each trainer keyword takes in a TOML file (the trainer itself checks ranges):
# "int" an integer; "number" an integer or a float; "*_or_list" also a list of them (per agent, or
# per round for alpha); "string"; "bool"; "matrix" a list of lists of numbers. Strings such as
# "0.1" and booleans are never numbers here (TOML has both; nothing converts one into the other).
TRAINER_KEY_KINDS = {
    "T": "int", "s": "int", "K": "int", "m": "int", "k": "int", "n_steps": "int", "option": "int", "local_option": "int",
    "output": "int",
    "b": "int_or_list",
    "alpha": "number_or_list", "sigma": "number_or_list", "eta": "number_or_list", "tau": "number_or_list",
    "tau0": "number", "tau1": "number", "mu": "number", "c": "number", "shrink": "number", "gtol": "number",
    "lipschitz": "number", "eps": "number", "D": "number", "tol": "number",
    "armijo": "bool",
    "local": "string", "aggregation": "string", "maps": "string", "averaging": "string", "weighting": "string",
    "W_hat": "matrix",
}
_KIND_TEXT = {
    "int": "an integer", "number": "a number", "int_or_list": "an integer or a list of integers",
    "number_or_list": "a number or a list of numbers", "string": "a string", "bool": "true or false",
    "matrix": "a matrix (a list of rows, each a list of numbers)",
}


def _err(section: str, key: str | None, msg: str) -> ValueError:
    where = f"[{section}]" if key is None else f"[{section}] {key}"
    return ValueError(f"prirfed run: {where}: {msg}")


def _reference_trainer(name: str):
    from prirfed.reference.trainers import baselines, rfed, rgd
    from prirfed.reference.trainers import prirfed as pr

    return {"prirfed": pr.prirfed, "rgd": rgd.rgd, "dp_rgd": rgd.dp_rgd, "rfedsvrg": rfed.rfedsvrg,
            "rfedavg": rfed.rfedavg, "rfedprox": rfed.rfedprox, "dp_pgd": baselines.dp_pgd,
            "dp_frechet_mean": baselines.dp_frechet_mean}[name]


def trainer_keys(name: str) -> tuple[list[str], list[str]]:
    """(required, optional) keyword names of trainer ``name`` that a TOML file may set."""
    sig = inspect.signature(_reference_trainer(name))
    req, opt = [], []
    for p in sig.parameters.values():
        if p.name in _RUNNER_SET:
            continue
        (req if p.default is inspect.Parameter.empty else opt).append(p.name)
    return req, opt


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _has_kind(kind: str, v) -> bool:
    if kind == "int":
        return _is_int(v)
    if kind == "number":
        return _is_num(v)
    if kind == "int_or_list":
        return _is_int(v) or (isinstance(v, list) and len(v) > 0 and all(_is_int(x) for x in v))
    if kind == "number_or_list":
        return _is_num(v) or (isinstance(v, list) and len(v) > 0 and all(_is_num(x) for x in v))
    if kind == "string":
        return isinstance(v, str)
    if kind == "bool":
        return isinstance(v, bool)
    if kind == "matrix":
        return (isinstance(v, list) and len(v) > 0
                and all(isinstance(r, list) and len(r) > 0 and all(_is_num(x) for x in r) for r in v))
    raise AssertionError(kind)


def _check_values(doc: dict) -> None:
    """Values TOML has but no setting takes: dates and times (TOML's date-time values) anywhere,
    and integers beyond 64 bits (NumPy and the trainers count in int64). Named by section and key."""
    import datetime

    def walk(v, section, key):
        if isinstance(v, (datetime.date, datetime.time)):  # datetime.datetime is a date
            raise _err(section, key, f"a date or time is not a setting (got {v.isoformat()})")
        if _is_int(v) and not -INT64_LIMIT < v < INT64_LIMIT:
            raise _err(section, key, f"integers must lie in (-2^63, 2^63) (got {v})")
        if isinstance(v, list):
            for x in v:
                walk(x, section, key)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, section, k if key is None else f"{key}.{k}")

    for section, table in doc.items():
        if isinstance(table, dict):
            for k, v in table.items():
                walk(v, section, k)
        else:
            walk(table, section, None)


def _table(doc: dict, section: str, required: bool) -> dict:
    t = doc.get(section)
    if t is None:
        if required:
            raise _err(section, None, f"missing section (sections: {', '.join(_SECTIONS)})")
        return {}
    if not isinstance(t, dict):
        raise _err(section, None, f"must be a table (got {type(t).__name__})")
    return t


def _unknown(section: str, table: dict, allowed) -> None:
    for k in table:
        if k not in allowed:
            raise _err(section, k, f"unknown key (allowed: {', '.join(allowed)})")


def _choice(section: str, key: str, value, allowed) -> str:
    if value not in allowed:
        raise _err(section, key, f"must be one of {', '.join(map(repr, allowed))} (got {value!r})")
    return value


def _pos_int(section: str, key: str, value, low: int = 1) -> int:
    if not _is_int(value) or value < low:
        raise _err(section, key, f"must be an integer >= {low} (got {value!r})")
    return value


def _pos_num(section: str, key: str, value) -> float:
    if not _is_num(value) or not (math.isfinite(value) and value > 0):
        raise _err(section, key, f"must be a finite number > 0 (got {value!r})")
    return float(value)


def config_from_toml(doc: dict) -> dict:
    """Check a parsed TOML document against the schema; return the canonical configuration
    (defaults filled in, JSON-serialisable). Every error is a ValueError naming section and key."""
    if not isinstance(doc, dict):
        raise ValueError(f"prirfed run: the configuration must be a TOML table (got {type(doc).__name__})")
    for k in doc:
        if k not in _SECTIONS:
            raise ValueError(f"prirfed run: unknown section [{k}] (allowed: {', '.join(f'[{s}]' for s in _SECTIONS)})")
    _check_values(doc)
    # [problem]
    pt = _table(doc, "problem", True)
    kind = _choice("problem", "kind", pt.get("kind"), PROBLEMS)
    allowed = ("kind", *_PROBLEM_KEYS[kind])
    _unknown("problem", pt, allowed)
    problem = {"kind": kind, **{k: pt.get(k, v) for k, v in _PROBLEM_KEYS[kind].items()}}
    if kind == "sphere_pca":
        _choice("problem", "paper", problem["paper"], ("000", "001"))
    if kind == "spd_frechet":
        problem["c"] = _pos_num("problem", "c", problem["c"])
    if kind == "stiefel_kpca":
        if problem["r"] is None:
            raise _err("problem", "r", "required for kind = 'stiefel_kpca' (number of columns of the Stiefel point)")
        _pos_int("problem", "r", problem["r"])
        _choice("problem", "weights", problem["weights"], ("uniform", "samples"))
    # [data]
    dt = _table(doc, "data", True)
    source = _choice("data", "source", dt.get("source"), SOURCES)
    if source not in _FEEDS[kind]:
        raise _err("data", "source", f"{source!r} does not give data for [problem] kind = {kind!r} "
                                     f"(allowed: {', '.join(map(repr, _FEEDS[kind]))})")
    allowed = ("source", "N", "N_i", *_SOURCE_KEYS[source])
    _unknown("data", dt, allowed)
    data = {"source": source, **{k: dt.get(k, v) for k, v in _SOURCE_KEYS[source].items()}}
    for k, v in data.items():
        if v is None:
            raise _err("data", k, f"required for source = {source!r}")
    if "N" not in dt or "N_i" not in dt:
        raise _err("data", "N" if "N" not in dt else "N_i", "required (number of agents N; records per agent N_i)")
    data["N"] = _pos_int("data", "N", dt["N"])
    if data["N"] > MAX_AGENTS:
        raise _err("data", "N", f"must be at most {MAX_AGENTS} agents (config.json lists N_i per agent; got {data['N']})")
    Ni = dt["N_i"]
    if _is_int(Ni):
        Ni = [Ni] * data["N"]
    if not isinstance(Ni, list) or len(Ni) != data["N"] or any(not _is_int(v) or v < 1 for v in Ni):
        raise _err("data", "N_i", f"must be an integer >= 1 or a list of N = {data['N']} such integers (got {dt['N_i']!r})")
    data["N_i"] = Ni
    for k in ("d", "r"):
        if k in data:
            data[k] = _pos_int("data", k, data[k], 2 if k == "d" and source != "eigengap" else 1)
    if source == "eigengap":
        data["nu"] = _pos_num("data", "nu", data["nu"])
        if not data["nu"] < 1 / 1.4:
            raise _err("data", "nu", f"must lie in (0, 1/1.4) so that 1 - 1.4 nu > 0 (got {data['nu']!r})")
        _choice("data", "variant", data["variant"], ("paper", "authors_code"))
        low = 4 if data["variant"] == "paper" else 5  # d + 1 >= the number of fixed singular values
        if data["d"] < low:
            raise _err("data", "d", f"must be >= {low} for variant {data['variant']!r} (d + 1 >= the fixed singular values; got {data['d']})")
        if min(Ni) < data["d"] + 1:
            raise _err("data", "N_i", f"must be >= d + 1 = {data['d'] + 1} for the eigengap data (column-orthonormal U_i; got {min(Ni)})")
    if source == "wishart":
        data["D_W"] = _pos_num("data", "D_W", data["D_W"])
    if source == "spiked":
        data["spike"] = _pos_num("data", "spike", data["spike"])
    if source in ("iris", "wine", "digits"):
        _choice("data", "preprocess", data["preprocess"], ("standardize", "center", "none"))
    if kind == "stiefel_kpca":
        dim = data["d"] if source == "kpca_gaussian" else {"iris": 4, "wine": 13, "digits": 64}[source]
        if problem["r"] >= dim:
            raise _err("problem", "r", f"must be < the data dimension {dim} (got {problem['r']})")
    # [trainer]
    tt = _table(doc, "trainer", True)
    name = _choice("trainer", "name", tt.get("name"), TRAINERS)
    req, opt = trainer_keys(name)
    _unknown("trainer", tt, ("name", *req, *opt))
    for k in req:
        if k not in tt:
            raise _err("trainer", k, f"required by trainer {name!r} (required: {', '.join(req)}; optional: {', '.join(opt)})")
    for k, v in tt.items():
        if k == "name":
            continue
        want = TRAINER_KEY_KINDS[k]
        if not _has_kind(want, v):
            raise _err("trainer", k, f"must be {_KIND_TEXT[want]} (got {v!r})")
        if want in ("int", "int_or_list") and any(x > MAX_COUNT for x in (v if isinstance(v, list) else [v])):
            raise _err("trainer", k, f"counts must be at most 2^53 = {MAX_COUNT} (float64 represents no larger count "
                                     f"exactly; got {v!r})")
    trainer = {k: v for k, v in tt.items()}
    if name == "dp_pgd" and kind != "sphere_pca":
        raise _err("trainer", "name", f"'dp_pgd' runs on the sphere only (001 section 5.1): use [problem] kind = 'sphere_pca' (got {kind!r})")
    if name == "dp_frechet_mean" and kind not in ("spd_frechet", "frechet_mean"):
        raise _err("trainer", "name", f"'dp_frechet_mean' samples on SPD: use [problem] kind = 'spd_frechet' or 'frechet_mean' (got {kind!r})")
    # [privacy]
    pv = _table(doc, "privacy", False)
    _unknown("privacy", pv, _PRIVACY_KEYS)
    privacy = {}
    if pv:
        for k in ("eps", "delta"):
            if k not in pv:
                raise _err("privacy", k, "required when [privacy] is given (eps and delta)")
        privacy["eps"] = _pos_num("privacy", "eps", pv["eps"])
        if not _is_num(pv["delta"]) or not 0 < pv["delta"] < 1:
            raise _err("privacy", "delta", f"must lie in (0, 1) (got {pv['delta']!r})")
        privacy["delta"] = float(pv["delta"])
        privacy["accountant"] = pv.get("accountant", "best")
        if privacy["accountant"] not in ACCOUNTANTS:
            raise _err("privacy", "accountant", f"must be one of {ACCOUNTANTS} (got {privacy['accountant']!r})")
    # [run]
    rt = _table(doc, "run", False)
    _unknown("run", rt, tuple(_RUN_KEYS))
    run = {k: rt.get(k, v) for k, v in _RUN_KEYS.items()}
    _pos_int("run", "seed", run["seed"], 0)
    _pos_int("run", "repeats", run["repeats"])
    if run["repeats"] > MAX_REPEATS:
        raise _err("run", "repeats", f"must be at most {MAX_REPEATS} (config.json lists every trial's seed; got {run['repeats']})")
    _pos_int("run", "record_every", run["record_every"])
    if run["backend"] not in BACKENDS:
        raise _err("run", "backend", f"must be one of {BACKENDS} (got {run['backend']!r})")
    cfg = dict(problem=problem, data=data, trainer=trainer, privacy=privacy, run=run)
    if name in PRIVATE:
        cfg["calibrate"] = False
    return cfg


def load_toml(path) -> dict:
    """Parse a TOML file; a syntax error becomes a one-line ValueError naming the file."""
    path = Path(path)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"prirfed run: cannot read {str(path)!r} ({exc.strerror or exc})") from None
    try:
        return tomllib.loads(text.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"prirfed run: {path.name} is not valid TOML ({exc})") from None


# ----------------------------------------------------------------------------- one trial


def _real(source: str):
    from prirfed.reference.data import real

    return {"iris": real.load_iris, "wine": real.load_wine, "digits": real.load_digits}[source]()[0]


def build_problem(cfg: dict, rng: np.random.Generator):
    """The federated problem of the configuration, its data drawn from ``rng``."""
    from prirfed.reference.data import partition, real, synthetic

    pc, dc = cfg["problem"], cfg["data"]
    kind, source, sizes = pc["kind"], dc["source"], dc["N_i"]
    if source == "eigengap":
        Z = [z.Z for z in synthetic.federated_eigengap_data(sizes, dc["d"], dc["nu"], rng, variant=dc["variant"])]
    elif source == "spiked":
        from .frontier import spiked_records

        Z = [spiked_records(n, dc["d"] + 1, [dc["spike"]], rng) for n in sizes]
    elif source == "wishart":
        Z = [synthetic.bounded_wishart(n, dc["r"], dc["D_W"], rng).X for n in sizes]
    elif source == "kpca_gaussian":
        Z = [rng.standard_normal((n, dc["d"])) for n in sizes]  # rows: agent i's points (002 5.2: X_i^T)
    else:
        X = _real(source)
        X = {"standardize": real.standardize, "center": real.center, "none": np.asarray}[dc["preprocess"]](X)
        if sum(sizes) > X.shape[0]:
            raise _err("data", "N_i", f"sum N_i = {sum(sizes)} exceeds the {X.shape[0]} records of {source}")
        Z = partition.split(X, partition.partition_sizes(X.shape[0], np.asarray(sizes, dtype=np.int64), rng))
    if kind == "sphere_pca":
        from prirfed.reference.problems.sphere_pca import SpherePCA

        return SpherePCA(Z, paper=pc["paper"])
    if kind == "spd_frechet":
        from prirfed.reference.problems.spd_frechet import SPDFrechetMean

        return SPDFrechetMean(Z, c=pc["c"])
    if kind == "stiefel_kpca":
        from prirfed.reference.problems.stiefel_kpca import StiefelKPCA

        return StiefelKPCA(Z, pc["r"], weights=pc["weights"])
    from prirfed.reference.manifolds.spd import SPD
    from prirfed.reference.problems.frechet_mean import FrechetMean

    return FrechetMean(SPD(dc["r"]), Z)


def _trainer_fn(name: str, backend: str):
    if name in ("dp_pgd", "dp_frechet_mean") or backend == "reference":
        return _reference_trainer(name)
    from prirfed.backend import trainers

    return getattr(trainers(backend), name)


def _privacy_event_of_sigma(cfg: dict, problem):
    """sigma -> the run's privacy event, built by the same function the trainer uses (before running)."""
    from prirfed.reference.trainers.privacy import dp_rgd_run_event, prirfed_run_event

    tr = cfg["trainer"]
    name = tr["name"]
    if name == "prirfed":
        local = tr.get("local", "dp_rsgd")
        N, sizes = problem.N, problem.sizes
        b = tr.get("b")
        bs = [sizes[i] for i in range(N)] if b is None else ([b] * N if _is_int(b) else list(b))
        tau = float(tr.get("tau", math.inf))
        tau0 = tau if tr.get("tau0") is None else float(tr["tau0"])
        tau1 = tau if tr.get("tau1") is None else float(tr["tau1"])
        return lambda sg: prirfed_run_event(problem, local=local, N=N, s=tr["s"], T=tr["T"], K=tr.get("K", 1),
                                            m=tr.get("m", 1), sigmas=[sg] * N, bs=bs, tau=tau, tau0=tau0, tau1=tau1)
    n = int(sum(problem.sizes))
    radius = float(tr.get("tau", math.inf))
    if name == "dp_rgd" and tr.get("lipschitz") is not None:
        radius = min(radius, float(tr["lipschitz"]))
    return lambda sg: dp_rgd_run_event(n=n, b=tr["b"], T=tr["T"], sigma=sg, sensitivity_radius=radius)


def calibrated_setting(cfg: dict, problem) -> tuple[str, float]:
    """(key, value) that --calibrate puts into the trainer's arguments: the smallest sigma whose
    rigorous eps at [privacy] delta is <= [privacy] eps; for DP-FM (pure eps-DP) eps itself."""
    name = cfg["trainer"]["name"]
    if not cfg["privacy"]:
        raise _err("privacy", None, "--calibrate needs the target: give [privacy] eps and delta")
    eps, delta = cfg["privacy"]["eps"], cfg["privacy"]["delta"]
    if name == "dp_frechet_mean":
        return "eps", eps
    event_of = _privacy_event_of_sigma(cfg, problem)

    def eps_of(sg):
        ev, why = event_of(sg)
        if ev is None:
            raise _err("trainer", "tau", f"--calibrate: the run is not private whatever sigma ({why})")
        return epsilon_of(ev, delta, cfg["privacy"]["accountant"])

    return "sigma", float(calibrate_sigma(eps_of, eps).sigma)


@functools.lru_cache(maxsize=8)
def _calibrated_cached(config_json: str) -> tuple[str, float]:
    """calibrated_setting depends on the configuration only (the agents' sizes are settings), so
    one bisection serves every repeat run in this process."""
    config = json.loads(config_json)
    sizes = config["data"]["N_i"]

    class _Sizes:  # what the event builders read from a problem
        N = len(sizes)

    _Sizes.sizes = list(sizes)
    return calibrated_setting(config, _Sizes)


def run_trial(config: dict, spec: dict, seq, runner=None) -> dict:
    """One repeat: data, x0 and the trainer's draws from children of the trial's SeedSequence.
    ``runner(config, problem, x0_rng, rng, name, settings) -> TrainResult`` replaces the in-process
    trainer call (``--engine flower``: :func:`prirfed.flower.engine.flower_trial`)."""
    data_seq, x0_seq, run_seq = seq.spawn(3)
    problem = build_problem(config, np.random.default_rng(data_seq))
    tr = dict(config["trainer"])
    name = tr.pop("name")
    if config.get("calibrate"):
        key, value = _calibrated_cached(json.dumps(config, sort_keys=True))
        tr[key] = value
    rng = np.random.default_rng(run_seq)
    if runner is not None:
        res = runner(config, problem, np.random.default_rng(x0_seq), rng, name, tr)
    elif name == "dp_frechet_mean":
        fn = _trainer_fn(name, config["backend"])
        res = fn(problem, rng=rng, **tr)
    else:
        fn = _trainer_fn(name, config["backend"])
        x0 = problem.manifold.random_point(np.random.default_rng(x0_seq))
        kw = dict(record_every=config["run"]["record_every"])
        if name != "rgd":
            kw["rng"] = rng
        try:
            res = fn(problem, x0, **tr, **kw)
        except TypeError as exc:  # a TOML value of the wrong kind reaching the trainer
            raise _err("trainer", None, f"{name}: {exc}") from None
    h = res.history
    out = dict(rounds=[int(t) for t in h.rounds], f=[float(v) for v in h.f], grad_norm=[float(v) for v in h.grad_norm],
               error=[float(v) for v in h.dist_to_opt], privacy=str(res.info.get("privacy", "not private")))
    if name in PRIVATE:
        # per-agent sigmas (a list, PriRFed) are summarised by the largest; the event uses each
        out["sigma"] = float(np.max(np.asarray(tr.get("sigma", res.info.get("sigma", math.nan)), dtype=np.float64)))
    if res.event is not None:
        delta = config["privacy"].get("delta")
        if name == "dp_frechet_mean":
            out["eps_rigorous"] = float(tr["eps"])
        elif delta is not None:
            out["eps_rigorous"] = epsilon_of(res.event, delta, config["privacy"]["accountant"])
            out["eps_rigorous_lower"] = lower_epsilon_of(res.event, delta)
    return out


#: the trainers ``--engine flower`` runs (prirfed.flower.protocol.ALGORITHMS)
FLOWER_TRAINERS = ("prirfed", "rfedsvrg", "rfedavg", "rfedprox")


def trial_specs(config: dict) -> list:
    return [dict(repeat=r) for r in range(config["run"]["repeats"])]


def report(config: dict, results: list, out) -> list:
    rounds = results[0]["rounds"]
    rows = []
    for k, t in enumerate(rounds):
        row = dict(round=t)
        for key in ("f", "grad_norm", "error"):
            m, s = mean_and_spread([r[key][k] for r in results])
            row[f"{key}_mean"], row[f"{key}_std"] = m, s
        rows.append(row)
    cols = ["round", "f_mean", "f_std", "grad_norm_mean", "grad_norm_std", "error_mean", "error_std"]
    write_csv(out / "curves.csv", cols, rows)
    name = config["trainer"]["name"]
    priv = config["privacy"]
    prow = dict(trainer=name, calibrate=str(bool(config.get("calibrate"))),
                eps_target=float(priv.get("eps", math.nan)), delta=float(priv.get("delta", math.nan)),
                sigma=float(results[0].get("sigma", math.nan)),
                eps_rigorous_lower=float(max(r.get("eps_rigorous_lower", math.nan) for r in results)),
                eps_rigorous=float(max(r.get("eps_rigorous", math.nan) for r in results)),
                privacy=results[0]["privacy"])
    write_csv(out / "privacy.csv", list(prow), [prow])
    _plot(out, rows, name)
    checks = [Check("custom run (prirfed run): no paper claim; f(x) at the last recorded round is below f(x^(0)) "
                    "(mean over repeats)", rows[-1]["f_mean"] < rows[0]["f_mean"],
                    f"f: {rows[0]['f_mean']:.6g} at round {rows[0]['round']} -> {rows[-1]['f_mean']:.6g} at round {rows[-1]['round']}; "
                    f"error to the optimum: {rows[0]['error_mean']:.4g} -> {rows[-1]['error_mean']:.4g}",
                    kind="ours")]
    if priv and name in PRIVATE:
        e = prow["eps_rigorous"]
        checks.append(Check(f"the run is ({priv['eps']:g}, {priv['delta']:g})-DP by the rigorous accountant "
                            "for the noise used", bool(e <= priv["eps"] * (1 + 1e-9)),
                            f"rigorous eps in [{prow['eps_rigorous_lower']:.6g}, {e:.6g}] (attainable lower bound, upper bound by the "
                            f"{priv.get('accountant', 'best')} accountant) at delta = {priv['delta']:g} with {('eps' if name == 'dp_frechet_mean' else 'sigma')}"
                            f" = {prow['eps_target'] if name == 'dp_frechet_mean' else prow['sigma']:.6g}"
                            f" ({'calibrated' if config.get('calibrate') else 'as given'}); {prow['privacy']}", kind="ours"))
    return checks


def _plot(out, rows, name):
    fig, grid = new_figure(1, 3, 12.0, 3.6)
    axes = grid[0]
    t = [r["round"] for r in rows]
    for ax, (key, label) in zip(axes, (("f", "f(x^(t))"), ("grad_norm", "||grad f(x^(t))||"), ("error", "error to optimum"))):
        m = np.array([r[f"{key}_mean"] for r in rows])
        band(ax, t, m, [r[f"{key}_std"] for r in rows], name)
        if key != "f" and np.all(np.isfinite(m)) and np.all(m > 0):
            ax.set_yscale("log")
        ax.set_xlabel("round t")
        ax.set_ylabel(label)
    axes[0].legend()
    finish(fig, out, "curves")


def experiment_from_toml(path_or_doc, *, name: str | None = None, engine: str = "inprocess",
                         supernodes: int | None = None, runner=None) -> Experiment:
    """An Experiment running the TOML configuration (a path, or an already parsed dict).

    ``engine="flower"`` runs each repeat with ``runner`` (:func:`run_trial`; the CLI passes
    :func:`prirfed.flower.engine.flower_trial`, Flower's simulation engine, extra ``pip install
    'prirfed[flower]'``) on ``supernodes`` SuperNodes (default one per agent); the trainer must be
    one of :data:`FLOWER_TRAINERS`. The engine and the SuperNodes are recorded in config.json.
    The configuration is checked here (every error a ValueError naming section and key);
    ``make_config(mode, seed, backend)`` ignores ``mode`` and ``seed`` (the TOML's [run] seed is
    the root seed: the CLI passes it to ``reproduce``).
    """
    if isinstance(path_or_doc, dict):
        doc, stem = path_or_doc, "custom"
    else:
        doc, stem = load_toml(path_or_doc), Path(path_or_doc).stem
    cfg = config_from_toml(doc)
    if engine not in ("inprocess", "flower"):
        raise ValueError(f"prirfed run: engine must be 'inprocess' or 'flower' (got {engine!r})")
    if engine == "flower":
        if cfg["trainer"]["name"] not in FLOWER_TRAINERS:
            raise _err("trainer", "name", f"--engine flower runs {', '.join(map(repr, FLOWER_TRAINERS))} "
                                          f"(got {cfg['trainer']['name']!r})")
        if supernodes is not None and not (_is_int(supernodes) and 1 <= supernodes <= cfg["data"]["N"]):
            raise ValueError(f"prirfed run: --supernodes must be an integer in [1, N = {cfg['data']['N']}] (got {supernodes!r})")
        if runner is None:
            raise ValueError("prirfed run: engine 'flower' needs its runner (prirfed.flower.engine.flower_trial)")
        cfg["engine"], cfg["supernodes"] = "flower", supernodes
    elif supernodes is not None:
        raise ValueError("prirfed run: --supernodes needs --engine flower")

    def make_config(mode: str, seed: int, backend: str) -> dict:
        if backend not in BACKENDS:
            raise ValueError(f"prirfed run: backend must be one of {BACKENDS} (got {backend!r})")
        return dict(mode="custom", seed=cfg["run"]["seed"], backend=backend, **{k: v for k, v in cfg.items()})

    tn, pk = cfg["trainer"]["name"], cfg["problem"]["kind"]
    return Experiment(name=name or f"run-{stem}", description=f"custom run: {tn} on {pk} ({cfg['data']['source']} data)",
                      source=f"prirfed run {stem}.toml (no paper claim)", make_config=make_config,
                      trial_specs=trial_specs,
                      run_trial=run_trial if runner is None else functools.partial(run_trial, runner=runner),
                      report=report,
                      nondeterministic_files=("curves.png", "curves.pdf"))


def run_toml(path, out, *, workers: int = 1, resume: bool = False, backend: str | None = None, progress: bool = True,
             calibrate: bool = False, dask_scheduler: str | None = None, overwrite: bool = False,
             accountant: str | None = None, engine: str = "inprocess", supernodes: int | None = None, runner=None) -> dict:
    """``prirfed run``: :func:`experiment_from_toml` run by :func:`~prirfed.experiments.framework.reproduce`
    with the TOML's [run] seed as the root seed (the output folder's rules: ``resume``, ``overwrite``,
    see there). ``backend=None``: the TOML's [run] backend (default "verified"). ``engine="flower"``:
    on Flower's simulation engine (one process: ``workers`` must be 1, no Dask). Returns reproduce's dict."""

    if engine == "flower" and (workers != 1 or dask_scheduler is not None):
        raise ValueError("prirfed run: --engine flower runs in this process (Flower's engine uses the cores): "
                         "use --workers 1 and no --dask-scheduler")
    exp = experiment_from_toml(path, engine=engine, supernodes=supernodes, runner=runner)
    cfg0 = exp.make_config("full", 0, "reference")
    seed = cfg0["seed"]
    backend = cfg0["run"]["backend"] if backend is None else backend
    return reproduce(exp, out, mode="full", seed=seed, workers=workers, resume=resume, backend=backend,
                     progress=progress, calibrate=calibrate, dask_scheduler=dask_scheduler, overwrite=overwrite,
                     accountant=accountant)
