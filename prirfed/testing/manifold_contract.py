"""Property-based contract every manifold of prirfed satisfies.

Use it by subclassing in a pytest module::

    from prirfed.testing.manifold_contract import ManifoldContract

    class TestMySphere(ManifoldContract):
        manifold = MySphere(3)

and override the ``draw_*`` strategies to bound conditioning (SPD), radius (Lorentz), or the
tolerance ``tol(x)`` where errors scale with the point. Every test states the identity it checks.
Tests draw a seed with Hypothesis and generate points from ``numpy.random.default_rng(seed)``,
so a failure is reproducible from the printed seed.
"""

from __future__ import annotations

import contextlib
import math
import sys
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from prirfed.reference.manifolds.base import zeta

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _maxabs(a) -> float:
    a = np.asarray(a, dtype=np.float64)
    return float(np.max(np.abs(a))) if a.size else 0.0


class ManifoldContract:
    """Mixin with the geometric identities of the Manifold contract.

    Set ``manifold``. Override as needed:

    - ``draw_point(data)``: a point (default: ``manifold.random_point``).
    - ``draw_tangent(data, x)``: any tangent vector (default: ``random_tangent`` scaled by a
      drawn factor in [1e-3, 3]).
    - ``small_radius(x)``: tangent vectors of norm below this stay inside the injectivity radius
      and inside a convex ball for triangles (default 1.0).
    - ``tol(x)``: absolute tolerance for unit-scale quantities at ``x`` (default 1e-9).
    - ``off_manifold(x)``: an array of the right shape that is *not* a point (default None: skip).
    """

    manifold = None

    # ---------------------------------------------------------------- strategies
    def rng(self, data) -> np.random.Generator:
        return np.random.default_rng(data.draw(seeds, label="seed"))

    def draw_point(self, data):
        return self.manifold.random_point(self.rng(data))

    def draw_tangent(self, data, x):
        v = self.manifold.random_tangent(x, self.rng(data))
        scale = data.draw(st.floats(1e-3, 3.0), label="tangent scale")
        return scale * v

    def small_radius(self, x) -> float:
        return 1.0

    def draw_small_tangent(self, data, x):
        v = self.manifold.random_tangent(x, self.rng(data))
        n = self.manifold.norm(x, v)
        assume(n > 1e-12)
        r = data.draw(st.floats(1e-6, 0.9), label="fraction of small radius") * self.small_radius(x)
        return (r / n) * v

    def tol(self, x) -> float:
        return 1e-9

    def off_manifold(self, x):
        return None

    # ---------------------------------------------------------------- helpers
    def assert_close(self, a, b, tol, what):
        err = _maxabs(np.asarray(a) - np.asarray(b))
        assert err <= tol, f"{what}: max abs difference {err:.3e} exceeds tolerance {tol:.3e}"

    # ---------------------------------------------------------------- points and tangents
    @given(data=st.data())
    def test_points_and_tangents_stay_on_manifold(self, data):
        """random_point, exp, retr, proj, random_tangent produce valid points/tangents."""
        M = self.manifold
        x = self.draw_point(data)
        M.check_point(x)
        v = self.draw_tangent(data, x)
        M.check_tangent(x, v)
        M.check_point(M.exp(x, v))
        M.check_point(M.retr(x, self.draw_small_tangent(data, x)))
        w = self.rng(data).standard_normal(M.ambient_shape)
        M.check_tangent(x, M.proj(x, w))

    @given(data=st.data())
    def test_proj_is_idempotent_and_fixes_tangents(self, data):
        """proj(x, proj(x, w)) = proj(x, w) and proj(x, v) = v for v in T_x."""
        M = self.manifold
        x = self.draw_point(data)
        w = self.rng(data).standard_normal(M.ambient_shape)
        p = M.proj(x, w)
        self.assert_close(M.proj(x, p), p, self.tol(x) * (1 + _maxabs(p)), "proj idempotent")
        v = self.draw_tangent(data, x)
        self.assert_close(M.proj(x, v), v, self.tol(x) * (1 + _maxabs(v)), "proj fixes tangents")

    @given(data=st.data())
    def test_inner_is_symmetric_bilinear_positive(self, data):
        """<u, v>_x = <v, u>_x, linear in u, <u, u>_x > 0 for u != 0, norm = sqrt(inner)."""
        M = self.manifold
        x = self.draw_point(data)
        u, v, w = (self.draw_tangent(data, x) for _ in range(3))
        a = data.draw(st.floats(-3, 3), label="a")
        scale = (1 + M.norm(x, u)) * (1 + M.norm(x, v)) * (1 + M.norm(x, w))
        assert abs(M.inner(x, u, v) - M.inner(x, v, u)) <= self.tol(x) * scale
        lhs = M.inner(x, a * u + w, v)
        rhs = a * M.inner(x, u, v) + M.inner(x, w, v)
        assert abs(lhs - rhs) <= self.tol(x) * scale * (1 + abs(a))
        assert M.inner(x, u, u) > 0
        assert math.isclose(M.norm(x, u), math.sqrt(M.inner(x, u, u)), rel_tol=1e-12)

    # ---------------------------------------------------------------- exp / log / dist
    @given(data=st.data())
    def test_exp_zero_and_log_self(self, data):
        """Exp_x(0) = x, Log_x(x) = 0, dist(x, x) = 0."""
        M = self.manifold
        x = self.draw_point(data)
        zero = np.zeros(M.ambient_shape)
        self.assert_close(M.exp(x, zero), x, self.tol(x) * (1 + _maxabs(x)), "Exp_x(0) = x")
        self.assert_close(M.log(x, x), zero, self.tol(x) * (1 + _maxabs(x)), "Log_x(x) = 0")
        assert M.dist(x, x) <= self.tol(x), f"dist(x, x) = {M.dist(x, x):.3e}"

    @given(data=st.data())
    def test_exp_of_log_is_identity(self, data):
        """Exp_x(Log_x(y)) = y for y in the domain of Log_x."""
        M = self.manifold
        x = self.draw_point(data)
        y = M.exp(x, self.draw_small_tangent(data, x)) if data.draw(st.booleans(), label="near") else self.draw_point(data)
        try:
            v = M.log(x, y)
        except ValueError:
            assume(False)  # no unique minimizing geodesic (checked by the manifold's own tests)
        self.assert_close(M.exp(x, v), y, self.tol(x) * (1 + _maxabs(y)) * (1 + M.norm(x, v)), "Exp_x(Log_x(y)) = y")

    @given(data=st.data())
    def test_log_of_exp_is_identity_inside_injectivity_radius(self, data):
        """Log_x(Exp_x(v)) = v for ||v||_x below the injectivity radius."""
        M = self.manifold
        x = self.draw_point(data)
        v = self.draw_small_tangent(data, x)
        self.assert_close(M.log(x, M.exp(x, v)), v, self.tol(x) * (1 + _maxabs(v)), "Log_x(Exp_x(v)) = v")

    @given(data=st.data())
    def test_dist_of_exp_equals_norm(self, data):
        """dist(x, Exp_x(v)) = ||v||_x inside the injectivity radius."""
        M = self.manifold
        x = self.draw_point(data)
        v = self.draw_small_tangent(data, x)
        n = M.norm(x, v)
        d = M.dist(x, M.exp(x, v))
        assert abs(d - n) <= self.tol(x) * (1 + n), f"dist {d!r} != norm {n!r}"

    @given(data=st.data())
    def test_dist_is_a_metric(self, data):
        """dist symmetric, positive off the diagonal, and satisfies the triangle inequality."""
        M = self.manifold
        x, y, z = (self.draw_point(data) for _ in range(3))
        dxy, dyx = M.dist(x, y), M.dist(y, x)
        assert abs(dxy - dyx) <= self.tol(x) * (1 + dxy)
        if _maxabs(np.asarray(x) - np.asarray(y)) > 1e-6:
            assert dxy > 0
        assert M.dist(x, z) <= dxy + M.dist(y, z) + self.tol(x) * (1 + dxy)

    @given(data=st.data())
    def test_dist_equals_norm_of_log(self, data):
        """dist(x, y) = ||Log_x(y)||_x."""
        M = self.manifold
        x = self.draw_point(data)
        y = M.exp(x, self.draw_small_tangent(data, x))
        d = M.dist(x, y)
        assert abs(d - M.norm(x, M.log(x, y))) <= self.tol(x) * (1 + d)

    # ---------------------------------------------------------------- transport
    def _transport_pair(self, data):
        M = self.manifold
        x = self.draw_point(data)
        y = M.exp(x, self.draw_small_tangent(data, x))
        return M, x, y

    @given(data=st.data())
    def test_transp_is_linear_isometric_into_Ty(self, data):
        """Gamma_x^y is linear, preserves <.,.> (parallel transport), and lands in T_y."""
        M, x, y = self._transport_pair(data)
        u, v = self.draw_tangent(data, x), self.draw_tangent(data, x)
        a = data.draw(st.floats(-3, 3), label="a")
        Tu, Tv = M.transp(x, y, u), M.transp(x, y, v)
        M.check_tangent(y, Tu)
        scale = (1 + _maxabs(u)) * (1 + _maxabs(v)) * (1 + abs(a))
        self.assert_close(M.transp(x, y, a * u + v), a * Tu + Tv, self.tol(x) * scale, "transp linear")
        if M.exact_transport:
            nu, nv = M.norm(x, u), M.norm(x, v)
            assert abs(M.inner(y, Tu, Tv) - M.inner(x, u, v)) <= self.tol(x) * (1 + nu) * (1 + nv) * 10

    @given(data=st.data())
    def test_transp_maps_log_to_minus_log_and_round_trips(self, data):
        """Gamma_x^y Log_x(y) = -Log_y(x) and Gamma_y^x Gamma_x^y v = v (parallel transport only)."""
        M, x, y = self._transport_pair(data)
        if not M.exact_transport:
            return  # a vector transport satisfies neither identity in general (see the manifold's note)
        lxy = M.log(x, y)
        self.assert_close(M.transp(x, y, lxy), -M.log(y, x), self.tol(x) * (1 + _maxabs(lxy)) * 10, "Gamma Log_x y = -Log_y x")
        v = self.draw_tangent(data, x)
        self.assert_close(M.transp(y, x, M.transp(x, y, v)), v, self.tol(x) * (1 + _maxabs(v)) * 10, "transport round trip")

    # ---------------------------------------------------------------- basis
    @given(data=st.data())
    def test_tangent_basis_is_orthonormal_and_spans(self, data):
        """tangent_basis(x) has dim elements, Gram matrix I in the metric, and spans T_x."""
        M = self.manifold
        x = self.draw_point(data)
        E = M.tangent_basis(x)
        assert E.shape == (M.dim, *M.ambient_shape)
        G = np.array([[M.inner(x, E[i], E[j]) for j in range(M.dim)] for i in range(M.dim)])
        self.assert_close(G, np.eye(M.dim), self.tol(x) * 10, "Gram matrix of tangent_basis")
        v = self.draw_tangent(data, x)
        coords = np.array([M.inner(x, v, E[k]) for k in range(M.dim)])
        self.assert_close(np.tensordot(coords, E, axes=1), v, self.tol(x) * (1 + _maxabs(v)) * 10, "basis spans T_x")

    # ---------------------------------------------------------------- gradients
    def smooth_function(self, rng):
        """f(y) = <A, y> + 0.5 <y, B * y> (B elementwise, symmetric in the ambient space); returns f, egrad."""
        shape = self.manifold.ambient_shape
        A = rng.standard_normal(shape)
        B = rng.standard_normal(shape)

        def f(y):
            return float(np.sum(A * y) + 0.5 * np.sum(B * y * y))

        def egrad(y):
            return A + B * y

        return f, egrad

    @given(data=st.data())
    def test_egrad2rgrad_matches_finite_difference_along_exp(self, data):
        """d/dt f(Exp_x(t v)) at t = 0 equals <egrad2rgrad(x, egrad f(x)), v>_x (central difference)."""
        M = self.manifold
        x = self.draw_point(data)
        f, egrad = self.smooth_function(self.rng(data))
        v = self.draw_tangent(data, x)
        nv = M.norm(x, v)
        assume(nv > 1e-8)
        v = v / nv
        h = 1e-5
        fd = (f(M.exp(x, h * v)) - f(M.exp(x, -h * v))) / (2 * h)
        g = M.egrad2rgrad(x, egrad(x))
        M.check_tangent(x, g)
        an = M.inner(x, g, v)
        scale = 1 + abs(an) + abs(f(x))
        assert abs(fd - an) <= 1e-5 * scale, f"finite difference {fd!r} vs <grad, v> {an!r}"

    # ---------------------------------------------------------------- curvature
    def triangle_radius(self, x) -> float:
        return 0.3 * self.small_radius(x)

    @given(data=st.data())
    def test_trigonometric_distance_bound(self, data):
        """Lemma A.2 of Huang et al. (2024) / Lemma 1 of Han et al. (2024): a^2 <= zeta(kappa_min, c) b^2 + c^2 - 2 b c cos(A)."""
        M = self.manifold
        x = self.draw_point(data)
        r = self.triangle_radius(x)
        ys = []
        for _ in range(2):
            v = M.random_tangent(x, self.rng(data))
            n = M.norm(x, v)
            assume(n > 1e-9)
            ys.append(M.exp(x, data.draw(st.floats(0.05, 1.0)) * r / n * v))
        y, z = ys
        lxy, lxz = M.log(x, y), M.log(x, z)
        b, c, a = M.dist(x, y), M.dist(x, z), M.dist(y, z)
        cosA = M.inner(x, lxy, lxz) / (b * c)
        kmin = M.curvature_bounds[0]
        rhs = zeta(kmin, c) * b * b + c * c - 2 * b * c * cosA
        assert a * a <= rhs + self.tol(x) * (1 + rhs) * 10, f"a^2 = {a*a!r} > bound {rhs!r}"

    # ---------------------------------------------------------------- retraction
    @given(data=st.data())
    def test_retraction_round_trip_and_first_order(self, data):
        """inv_retr(x, retr(x, v)) = v; retr(x, 0) = x; retr agrees with exp to first order."""
        M = self.manifold
        x = self.draw_point(data)
        v = self.draw_small_tangent(data, x)
        self.assert_close(M.inv_retr(x, M.retr(x, v)), v, self.tol(x) * (1 + _maxabs(v)) * 10, "inv_retr(retr(v)) = v")
        self.assert_close(M.retr(x, np.zeros(M.ambient_shape)), x, self.tol(x) * (1 + _maxabs(x)), "retr(x, 0) = x")
        h = 1e-6
        u = v / max(M.norm(x, v), 1e-300)
        d = (np.asarray(M.retr(x, h * u)) - np.asarray(x)) / h
        self.assert_close(d, u, 1e-4 * (1 + _maxabs(u)) * (1 + _maxabs(x)), "d/dt retr(x, t u) at 0 = u")

    # ---------------------------------------------------------------- bad input
    @given(data=st.data())
    def test_bad_input_raises_value_error_naming_the_method(self, data):
        """NaN, wrong shape and off-manifold points are refused with a ValueError naming the method."""
        import pytest

        M = self.manifold
        x = np.array(self.draw_point(data), dtype=float)
        v = self.draw_tangent(data, x)
        bad = x.copy()
        bad.flat[0] = np.nan
        with pytest.raises(ValueError, match=rf"{M.name}\.exp"):
            M.exp(bad, v)
        with pytest.raises(ValueError, match=rf"{M.name}\.dist"):
            M.dist(x, np.zeros(tuple(s + 1 for s in M.ambient_shape)))
        with pytest.raises(ValueError, match=rf"{M.name}\.log"):
            M.log(x, np.full(M.ambient_shape, np.inf))
        off = self.off_manifold(x)
        if off is not None:
            with pytest.raises(ValueError, match=rf"{M.name}\.check_point"):
                M.check_point(off)
            with pytest.raises(ValueError, match=rf"{M.name}\.exp"):
                M.exp(off, v)


class VerifiedEquivalence:
    """Mixin: the verified twin equals the reference on drawn inputs (rtol about 1e-12).

    Set ``reference`` and ``verified`` (instances of the twin classes with the same arguments).
    Override ``draw_point``/``draw_small_tangent``/``scale(x)`` as in :class:`ManifoldContract`.
    Set ``batched = False`` when the twin has no batched kernels (``exp_batch``, ``log_batch``,
    ``dist_batch``, ``transp_batch``): their test is then skipped with that reason.
    """

    reference = None
    verified = None
    rtol = 1e-12
    batched = True

    def rng(self, data):
        return np.random.default_rng(data.draw(seeds, label="seed"))

    def draw_point(self, data):
        return self.reference.random_point(self.rng(data))

    def small_radius(self, x) -> float:
        return 1.0

    def draw_small_tangent(self, data, x):
        R = self.reference
        v = R.random_tangent(x, self.rng(data))
        n = R.norm(x, v)
        assume(n > 1e-12)
        return data.draw(st.floats(1e-6, 0.9)) * self.small_radius(x) / n * v

    def scale(self, x) -> float:
        """Error amplification at x (1 for well-conditioned manifolds; cond(X) for SPD, x0^2 for Lorentz)."""
        return 1.0

    def same(self, a, b, x, what):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        assert a.shape == b.shape, f"{what}: shapes {a.shape} vs {b.shape}"
        tol = self.rtol * self.scale(x) * (1.0 + max(_maxabs(a), _maxabs(b)))
        err = _maxabs(a - b)
        assert err <= tol, f"{what}: verified and reference differ by {err:.3e} (tol {tol:.3e})"

    @given(data=st.data())
    def test_methods_equal_reference(self, data):
        R, V = self.reference, self.verified
        x = self.draw_point(data)
        v = self.draw_small_tangent(data, x)
        u = self.draw_small_tangent(data, x)
        y = R.exp(x, u)
        w = self.rng(data).standard_normal(R.ambient_shape)
        self.same(V.inner(x, u, v), R.inner(x, u, v), x, "inner")
        self.same(V.norm(x, v), R.norm(x, v), x, "norm")
        self.same(V.proj(x, w), R.proj(x, w), x, "proj")
        self.same(V.egrad2rgrad(x, w), R.egrad2rgrad(x, w), x, "egrad2rgrad")
        self.same(V.exp(x, v), R.exp(x, v), x, "exp")
        self.same(V.log(x, y), R.log(x, y), x, "log")
        self.same(V.dist(x, y), R.dist(x, y), x, "dist")
        self.same(V.transp(x, y, v), R.transp(x, y, v), x, "transp")
        self.same(V.retr(x, v), R.retr(x, v), x, "retr")
        self.same(V.inv_retr(x, V.retr(x, v)), R.inv_retr(x, R.retr(x, v)), x, "inv_retr")
        self.same(V.tangent_basis(x), R.tangent_basis(x), x, "tangent_basis")
        seed = data.draw(seeds)
        self.same(V.random_point(np.random.default_rng(seed)), R.random_point(np.random.default_rng(seed)), x, "random_point")
        self.same(V.random_tangent(x, np.random.default_rng(seed)), R.random_tangent(x, np.random.default_rng(seed)), x, "random_tangent")

    #: Methods a verified twin may hand to its reference (``super()``) when a kernel refuses an input,
    #: so that the refusal carries the reference's message.
    fallback_methods = ("exp", "log", "dist", "transp", "retr", "inv_retr", "retr_polar", "_inv_polar",
                        "_log_solve", "inv_retr_qr")

    @given(data=st.data())
    def test_in_domain_inputs_never_fall_back_to_the_reference(self, data):
        """On inputs well inside the domain the verified twin answers with its own kernels: each
        reference method that a verified method overrides (and may call through ``super()`` when a
        kernel refuses) is replaced by one that fails the test when called. Without this, a kernel
        broken so that it always refuses (say, a point check that always fails) hands every call to
        the reference, and the equality tests above compare the reference with itself."""
        R, V = self.reference, self.verified
        vcls, shared = type(V), [c for c in type(V).__mro__[1:] if c is not object and isinstance(R, c)]
        x = self.draw_point(data)
        v = self.draw_small_tangent(data, x)
        u = self.draw_small_tangent(data, x)
        y = R.exp(x, u)

        def forbidden(name):
            def call(*args, **kwargs):
                raise AssertionError(f"{vcls.__name__}.{name} fell back to the reference on an input inside the domain")
            return call

        with contextlib.ExitStack() as stack:
            for cls in shared:
                for name in self.fallback_methods:
                    if name in cls.__dict__ and getattr(vcls, name) is not cls.__dict__[name]:
                        stack.enter_context(mock.patch.object(cls, name, forbidden(name)))
            V.exp(x, v)
            V.log(x, y)
            V.dist(x, y)
            V.transp(x, y, v)
            V.inv_retr(x, V.retr(x, v))
            for retr, inv in (("retr_polar", "inv_retr_polar"), ("retr_qr", "inv_retr_qr")):
                if hasattr(V, retr) and hasattr(V, inv):
                    getattr(V, inv)(x, getattr(V, retr)(x, v))

    @given(data=st.data(), n=st.integers(1, 4))
    def test_in_domain_batches_are_screened_and_computed_by_the_batched_kernels(self, data, n):
        """The batched methods of prirfed's verified manifolds (:class:`prirfed.verified.manifolds.checks.BatchRows`)
        check a row by a single call only when their vectorised screens cannot clear it, and compute
        the stack by single calls only when the batched kernel refuses. Rows well inside the domain
        must take neither path (the single-row check is made to fail): otherwise a screen that never
        cleared anything, or a batched kernel that always refused, would pass the equality test above
        with the single calls standing in. Twins without that machinery are not concerned."""
        if not self.batched:
            pytest.skip("batched = False: this twin has no batched kernels")
        R, V = self.reference, self.verified
        if not hasattr(type(V), "_row_error"):
            pytest.skip("the twin's batched methods have no single-row fallback")
        X = [self.draw_point(data) for _ in range(n)]
        Vs = [self.draw_small_tangent(data, x) for x in X]
        Ys = [R.exp(x, self.draw_small_tangent(data, x)) for x in X]
        shape = (n, *R.ambient_shape)
        Xa, Va, Ya = (np.array(a, dtype=float).reshape(shape) for a in (X, Vs, Ys))

        def single_row(*args, **kwargs):
            raise AssertionError(f"{type(V).__name__}: a batched call went row by row on rows inside the domain")

        with mock.patch.object(type(V), "_row_error", single_row):
            V.exp_batch(Xa, Va)
            V.log_batch(Xa, Ya)
            V.dist_batch(Xa, Ya)
            V.transp_batch(Xa, Ya, Va)

    @given(data=st.data(), n=st.integers(0, 5))
    def test_batched_kernels_equal_loop_of_single_calls(self, data, n):
        if not self.batched:
            pytest.skip("batched = False: this twin has no batched kernels")
        R, V = self.reference, self.verified
        X = [self.draw_point(data) for _ in range(n)]
        Vs = [self.draw_small_tangent(data, x) for x in X]
        Ys = [R.exp(x, self.draw_small_tangent(data, x)) for x in X]
        shape = (n, *R.ambient_shape)
        Xa, Va, Ya = (np.array(a, dtype=float).reshape(shape) for a in (X, Vs, Ys))
        for i in range(n):
            x = X[i]
            self.same(V.exp_batch(Xa, Va)[i], V.exp(x, Vs[i]), x, "exp_batch")
            self.same(V.log_batch(Xa, Ya)[i], V.log(x, Ys[i]), x, "log_batch")
            self.same(V.dist_batch(Xa, Ya)[i], V.dist(x, Ys[i]), x, "dist_batch")
            self.same(V.transp_batch(Xa, Ya, Va)[i], V.transp(x, Ys[i], Vs[i]), x, "transp_batch")
        assert V.exp_batch(Xa, Va).shape == shape
        assert V.dist_batch(Xa, Ya).shape == (n,)


def contract_case(name: str, manifold, *mixins) -> type:
    """A pytest class that runs :class:`ManifoldContract` on ``manifold`` (a contract declaration in one line).

    ``TestSphereContract = contract_case("TestSphereContract", Sphere(4), SphereDraws)``.

    Parameters
    ----------
    name : str
        Name of the class (pytest collects classes named ``Test*``).
    manifold : Manifold
        The manifold under test.
    *mixins : type
        Classes overriding the draws (e.g. ``small_radius``), placed before the contract.

    Returns
    -------
    type
        The test class, defined in the caller's module.
    """
    module = sys._getframe(1).f_globals.get("__name__", __name__)
    return type(name, (*mixins, ManifoldContract), {"manifold": manifold, "__module__": module})
