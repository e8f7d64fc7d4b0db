"""Loaders cap what they read and name the file in every error (issue 19).

Every file here is crafted by the test itself in a temporary folder (no real data). The cap is
checked against what a file declares before reading, and the reading stops at the declared size:
``tracemalloc`` (which sees NumPy's and Python's allocations) measures the peak memory of each
read, so a small file that declares or decompresses to a huge array is shown to cost little.
"""

import gzip
import io
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

from prirfed.reference.data import real
from prirfed.reference.data import wordnet as wn


def _idx_header(shape, magic_nd=None):
    nd = len(shape) if magic_nd is None else magic_nd
    return bytes([0, 0, 0x08, nd]) + b"".join(int(s).to_bytes(4, "big") for s in shape)


def _gzip_stream(path, header: bytes, zeros: int, chunk: int = 1 << 20):
    """A gzip file holding header + `zeros` zero bytes, written in chunks (no big buffer here)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: gzip container
    with open(path, "wb") as fh:
        fh.write(comp.compress(header))
        left = zeros
        block = bytes(min(chunk, zeros))
        while left > 0:
            n = min(left, len(block))
            fh.write(comp.compress(block[:n]))
            left -= n
        fh.write(comp.flush())


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        try:
            fn()
        except ValueError as exc:
            err = exc
        else:
            err = None
        return tracemalloc.get_traced_memory()[1], err
    finally:
        tracemalloc.stop()


def test_idx_declared_size_is_capped_before_reading(tmp_path):
    """A 40-byte file declaring 60000 x 10000 x 10000 bytes (6e12) is refused from its header."""
    p = tmp_path / "bomb-idx3-ubyte.gz"
    p.write_bytes(gzip.compress(_idx_header((60000, 10000, 10000)) + bytes(16)))
    peak, err = _peak_bytes(lambda: real.read_idx(p))
    assert err is not None and "bomb-idx3-ubyte.gz declares shape (60000, 10000, 10000) (6000000000000 bytes)" in str(err)
    assert "more than the cap max_bytes = 1073741824" in str(err)
    assert peak < 1 << 20, f"peak {peak} bytes"
    # an explicit, smaller cap applies to honest files too
    q = tmp_path / "small-idx1-ubyte"
    q.write_bytes(_idx_header((10,)) + bytes(range(10)))
    assert real.read_idx(q, max_bytes=10).tolist() == list(range(10))
    with pytest.raises(ValueError, match=r"read_idx: small-idx1-ubyte declares shape \(10,\) \(10 bytes\), more than the cap max_bytes = 9"):
        real.read_idx(q, max_bytes=9)
    for bad in (0, -1, 2.5, True, "10"):
        with pytest.raises(ValueError, match="read_idx: max_bytes must be a positive integer"):
            real.read_idx(q, max_bytes=bad)


def test_idx_decompression_stops_at_the_declared_size(tmp_path):
    """A gzip whose header declares 784 bytes but which decompresses to 64 MiB of zeros (a 64 KB
    file): refused as 'at least 785 data bytes follow', with a peak memory of well under 1 MB
    (the old reader decompressed everything first)."""
    p = tmp_path / "trailing.gz"
    _gzip_stream(p, _idx_header((1, 28, 28)), 64 << 20)
    assert p.stat().st_size < 200_000
    peak, err = _peak_bytes(lambda: real.read_idx(p))
    assert err is not None
    assert str(err) == "read_idx: trailing.gz header says shape (1, 28, 28) (784 bytes) but at least 785 data bytes follow"
    assert peak < 1 << 20, f"peak {peak} bytes"


def test_idx_short_data_and_corrupt_streams_name_the_file(tmp_path):
    p = tmp_path / "short.gz"
    p.write_bytes(gzip.compress(_idx_header((2, 3)) + bytes(5)))
    with pytest.raises(ValueError, match=r"read_idx: short\.gz header says shape \(2, 3\) \(6 bytes\) but 5 data bytes follow"):
        real.read_idx(p)
    raw = gzip.compress(_idx_header((2, 3)) + bytes(6))
    q = tmp_path / "corrupt.gz"
    q.write_bytes(raw[:-8] + bytes(8))  # damaged CRC-32 and length trailer
    with pytest.raises(ValueError, match=r"read_idx: corrupt\.gz starts like gzip but cannot be decompressed"):
        real.read_idx(q)
    t = tmp_path / "truncated.gz"
    t.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"read_idx: truncated\.gz"):
        real.read_idx(t)


def test_load_mnist_errors_name_the_files(tmp_path):
    img = tmp_path / "imgs-idx3-ubyte"
    img.write_bytes(bytes([0, 0, 8, 3]) + (2).to_bytes(4, "big") + (2).to_bytes(4, "big") + (2).to_bytes(4, "big") + bytes(8))
    lab = tmp_path / "labs-idx1-ubyte"
    lab.write_bytes(bytes([0, 0, 8, 1]) + (3).to_bytes(4, "big") + bytes(3))
    with pytest.raises(ValueError, match=r"load_mnist: labs-idx1-ubyte: 3 labels for 2 images in imgs-idx3-ubyte"):
        real.load_mnist(img, lab)
    lab.write_bytes(bytes([0, 0, 8, 1]) + (2).to_bytes(4, "big") + bytes([1, 12]))
    with pytest.raises(ValueError, match=r"load_mnist: labs-idx1-ubyte: label 12 outside 0\.\.9"):
        real.load_mnist(img, lab)
    with pytest.raises(ValueError, match=r"read_idx: imgs-idx3-ubyte declares shape \(2, 2, 2\) \(8 bytes\), more than the cap"):
        real.load_mnist(img, lab, max_bytes=4)


def _npy_header(shape, descr="|u1") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()  # magic string, version and header


def _write_npz(path, members: dict):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, data in members.items():
            zf.writestr(key + ".npy", data)


def test_pathmnist_declared_size_is_capped_before_reading(tmp_path):
    """An .npz whose images member declares 10^6 x 28 x 28 x 3 bytes (2.35 GB) but holds 10 bytes:
    refused from the headers, naming the file; with a small explicit cap an honest file too."""
    p = tmp_path / "bomb.npz"
    _write_npz(p, {"train_images": _npy_header((10**6, 28, 28, 3)) + bytes(10),
                   "train_labels": _npy_header((10**6, 1)) + bytes(10)})
    peak, err = _peak_bytes(lambda: real.load_pathmnist(p))
    assert err is not None
    assert str(err).startswith("load_pathmnist: bomb.npz declares 2353000000 bytes for train_images and train_labels, "
                               "more than the cap max_bytes = 1073741824")
    assert peak < 1 << 20, f"peak {peak} bytes"
    q = tmp_path / "honest.npz"
    np.savez(q, train_images=np.zeros((2, 4, 4, 3), np.uint8), train_labels=np.zeros((2, 1), np.int64))
    images, labels = real.load_pathmnist(q, max_bytes=96 + 16)
    assert images.shape == (2, 4, 4, 3) and labels.tolist() == [0, 0]
    with pytest.raises(ValueError, match=r"load_pathmnist: honest\.npz declares 112 bytes .* more than the cap max_bytes = 111"):
        real.load_pathmnist(q, max_bytes=111)


def test_pathmnist_short_members_objects_and_errors_name_the_file(tmp_path):
    p = tmp_path / "short.npz"
    _write_npz(p, {"train_images": _npy_header((2, 2, 2, 3)) + bytes(5), "train_labels": _npy_header((2,)) + bytes(2)})
    with pytest.raises(ValueError, match=r"load_pathmnist: short\.npz is not a readable \.npz"):
        real.load_pathmnist(p)
    o = tmp_path / "objects.npz"
    _write_npz(o, {"train_images": _npy_header((2,), descr="|O") + bytes(16), "train_labels": _npy_header((2,)) + bytes(2)})
    with pytest.raises(ValueError, match=r"load_pathmnist: objects\.npz: member 'train_images' holds Python objects"):
        real.load_pathmnist(o)
    b = tmp_path / "badheader.npz"
    _write_npz(b, {"train_images": b"\x93NUMPY\x09\x00garbage", "train_labels": _npy_header((2,)) + bytes(2)})
    with pytest.raises(ValueError, match=r"load_pathmnist: badheader\.npz: member 'train_images' has no readable \.npy header"):
        real.load_pathmnist(b)
    w = tmp_path / "wrong.npz"
    np.savez(w, train_images=np.zeros((2, 4, 4, 3), np.float32), train_labels=np.zeros((2, 1), np.int64))
    with pytest.raises(ValueError, match=r"load_pathmnist: wrong\.npz: train_images has dtype float32, expected uint8"):
        real.load_pathmnist(w)


def test_mammal_closure_is_capped_and_errors_name_the_file(tmp_path):
    p = tmp_path / "closure.tsv"
    p.write_text("a\tmammal.n.01\nb\tmammal.n.01\n", encoding="utf-8")
    assert wn.load_mammal_closure(p).n == 3
    with pytest.raises(ValueError, match=r"load_mammal_closure: closure\.tsv has 28 bytes, more than the cap max_bytes = 27"):
        wn.load_mammal_closure(p, max_bytes=27)
    p.write_bytes(b"a\tmammal.n.01\n\xff\xfe\tb\n")
    with pytest.raises(ValueError, match=r"load_mammal_closure: closure\.tsv is not UTF-8 text"):
        wn.load_mammal_closure(p)
    p.write_text("a\tmammal.n.01\nx\ty\tz\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"load_mammal_closure: closure\.tsv: line 2 is not 'child<TAB>ancestor'"):
        wn.load_mammal_closure(p)
    for bad in (0, -5, 1.5, False):
        with pytest.raises(ValueError, match="load_mammal_closure: max_bytes must be a positive integer"):
            wn.load_mammal_closure(p, max_bytes=bad)
