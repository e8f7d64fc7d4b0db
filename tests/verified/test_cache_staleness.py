"""Numba's on-disk cache of prirfed.verified is invalidated when a kernel in ANOTHER file changes
(prirfed/verified/jitcache.py; issue 16).

Without the fix, a cached function whose own file is unchanged keeps the machine code of the old
kernel it inlined. Oracle: the arithmetic itself. In a temporary copy of the package, a fresh process
computes ``geometry_sphere.norm`` (cached, in trainers/geometry_sphere.py), which inlines
``kernels.dot_kernel`` (verified/kernels.py). A second fresh process must load it from the cache
(no compilation). Then ``dot_kernel`` is edited to return twice the dot product: a third fresh
process must recompile and return sqrt(2) times the old norm.
"""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, numpy as np
import prirfed
from prirfed.verified.trainers import geometry_sphere as g
from prirfed.verified.trainers.families import SphereDims
v = g.norm(SphereDims(3), np.array([1.0, 0.0, 0.0]), np.array([0.0, 3.0, 4.0]))
d = g.norm
print(json.dumps(dict(value=v, file=prirfed.__file__, hits=sum(d.stats.cache_hits.values()),
                      misses=sum(d.stats.cache_misses.values()))))
"""


def copy_package(dest: Path) -> Path:
    """dest/prirfed with reference/ and verified/ as its subpackages (the installed layout)."""
    ignore = shutil.ignore_patterns("__pycache__")
    pkg = dest / "prirfed"
    shutil.copytree(ROOT / "prirfed", pkg, ignore=ignore)
    shutil.copytree(ROOT / "reference", pkg / "reference", ignore=ignore)
    shutil.copytree(ROOT / "verified", pkg / "verified", ignore=ignore)
    return pkg


def probe(tmp: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tmp), PYTHONDONTWRITEBYTECODE="1")
    res = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=str(tmp),
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_an_edited_kernel_in_another_file_is_picked_up_by_a_fresh_process(tmp_path):
    pkg = copy_package(tmp_path)
    first = probe(tmp_path)
    assert Path(first["file"]).resolve().parent == pkg.resolve(), "the probe must import the copy"
    assert first["value"] == 5.0 and first["misses"] == 1
    second = probe(tmp_path)
    assert (second["value"], second["hits"], second["misses"]) == (5.0, 1, 0), "the cache must be used"
    kernels = pkg / "verified" / "kernels.py"
    src = kernels.read_text()
    old = "    return s + r\n"  # the end of dot_kernel
    assert src.count(old) == 1
    kernels.write_text(src.replace(old, "    return 2.0 * (s + r)\n"))
    third = probe(tmp_path)
    assert third["misses"] == 1, "the edit must invalidate the cached function of the other file"
    assert third["value"] == pytest.approx(5.0 * math.sqrt(2.0), rel=1e-15, abs=0)


ANNOUNCE = """
import numpy as np
from prirfed.verified.trainers import geometry_sphere as g
from prirfed.verified.trainers.families import SphereDims
from prirfed.verified.trainers.warm import compiling
dims = SphereDims(3)
with compiling(g.norm, dims):
    g.norm(dims, np.array([1.0, 0.0, 0.0]), np.array([0.0, 3.0, 4.0]))
"""


def announce(tmp: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(tmp), PYTHONDONTWRITEBYTECODE="1")
    res = subprocess.run([sys.executable, "-c", ANNOUNCE], capture_output=True, text=True, env=env, cwd=str(tmp),
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stderr


@pytest.mark.slow
def test_the_cold_start_message_comes_before_a_compile_and_again_after_an_edit(tmp_path):
    """The message of warm.compiling ("compiling the fused sphere loops once ...; cached in DIR") is
    printed by a fresh process with an empty cache, not by the next one (the cache serves it), and
    again after a source edit (the marker is stamped with the sources' hash, as the cache index)."""
    pkg = copy_package(tmp_path)
    first = announce(tmp_path)
    assert "prirfed: compiling the fused sphere loops once (norm, about" in first, first
    assert "of CPU); cached in " in first, first
    assert "prirfed: compiling" not in announce(tmp_path)
    kernels = pkg / "verified" / "kernels.py"
    kernels.write_text(kernels.read_text() + "\n# an edit\n")
    assert "prirfed: compiling the fused sphere loops once" in announce(tmp_path)
