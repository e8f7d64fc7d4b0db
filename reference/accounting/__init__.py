"""Privacy accounting as an event algebra.

- :mod:`.events`: frozen event classes (Gaussian, EpsilonDelta, SampledWithoutReplacement, ...).
- :mod:`.accountants`: the accountant choice (``"best"``, ``"pld"``, ``"rdp"``) and privacy
  reports with an upper and an attainable lower bound.
- :mod:`.pld`: the privacy loss distribution accountant (dominating pairs).
- :mod:`.paper`: the *paper accountant*, Theorems 2.2, 2.3, 4.1, 4.2 and Lemma 4.1 of Huang et al.
  (2024) as printed (Theorem 4.2 is not sound: see the errata page).
- :mod:`.rdp`: Rényi-DP accountant (Gaussian, sampling without replacement of Wang, Balle and
  Kasiviswanathan (2019), the Poisson-sampled Gaussian of Mironov, Talwar and Zhang (2019),
  activation, conversions to (eps, delta)).
- :mod:`.prirfed_accountant`: the rigorous record-level accountant of a whole PriRFed run.
- :mod:`.calibration`: noise calibration and the papers' noise formulas.
- :mod:`.mp`: 50-digit mpmath twins of the scalar formulas (test oracles).
"""
from .paper import table_1, theorem_4_2  # noqa: F401

__all__ = ["theorem_4_2", "table_1"]
