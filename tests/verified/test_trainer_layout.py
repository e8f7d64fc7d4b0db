"""The layout of prirfed.verified.trainers (ARCHITECTURE.md): pinned codes, one argument order for
every fused loop, one geometry module per family with the same functions, the geometry chosen by
the class of ``dims``, and the shared small kernels.

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
from prirfed.verified.trainers import (
    arrays,
    codes,
    families,
    geometry,
    geometry_lorentz,
    geometry_spd,
    geometry_sphere,
    geometry_stiefel,
    local,
    prirfed,
    rfed,
    rgd,
)

PINNED = dict(LOCAL_DP_RSGD=0, LOCAL_DP_RSVRG=1,
              AGG_TANGENT=0, AGG_KARCHER=1, METHOD_SVRG=0, METHOD_AVG=1, METHOD_PROX=2, KARCHER_TOL=1e-10,
              KARCHER_MAX_ITER=1000)

LOOPS = (prirfed.prirfed_loop, rfed.federated_loop, rgd.rgd_loop, rgd.dp_rgd_loop)
FAMILY_MODULES = (geometry_sphere, geometry_spd, geometry_lorentz, geometry_stiefel)


def test_codes_are_pinned():
    assert {k: getattr(codes, k) for k in codes.__all__} == PINNED
    # the loop modules read the codes from codes.py, not from copies
    assert rfed.METHOD_SVRG is codes.METHOD_SVRG


def test_every_fused_loop_takes_the_fused_arrays_first_then_the_optimum():
    head = list(arrays.FusedArrays._fields)
    assert head == ["dims", "Z", "C", "offsets", "sizes", "A", "ps"]
    for loop in LOOPS:
        params = list(inspect.signature(loop.py_func).parameters)
        assert params[:8] == head + ["xstar"], f"{loop.py_func.__name__}: {params}"


def test_no_separate_stiefel_loop():
    import importlib.util

    assert importlib.util.find_spec("prirfed.verified.trainers.stiefel") is None
    for mod in (prirfed, rfed, rgd, local):
        assert not [n for n, v in vars(mod).items() if "stiefel" in n.lower() and callable(v)], mod.__name__


def test_the_geometry_modules_have_the_same_functions_and_arguments():
    """Each family gives every function of FAMILY_FUNCTIONS (a GENERIC one may be left out: the
    generic form is compiled instead) either as a function with the stub's arguments or, for a map,
    as a manifold kernel in its KERNELS table, called with the stub's arguments but ``dims``."""
    def provided(mod, name):
        kernels_of, stub, found = getattr(mod, "KERNELS", {}), list(inspect.signature(getattr(geometry, name)).parameters), 0
        for variant in (name, name + "_retr"):
            if variant in kernels_of:
                assert len(inspect.signature(kernels_of[variant].py_func).parameters) == len(stub) - 1, (mod.__name__, variant)
                found += 1
            elif hasattr(mod, variant):
                assert list(inspect.signature(getattr(mod, variant).py_func).parameters) == stub, (mod.__name__, variant)
                found += 1
        return found > 0

    # what each generic form is written on (beyond the functions every family gives): a family that
    # leaves the generic function out must give these
    written_on = {"agent_grad": set(), "record": {"f_sample", "dist"}, "add_clipped_batch": set()}
    assert set(written_on) == set(geometry.GENERIC)
    for mod in FAMILY_MODULES:
        given_ = {name for name in geometry.FAMILY_FUNCTIONS if provided(mod, name)}
        need = set(geometry.FAMILY_FUNCTIONS) - set(geometry.GENERIC) - {"f_sample", "dist"}
        for name in set(geometry.GENERIC) - given_:
            need |= written_on[name]
        assert need <= given_, (mod.__name__, sorted(need - given_))
    for name in geometry.FAMILY_FUNCTIONS:
        stub = list(inspect.signature(getattr(geometry, name)).parameters)
        with pytest.raises(TypeError, match="stub for compiled loops"):
            getattr(geometry, name)(*([0] * len(stub)))


def test_every_dims_class_has_a_family_and_a_name():
    assert set(geometry.FAMILIES) == set(families.GEOMETRY_NAMES)
    assert len(set(families.GEOMETRY_NAMES.values())) == len(families.GEOMETRY_NAMES)
    from prirfed.verified.trainers.warm import GEOMETRIES

    assert set(GEOMETRIES) == set(families.GEOMETRY_NAMES.values())
    from prirfed.cli import WARMUP_GEOMETRIES

    assert tuple(GEOMETRIES) == WARMUP_GEOMETRIES


def test_local_kernels_have_the_same_leading_arguments():
    a = list(inspect.signature(local.dp_rsgd_agent.py_func).parameters)
    b = list(inspect.signature(local.dp_rsvrg_agent.py_func).parameters)
    assert a[:7] == b[:7] == ["dims", "Z", "C", "off", "N_i", "x", "K"]


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
