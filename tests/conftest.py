"""Shared pytest configuration.

Hypothesis profiles: ``prirfed-dev`` (default here, 30 examples), ``prirfed-ci`` (derandomized,
reproducible, 60 examples) and ``prirfed-thorough`` (2000 examples) are registered by prirfed's
pytest plugin (``prirfed/testing/pytest_plugin.py``, the same definitions a user's test run gets)
and chosen by ``--hypothesis-profile=NAME`` or ``HYPOTHESIS_PROFILE=NAME``; the default comes from
``prirfed_hypothesis_profile`` in pyproject.toml.
"""

import os

# One BLAS thread: on a loaded 2-core machine OpenBLAS threading made scipy.linalg on tiny
# matrices up to 500x slower (measured by the Stiefel work). Effective only if set before NumPy
# loads BLAS, which is why .ci/run exports it too.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402

_RENAMED = {"dev": "prirfed-dev", "ci": "prirfed-ci", "thorough": "prirfed-thorough"}


def pytest_configure(config):
    """The repository's own suite refuses the old short names: ``ci`` would silently select
    Hypothesis' built-in ``ci`` profile instead of prirfed's."""
    import prirfed.testing.pytest_plugin  # noqa: F401  (loaded by its entry point; fail loudly if it is not installed)

    for source, name in (("HYPOTHESIS_PROFILE", os.environ.get("HYPOTHESIS_PROFILE")),
                         ("--hypothesis-profile", config.getoption("hypothesis_profile", default=None))):
        if name in _RENAMED:
            raise pytest.UsageError(f"{source}={name}: the profiles are now named {_RENAMED[name]!r} "
                                    f"({', '.join(_RENAMED.values())})")


# ------------------------------------------------------------------------------------------------
# Compile-once fixture for tests/verified. Not autouse: tests/verified/conftest.py requests
# it, so a run that selects no verified test neither imports Numba nor compiles anything.


def warm_fused_loops():
    """Call every fused verified trainer once on a tiny problem, so that each fused loop is compiled
    (cold cache) or loaded from Numba's on-disk cache (warm cache, ``cache=True``) exactly once.

    One call per loop suffices: the loops dispatch on integer codes (manifold, problem, local
    trainer, option) and take flat float64 arrays, so one compiled signature serves every setting
    (tests/verified/test_compile_once.py checks that no later call adds a signature). Stiefel kPCA
    is warmed only if :func:`prirfed.backend.refusal` says the verified trainers accept it.
    Returns the names of the calls made."""
    import numpy as np

    from prirfed.backend import refusal
    from prirfed.verified.problems import SpherePCA
    from prirfed.verified.trainers import prirfed as vp
    from prirfed.verified.trainers import rfed as vf
    from prirfed.verified.trainers import rgd as vr

    P = SpherePCA([np.array([[1.0, 0.0], [0.6, 0.8]]), np.array([[0.0, 1.0]])])
    x0 = np.array([1.0, 0.0])
    rng = np.random.default_rng(0)
    calls = {
        "prirfed": lambda Q, x: vp.prirfed(Q, x, 1, 1, 0.1, rng, sigma=0.1, tau=1.0),
        "rgd": lambda Q, x: vr.rgd(Q, x, 0.1, 1),
        "dp_rgd": lambda Q, x: vr.dp_rgd(Q, x, 0.1, 1, 1, 0.1, rng),
        "rfedsvrg": lambda Q, x: vf.rfedsvrg(Q, x, 1, 1, 0.1, 1, rng),
    }
    done = []
    for name, call in calls.items():
        call(P, x0)
        done.append(f"{name}/sphere")
    try:
        from prirfed.verified.problems.stiefel_kpca import StiefelKPCA
    except ImportError:  # the verified Stiefel problem does not exist in this tree
        return done
    S = StiefelKPCA([np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]), np.array([[0.0, 0.0, 1.0]])], 1)
    X0 = np.array([[1.0], [0.0], [0.0]])
    for name, call in calls.items():
        if refusal(name, {"problem": S}) is None:
            call(S, X0)
            done.append(f"{name}/stiefel")
    return done


@pytest.fixture(scope="session")
def compiled_fused_loops():
    """Session-scoped: the fused verified loops compiled (or cache-loaded) once, before the first
    test of tests/verified; returns :func:`warm_fused_loops`' list of calls."""
    return warm_fused_loops()
