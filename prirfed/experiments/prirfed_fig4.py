"""``prirfed-fig4``: Figure 4 of 000 (Section 6.2), PriRFed Frechet mean of covariance descriptors (real data).

000 Section 6.2, quoted: "PATHMNIST. The PATHMNIST dataset given in [YSW+23] has 89996 RGB images.
Each image in PATHMNIST is transformed into a 9 x 9 SPD matrix by the covariance descriptor [TPM06].
20000 images are randomly chosen from PATHMNIST for our tests with (N, N_i) = (50, 400) and
(N, N_i) = (100, 200). The results are reported in Figure 4, where the step size is set as
alpha_t = 0.3." and, for the whole section, "eps = 0.15 and delta = 10^-4 for local training
procedures, [...] s_t = 1, K = 3, m = 10, and tau = tau_0 = tau_1 = 1.0". Caption: "Averaged
results over 10 tests [...] Excess risk is defined by f(x~) - f(x*), where f(x*) is given through
steepest descent method." Problem, noise formulas, choices (b_i = N_i, x^(0), x*, delta_hat,
Option 1) and privacy columns: as ``prirfed-fig3`` (:mod:`prirfed.experiments.prirfed_fig3`).

Data (config keys ``data``, ``data_path``, ``data_note``), resolved when the configuration is made:
- ``"pathmnist"``: the training split of a MedMNIST ``pathmnist.npz`` (``data_path``, default
  ``shared_data_dir()/pathmnist.npz``), 9 x 9 ``rgb9`` descriptors (:mod:`...data.descriptors`),
  the paper's sizes;
- ``data_path`` is ``None`` when the file is the shared data folder's own (``pathmnist.npz`` or the
  MNIST t10k images): the folder is found again at run time (``$PRIRFED_DATA`` or ``../shared/data``),
  so a configuration, and its hash, do not depend on where a machine keeps that folder;
- otherwise (PathMNIST is not available offline) ``"mnist"``: the 10,000 MNIST t10k images of the
  shared data folder, gray-scale 7 x 7 ``gray7`` descriptors (TPM06's texture variant, as MNIST has
  no colour), with N halved, (N, N_i) = (25, 400), (50, 200), so that N_i, hence sigma_i, is the
  paper's;
- without the shared folder, ``"digits"``: the 1,797 8 x 8 scikit-learn digits, ``gray7``
  descriptors, (N, N_i) = (4, 400), (8, 200).
The chosen source and why are written to config.json and summary.md. In each test ``n_images``
images are drawn uniformly without replacement (the paper's "randomly chosen") and split in that
order into the agents. Proofs note: ``proofs_notes/experiment_prirfed_fig4.md``.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from prirfed.reference.data.descriptors import covariance_descriptors
from prirfed.reference.data.real import (
    MNIST_T10K_IMAGES,
    MNIST_T10K_LABELS,
    load_digits,
    load_mnist,
    load_pathmnist,
    shared_data_dir,
)

from . import validate as v
from .core import Check, experiment
from .spd_common import run_spd_trial, spd_config, spd_report, validate_common

__all__ = ["EXPERIMENT", "resolve_data", "data_file", "load_images", "DATA_SOURCES", "SHARED_FILES"]

NAME = "prirfed-fig4"
DATA_SOURCES = ("pathmnist", "mnist", "digits")
FEATURES = {"pathmnist": "rgb9", "mnist": "gray7", "digits": "gray7"}
SCALES = {"pathmnist": 255.0, "mnist": 255.0, "digits": 16.0}

#: a source's file inside the shared data folder (used when ``data_path`` is ``None``)
SHARED_FILES = {"pathmnist": "pathmnist.npz", "mnist": MNIST_T10K_IMAGES}

#: (n_images, scenarios) of mode full per source
FULL_SIZES = {
    "pathmnist": (20000, [[50, 400], [100, 200]]),
    "mnist": (10000, [[25, 400], [50, 200]]),
    "digits": (1600, [[4, 400], [8, 200]]),
}


def resolve_data(path=None) -> tuple[str, str | None, str]:
    """(source, path, note): PathMNIST if ``path`` (or ``shared_data_dir()/pathmnist.npz``) is a file,
    else MNIST t10k of the shared data folder, else scikit-learn's digits. ``path`` is ``None`` for
    the shared folder's files (found again by :func:`data_file` at run time)."""
    sd = shared_data_dir()
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"{NAME}: data_path {str(path)!r} is not a file (give a MedMNIST pathmnist.npz or leave it unset)")
        return "pathmnist", str(p), "PathMNIST training split from the given path (000's data set)"
    if sd is not None and (sd / SHARED_FILES["pathmnist"]).is_file():
        return "pathmnist", None, "PathMNIST training split from the shared data folder (000's data set)"
    if sd is not None and (sd / MNIST_T10K_IMAGES).is_file() and (sd / MNIST_T10K_LABELS).is_file():
        return ("mnist", None,
                "PathMNIST is not available: SUBSTITUTE data, 7x7 gray-scale covariance descriptors of the 10,000 MNIST "
                "t10k images (shared data folder); N halved so that N_i (hence sigma_i) is the paper's")
    return ("digits", None,
            "PathMNIST and the shared data folder are not available: SUBSTITUTE data, 7x7 gray-scale covariance "
            "descriptors of scikit-learn's 1,797 8x8 digits; N scaled so that N_i (hence sigma_i) is the paper's")


def make_config(mode: str, seed: int, backend: str) -> dict:
    source, path, note = resolve_data()
    n_full, sc_full = FULL_SIZES[source]
    sizes = {
        "full": dict(n_images=n_full, scenarios=sc_full, T=100, repeats=10, record_every=1),
        "quick": dict(n_images=1600, scenarios=[[4, 400], [8, 200]], T=30, repeats=3, record_every=1),
        "tiny": dict(n_images=600, scenarios=[[2, 300], [4, 150]], T=3, repeats=2, record_every=1),
    }[mode]
    if mode == "quick" and source != "digits":
        sizes.update(n_images=2000, scenarios=[[5, 400], [10, 200]])
    base = spd_config(mode, seed, backend, data=source, data_path=path, data_note=note, descriptor_eps=1e-6, **sizes)
    base.update(alpha=0.3)
    return base


def data_file(source: str, path: str | None) -> Path | None:
    """The file a configuration reads: ``path`` if given, else the source's file in the shared data
    folder; ``None`` for ``"digits"`` (bundled with scikit-learn). ValueError if it is not a file."""
    if source not in DATA_SOURCES:
        raise ValueError(f"{NAME}: data must be one of {DATA_SOURCES} (got {source!r})")
    if source == "digits":
        return None
    if path is not None:
        if not isinstance(path, str) or not Path(path).is_file():
            raise ValueError(f"{NAME}: data {source!r}: data_path {path!r} is not an existing file")
        return Path(path)
    sd = shared_data_dir()
    if sd is None or not (sd / SHARED_FILES[source]).is_file():
        raise ValueError(f"{NAME}: data {source!r} with data_path None reads {SHARED_FILES[source]} of the shared data "
                         f"folder ($PRIRFED_DATA or ../shared/data), which is not there (folder: {sd}); give data_path")
    return sd / SHARED_FILES[source]


@functools.lru_cache(maxsize=4)
def load_images(source: str, path: str | None) -> np.ndarray:
    """All images of the source: (n, 28, 28, 3) uint8 (PathMNIST train), (n, 28, 28) uint8 (MNIST),
    (1797, 8, 8) float in 0..16 (digits). Cached per process."""
    if source == "pathmnist":
        return load_pathmnist(data_file(source, path), "train")[0]
    if source == "mnist":
        p = data_file(source, path)
        return load_mnist(p, p.parent / Path(MNIST_T10K_LABELS).name)[0]
    if source == "digits":
        return load_digits()[0].reshape(-1, 8, 8)
    raise ValueError(f"{NAME}: data must be one of {DATA_SOURCES} (got {source!r})")


def trial_specs(config: dict) -> list:
    where = NAME
    v.check_choice(where, "data", config["data"], DATA_SOURCES)
    data_file(config["data"], config["data_path"])
    n = v.check_int(where, "n_images", config["n_images"], 1)
    v.check_positive(where, "descriptor_eps", config["descriptor_eps"])
    validate_common(where, config, n)
    available = len(load_images(config["data"], config["data_path"]))
    if n > available:
        raise ValueError(f"{where}: n_images = {n} exceeds the {available} images of {config['data']!r} (by {n - available})")
    return [dict(test=r) for r in range(config["repeats"])]


def _samples(config, rng):
    images = load_images(config["data"], config["data_path"])
    idx = rng.choice(len(images), size=config["n_images"], replace=False)
    return covariance_descriptors(images[idx], FEATURES[config["data"]], config["descriptor_eps"], SCALES[config["data"]])


def run_trial(config: dict, spec: dict, seq) -> dict:
    return run_spd_trial(config, seq, lambda rng: _samples(config, rng), where=NAME)


def report(config: dict, results: list, out) -> list:
    k = results[0]["k"]
    checks = spd_report(config, results, out, "fig4", f"{config['data']} {k}x{k} descriptors")
    checks.append(Check(
        "the data are PathMNIST's 9x9 covariance descriptors (000 section 6.2)",
        config["data"] == "pathmnist",
        f"data = {config['data']!r}: {config['data_note']}"))
    return checks


EXPERIMENT = experiment(__name__, NAME, "000 Fig. 4: PriRFed-DP-RSGD vs PriRFed-DP-RSVRG, Frechet mean of covariance descriptors "
                "(PathMNIST if available, else MNIST t10k / digits, said so)", "000 Section 6.2, Figure 4", figures=("fig4",))
