"""What ``prirfed --help`` and every ``prirfed COMMAND --help`` tell a user, read as printed.

Every subcommand has a description and examples; every option has a help text that shows its
default (or says it is required); the examples of the cheap commands run, and those of
``reproduce`` and ``run`` parse and name an experiment or a configuration file that exists (those
of ``warmup`` parse);
no paper is named by an internal code; ``--version`` prints the installed version.
"""

import io
import re
import shlex
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from prirfed import cli

ROOT = Path(__file__).resolve().parent.parent
# a paper code standing alone (not a digit group of 0.001 or 1,000, not part of an identifier)
PAPER_CODE = re.compile(r"(?<![\w.,])00[0-4](?![\w]|[.,]\d)")


def help_text(*argv) -> str:
    buf = io.StringIO()
    with pytest.raises(SystemExit) as exc, _stdout(buf):
        cli.main([*argv, "--help"])
    assert exc.value.code == 0
    return buf.getvalue()


class _stdout:
    def __init__(self, buf):
        self.buf = buf

    def __enter__(self):
        import sys

        self.old, sys.stdout = sys.stdout, self.buf

    def __exit__(self, *exc):
        import sys

        sys.stdout = self.old


def option_entries(text: str) -> dict[str, str]:
    """{option: its help text} from the 'options:' section of an argparse help page."""
    section = text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0]
    entries, current = {}, None
    for line in section.splitlines():
        m = re.match(r"^  (-[-\w]+)", line)
        if m:
            current = m.group(1)
            entries[current] = line[len(m.group(0)):]
        elif current:
            entries[current] += " " + line.strip()
    return {k: " ".join(v.split()) for k, v in entries.items()}


def examples(text: str) -> list[str]:
    return [ln.strip() for ln in text.split("\nexamples:\n", 1)[1].splitlines() if ln.startswith("  prirfed ")]


def test_version_is_the_installed_one(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert capsys.readouterr().out == f"prirfed {pyproject}\n"
    assert version("prirfed") == pyproject


@pytest.mark.parametrize("command", sorted(cli.SUBCOMMANDS))
def test_every_subcommand_has_a_description_and_examples(command):
    text = help_text(command)
    description = text.split("\n\n", 2)[1]
    assert len(description.split()) >= 10, f"prirfed {command} --help: no description:\n{text}"
    ex = examples(text)
    assert ex and all(e.startswith(f"prirfed {command}") for e in ex), text


@pytest.mark.parametrize("command", [None, *sorted(cli.SUBCOMMANDS)])
def test_every_option_has_help_and_shows_its_default(command):
    text = help_text(*([command] if command else []))
    entries = option_entries(text)
    assert "-h" in entries
    for option, help_ in entries.items():
        if option in ("-h", "--version"):
            continue
        assert help_.strip(), f"{option}: no help text"
        assert "default" in help_ or "required" in help_, f"prirfed {command} {option}: no default shown: {help_!r}"


def test_defaults_shown_are_the_parser_defaults():
    entries = option_entries(help_text("reproduce"))
    assert "(default: 0)" in entries["--seed"] and "(default: 1)" in entries["--workers"]
    assert "(default: verified)" in entries["--backend"] and "(default: off)" in entries["--resume"]
    assert "(default: 1.0)" in option_entries(help_text("account"))["--tau"]
    assert "(default: text)" in option_entries(help_text("privacy-table"))["--format"]


@pytest.mark.parametrize("command", ["privacy-table", "list", "account"])
def test_the_examples_run(command):
    for ex in examples(help_text(command)):
        out = io.StringIO()
        assert cli.main(shlex.split(ex)[1:], out=out) == 0, ex
        assert out.getvalue().strip(), ex


def test_the_examples_of_reproduce_and_run_parse_and_name_what_exists():
    from prirfed.experiments import EXPERIMENTS

    parser = cli.build_parser()
    for ex in examples(help_text("reproduce")):
        args = parser.parse_args(shlex.split(ex)[1:])
        assert args.experiment == "all" or args.experiment in EXPERIMENTS, ex
    for ex in examples(help_text("run")):
        args = parser.parse_args(shlex.split(ex)[1:])
        assert (ROOT / args.config).is_file(), ex
    for ex in examples(help_text("warmup")):  # parsed only: a cold compile takes minutes
        args = parser.parse_args(shlex.split(ex)[1:])
        assert args.command == "warmup", ex


def test_no_paper_code_in_help_list_or_privacy_table():
    texts = {"prirfed --help": help_text()}
    texts.update({f"prirfed {c} --help": help_text(c) for c in cli.SUBCOMMANDS})
    for argv in (["list"], ["privacy-table"], ["privacy-table", "--format", "markdown"]):
        out = io.StringIO()
        assert cli.main(argv, out=out) == 0
        texts["prirfed " + " ".join(argv)] = out.getvalue()
    for what, text in texts.items():
        m = PAPER_CODE.search(text)
        assert m is None, f"{what}: paper code {m.group(0)!r} in ...{text[max(0, m.start() - 60):m.end() + 40]}..."
    assert "Huang et al. (2024)" in texts["prirfed privacy-table"] and "Li and Ma (2023)" in texts["prirfed list"]
