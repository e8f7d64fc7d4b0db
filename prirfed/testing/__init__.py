"""Reusable test suites: check your own implementation against prirfed's contracts.

``prirfed.testing.manifold_contract`` holds :class:`ManifoldContract` (the identities every
manifold must satisfy) and :class:`VerifiedEquivalence` (a twin equals its reference). Subclass
them in a pytest file and set the manifold (a complete example: ``tests/docs/snippet_my_manifold.py``,
shown on the documentation page "Verify your own implementation"). ``prirfed.testing.pytest_plugin``
registers the Hypothesis profiles ``prirfed-dev``, ``prirfed-ci`` and ``prirfed-thorough`` in every
pytest run (entry point ``pytest11``). These modules need the ``test`` extra (pytest, hypothesis).
"""
