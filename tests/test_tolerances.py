"""Every comparison in a test states its tolerance, and the tolerance it states is the one it checks.

``pytest.approx(x, rel=r)`` also accepts anything within an absolute 1e-12, and
``numpy.allclose(a, b, rtol=r)`` (and ``isclose``) within an absolute 1e-8. Wherever
``r |expected|`` is below those, the default absolute tolerance, not the stated one, decides: a
``rel=1e-15`` comparison of a value near 0.2 accepted 1e-12, a ``rtol=1e-15`` one near 0.25
accepted 1e-8, and a delta of 1e-91 compared with ``rel=1e-11`` accepted any value below 1e-12.
So a call that states a relative tolerance must state its absolute one too (``abs=0`` /
``atol=0`` when none is meant), and a call that states neither is as loose: ``pytest.approx(x)``
accepts 1e-6 relative (a constant off in its seventh digit passes) and numpy 1e-5 relative plus
1e-8 absolute. Every comparison states the tolerance it means. This test reads the test files'
syntax trees and lists every call that does not.
"""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _loose_calls(tree: ast.AST):
    """(line, text) of approx/allclose/isclose calls with a relative tolerance and no absolute one."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)):
            continue
        owner, name = node.func.value.id, node.func.attr
        kws = {k.arg for k in node.keywords}
        if None in kws:  # **kwargs: cannot tell
            continue
        if owner == "pytest" and name == "approx" and len(node.args) == 1:
            if "rel" in kws and "abs" not in kws:
                yield node.lineno, "pytest.approx(..., rel=...) without abs="
            elif not kws & {"rel", "abs"}:
                yield node.lineno, "pytest.approx(...) with the default tolerances (rel 1e-6, abs 1e-12)"
        if owner in ("np", "numpy") and name in ("allclose", "isclose") and len(node.args) <= 3:
            if "rtol" in kws and "atol" not in kws:
                yield node.lineno, f"{owner}.{name}(..., rtol=...) without atol="
            elif len(node.args) == 2 and not kws & {"rtol", "atol"}:
                yield node.lineno, f"{owner}.{name}(...) with the default tolerances (rtol 1e-5, atol 1e-8)"


def test_the_checker_finds_each_kind_of_loose_call():
    """The checker itself, on a hand-written file: five loose calls found, six stated ones not."""
    src = (
        "pytest.approx(1.0, rel=1e-15)\n"
        "np.allclose(a, b, rtol=1e-15)\n"
        "numpy.isclose(a, b, rtol=1e-9)\n"
        "pytest.approx(1.0, rel=1e-15, abs=0)\n"
        "np.allclose(a, b, rtol=1e-15, atol=0)\n"
        "np.allclose(a, b, 1e-15, 0.0)\n"
        "pytest.approx(1.0)\n"
        "np.isclose(a, b)\n"
        "pytest.approx(1.0, abs=1e-3)\n"
        "np.allclose(a, b, atol=1e-3)\n"
    )
    assert [line for line, _ in _loose_calls(ast.parse(src))] == [1, 2, 3, 7, 8]


def test_every_comparison_states_its_tolerance():
    found = [f"{path.relative_to(TESTS)}:{line}: {what}"
             for path in sorted(TESTS.rglob("*.py")) for line, what in _loose_calls(ast.parse(path.read_text()))]
    assert not found, "state the absolute tolerance (abs=0 / atol=0 if none is meant):\n" + "\n".join(found)
