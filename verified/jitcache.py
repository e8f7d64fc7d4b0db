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

Concurrent first compiles. Numba writes each cache file atomically (a temporary file, then
``os.replace``) but does not lock: two processes that compile the same function into the same
cache directory at once each read the index, pick the first free data-file number and write the
index back. One index entry is lost, and when the two entries were different signatures (or CPUs)
both processes may write the same ``.nbc`` file, so the surviving index entry can point at the
other signature's machine code (numba/numba issues #4807 and #10128; the maintainers' suggested
remedy there is a file lock). :func:`install` therefore also wraps ``Dispatcher.compile``: for the
functions the prirfed locators handle, and only when the signature is not yet compiled in this
process, it holds an exclusive ``fcntl.flock`` on ``<filename base>.lock`` in the function's cache
directory (beside its ``.nbi`` index) around Numba's whole load-or-compile-and-save step. The
second process waits, then loads what the first saved (a cache hit, no second compile). The lock is
taken inside Numba's (re-entrant) global compiler lock, so threads of one process never wait on
each other's file locks; a nested compile of a callee takes the callee's own lock (callers lock
before callees and the call graph has no cycles, so no deadlock), and a function already locked by
this process is not locked again. On Windows (no ``fcntl``), or where the lock file cannot be
created, the compile runs unlocked, as in plain Numba (whose own guard there only ignores
``PermissionError`` while writing, numba/numba issue #2028). Tested by
``tests/verified/test_cache_concurrency.py``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os

try:
    import fcntl
except ImportError:  # Windows: no advisory file locks here; compiles run unlocked (module docstring)
    fcntl = None

__all__ = ["install", "dependency_stamp", "source_files", "compile_lock", "PACKAGE_DIR"]

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

    Locator.prirfed = True
    Locator.__name__ = Locator.__qualname__ = "Prirfed" + base.__name__
    return Locator


_HELD: set = set()  # lock files this process holds (guarded by Numba's global compiler lock)


@contextlib.contextmanager
def compile_lock(path: str):
    """Hold an exclusive ``fcntl.flock`` on the file ``path`` (created if absent) for the block.

    Helper, not a paper formula: inter-process lock of a cache entry (module docstring).

    Re-entrant within a process (a path this process already holds is not locked again). Where
    ``fcntl`` is missing (Windows) or the file cannot be opened, the block runs unlocked.

    Parameters
    ----------
    path : str
        The lock file, e.g. ``<cache dir>/<filename base>.lock``.

    Yields
    ------
    bool
        Whether this call took the lock.
    """
    fh = None
    if fcntl is not None and path not in _HELD:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fh = open(path, "a")
        except OSError:  # a read-only cache directory: Numba would not write there either
            fh = None
    if fh is None:
        yield False
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        _HELD.add(path)
        try:
            yield True
        finally:
            _HELD.discard(path)
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    finally:
        fh.close()


def _lock_path(dispatcher):
    """The lock file of a dispatcher the prirfed locators cache, else None."""
    impl = getattr(getattr(dispatcher, "_cache", None), "_impl", None)
    if not getattr(getattr(impl, "locator", None), "prirfed", False):
        return None
    return os.path.join(dispatcher._cache.cache_path, impl.filename_base + ".lock")


def _locked_compile(compile_):
    from numba.core import sigutils
    from numba.core.compiler_lock import global_compiler_lock

    @functools.wraps(compile_)
    def compile(self, sig):
        path = _lock_path(self)
        if path is None:
            return compile_(self, sig)
        with global_compiler_lock:
            args, _ = sigutils.normalize_signature(sig)
            if tuple(args) in self.overloads:  # compiled or loaded in this process: nothing to write
                return compile_(self, sig)
            with compile_lock(path):
                return compile_(self, sig)

    compile.prirfed = True
    return compile


def install() -> None:
    """Put the prirfed locators in front of Numba's and lock first compiles (idempotent)."""
    from numba.core import caching
    from numba.core.dispatcher import Dispatcher

    impl = caching.CacheImpl
    if getattr(impl, "_prirfed_locators", False):
        return
    ours = [_locator(b) for b in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator,
                                  caching.UserWideCacheLocator)]
    impl._locator_classes = ours + list(impl._locator_classes)
    if not getattr(Dispatcher.compile, "prirfed", False):
        Dispatcher.compile = _locked_compile(Dispatcher.compile)
    impl._prirfed_locators = True
    # the stamp of the sources as this process imports them: taken lazily at the first cache access,
    # a process started before an edit would file code compiled from the old sources under the new
    # stamp, and another process would load it (a segmentation fault, seen once when trainer sources
    # were edited under a running test session)
    dependency_stamp()
