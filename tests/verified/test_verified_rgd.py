"""The fused verified RGD and DP-RGD (prirfed.verified.trainers.rgd) replay the reference trainers.

Oracle: prirfed.reference.trainers.rgd.rgd / dp_rgd, whose algorithms are tested against the papers
in tests/trainers/. Same problem data, settings and Generator seed: every recorded iterate and the
output agree (rtol 1e-10; the two differ only by the rounding of the summation order of the
gradients), the history, event and info agree, and the Generator ends in the same state (same
bit-generator state and same next rng.random()), so both consumed the same draws in the same order.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds import Sphere
from prirfed.reference.problems.sphere_pca import SpherePCA as RefSpherePCA
from prirfed.reference.trainers import rgd as ref
from prirfed.verified.problems import SpherePCA, StiefelKPCA
from prirfed.verified.trainers import rgd as ver
from verified_cases import assert_same_history, make_problems, scale_of








@st.composite
def dp_configurations(draw):
    kind = draw(st.sampled_from(["sphere", "spd", "stiefel"]))
    seed = draw(st.integers(0, 2**32 - 1))
    P_ref, P_ver, x0 = make_problems(kind, draw(st.integers(1, 3)), seed)
    T = draw(st.integers(1, 4))
    n = sum(P_ref.sizes)
    kw = dict(output=draw(st.sampled_from([1, 2, 3])), tau=draw(st.sampled_from([math.inf, 0.3, 1.0])),
              averaging=draw(st.sampled_from(["convex", "strongly_convex"])), record_every=draw(st.integers(1, 2)),
              keep_iterates=True, lipschitz=draw(st.sampled_from([None, 5.0])),
              maps=draw(st.sampled_from(["exp", "retraction"])) if kind != "spd" else "exp")
    b = draw(st.integers(1, n))
    sigma = draw(st.sampled_from([0.0, 0.05, 0.2]))
    alpha = draw(st.sampled_from([0.05, 0.2]))
    if draw(st.booleans()):
        alpha = [alpha / (t + 1) for t in range(T)]
    return P_ref, P_ver, x0, alpha, T, b, sigma, seed, kw


@given(cfg=dp_configurations())
def test_dp_rgd_trajectory_event_and_generator_state_equal_reference(cfg):
    """001 Algorithm 1, outputs 1-3, batch sampling, clipping, noise: both twins agree."""
    P_ref, P_ver, x0, alpha, T, b, sigma, seed, kw = cfg
    r_ref, r_ver = np.random.default_rng(seed), np.random.default_rng(seed)
    a = ref.dp_rgd(P_ref, x0, alpha, T, b, sigma, r_ref, **kw)
    bb = ver.dp_rgd(P_ver, x0, alpha, T, b, sigma, r_ver, **kw)
    assert_same_history(a, bb, scale_of(P_ref, x0))
    assert a.event == bb.event
    assert a.info == bb.info
    assert r_ref.bit_generator.state == r_ver.bit_generator.state
    assert r_ref.random() == r_ver.random()


@given(kind=st.sampled_from(["sphere", "spd", "stiefel"]), seed=st.integers(0, 2**32 - 1), T=st.integers(0, 5),
       record_every=st.integers(1, 3), decreasing=st.booleans(), retraction=st.booleans())
def test_rgd_fixed_step_trajectory_equals_reference(kind, seed, T, record_every, decreasing, retraction):
    """Sphere PCA, SPD Frechet mean, Stiefel kPCA; maps="retraction" drawn on the sphere and Stiefel."""
    P_ref, P_ver, x0 = make_problems(kind, 3, seed)
    alpha = [0.1 / (t + 1) for t in range(T)] if decreasing else 0.1
    maps = "retraction" if retraction and kind != "spd" else "exp"
    a = ref.rgd(P_ref, x0, alpha, T, record_every=record_every, keep_iterates=True, maps=maps)
    b = ver.rgd(P_ver, x0, alpha, T, record_every=record_every, keep_iterates=True, maps=maps)
    assert_same_history(a, b, scale_of(P_ref, x0))
    assert a.info == b.info


def test_rgd_gtol_stop_is_recorded_like_the_reference():
    """At the optimum of sphere PCA (an eigenvector) the gradient is 0 to rounding: with gtol = 1e-8
    both twins stop at iteration 0 with the same history and reason; with gtol in between the
    gradient norms of the run they stop at the same later iteration."""
    Z = [np.diag([3.0, 1.0, 0.5]), np.array([[0.3, 0.2, 0.1]])]
    P_ref, P_ver = RefSpherePCA(Z), SpherePCA(Z)
    x_opt = P_ref.x_star
    a = ref.rgd(P_ref, x_opt, 0.1, 5, gtol=1e-8, keep_iterates=True)
    b = ver.rgd(P_ver, x_opt, 0.1, 5, gtol=1e-8, keep_iterates=True)
    assert a.info["stopped"] is not None and a.info == b.info
    assert_same_history(a, b, 3.0)
    x0 = Sphere(2).random_point(np.random.default_rng(1))
    full = ref.rgd(P_ref, x0, 0.1, 30, record_every=1)
    gtol = float(np.sqrt(full.history.grad_norm[7] * full.history.grad_norm[8]))  # between rounds 7 and 8
    a = ref.rgd(P_ref, x0, 0.1, 30, gtol=gtol, record_every=4, keep_iterates=True)
    b = ver.rgd(P_ver, x0, 0.1, 30, gtol=gtol, record_every=4, keep_iterates=True)
    assert a.info["stopped"] == "||grad f|| <= gtol at iteration 8" == b.info["stopped"]
    assert a.history.rounds == [0, 4, 8] == b.history.rounds
    assert_same_history(a, b, 3.0)


def test_dp_rgd_on_the_circle_recomputed_from_scratch():
    """S^1, n = 3 pooled samples, b = 2, sigma > 0, clipping, output 2, T = 2, recomputed here in angle
    coordinates from the documented streams: step t reads agent 0's stream of round t (Fisher-Yates:
    integers(0, 3), integers(1, 3); then the noise, the projection of 2 ambient normals, i.e. its
    component along (-sin t, cos t)); the output w_k, k = integers(0, T) from the server's stream
    of round T. f_g = -(z_g^T x)^2 (000, c = 1)."""
    from prirfed.reference.randomness import Stream, run_key

    Z = [np.array([[1.0, 0.5], [0.1, 0.3]]), np.array([[0.2, 1.0]])]
    pooled = np.concatenate(Z)
    P = SpherePCA(Z)
    alpha, sigma, tau, T = 0.1, 0.5, 1.0, 2
    res = ver.dp_rgd(P, np.array([1.0, 0.0]), alpha, T, 2, sigma, np.random.default_rng(7), output=2, tau=tau)
    assert res.event is not None
    key = run_key(np.random.default_rng(7))
    th, its = 0.0, []
    for t in range(T):
        its.append(th)
        st = Stream(key, 0, t, 0)
        perm = [0, 1, 2]
        for j in range(2):
            r = st.integers(j, 3)
            perm[j], perm[r] = perm[r], perm[j]
        x, jx = np.array([np.cos(th), np.sin(th)]), np.array([-np.sin(th), np.cos(th)])
        g = 0.0
        for q in perm[:2]:
            z = pooled[q]
            gq = -2.0 * (z @ x) * (z @ jx)
            g += gq * min(1.0, tau / abs(gq)) if gq != 0 else 0.0
        e = sigma * st.standard_normal(2)
        th = th - alpha * (g / 2 + float(e @ jx))
    th_out = its[Stream(key, 1, T, 0).integers(0, T)]
    np.testing.assert_allclose(res.x, [np.cos(th_out), np.sin(th_out)], rtol=1e-12, atol=1e-14)


def test_refusals_and_bad_input_raise_naming_the_trainer():

    P = SpherePCA([np.ones((2, 2))])
    K = StiefelKPCA([np.eye(3)], 1)
    x = np.array([1.0, 0.0])
    rng = np.random.default_rng(0)
    cases = [
        (lambda: ver.rgd(P, x, 0.1, 2, armijo=True), r"rgd \(verified\): the Armijo line search is reference-only"),
        (lambda: ver.rgd(P, x, 0.1, 2, maps="qr"), r"rgd \(verified\): maps must be 'exp' or 'retraction'"),
        (lambda: ver.dp_rgd(K, K.manifold.random_point(rng), 0.1, 2, 1, 0.1, rng, maps="qr"),
         r"dp_rgd \(verified\): maps must be 'exp' or 'retraction'"),
        (lambda: ver.rgd(P, x, -0.1, 2), r"rgd \(verified\): step sizes must be positive"),
        (lambda: ver.rgd(P, np.array([1.0, 1.0]), 0.1, 2), r"rgd \(verified\)"),
        (lambda: ver.dp_rgd(P, x, 0.1, 2, 3, 0.1, rng), r"dp_rgd \(verified\): b must be in \[1, 2\]"),
        (lambda: ver.dp_rgd(P, x, 0.1, 2, 1, -1.0, rng), r"dp_rgd \(verified\): sigma must be finite"),
        (lambda: ver.dp_rgd(P, x, 0.1, 2, 1, 0.1, rng, output=4), r"dp_rgd \(verified\): output must be"),
        (lambda: ver.dp_rgd(P, x, 0.1, 2, 1, 0.1, 0), r"dp_rgd \(verified\): rng must be"),
        (lambda: ver.dp_rgd(P, x, 0.1, 2, 1, 0.1, rng, averaging="x"), r"dp_rgd \(verified\): averaging"),
        (lambda: ver.dp_rgd(P, x, 0.1, 2, 1, 0.1, rng, tau=0.0), r"dp_rgd \(verified\): clipping threshold"),
        # a step beyond the domain of Exp is refused by the Sphere kernel inside the loop (issue 19)
        (lambda: ver.dp_rgd(P, x, 1e308, 1, 1, 1e5, rng), r"Sphere\.exp: \|\|v\|\| is not below 2\^52"),
        (lambda: ver.rgd(P, x, 1e308, 1), r"Sphere\.exp: \|\|v\|\| is not below 2\^52"),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            call()
