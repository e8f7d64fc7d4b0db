"""Fuzz: the mechanisms of both twins on random and adversarial input (issue 19).

clip, the exact tangent Gaussian samplers (basis and SPD closed form), the mechanism, the
Metropolis-Hastings baseline, the log-density and the scalar calibrations, with tangent vectors
of every magnitude, adversarial sigma/tau/eps/delta/sensitivity (0, subnormal, huge, NaN, inf,
booleans, strings, None, complex) and spoiled arrays. Samplers are called with Generators in the
same state, so equal results mean equal draws. Property: :func:`fuzz_common.assert_twins_agree`.
"""

import math

import numpy as np
import pytest
from fuzz_common import assert_twins_agree, magnitudes, outcome, spoil
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference import manifolds as RM
from prirfed.reference import mechanisms as RMe
from prirfed.verified import manifolds as VM
from prirfed.verified import mechanisms as VMe

GEOMS = {
    "Euclidean(3)": (RM.Euclidean(3), VM.Euclidean(3)),
    "Sphere(2)": (RM.Sphere(2), VM.Sphere(2)),
    "Lorentz(2)": (RM.Lorentz(2), VM.Lorentz(2)),
    "SPD(2)": (RM.SPD(2), VM.SPD(2)),
    "Stiefel(4,2)": (RM.Stiefel(4, 2), VM.Stiefel(4, 2)),
}

BAD_SCALARS = [0.0, -1.0, 5e-324, 1e-300, 1e300, 1.7e308, math.nan, math.inf, -math.inf, True, None, "1", 1j,
               np.float32(0.5), np.int64(2), np.array([1.0]), [1.0]]
scalars = st.one_of(magnitudes, st.sampled_from(BAD_SCALARS))


def _point_and_tangent(data, R):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = R.random_point(rng)
    v = R.random_tangent(x, rng)
    v = v / np.linalg.norm(v) * data.draw(magnitudes, label="|v|")
    return spoil(data, x, "x"), spoil(data, v, "v")


@pytest.mark.parametrize("geom", list(GEOMS))
@given(data=st.data())
def test_mechanisms_of_both_twins_agree(geom, data):
    R, V = GEOMS[geom]
    x, v = _point_and_tangent(data, R)
    fn = data.draw(st.sampled_from(["clip", "sample_tangent_gaussian", "tangent_gaussian_mechanism",
                                    "tangent_gaussian_logpdf", "sample_tangent_gaussian_mh", "sample_tangent_gaussian_spd"]),
                   label="function")
    seed = data.draw(st.integers(0, 2**32 - 1), label="draw seed")
    s = data.draw(scalars, label="sigma or tau")
    size = data.draw(st.sampled_from([None, None, 1, 3, 0, -1, 2.5, True, "2"]), label="size")
    M_for = {"ref": R, "ver": V}

    def call(mod, twin):
        M = M_for[twin]
        rng = np.random.default_rng(seed)
        if fn == "clip":
            return outcome(mod.clip, M, x, v, s)
        if fn == "sample_tangent_gaussian":
            return outcome(mod.sample_tangent_gaussian, M, x, s, rng, size=size)
        if fn == "tangent_gaussian_mechanism":
            return outcome(mod.tangent_gaussian_mechanism, M, x, v, s, rng)
        if fn == "tangent_gaussian_logpdf":
            return outcome(mod.tangent_gaussian_logpdf, M, x, v, s)
        if fn == "sample_tangent_gaussian_mh":
            return outcome(mod.sample_tangent_gaussian_mh, M, x, s, rng, 3, return_acceptance=True)
        return outcome(mod.sample_tangent_gaussian_spd, M, x, s, rng)

    ref = call(RMe, "ref")
    ver = call(VMe, "ver")
    assert_twins_agree(ref, ver, scale=1e3 if fn == "sample_tangent_gaussian_mh" else 1.0, what=f"{geom} {fn}")
    if fn == "clip" and ref.kind == "ok":
        # the clipped vector has metric norm <= tau up to the rounding of the product (the
        # sensitivity bound, proofs_notes/mechanism_clipping.md); never 0 for a nonzero v unless
        # tau itself is so small that tau v / ||v|| underflows (subnormal tau)
        tau = float(s)
        n_out = R.norm(np.asarray(x, dtype=float), ref.value)
        assert n_out <= tau * (1.0 + 64 * np.finfo(float).eps * np.size(ref.value)), (n_out, tau)
        if np.any(np.asarray(v, dtype=float) != 0) and tau > 1e-290:
            assert n_out > 0


@given(eps=scalars, delta=scalars, sens=scalars)
def test_calibrations_refuse_with_value_error_or_return_finite_numbers(eps, delta, sens):
    """The calibration functions are shared by both twins (re-exported objects); what they must
    do on any input is raise ValueError or return a finite number (they raised OverflowError and
    'math domain error' at extreme arguments before issue 19)."""
    assert VMe.analytic_gaussian_sigma is RMe.analytic_gaussian_sigma
    for fn, args in ((RMe.gaussian_delta, (eps, delta, sens)),
                     (RMe.gaussian_mechanism_sigma_classical, (eps, delta, sens)),
                     (RMe.tangent_gaussian_log_normalizer, (3, delta)),
                     (RMe.analytic_gaussian_sigma, (eps, delta, sens))):
        o = outcome(fn, *args)
        assert o.kind != "crash", f"{fn.__name__}{args}: {o.value}"
        if o.kind == "ok":
            assert math.isfinite(o.value), f"{fn.__name__}{args} returned {o.value}"
        else:
            assert o.value.startswith(fn.__name__ + ":"), o.value
