"""pytest plugin: prirfed's Hypothesis profiles, in your own test runs too.

Installed with prirfed (entry point ``pytest11``), so any pytest run in an environment where
prirfed and Hypothesis are installed has these profiles registered, under names that cannot
collide with Hypothesis' own profiles (``default``, ``ci``):

``prirfed-dev``
    30 examples per test: fast local iteration.
``prirfed-ci``
    60 examples, derandomized (a fixed example stream, so a run is reproducible), no example
    database, failing examples printed as a reproduction blob.
``prirfed-thorough``
    2000 examples per test, for a release check.

All three set ``deadline=None`` (Numba compiles on a first call) and suppress the health checks
``too_slow``, ``data_too_large`` and ``differing_executors`` (the contract suites are mixins: one
test class per manifold runs the same test methods).

A profile is chosen, first match wins, by

1. ``--hypothesis-profile=NAME`` on the pytest command line (Hypothesis' own option);
2. the environment variable ``HYPOTHESIS_PROFILE=NAME``;
3. the ini option ``prirfed_hypothesis_profile = NAME`` (``[tool.pytest.ini_options]``);

otherwise Hypothesis' own default stays in force. ``NAME`` may be any registered profile; an
unknown name is a usage error that lists the registered ones. If Hypothesis is not installed the
plugin does nothing.

Examples
--------
>>> from hypothesis import settings
>>> import prirfed.testing.pytest_plugin  # pytest imports it for you; importing registers the profiles
>>> settings.get_profile("prirfed-ci").derandomize
True
>>> settings.get_profile("prirfed-thorough").max_examples
2000
"""

from __future__ import annotations

import os

__all__ = ["PROFILES", "ENV_VAR", "INI_OPTION", "register_profiles", "selected_profile"]

#: name -> settings of each profile (besides the common ones in the module docstring)
PROFILES: dict[str, dict] = {
    "prirfed-dev": dict(max_examples=30),
    "prirfed-ci": dict(max_examples=60, derandomize=True, database=None, print_blob=True),
    "prirfed-thorough": dict(max_examples=2000),
}
ENV_VAR = "HYPOTHESIS_PROFILE"
INI_OPTION = "prirfed_hypothesis_profile"

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - prirfed without its test extra
    settings = None


def register_profiles() -> None:
    """Register :data:`PROFILES` with Hypothesis (idempotent)."""
    common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                          HealthCheck.differing_executors])
    for name, own in PROFILES.items():
        settings.register_profile(name, **common, **own)


if settings is not None:
    register_profiles()


def selected_profile(option: str | None, environ: dict, ini: str | None) -> tuple[str | None, str]:
    """The Hypothesis profile to load and where the choice came from.

    The command-line option wins, then the environment variable :data:`ENV_VAR`, then the ini
    option :data:`INI_OPTION`.

    Parameters
    ----------
    option : str or None
        Value of ``--hypothesis-profile``.
    environ : dict
        The environment (``os.environ``).
    ini : str or None
        Value of the ini option.

    Returns
    -------
    profile : str or None
        The profile's name, None when none is set.
    origin : str
        ``"--hypothesis-profile"``, the variable's or the ini option's name, or ``""``.
    """
    if option:
        return option, "--hypothesis-profile"
    if environ.get(ENV_VAR):
        return environ[ENV_VAR], ENV_VAR
    if ini:
        return ini, INI_OPTION
    return None, ""


def pytest_addoption(parser):
    parser.addini(INI_OPTION, f"Hypothesis profile to load when neither --hypothesis-profile nor {ENV_VAR} is given "
                              f"(prirfed registers {', '.join(PROFILES)})", default="")


def pytest_configure(config):
    if settings is None:
        return
    option = config.getoption("hypothesis_profile", default=None)
    name, source = selected_profile(option, os.environ, config.getini(INI_OPTION) or None)
    if name is None or source == "--hypothesis-profile":
        return  # nothing chosen, or Hypothesis' own plugin loads the command-line choice
    try:
        settings.get_profile(name)
    except Exception:  # hypothesis.errors.InvalidArgument: not registered
        import pytest

        raise pytest.UsageError(f"{source}={name!r}: no such Hypothesis profile; prirfed registers "
                                f"{', '.join(PROFILES)}") from None
    settings.load_profile(name)


def pytest_report_header(config):
    if settings is None:
        return None
    return f"prirfed: Hypothesis profiles {', '.join(PROFILES)} registered; loaded: {settings.get_current_profile_name()}"
