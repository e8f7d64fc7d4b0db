"""The papers prirfed implements, named for readers.

Inside the project (proofs notes, test names, configuration files) the papers are keyed by short
codes; everything a user reads (the command line, the documentation) names them author-year
instead, with the full reference in the bibliography (``docs/refs.bib``, the "Bibliography"
page of the documentation).

Examples
--------
>>> from prirfed.papers import PAPERS, name_papers
>>> PAPERS["000"].short
'Huang et al. (2024)'
>>> name_papers("Table 1 of 000 beside 001 Theorem 1; eps = 0.001, N = 1000")
'Table 1 of Huang et al. (2024) beside Han et al. (2024) Theorem 1; eps = 0.001, N = 1000'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Paper", "PAPERS", "CODE", "name_papers"]


@dataclass(frozen=True)
class Paper:
    """One paper: its author-year name, its BibTeX key in ``docs/refs.bib`` and its title.

    Parameters
    ----------
    short : str
        Author-year name as printed for readers, e.g. ``"Huang et al. (2024)"``.
    key : str
        BibTeX key of the full reference in ``docs/refs.bib``.
    title : str
        Title of the paper.
    """

    short: str
    key: str
    title: str


#: The papers by their internal code. Years: the published versions that the papers themselves
#: cite (Huang et al. cite Han et al. as Machine Learning 2024 and Li and Ma as Applied
#: Set-Valued Analysis and Optimization 2023); Huang et al. is the 2024 preprint.
PAPERS: dict[str, Paper] = {
    "000": Paper("Huang et al. (2024)", "huang2024prirfed",
                 "Federated Learning on Riemannian Manifolds with Differential Privacy"),
    "001": Paper("Han et al. (2024)", "han2024dp", "Differentially Private Riemannian Optimization"),
    "002": Paper("Li and Ma (2023)", "li2022federated", "Federated Learning on Riemannian Manifolds"),
    "004": Paper("Sutti (2022)", "sutti2022slides", "Federated Learning on Riemannian Manifolds (seminar slides)"),
}

#: A paper code standing alone: not a digit group of a number (``0.001``, ``1,000``, ``10001``)
#: and not part of a name (``theorem_000_5_1``, ``test_001_x``).
CODE = re.compile(r"(?<![\w.,-])(0\d\d)(?![\w]|[.,]\d)")


def name_papers(text: str) -> str:
    """Replace every standalone paper code of ``text`` by the paper's author-year name.

    Parameters
    ----------
    text : str
        Plain text (a help string, a table caption, an experiment's description).

    Returns
    -------
    str
        ``text`` with ``000``, ``001``, ``002`` and ``004`` replaced as in :data:`PAPERS`; other
        numbers and identifiers are left alone.
    """
    return CODE.sub(lambda m: PAPERS[m.group(1)].short if m.group(1) in PAPERS else m.group(0), text)
