"""Region covariance descriptors (Tuzel, Porikli & Meer, ECCV 2006) — the SPD data of Huang et al. (2024) §6.2.

Huang et al. (2024) §6.2: "Each image in PATHMNIST is transformed into a 9 × 9 SPD matrix by the covariance
descriptor [TPM06]". The 9-dimensional per-pixel feature of TPM06 (§4, object detection) is::

    F(x, y) = [x, y, R, G, B, |I_x|, |I_y|, |I_xx|, |I_yy|]

with I the intensity and the derivatives from the filters [−1, 0, 1] and [−1, 2, −1]; TPM06's
texture features are the 7-dimensional gray-scale variant ``[x, y, I, |I_x|, |I_y|, |I_xx|, |I_yy|]``.
The descriptor is the sample covariance ``C = 1/(n−1) Σ_k (z_k − μ)(z_k − μ)ᵀ`` over the region's
pixels (TPM06 eq. (2)), plus ``ε I`` so that it is positive definite even on flat images.

Choices Huang et al. (2024) does not state (ours, explicit, see proofs_notes/data_real.md): features on the
interior pixels only (where both filters are defined, so no padding convention is needed);
``x`` is the column index and ``y`` the row index in pixel units; intensity
``I = (R + G + B)/3``; pixel values as given (the PathMNIST helper divides uint8 by 255);
``ε = 1e-6`` by default.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FEATURE_SETS", "pixel_features", "covariance_descriptor", "covariance_descriptors"]

FEATURE_SETS = {
    "rgb9": ("x", "y", "R", "G", "B", "|I_x|", "|I_y|", "|I_xx|", "|I_yy|"),
    "gray7": ("x", "y", "I", "|I_x|", "|I_y|", "|I_xx|", "|I_yy|"),
}


def _image(where: str, image, features: str) -> np.ndarray:
    if features not in FEATURE_SETS:
        raise ValueError(f"{where}: unknown feature set {features!r} (choose one of {sorted(FEATURE_SETS)})")
    try:
        a = np.asarray(image, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: image cannot be read as a float array ({exc})") from None
    if features == "rgb9":
        if a.ndim != 3 or a.shape[2] != 3:
            raise ValueError(f"{where}: 'rgb9' needs an (H, W, 3) RGB image (got shape {a.shape})")
    else:
        if a.ndim == 3 and a.shape[2] == 3:
            a = a.mean(axis=2)
        if a.ndim != 2:
            raise ValueError(f"{where}: 'gray7' needs an (H, W) or (H, W, 3) image (got shape {a.shape})")
    if a.shape[0] < 3 or a.shape[1] < 3:
        raise ValueError(f"{where}: image is {a.shape[0]}x{a.shape[1]}; the 3-tap filters need at least 3x3 pixels")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where}: image has {int(np.sum(~np.isfinite(a)))} non-finite pixel(s)")
    return a


def pixel_features(image, features: str = "rgb9") -> np.ndarray:
    """Per-pixel feature vectors ``F(x, y)`` of TPM06 on the interior pixels: shape ``((H−2)(W−2), k)``.

    Tuzel, Porikli and Meer (2006), Section 4. ``I_x(x, y) = I(x+1, y) − I(x−1, y)`` (filter
    [−1, 0, 1]) and ``I_xx(x, y) = −I(x−1, y) + 2 I(x, y) − I(x+1, y)`` (filter [−1, 2, −1]);
    likewise along ``y`` (rows). Rows of the output run over pixels in row-major order.

    Parameters
    ----------
    image : array_like
        An ``(H, W, 3)`` RGB image (``"rgb9"``), or an ``(H, W)`` or ``(H, W, 3)`` image
        (``"gray7"``, colour averaged), at least 3 × 3 pixels, finite.
    features : str, optional
        ``"rgb9"`` (default, 9 features) or ``"gray7"`` (7 features), see :data:`FEATURE_SETS`.

    Returns
    -------
    numpy.ndarray
        ``((H−2)(W−2), k)`` feature matrix, ``k`` = 9 or 7.

    Raises
    ------
    ValueError
        If ``features`` is unknown, the image cannot be read as floats, has the wrong shape for the
        feature set, is smaller than 3 × 3, or has non-finite pixels.
    """
    where = "pixel_features"
    a = _image(where, image, features)
    I = a.mean(axis=2) if a.ndim == 3 else a
    H, W = I.shape
    c = I[1:-1, 1:-1]
    Ix = I[1:-1, 2:] - I[1:-1, :-2]
    Iy = I[2:, 1:-1] - I[:-2, 1:-1]
    Ixx = 2.0 * c - I[1:-1, :-2] - I[1:-1, 2:]
    Iyy = 2.0 * c - I[:-2, 1:-1] - I[2:, 1:-1]
    y, x = np.meshgrid(np.arange(1, H - 1, dtype=np.float64), np.arange(1, W - 1, dtype=np.float64), indexing="ij")
    if features == "rgb9":
        colour = [a[1:-1, 1:-1, k] for k in range(3)]
    else:
        colour = [c]
    cols = [x, y, *colour, np.abs(Ix), np.abs(Iy), np.abs(Ixx), np.abs(Iyy)]
    return np.stack([f.ravel() for f in cols], axis=1)


def covariance_descriptor(image, features: str = "rgb9", eps: float = 1e-6) -> np.ndarray:
    r"""Region covariance ``C = 1/(n−1) Σ_k (z_k − μ)(z_k − μ)ᵀ + ε I`` of :func:`pixel_features` (TPM06 eq. (2)).

    ``rgb9`` gives the 9 × 9 SPD matrix of Huang et al. (2024) §6.2. ``eps > 0`` is required:
    without it a constant feature (e.g. ``|I_xx| ≡ 0`` on a linear ramp) makes ``C`` singular.

    Parameters
    ----------
    image : array_like
        The image, as for :func:`pixel_features`.
    features : str, optional
        ``"rgb9"`` (default) or ``"gray7"``.
    eps : float, optional
        Ridge :math:`\varepsilon > 0` added to the diagonal (default 1e-6).

    Returns
    -------
    numpy.ndarray
        The symmetric positive definite ``(k, k)`` descriptor.

    Raises
    ------
    ValueError
        If ``eps`` is not finite and > 0, or as :func:`pixel_features`.
    """
    where = "covariance_descriptor"
    eps = float(eps)
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"{where}: eps must be finite and > 0 (got {eps}); it keeps C positive definite")
    Z = pixel_features(image, features)
    n = Z.shape[0]
    Zc = Z - Z.mean(axis=0)
    C = Zc.T @ Zc / (n - 1)
    C = 0.5 * (C + C.T)
    return C + eps * np.eye(C.shape[0])


def covariance_descriptors(images, features: str = "rgb9", eps: float = 1e-6, scale: float | None = 255.0) -> np.ndarray:
    """Descriptors of a stack of images ``(m, H, W[, 3])`` → ``(m, k, k)``; pixels divided by ``scale``.

    The PathMNIST pipeline of Huang et al. (2024) §6.2:
    ``covariance_descriptors(load_pathmnist(path)[0])``.

    Parameters
    ----------
    images : array_like
        Stack ``(m, H, W[, 3])``.
    features : str, optional
        ``"rgb9"`` (default) or ``"gray7"``.
    eps : float, optional
        Ridge added to each descriptor (default 1e-6).
    scale : float or None, optional
        Every pixel is divided by it (default 255, for uint8 images); ``None`` leaves them as given.

    Returns
    -------
    numpy.ndarray
        ``(m, k, k)`` descriptors.

    Raises
    ------
    ValueError
        If ``images`` is not a stack (fewer than 3 axes), ``scale`` is not finite and > 0, or as
        :func:`covariance_descriptor`.
    """
    imgs = np.asarray(images)
    if imgs.ndim < 3:
        raise ValueError(f"covariance_descriptors: images must be a stack (m, H, W[, 3]) (got shape {imgs.shape})")
    if scale is not None:
        scale = float(scale)
        if not (np.isfinite(scale) and scale > 0):
            raise ValueError(f"covariance_descriptors: scale must be finite and > 0 (got {scale})")
    out = []
    for im in imgs:
        im = im.astype(np.float64)
        out.append(covariance_descriptor(im / scale if scale is not None else im, features, eps))
    return np.array(out)
