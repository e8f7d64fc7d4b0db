"""Run folders that never lose data: atomic writes, a lock, and the rules for reusing a folder.

Every file the experiments write goes through :func:`write_bytes` (also :func:`write_text`,
:func:`write_json`, :func:`write_csv`, :func:`save_figure`): the bytes go to a new temporary file
in the same folder (``.prirfed-tmp-NAME-XXXXXXXX``, created with ``O_CREAT | O_EXCL | O_NOFOLLOW``),
are flushed with ``fsync``, and the file is renamed over ``NAME`` with ``os.replace``; the folder is
then fsynced. So a reader sees the old file or the new one, never half of one; a symbolic link
planted at ``NAME`` is replaced (the rename swaps the link itself), never followed; and any failure
(disk full, permission, an unwritable folder) removes the temporary before the error is raised as
:class:`OutputError` naming the file (``cannot write DIR/NAME: No space left on device``).

A run folder (:class:`RunFolder`, used by :func:`prirfed.experiments.framework.reproduce`) holds
``config.json`` (the run's record: experiment, configuration hash, seed), ``trials/`` (one record
per finished trial), the report's outputs and ``summary.md``. Opening one:

1. takes an exclusive ``fcntl.flock`` on ``.prirfed.lock`` in the folder (released when the run
   ends, and by the operating system when the process dies); a second run into the same folder
   fails at once with :class:`FolderLocked`;
2. looks at what the folder holds (:func:`inspect_folder`): nothing (or only the lock and the
   temporaries of a killed run), this configuration's run, another run, or other files; then

   - an empty or missing folder is used;
   - ``resume=True`` continues this configuration's run (finished trials are reused) and refuses
     anything else (:class:`FolderRefused`, a ``ValueError``);
   - ``overwrite=True`` moves every entry (except the lock) into a new sibling folder
     ``<out>.old-YYYYmmdd-HHMMSS`` (``-1``, ``-2``, ... if taken) and starts afresh: nothing is
     deleted;
   - otherwise a non-empty folder is refused, whatever it holds, with the option that would
     proceed (``--resume`` for this configuration's run, ``--overwrite`` for anything).

The report of a run is written into a private staging folder ``.prirfed-staging-XXXXXXXX`` inside
the run folder and published entry by entry with ``os.replace`` once it is complete: the run lists
exactly the files its report wrote (a file left by an older run is never listed as this run's),
and a report that fails leaves the published files as they were and no staging folder behind.

POSIX only (``fcntl``, ``O_NOFOLLOW``, ``dir_fd``). Proofs note: ``proofs_notes/experiments.md``.
"""

from __future__ import annotations

import csv
import errno
import fcntl
import io
import json
import os
import secrets
import shutil
import stat
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = ["OutputError", "FolderLocked", "FolderRefused", "CorruptRunFile", "write_bytes", "write_text", "write_json",
           "write_csv", "save_figure", "read_json", "inspect_folder", "FolderState", "RunFolder", "FolderLock",
           "move_aside", "refusal", "LOCK_NAME", "RECORD_NAME", "TRIALS_NAME", "SUMMARY_NAME", "TMP_PREFIX", "STAGING_PREFIX",
           "MAX_RECORD_BYTES"]

LOCK_NAME = ".prirfed.lock"
RECORD_NAME = "config.json"
TRIALS_NAME = "trials"
SUMMARY_NAME = "summary.md"
TMP_PREFIX = ".prirfed-tmp-"
STAGING_PREFIX = ".prirfed-staging-"
#: a run record (config.json, a trial record) larger than this is refused when read back
MAX_RECORD_BYTES = 256 * 2**20

_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_O_NOFOLLOW = os.O_NOFOLLOW


class OutputError(RuntimeError):
    """The output folder could not be written or read (disk full, permission, a non-folder in the
    way): a runtime failure (the CLI exits 1)."""


class FolderLocked(OutputError):
    """Another run holds the output folder's lock (the CLI exits 1)."""


class FolderRefused(ValueError):
    """The output folder holds something this run must not touch as asked (bad input: the CLI exits 2)."""


class CorruptRunFile(ValueError):
    """``--resume`` found a run file it cannot trust (not JSON, not a regular file, the wrong record)."""


def _shown(path) -> str:
    """A path as the user knows it: a staged report file is shown at its published place."""
    p = Path(path)
    if p.parent.name.startswith(STAGING_PREFIX):
        p = p.parent.parent / p.name
    return str(p)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _write_fd(fd: int, data) -> None:
    """Write all of ``data`` to ``fd``: the one place bytes reach the disk (tests replace it to
    simulate a full disk)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _open_dir(path, *, dir_fd=None, nofollow=False) -> int:
    flags = _O_DIR | (_O_NOFOLLOW if nofollow else 0)
    return os.open(path, flags, dir_fd=dir_fd)


@contextmanager
def _parent_of(path: Path, failing: str):
    """The folder holding ``path``, open as a descriptor for the ``*_at`` helpers and closed after;
    :class:`OutputError` ``"{failing}: {reason}"`` when it cannot be opened."""
    try:
        dfd = _open_dir(path.parent if str(path.parent) else ".")
    except OSError as exc:
        raise OutputError(f"{failing}: {_why(exc)}") from exc
    try:
        yield dfd
    finally:
        os.close(dfd)


def _unlink_quietly(name: str, dir_fd: int, remove=os.unlink) -> None:
    """Remove ``name`` (a file; ``remove=os.rmdir``: an empty folder) if it can be; a clean-up never fails."""
    try:
        remove(name, dir_fd=dir_fd)
    except OSError:
        pass


def _write_at(dfd: int, name: str, data, shown: str) -> None:
    """Atomically replace ``name`` in the folder open as ``dfd`` by ``data`` (see the module doc)."""
    if "/" in name or name in ("", ".", ".."):
        raise OutputError(f"cannot write {shown}: not a plain file name")
    tmp = None
    try:
        fd = None
        for _ in range(16):
            tmp = f"{TMP_PREFIX}{name[:80]}-{secrets.token_hex(4)}"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dfd)
                break
            except FileExistsError:
                tmp = None
        if fd is None:
            raise OutputError(f"cannot write {shown}: no free temporary name")
        try:
            _write_fd(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        tmp = None
        os.fsync(dfd)
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {_why(exc)}") from exc
    finally:
        if tmp is not None:
            _unlink_quietly(tmp, dfd)


def write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, without following a symbolic link at ``path``, leaving
    no temporary behind on failure (:class:`OutputError` naming the file)."""
    path = Path(path)
    with _parent_of(path, f"cannot write {_shown(path)}: folder {_shown(path.parent)}") as dfd:
        _write_at(dfd, path.name, data, _shown(path))


def write_text(path, text: str) -> None:
    """:func:`write_bytes` of UTF-8 text."""
    write_bytes(path, text.encode("utf-8"))


def _json_bytes(obj) -> bytes:
    return json.dumps(obj, indent=1, sort_keys=True, allow_nan=True).encode("utf-8")


def write_json(path, obj) -> None:
    """:func:`write_bytes` of ``obj`` as indented, key-sorted JSON (NaN/inf allowed, as results hold them)."""
    write_bytes(path, _json_bytes(obj))


def write_csv(path, columns, rows) -> None:
    """CSV with a header; floats written with ``repr`` (round-trip exact); written atomically."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([repr(float(r[c])) if isinstance(r[c], (float, np.floating)) else r[c] for c in columns])
    write_text(path, buf.getvalue())


def save_figure(fig, out, stem: str) -> list[str]:
    """Save a matplotlib Figure as ``out/stem.png`` and ``out/stem.pdf`` (Agg canvas, no global pyplot
    state; rendered in memory, then written atomically)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    names = []
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, metadata={"CreationDate": None} if ext == "pdf" else None)
        p = Path(out) / f"{stem}.{ext}"
        write_bytes(p, buf.getvalue())
        names.append(p.name)
    return names


def _read_at(dfd: int, name: str, shown: str, max_bytes: int = MAX_RECORD_BYTES) -> bytes:
    """The bytes of a regular file ``name`` (no symbolic link, FIFO or device; at most ``max_bytes``)."""
    try:
        fd = os.open(name, os.O_RDONLY | _O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CorruptRunFile(f"{shown} is a symbolic link (a run folder holds regular files only)") from None
        raise OutputError(f"cannot read {shown}: {_why(exc)}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CorruptRunFile(f"{shown} is not a regular file")
        if st.st_size > max_bytes:
            raise CorruptRunFile(f"{shown} is larger than a run record can be ({st.st_size} bytes > {max_bytes})")
        chunks, left = [], max_bytes + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise CorruptRunFile(f"{shown} is larger than a run record can be (> {max_bytes} bytes)")
        return data
    except OSError as exc:
        raise OutputError(f"cannot read {shown}: {_why(exc)}") from exc
    finally:
        os.close(fd)


def _parse_json(data: bytes, shown: str):
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CorruptRunFile(f"{shown} is corrupt (not UTF-8 text: byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise CorruptRunFile(f"{shown} is corrupt (not JSON: {exc.msg}: line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise CorruptRunFile(f"{shown} is corrupt (JSON nested too deeply)") from None


def read_json(path, max_bytes: int = MAX_RECORD_BYTES):
    """A JSON file read back without following a symbolic link; :class:`CorruptRunFile` names the file
    when it is not a regular file, too large or not JSON."""
    path = Path(path)
    with _parent_of(path, f"cannot read {path}") as dfd:
        return _parse_json(_read_at(dfd, path.name, str(path), max_bytes), str(path))


# ----------------------------------------------------------------------------- the lock


class FolderLock:
    """An exclusive ``fcntl.flock`` on ``FOLDER/.prirfed.lock`` held until :meth:`release` (or the
    process ends: the operating system drops the lock of a dead process).

    The lock file holds the owner's process id, shown to a second run. On release the file is
    removed while still locked; a run that opened the old file just before checks, after locking,
    that the file it locked is still the one in the folder, and retries otherwise.
    """

    def __init__(self, dfd: int, shown: str):
        self.dfd, self.shown, self.fd = dfd, shown, None
        for _ in range(32):
            try:
                fd = os.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise FolderRefused(f"{shown}/{LOCK_NAME} is a symbolic link; remove it (a run folder's lock is a "
                                        "regular file)") from None
                raise OutputError(f"cannot lock {shown}: creating {shown}/{LOCK_NAME}: {_why(exc)}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = self._holder(fd)
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise FolderLocked(f"{shown} is in use by another run ({holder}); wait for it to finish or choose "
                                       "another --out") from None
                raise OutputError(f"cannot lock {shown}/{LOCK_NAME}: {_why(exc)}") from exc
            try:
                now = os.stat(LOCK_NAME, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            mine = os.fstat(fd)
            if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                self.fd = fd
                try:
                    os.ftruncate(fd, 0)
                    os.write(fd, f"{os.getpid()}\n".encode())
                except OSError:
                    pass  # the pid is shown to a second run only; the lock holds without it
                return
            os.close(fd)  # a finishing run removed the file we opened: lock the new one
        raise FolderLocked(f"{shown}: could not take the lock {LOCK_NAME} (it kept changing)")

    @staticmethod
    def _holder(fd: int) -> str:
        try:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            text = ""
        return f"process {text}" if text.isdigit() else "another process"

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            _unlink_quietly(LOCK_NAME, self.dfd)
        finally:
            os.close(self.fd)
            self.fd = None


# ----------------------------------------------------------------------------- what a folder holds


class FolderState:
    """What an output folder holds, as :func:`inspect_folder` found it.

    ``kind``: ``"missing"``, ``"empty"`` (nothing but the lock and temporaries of a killed run),
    ``"own"`` (the run record of this identity), ``"other"`` (another run's record), ``"foreign"``
    (anything else), ``"not_a_folder"``. ``entries``: the names found (lock and temporaries not
    counted); ``record``: the parsed config.json when there is one; ``detail``: a phrase for messages.
    """

    def __init__(self, kind: str, entries=(), record=None, detail: str = ""):
        self.kind, self.entries, self.record, self.detail = kind, list(entries), record, detail

    def __repr__(self) -> str:
        return f"FolderState({self.kind!r}, entries={self.entries!r}, detail={self.detail!r})"


def _leftover(name: str) -> bool:
    return name == LOCK_NAME or name.startswith(TMP_PREFIX) or name.startswith(STAGING_PREFIX)


def _same_run(record, identity: dict) -> bool:
    return isinstance(record, dict) and all(record.get(k) == v for k, v in identity.items())


def _describe_entries(entries: list) -> str:
    shown = ", ".join(repr(e) for e in entries[:3])
    return f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}: {shown}{', ...' if len(entries) > 3 else ''}"


def _inspect_at(dfd: int, shown: str, identity: dict | None) -> FolderState:
    entries = sorted(e for e in os.listdir(dfd) if not _leftover(e))
    if not entries:
        return FolderState("empty")
    if RECORD_NAME not in entries:
        return FolderState("foreign", entries, detail=f"holds no prirfed run ({_describe_entries(entries)})")
    try:
        record = _parse_json(_read_at(dfd, RECORD_NAME, f"{shown}/{RECORD_NAME}"), f"{shown}/{RECORD_NAME}")
    except CorruptRunFile as exc:
        return FolderState("foreign", entries, detail=f"holds a {RECORD_NAME} that is not a run record ({exc})")
    if not (isinstance(record, dict) and isinstance(record.get("config_hash"), str) and "experiment" in record):
        return FolderState("foreign", entries, detail=f"holds a {RECORD_NAME} that is not a prirfed run record")
    if identity is not None and _same_run(record, identity):
        return FolderState("own", entries, record, detail="holds a run of this configuration")
    return FolderState("other", entries, record,
                       detail=(f"holds a run of another configuration (experiment {record.get('experiment')!r}, "
                               f"hash {record.get('config_hash')}, seed {record.get('seed')!r})"))


def inspect_folder(path, identity: dict | None = None) -> FolderState:
    """What folder ``path`` holds (see :class:`FolderState`); ``identity`` (e.g. ``{"experiment": ...,
    "config_hash": ..., "seed": ...}``) tells this run's record from another's. Reads only."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return FolderState("missing")
    except OSError as exc:
        raise OutputError(f"cannot look into {path}: {_why(exc)}") from exc
    if not stat.S_ISDIR(st.st_mode):
        return FolderState("not_a_folder", detail="exists and is not a folder")
    try:
        dfd = _open_dir(path)
    except OSError as exc:
        raise OutputError(f"cannot open folder {path}: {_why(exc)}") from exc
    try:
        return _inspect_at(dfd, str(path), identity)
    finally:
        os.close(dfd)


def _trials_done(dfd: int) -> int:
    try:
        tfd = _open_dir(TRIALS_NAME, dir_fd=dfd, nofollow=True)
    except OSError:
        return 0
    try:
        return sum(1 for e in os.listdir(tfd) if e.startswith("trial_") and e.endswith(".json"))
    finally:
        os.close(tfd)


def refusal(state: FolderState, shown: str, *, resume: bool, where: str, progress: str = "") -> str | None:
    """The message refusing ``state`` for a run asked with ``resume`` (``None``: the folder may be used).
    ``overwrite`` never refuses (the folder's entries are moved aside)."""
    if state.kind in ("missing", "empty"):
        return None
    if state.kind == "not_a_folder":
        return f"{where}: output path {shown!r} exists and is not a folder"
    if resume:
        if state.kind == "own":
            return None
        if state.kind == "other":
            rec = state.record or {}
            return (f"{where}: --resume: {shown}/{RECORD_NAME} holds a different configuration (experiment "
                    f"{rec.get('experiment')!r}, hash {rec.get('config_hash')}, seed {rec.get('seed')!r}); use another "
                    "--out, or --overwrite to move it aside")
        return f"{where}: --resume: {shown} {state.detail}; use another --out or --overwrite to move its contents aside"
    if state.kind == "own":
        return (f"{where}: {shown} already holds a run of this configuration{progress}; add --resume to reuse its "
                "finished trials, or --overwrite to move it aside and start again")
    return f"{where}: {shown} is not empty: it {state.detail}; choose another --out, or --overwrite to move its contents aside"


def _mkdir_sibling(parent_fd: int, base: str) -> str:
    for k in range(1000):
        name = base if k == 0 else f"{base}-{k}"
        try:
            os.mkdir(name, 0o777, dir_fd=parent_fd)
            return name
        except FileExistsError:
            continue
    raise OutputError(f"cannot move aside: {base} and 999 numbered variants exist already")


def move_aside(dfd: int, path: Path) -> Path:
    """Move every entry of the folder open as ``dfd`` (at ``path``), except its lock, into a new sibling
    ``<path>.old-YYYYmmdd-HHMMSS`` (numbered if taken); returns the sibling. Nothing is deleted: on a
    failure the entries moved so far are named in the error and the rest stay where they were."""
    path = Path(path)
    if path.name in ("", ".", ".."):
        path = Path(os.path.abspath(path))
    if not path.name:
        raise OutputError(f"cannot move aside the contents of {path}: it has no parent folder")
    try:
        pfd = _open_dir(path.parent)
    except OSError as exc:
        raise OutputError(f"cannot move aside the contents of {path}: folder {path.parent}: {_why(exc)}") from exc
    moved: list = []
    try:
        try:
            name = _mkdir_sibling(pfd, f"{path.name}.old-{time.strftime('%Y%m%d-%H%M%S')}")
        except OSError as exc:
            raise OutputError(f"cannot move aside the contents of {path}: creating a sibling in {path.parent}: "
                              f"{_why(exc)}") from exc
        target = path.parent / name
        try:
            afd = _open_dir(name, dir_fd=pfd, nofollow=True)
        except OSError as exc:
            raise OutputError(f"cannot move aside the contents of {path}: {target}: {_why(exc)}") from exc
        try:
            for entry in sorted(os.listdir(dfd)):
                if entry == LOCK_NAME:
                    continue
                try:
                    os.rename(entry, entry, src_dir_fd=dfd, dst_dir_fd=afd)
                except OSError as exc:
                    if not moved:
                        _rmdir_quietly(name, pfd)
                    done = f"; {len(moved)} entries already moved there" if moved else ""
                    raise OutputError(f"cannot move {path / entry} aside to {target}: {_why(exc)}{done}; nothing was "
                                      "deleted") from exc
                moved.append(entry)
            os.fsync(afd)
            os.fsync(dfd)
        finally:
            os.close(afd)
        return target
    finally:
        os.close(pfd)


def _rmdir_quietly(name: str, dir_fd: int) -> None:
    _unlink_quietly(name, dir_fd, os.rmdir)


def _remove_leftovers(dfd: int) -> None:
    """Remove the temporaries and staging folders a killed run of ours left (never anything else)."""
    for entry in os.listdir(dfd):
        if entry.startswith(TMP_PREFIX):
            _unlink_quietly(entry, dfd)
        elif entry.startswith(STAGING_PREFIX):
            try:
                st = os.stat(entry, dir_fd=dfd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(entry, dir_fd=dfd, ignore_errors=True)
            else:
                _unlink_quietly(entry, dfd)


# ----------------------------------------------------------------------------- a run folder


class RunFolder:
    """The output folder of one run, locked and checked (see the module doc); use :meth:`open`.

    Attributes: ``path``; ``state`` (the :class:`FolderState` found before the run touched it);
    ``moved_to`` (the ``.old-`` sibling holding the previous contents, or ``None``).
    """

    def __init__(self, path: Path, dfd: int, lock: FolderLock, state: FolderState, moved_to):
        self.path, self.dfd, self.lock, self.state, self.moved_to = path, dfd, lock, state, moved_to
        self._tfd = None

    @classmethod
    def open(cls, path, *, identity: dict, resume: bool = False, overwrite: bool = False,
             where: str = "reproduce") -> "RunFolder":
        """Lock folder ``path`` (created if missing) and make it ready for the run ``identity``, as
        the module doc says; raises :class:`FolderRefused`, :class:`FolderLocked` or
        :class:`OutputError`, having changed nothing in the folder but the lock file (and a folder
        it created)."""
        path = Path(path)
        shown = str(path)
        if resume and overwrite:
            raise ValueError(f"{where}: --resume and --overwrite exclude each other (resume keeps the finished trials, "
                             "overwrite moves them aside)")
        before = inspect_folder(path, identity)
        if before.kind == "not_a_folder":
            raise FolderRefused(refusal(before, shown, resume=resume, where=where))
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create the output folder {shown}: {_why(exc)}") from exc
        try:
            dfd = _open_dir(path)
        except OSError as exc:
            raise OutputError(f"cannot open the output folder {shown}: {_why(exc)}") from exc
        try:
            lock = FolderLock(dfd, shown)
        except BaseException:
            os.close(dfd)
            raise
        try:
            state = _inspect_at(dfd, shown, identity)  # again, now that no other run can change it
            moved_to = None
            if overwrite and state.kind not in ("missing", "empty"):
                moved_to = move_aside(dfd, path)
            else:
                progress = ""
                if state.kind == "own":
                    n = state.record.get("n_trials")
                    progress = f" ({_trials_done(dfd)} of {n} trials finished)" if isinstance(n, int) else ""
                why = refusal(state, shown, resume=resume, where=where, progress=progress)
                if why is not None:
                    raise FolderRefused(why)
            _remove_leftovers(dfd)
            return cls(path, dfd, lock, state, moved_to)
        except BaseException:
            lock.release()
            os.close(dfd)
            raise

    # -- context manager: release the lock and the folder at the end
    def __enter__(self) -> "RunFolder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._tfd is not None:
            os.close(self._tfd)
            self._tfd = None
        if self.dfd is not None:
            try:
                self.lock.release()
            finally:
                os.close(self.dfd)
                self.dfd = None

    # -- writing and reading
    def write_json(self, name: str, obj) -> None:
        _write_at(self.dfd, name, _json_bytes(obj), str(self.path / name))

    def write_text(self, name: str, text: str) -> None:
        _write_at(self.dfd, name, text.encode("utf-8"), str(self.path / name))

    def _trials_fd(self) -> int:
        if self._tfd is None:
            shown = str(self.path / TRIALS_NAME)
            try:
                os.mkdir(TRIALS_NAME, 0o777, dir_fd=self.dfd)
            except FileExistsError:
                pass
            except OSError as exc:
                raise OutputError(f"cannot create {shown}: {_why(exc)}") from exc
            try:
                self._tfd = _open_dir(TRIALS_NAME, dir_fd=self.dfd, nofollow=True)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise FolderRefused(f"{shown} is not a folder (a symbolic link or a file); a run folder's trials/ "
                                        "is a plain folder") from None
                raise OutputError(f"cannot open {shown}: {_why(exc)}") from exc
        return self._tfd

    @staticmethod
    def trial_name(i: int) -> str:
        return f"trial_{i:04d}.json"

    def write_trial(self, i: int, obj) -> None:
        name = self.trial_name(i)
        _write_at(self._trials_fd(), name, _json_bytes(obj), str(self.path / TRIALS_NAME / name))

    def read_trial(self, i: int):
        """Trial ``i``'s record, or ``None`` when there is none; :class:`CorruptRunFile` names a file
        that is not JSON or not a regular file."""
        name = self.trial_name(i)
        tfd = self._trials_fd()
        try:
            os.stat(name, dir_fd=tfd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        shown = str(self.path / TRIALS_NAME / name)
        try:
            return _parse_json(_read_at(tfd, name, shown), shown)
        except CorruptRunFile as exc:
            raise CorruptRunFile(f"--resume: {exc}; delete it to recompute that trial, or start again with --overwrite") \
                from None

    @contextmanager
    def staging(self):
        """A fresh private folder inside the run folder for the report to write into; on a normal exit
        its entries are published into the run folder (``os.replace``, after an fsync of each file)
        and their names are left in the list this yields; on an exception it is removed."""
        name = None
        for _ in range(16):
            cand = f"{STAGING_PREFIX}{secrets.token_hex(4)}"
            try:
                os.mkdir(cand, 0o700, dir_fd=self.dfd)
                name = cand
                break
            except FileExistsError:
                continue
            except OSError as exc:
                raise OutputError(f"cannot write the report into {self.path}: {_why(exc)}") from exc
        if name is None:
            raise OutputError(f"cannot write the report into {self.path}: no free staging name")
        published: list = []
        try:
            yield self.path / name, published
            published.extend(self._publish(name))
        finally:
            shutil.rmtree(name, dir_fd=self.dfd, ignore_errors=True)

    _RESERVED = (RECORD_NAME, SUMMARY_NAME, TRIALS_NAME, LOCK_NAME)

    def _publish(self, name: str) -> list:
        sfd = _open_dir(name, dir_fd=self.dfd, nofollow=True)
        try:
            entries = sorted(os.listdir(sfd))
            for e in entries:
                if e in self._RESERVED or _leftover(e):
                    raise OutputError(f"the report wrote {self.path / e}, a name the run folder reserves")
            for e in entries:
                shown = str(self.path / e)
                try:
                    st = os.stat(e, dir_fd=sfd, follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode):
                        fd = os.open(e, os.O_RDONLY | _O_NOFOLLOW | os.O_CLOEXEC, dir_fd=sfd)
                        try:
                            os.fsync(fd)
                        finally:
                            os.close(fd)
                    if stat.S_ISDIR(st.st_mode):
                        self._replace_dir(sfd, e)
                    else:
                        os.replace(e, e, src_dir_fd=sfd, dst_dir_fd=self.dfd)
                except OSError as exc:
                    raise OutputError(f"cannot write {shown}: {_why(exc)}") from exc
            os.fsync(self.dfd)
            return entries
        finally:
            os.close(sfd)

    def _replace_dir(self, sfd: int, e: str) -> None:
        """Publish a folder the report wrote: an old entry of that name (this run's own, since the
        folder is its own) is swapped out and removed; a symbolic link is removed, never followed."""
        try:
            old = os.stat(e, dir_fd=self.dfd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None:
            trash = f"{TMP_PREFIX}{e[:80]}-{secrets.token_hex(4)}"
            os.rename(e, trash, src_dir_fd=self.dfd, dst_dir_fd=self.dfd)
            os.rename(e, e, src_dir_fd=sfd, dst_dir_fd=self.dfd)
            if stat.S_ISDIR(old.st_mode):
                shutil.rmtree(trash, dir_fd=self.dfd, ignore_errors=True)
            else:
                _unlink_quietly(trash, self.dfd)
        else:
            os.rename(e, e, src_dir_fd=sfd, dst_dir_fd=self.dfd)
