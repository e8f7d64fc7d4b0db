"""proofs_notes/ front matter: parse it, resolve the code it names, and detect stale notes.

Every note in ``proofs_notes/`` starts with a front matter block::

    ---
    title: The sphere S^d
    source: Huang et al. (2024) section 6.1; Han et al. (2024) section 5.1
    code:
      - prirfed.reference.manifolds.sphere.Sphere.log
    tests:
      - tests/manifolds/test_sphere.py::test_log_exact_at_tiny_angles
    hashes:
      prirfed.reference.manifolds.sphere.Sphere.log: 3f2a9c0d1e2b4a5c
    ---

``hashes`` holds the first 16 hex digits of the SHA-256 of each object's source (like OpenDP's
proof staleness flag): when the code changes after the note was written, the test
``tests/test_proofs_notes.py`` fails until someone re-reads the note and refreshes the hash with

    python -m prirfed.testing.notes --update proofs_notes/NOTE.md
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import sys
from pathlib import Path

LIST_KEYS = ("code", "tests")
MAP_KEYS = ("hashes",)


def parse_front_matter(text: str, where: str = "note") -> dict:
    """Parse the front matter of a proofs note (the minimal YAML subset the notes use).

    Scalars, lists of scalars (the keys ``code`` and ``tests``) and one-level maps (``hashes``).

    Parameters
    ----------
    text : str
        The note's text; its first line must be ``---``.
    where : str, optional
        Name of the note, used in error messages.

    Returns
    -------
    dict
        The keys of the front matter and their values (str, list of str, or dict of str).

    Raises
    ------
    ValueError
        If there is no front matter, it is not closed, or a line cannot be read.
    """
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError(f"{where}: no front matter (the first line must be '---')")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ValueError(f"{where}: front matter is not closed by '---'") from None
    meta: dict = {}
    key = None
    for raw in lines[1:end]:
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if not raw.startswith(" "):
            k, _, v = raw.partition(":")
            key = k.strip()
            v = v.strip()
            meta[key] = v if v else ([] if key in LIST_KEYS else {} if key in MAP_KEYS else "")
            continue
        item = raw.strip()
        if key in LIST_KEYS and item.startswith("- "):
            meta[key].append(item[2:].strip())
        elif key in MAP_KEYS and ":" in item:
            k, _, v = item.partition(":")
            meta[key][k.strip()] = v.strip()
        else:
            raise ValueError(f"{where}: cannot read front-matter line {raw!r}")
    return meta


def resolve(dotted: str):
    """The object a dotted name refers to: import its longest module prefix, then walk attributes.

    Parameters
    ----------
    dotted : str
        A dotted name such as ``prirfed.reference.manifolds.sphere.Sphere.log``.

    Returns
    -------
    object
        The module, class, function or attribute named.

    Raises
    ------
    ImportError
        If no prefix of ``dotted`` can be imported.
    AttributeError
        If an attribute after the module prefix does not exist.
    """
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot import any prefix of {dotted!r}")


def source_hash(obj) -> str:
    """First 16 hex digits of the SHA-256 of an object's source (the staleness flag of a note).

    A Numba dispatcher is hashed through its Python function, a decorated function through the
    function it wraps.

    Parameters
    ----------
    obj : object
        A function, class or method.

    Returns
    -------
    str
        16 hexadecimal digits.
    """
    target = inspect.unwrap(getattr(obj, "py_func", obj))
    return hashlib.sha256(inspect.getsource(target).encode()).hexdigest()[:16]


def update(path: Path) -> None:
    """Rewrite the ``hashes`` block of a note's front matter with the current source hashes of its ``code``.

    Run it after re-reading a note whose code changed:
    ``python -m prirfed.testing.notes --update proofs_notes/NOTE.md``.

    Parameters
    ----------
    path : pathlib.Path
        The note to update (rewritten in place).

    Raises
    ------
    ValueError
        If the note's front matter cannot be read.
    """
    text = path.read_text()
    meta = parse_front_matter(text, str(path))
    lines = text.splitlines()
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    head = [ln for ln in lines[1:end]]
    # drop the old hashes block
    out, skipping = [], False
    for ln in head:
        if ln.startswith("hashes:"):
            skipping = True
            continue
        if skipping and ln.startswith(" "):
            continue
        skipping = False
        out.append(ln)
    out.append("hashes:")
    for name in meta.get("code", []):
        out.append(f"  {name}: {source_hash(resolve(name))}")
    path.write_text("\n".join(["---", *out, "---", *lines[end + 1:]]) + "\n")


if __name__ == "__main__":  # pragma: no cover - maintenance command
    if len(sys.argv) < 3 or sys.argv[1] != "--update":
        print("usage: python -m prirfed.testing.notes --update proofs_notes/NOTE.md [...]")
        raise SystemExit(2)
    for p in sys.argv[2:]:
        update(Path(p))
        print(f"updated {p}")
