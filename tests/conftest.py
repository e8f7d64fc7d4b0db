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


@pytest.fixture
def registry(monkeypatch):
    """Replace the experiment registry (``prirfed.experiments.EXPERIMENTS``) by an empty dict for one
    test; the test registers its stand-in experiments in it."""
    import prirfed.experiments as experiments

    reg: dict = {}
    monkeypatch.setattr(experiments, "EXPERIMENTS", reg)
    monkeypatch.setattr(experiments.registry, "EXPERIMENTS", reg)
    return reg


# ------------------------------------------------------------------------------------------------
# Compile-once fixture for tests/verified. Not autouse: tests/verified/conftest.py requests
# it, so a run that selects no verified test neither imports Numba nor compiles anything.


def warm_fused_loops():
    """Call every fused verified trainer once on a tiny problem of every geometry
    (:func:`prirfed.verified.trainers.warmup.warmup`), so that each fused loop is compiled (cold cache) or
    loaded from Numba's on-disk cache (warm cache, ``cache=True``) exactly once per geometry.

    One call per (loop, geometry) suffices: the loops dispatch on integer codes (local trainer, option,
    aggregation) and on the class of ``dims`` (the geometry), and take flat float64 arrays, so one
    compiled signature per geometry serves every setting (tests/verified/test_compile_once.py checks
    that no later call adds a signature). Returns the "trainer/geometry" names of the calls made."""
    from prirfed.verified.trainers.warmup import GEOMETRIES, warmup

    return [f"{name}/{g}" for g, name in warmup(GEOMETRIES, verbose=False)]


@pytest.fixture(scope="session")
def compiled_fused_loops():
    """Session-scoped: the fused verified loops compiled (or cache-loaded) once, before the first
    test of tests/verified; returns :func:`warm_fused_loops`' list of calls."""
    return warm_fused_loops()
