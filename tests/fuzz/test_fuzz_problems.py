"""Fuzz: the problems of both twins (constructors and every public method) on random and
adversarial input (issue 19).

Data are drawn at every magnitude (0, subnormal to 1e300) and possibly spoiled (NaN, inf,
complex, boolean, strings, wrong shapes); points are the manifolds' random points, possibly far
out or spoiled; indices are valid, out of range or of the wrong type. Property:
:func:`fuzz_common.assert_twins_agree` (constructors: the same ValueError or both succeed).
"""

import numpy as np
import pytest
from fuzz_common import assert_twins_agree, cond, finite_scale, magnitudes, outcome, spoil
from hypothesis import given
from hypothesis import strategies as st

import prirfed.reference.problems as RP
import prirfed.verified.problems as VP
from prirfed.reference import manifolds as RM

METHODS_IJ = ["f_ij", "egrad_ij", "rgrad_ij"]
METHODS_I = ["f_i", "egrad_i", "rgrad_i"]
METHODS = ["f", "egrad", "rgrad", "rgrad_norm"]
BAD_INDEX = [-1, 2, 10**20, 1.0, True, None, "0", np.int64(0), np.uint8(1)]


def _data(data, shape, label):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label=f"{label}: seed"))
    return spoil(data, rng.standard_normal(shape) * data.draw(magnitudes, label=f"{label}: scale"), label)


def _problem(data):
    kind = data.draw(st.sampled_from(["SpherePCA", "StiefelKPCA", "SPDFrechetMean", "HSP"]), label="problem")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="data seed"))
    if kind == "SpherePCA":
        args = ([_data(data, (3, 4), "Z0"), rng.standard_normal((2, 4))],)
        kw = {"paper": data.draw(st.sampled_from(["000", "002", "001", "999", None]), label="paper")}
        return kind, "SpherePCA", args, kw, RM.Sphere(3)
    if kind == "StiefelKPCA":
        args = ([_data(data, (3, 4), "Z0"), rng.standard_normal((2, 4))], data.draw(st.sampled_from([1, 2, 3, 0, 4, 1.5, True, None]), label="r"))
        return kind, "StiefelKPCA", args, {}, RM.Stiefel(4, 2)
    if kind == "SPDFrechetMean":
        S = RM.SPD(2)
        Z = np.stack([S.random_point(rng) for _ in range(3)]) * data.draw(magnitudes, label="Z scale")
        c = data.draw(st.one_of(magnitudes, st.sampled_from([0.0, -1.0, np.nan, True, None, "1"])), label="c")
        return kind, "SPDFrechetMean", ([spoil(data, Z, "Z")],), {"c": c}, S
    L = RM.Lorentz(2)
    radius = data.draw(st.sampled_from([0.1, 1.0, 10.0, 300.0]), label="Y radius")
    Y = np.stack([L.exp(L.origin(), np.array([0.0, *(u / np.linalg.norm(u))]) * radius)
                  for u in rng.standard_normal((3, 2))])
    W = _data(data, (3, 2), "W")
    gamma = data.draw(st.one_of(magnitudes, st.sampled_from([0.0, np.nan, True, None])), label="gamma")
    v_bar = data.draw(st.one_of(magnitudes, st.sampled_from([0.0, np.inf, "1"])), label="v_bar")
    return kind, "HyperbolicStructuredPrediction", ([W], [spoil(data, Y, "Y")], np.zeros(2), gamma, v_bar), {}, L


@given(data=st.data())
def test_problems_of_both_twins_agree(data):
    kind, cls, args, kw, M = _problem(data)
    ref = outcome(getattr(RP, cls), *args, **kw)
    ver = outcome(getattr(VP, cls), *args, **kw)
    assert ref.kind != "crash" and ver.kind != "crash", (ref, ver)
    assert ref.kind == ver.kind, (ref, ver)
    if ref.kind == "error":
        assert ref.value == ver.value
        return
    PR, PV = ref.value, ver.value
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="x seed"))
    x = PR.manifold.random_point(rng)
    if data.draw(st.booleans(), label="far x"):
        v = PR.manifold.random_tangent(x, rng)
        try:
            x = PR.manifold.exp(x, v / np.linalg.norm(v) * data.draw(st.sampled_from([3.0, 30.0, 300.0])))
        except ValueError:
            pass
    x = spoil(data, x, "x")
    method = data.draw(st.sampled_from(METHODS_IJ + METHODS_I + METHODS + ["rgrad_batch", "egrad_batch"]), label="method")
    i = data.draw(st.one_of(st.just(0), st.just(1), st.sampled_from(BAD_INDEX)), label="i")
    j = data.draw(st.one_of(st.just(0), st.just(1), st.sampled_from(BAD_INDEX)), label="j")
    J = data.draw(st.sampled_from([np.array([0, 1]), np.array([0]), np.array([], dtype=int), np.array([0.0]),
                                   np.array([5]), [0, 1], "0", None]), label="J")
    if method in METHODS_IJ:
        call_args = (x, i, j)
    elif method in METHODS_I:
        call_args = (x, i)
    elif method in METHODS:
        call_args = (x,)
    else:
        call_args = (x, i, J)
    r = outcome(getattr(PR, method), *call_args)
    v = outcome(getattr(PV, method), *call_args)
    scale = finite_scale(cond(M, x), cond(M, x), 1e2)  # the square as a capped product: cond can exceed 1e154
    assert_twins_agree(r, v, scale=scale, what=f"{cls}.{method}")


@pytest.mark.parametrize("cls", ["SpherePCA", "StiefelKPCA"])
def test_data_beyond_the_domain_are_refused_at_construction(cls):
    """Known answer of the domain bound N_i c_i max ||z_ij||^2 <= 2^1000: one agent with two rows of
    norm 2^500 (c = 1, N = 2: 2 * 2^1000 > 2^1000) is refused by both twins; 2^499 (2 * 2^998) is accepted."""
    args = (2,) if cls == "StiefelKPCA" else ()
    for mod in (RP, VP):
        Z = np.zeros((2, 4))
        Z[:, 0] = 2.0**500
        with pytest.raises(ValueError, match=rf"{cls}: Z\[0\] is outside the domain of the problem: N_i c_i max_j "
                                             r"\|\|z_ij\|\|\^2 = 2\.143e\+301 > 2\^1000"):
            getattr(mod, cls)([Z], *args)
        Z[:, 0] = 2.0**499  # c_i = 1 in both problems here (SpherePCA paper 000; StiefelKPCA N_i / 2)
        getattr(mod, cls)([Z], *args)
