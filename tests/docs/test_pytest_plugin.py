"""prirfed's pytest plugin in a user's own project (docs/verify_your_code.md).

Each test writes a user-style project into a temporary folder outside the repository: the page's
test file (``snippet_my_manifold.py``, run as ``test_my_manifold.py``, which subclasses
``ManifoldContract`` and ``VerifiedEquivalence``) and a test that asserts which Hypothesis
settings are in force. It then runs ``python -m pytest`` there in a subprocess, as a user would,
with the installed prirfed: the profile names, the ``--hypothesis-profile`` option, the
``HYPOTHESIS_PROFILE`` variable and the ini option must all work. The expected settings are those
the documentation promises (typed here, not read from the plugin).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# name -> (max_examples, derandomize), as docs/verify_your_code.md states them
DOCUMENTED = {"prirfed-dev": (30, False), "prirfed-ci": (60, True), "prirfed-thorough": (2000, False)}

PROFILE_CHECK = '''
import os

from hypothesis import settings


def test_profile_in_force():
    s = settings.default
    assert settings.get_current_profile_name() == os.environ["EXPECT_PROFILE"]
    assert s.max_examples == int(os.environ["EXPECT_MAX_EXAMPLES"])
    assert s.derandomize == (os.environ["EXPECT_DERANDOMIZE"] == "1")
'''


@pytest.fixture
def user_project(tmp_path):
    assert ROOT not in tmp_path.resolve().parents, "the user project must live outside the repository"
    shutil.copy(HERE / "snippet_my_manifold.py", tmp_path / "test_my_manifold.py")
    (tmp_path / "test_profile_in_force.py").write_text(PROFILE_CHECK)
    return tmp_path


def run_pytest(folder: Path, args=(), env=None, expect=("default", 100, False)):
    """pytest in ``folder`` as a user runs it: no repository on the path, no inherited profile,
    and no CI variable (Hypothesis loads its own ``ci`` profile when it sees one)."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("HYPOTHESIS_PROFILE", "CI", "PYTEST_ADDOPTS", "PYTHONPATH")}
    clean.update(env or {})
    name, n, derandomize = expect
    clean.update(EXPECT_PROFILE=name, EXPECT_MAX_EXAMPLES=str(n), EXPECT_DERANDOMIZE="1" if derandomize else "0")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args],
                          cwd=folder, env=clean, capture_output=True, text=True, timeout=900)


def passed(r) -> int:
    m = re.search(r"(\d+) passed", r.stdout)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("how", ["option", "env"])
@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_the_users_suite_runs_under_each_profile(user_project, name, how):
    args = [f"--hypothesis-profile={name}"] if how == "option" else []
    env = {"HYPOTHESIS_PROFILE": name} if how == "env" else {}
    if name == "prirfed-thorough":  # 2000 examples of every identity take a minute: two tests here
        args += ["-k", "profile_in_force or proj_is_idempotent"]
    r = run_pytest(user_project, args, env, expect=(name, *DOCUMENTED[name]))
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert f"loaded: {name}" in r.stdout, out  # the plugin's report header
    assert passed(r) >= (2 if name == "prirfed-thorough" else 18), out
    if name != "prirfed-thorough":
        assert "batched = False" in out  # the one skip, with its reason


def test_the_option_wins_over_the_environment(user_project):
    r = run_pytest(user_project, ["--hypothesis-profile=prirfed-ci", "-k", "profile_in_force"],
                   {"HYPOTHESIS_PROFILE": "prirfed-dev"}, expect=("prirfed-ci", 60, True))
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_ini_option_is_the_default(user_project):
    (user_project / "pytest.ini").write_text("[pytest]\nprirfed_hypothesis_profile = prirfed-ci\n")
    r = run_pytest(user_project, ["-k", "profile_in_force"], expect=("prirfed-ci", 60, True))
    assert r.returncode == 0, r.stdout + r.stderr


def test_without_a_choice_hypothesis_defaults_stay(user_project):
    r = run_pytest(user_project, ["-k", "profile_in_force"], expect=("default", 100, False))
    assert r.returncode == 0, r.stdout + r.stderr


def test_an_unknown_profile_is_a_usage_error(user_project):
    r = run_pytest(user_project, [], {"HYPOTHESIS_PROFILE": "thorough"})
    assert r.returncode == 4, r.stdout + r.stderr  # pytest's exit code for a usage error
    assert "HYPOTHESIS_PROFILE='thorough': no such Hypothesis profile" in r.stderr
    assert "prirfed-thorough" in r.stderr
