"""The facade: ``import prirfed as pr`` gives the public API, resolves every name to the object of
the module that defines it, and neither imports Numba nor compiles anything when imported.

Oracle: the defining modules themselves (``pr.X is module.X``) and a fresh interpreter's
``sys.modules`` after ``import prirfed`` (Numba and SciPy absent) and after using a reference
trainer (still no Numba: only ``pr.trainers("verified")`` reaches the compiled twins).
"""

import importlib
import json
import os
import subprocess
import sys

import pytest

import prirfed as pr


def test_every_public_name_resolves_to_its_defining_object():
    assert set(pr.__all__) >= {"Sphere", "SPD", "Lorentz", "Stiefel", "Euclidean", "prirfed", "dp_rsgd", "dp_rsvrg",
                               "rfedsvrg", "rfedavg", "rfedprox", "rgd", "dp_rgd", "SpherePCA", "RdpAccountant",
                               "PaperAccountant", "Gaussian", "Activation", "calibrate_sigma_prirfed", "trainers"}
    for name in pr.__all__:
        if name == "__version__":
            continue
        module = importlib.import_module(pr._EXPORTS[name])
        assert getattr(pr, name) is getattr(module, pr._RENAMED.get(name, name)), name
    assert pr.dp_rsgd.__name__ == "dp_rsgd_local"
    assert sorted(dir(pr)) == sorted(pr.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Torus'"):
        pr.Torus  # noqa: B018


def test_the_trainers_of_each_backend():
    assert pr.trainers("reference").prirfed is pr.prirfed
    assert pr.trainers("verified").backend == "verified"


FRESH = """
import json, sys
import prirfed as pr
after_import = sorted(m for m in ("numba", "scipy", "matplotlib", "prirfed.verified") if m in sys.modules)
import numpy as np
P = pr.SpherePCA([np.array([[1.0, 0.0], [0.6, 0.8]]), np.array([[0.0, 1.0]])])
pr.prirfed(P, np.array([1.0, 0.0]), 2, 1, 0.1, np.random.default_rng(0), sigma=0.1, tau=1.0)
after_run = sorted(m for m in ("numba", "prirfed.verified") if m in sys.modules)
print(json.dumps(dict(after_import=after_import, after_run=after_run)))
"""


def test_import_prirfed_loads_no_numba_and_compiles_nothing():
    res = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["after_import"] == []
    assert out["after_run"] == []


WAIT = """
import json, os, sys
import prirfed
print(json.dumps(os.environ.get("OMP_WAIT_POLICY")))
"""


@pytest.mark.parametrize("given, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_import_prirfed_makes_openmp_wait_passively_unless_the_user_chose(given, expected):
    """The parallel agents of a round run on Numba's OpenMP layer, whose threads spin while waiting
    by default (10x the CPU on a loaded machine: benchmarks/RESULTS.md); prirfed sets the passive
    policy before any OpenMP runtime starts, and keeps a policy the user has set."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    res = subprocess.run([sys.executable, "-c", WAIT], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1]) == expected
