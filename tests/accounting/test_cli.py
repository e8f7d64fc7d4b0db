"""The ``prirfed`` CLI: privacy-table prints Table 1 (parsed back and compared with theorem_4_2)."""

import csv
import io

import pytest

from prirfed.cli import SUBCOMMANDS, main
from prirfed.reference.accounting import theorem_4_2
from prirfed.reference.accounting.paper import TABLE_1_ROWS, TABLE_1_T
from prirfed.reference.accounting.prirfed_accountant import blackbox_exact_delta


def run(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_privacy_table_csv_matches_theorem_4_2_and_is_sound(capsys):
    code, out, _ = run(["privacy-table", "--format", "csv"], capsys)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 48
    expected = [(N, s, T) for N, s in TABLE_1_ROWS for T in TABLE_1_T]
    for r, (N, s, T) in zip(rows, expected):
        assert (int(r["N"]), int(r["s"]), int(r["T"])) == (N, s, T)
        e, d = theorem_4_2(0.15, 1e-4, N, s, T, 1e-3)
        assert float(r["eps_paper"]) == e and float(r["delta_paper"]) == d  # full precision round trip
        # the rigorous eps' reaches the paper's delta' (and a slightly smaller eps' does not)
        er = float(r["eps_rigorous"])
        assert blackbox_exact_delta(0.15, 1e-4, s / N, T, er) <= d
        assert blackbox_exact_delta(0.15, 1e-4, s / N, T, er * (1 - 1e-6)) > d
        # the attainable lower bound (the activated randomized response, optimistic grid) is below it
        assert 0.98 * er <= float(r["eps_lower"]) <= er


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_privacy_table_other_formats(fmt, capsys):
    code, out, _ = run(["privacy-table", "--format", fmt], capsys)
    assert code == 0
    assert "eps_rigorous" in out
    assert "0.0426" in out and "6.03" in out  # two printed cells of Table 1


def test_account_sigma_and_eps_round_trip(capsys):
    code, out, _ = run(["account", "--trainer", "dp-rsgd", "--eps", "1.0", "--delta", "1e-5", "--K", "3", "--N-i", "600", "--batch", "60", "--N", "100", "--s", "5", "--T", "500"], capsys)
    assert code == 0
    sigma = float(out.split("needs sigma = ")[1].split()[0])
    code, out, _ = run(["account", "--trainer", "dp-rsgd", "--sigma", repr(sigma), "--delta", "1e-5", "--K", "3", "--N-i", "600", "--batch", "60", "--N", "100", "--s", "5", "--T", "500"], capsys)
    eps = float(out.split("gives eps = ")[1].split()[0])
    assert abs(eps - 1.0) < 1e-4


def test_account_dp_rsvrg_and_errors(capsys):
    code, out, _ = run(["account", "--trainer", "dp-rsvrg", "--sigma", "1.0", "--delta", "1e-4", "--K", "3", "--N-i", "250", "--m", "10"], capsys)
    assert code == 0 and "DP-RSVRG" in out
    code, _, err = run(["account", "--trainer", "dp-rsvrg", "--sigma", "1.0", "--delta", "1e-4", "--K", "3", "--N-i", "250"], capsys)
    assert code == 2 and "--m is required" in err
    code, _, err = run(["account", "--trainer", "dp-rsgd", "--sigma", "-1.0", "--delta", "1e-4", "--K", "3", "--N-i", "250"], capsys)
    assert code == 2 and "sigma must be finite and > 0" in err
    code, _, err = run(["account", "--trainer", "dp-rsgd", "--sigma", "1.0", "--delta", "1e-4", "--K", "3", "--N-i", "250", "--N", "10"], capsys)
    assert code == 2 and "give all of --N, --s, --T" in err


def test_account_prints_lower_and_upper_and_takes_the_accountant(capsys):
    base = ["account", "--trainer", "dp-rsgd", "--sigma", "0.45", "--delta", "1e-5", "--K", "3", "--N-i", "600", "--batch", "60",
            "--N", "100", "--s", "5", "--T", "500"]
    vals = {}
    for acc in ("best", "pld", "rdp"):
        code, out, _ = run(base + ["--accountant", acc], capsys)
        assert code == 0 and f"accountant {acc}" in out
        vals[acc] = float(out.split("gives eps = ")[1].split()[0])
        lo, up = (float(x) for x in out.split("eps in [")[1].split("]")[0].split(", "))
        assert lo <= up == pytest.approx(vals[acc], rel=1e-5, abs=0) and "upper/lower" in out
    assert vals["best"] == vals["pld"] < vals["rdp"]


@pytest.mark.parametrize("argv,match", [
    (["--delta", "-1e-5"], "--delta must lie in \\(0, 1\\) \\(got --delta = -1e-05"),
    (["--delta", "nan"], "--delta must be finite"),
    (["--delta", "1e-5", "--K", "-3"], "--K must be >= 1 \\(got --K = -3"),
    (["--delta", "1e-5", "--tau", "-2.5"], "--tau must be finite and > 0 \\(got --tau = -2.5"),
    (["--delta", "1e-5", "--batch", "700"], "--batch = 700 exceeds --N-i = 600"),
    (["--delta", "1e-5", "--N", "10", "--s", "11", "--T", "5"], "--s = 11 exceeds --N = 10"),
])
def test_account_bad_numbers_name_the_option_and_value(argv, match, capsys):
    """Negative numbers reach the validation (argparse used to read -1e-5 as an option) and every
    error names the option and the value, on one line, exit code 2."""
    import re

    code, out, err = run(["account", "--trainer", "dp-rsgd", "--sigma", "0.5", "--K", "3", "--N-i", "600"] + argv, capsys)
    assert code == 2 and out == "" and re.search(match, err) and err.startswith("prirfed account: error: ") and err.count("\n") == 1


def test_privacy_table_accountant_choice(capsys):
    code, out, _ = run(["privacy-table", "--format", "csv", "--accountant", "pld"], capsys)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    for r in rows:  # the PLD accountant's eps' is an upper bound of the exact one, and close to it
        N, s, T = int(r["N"]), int(r["s"]), int(r["T"])
        er, lo = float(r["eps_rigorous"]), float(r["eps_lower"])
        assert blackbox_exact_delta(0.15, 1e-4, s / N, T, er) <= float(r["delta_paper"])
        assert lo <= er <= 1.01 * max(lo, 1e-9) + 0.01
    code, _, err = run(["privacy-table", "--accountant", "rdp"], capsys)
    assert code == 2 and "RDP has no finite bound" in err


def test_subcommand_registry_is_a_dict_others_can_extend():
    assert {"privacy-table", "account"} <= set(SUBCOMMANDS)
    for help_, add, run_ in SUBCOMMANDS.values():
        assert isinstance(help_, str) and callable(add) and callable(run_)


@pytest.mark.parametrize("argv,match", [
    # calibrating for such an eps took minutes (fuzz suite: a generated command ran past 180 s)
    (["--eps", "1e308"], r"--eps = 1e\+308 exceeds 100 \(by 1e\+308\)"),
    (["--eps", "100.5"], r"--eps = 100\.5 exceeds 100 \(by 0\.5\)"),
    # z = sigma b / (2 tau) = 5e-300: z^-2 overflowed inside the RDP accountant (an OverflowError)
    (["--sigma", "1e-300"], r"noise multiplier z = 5e-300 is below 2\^-511"),
    # z = 0.05: the attainable lower bound (about 1302) exceeded the PLD upper bound (about 1299), and the
    # pair was printed as a bound; the numbers are the code's own, so only the message's form is checked
    (["--sigma", "0.01"], r"the attainable lower bound eps = 1[0-9]{3}\.[0-9]+ exceeds the pld upper bound 1[0-9]{3}\.[0-9]+ \(by "),
])
def test_account_refuses_settings_outside_the_accountants_range_in_one_line(argv, match, capsys):
    """Far outside useful privacy (eps in the hundreds and beyond) ``account`` refuses at once with a
    one-line error and exit code 2, instead of calibrating for minutes, raising an unexpected
    OverflowError, or printing a lower bound above its upper bound."""
    import re

    code, out, err = run(["account", "--trainer", "dp-rsgd", "--delta", "1e-5", "--K", "10", "--N-i", "100",
                          "--batch", "10"] + argv, capsys)
    assert code == 2 and out == "" and err.startswith("prirfed account: error: ") and err.count("\n") == 1, err
    assert re.search(match, err), err
    assert "unexpected" not in err


def test_account_at_the_eps_cap_calibrates_with_consistent_bounds(capsys):
    """eps = 100, the largest target: sigma is found and lower <= upper."""
    import re

    code, out, err = run(["account", "--trainer", "dp-rsgd", "--eps", "100", "--delta", "1e-5", "--K", "10", "--N-i",
                          "100", "--batch", "10"], capsys)
    assert code == 0, err
    lo, up = map(float, re.search(r"eps in \[([0-9.e+-]+), ([0-9.e+-]+)\]", out).groups())
    assert lo <= up <= 100.0
