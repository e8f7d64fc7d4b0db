"""prirfed on Flower: the federated algorithms of the papers as a Flower ServerApp and ClientApp.

``pip install 'prirfed[flower]'`` installs Flower (``flwr[simulation]``). Without it, prirfed
imports as usual and only the names below that run Flower raise an ``ImportError`` naming the
extra; :mod:`prirfed.flower.protocol` (what server and clients compute) needs no Flower.

- :func:`run_simulation`: a run in Flower's simulation engine, equal to the in-process trainer;
- :func:`run_deployment`: a run on a local SuperLink and SuperNodes (``flower-superlink``,
  ``flower-supernode``), started and ended by it;
- :func:`build_server_app`, :func:`build_client_app`: the apps, for your own deployment.

Docs page: "Federated runs with Flower".
"""

from __future__ import annotations

import importlib

__all__ = ["run_simulation", "run_deployment", "make_job", "build_server_app", "build_client_app", "require_flwr"]

_NAMES = {"run_simulation": ".simulation", "run_deployment": ".deployment", "make_job": ".deployment", "build_server_app": ".apps",
          "build_client_app": ".apps"}


def require_flwr() -> None:
    """Raise an ImportError naming the extra when Flower is not installed."""
    try:
        importlib.import_module("flwr")
    except ImportError as exc:
        raise ImportError("prirfed.flower needs Flower, which is not installed: pip install 'prirfed[flower]' "
                          f"(or pip install 'flwr[simulation]'); import error: {exc}") from None


def __getattr__(name):
    if name in _NAMES:
        require_flwr()
        return getattr(importlib.import_module(_NAMES[name], __name__), name)
    raise AttributeError(f"module 'prirfed.flower' has no attribute {name!r}")
