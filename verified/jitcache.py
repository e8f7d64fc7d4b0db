"""Numba's on-disk cache for prirfed.verified, invalidated when ANY source the loops depend on changes.

Numba keys a cached function on its own file only: a fused loop in ``trainers/prirfed.py`` that
calls a kernel of ``trainers/geometry_sphere.py`` keeps running the cached machine code of the old
kernel after that kernel is edited (or after ``git pull`` in an editable install) - silently, on a
privacy path. This module closes that hole with Numba's own extension point: cache locators
(``numba.core.caching.CacheImpl._locator_classes``). :func:`install`, run by
``prirfed/verified/__init__.py`` before any kernel is defined, puts in front of Numba's locators
subclasses of them that (a) handle only the functions defined under this package and (b) stamp
each cache index with :func:`dependency_stamp`, a SHA-256 of every ``.py`` file of
``prirfed.verified`` and of ``prirfed.reference.randomness`` (whose role numbers the loops compile
in), plus the Numba version, instead of the function's own file. An edit anywhere there changes the
stamp; Numba then finds every index stale and recompiles (and rewrites the cache) on the next call.
The cache stays where Numba puts it (``NUMBA_CACHE_DIR`` if set, else ``__pycache__`` beside the
source, else the user-wide cache). Tested by editing a kernel in a copy of the package
(``tests/verified/test_cache_staleness.py``).
"""

from __future__ import annotations

import functools
import hashlib
import os

__all__ = ["install", "dependency_stamp", "source_files", "PACKAGE_DIR"]

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def source_files() -> list:
    """The files whose contents the compiled loops depend on, sorted: every .py file of this package and reference/randomness.py.

    Returns
    -------
    list of str
        Absolute paths, the package's files in sorted walk order, then ``reference/randomness.py``.
    """
    files = []
    for root, dirs, names in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(".py"))
    from prirfed.reference import randomness

    files.append(os.path.abspath(randomness.__file__))
    return files


@functools.lru_cache(maxsize=None)
def dependency_stamp() -> str:
    """SHA-256 of (relative name, contents) of :func:`source_files` and the Numba version (hex)."""
    import numba

    h = hashlib.sha256(numba.__version__.encode())
    for path in source_files():
        h.update(os.path.basename(os.path.dirname(path)).encode() + b"/" + os.path.basename(path).encode() + b"\0")
        with open(path, "rb") as fh:
            h.update(fh.read())
        h.update(b"\0")
    return h.hexdigest()


def _inside(py_file) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(py_file), PACKAGE_DIR]) == PACKAGE_DIR
    except ValueError:  # different drives
        return False


def _locator(base):
    class Locator(base):
        """Numba's locator for functions of prirfed.verified, stamped with the whole dependency set."""

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _inside(py_file):
                return None
            return base.from_function.__func__(cls, py_func, py_file)

        def get_source_stamp(self):
            return dependency_stamp()

    Locator.__name__ = Locator.__qualname__ = "Prirfed" + base.__name__
    return Locator


def install() -> None:
    """Put the prirfed locators in front of Numba's (idempotent)."""
    from numba.core import caching

    impl = caching.CacheImpl
    if getattr(impl, "_prirfed_locators", False):
        return
    ours = [_locator(b) for b in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator,
                                  caching.UserWideCacheLocator)]
    impl._locator_classes = ours + list(impl._locator_classes)
    impl._prirfed_locators = True
