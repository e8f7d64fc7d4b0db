"""Root conftest: what pytest's doctest collection of the package folders must leave out.

``prirfed/flower/app.py`` and ``prirfed/flower/apps.py`` import Flower at import time; without the
``flower`` extra they are not collected (``.ci/run`` runs the Flower tests in a second step, in a venv
with that extra). Every other module is collected and must import without any extra.
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("flwr") is None:
    collect_ignore += ["prirfed/flower/app.py", "prirfed/flower/apps.py"]
