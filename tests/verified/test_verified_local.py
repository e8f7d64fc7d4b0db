"""The standalone verified local trainers (prirfed.verified.trainers.local) replay the reference.

Oracle: prirfed.reference.trainers.local.dp_rsgd_local / dp_rsvrg_local (Algorithms 2 and 3 of
000, tested against the paper in tests/trainers/). Same problem data, settings and Generator seed
give the same output (rtol 1e-10) and leave the Generator in the same state (same draws in the
same order). Drawn: sphere PCA, the SPD Frechet mean and Stiefel kPCA (problems of
test_verified_prirfed.make_problems), maps "exp" or "retraction" (sphere, Stiefel), both options,
clipping on or off, sigma zero or positive, any agent.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.trainers import local as ref_local
from prirfed.verified.trainers import local as ver_local
from verified_cases import make_problems


@st.composite
def configurations(draw):
    kind = draw(st.sampled_from(["sphere", "spd", "stiefel"]))
    seed = draw(st.integers(0, 2**32 - 1))
    ref, ver, x0 = make_problems(kind, draw(st.integers(1, 3)), seed)
    i = draw(st.integers(0, ref.N - 1))
    trainer = draw(st.sampled_from(["dp_rsgd_local", "dp_rsvrg_local"]))
    K = draw(st.integers(1, 3))
    sigma = draw(st.sampled_from([0.0, 0.1, 0.4]))
    alpha = draw(st.sampled_from([0.05, 0.3]))
    kw = dict(option=draw(st.sampled_from([1, 2])),
              maps=draw(st.sampled_from(["exp", "retraction"])) if kind != "spd" else "exp")
    if trainer == "dp_rsgd_local":
        args = (K, draw(st.integers(1, ref.sizes[i])), sigma, draw(st.sampled_from([math.inf, 0.3])), alpha)
    else:
        args = (K, draw(st.integers(1, 3)), sigma, draw(st.sampled_from([math.inf, 0.5])),
                draw(st.sampled_from([math.inf, 0.3])), alpha)
    return ref, ver, x0, i, trainer, args, seed, kw


@given(cfg=configurations())
def test_local_trainers_equal_reference_draw_for_draw(cfg):
    ref, ver, x0, i, trainer, args, seed, kw = cfg
    r_ref, r_ver = np.random.default_rng(seed), np.random.default_rng(seed)
    a = getattr(ref_local, trainer)(ref, i, x0, *args, r_ref, **kw)
    b = getattr(ver_local, trainer)(ver, i, x0, *args, r_ver, **kw)
    assert b.shape == a.shape
    np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10 * max(1.0, float(np.max(np.abs(a)))))
    assert r_ref.bit_generator.state == r_ver.bit_generator.state
    assert r_ref.random() == r_ver.random()


def test_bad_input_names_the_verified_trainer():
    ref, _, x0 = make_problems("sphere", 2, 3)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"dp_rsgd_local \(verified\): .*b"):
        ver_local.dp_rsgd_local(ref, 0, x0, 1, ref.sizes[0] + 1, 0.1, 1.0, 0.1, rng)
    with pytest.raises(ValueError, match=r"dp_rsvrg_local \(verified\): .*sigma"):
        ver_local.dp_rsvrg_local(ref, 0, x0, 1, 2, -1.0, 1.0, 1.0, 0.1, rng)
    with pytest.raises(ValueError, match=r"dp_rsgd_local \(verified\): rng must be a numpy.random.Generator"):
        ver_local.dp_rsgd_local(ref, 0, x0, 1, 1, 0.1, 1.0, 0.1, np.random.RandomState(0))
    with pytest.raises(ValueError, match=r"dp_rsgd_local \(verified\): option must be 1 or 2"):
        ver_local.dp_rsgd_local(ref, 0, x0, 1, 1, 0.1, 1.0, 0.1, rng, option=3)
