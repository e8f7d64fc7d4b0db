"""The layout of prirfed.verified.trainers (ARCHITECTURE.md): pinned codes, one argument order for
every fused loop, two geometry families with the same functions, and the shared small kernels.

Why the codes are pinned: Numba compiles a module-level integer that a loop reads into the loop's
on-disk cache, and invalidates that cache only when the loop's own file changes; a code renumbered
in codes.py would leave cached loops comparing against the old value. The values below are the
ones the caches were built with; change both together (and clear verified/**/__pycache__).
Oracles: the literal values; ``inspect.signature``; numpy for the small kernels.
"""

import inspect

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.verified import kernels
from prirfed.verified.trainers import arrays, codes, geometry, geometry_flat, geometry_stiefel, local, prirfed, rfed, rgd

PINNED = dict(GEOM_SPHERE=0, GEOM_SPD=1, GEOM_LORENTZ=2, GEOM_SPHERE_RETR=3, GEOM_STIEFEL=4, GEOM_STIEFEL_RETR=5,
              PROB_SPHERE_PCA=0, PROB_SPD_FRECHET=1, PROB_HSP=2, PROB_STIEFEL_KPCA=3, LOCAL_DP_RSGD=0, LOCAL_DP_RSVRG=1,
              AGG_TANGENT=0, AGG_KARCHER=1, METHOD_SVRG=0, METHOD_AVG=1, METHOD_PROX=2, KARCHER_TOL=1e-10,
              KARCHER_MAX_ITER=1000)

LOOPS = (prirfed.prirfed_loop, rfed.federated_loop, rgd.rgd_loop, rgd.dp_rgd_loop, local.local_kernel)
FAMILY_FUNCTIONS = ("exp", "log", "transp", "norm", "noise", "grad_sample", "agent_grad", "full_grad")


def test_codes_are_pinned():
    assert {k: getattr(codes, k) for k in codes.__all__} == PINNED
    # the loop modules read the codes from codes.py, not from copies
    assert rfed.METHOD_SVRG is codes.METHOD_SVRG


def test_every_fused_loop_takes_the_fused_arrays_first():
    head = list(arrays.FusedArrays._fields)
    assert head == ["geom", "prob", "dims", "Z", "C", "offsets", "sizes", "A", "ps"]
    for loop in LOOPS:
        params = list(inspect.signature(loop.py_func).parameters)
        assert params[:9] == head, f"{loop.py_func.__name__}: {params}"


def test_no_separate_stiefel_loop():
    import importlib.util

    assert importlib.util.find_spec("prirfed.verified.trainers.stiefel") is None
    for mod in (prirfed, rfed, rgd, local):
        assert not [n for n, v in vars(mod).items() if "stiefel" in n.lower() and callable(v)], mod.__name__


def test_the_two_geometry_families_have_the_same_functions_and_arguments():
    for name in FAMILY_FUNCTIONS:
        stub = inspect.signature(getattr(geometry, name))
        flat = inspect.signature(getattr(geometry_flat, name).py_func)
        stiefel = inspect.signature(getattr(geometry_stiefel, name).py_func)
        assert list(stub.parameters) == list(flat.parameters) == list(stiefel.parameters), name
        with pytest.raises(TypeError, match="stub for compiled loops"):
            getattr(geometry, name)(*([0] * len(stub.parameters)))


def test_local_kernels_have_the_same_leading_arguments():
    a = list(inspect.signature(local.dp_rsgd_local_kernel.py_func).parameters)
    b = list(inspect.signature(local.dp_rsvrg_local_kernel.py_func).parameters)
    assert a[:9] == b[:9] == ["geom", "prob", "dims", "x", "Z", "C", "off", "N_i", "K"]


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 5), m=st.integers(1, 5), p=st.integers(1, 5))
def test_small_kernels_equal_numpy(seed, n, m, p):
    rng = np.random.default_rng(seed)
    a, b, s = rng.standard_normal((n, m)), rng.standard_normal((m, p)), rng.standard_normal((n, n))
    np.testing.assert_allclose(kernels.matmul_kernel(a, b), a @ b, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(kernels.sym_part_kernel(s), 0.5 * (s + s.T))
    assert kernels.all_finite_kernel(a)
    a[rng.integers(n), rng.integers(m)] = rng.choice([np.nan, np.inf, -np.inf])
    assert not kernels.all_finite_kernel(a)
    assert not kernels.all_finite_kernel(a.ravel())


def test_matmul_kernel_propagates_nan_like_numpy():
    a = np.array([[0.0, 1.0]])
    b = np.array([[np.inf], [2.0]])
    with np.errstate(invalid="ignore"):
        want = a @ b
    assert np.isnan(want[0, 0]) and np.isnan(kernels.matmul_kernel(a, b)[0, 0])
