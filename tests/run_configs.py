"""A small valid ``prirfed run`` configuration (PriRFed on 2 agents, S^4, 3 rounds, 2 repeats),
shared by the TOML tests of tests/experiments/ and the CLI tests of tests/cli/. Imported as
``run_configs`` (tests/ is on the path through tests/conftest.py)."""

from __future__ import annotations


def small_doc(**sections) -> dict:
    """The configuration as a dict of TOML sections; ``section=None`` drops a section,
    ``section={...}`` replaces it."""
    base = {
        "problem": {"kind": "sphere_pca"},
        "data": {"source": "eigengap", "N": 2, "N_i": 6, "d": 4},
        "trainer": {"name": "prirfed", "T": 3, "s": 1, "alpha": 0.5, "sigma": 0.1, "tau": 1.0},
        "privacy": {"eps": 1.0, "delta": 1e-5},
        "run": {"seed": 0, "repeats": 2},
    }
    for k, v in sections.items():
        if v is None:
            base.pop(k, None)
        else:
            base[k] = v
    return base
