"""The fused verified PriRFed (prirfed.verified.trainers.prirfed) replays the reference trainer.

Oracle: prirfed.reference.trainers.prirfed.prirfed, whose algorithm is tested against the paper in
tests/trainers/. For the same problem data, settings and Generator seed, both twins must give the
same iterate at every recorded round (rtol 1e-10: the kernels differ from the reference only by
rounding, and a few dozen steps amplify it far less), the same history (computed in compiled code
by the verified twin, by the problem's methods in the reference), output, event and info, and leave
the Generator in the same state (one run-key draw each). One round is also recomputed from scratch
from the documented streams, and the output is the same for 1 and 2 threads. Drawn: the tangent and the
Karcher aggregation; sphere PCA, SPD Frechet mean and Stiefel kPCA; on the sphere and Stiefel
maps="exp" or "retraction".
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds import Sphere
from prirfed.reference.trainers.base import sample_without_replacement
from prirfed.reference.trainers.prirfed import prirfed as ref_prirfed
from prirfed.verified.problems import SpherePCA
from prirfed.verified.trainers.prirfed import prirfed
from verified_cases import assert_same_generator, assert_same_history, draw_problems, make_problems




@st.composite
def configurations(draw):
    kind, N, seed, ref, ver, x0 = draw_problems(draw, st.integers(2, 4))
    T = draw(st.integers(1, 3))
    local = draw(st.sampled_from(["dp_rsgd", "dp_rsvrg"]))
    kw = dict(local=local, K=draw(st.integers(1, 3)), option=draw(st.sampled_from([1, 2])),
              local_option=draw(st.sampled_from([None, 1, 2])), record_every=draw(st.integers(1, 2)),
              keep_iterates=True, aggregation=draw(st.sampled_from(["tangent", "karcher"])),
              maps=draw(st.sampled_from(["exp", "retraction"])) if kind != "spd" else "exp")
    if local == "dp_rsgd":
        kw["b"] = draw(st.one_of(st.none(), st.just([draw(st.integers(1, k)) for k in ref.sizes])))
        kw["tau"] = draw(st.sampled_from([math.inf, 0.3, 1.0]))
    else:
        kw["m"] = draw(st.integers(1, 3))
        kw["tau0"] = draw(st.sampled_from([math.inf, 0.5]))
        kw["tau1"] = draw(st.sampled_from([math.inf, 0.3, 2.0]))
    sig = draw(st.sampled_from(["zero", "scalar", "per-agent"]))
    kw["sigma"] = {"zero": 0.0, "scalar": 0.2, "per-agent": [0.05 * (i + 1) for i in range(N)]}[sig]
    alpha = draw(st.sampled_from([0.05, 0.2]))
    if draw(st.booleans()):
        alpha = [alpha / (t + 1) for t in range(T)]
    s = draw(st.integers(1, N))
    return ref, ver, x0, T, s, alpha, seed, kw


def run_both(ref, ver, x0, T, s, alpha, seed, kw):
    r_ref, r_ver = np.random.default_rng(seed), np.random.default_rng(seed)
    a = ref_prirfed(ref, x0, T, s, alpha, r_ref, **kw)
    b = prirfed(ver, x0, T, s, alpha, r_ver, **kw)
    return a, b, r_ref, r_ver


def assert_same_run(a, b, r_ref, r_ver, scale):
    assert_same_history(a, b, scale)
    assert a.event == b.event
    assert a.info["privacy"] == b.info["privacy"]
    for k in ("T", "s", "K", "m", "local", "tau", "tau0", "tau1"):
        assert a.info[k] == b.info[k]
    np.testing.assert_array_equal(a.info["sigma"], b.info["sigma"])
    np.testing.assert_array_equal(a.info["b"], b.info["b"])
    assert_same_generator(r_ref, r_ver)


@given(cfg=configurations())
def test_trajectories_and_generator_state_equal_reference(cfg):
    """Every recorded iterate, the output, history, event and the Generator state agree."""
    ref, ver, x0, T, s, alpha, seed, kw = cfg
    a, b, r_ref, r_ver = run_both(ref, ver, x0, T, s, alpha, seed, kw)
    scale = max(1.0, float(np.max(np.abs(x0))), *(float(np.max(np.abs(z))) for z in ref.Z))
    assert_same_run(a, b, r_ref, r_ver, scale)


def test_reference_problem_classes_are_accepted_and_a_longer_noisy_run_agrees():
    """The wrapper takes reference problem classes too; 25 rounds of noisy clipped DP-RSGD agree."""
    ref, _, x0 = make_problems("sphere", 3, 11)
    kw = dict(K=2, b=1, sigma=0.3, tau=0.5, option=2, record_every=5, keep_iterates=True)
    a, b, r_ref, r_ver = run_both(ref, ref, x0, 25, 2, 0.1, 5, kw)
    assert_same_run(a, b, r_ref, r_ver, 1.0)
    assert b.history.rounds == [0, 5, 10, 15, 20, 25]


def test_one_round_on_the_circle_recomputed_from_scratch():
    """An independent computation of one private round on S^1 from the documented streams (the
    policy of prirfed.reference.randomness; formulas written out here, not the library's): s = N = 2,
    K = 1, b = N_i = 1, sigma > 0, clipping, option 1. The server's stream of round 0 draws
    S = Fisher-Yates(integers(0, 2), integers(1, 2)); agent i's stream of round 0 draws its batch
    (integers(0, 1): reads nothing) then 2 normals g, the noise P_x g; x_i = Exp_x(-alpha eta_i);
    x^(1) = Exp_x(sum_i w_i Log_x(x_i)), w_i = N_i / sum N. The caller's Generator advanced by the key."""
    from prirfed.reference.randomness import Stream, run_key

    Z = [np.array([[1.0, 0.5]]), np.array([[0.2, 1.0]])]
    P = SpherePCA(Z)
    x = np.array([1.0, 0.0])
    alpha, sigma, tau = 0.1, 0.5, 1.0
    rng = np.random.default_rng(3)
    res = prirfed(P, x, 1, 2, alpha, rng, K=1, sigma=sigma, tau=tau)
    assert res.event is not None
    hand = np.random.default_rng(3)
    key = run_key(hand)
    assert hand.bit_generator.state == rng.bit_generator.state
    server = Stream(key, 1, 0, 0)
    perm = [0, 1]
    r = server.integers(0, 2)
    perm[0], perm[r] = perm[r], perm[0]
    assert server.integers(1, 2) == 1 and server.words <= 1

    def exp(p, v):
        t = np.hypot(*v)
        return p if t == 0 else np.cos(t) * p + np.sin(t) / t * v

    def log(p, q):
        c = float(p @ q)
        u = q - c * p
        nu = np.hypot(*u)
        return np.arctan2(nu, c) * u / nu

    v = np.zeros(2)
    for i in perm:
        z = Z[i][0]
        a = float(z @ x)
        g = -2.0 * a * (z - a * x)  # grad f_ij on the sphere, c = 1
        nrm = np.hypot(*g)
        g = g * min(1.0, tau / nrm)
        st = Stream(key, 0, 0, i)
        e = sigma * st.standard_normal(2)
        eta = g + (e - float(x @ e) * x)
        v += 0.5 * log(x, exp(x, -alpha * eta))  # N_1 = N_2 = 1: weights 1/2
    np.testing.assert_allclose(res.x, exp(x, v), rtol=1e-13, atol=1e-15)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), data=st.data())
def test_sample_without_replacement_on_streams_equals_reference(seed, n, data):
    from prirfed.reference.randomness import Stream
    from prirfed.verified import randomness as vr

    k = data.draw(st.integers(0, n))
    key = np.random.default_rng(seed).integers(0, 2**64, size=2, dtype=np.uint64)
    a = sample_without_replacement(Stream(key, 1, seed % 7, 0), n, k)
    b = vr.sample_without_replacement(vr.open_stream(key, 1, seed % 7, 0), n, k)
    np.testing.assert_array_equal(a, b)
    assert sorted(set(a.tolist())) == sorted(a.tolist()) and all(0 <= v < n for v in a)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), data=st.data())
def test_batch_into_on_streams_equals_reference_batch_indices(seed, n, data):
    """The batch of a gradient step, both twins: the same indices and the same stream position after
    (the next word agrees), for every b including the full batch b = n that reads no word."""
    from prirfed.reference.randomness import Stream
    from prirfed.reference.trainers.base import batch_indices
    from prirfed.verified import randomness as vr

    b = data.draw(st.sampled_from([n, data.draw(st.integers(0, n))]))
    key = np.random.default_rng(seed).integers(0, 2**64, size=2, dtype=np.uint64)
    ref_stream = Stream(key, 0, seed % 7, 2)
    want = batch_indices(ref_stream, n, b)
    ver_stream = vr.open_stream(key, 0, seed % 7, 2)
    perm = np.empty(n, dtype=np.int64)
    vr.batch_into(ver_stream, perm, n, b)
    np.testing.assert_array_equal(perm[:b], want)
    assert vr.integers(ver_stream, 0, 2**62) == ref_stream.integers(0, 2**62)


def test_same_output_for_one_and_two_threads():
    """The agents of a round run in parallel (prange); each reads its own stream and writes its own
    row, so the run is bit-identical for 1 and 2 threads."""
    import numba

    ref, _, x0 = make_problems("sphere", 4, 21)
    kw = dict(K=2, b=1, sigma=0.3, tau=0.5, option=2, local_option=2, record_every=1, keep_iterates=True)
    before = numba.get_num_threads()
    out = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            out.append(prirfed(ref, x0, 6, 4, 0.1, np.random.default_rng(9), **kw))
    finally:
        numba.set_num_threads(before)
    a, b = out
    np.testing.assert_array_equal(a.x, b.x)
    for xa, xb in zip(a.history.iterates, b.history.iterates, strict=True):
        np.testing.assert_array_equal(xa, xb)
    assert a.history.f == b.history.f


@pytest.mark.parametrize("kwargs, match", [
    (dict(aggregation="median"), "aggregation must be 'tangent' or 'karcher'"),
    (dict(maps="qr"), "maps must be 'exp' or 'retraction'"),
    (dict(local="rsgd"), "local must be"),
    (dict(option=3), "option must be 1 or 2"),
    (dict(local_option=0), "local_option must be 1 or 2"),
    (dict(b=[3, 1]), r"b\[0\] must be in \[1, 2\]"),
    (dict(K=0), "K must be"),
    (dict(tau=0.0), "tau must be > 0"),
    (dict(sigma=-1.0), "sigma must be finite and >= 0"),
    (dict(record_every=0), "record_every must be"),
])
def test_bad_settings_raise_naming_the_trainer(kwargs, match):
    P = SpherePCA([np.ones((2, 2)), np.ones((1, 2))])
    with pytest.raises(ValueError, match=match):
        prirfed(P, np.array([1.0, 0.0]), 2, 1, 0.1, np.random.default_rng(0), **kwargs)


def test_bad_problem_point_step_and_generator_raise():
    P = SpherePCA([np.ones((2, 2)), np.ones((1, 2))])
    x = np.array([1.0, 0.0])
    with pytest.raises(ValueError, match="prirfed \\(verified\\).*unit norm|prirfed \\(verified\\)"):
        prirfed(P, np.array([1.0, 1.0]), 2, 1, 0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="step sizes must be positive"):
        prirfed(P, x, 2, 1, -0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        prirfed(P, x, 2, 1, 0.1, 0)
    with pytest.raises(ValueError, match="support SpherePCA, SPDFrechetMean, HyperbolicStructuredPrediction and StiefelKPCA"):
        prirfed(object.__new__(type("Other", (), {"manifold": Sphere(1), "sizes": [1]})), x, 1, 1, 0.1,
                np.random.default_rng(0))


def test_overflowing_steps_raise_instead_of_returning_nan():
    """A step of length 1e308 is refused inside the loop by the Sphere Exp kernel (issue 19: beyond
    ||v|| = 2^52 no float64 step determines the endpoint), before any iterate can become NaN."""
    P = SpherePCA([np.array([[1.0, 1.0]])])
    with pytest.raises(ValueError, match=r"Sphere\.exp: \|\|v\|\| is not below 2\^52"):
        prirfed(P, np.array([1.0, 0.0]) / 1.0, 1, 1, 1e308, np.random.default_rng(0), sigma=1e5)


@pytest.mark.parametrize("sizes,D", [((2, 1), 6), ((3, 3), 6), ((40, 25), 6), ((1,), 2), ((2,), 2)],
                         ids=["n<D", "n=D", "n>D", "n<D-single", "n>D-single"])
def test_sphere_history_from_the_data_or_the_covariance_equals_the_reference(sizes, D):
    """The sphere's history reads all n samples, or the D x D covariance A once there are more samples
    than coordinates (n > D). Either way every record equals the reference problem's f, ||grad f|| and
    angle to x* (computed by its own per-sample methods) to 1e-12, at random points and along a run;
    A is passed to the loops exactly when n > D."""
    from prirfed.reference.problems.sphere_pca import SpherePCA as RefSpherePCA
    from prirfed.verified.trainers.arrays import history_optimum, problem_arrays
    from prirfed.verified.trainers.geometry_sphere import record

    rng = np.random.default_rng(7)
    Z = [rng.standard_normal((k, D)) * rng.uniform(0.5, 2.0) for k in sizes]
    ref, ver = RefSpherePCA(Z, "002"), SpherePCA(Z, "002")
    arr = problem_arrays("test", ver)
    assert arr.A.shape == ((1, D, D) if sum(sizes) > D else (0, 0, 0))
    xstar = history_optimum(ver)
    scale = float(np.linalg.norm(ref.A, 2))
    for _ in range(5):
        x = Sphere(D - 1).random_point(rng)
        f, gn, err = record(arr.dims, x, arr.Z, arr.C, arr.offsets, arr.sizes, arr.A, arr.ps, xstar)
        assert math.isclose(f, ref.f(x), rel_tol=1e-12, abs_tol=1e-14 * scale)
        assert math.isclose(gn, ref.rgrad_norm(x), rel_tol=1e-12, abs_tol=1e-14 * scale)
        assert math.isclose(err, ref.angle_to_optimum(x), rel_tol=1e-12, abs_tol=1e-14)
    x0 = Sphere(D - 1).random_point(rng)
    a = ref_prirfed(ref, x0, 4, 1, 0.05, np.random.default_rng(3), sigma=0.1, tau=1.0, record_every=1)
    b = prirfed(ver, x0, 4, 1, 0.05, np.random.default_rng(3), sigma=0.1, tau=1.0, record_every=1)
    for name in ("f", "grad_norm", "dist_to_opt"):
        np.testing.assert_allclose(getattr(b.history, name), getattr(a.history, name), rtol=1e-12, atol=1e-14 * scale)


def test_a_long_sample_nearly_parallel_to_x_is_clipped_from_its_exact_norm():
    """||grad||^2 = s^2 (z^T z - a^2) cancels when z is nearly parallel to x; the fused loop then
    recomputes the norm from z - a x. Here z = 100 x0 + 1e-3 u (u a unit vector orthogonal to x0):
    z^T z - a^2 = 1e-6 is left after cancelling 1e4, so its float value is off by about 1e-6 relative.
    The clipped step (tau = 0.01 against a gradient norm of 0.2) must match the reference, which
    computes the norm of the projected gradient itself, to 1e-9 relative."""
    from prirfed.reference.problems.sphere_pca import SpherePCA as RefSpherePCA

    D = 6
    rng = np.random.default_rng(5)
    x0 = Sphere(D - 1).random_point(rng)
    u = rng.standard_normal(D)
    u -= (u @ x0) * x0
    u /= np.linalg.norm(u)
    Z = [(100.0 * x0 + 1e-3 * u)[None, :]]
    kw = dict(sigma=0.0, tau=0.01, record_every=1)
    a = ref_prirfed(RefSpherePCA(Z), x0, 1, 1, 0.05, np.random.default_rng(1), **kw)
    b = prirfed(SpherePCA(Z), x0, 1, 1, 0.05, np.random.default_rng(1), **kw)
    np.testing.assert_allclose(b.x - x0, a.x - x0, rtol=1e-9, atol=0)
    assert 1e-4 < np.linalg.norm(a.x - x0) < 1e-3  # a clipped step: alpha tau = 5e-4
