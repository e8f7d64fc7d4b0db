"""prirfed.verified: Numba twins of prirfed.reference, same names and signatures.

A verified object is finished only when a test shows it equal to its reference twin.

Importing this package installs the cache locators of :mod:`prirfed.verified.jitcache` before any
kernel is defined, so that Numba's on-disk cache of the fused loops is invalidated whenever any
source they depend on changes (not only the loop's own file).
"""

from prirfed.verified import jitcache as _jitcache

_jitcache.install()
