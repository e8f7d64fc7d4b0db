"""prirfed-fig4 (000 Fig. 4, SPD Frechet mean of covariance descriptors): tiny end to end with the
reference backend on the fallback data (MNIST t10k or digits, said so in config and summary); a
PathMNIST-layout .npz written here gives 9x9 descriptors; the descriptor of a test image against an
independent computation; bad configurations fail clearly.
Proofs note: proofs_notes/experiment_prirfed_fig4.md.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from prirfed.experiments.prirfed_fig4 import resolve_data
from exp_helpers import read_csv, run_tiny


_csv = read_csv


def _run(out, **kw):
    return run_tiny("prirfed-fig4", out, **kw)


def test_tiny_fallback_outputs_and_disclosure(tmp_path):
    out = tmp_path / "f4"
    r = _run(out)
    cfg = json.loads((out / "config.json").read_text())
    c = cfg["config"]
    substitute = c["data"] != "pathmnist"  # PathMNIST is not in the shared data: normally a substitute
    assert c["data"] == resolve_data()[0]
    if substitute:
        assert "SUBSTITUTE" in c["data_note"]
    assert (out / "fig4.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "fig4.pdf").read_bytes()[:5] == b"%PDF-"
    rows = _csv(out / "curves.csv")
    assert {r_["algorithm"] for r_ in rows} == {"dp_rsgd", "dp_rsvrg"}
    assert all(float(r_["excess_mean"]) >= -1e-9 for r_ in rows)  # x* minimises f
    assert len(_csv(out / "privacy.csv")) == 4
    summary = (out / "summary.md").read_text()
    assert c["data_note"] in summary
    shown = {c_.claim: c_.shown for c_ in r["checks"]}
    assert shown["the data are PathMNIST's 9x9 covariance descriptors (000 section 6.2)"] is (not substitute)
    trial = json.loads((out / "trials" / "trial_0000.json").read_text())
    assert trial["result"]["k"] == (7 if substitute else 9)  # gray7 / rgb9 descriptors


def _rgb9_descriptor(img):
    """Independent TPM06 rgb9 descriptor: features by explicit loops over interior pixels, np.cov."""
    I = img.mean(axis=2)
    H, W = I.shape
    feats = []
    for y in range(1, H - 1):
        for x in range(1, W - 1):
            feats.append([x, y, *img[y, x], abs(I[y, x + 1] - I[y, x - 1]), abs(I[y + 1, x] - I[y - 1, x]),
                          abs(2 * I[y, x] - I[y, x - 1] - I[y, x + 1]), abs(2 * I[y, x] - I[y - 1, x] - I[y + 1, x])])
    return np.cov(np.array(feats).T) + 1e-6 * np.eye(9)


def test_pathmnist_file_gives_9x9_descriptors(tmp_path):
    """A MedMNIST-layout pathmnist.npz (written here, random RGB images) is used when given:
    9x9 descriptors, the data check is shown, and the trial's samples are the descriptors of the
    images drawn by the trial's data seed (recomputed independently for one image)."""
    rng = np.random.default_rng(3)
    imgs = rng.integers(0, 256, size=(700, 28, 28, 3), dtype=np.uint8)
    path = tmp_path / "pathmnist.npz"
    np.savez(path, train_images=imgs, train_labels=rng.integers(0, 9, size=(700, 1)))
    src, p, note = resolve_data(str(path))
    assert src == "pathmnist" and p == str(path) and "PathMNIST" in note
    out = tmp_path / "pm"
    r = _run(out, overrides=dict(data="pathmnist", data_path=str(path), algorithms=["dp_rsgd"], repeats=1, T=1))
    trial = json.loads((out / "trials" / "trial_0000.json").read_text())
    assert trial["result"]["k"] == 9
    assert {c.claim: c.shown for c in r["checks"]}["the data are PathMNIST's 9x9 covariance descriptors (000 section 6.2)"]
    # the descriptor pipeline (scale 1/255, rgb9) against the explicit computation
    from prirfed.experiments.prirfed_fig4 import _samples

    cfg = json.loads((out / "config.json").read_text())["config"]
    seq = np.random.SeedSequence(0)
    X = _samples(cfg, np.random.default_rng(seq))
    idx = np.random.default_rng(seq).choice(700, size=cfg["n_images"], replace=False)
    np.testing.assert_allclose(X[0], _rgb9_descriptor(imgs[idx[0]].astype(float) / 255.0), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("overrides, message", [
    (dict(data="cifar"), "data must be one of"),
    (dict(data="pathmnist", data_path="/no/such/pathmnist.npz"), "data 'pathmnist': data_path '/no/such/pathmnist.npz' is not an existing file"),
    (dict(data="mnist", data_path=3), "data 'mnist': data_path 3 is not an existing file"),
    (dict(data="digits", n_images=5000), "n_images = 5000 exceeds the 1797 images of 'digits'"),
    (dict(scenarios=[[2, 400]]), "needs N * N_i = 800 samples, only 600 available"),
    (dict(descriptor_eps=0.0), "descriptor_eps must be a positive finite number"),
    (dict(alpha=float("nan")), "alpha must be a positive finite number"),
])
def test_bad_configuration_is_a_clear_error(tmp_path, overrides, message):
    with pytest.raises(ValueError, match="prirfed-fig4: .*" + re.escape(message)):
        _run(tmp_path / "bad", overrides=overrides)


def test_shared_folder_file_without_the_folder_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIRFED_DATA", str(tmp_path))  # an empty folder: no pathmnist.npz, no MNIST
    with pytest.raises(ValueError, match=r"prirfed-fig4: data 'pathmnist' with data_path None reads pathmnist.npz "
                                         r"of the shared data folder .*which is not there"):
        _run(tmp_path / "bad", overrides=dict(data="pathmnist", data_path=None))


def test_configuration_does_not_depend_on_where_the_shared_folder_is(tmp_path, monkeypatch):
    """The committed outputs' hash must hold on every machine (CI keeps the folder elsewhere): the same
    files under another folder give the same configuration and hash, and are the files read."""
    from prirfed.experiments import EXPERIMENTS
    from prirfed.experiments.core import config_hash
    from prirfed.experiments.prirfed_fig4 import SHARED_FILES, data_file
    from prirfed.reference.data.real import MNIST_T10K_IMAGES, MNIST_T10K_LABELS, shared_data_dir
    sd = shared_data_dir()
    if sd is None or not (sd / MNIST_T10K_IMAGES).is_file() or not (sd / MNIST_T10K_LABELS).is_file():
        pytest.skip("the shared data folder with MNIST t10k is absent (the configuration then uses digits)")
    here = EXPERIMENTS["prirfed-fig4"].make_config("quick", 0, "verified")
    assert here["data"] in ("mnist", "pathmnist") and here["data_path"] is None
    other = tmp_path / "elsewhere"
    for name in (MNIST_T10K_IMAGES, MNIST_T10K_LABELS, "pathmnist.npz"):
        if (sd / name).is_file():
            (other / name).parent.mkdir(parents=True, exist_ok=True)
            (other / name).symlink_to(sd / name)
    monkeypatch.setenv("PRIRFED_DATA", str(other))
    there = EXPERIMENTS["prirfed-fig4"].make_config("quick", 0, "verified")
    assert there == here and config_hash(there) == config_hash(here)
    assert data_file(there["data"], there["data_path"]) == other / SHARED_FILES[there["data"]]


def test_missing_pathmnist_path_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="prirfed-fig4: data_path .* is not a file"):
        resolve_data(str(tmp_path / "nope.npz"))
