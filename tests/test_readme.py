"""The README's Python example runs and its privacy number is a real computation."""

import math
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_example_runs():
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    ns: dict = {}
    exec(compile(block, "README.md", "exec"), ns)
    assert ns["run"].event is not None
    assert math.isfinite(ns["eps"]) and ns["eps"] > 0
    ns["problem"].manifold.check_point(ns["run"].x)


def test_readme_gives_the_ci_test_command():
    ci = (README.parent / ".ci" / "run").read_text()
    cmd = re.search(r"```bash\n(HYPOTHESIS_PROFILE=prirfed-ci python -m pytest[^\n]*)\n```", README.read_text()).group(1)
    assert cmd in ci
