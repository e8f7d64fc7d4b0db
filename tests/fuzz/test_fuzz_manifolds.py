"""Fuzz: every public method of both manifold twins on random and adversarial input (issue 19).

Inputs: points drawn with the twins' own ``random_point`` and moved far out along geodesics
(Lorentz up to distance 340, SPD up to 25, Stiefel within the Newton logarithm's ball), tangent
vectors of every magnitude from 0 and subnormal to 1.7e308 (:data:`fuzz_common.magnitudes`), and
each argument possibly spoiled (NaN, inf, integer, boolean, complex, float32, list, strided,
Fortran order, wrong shape, scalar, string, object, None, off the manifold, subnormal). The
property is :func:`fuzz_common.assert_twins_agree`; the batched methods of the verified twins
are checked against their row-by-row contract (the single-point method on each row).
Profiles: ``ci`` (60 examples per test, derandomized) in CI, ``thorough`` for the record in
benchmarks/RESULTS.md.
"""

import numpy as np
import pytest
from fuzz_common import assert_twins_agree, cond, finite_scale, magnitudes, outcome, spoil, vnorm
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference import manifolds as RM
from prirfed.verified import manifolds as VM

GEOMS = {
    "Euclidean(3)": (RM.Euclidean(3), VM.Euclidean(3), 3.0),
    "Sphere(2)": (RM.Sphere(2), VM.Sphere(2), 3.0),
    "Sphere(7)": (RM.Sphere(7), VM.Sphere(7), 3.0),
    "Lorentz(2)": (RM.Lorentz(2), VM.Lorentz(2), 340.0),
    "SPD(2)": (RM.SPD(2), VM.SPD(2), 25.0),
    "SPD(5)": (RM.SPD(5), VM.SPD(5), 25.0),
    "Stiefel(4,2)": (RM.Stiefel(4, 2), VM.Stiefel(4, 2), 1.2),
    "Stiefel(3,1)": (RM.Stiefel(3, 1), VM.Stiefel(3, 1), 1.2),
}

COMMON = ["inner", "norm", "proj", "egrad2rgrad", "exp", "log", "dist", "transp", "retr", "inv_retr",
          "tangent_basis", "check_point", "check_tangent", "random_tangent"]
EXTRA = {"Lorentz": ["to_poincare", "from_poincare"],
         "Stiefel": ["retr_polar", "retr_qr", "inv_retr_polar", "inv_retr_qr", "orth_complement", "exp_eas"]}
POINT_VALUED = {"exp", "retr", "retr_polar", "retr_qr", "exp_eas", "from_poincare"}
STEP = {"exp", "retr", "retr_polar", "retr_qr", "exp_eas"}


def _unit_tangent(R, x, rng):
    v = R.random_tangent(x, rng)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def _walk(R, x, r, u):
    """Exp_x(r u), halving r until the reference accepts the step (on SPD, far steps have results that
    are not positive definite in float64 and Exp refuses them: the generator stays inside)."""
    while True:
        try:
            return R.exp(x, r * u)
        except ValueError:
            r *= 0.5


def _point(data, R, reach, label):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label=f"{label}: seed"))
    x = R.random_point(rng)
    if data.draw(st.booleans(), label=f"{label}: far"):
        x = _walk(R, x, data.draw(st.floats(0.0, reach), label=f"{label}: radius"), _unit_tangent(R, x, rng))
    return x


def _partner(data, R, x, reach):
    """A second point: near x, at a moderate or far distance, antipodal/opposite, or independent."""
    kind = data.draw(st.sampled_from(["near", "along", "independent", "minus", "same"]), label="y: kind")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="y: seed"))
    if kind == "near":
        # _walk: a unit Frobenius vector at a far SPD point can have a huge Riemannian length
        return _walk(R, x, data.draw(st.sampled_from([1e-12, 1e-8, 1e-4, 0.1])), _unit_tangent(R, x, rng))
    if kind == "along":
        return _walk(R, x, data.draw(st.floats(0.0, reach), label="y: distance"), _unit_tangent(R, x, rng))
    if kind == "minus":
        return -np.asarray(x)
    if kind == "same":
        return np.array(x, copy=True)
    return _point(data, R, reach, "y")


def _args(data, R, method, reach):
    x = _point(data, R, reach, "x")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="v: seed"))
    v = _unit_tangent(R, x, rng) * data.draw(magnitudes, label="|v|")
    if method in ("inner",):
        u = _unit_tangent(R, x, rng) * data.draw(magnitudes, label="|u|")
        return [x, u, v]
    if method in ("norm", "exp", "retr", "check_tangent", "retr_polar", "retr_qr", "exp_eas"):
        return [x, v]
    if method in ("proj", "egrad2rgrad"):
        return [x, rng.standard_normal(R.ambient_shape) * data.draw(magnitudes, label="|w|")]
    if method in ("log", "dist", "inv_retr", "inv_retr_polar", "inv_retr_qr"):
        return [x, _partner(data, R, x, reach)]
    if method == "transp":
        return [x, _partner(data, R, x, reach), v]
    if method in ("tangent_basis", "check_point", "to_poincare", "orth_complement"):
        return [x]
    if method == "from_poincare":
        p = rng.standard_normal(R.d)
        return [p / np.linalg.norm(p) * data.draw(st.sampled_from([0.0, 0.5, 0.999999, 1.0 - 1e-16, 1.0, 2.0]))]
    if method == "random_tangent":
        return [x]
    raise AssertionError(method)


def _scale(R, method, args):
    factors = [cond(R, a) for a in args[:2]]
    if method in STEP:
        factors.append(1.0 + vnorm(args[1]))
    if type(R).__name__ == "Stiefel" and method in ("log", "dist", "inv_retr", "inv_retr_polar", "inv_retr_qr", "transp"):
        factors.append(1e2)
    if type(R).__name__ == "Lorentz":
        factors.append(1e2)  # dist and Log are accurate to a relative eps x_0 (see the note)
    return finite_scale(*factors)


@pytest.mark.parametrize("geom", list(GEOMS))
@given(data=st.data())
def test_single_point_methods_of_both_twins_agree(geom, data):
    R, V, reach = GEOMS[geom]
    methods = COMMON + EXTRA.get(type(R).__name__, [])
    method = data.draw(st.sampled_from(methods), label="method")
    args = _args(data, R, method, reach)
    args = [spoil(data, a, f"arg{k}") for k, a in enumerate(args)]
    if method == "random_tangent":
        seed = data.draw(st.integers(0, 2**32 - 1), label="draw seed")
        ref = outcome(R.random_tangent, args[0], np.random.default_rng(seed))
        ver = outcome(V.random_tangent, args[0], np.random.default_rng(seed))
    else:
        ref = outcome(getattr(R, method), *args)
        ver = outcome(getattr(V, method), *args)
    check = R.check_point if method in POINT_VALUED else None
    assert_twins_agree(ref, ver, scale=_scale(R, method, args), check_point=check, what=f"{geom}.{method}")


def test_constructors_refuse_bad_sizes_with_value_error():
    """The constructors are shared code; what they accept must be a positive integer, and anything
    else (None, strings, booleans, floats that are not integers, NaN, inf, 0, negative) is a
    ValueError naming the class (TypeError for None before issue 19)."""
    bad = [None, "3", True, 2.5, float("nan"), float("inf"), 0, -1, 1j, [3]]
    for cls in (RM.Euclidean, RM.Sphere, RM.Lorentz, RM.SPD, VM.Euclidean, VM.Sphere, VM.Lorentz, VM.SPD):
        for b in bad:
            with pytest.raises(ValueError, match=cls.__name__):
                cls(b)
    for b in bad:
        for cls in (RM.Stiefel, VM.Stiefel):
            with pytest.raises(ValueError, match="Stiefel"):
                cls(b, 1)
            with pytest.raises(ValueError, match="Stiefel"):
                cls(4, b)


@pytest.mark.parametrize("geom", list(GEOMS))
@given(data=st.data(), n=st.integers(0, 4))
def test_batched_methods_accept_and_refuse_row_by_row(geom, data, n):
    """``V.m_batch(A, B)`` returns the stack of ``V.m(A[i], B[i])`` and raises exactly when one of
    them raises, with the first such row's message as ``"<Class>.m_batch: row i: <message>"``
    (issue 19: the batch and single-point checks used to disagree near the tolerances, on huge
    points and on long vectors)."""
    R, V, reach = GEOMS[geom]
    method = data.draw(st.sampled_from(["exp", "log", "dist", "transp"]), label="method")
    rows = []
    for i in range(n):
        args = _args(data, R, method, reach)
        rows.append([np.asarray(spoil_value(data, a), dtype=float) for a in args])
    shape = (n, *R.ambient_shape)
    stacks = [np.array([r[k] for r in rows], dtype=float).reshape(shape) for k in range(len(_args_names(method)))]
    got = outcome(getattr(V, method + "_batch"), *stacks)
    expected = None
    for i in range(n):
        o = outcome(getattr(V, method), *(s[i] for s in stacks))
        assert o.kind != "crash", o
        if o.kind == "error":
            prefix = f"{type(V).__name__}.{method}: "
            msg = o.value[len(prefix):] if o.value.startswith(prefix) else o.value
            expected = f"{type(V).__name__}.{method}_batch: row {i}: {msg}"
            break
    assert got.kind != "crash", got
    if expected is not None:
        assert got.kind == "error" and got.value == expected, f"batch {got!r}, expected error {expected!r}"
    else:
        assert got.kind == "ok", f"batch {got!r} but every single call succeeds"
        for i in range(n):
            single = getattr(V, method)(*(s[i] for s in stacks))
            np.testing.assert_array_equal(np.asarray(got.value)[i], single)


def _args_names(method):
    return {"exp": "XV", "log": "XY", "dist": "XY", "transp": "XYV"}[method]


def spoil_value(data, a):
    """Value-level spoilers only (the stack must stay a float array of the right shape)."""
    how = data.draw(st.sampled_from(["keep", "keep", "keep", "scale", "nan", "off", "subnormal"]), label="row spoiler")
    a = np.asarray(a, dtype=float)
    if how == "scale":
        return a * data.draw(magnitudes, label="row factor")
    if how == "nan":
        b = a.copy()
        b.flat[0] = np.nan
        return b
    if how == "off":
        return a * (1.0 + data.draw(st.sampled_from([1e-12, 1e-9, 1e-3])))
    if how == "subnormal":
        return np.full(a.shape, 5e-324)
    return a
