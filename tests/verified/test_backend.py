"""prirfed.backend.trainers: the verified namespace runs the verified trainers, and runs the reference
trainer with a BackendFallbackWarning (saying why) exactly for the settings the verified one refuses.

Oracles: the reference and verified trainer functions called directly (a fallback run must be the
reference run: same output, history and final Generator state)."""

import math
import warnings

import numpy as np
import pytest

from prirfed.backend import BackendFallbackWarning, refusal, trainers
from prirfed.reference.manifolds import Euclidean
from prirfed.reference.problems.frechet_mean import FrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.trainers import prirfed as rp
from prirfed.reference.trainers import rfed as rf
from prirfed.reference.trainers import rgd as rr
from prirfed.verified.trainers import prirfed as vp
from prirfed.verified.trainers import rfed as vf
from prirfed.verified.trainers import rgd as vr

NAMES = ("prirfed", "rgd", "dp_rgd", "rfedsvrg", "rfedavg", "rfedprox")


def sphere_problem():
    Z = [np.array([[1.0, 0.5, 0.2], [0.1, 0.3, 0.9]]), np.array([[0.2, 1.0, 0.0]])]
    return SpherePCA(Z), np.array([1.0, 0.0, 0.0])


def calls(P, x0):
    """(name, args without rng, kwargs) for one ordinary call of every trainer."""
    return [
        ("prirfed", (P, x0, 2, 2, 0.1), dict(sigma=0.2, tau=1.0, K=2)),
        ("rgd", (P, x0, 0.1, 3), {}),
        ("dp_rgd", (P, x0, 0.1, 3, 2, 0.2), dict(tau=1.0, output=3)),
        ("rfedsvrg", (P, x0, 2, 2, 0.1, 2), dict(option=2)),
        ("rfedavg", (P, x0, 2, 2, 0.1, 2), {}),
        ("rfedprox", (P, x0, 2, 2, 0.1, 2, 0.5), {}),
    ]


def with_rng(name, args, rng):
    return args + (rng,) if name != "rgd" else args


def same_result(a, b, exact):
    assert a.history.rounds == b.history.rounds
    if exact:
        np.testing.assert_array_equal(a.x, b.x)
        assert a.history.f == b.history.f
    else:
        np.testing.assert_allclose(a.x, b.x, rtol=1e-10, atol=1e-10)
    assert a.event == b.event


def test_reference_namespace_is_the_reference_functions():
    tr = trainers("reference")
    assert tr.backend == "reference"
    for name, fn in zip(NAMES, (rp.prirfed, rr.rgd, rr.dp_rgd, rf.rfedsvrg, rf.rfedavg, rf.rfedprox)):
        assert getattr(tr, name) is fn


def test_verified_namespace_runs_the_verified_trainers_without_warning():
    """No warning, and the result is the direct verified call's, bit for bit, and the reference's to 1e-10."""
    P, x0 = sphere_problem()
    tr = trainers("verified")
    assert tr.backend == "verified"
    direct = dict(prirfed=vp.prirfed, rgd=vr.rgd, dp_rgd=vr.dp_rgd, rfedsvrg=vf.rfedsvrg, rfedavg=vf.rfedavg,
                  rfedprox=vf.rfedprox)
    for name, args, kw in calls(P, x0):
        r1, r2, r3 = (np.random.default_rng(4) for _ in range(3))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            a = getattr(tr, name)(*with_rng(name, args, r1), **kw)
        same_result(a, direct[name](*with_rng(name, args, r2), **kw), exact=True)
        same_result(a, getattr(trainers("reference"), name)(*with_rng(name, args, r3), **kw), exact=False)
        assert r1.bit_generator.state == r2.bit_generator.state == r3.bit_generator.state


def spd_problem():
    from prirfed.reference.problems.spd_frechet import SPDFrechetMean

    Z = [np.stack([np.eye(2), np.diag([2.0, 0.5])]), np.diag([1.0, 3.0])[None]]
    return SPDFrechetMean(Z), np.eye(2)


def kpca_problem():
    from prirfed.reference.problems.stiefel_kpca import StiefelKPCA

    rng = np.random.default_rng(3)
    P = StiefelKPCA([rng.standard_normal((3, 4)) / 3.0, rng.standard_normal((2, 4)) / 3.0], 2)
    return P, P.manifold.random_point(rng)


PROBLEMS = {"sphere": sphere_problem, "spd": spd_problem, "kpca": kpca_problem}


@pytest.mark.parametrize("name,kind,extra,why", [
    ("prirfed", "spd", dict(maps="retraction"), "maps='retraction' on SPD"),
    ("rgd", "sphere", dict(armijo=True), "armijo=True"),
    ("rgd", "kpca", dict(armijo=True), "armijo=True"),
    ("dp_rgd", "spd", dict(maps="retraction"), "maps='retraction' on SPD"),
    ("rfedsvrg", "spd", dict(maps="retraction", aggregation="karcher"), "maps='retraction' on SPD"),
    ("rfedprox", "spd", dict(maps="retraction"), "maps='retraction' on SPD"),
])
def test_refused_settings_fall_back_to_the_reference_with_a_warning_saying_why(name, kind, extra, why):
    P, x0 = PROBLEMS[kind]()
    args, kw = next((a, k) for n, a, k in calls(P, x0) if n == name)
    kw = {**kw, **extra}
    r1, r2 = np.random.default_rng(8), np.random.default_rng(8)
    with pytest.warns(BackendFallbackWarning, match=f"verified {name} refuses {why}.*running the reference {name}"):
        a = getattr(trainers("verified"), name)(*with_rng(name, args, r1), **kw)
    b = getattr(trainers("reference"), name)(*with_rng(name, args, r2), **kw)
    same_result(a, b, exact=True)
    assert r1.bit_generator.state == r2.bit_generator.state


@pytest.mark.parametrize("kind,extra,names", [
    ("sphere", dict(maps="retraction"), NAMES[1:]),  # prirfed on the retracted sphere: test_verified_prirfed
    ("sphere", dict(aggregation="karcher"), ("prirfed", "rfedsvrg", "rfedavg", "rfedprox")),
    ("kpca", dict(maps="retraction"), NAMES),
    ("kpca", {}, ("prirfed", "dp_rgd")),
    ("kpca", dict(maps="retraction", aggregation="karcher"), ("rfedavg",)),
])
def test_newly_fused_settings_do_not_fall_back(kind, extra, names):
    """The settings fused in session 2 (sphere retraction, Karcher aggregation, Stiefel kPCA) run the
    verified trainer: no warning, the direct verified call's result bit for bit."""
    P, x0 = PROBLEMS[kind]()
    direct = dict(prirfed=vp.prirfed, rgd=vr.rgd, dp_rgd=vr.dp_rgd, rfedsvrg=vf.rfedsvrg, rfedavg=vf.rfedavg,
                  rfedprox=vf.rfedprox)
    for name, args, kw in calls(P, x0):
        if name not in names:
            continue
        kw = {**kw, **extra}
        if name == "rgd":
            kw.pop("aggregation", None)
        assert refusal(name, {"problem": P, **kw}) is None
        r1, r2 = np.random.default_rng(4), np.random.default_rng(4)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            a = getattr(trainers("verified"), name)(*with_rng(name, args, r1), **kw)
        same_result(a, direct[name](*with_rng(name, args, r2), **kw), exact=True)
        assert r1.bit_generator.state == r2.bit_generator.state


def test_unsupported_problem_falls_back_with_a_warning_naming_it():
    """A Frechet mean on the Euclidean plane (no fused code): every trainer runs the reference."""
    rng = np.random.default_rng(0)
    P = FrechetMean(Euclidean(2), [rng.standard_normal((3, 2)), rng.standard_normal((2, 2))])
    x0 = np.zeros(2)
    for name, args, kw in calls(P, x0):
        r1, r2 = np.random.default_rng(1), np.random.default_rng(1)
        with pytest.warns(BackendFallbackWarning, match="the problem FrechetMean on Euclidean"):
            a = getattr(trainers("verified"), name)(*with_rng(name, args, r1), **kw)
        same_result(a, getattr(trainers("reference"), name)(*with_rng(name, args, r2), **kw), exact=True)
        assert r1.bit_generator.state == r2.bit_generator.state


def test_bad_input_is_not_a_fallback():
    """Invalid settings raise the verified trainer's ValueError; no warning, no reference run."""
    P, x0 = sphere_problem()
    tr = trainers("verified")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"prirfed \(verified\): s must be"):
            tr.prirfed(P, x0, 2, 5, 0.1, np.random.default_rng(0))
        with pytest.raises(ValueError, match=r"dp_rgd \(verified\): sigma must be"):
            tr.dp_rgd(P, x0, 0.1, 2, 1, -math.inf, np.random.default_rng(0))
        with pytest.raises(TypeError, match=r"rgd \(verified backend\)"):
            tr.rgd(P, x0)
    with pytest.raises(ValueError, match="trainers: backend must be 'verified' or 'reference'"):
        trainers("numba")
    with pytest.raises(ValueError, match="refusal: unknown trainer"):
        refusal("sgd", {})
