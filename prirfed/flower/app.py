"""The components of the Flower App that runs a prirfed job (``serverapp = "prirfed.flower.app:server_app"``,
``clientapp = "prirfed.flower.app:client_app"``): built at import, so import it only where Flower
is installed (:func:`prirfed.flower.deployment.deployed_apps`)."""

from __future__ import annotations

from .deployment import deployed_apps

# Flower finds the components by reading this file (ast), not by importing it: name them in __all__
__all__ = ["server_app", "client_app"]

server_app, client_app = deployed_apps()
