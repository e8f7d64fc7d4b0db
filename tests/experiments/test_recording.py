"""Experiments that compare curves round by round record every round themselves.

The trainers' default ``record_every="auto"`` records a subset of the rounds (cheap histories), so
an experiment that indexes its histories by round must ask for ``record_every=1``: otherwise its
report indexes past the end (``prirfed reproduce prirfed-fig1 --quick`` failed with an IndexError)
or, worse, labels the k-th record as round k. In tiny mode "auto" happens to record every round
(few samples), which hid the defect; here "auto" is made to record almost nothing, so any
experiment that relies on it fails or writes a curve that does not have a row for every round.
"""

import pytest
from exp_helpers import read_csv, run_tiny

import prirfed.reference.trainers.base as trainer_base

#: the experiments whose curves.csv has one row per round (and per setting / algorithm)
PER_ROUND = ("prirfed-fig1", "prirfed-fig2", "prirfed-fig3", "prirfed-fig5", "rfed-fig2")


@pytest.mark.parametrize("name", PER_ROUND)
def test_curves_have_every_round_even_when_auto_records_almost_nothing(name, tmp_path, monkeypatch):
    monkeypatch.setattr(trainer_base, "AUTO_RECORD_FACTOR", 10**9)  # "auto" = only rounds 0 and T
    r = run_tiny(name, tmp_path / "out")
    assert not r.get("failed"), r
    rows = read_csv(tmp_path / "out" / "curves.csv")
    rounds = sorted({int(row["round"]) for row in rows})
    assert rounds == list(range(rounds[-1] + 1)), f"{name}: curves.csv misses rounds: {rounds[:10]}..."
    assert rounds[-1] >= 2, f"{name}: too few rounds to tell ({rounds})"
