"""Concurrent first compiles of a cached kernel into one empty cache are safe (prirfed/verified/jitcache.py).

Numba does not lock its cache: two processes that compile the same function at once each rewrite
the index from what they read, so an entry can be lost or point at the other signature's data file
(numba/numba issues #4807, #10128). ``jitcache.install`` holds a file lock around each first
compile of a prirfed dispatcher.

Oracle: arithmetic and Numba's own counters. Fresh processes share an empty ``NUMBA_CACHE_DIR``,
meet at a file barrier (so their compiles overlap) and call ``norm2_kernel`` on ``[3, 4]`` (norm
5). Each reports its result and the dispatcher's ``stats.cache_hits`` / ``stats.cache_misses``
(Numba counts a miss exactly when it compiles, a hit when it loads from disk).

- Same signature: with the lock the second process waits and loads what the first saved, so the
  two report one miss and one hit in total. Without it both compile (two misses): with the
  wrapper removed, 3 runs of 3 reported two misses; with it, 3 of 3 one miss and one hit.
- Different signatures (float64 and float32) at once: a third process then loads BOTH from the
  cache (two hits, no miss) and gets 5.0 from each, and the cache holds two data files (a lost
  index entry would show as a miss, a shared data file as one file). This checks the outcome; it
  rarely catches the unlocked race by itself (Numba reads and rewrites the index within
  microseconds at save time; 0 of 3 unlocked runs lost an entry), so the first test is the one
  that fails without the lock.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = r"""
import json, os, sys, time
import numpy as np
from prirfed.verified.manifolds.checks import norm2_kernel as k

barrier, n, me, dtypes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(",")
if n > 1:
    open(os.path.join(barrier, me), "w").close()
    deadline = time.monotonic() + 120
    while len(os.listdir(barrier)) < n:
        if time.monotonic() > deadline:
            sys.exit("barrier: the other processes did not arrive")
        time.sleep(0.005)
values = [k(np.array([3.0, 4.0], dtype=d)) for d in dtypes]
print(json.dumps(dict(values=values, hits=sum(k.stats.cache_hits.values()),
                      misses=sum(k.stats.cache_misses.values()))))
"""


def run_together(tmp_path: Path, dtype_lists: list[str]) -> list[dict]:
    """Start one process per entry of ``dtype_lists`` at once (barrier when more than one) and
    return their reports."""
    barrier = tmp_path / f"barrier-{len(list(tmp_path.glob('barrier-*')))}"
    barrier.mkdir()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONDONTWRITEBYTECODE="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-c", PROBE, str(barrier), str(len(dtype_lists)), f"p{j}", d],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for j, d in enumerate(dtype_lists)]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def cache_files(tmp_path: Path, suffix: str) -> list[Path]:
    return sorted(p for p in (tmp_path / "cache").rglob(f"*norm2_kernel*{suffix}"))


@pytest.mark.slow
def test_two_processes_compiling_one_signature_at_once_compile_it_once(tmp_path):
    a, b = run_together(tmp_path, ["float64", "float64"])
    assert a["values"] == b["values"] == [5.0]
    assert a["misses"] + b["misses"] == 1 and a["hits"] + b["hits"] == 1, (a, b)
    (third,) = run_together(tmp_path, ["float64"])
    assert third == dict(values=[5.0], hits=1, misses=0)
    index, = cache_files(tmp_path, ".nbi")
    assert (index.parent / (index.name[:-len(".nbi")] + ".lock")).exists(), "the lock lives beside the index"


@pytest.mark.slow
def test_two_signatures_compiled_at_once_both_load_from_the_cache(tmp_path):
    a, b = run_together(tmp_path, ["float64", "float32"])
    assert a == dict(values=[5.0], hits=0, misses=1) and b == dict(values=[5.0], hits=0, misses=1)
    (third,) = run_together(tmp_path, ["float64,float32"])
    assert third == dict(values=[5.0, 5.0], hits=2, misses=0)
    assert len(cache_files(tmp_path, ".nbc")) == 2
