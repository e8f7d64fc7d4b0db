"""tests/verified: every test here uses the fused loops compiled once per session
(``compiled_fused_loops`` in tests/conftest.py), so no test pays the compile time (issue 5)."""

import pytest


@pytest.fixture(autouse=True)
def _fused_loops_compiled(compiled_fused_loops):
    return compiled_fused_loops
