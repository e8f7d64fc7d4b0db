"""The fused verified RFedSVRG / RFedAvg / RFedProx (prirfed.verified.trainers.rfed) replay the reference.

Oracle: prirfed.reference.trainers.rfed, whose algorithms are tested against 002 in tests/trainers/.
Same data, settings and Generator seed: every recorded iterate and the output agree (rtol 1e-10;
the twins differ only by the summation order of the agent gradients), so do the histories, and the
Generator ends in the same state (same bit-generator state and next rng.random()). Drawn settings:
sphere PCA, SPD Frechet mean and Stiefel kPCA (002 (3)); maps="exp" and, on the sphere and Stiefel,
maps="retraction"; the tangent and the Karcher aggregation.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds import Stiefel
from prirfed.reference.problems.stiefel_kpca import StiefelKPCA as RefStiefelKPCA
from prirfed.reference.trainers import rfed as ref
from prirfed.verified.problems import SPDFrechetMean, SpherePCA, StiefelKPCA
from prirfed.verified.trainers import rfed as ver
from prirfed.verified.trainers import rgd as vrgd
from verified_cases import assert_same_generator, assert_same_history, draw_problems, scale_of
from verified_cases import make_problems as _make_problems


def make_problems(kind, N, seed):
    """The shared problems, Stiefel kPCA with a drawn agent weighting."""
    return _make_problems(kind, N, seed, stiefel_weights=True)




@st.composite
def configurations(draw):
    kind, N, seed, P_ref, P_ver, x0 = draw_problems(draw, st.integers(1, 3), stiefel_weights=True)
    method = draw(st.sampled_from(["rfedsvrg", "rfedavg", "rfedprox"]))
    T = draw(st.integers(1, 3))
    k = draw(st.integers(1, N))
    eta = draw(st.sampled_from([0.05, 0.2]))
    if draw(st.booleans()):
        eta = [eta * (1 + 0.5 * i) for i in range(N)]
    tau = draw(st.sampled_from([1, 2, 3]))
    if draw(st.booleans()):
        tau = [1 + (i % 3) for i in range(N)]
    kw = dict(weighting=draw(st.sampled_from(["uniform", "size"])), record_every=draw(st.integers(1, 2)),
              keep_iterates=True, aggregation=draw(st.sampled_from(["tangent", "karcher"])),
              maps=draw(st.sampled_from(["exp", "retraction"])) if kind != "spd" else "exp")
    if method == "rfedsvrg":
        kw["option"] = draw(st.sampled_from([1, 2]))
    args = (T, k, eta, tau)
    if method == "rfedprox":
        args = args + (draw(st.sampled_from([0.0, 0.5, 2.0])),)
    return method, P_ref, P_ver, x0, args, seed, kw


@given(cfg=configurations())
def test_trajectories_and_generator_state_equal_reference(cfg):
    method, P_ref, P_ver, x0, args, seed, kw = cfg
    r_ref, r_ver = np.random.default_rng(seed), np.random.default_rng(seed)
    a = getattr(ref, method)(P_ref, x0, *args, r_ref, **kw)
    b = getattr(ver, method)(P_ver, x0, *args, r_ver, **kw)
    assert_same_history(a, b, scale_of(P_ref, x0))
    assert a.event is None and b.event is None
    assert_same_generator(r_ref, r_ver)


def test_reference_problem_class_and_a_longer_svrg_run_agree():
    """20 rounds of RFedSVRG, option 2, on a reference problem object (the wrapper accepts it)."""
    P, _, x0 = make_problems("sphere", 3, 4)
    r_ref, r_ver = np.random.default_rng(9), np.random.default_rng(9)
    a = ref.rfedsvrg(P, x0, 20, 2, 0.1, [1, 2, 3], r_ref, option=2, record_every=5, keep_iterates=True)
    b = ver.rfedsvrg(P, x0, 20, 2, 0.1, [1, 2, 3], r_ver, option=2, record_every=5, keep_iterates=True)
    assert b.history.rounds == [0, 5, 10, 15, 20] == a.history.rounds
    for xa, xb in zip(a.history.iterates, b.history.iterates, strict=True):
        np.testing.assert_allclose(xb, xa, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(b.x, a.x, rtol=1e-10, atol=1e-10)
    assert r_ref.bit_generator.state == r_ver.bit_generator.state


def test_rfedsvrg_on_the_circle_recomputed_from_scratch():
    """N = 3 clients, k = 2, tau = (1, 2, 3), option 2, T = 2 on S^1, recomputed here in angle
    coordinates (x = (cos t, sin t); a tangent vector is a multiple of (-sin t, cos t); Exp adds, Log
    subtracts the angle, transport keeps the multiple) from the documented streams: S_t from the
    server's stream of round t, client i's pick integers(1, tau_i + 1) from its stream of (t, i), the
    output integers(1, T + 1) from the server's stream of round T. f_ij = -(z^T x)^2 (000, c = 1),
    p_i = N_i / n; the server averages the uploads' angles uniformly (002 (8))."""
    from prirfed.reference.randomness import Stream, run_key

    Z = [np.array([[1.0, 0.3], [0.2, 0.9]]), np.array([[0.5, -0.4]]), np.array([[0.1, 1.0], [0.7, 0.2], [0.3, 0.3]])]
    P = SpherePCA(Z)
    eta, taus, T, k = 0.1, [1, 2, 3], 2, 2
    res = ver.rfedsvrg(P, np.array([1.0, 0.0]), T, k, eta, taus, np.random.default_rng(5), option=2)
    key = run_key(np.random.default_rng(5))
    n = sum(len(z) for z in Z)
    p = [len(z) / n for z in Z]

    def g_agent(i, th):  # d/dth of f_i = mean_j -(z_j . x)^2
        x, jx = np.array([np.cos(th), np.sin(th)]), np.array([-np.sin(th), np.cos(th)])
        return float(np.mean([-2.0 * (z @ x) * (z @ jx) for z in Z[i]]))

    th = 0.0
    outer = []
    for t in range(T):
        server = Stream(key, 1, t, 0)
        perm = [0, 1, 2]
        for j in range(k):
            r = server.integers(j, 3)
            perm[j], perm[r] = perm[r], perm[j]
        full = sum(p[i] * g_agent(i, th) for i in range(3))
        ups = []
        for i in perm[:k]:
            corr = g_agent(i, th) - full
            path, tl = [], th
            for _ in range(taus[i]):
                tl = tl - eta * (g_agent(i, tl) - corr)
                path.append(tl)
            ups.append(path[Stream(key, 0, t, i).integers(1, taus[i] + 1) - 1])
        th = th + np.mean([u - th for u in ups])
        outer.append(th)
    th_out = outer[Stream(key, 1, T, 0).integers(1, T + 1) - 1]
    np.testing.assert_allclose(res.x, [np.cos(th_out), np.sin(th_out)], rtol=1e-12, atol=1e-14)


def test_refusals_and_bad_input_raise_naming_the_trainer():
    P = SpherePCA([np.ones((2, 2)), np.ones((1, 2))])
    Q = SPDFrechetMean([np.eye(2)[None]])
    x = np.array([1.0, 0.0])
    rng = np.random.default_rng(0)
    cases = [
        (lambda: ver.rfedsvrg(P, x, 2, 1, 0.1, 1, rng, aggregation="median"),
         r"rfedsvrg \(verified\): aggregation must be 'tangent' or 'karcher'"),
        (lambda: ver.rfedavg(P, x, 2, 1, 0.1, 1, rng, maps="qr"), r"rfedavg \(verified\): maps must be"),
        (lambda: ver.rfedavg(Q, np.eye(2), 2, 1, 0.1, 1, rng, maps="retraction"),
         r"rfedavg \(verified\): maps='retraction' is fused only on the sphere and Stiefel"),
        (lambda: ver.rfedprox(P, x, 2, 1, 0.1, 1, -1.0, rng), r"rfedprox \(verified\): mu must be"),
        (lambda: ver.rfedavg(P, x, 2, 3, 0.1, 1, rng), r"rfedavg \(verified\): k must be in \[1, 2\]"),
        (lambda: ver.rfedavg(P, x, 2, 1, -0.1, 1, rng), r"rfedavg \(verified\): step sizes eta"),
        (lambda: ver.rfedavg(P, x, 2, 1, 0.1, 1.5, rng), r"rfedavg \(verified\): local step counts"),
        (lambda: ver.rfedavg(P, x, 2, 1, 0.1, 1, rng, weighting="x"), r"rfedavg \(verified\): weighting"),
        (lambda: ver.rfedsvrg(P, x, 2, 1, 0.1, 1, rng, option=3), r"rfedsvrg \(verified\): option must be"),
        (lambda: ver.rfedavg(P, x, 2, 1, 0.1, 1, 0), r"rfedavg \(verified\): rng must be"),
        (lambda: ver.rfedavg(P, np.array([1.0, 1.0]), 2, 1, 0.1, 1, rng), r"rfedavg \(verified\)"),
        (lambda: ver.rfedavg(P, x, 1, 1, 1e308, 1, rng), r"Sphere\.exp: \|\|v\|\| is not below 2\^52"),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            call()


def test_karcher_constants_are_the_reference_defaults():
    """The fused Karcher iteration uses karcher_mean's own defaults (tol, max_iter): read from its signature."""
    import inspect

    from prirfed.reference.trainers.aggregation import karcher_mean
    from prirfed.verified.trainers import codes

    sig = inspect.signature(karcher_mean).parameters
    assert codes.KARCHER_TOL == sig["tol"].default
    assert codes.KARCHER_MAX_ITER == sig["max_iter"].default


@pytest.mark.parametrize("method", ["rfedsvrg", "rfedavg", "rfedprox"])
def test_kpca_with_the_polar_retraction_a_longer_run_agrees(method):
    """002 section 5's setting in small: St(10, 3), N = 5 agents of 20 records, k = 3, tau = 5,
    maps="retraction", 15 rounds, option 2 for RFedSVRG; Karcher aggregation for RFedAvg.
    Every 5th iterate, the output and the Generator state agree with the reference."""
    rng = np.random.default_rng(11)
    Z = [rng.standard_normal((20, 10)) * np.linspace(1.0, 0.2, 10) / math.sqrt(200) for _ in range(5)]
    P_ref, P_ver = RefStiefelKPCA(Z, 3), StiefelKPCA(Z, 3)
    x0 = Stiefel(10, 3).random_point(rng)
    kw = dict(maps="retraction", record_every=5, keep_iterates=True)
    args = (15, 3, 0.5, 5)
    if method == "rfedsvrg":
        kw["option"] = 2
    if method == "rfedavg":
        kw["aggregation"] = "karcher"
    if method == "rfedprox":
        args = args + (0.3,)
    r_ref, r_ver = np.random.default_rng(2), np.random.default_rng(2)
    a = getattr(ref, method)(P_ref, x0, *args, r_ref, **kw)
    b = getattr(ver, method)(P_ver, x0, *args, r_ver, **kw)
    assert a.history.rounds == b.history.rounds == [0, 5, 10, 15]
    for xa, xb in zip(a.history.iterates, b.history.iterates, strict=True):
        np.testing.assert_allclose(xb, xa, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(b.x, a.x, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(b.history.dist_to_opt, a.history.dist_to_opt, rtol=1e-9, atol=1e-9)
    assert a.history.dist_to_opt[-1] < a.history.dist_to_opt[0]  # the run does make progress
    assert r_ref.bit_generator.state == r_ver.bit_generator.state


@pytest.mark.parametrize("length", [1e160, 1e300])
def test_a_huge_finite_polar_retraction_step_equals_the_reference(length):
    """The polar retraction (X + V)(I + V^T V)^(-1/2) takes any finite V: the reference evaluates it
    scale-invariantly, and for ||V||_F = 1e160 or 1e300 returns the polar factor of V up to X / ||V||.
    The fused loop refused such a step because ||V||_F^2 overflowed (a mutant dropping a later
    finiteness check led here). One RGD step of that length, verified and reference, lands on the
    same point of St(4, 2) (to 1e-12), and the exponential map refuses it in both (||V||_F >= 2^52)."""
    from prirfed.reference.trainers.rgd import rgd as ref_rgd

    rng = np.random.default_rng(4)
    Z = [rng.standard_normal((5, 4))]
    refP, verP = RefStiefelKPCA(Z, 2), StiefelKPCA(Z, 2)
    x0 = Stiefel(4, 2).random_point(rng)
    alpha = length / float(np.linalg.norm(refP.rgrad(x0)))
    a = ref_rgd(refP, x0, alpha, 1, maps="retraction", keep_iterates=True)
    b = vrgd.rgd(verP, x0, alpha, 1, maps="retraction", keep_iterates=True)
    assert np.all(np.isfinite(a.x)) and np.allclose(a.x.T @ a.x, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(b.x, a.x, rtol=0, atol=1e-12)
    for run in (ref_rgd, vrgd.rgd):
        with pytest.raises(ValueError, match="2\\^52"):
            run(refP if run is ref_rgd else verP, x0, alpha, 1, maps="exp")


def test_failures_inside_the_stiefel_loop_raise_value_error():
    """Huge steps fail in the fused Stiefel loops where and as they fail in the reference (no NaN, no
    crash). A step of 1e300 times a gradient of about 6 is finite: the exponential map refuses it in
    both twins (||V||_F >= 2^52), and with the polar retraction RFedAvg's server refuses the far
    local point (the Lyapunov equation of the inverse retraction is singular in both), while RGD,
    which never inverts a retraction, returns the same point in both. A step of 1.7e308 times that
    gradient overflows to inf: the loop refuses it by its own message, the reference refuses the
    non-finite step. (The loop once refused every step with ||V||_F^2 above float range, so its RGD
    raised where the reference returned a point, and this test asserted that mismatch.)"""
    from prirfed.reference.trainers.rgd import rgd as ref_rgd

    rng = np.random.default_rng(0)
    Z = [10.0 * rng.standard_normal((3, 4))]
    P, refP = StiefelKPCA(Z, 2), RefStiefelKPCA(Z, 2)
    x0 = Stiefel(4, 2).random_point(rng)
    assert 1.0 < float(np.max(np.abs(refP.rgrad(x0))))  # so that 1.7e308 times it overflows
    for run, prob in ((ver.rfedavg, P), (ref.rfedavg, refP)):
        with pytest.raises(ValueError, match="2\\^52"), np.errstate(over="ignore"):
            run(prob, x0, 2, 1, 1e300, 1, np.random.default_rng(0), maps="exp")
        with pytest.raises(ValueError, match="Lyapunov equation"), np.errstate(over="ignore"):
            run(prob, x0, 2, 1, 1e300, 1, np.random.default_rng(0), maps="retraction")
    np.testing.assert_allclose(vrgd.rgd(P, x0, 1e300, 2, maps="retraction").x,
                               ref_rgd(refP, x0, 1e300, 2, maps="retraction").x, rtol=0, atol=1e-12)
    for maps in ("retraction", "exp"):
        with pytest.raises(ValueError, match="Stiefel \\(verified loops\\): a step V is not finite"):
            ver.rfedavg(P, x0, 2, 1, 1.7e308, 1, np.random.default_rng(0), maps=maps)
        with pytest.raises(ValueError, match="Stiefel \\(verified loops\\): a step V is not finite"):
            vrgd.rgd(P, x0, 1.7e308, 2, maps=maps)
        with pytest.raises(ValueError), np.errstate(over="ignore"):
            ref_rgd(refP, x0, 1.7e308, 2, maps=maps)
