"""Fuzz: the trainers' entry points validate their arguments like their reference twins (issue 19).

Every public entry point of both twins (rgd, dp_rgd, prirfed, rfedavg, rfedsvrg, rfedprox,
dp_rsgd_local, dp_rsvrg_local) and of the :mod:`prirfed.backend` namespaces (``trainers("reference")``
against ``trainers("verified")``, which falls back to the reference for the settings the verified
trainers refuse, e.g. ``armijo=True``) is called on a small sphere PCA problem (N = 2 agents of 2
and 1 samples in R^3) with an argument replaced by an adversarial value; the rest is valid and
T, K are small, so a valid call runs in milliseconds once the loops are compiled.

Property (``fuzz_common.assert_twins_agree``): the reference and the verified twin raise the same
one-line ``ValueError`` (modulo the " (verified)" marker after the trainer's name), or both
return, and then the final point, the recorded f and ||grad f|| are finite, the point is on the
sphere, the histories have the same rounds, and the numbers agree to the twin tests' 1e-10
(relative to 1 + the largest magnitude; tests/verified/verified_cases.py) times
:func:`amplification`, the factor by which float64 rounding alone can carry two correct
implementations apart in that run. Where that leaves more than 1e-3 (steps of 1e14 radians, or a
step size whose iteration map expands by 1e4 per step: a chaotic run), each twin must still refuse
with a one-line ``ValueError`` or return finite numbers and a point on the sphere, but the two are
not compared (an argument refusal before the run is still compared exactly). Any other exception
(TypeError, OverflowError, MemoryError, a Numba typing error, ...) from either twin fails. A refusal
that comes from inside a run (a manifold or mechanism refusing an overflowing step; in the
verified twin a fused loop's fixed text) is compared by the name of the refusing function only.
When the reference refuses an argument before running, its message must name the trainer.

Two ways of choosing the values:

- ``test_every_listed_value_...``: every (trainer, argument, value) of the fixed lists ``VALUES``
  and ``POINTS`` (None, strings, bools, complex, NaN, inf, 0, negative, 2.5, 10**30, 1e308,
  subnormal, arrays, lists, the wrong random generator, spoiled starting points), exhaustively;
- ``test_random_values_...``: Hypothesis draws a trainer, an argument and a value from a wide
  strategy of its kind (any float, integers up to 2^200, text, complex numbers, lists, the
  ``fuzz_common.spoil`` variants of the starting point). Counts (T, K, b, ...) are drawn below
  5 or beyond the 2^62 cap, never in between: such counts are valid and would run for that long;
- ``test_two_random_values_...``: the same with two arguments spoiled at once, so the twins must
  also check in the same order (the first refusal is the one reported).
"""

import math
import warnings

import numpy as np
import pytest
from fuzz_common import RTOL, VERIFIED_MARKER, assert_twins_agree, outcome, spoil
from hypothesis import given
from hypothesis import strategies as st

import prirfed.reference.problems as RP
import prirfed.verified.problems as VP
from prirfed.backend import BackendFallbackWarning, trainers
from prirfed.reference.trainers import local as Rloc
from prirfed.reference.trainers import prirfed as Rpf
from prirfed.reference.trainers import rfed as Rrf
from prirfed.reference.trainers import rgd as Rrgd
from prirfed.verified.trainers import local as Vloc
from prirfed.verified.trainers import prirfed as Vpf
from prirfed.verified.trainers import rfed as Vrf
from prirfed.verified.trainers import rgd as Vrgd

Z = [np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0]]), np.array([[0.0, 0.5, 1.0]])]  # N = 2 agents, N_i = 2, 1
X0 = np.array([1.0, 0.0, 0.0])
RNG = "RNG"  # placeholder: a fresh Generator(seed 0) per call, the same for both twins
GENERATOR = "GENERATOR"  # placeholder: a fresh Generator(seed 1) as rng, elsewhere the Generator object OTHER
OTHER = np.random.default_rng(1)  # one object for both twins: a refusal quotes its repr (with its address)

ENTRIES = {
    "rgd": (Rrgd.rgd, Vrgd.rgd, dict(x0=X0, alpha=0.1, T=2),
            ["x0", "alpha", "T", "record_every", "gtol", "keep_iterates", "maps"]),
    "dp_rgd": (Rrgd.dp_rgd, Vrgd.dp_rgd, dict(x0=X0, alpha=0.1, T=2, b=1, sigma=0.1, rng=RNG),
               ["x0", "alpha", "T", "b", "sigma", "rng", "output", "tau", "lipschitz", "averaging", "record_every",
                "keep_iterates", "maps"]),
    "prirfed": (Rpf.prirfed, Vpf.prirfed, dict(x0=X0, T=2, s=1, alpha=0.1, rng=RNG),
                ["x0", "T", "s", "alpha", "rng", "local", "K", "b", "m", "sigma", "tau", "tau0", "tau1", "option",
                 "local_option", "aggregation", "record_every", "keep_iterates", "maps"]),
    "rfedavg": (Rrf.rfedavg, Vrf.rfedavg, dict(x0=X0, T=2, k=1, eta=0.1, tau=1, rng=RNG),
                ["x0", "T", "k", "eta", "tau", "rng", "aggregation", "weighting", "record_every", "keep_iterates",
                 "maps"]),
    "rfedsvrg": (Rrf.rfedsvrg, Vrf.rfedsvrg, dict(x0=X0, T=2, k=1, eta=0.1, tau=1, rng=RNG),
                 ["x0", "T", "k", "eta", "tau", "rng", "option", "aggregation", "weighting", "record_every",
                  "keep_iterates", "maps"]),
    "rfedprox": (Rrf.rfedprox, Vrf.rfedprox, dict(x0=X0, T=2, k=1, eta=0.1, tau=1, mu=0.1, rng=RNG),
                 ["x0", "T", "k", "eta", "tau", "mu", "rng", "aggregation", "weighting", "record_every",
                  "keep_iterates", "maps"]),
    "dp_rsgd_local": (Rloc.dp_rsgd_local, Vloc.dp_rsgd_local,
                      dict(i=0, x=X0, K=2, b=1, sigma=0.1, tau=1.0, alpha=0.1, rng=RNG),
                      ["i", "x", "K", "b", "sigma", "tau", "alpha", "rng", "option", "maps"]),
    "dp_rsvrg_local": (Rloc.dp_rsvrg_local, Vloc.dp_rsvrg_local,
                       dict(i=0, x=X0, K=2, m=1, sigma=0.1, tau0=1.0, tau1=1.0, alpha=0.1, rng=RNG),
                       ["i", "x", "K", "m", "sigma", "tau0", "tau1", "alpha", "rng", "option", "maps"]),
}

# the backend namespaces: trainers("reference").f against trainers("verified").f; rgd also with the
# Armijo line search (reference-only: the verified backend falls back to the reference for it)
_REF, _VER = trainers("reference"), trainers("verified")
for _name in ("prirfed", "rgd", "dp_rgd", "rfedsvrg", "rfedavg", "rfedprox"):
    _base, _args = ENTRIES[_name][2], list(ENTRIES[_name][3])
    ENTRIES[f"backend.{_name}"] = (getattr(_REF, _name), getattr(_VER, _name), _base, _args + ["armijo"] * (_name == "rgd"))
ENTRIES["backend.armijo.rgd"] = (_REF.rgd, _VER.rgd, dict(x0=X0, alpha=0.1, T=2, armijo=True),
                                 ["x0", "alpha", "T", "c", "shrink", "gtol", "maps"])

VALUES = [None, "a", True, False, -1, 0, 0.5, 1.5, 2, 3, 10**30, -(10**30), 2**62 + 1, math.nan, math.inf, -math.inf,
          1e308, -1e308, 1e-308, 5e-324, 1j, np.float32(0.1), np.int64(1), np.array(2.0), [1, 2], [0.1, math.nan],
          np.array([1.0]), np.array([]), (), {}, "exp", "retraction", "tangent", "karcher", "size", "convex",
          "dp_rsvrg", "auto", GENERATOR, np.random.RandomState(0)]
POINTS = [X0 * 2, np.array([1, 0, 0]), np.array([True, False, False]), X0.astype(complex), np.array([np.nan, 0, 0]),
          [1.0, 0.0, 0.0], np.zeros(4), np.zeros(3), "x", None, np.array([1e300, 0, 0]), np.array([0.6, 0.8, 0.0]),
          np.array([[1.0, 0.0, 0.0]])]


def _is_count(name, arg):
    """Arguments that are numbers of steps, agents, samples or an index: a valid large value runs for
    that long, so the random strategy draws them only small or beyond the cap."""
    counts = {"T", "s", "K", "b", "m", "k", "record_every", "i", "option", "local_option", "output"}
    return arg in counts or (arg == "tau" and "rfed" in name)


def _trainer(name):
    """The name the reference's messages start with ("backend.rgd" calls rgd)."""
    return name.split(".")[-1]


def _call(fn, P, kw):
    def value(k, v):
        if isinstance(v, str) and v == RNG:
            return np.random.default_rng(0)
        if isinstance(v, str) and v == GENERATOR:
            return np.random.default_rng(1) if k == "rng" else OTHER
        return v

    kw = {k: value(k, v) for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BackendFallbackWarning)
        o = outcome(fn, P, **kw)
    if o.kind == "ok" and hasattr(o.value, "x"):
        h = o.value.history  # a TrainResult: the final point, then f and ||grad f|| at the recorded rounds
        o.value = (o.value.x, np.asarray(h.rounds, dtype=float), np.asarray(h.f), np.asarray(h.grad_norm))
    return o


def _on_sphere(res):
    x = res[0] if isinstance(res, tuple) else res
    RP.SpherePCA(Z).manifold.check_point(x, where="the fuzz test")


#: max ||z||^2 over the samples: sphere PCA's Riemannian gradient is at most 2 c ||z||^2 and
#: Lipschitz with a constant at most 4 c ||z||^2 (c = 1 here)
_Z2 = max(float(np.max(np.sum(z * z, axis=1))) for z in Z)


def amplification(name, kw):
    """A bound on how far float64 rounding can carry the two twins apart in this run.

    The twins sum in different orders, so each step's length S (at most alpha (grad bound +
    noise)) differs by about one rounding, u S, and every later step multiplies a difference by at
    most 1 + alpha L (the update map's Lipschitz constant). The outputs can then differ by about
    u (1 + S) (1 + alpha L)^steps, whatever either twin does right: a step of 3e14 radians (alpha =
    3.1e14, found by the thorough run) ends anywhere on the sphere after one ulp of its length.
    Noise up to sigma (sqrt(D) + 8) per coordinate scale. Returns 1 for arguments that are not
    numbers (they are refused before any step)."""
    def num(k, default):
        v = kw.get(k, default)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(k)
        return abs(float(v))
    try:
        alpha = num("eta", 0.1) if "rfed" in name else num("alpha", 0.1)
        sigma = num("sigma", 0.0)
        scale = max([1.0] + [num(k, 1.0) for k in ("tau", "tau0", "tau1", "lipschitz") if k in kw and "rfed" not in name])
        steps = 1.0
        for k in ("T", "K", "m") + (("tau",) if "rfed" in name else ()):
            if k in kw:
                steps *= max(1.0, num(k, 1))
    except (TypeError, ValueError, OverflowError):
        return 1.0
    if not all(map(math.isfinite, (alpha, sigma, scale, steps))):
        return 1.0
    S = alpha * (2.0 * _Z2 + sigma * scale * (math.sqrt(3.0) + 8.0))
    return math.exp(min(700.0, math.log1p(S) + steps * math.log1p(alpha * 4.0 * _Z2)))


def check(name, kw, what):
    fr, fv = ENTRIES[name][:2]
    ref = _call(fr, RP.SpherePCA(Z), kw)
    ver = _call(fv, VP.SpherePCA(Z), kw)
    # a refusal before the run names the trainer; one from inside the run names the manifold or
    # mechanism that refused, and the fused loop says only which trainer stopped
    before = [o.kind == "error" and o.value.replace(VERIFIED_MARKER, "", 1).startswith(f"{_trainer(name)}:")
              for o in (ref, ver)]
    runtime = ref.kind == "error" and not before[0]
    # scale 100: the twin tests' rtol 1e-10 over fuzz_common.RTOL = 1e-12; times how far rounding
    # alone can carry the twins apart in this run
    scale = 1e2 * amplification(name, kw)
    if scale * RTOL > 1e-3 and not any(before):
        # the settings do not determine the output to 1e-3 in float64 (a chaotic run): each twin
        # must still refuse with a one-line ValueError or return finite numbers and a point on the sphere
        for o in (ref, ver):
            assert o.kind != "crash", f"{what}: {o.value}"
            if o.kind == "error":
                assert "\n" not in o.value, f"{what}: the message is not one line: {o.value!r}"
            else:
                assert_twins_agree(o, o, check_point=_on_sphere, what=what)
        return ref
    assert_twins_agree(ref, ver, scale=scale, check_point=_on_sphere, what=what, prefix_only=runtime)
    return ref


def check_one(name, arg, value):
    kw = dict(ENTRIES[name][2])
    kw[arg] = value
    return check(name, kw, f"{name}({arg}={value!r})")


CASES = [(name, arg) for name in sorted(ENTRIES) for arg in ENTRIES[name][3]]


@pytest.mark.parametrize("name, arg", CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_every_listed_value_is_refused_alike_or_runs_alike(name, arg):
    refused = 0
    for value in POINTS if arg in ("x0", "x") else VALUES:
        refused += check_one(name, arg, value).kind == "error"
    assert refused > 0  # every argument has some listed value it refuses


def _junk():
    return st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.complex_numbers(),
                     st.sampled_from([(), {}, np.array([]), np.random.RandomState(0), object(), b"1", GENERATOR]))


def _counts():
    return st.one_of(st.integers(-3, 4), st.integers(2**62 + 1, 2**200), st.integers(-(2**200), -1),
                     st.floats(-10.0, 10.0), st.floats(min_value=2.0**63), st.floats(max_value=-1.0),
                     st.sampled_from([math.nan, math.inf, -math.inf]), st.sampled_from([np.int64(2), np.float32(1.0)]))


def _reals():
    return st.one_of(st.floats(), st.integers(-(2**70), 2**70), st.sampled_from([np.float32(0.5), np.array(0.1)]))


def _value(name, arg, data):
    """A value for argument ``arg`` of trainer ``name`` from a strategy of its kind."""
    if arg in ("x0", "x"):
        return spoil(data, X0, label=arg)
    if arg in ("keep_iterates", "armijo"):
        return data.draw(st.one_of(st.booleans(), st.sampled_from([np.bool_(True), 0, 1, "no"]), _junk()), label=arg)
    if arg in ("maps", "local", "aggregation", "weighting", "averaging"):
        valid = {"maps": ["exp", "retraction"], "local": ["dp_rsgd", "dp_rsvrg"], "aggregation": ["tangent", "karcher"],
                 "weighting": ["uniform", "size"], "averaging": ["convex", "strongly_convex"]}[arg]
        return data.draw(st.one_of(st.sampled_from(valid), st.text(max_size=8), _junk(), _reals()), label=arg)
    if arg == "rng":
        return data.draw(st.one_of(st.just(GENERATOR), _junk(), _reals()), label=arg)
    if arg == "record_every":
        return data.draw(st.one_of(_counts(), st.just("auto"), st.text(max_size=4), _junk()), label=arg)
    scalar = _counts() if _is_count(name, arg) else _reals()
    return data.draw(st.one_of(scalar, _junk(), st.lists(scalar, min_size=1, max_size=3)), label=arg)


@given(name=st.sampled_from(sorted(ENTRIES)), data=st.data())
def test_random_values_are_refused_alike_or_run_alike(name, data):
    arg = data.draw(st.sampled_from(ENTRIES[name][3]), label="argument")
    check_one(name, arg, _value(name, arg, data))


@given(name=st.sampled_from(sorted(ENTRIES)), data=st.data())
def test_two_random_values_are_refused_alike_or_run_alike(name, data):
    args = data.draw(st.lists(st.sampled_from(ENTRIES[name][3]), min_size=2, max_size=2, unique=True), label="arguments")
    kw = dict(ENTRIES[name][2])
    for arg in args:
        kw[arg] = _value(name, arg, data)
    check(name, kw, f"{name}({', '.join(f'{a}={kw[a]!r}' for a in args)})")


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_valid_calls_of_both_twins_agree(name):
    fr, fv, base, _ = ENTRIES[name]
    ref = _call(fr, RP.SpherePCA(Z), base)
    ver = _call(fv, VP.SpherePCA(Z), base)
    assert ref.kind == ver.kind == "ok", (ref, ver)
    for r, v in zip(ref.value, ver.value):
        np.testing.assert_allclose(v, r, rtol=1e-12, atol=1e-14)
