"""The geometry of a fused loop as a TYPE: one small named tuple class per (manifold, maps).

A fused loop takes ``dims``, an instance of one of the classes below, right after its arrays. Numba
types a named tuple together with its class, so each class is a distinct type, and
:mod:`prirfed.verified.trainers.geometry` chooses the family functions by that type while it
compiles a loop (``numba.extending.overload``). A loop called with ``SphereDims`` therefore
compiles a specialisation that types only the sphere's kernels: a run compiles (or loads from the
cache) only the geometry it uses, and the sphere user never waits for Stiefel's matrix
exponential. Nothing is decided per call at run time, and no function is passed as an argument
(which would defeat the on-disk cache).

Mirrors the manifolds of ``reference/manifolds/`` and the maps of ``reference/manifolds/retracted.py``:

========================  ======================================  ===================
class                     manifold, maps                          fields
========================  ======================================  ===================
``SphereDims``            S^{D-1} in R^D, Exp/Log                 D (ambient length)
``SphereRetrDims``        S^{D-1}, retraction and its inverse     D
``SPDDims``               SPD(n), affine-invariant Exp/Log        n
``LorentzDims``           H^{D-1} (Lorentz model), Exp/Log        D
``StiefelDims``           St(d, r), Euclidean metric, Exp/Log     d, r
``StiefelRetrDims``       St(d, r), polar retraction and inverse  d, r
========================  ======================================  ===================

The classes must stay at module level under these names: Numba's on-disk cache pickles a loop's
argument types, and with them the class (by module and name).
"""

from __future__ import annotations

from collections import namedtuple

__all__ = ["SphereDims", "SphereRetrDims", "SPDDims", "LorentzDims", "StiefelDims", "StiefelRetrDims",
           "GEOMETRY_NAMES", "geometry_name"]

SphereDims = namedtuple("SphereDims", ["D"])
SphereRetrDims = namedtuple("SphereRetrDims", ["D"])
SPDDims = namedtuple("SPDDims", ["n"])
LorentzDims = namedtuple("LorentzDims", ["D"])
StiefelDims = namedtuple("StiefelDims", ["d", "r"])
StiefelRetrDims = namedtuple("StiefelRetrDims", ["d", "r"])

# The classes' docstrings (the API reference shows them): each is a type, not a formula.
SphereDims.__doc__ = "Helper, not a paper formula: the sphere's type, Exp/Log (field ``D``, the ambient length)."
SphereRetrDims.__doc__ = ("Helper, not a paper formula: the sphere's type, retraction and its inverse (field ``D``, the "
                          "ambient length).")
SPDDims.__doc__ = "Helper, not a paper formula: the type of SPD(n), affine-invariant Exp/Log (field ``n``)."
LorentzDims.__doc__ = "Helper, not a paper formula: the Lorentz model's type, Exp/Log (field ``D``, the ambient length)."
StiefelDims.__doc__ = "Helper, not a paper formula: the type of St(d, r), Euclidean metric, Exp/Log (fields ``d, r``)."
StiefelRetrDims.__doc__ = ("Helper, not a paper formula: the type of St(d, r), polar retraction and its inverse "
                           "(fields ``d, r``).")

#: the name of each geometry (what ``prirfed warmup --geometry`` takes), by class
GEOMETRY_NAMES = {SphereDims: "sphere", SphereRetrDims: "sphere-retraction", SPDDims: "spd",
                  LorentzDims: "lorentz", StiefelDims: "stiefel", StiefelRetrDims: "stiefel-retraction"}


def geometry_name(dims) -> str:
    """'sphere', 'spd', ... for a dims instance (or class).

    Helper, not a paper formula: a name lookup.

    Parameters
    ----------
    dims : named tuple or type
        A dims instance or class.

    Returns
    -------
    str
        The geometry's name.
    """
    cls = dims if isinstance(dims, type) else type(dims)
    return GEOMETRY_NAMES[cls]
