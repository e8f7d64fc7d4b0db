"""Output folders that never lose data (issue 19; prirfed/experiments/outputs.py and
framework.reproduce): what a run does to a folder that is not empty, the lock, atomic writes on a
full disk and an unwritable folder, planted symbolic links, and --resume.

The oracle throughout is a byte-exact snapshot of the folder (tests/cli/cli_helpers.snapshot)
taken before the command: a refused or failed command must leave it equal, --overwrite must leave
every old byte in the ``.old-`` sibling, and no ``.prirfed-tmp-*`` / ``.prirfed-staging-*`` may
remain. Runs use the reference backend (no Numba compile). Proofs note: proofs_notes/experiments.md.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from prirfed.experiments import outputs
from prirfed.experiments.outputs import (
    CorruptRunFile,
    FolderLocked,
    FolderRefused,
    OutputError,
    RunFolder,
    inspect_folder,
    write_bytes,
    write_text,
)
from cli_helpers import assert_one_line_error, leftovers, run_cli, small_doc, snapshot, write_toml

RUN = ["--backend", "reference", "--no-progress"]


@pytest.fixture
def config(tmp_path) -> Path:
    return write_toml(tmp_path / "c.toml", small_doc())


def _run(config, out, *extra):
    return run_cli(["run", config, "--out", out, *RUN, *extra])


def _outputs_of(out: Path) -> dict:
    """The run's outputs (every file but the plots, which hold no run-dependent bytes we compare)."""
    snap = snapshot(out)
    return {k: v for k, v in snap.items() if not k.endswith((".png", ".pdf"))}


# ----------------------------------------------------------------------------- a non-empty folder


def test_rerun_into_a_finished_run_is_refused_and_changes_nothing(tmp_path, config):
    out = tmp_path / "o"
    assert _run(config, out)[0] == 0
    before = snapshot(out)
    rc, _, err = _run(config, out)
    line = assert_one_line_error(rc, err, "run", codes=(2,))
    assert "already holds a run of this configuration (2 of 2 trials finished)" in line
    assert "--resume" in line and "--overwrite" in line
    assert snapshot(out) == before


def test_a_folder_of_user_files_is_refused_without_overwrite(tmp_path, config):
    out = tmp_path / "o"
    out.mkdir()
    (out / "summary.md").write_text("my own notes\n")
    (out / "config.json").write_text('{"mine": true}\n')
    before = snapshot(out)
    for extra in ([], ["--resume"]):
        rc, _, err = _run(config, out, *extra)
        line = assert_one_line_error(rc, err, "run", codes=(2,))
        assert "not a prirfed run record" in line
        assert snapshot(out) == before


def test_a_typo_leaves_the_folder_as_it_was(tmp_path, config):
    """Validation happens before the folder is touched: a bad key (run) or a bad --set (reproduce),
    with and without --overwrite, leaves the previous run byte for byte, and no lock file."""
    out = tmp_path / "o"
    assert _run(config, out)[0] == 0
    before = snapshot(out)
    bad = write_toml(tmp_path / "bad.toml", small_doc(trainer={"name": "prirfed", "T": 3, "s": 1, "alpah": 0.5}))
    for extra in ([], ["--overwrite"], ["--resume"]):
        rc, _, err = _run(bad, out, *extra)
        assert "[trainer] alpah: unknown key" in assert_one_line_error(rc, err, "run", codes=(2,))
        assert snapshot(out) == before
    for argv in (["reproduce", "rfed-table1", "--tiny", "--set", "k=0", "--overwrite"],
                 ["reproduce", "rfed-table1", "--tiny", "--set", "k=\"4\"", "--overwrite"],
                 ["reproduce", "rfed-table1", "--tiny", "--set", "seed=5", "--overwrite"]):
        rc, _, err = run_cli(argv + ["--out", out, *RUN])
        assert_one_line_error(rc, err, "reproduce", codes=(2,))
        assert snapshot(out) == before
    assert not list(tmp_path.glob("o.old-*"))


def test_overwrite_moves_everything_aside_and_lists_only_the_new_outputs(tmp_path, config):
    """--overwrite: every old entry (a previous run of another configuration, a user's file, a stale
    figure) is in the ``.old-`` sibling byte for byte; the new run lists exactly its own files."""
    out = tmp_path / "o"
    other = write_toml(tmp_path / "other.toml", small_doc(run={"seed": 4, "repeats": 1}))
    assert _run(other, out)[0] == 0
    (out / "notes.txt").write_text("keep me\n")
    (out / "stale_figure.png").write_bytes(b"old")
    before = snapshot(out)
    rc, stdout, err = _run(config, out, "--overwrite")
    assert rc == 0, err
    old = list(tmp_path.glob("o.old-*"))
    assert len(old) == 1 and snapshot(old[0]) == before
    assert f"previous contents are in {old[0]}" in stdout
    listed = stdout.strip().rsplit(": ", 1)[1].split("; ")[0].split(", ")
    assert listed == ["config.json", "curves.csv", "curves.pdf", "curves.png", "privacy.csv", "summary.md"]
    assert sorted(p.name for p in out.iterdir()) == sorted(listed + ["trials"])
    # a second --overwrite within the same second gets a numbered sibling, never reuses one
    assert _run(config, out, "--overwrite")[0] == 0
    assert len(list(tmp_path.glob("o.old-*"))) == 2
    assert snapshot(old[0]) == before


def test_stale_files_are_never_listed_under_resume(tmp_path, config):
    out = tmp_path / "o"
    assert _run(config, out)[0] == 0
    (out / "from_an_older_version.csv").write_text("stale\n")
    rc, stdout, err = _run(config, out, "--resume")
    assert rc == 0, err
    assert "from_an_older_version.csv" not in stdout and "0 trials run, 2 reused" in stdout
    assert (out / "from_an_older_version.csv").read_text() == "stale\n"


def test_resume_and_overwrite_together_are_refused(tmp_path, config):
    rc, _, err = _run(config, tmp_path / "o", "--resume", "--overwrite")
    assert "exclude each other" in assert_one_line_error(rc, err, "run", codes=(2,))
    assert not (tmp_path / "o").exists()


def test_an_output_path_that_is_a_file_is_refused(tmp_path, config):
    f = tmp_path / "o"
    f.write_text("x")
    for extra in ([], ["--overwrite"], ["--resume"]):
        rc, _, err = _run(config, f, *extra)
        assert "exists and is not a folder" in assert_one_line_error(rc, err, "run", codes=(2,))
        assert f.read_text() == "x"


# ----------------------------------------------------------------------------- --resume


def test_resume_is_byte_identical_to_a_fresh_run(tmp_path, config):
    """An interrupted run (trial 1's record removed) resumed, serially and with 2 worker processes,
    gives byte-identical outputs to an uninterrupted run (config.json, trials, CSVs; summary.md up to
    its count of reused trials)."""
    fresh = tmp_path / "fresh"
    assert _run(config, fresh)[0] == 0
    for workers in ("1", "2"):
        out = tmp_path / f"r{workers}"
        assert _run(config, out)[0] == 0
        (out / "trials" / "trial_0001.json").unlink()
        (out / "curves.csv").unlink()
        rc, stdout, err = _run(config, out, "--resume", "--workers", workers)
        assert rc == 0, err
        assert "1 trials run, 1 reused" in stdout
        got, want = _outputs_of(out), _outputs_of(fresh)
        # summary.md says how many trials were reused; everything else is byte-identical
        summary = got.pop("summary.md")[1].replace(b"(1 reused by --resume)", b"(0 reused by --resume)")
        assert summary == want.pop("summary.md")[1]
        assert got == want
        assert leftovers(out) == []


@pytest.mark.parametrize("damage, named", [
    (lambda p: p.write_text('{"index": 0, "config_'), "is corrupt (not JSON"),
    (lambda p: p.write_bytes(b"\xff\xfe\x00"), "is corrupt (not UTF-8"),
    (lambda p: p.write_text("[1, 2]"), "is not a trial record"),
    (lambda p: (p.unlink(), p.symlink_to(p.parent / "trial_0001.json")), "is a symbolic link"),
    (lambda p: (p.unlink(), os.mkfifo(p)), "is not a regular file"),
])
def test_corrupt_trial_files_under_resume_are_named(tmp_path, config, damage, named):
    out = tmp_path / "o"
    assert _run(config, out)[0] == 0
    victim = out / "trials" / "trial_0000.json"
    damage(victim)
    before = snapshot(out)
    rc, _, err = _run(config, out, "--resume")
    line = assert_one_line_error(rc, err, "run", codes=(2,))
    assert str(victim) in line and named in line
    assert snapshot(out) == before  # config.json was rewritten with the same bytes; nothing else changed
    assert leftovers(out) == []


def test_corrupt_config_json_under_resume_is_named(tmp_path, config):
    out = tmp_path / "o"
    assert _run(config, out)[0] == 0
    (out / "config.json").write_text('{"experiment": "run-c", "config_hash": ')
    before = snapshot(out)
    rc, _, err = _run(config, out, "--resume")
    line = assert_one_line_error(rc, err, "run", codes=(2,))
    assert f"{out}/config.json is corrupt (not JSON" in line
    assert snapshot(out) == before


# ----------------------------------------------------------------------------- atomic writes


def _no_space_after(monkeypatch, calls_ok: int):
    """Make the writers' one write function fail with ENOSPC after ``calls_ok`` successful calls,
    having written half of the failing call's bytes (a disk that fills mid-file)."""
    real = outputs._write_fd
    count = {"n": 0}

    def write(fd, data):
        count["n"] += 1
        if count["n"] > calls_ok:
            os.write(fd, bytes(memoryview(data)[: len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, data)

    monkeypatch.setattr(outputs, "_write_fd", write)
    return count


def test_full_disk_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "summary.md"
    target.write_text("old contents\n")
    _no_space_after(monkeypatch, 0)
    with pytest.raises(OutputError, match=f"cannot write {target}: No space left on device"):
        write_text(target, "new contents that do not fit\n")
    assert target.read_text() == "old contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.md"]


@pytest.mark.parametrize("calls_ok", [0, 1, 2, 4])
def test_full_disk_during_a_run_is_one_line_exit_1_and_nothing_is_lost(tmp_path, config, monkeypatch, calls_ok):
    """ENOSPC at the 1st, 2nd, 3rd or 5th file the run writes (config.json, the trials, the report's
    CSVs and plots, summary.md): exit 1, one line naming the file, no temporary or staging folder,
    and under --resume the previous outputs stay byte for byte except files the run completed."""
    out = tmp_path / "o"
    assert _run(config, out)[0] == 0
    before = snapshot(out)
    _no_space_after(monkeypatch, calls_ok)
    rc, _, err = _run(config, out, "--resume")
    line = assert_one_line_error(rc, err, "run", codes=(1,))
    assert "No space left on device" in line and f"cannot write {out}/" in line
    assert leftovers(out) == []
    # a failed write never changes its file, a failed report publishes nothing, and a completed
    # write (config.json) rewrote identical bytes (same configuration)
    assert snapshot(out) == before


def _unprivileged_ids():
    """None when this test does not run as root (chmod then binds it); else (uid, gid) of ``nobody``,
    whom the command runs as (root ignores the mode bits, so a 0555 folder would not stop it)."""
    if os.geteuid() != 0:
        return None
    try:
        import pwd

        pw = pwd.getpwnam("nobody")
    except (ImportError, KeyError):
        pytest.skip("running as root and there is no user 'nobody' to drop privileges to")
    return pw.pw_uid, pw.pw_gid


def _cli_in_child(argv, ids) -> tuple[int, str]:
    """``prirfed ARGV`` in a forked child of this process, as user ``ids`` if given: (exit code,
    stderr). A fork, not a new interpreter: the interpreter lives under /root, which ``nobody``
    cannot read; everything the command needs is imported here first (by a normal run)."""
    import io

    from prirfed import cli

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        rc = 99
        try:
            os.close(r)
            if ids is not None:
                os.setgroups([])
                os.setgid(ids[1])
                os.setuid(ids[0])
            os.dup2(w, 2)
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
            rc = cli.main([str(a) for a in argv], out=io.StringIO())
        except BaseException as exc:  # noqa: BLE001 - reported to the parent through the exit code
            os.write(w, f"child failed: {exc!r}\n".encode())
        finally:
            os._exit(rc)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode()


def test_unwritable_folder_is_one_line_exit_1_and_unchanged(tmp_path, config):
    """``prirfed run --overwrite`` on a folder (mode 0555) holding a previous summary.md: exit 1, one
    line naming the folder, the folder unchanged, nothing left behind. As root the command runs as
    ``nobody`` in a forked child (root ignores the mode bits), so the check is real either way.
    Then, the folder writable again, the same command goes through and keeps the old file."""
    import shutil
    import tempfile

    assert _run(config, tmp_path / "warm")[0] == 0  # imports everything the child will need
    ids = _unprivileged_ids()
    base = Path(tempfile.mkdtemp(prefix="prirfed-unwritable-"))  # pytest's tmp_path is 0700 as root
    try:
        os.chmod(base, 0o777)
        cfg = write_toml(base / "c.toml", small_doc())
        os.chmod(cfg, 0o644)
        out = base / "o"
        out.mkdir()
        (out / "summary.md").write_text("a previous summary\n")
        os.chmod(out / "summary.md", 0o644)
        os.chmod(out, 0o555)
        before = snapshot(out)
        argv = ["run", cfg, "--out", out, *RUN, "--overwrite"]
        rc, err = _cli_in_child(argv, ids)
        line = assert_one_line_error(rc, err, "run", codes=(1,))
        assert f"cannot lock {out}" in line and "Permission denied" in line
        assert snapshot(out) == before
        assert leftovers(out) == [] and not list(base.glob("o.old-*"))
        os.chmod(out, 0o777)
        rc, err = _cli_in_child(argv, ids)
        assert rc == 0, err
        (old,) = list(base.glob("o.old-*"))
        assert (old / "summary.md").read_text() == "a previous summary\n"
    finally:
        for dirpath, dirnames, _ in os.walk(base):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
        shutil.rmtree(base, ignore_errors=True)


# ----------------------------------------------------------------------------- symbolic links


def test_writes_replace_a_planted_link_and_never_follow_it(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "summary.md").symlink_to(victim)
    write_bytes(folder / "summary.md", b"new\n")
    assert victim.read_text() == "precious\n"
    assert not (folder / "summary.md").is_symlink() and (folder / "summary.md").read_text() == "new\n"


def test_a_resumed_run_does_not_write_through_planted_links(tmp_path, config):
    """Links planted in a run folder (summary.md, config.json, a report CSV pointing at a precious
    file): the resumed run replaces the links by its own files and the precious file is untouched.
    A planted ``trials`` link is refused by name."""
    out = tmp_path / "o"
    assert _run(config, out)[0] == 0
    precious = tmp_path / "precious.txt"
    precious.write_text("do not touch\n")
    for name in ("summary.md", "curves.csv"):
        (out / name).unlink()
        (out / name).symlink_to(precious)
    rc, _, err = _run(config, out, "--resume")
    assert rc == 0, err
    assert precious.read_text() == "do not touch\n"
    assert not (out / "summary.md").is_symlink() and "| our check (thresholds and settings ours, not the paper's) |" in (out / "summary.md").read_text()
    assert not (out / "curves.csv").is_symlink()
    # trials/ as a link to a folder elsewhere
    elsewhere = tmp_path / "elsewhere"
    (out / "trials").rename(elsewhere)
    (out / "trials").symlink_to(elsewhere)
    before = snapshot(elsewhere)
    rc, _, err = _run(config, out, "--resume")
    line = assert_one_line_error(rc, err, "run", codes=(2,))
    assert f"{out}/trials is not a folder (a symbolic link or a file)" in line
    assert snapshot(elsewhere) == before


def test_a_planted_lock_link_is_refused(tmp_path, config):
    out = tmp_path / "o"
    out.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("x\n")
    (out / ".prirfed.lock").symlink_to(precious)
    rc, _, err = _run(config, out)
    assert ".prirfed.lock is a symbolic link" in assert_one_line_error(rc, err, "run", codes=(2,))
    assert precious.read_text() == "x\n"


# ----------------------------------------------------------------------------- the lock (two real processes)


_HOLDER = textwrap.dedent("""
    import sys, time
    from prirfed.experiments.outputs import RunFolder
    f = RunFolder.open(sys.argv[1], identity=dict(experiment="holder", config_hash="0", seed=0))
    print("locked", flush=True)
    time.sleep(120)
""")


def _hold_lock(out: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", _HOLDER, str(out)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "locked"
    return p


def test_a_second_run_fails_at_once_and_a_crash_releases_the_lock(tmp_path, config):
    """Process A holds the folder (a RunFolder open in another interpreter); ``prirfed run`` into the
    same folder, as a real second process, exits 1 at once with one line naming A's process id.
    After A is killed (SIGKILL: no cleanup code runs) the same command succeeds."""
    out = tmp_path / "o"
    holder = _hold_lock(out)
    try:
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, "-m", "prirfed.cli", "run", str(config), "--out", str(out), *RUN],
                           capture_output=True, text=True, timeout=300)
        line = assert_one_line_error(p.returncode, p.stderr, "run", codes=(1,))
        assert f"{out} is in use by another run (process {holder.pid})" in line
        assert time.monotonic() - t0 < 60  # it did not wait for the holder (which sleeps 120 s)
        assert sorted(os.listdir(out)) == [".prirfed.lock"]
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    p = subprocess.run([sys.executable, "-m", "prirfed.cli", "run", str(config), "--out", str(out), *RUN],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert not (out / ".prirfed.lock").exists()  # released and removed at the end of the run


def test_lock_in_process_api(tmp_path):
    out = tmp_path / "o"
    ident = dict(experiment="x", config_hash="1", seed=0)
    with RunFolder.open(out, identity=ident):
        with pytest.raises(FolderLocked, match="is in use by another run"):
            RunFolder.open(out, identity=ident)
    with RunFolder.open(out, identity=ident):  # released
        pass


# ----------------------------------------------------------------------------- folder states


def test_inspect_folder_states(tmp_path):
    ident = dict(experiment="e", config_hash="h", seed=1)
    assert inspect_folder(tmp_path / "none").kind == "missing"
    d = tmp_path / "d"
    d.mkdir()
    (d / ".prirfed.lock").write_text("")
    (d / ".prirfed-tmp-config.json-abcd").write_text("")
    assert inspect_folder(d, ident).kind == "empty"  # the lock and a killed run's temporaries do not count
    (d / "config.json").write_text(json.dumps(dict(experiment="e", config_hash="h", seed=1)))
    assert inspect_folder(d, ident).kind == "own"
    assert inspect_folder(d, dict(ident, seed=2)).kind == "other"  # same hash, another root seed
    (d / "config.json").write_text("[]")
    assert inspect_folder(d, ident).kind == "foreign"
    f = tmp_path / "f"
    f.write_text("")
    assert inspect_folder(f).kind == "not_a_folder"


def test_open_refusals_are_value_errors_and_locks_runtime_errors():
    assert issubclass(FolderRefused, ValueError) and issubclass(CorruptRunFile, ValueError)
    assert issubclass(FolderLocked, OutputError) and issubclass(OutputError, RuntimeError)
