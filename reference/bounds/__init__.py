"""Convergence bounds of the papers as code, one function per theorem, preconditions checked.

- :mod:`.prirfed_bounds`: Huang et al. (2024) (PriRFed) Section 5, Theorems 5.1-5.6;
- :mod:`.dp_riemannian_bounds`: Han et al. (2024) (DP Riemannian optimisation);
- :mod:`.rfed_bounds`: Li and Ma (2023) (Riemannian federated learning).

Public names of these modules are re-exported here and imported on first use (PEP 562), so a
missing or broken module does not break the others. Two bounds of Huang et al. (2024) live where they are
computed and are re-exported here too: ``theorem_4_2`` (the paper's privacy guarantee, from
:mod:`prirfed.reference.accounting.paper`) and ``zeta`` ((5.1), from
:mod:`prirfed.reference.manifolds.base`).
"""

from importlib import import_module

_MODULES = (".prirfed_bounds", ".dp_riemannian_bounds", ".rfed_bounds")
_ELSEWHERE = {"theorem_4_2": "prirfed.reference.accounting.paper", "zeta": "prirfed.reference.manifolds.base"}


def _public(modname):
    try:
        mod = import_module(modname, __name__)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.endswith(modname.lstrip(".")):
            return None, []
        raise
    return mod, list(getattr(mod, "__all__", [n for n in vars(mod) if not n.startswith("_")]))


def __getattr__(name):
    if name in _ELSEWHERE:
        return getattr(import_module(_ELSEWHERE[name]), name)
    for modname in _MODULES:
        mod, names = _public(modname)
        if mod is not None and name in names:
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    out = list(_ELSEWHERE)
    for modname in _MODULES:
        out += _public(modname)[1]
    return sorted(set(out))
