"""Covariance descriptors (TPM06; 000 §6.2): known covariances of synthetic images, SPD-ness, bad input."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from prirfed.reference.data.descriptors import covariance_descriptor, covariance_descriptors, pixel_features


def _exact_cov(columns):
    """Sample covariance with 1/(n-1) in exact rational arithmetic (independent oracle)."""
    n = len(columns[0])
    means = [sum(c, Fraction(0)) / n for c in columns]
    k = len(columns)
    C = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            C[i, j] = float(sum((a - means[i]) * (b - means[j]) for a, b in zip(columns[i], columns[j])) / (n - 1))
    return C


def test_linear_rgb_image_closed_form():
    """R = x, G = y, B = 1/2: features [x, y, x, y, 1/2, 2/3, 2/3, 0, 0] on interior pixels, so
    C_xx = H'·W'(W'²−1)/12/(m−1) on entries (0,0),(0,2),(2,0),(2,2), C_yy likewise on {1,3}, zero elsewhere."""
    H, W, eps = 7, 10, 1e-6
    y, x = np.mgrid[0:H, 0:W].astype(float)
    img = np.stack([x, y, np.full_like(x, 0.5)], axis=2)
    Hp, Wp = H - 2, W - 2
    m = Hp * Wp
    cxx = Hp * Wp * (Wp**2 - 1) / 12 / (m - 1)
    cyy = Wp * Hp * (Hp**2 - 1) / 12 / (m - 1)
    expected = np.zeros((9, 9))
    for i in (0, 2):
        for j in (0, 2):
            expected[i, j] = cxx
    for i in (1, 3):
        for j in (1, 3):
            expected[i, j] = cyy
    expected += eps * np.eye(9)
    C = covariance_descriptor(img, "rgb9", eps)
    assert C.shape == (9, 9)
    assert np.allclose(C, expected, rtol=1e-13, atol=1e-13)
    F = pixel_features(img, "rgb9")
    assert np.allclose(F[:, 5:7], 2.0 / 3.0, rtol=1e-15, atol=0) and np.allclose(F[:, 7:], 0.0, atol=1e-15)


def test_quadratic_gray_image_exact_oracle():
    """I = x²: I_x = (x+1)² − (x−1)² = 4x, |I_xx| = |−(x−1)² + 2x² − (x+1)²| = 2, I_y = I_yy = 0.
    Features [x, y, x², 4x, 0, 2, 0]; covariance from exact rationals."""
    H, W = 6, 9
    img = np.tile(np.arange(W, dtype=float) ** 2, (H, 1))
    xs = [Fraction(c) for r in range(1, H - 1) for c in range(1, W - 1)]
    ys = [Fraction(r) for r in range(1, H - 1) for c in range(1, W - 1)]
    cols = [xs, ys, [v * v for v in xs], [4 * v for v in xs], [Fraction(0)] * len(xs), [Fraction(2)] * len(xs), [Fraction(0)] * len(xs)]
    expected = _exact_cov(cols) + 1e-6 * np.eye(7)
    assert np.allclose(covariance_descriptor(img, "gray7"), expected, rtol=1e-13, atol=1e-12)


@given(img=arrays(np.float64, (8, 9, 3), elements=st.floats(0, 1)), shift=st.floats(-1, 1))
def test_descriptor_is_spd_and_invariant_to_a_brightness_shift(img, shift):
    """C is symmetric with eigenvalues ≥ ε (1 − 1e-9); adding a constant to every channel leaves the
    derivatives and coordinates unchanged and the colour covariances too, so C does not change."""
    C = covariance_descriptor(img)
    assert np.array_equal(C, C.T)
    assert np.linalg.eigvalsh(C)[0] >= 1e-6 * (1 - 1e-6) - 1e-12 * np.abs(C).max()
    assert np.allclose(covariance_descriptor(img + shift), C, rtol=1e-9, atol=1e-9)


def test_stack_of_uint8_images_divides_by_255():
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, size=(3, 28, 28, 3), dtype=np.uint8)
    D = covariance_descriptors(imgs)
    assert D.shape == (3, 9, 9)
    assert np.allclose(D[1], covariance_descriptor(imgs[1] / 255.0), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: covariance_descriptor(np.zeros((5, 5))), r"'rgb9' needs an \(H, W, 3\)"),
        (lambda: covariance_descriptor(np.zeros((2, 5, 3))), "at least 3x3"),
        (lambda: covariance_descriptor(np.full((4, 4, 3), np.nan)), "48 non-finite"),
        (lambda: covariance_descriptor(np.zeros((4, 4, 3)), eps=0.0), "eps must be finite and > 0"),
        (lambda: covariance_descriptor(np.zeros((4, 4, 3)), features="rgb5"), "unknown feature set"),
        (lambda: covariance_descriptors(np.zeros((4, 4))), "must be a stack"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
