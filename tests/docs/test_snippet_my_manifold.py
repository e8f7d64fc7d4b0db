"""The user's test file shown on docs/verify_your_code.md (snippet_my_manifold.py), run by this suite.

tests/docs/test_pytest_plugin.py also runs it the way a user does, in a project of its own.
"""

from snippet_my_manifold import TestMySphere, TestMySphereEqualsReference  # noqa: F401  (collected here)
