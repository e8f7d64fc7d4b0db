"""Loaders of real data: IDX parsing (raw and gzip) and its bad headers, MNIST on the shared data
(skipped when absent), scikit-learn's bundled sets against published facts, the MedMNIST .npz layout
on a file the test writes, and the preprocessing helpers."""

import gzip

import numpy as np
import pytest

from prirfed.reference.data import real
from prirfed.reference.data.real import (
    center,
    kpca_local_matrices,
    load_digits,
    load_iris,
    load_mnist,
    load_pathmnist,
    load_wine,
    mnist_vectors,
    read_idx,
    shared_data_dir,
    standardize,
)


def _idx_bytes(arr: np.ndarray, magic: int | None = None) -> bytes:
    """Independent writer of the IDX format (big-endian int32 magic and sizes, then bytes)."""
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    if magic is None:
        magic = 0x0800 + arr.ndim
    head = magic.to_bytes(4, "big") + b"".join(int(s).to_bytes(4, "big") for s in arr.shape)
    return head + arr.tobytes()


@pytest.mark.parametrize("compress", [False, True])
def test_idx_round_trip(tmp_path, compress):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    labels = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    bi, bl = _idx_bytes(images), _idx_bytes(labels)
    assert int.from_bytes(bi[:4], "big") == 2051 and int.from_bytes(bl[:4], "big") == 2049
    pi, pl = tmp_path / "img.idx", tmp_path / "lab.idx"
    pi.write_bytes(gzip.compress(bi) if compress else bi)
    pl.write_bytes(gzip.compress(bl) if compress else bl)
    X, y = load_mnist(pi, pl)
    assert np.array_equal(X, images) and np.array_equal(y, labels)
    assert y.dtype == np.int64


def test_idx_bad_headers(tmp_path):
    images = np.zeros((2, 28, 28), dtype=np.uint8)
    labels = np.zeros(2, dtype=np.uint8)
    p = tmp_path / "x"
    p.write_bytes(_idx_bytes(labels))
    with pytest.raises(ValueError, match=r"magic number 2049 \(0x00000801\), expected 2051"):
        load_mnist(p, p)
    p.write_bytes(_idx_bytes(images, magic=0x0D03))  # type code 0x0D = float, not unsigned byte
    with pytest.raises(ValueError, match="not an IDX file of unsigned bytes"):
        read_idx(p)
    p.write_bytes(_idx_bytes(images)[:-7])
    with pytest.raises(ValueError, match=r"shape \(2, 28, 28\) \(1568 bytes\) but 1561 data bytes follow"):
        read_idx(p)
    p.write_bytes(b"\x00\x00")
    with pytest.raises(ValueError, match="too short"):
        read_idx(p)
    p.write_bytes(b"\x1f\x8b" + b"garbage")
    with pytest.raises(ValueError, match="cannot be decompressed"):
        read_idx(p)
    with pytest.raises(ValueError, match="no such file"):
        read_idx(tmp_path / "missing")
    pi, pl = tmp_path / "i", tmp_path / "l"
    pi.write_bytes(_idx_bytes(images))
    pl.write_bytes(_idx_bytes(np.zeros(3, dtype=np.uint8)))
    with pytest.raises(ValueError, match="3 labels for 2 images"):
        load_mnist(pi, pl)


def _shared_mnist():
    root = shared_data_dir()
    if root is None or not (root / real.MNIST_T10K_IMAGES).is_file():
        pytest.skip("shared data folder ../shared/data (or $PRIRFED_DATA) with MNIST t10k is absent")
    return load_mnist(root / real.MNIST_T10K_IMAGES, root / real.MNIST_T10K_LABELS)


def test_mnist_t10k_known_class_counts():
    """Known answer from the data README: 10,000 test images, class counts 980 1135 … 1009."""
    X, y = _shared_mnist()
    assert X.shape == (10000, 28, 28) and X.dtype == np.uint8
    assert np.bincount(y, minlength=10).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    Z = mnist_vectors(X)
    assert Z.shape == (10000, 784) and Z.dtype == np.float64
    assert Z.min() == 0.0 and Z.max() == 1.0


def test_mnist_vectors_known_answer():
    imgs = np.arange(8, dtype=np.uint8).reshape(2, 2, 2) * 10
    assert np.array_equal(mnist_vectors(imgs, scale=None), [[0, 10, 20, 30], [40, 50, 60, 70]])
    assert np.allclose(mnist_vectors(imgs, scale=10.0, center=True), [[-2, -2, -2, -2], [2, 2, 2, 2]], rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="scale must be finite and > 0"):
        mnist_vectors(imgs, scale=0.0)


def test_sklearn_sets_against_published_facts():
    """Fisher's Iris: 150×4, 50 per class, first row (5.1, 3.5, 1.4, 0.2); UCI Wine: 178×13, classes
    59/71/48; UCI digits: 1797×64, values 0..16."""
    X, y = load_iris()
    assert X.shape == (150, 4) and X.dtype == np.float64 and y.dtype == np.float64
    assert np.bincount(y.astype(int)).tolist() == [50, 50, 50]
    assert X[0].tolist() == [5.1, 3.5, 1.4, 0.2]
    X, y = load_wine()
    assert X.shape == (178, 13) and np.bincount(y.astype(int)).tolist() == [59, 71, 48]
    X, y = load_digits()
    assert X.shape == (1797, 64) and X.min() == 0 and X.max() == 16 and set(np.unique(y)) == set(range(10))


def _write_medmnist(path, n=(6, 2, 3), bad=None):
    rng = np.random.default_rng(1)
    arrays = {}
    for split, k in zip(("train", "val", "test"), n):
        arrays[f"{split}_images"] = rng.integers(0, 256, size=(k, 28, 28, 3), dtype=np.uint8)
        arrays[f"{split}_labels"] = rng.integers(0, 9, size=(k, 1))
    if bad:
        bad(arrays)
    np.savez_compressed(path, **arrays)
    return arrays


def test_pathmnist_npz_layout(tmp_path):
    p = tmp_path / "pathmnist.npz"
    arrays = _write_medmnist(p)
    for split in ("train", "val", "test"):
        X, y = load_pathmnist(p, split)
        assert np.array_equal(X, arrays[f"{split}_images"])
        assert np.array_equal(y, arrays[f"{split}_labels"][:, 0]) and y.dtype == np.int64


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda a: a.pop("train_labels"), r"lacks key\(s\) \['train_labels'\]"),
        (lambda a: a.__setitem__("train_images", a["train_images"].astype(np.float32)), "dtype float32, expected uint8"),
        (lambda a: a.__setitem__("train_images", a["train_images"][..., 0]), r"expected \(n, H, W, 3\)"),
        (lambda a: a.__setitem__("train_labels", a["train_labels"][:4]), "for 6 images"),
    ],
)
def test_pathmnist_bad_files(tmp_path, bad, match):
    p = tmp_path / "bad.npz"
    _write_medmnist(p, bad=bad)
    with pytest.raises(ValueError, match=match):
        load_pathmnist(p, "train")


def test_pathmnist_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="split must be one of"):
        load_pathmnist(tmp_path / "x.npz", "validation")
    with pytest.raises(ValueError, match="no such file"):
        load_pathmnist(tmp_path / "x.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable .npz"):
        load_pathmnist(tmp_path / "junk.npz")


def test_preprocessing_known_answers():
    X = np.array([[1.0, 2.0], [3.0, 6.0]])
    assert np.array_equal(center(X), [[-1, -2], [1, 2]])
    assert np.allclose(standardize(X), [[-1, -1], [1, 1]], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="1 constant column"):
        standardize(np.array([[1.0, 2.0], [1.0, 3.0]]))
    A = kpca_local_matrices(X, [np.array([0]), np.array([1])])
    assert np.array_equal(A[0], [[1, 2], [2, 4]]) and np.array_equal(A[1], [[9, 18], [18, 36]])
    with pytest.raises(ValueError, match="agent 1 is empty"):
        kpca_local_matrices(X, [np.array([0, 1]), np.array([], dtype=int)])


def test_shared_data_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("PRIRFED_DATA", str(tmp_path))
    assert shared_data_dir() == tmp_path
    monkeypatch.setenv("PRIRFED_DATA", str(tmp_path / "absent"))
    assert shared_data_dir() is None
