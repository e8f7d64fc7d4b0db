"""Loaders of real data and the preprocessing the papers describe (see proofs_notes/data_real.md).

Nothing here ships data: every loader takes a path (or reads a data set bundled with
scikit-learn). :func:`shared_data_dir` finds the project's shared data folder for the tests
(``$PRIRFED_DATA`` or ``../shared/data`` next to the repository) and returns ``None`` when absent.

- MNIST (IDX files, raw or gzip): :func:`read_idx`, :func:`load_mnist`, :func:`mnist_vectors`
  (Huang et al. (2024) §6.1: each 28×28 image is a vector in R^784 = R^{d+1}).
- Iris, Wine, 8×8 digits from scikit-learn: :func:`load_iris`, :func:`load_wine`, :func:`load_digits`
  (Li and Ma (2023) §5.3 uses Iris (d = 4) and Wine (d = 13)).
- PathMNIST (MedMNIST ``.npz`` layout): :func:`load_pathmnist` (Huang et al. (2024) §6.2).
- kPCA local matrices of Li and Ma (2023) (3): :func:`kpca_local_matrices`; :func:`center`, :func:`standardize`.
"""

from __future__ import annotations

import gzip
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

__all__ = [
    "shared_data_dir",
    "read_idx",
    "MAX_BYTES",
    "load_mnist",
    "mnist_vectors",
    "MNIST_T10K_IMAGES",
    "MNIST_T10K_LABELS",
    "load_iris",
    "load_wine",
    "load_digits",
    "load_pathmnist",
    "center",
    "standardize",
    "kpca_local_matrices",
]

MNIST_T10K_IMAGES = "mnist/t10k-images-idx3-ubyte.gz"
MNIST_T10K_LABELS = "mnist/t10k-labels-idx1-ubyte.gz"

#: IDX magic numbers: 0x0000 0803 (unsigned bytes, 3 dims) and 0x0000 0801 (unsigned bytes, 1 dim).
IDX_IMAGES_MAGIC = 2051
IDX_LABELS_MAGIC = 2049


def shared_data_dir() -> Path | None:
    """The shared data folder: ``$PRIRFED_DATA`` if set, else ``<repo>/../shared/data``; ``None`` if absent.

    Returns
    -------
    pathlib.Path or None
        The folder, or ``None`` when it does not exist.
    """
    env = os.environ.get("PRIRFED_DATA")
    if env:
        p = Path(env)
        return p if p.is_dir() else None
    repo = Path(__file__).resolve().parents[2]
    p = repo.parent / "shared" / "data"
    return p if p.is_dir() else None


#: Default cap on the data bytes a loader reads (after decompression): 1 GiB. MNIST's largest
#: file (train images) holds 47 MB, PathMNIST at 28 px 227 MB; a larger file needs an explicit
#: ``max_bytes``. The cap is checked against the sizes a file declares before anything is read,
#: and the reading itself stops at the declared size (a 380 KB gzip declaring huge
#: dimensions made the old reader allocate 764 MB).
MAX_BYTES = 1 << 30

_GZIP_MAGIC = b"\x1f\x8b"


def _cap(where: str, max_bytes) -> int:
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) or max_bytes < 1:
        raise ValueError(f"{where}: max_bytes must be a positive integer (got {max_bytes!r})")
    return int(max_bytes)


def _open_stream(where: str, path: Path):
    """The file as a binary stream, through a streaming gzip decompressor when it starts with the
    gzip magic (whatever it is called): memory is bounded by what the caller reads."""
    if not path.is_file():
        raise ValueError(f"{where}: no such file {str(path)!r}")
    fh = open(path, "rb")
    head = fh.read(2)
    fh.seek(0)
    if head == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=fh, mode="rb"), fh
    return fh, fh


def _reader(where: str, name: str, stream):
    """read(n) on the stream, with decompression errors turned into ValueError naming the file."""

    def read(n: int) -> bytes:
        try:
            return stream.read(n)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{where}: {name} starts like gzip but cannot be decompressed ({exc})") from None

    return read


def read_idx(path, expected_magic: int | None = None, *, max_bytes: int = MAX_BYTES) -> np.ndarray:
    """Read an IDX file of unsigned bytes (LeCun's MNIST format), raw or gzip-compressed.

    Header: a big-endian int32 magic ``0x0000 08 ND`` (type code 0x08 = unsigned byte, ND the
    number of dimensions), then ND big-endian int32 sizes, then the data in C order. The header is
    read first, the declared size (the product of the sizes) is checked against ``max_bytes``, and
    then exactly that many bytes are read through a streaming decompressor (plus one to detect
    trailing data), so a small file declaring a huge array costs nothing.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip is recognised by its magic bytes, whatever the name.
    expected_magic : int or None, optional
        Required magic number (2051 images, 2049 labels); ``None`` accepts any unsigned-byte IDX.
    max_bytes : int, optional
        Cap on the declared data bytes (default :data:`MAX_BYTES`, 1 GiB).

    Returns
    -------
    numpy.ndarray
        ``uint8`` array of the declared shape.

    Raises
    ------
    ValueError
        Naming the file: if it does not exist, cannot be decompressed, is shorter than its header,
        has another magic than ``expected_magic`` or a type other than unsigned byte, declares no
        dimension or more bytes than ``max_bytes``, or holds fewer or more data bytes than declared;
        also if ``max_bytes`` is not a positive integer.
    """
    where = "read_idx"
    max_bytes = _cap(where, max_bytes)
    path = Path(path)
    name = path.name
    stream, fh = _open_stream(where, path)
    read = _reader(where, name, stream)
    with fh:
        head = read(4)
        if len(head) < 4:
            raise ValueError(f"read_idx: {name} has {len(head)} bytes, too short for an IDX header (4 bytes at least)")
        magic = int.from_bytes(head, "big")
        if expected_magic is not None and magic != expected_magic:
            raise ValueError(f"read_idx: {name} has magic number {magic} (0x{magic:08x}), expected {expected_magic} (0x{expected_magic:08x})")
        if head[0] != 0 or head[1] != 0 or head[2] != 0x08:
            raise ValueError(f"read_idx: {name} has magic 0x{magic:08x}: not an IDX file of unsigned bytes (expected 0x000008NN)")
        nd = head[3]
        if nd < 1:
            raise ValueError(f"read_idx: {name} declares {nd} dimensions")
        dims = read(4 * nd)
        if len(dims) < 4 * nd:
            raise ValueError(f"read_idx: {name} is truncated inside its header ({4 + len(dims)} bytes, header needs {4 + 4 * nd})")
        shape = tuple(int.from_bytes(dims[4 * k : 4 * k + 4], "big") for k in range(nd))
        count = 1
        for s_k in shape:
            count *= s_k
        if count > max_bytes:
            raise ValueError(f"read_idx: {name} declares shape {shape} ({count} bytes), more than the cap max_bytes = "
                             f"{max_bytes} (pass a larger max_bytes to read it)")
        raw = read(count + 1)
        if len(raw) != count:
            more = "at least " if len(raw) > count else ""
            raise ValueError(f"read_idx: {name} header says shape {shape} ({count} bytes) but {more}{len(raw)} data bytes follow")
    return np.frombuffer(raw, dtype=np.uint8).reshape(shape).copy()


def load_mnist(images_path, labels_path, *, max_bytes: int = MAX_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """MNIST images ``(n, 28, 28)`` uint8 (magic 2051) and labels ``(n,)`` int64 in 0..9 (magic 2049).

    Each file is read by :func:`read_idx` under the cap ``max_bytes``.

    Parameters
    ----------
    images_path, labels_path : str or os.PathLike
        The IDX files (raw or gzip).
    max_bytes : int, optional
        Cap per file (default :data:`MAX_BYTES`).

    Returns
    -------
    images : numpy.ndarray
        ``(n, rows, cols)`` uint8.
    labels : numpy.ndarray
        ``(n,)`` int64 in 0..9.

    Raises
    ------
    ValueError
        As :func:`read_idx`, or (naming the file) if the images are not 3-D, the label count differs
        from the image count, or a label exceeds 9.
    """
    images = read_idx(images_path, IDX_IMAGES_MAGIC, max_bytes=max_bytes)
    labels = read_idx(labels_path, IDX_LABELS_MAGIC, max_bytes=max_bytes)
    iname, lname = Path(images_path).name, Path(labels_path).name
    if images.ndim != 3:
        raise ValueError(f"load_mnist: {iname}: images have {images.ndim} dimensions, expected 3 (n, rows, cols)")
    if labels.ndim != 1 or labels.shape[0] != images.shape[0]:
        raise ValueError(f"load_mnist: {lname}: {labels.shape[0]} labels for {images.shape[0]} images in {iname}")
    if labels.max(initial=0) > 9:
        raise ValueError(f"load_mnist: {lname}: label {int(labels.max())} outside 0..9")
    return images, labels.astype(np.int64)


def mnist_vectors(images, *, scale: float | None = 255.0, center: bool = False) -> np.ndarray:
    """Images as rows ``z_j ∈ R^{784}`` (Huang et al. (2024) §6.1: ``d + 1 = 28² = 784``), float64.

    ``scale`` divides the pixels (default 255, so ``z_j ∈ [0, 1]^{784}`` and ``z_jᵀz_j ≤ 784``);
    Huang et al. (2024) state no normalisation, so the choice is ours and explicit (``scale=None``
    keeps 0..255). ``center=True`` subtracts the mean image (the samples in (2) of Han et al. (2024)
    are "zero-centered"; Huang et al. (2024) are silent).

    Parameters
    ----------
    images : array_like
        ``(n, rows, cols)`` images (any array with records along the first axis).
    scale : float or None, optional
        Divisor of the pixels, > 0 (default 255); ``None`` for none.
    center : bool, optional
        Subtract the mean row (default ``False``).

    Returns
    -------
    numpy.ndarray
        ``(n, rows * cols)`` float64.

    Raises
    ------
    ValueError
        If ``images`` has fewer than 2 axes or ``scale`` is not finite and > 0.
    """
    a = np.asarray(images)
    if a.ndim < 2:
        raise ValueError(f"mnist_vectors: images must have shape (n, rows, cols) (got {a.shape})")
    Z = a.reshape(a.shape[0], -1).astype(np.float64)
    if scale is not None:
        scale = float(scale)
        if not (np.isfinite(scale) and scale > 0):
            raise ValueError(f"mnist_vectors: scale must be finite and > 0 (got {scale})")
        Z = Z / scale
    return Z - Z.mean(axis=0) if center else Z


def _sklearn(name: str):
    try:
        from sklearn import datasets
    except ImportError as exc:  # pragma: no cover - scikit-learn is a runtime dependency
        raise ImportError(f"{name}: scikit-learn is needed for the bundled data sets ({exc})") from None
    return datasets


def load_iris() -> tuple[np.ndarray, np.ndarray]:
    """Iris (Fisher 1936) as bundled with scikit-learn: ``X`` (150, 4) float64, ``y`` (150,) float64 classes 0..2.

    Returns
    -------
    X : numpy.ndarray
        (150, 4) measurements.
    y : numpy.ndarray
        (150,) class labels 0..2 as floats.
    """
    b = _sklearn("load_iris").load_iris()
    return np.asarray(b.data, dtype=np.float64), np.asarray(b.target, dtype=np.float64)


def load_wine() -> tuple[np.ndarray, np.ndarray]:
    """Wine (UCI) as bundled with scikit-learn: ``X`` (178, 13) float64, ``y`` (178,) float64 classes 0..2.

    Returns
    -------
    X : numpy.ndarray
        (178, 13) measurements.
    y : numpy.ndarray
        (178,) class labels 0..2 as floats.
    """
    b = _sklearn("load_wine").load_wine()
    return np.asarray(b.data, dtype=np.float64), np.asarray(b.target, dtype=np.float64)


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """8×8 digits (UCI) as bundled with scikit-learn: ``X`` (1797, 64) float64 in 0..16, ``y`` (1797,) float64 0..9.

    Returns
    -------
    X : numpy.ndarray
        (1797, 64) pixel values in 0..16.
    y : numpy.ndarray
        (1797,) digits 0..9 as floats.
    """
    b = _sklearn("load_digits").load_digits()
    return np.asarray(b.data, dtype=np.float64), np.asarray(b.target, dtype=np.float64)


PATHMNIST_SPLITS = ("train", "val", "test")


def _npz_member_nbytes(where: str, name: str, zf: zipfile.ZipFile, key: str) -> int:
    """Bytes the .npy member ``key`` of an .npz declares (shape x itemsize), read from its header
    only; refuses object dtypes (they would need pickle) and unreadable headers, naming the file."""
    try:
        with zf.open(key + ".npy") as fp:
            version = np.lib.format.read_magic(fp)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(fp)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(fp)
            else:
                raise ValueError(f"npy format version {version} is not supported")
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile, ValueError) as exc:
        raise ValueError(f"{where}: {name}: member {key!r} has no readable .npy header ({exc})") from None
    if dtype.hasobject:
        raise ValueError(f"{where}: {name}: member {key!r} holds Python objects (dtype {dtype}); refused (no pickle)")
    n = dtype.itemsize
    for s_k in shape:
        n *= int(s_k)
    return n


def load_pathmnist(path, split: str = "train", *, max_bytes: int = MAX_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """One split of a MedMNIST ``.npz`` (e.g. ``pathmnist.npz``): images ``(n, H, W, 3)`` uint8, labels ``(n,)`` int64.

    Layout (MedMNIST v2, Yang et al. (2023)): keys ``{split}_images`` (uint8, ``(n, 28, 28, 3)`` for
    PathMNIST at 28 px) and ``{split}_labels`` (``(n, 1)`` integers, 9 tissue classes 0..8) for
    ``split`` in train/val/test. The full PathMNIST has 89,996 + 10,004 + 7,180 images; Huang et
    al. (2024) §6.2 quote 89,996 (the training split). The two members' sizes are read from their
    .npy headers before any data, and refused when together they exceed ``max_bytes``; NumPy then
    reads exactly the declared bytes (no pickle).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file.
    split : str, optional
        ``"train"`` (default), ``"val"`` or ``"test"``.
    max_bytes : int, optional
        Cap on the two members' declared bytes (default :data:`MAX_BYTES`, 1 GiB).

    Returns
    -------
    images : numpy.ndarray
        ``(n, H, W, 3)`` uint8.
    labels : numpy.ndarray
        ``(n,)`` int64.

    Raises
    ------
    ValueError
        Naming the file: if ``split`` is unknown, ``max_bytes`` is not a positive integer, the file
        does not exist or is not a readable ``.npz``, lacks a key, holds object arrays, declares
        more than ``max_bytes``, or its images are not uint8 ``(n, H, W, 3)`` or its labels not
        ``n`` integers.
    """
    where = "load_pathmnist"
    max_bytes = _cap(where, max_bytes)
    if split not in PATHMNIST_SPLITS:
        raise ValueError(f"{where}: split must be one of {PATHMNIST_SPLITS} (got {split!r})")
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{where}: no such file {str(path)!r}")
    name = path.name
    with open(path, "rb") as fh:
        if fh.read(4) != b"PK\x03\x04":  # an .npz is a zip archive
            raise ValueError(f"{where}: {name} is not a readable .npz (no zip signature)")
    ki, kl = f"{split}_images", f"{split}_labels"
    try:
        with zipfile.ZipFile(path) as zf:
            keys = {m[:-4] for m in zf.namelist() if m.endswith(".npy")}
            missing = [k for k in (ki, kl) if k not in keys]
            if missing:
                raise ValueError(f"{where}: {name} lacks key(s) {missing} (has {sorted(keys)})")
            total = sum(_npz_member_nbytes(where, name, zf, k) for k in (ki, kl))
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ValueError(f"{where}: {name} is not a readable .npz ({exc})") from None
    if total > max_bytes:
        raise ValueError(f"{where}: {name} declares {total} bytes for {ki} and {kl}, more than the cap max_bytes = "
                         f"{max_bytes} (pass a larger max_bytes to read it)")
    try:
        with np.load(path, allow_pickle=False) as z:
            images = z[ki]
            labels = z[kl]
    except (OSError, EOFError, ValueError, zlib.error, zipfile.BadZipFile) as exc:
        raise ValueError(f"{where}: {name} is not a readable .npz ({exc})") from None
    if images.dtype != np.uint8:
        raise ValueError(f"{where}: {name}: {ki} has dtype {images.dtype}, expected uint8")
    if images.ndim != 4 or images.shape[3] != 3:
        raise ValueError(f"{where}: {name}: {ki} has shape {images.shape}, expected (n, H, W, 3) RGB")
    labels = np.asarray(labels)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1 or labels.shape[0] != images.shape[0]:
        raise ValueError(f"{where}: {name}: {kl} has shape {labels.shape} for {images.shape[0]} images, expected (n, 1) or (n,)")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"{where}: {name}: {kl} has dtype {labels.dtype}, expected integers")
    return images, labels.astype(np.int64)


def center(X) -> np.ndarray:
    """Rows minus their mean: ``x_j − (1/n) Σ_k x_k``.

    Parameters
    ----------
    X : array_like
        Non-empty ``(n, d)`` records.

    Returns
    -------
    numpy.ndarray
        The centred float64 records.

    Raises
    ------
    ValueError
        If ``X`` is not a non-empty 2-D array.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"center: X must be a non-empty 2-D array of records (got shape {X.shape})")
    return X - X.mean(axis=0)


def standardize(X) -> np.ndarray:
    """Columns centred and divided by their standard deviation (ddof = 0); a constant column raises.

    Parameters
    ----------
    X : array_like
        Non-empty ``(n, d)`` records.

    Returns
    -------
    numpy.ndarray
        The standardised float64 records.

    Raises
    ------
    ValueError
        If ``X`` is not a non-empty 2-D array or has a constant column.
    """
    X = center(X)
    s = X.std(axis=0)
    if np.any(s == 0):
        bad = np.flatnonzero(s == 0)
        raise ValueError(f"standardize: {bad.size} constant column(s) cannot be scaled (first: column {bad[0]})")
    return X / s


def kpca_local_matrices(X, parts) -> list[np.ndarray]:
    """The agents' matrices of Li and Ma (2023) (3): ``A_i = Σ_{j ∈ D_i} x_j x_jᵀ = X_iᵀ X_i`` (rows of ``X`` are records).

    Li and Ma (2023) write ``A_i = X_i X_iᵀ`` with the records as columns of ``X_i ∈ R^{d×p}`` and
    call it the covariance of agent i's data; they say nothing about centring, scaling or dividing
    by ``p``, so this function does none of them: centre or standardise ``X`` first if wanted.

    Parameters
    ----------
    X : array_like
        ``(n, d)`` records.
    parts : sequence of array_like
        The agents' index arrays (:func:`~prirfed.reference.data.partition.check_partition`).

    Returns
    -------
    list of numpy.ndarray
        The symmetric ``(d, d)`` matrices :math:`A_i`.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, or as :func:`~prirfed.reference.data.partition.check_partition`.
    """
    from .partition import check_partition

    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"kpca_local_matrices: X must be 2-D (records × features), got shape {X.shape}")
    check_partition(parts, X.shape[0], where="kpca_local_matrices")
    out = []
    for p in parts:
        Xi = X[p]
        A = Xi.T @ Xi
        out.append(0.5 * (A + A.T))
    return out
