"""The docstring examples are self-contained and run against the installed package.

``--doctest-modules`` (pyproject.toml) imports reference/ and verified/ under their folder names
(``reference.manifolds.sphere``) beside the installed ``prirfed.reference.manifolds.sphere``.
An example that used its module's globals would then exercise that second copy. Here every
module's examples are run again from the *installed* module with an EMPTY namespace: an example
that does not import what it uses from ``prirfed.…`` fails, and so does one that names the bare
folders. The test also pins which modules must carry examples (issue 8).
"""

import doctest
import importlib
import importlib.util
import pkgutil

import pytest
from _pytest.doctest import _get_checker, get_optionflags  # pytest's own flags (NUMBER) and checker


MUST_HAVE_EXAMPLES = [
    "prirfed.reference.manifolds.sphere",
    "prirfed.reference.manifolds.spd",
    "prirfed.reference.manifolds.lorentz",
    "prirfed.reference.manifolds.stiefel",
    "prirfed.reference.manifolds.euclidean",
    "prirfed.reference.mechanisms",
    "prirfed.reference.accounting.events",
    "prirfed.reference.accounting.paper",
    "prirfed.reference.accounting.prirfed_accountant",
    "prirfed.reference.accounting.rdp",
    "prirfed.reference.accounting.calibration",
    "prirfed.verified.manifolds.sphere",
    "prirfed.verified.manifolds.spd",
    "prirfed.verified.manifolds.lorentz",
    "prirfed.verified.manifolds.stiefel",
    "prirfed.verified.manifolds.euclidean",
]


#: modules that import Flower at import time (the ``flower`` extra); everything else must import
#: without any extra
NEEDS_FLOWER = ("prirfed.flower.app", "prirfed.flower.apps")


def _modules_with_examples():
    names = []
    infos = []
    for pkg in ("prirfed", "prirfed.reference", "prirfed.verified"):  # the subpackages live in other folders
        infos += list(pkgutil.walk_packages(importlib.import_module(pkg).__path__, pkg + "."))
    for info in infos:
        if info.name in NEEDS_FLOWER and importlib.util.find_spec("flwr") is None:
            continue  # the flower extra is not installed: .ci/run tests these modules in its second step
        try:
            mod = importlib.import_module(info.name)
        except Exception as exc:  # pragma: no cover - an unimportable module is its own failure
            raise AssertionError(f"cannot import {info.name}: {exc}") from exc
        tests = doctest.DocTestFinder(recurse=True).find(mod, info.name, globs={})
        if any(t.examples for t in tests):
            names.append(info.name)
    return names


WITH_EXAMPLES = _modules_with_examples()


def test_required_modules_have_examples():
    missing = [m for m in MUST_HAVE_EXAMPLES if m not in WITH_EXAMPLES]
    assert not missing, f"modules without docstring examples: {missing}"


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_examples_are_self_contained_and_use_installed_names(name, pytestconfig):
    mod = importlib.import_module(name)
    runner = doctest.DocTestRunner(checker=_get_checker(), optionflags=get_optionflags(pytestconfig))
    out = []
    for t in doctest.DocTestFinder(recurse=True).find(mod, name, globs={}):
        for ex in t.examples:
            src = ex.source
            assert not any(src.lstrip().startswith(p) for p in ("from reference", "import reference", "from verified", "import verified", "from .")), \
                f"{t.name}: example imports a bare folder or a relative module: {src.strip()!r}"
        runner.run(t, out=out.append)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, "".join(out)
