"""WordNet closure loader, Laplacian eigenmap, Lorentz embedding by RSGD and the HSP data of 000 §6.3."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.data import wordnet as wn
from prirfed.reference.manifolds import lorentz_rows as lr
from prirfed.reference.data.partition import partition_equal
from prirfed.reference.data.real import shared_data_dir
from prirfed.reference.manifolds.lorentz import Lorentz


def _write(tmp_path, lines, name="c.tsv"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def _tree_closure(tmp_path, branching=3, depth=3):
    """Transitive closure of a complete tree (root 'r'), written as child<TAB>ancestor lines."""
    lines, frontier = [], [("r", [])]
    for level in range(depth):
        nxt = []
        for node, anc in frontier:
            for k in range(branching):
                child = f"{node}{k}"
                for a in [node, *anc]:
                    lines.append(f"{child}\t{a}")
                nxt.append((child, [node, *anc]))
        frontier = nxt
    return wn.load_mammal_closure(_write(tmp_path, lines), root="r")


def _shared_closure(**kw):
    root = shared_data_dir()
    if root is None or not (root / wn.MAMMAL_CLOSURE).is_file():
        pytest.skip("shared data folder ../shared/data (or $PRIRFED_DATA) with the WordNet closure is absent")
    return wn.load_mammal_closure(root / wn.MAMMAL_CLOSURE, **kw)


# ------------------------------------------------------------------------------- loader


def test_loader_ids_and_stray_edge(tmp_path):
    p = _write(tmp_path, ["b\tmammal.n.01", "c\tb", "c\tmammal.n.01", "b\tx"])
    c = wn.load_mammal_closure(p)
    assert c.names == ("b", "c", "mammal.n.01")  # 'x' is not a descendant of the root: dropped with b -> x
    assert sorted(map(tuple, c.edges.tolist())) == [(0, 2), (1, 0), (1, 2)]
    c = wn.load_mammal_closure(p, descendants_only=False)
    assert c.n == 4 and c.edges.shape == (4, 2)


def test_shared_closure_counts():
    """Known answers: 000 §6.3 quotes 1180 nodes and 6540 edges; the file has one stray edge more
    (packhorse -> pack_animal, data README): 1181 nodes, 6541 edges."""
    c = _shared_closure()
    assert (c.n, c.edges.shape[0]) == (1180, 6540)
    assert "pack_animal.n.01" not in c.index
    raw = _shared_closure(descendants_only=False)
    assert (raw.n, raw.edges.shape[0]) == (1181, 6541)
    # every node but the root has the root as an ancestor
    root = c.index["mammal.n.01"]
    assert np.sum(c.edges[:, 1] == root) == 1179


@pytest.mark.parametrize(
    "lines, match",
    [
        (["a\tb\tc"], "line 1 is not 'child<TAB>ancestor'"),
        (["a\tmammal.n.01", "a\ta"], "line 2 is a self-loop"),
        (["a\tmammal.n.01", "a\tmammal.n.01"], "line 2 repeats the edge"),
        (["a\tb"], "no edge points to the root"),
    ],
)
def test_loader_bad_files(tmp_path, lines, match):
    with pytest.raises(ValueError, match=match):
        wn.load_mammal_closure(_write(tmp_path, lines))


# ------------------------------------------------------------------------------- Laplacian eigenmap


@pytest.mark.parametrize("n", [5, 8, 13])
def test_eigenmap_cycle_known_eigenvalues(n):
    """Cycle C_n: D = 2I, so L f = λ D f has λ_k = 1 − cos(2πk/n) (closed form)."""
    W = np.zeros((n, n))
    for i in range(n):
        W[i, (i + 1) % n] = W[(i + 1) % n, i] = 1
    r = min(3, n - 1)
    F, lam = wn.laplacian_eigenmap(W, r)
    expected = np.sort(1 - np.cos(2 * np.pi * np.arange(1, n) / n))[:r]
    assert np.allclose(lam, expected, atol=1e-12)


def test_eigenmap_star_known_eigenvalues():
    """Star K_{1,m}: the normalised Laplacian has eigenvalues 0, 1 (m−1 times), 2."""
    m = 6
    W = np.zeros((m + 1, m + 1))
    W[0, 1:] = W[1:, 0] = 1
    _, lam = wn.laplacian_eigenmap(W, m)
    assert np.allclose(lam, [1] * (m - 1) + [2], atol=1e-12)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 25))
def test_eigenmap_solves_the_generalised_problem(seed, n):
    """Residual L f − λ D f = 0, fᵀ D f = 1, fᵀ D 1 = 0 (orthogonal to the constant), on random connected graphs."""
    rng = np.random.default_rng(seed)
    W = np.triu((rng.random((n, n)) < 0.4).astype(float), 1)
    for i in range(n - 1):  # a path makes it connected
        W[i, i + 1] = 1
    W = W + W.T
    r = 2
    F, lam = wn.laplacian_eigenmap(W, r)
    D = np.diag(W.sum(1))
    L = D - W
    assert np.allclose(L @ F, D @ F * lam, atol=1e-10)
    assert np.allclose(F.T @ D @ F, np.eye(r), atol=1e-10)
    assert np.allclose(F.T @ D @ np.ones(n), 0, atol=1e-10)


def test_eigenmap_lanczos_branch_matches_dense_generalised_eigh():
    """n = 150 takes the ARPACK branch; oracle: scipy.linalg.eigh(L, D) on the generalised problem directly."""
    import scipy.linalg

    rng = np.random.default_rng(3)
    n, r = 150, 3
    W = np.triu((rng.random((n, n)) < 0.05).astype(float), 1)
    W[np.arange(n - 1), np.arange(1, n)] = 1
    W = W + W.T
    F, lam = wn.laplacian_eigenmap(W, r)
    D = np.diag(W.sum(1))
    lam_ref, F_ref = scipy.linalg.eigh(D - W, D)
    assert np.allclose(lam, lam_ref[1 : r + 1], atol=1e-12)
    for k in range(r):  # same vector up to sign (eigenvalues are simple here)
        ref = F_ref[:, k + 1] * np.sign(F_ref[np.argmax(np.abs(F_ref[:, k + 1])), k + 1])
        assert np.allclose(F[:, k], ref, atol=1e-9)


def test_eigenmap_bad_input():
    with pytest.raises(ValueError, match="not connected"):
        wn.laplacian_eigenmap(np.kron(np.eye(2), np.ones((2, 2)) - np.eye(2)), 1)
    with pytest.raises(ValueError, match="isolated"):
        wn.laplacian_eigenmap(np.zeros((3, 3)), 1)
    with pytest.raises(ValueError, match=r"not symmetric \(max \|W - W\^T\| = 1.000e\+00\)"):
        wn.laplacian_eigenmap(np.array([[0, 1.0], [0, 0]]), 1)
    with pytest.raises(ValueError, match="r must be an integer"):
        wn.laplacian_eigenmap(np.ones((3, 3)) - np.eye(3), 3)


# ------------------------------------------------------------------------------- batched Lorentz formulas


@given(seed=st.integers(0, 2**32 - 1), scale=st.floats(1e-9, 3.0))
def test_batched_formulas_match_the_Lorentz_class(seed, scale):
    """dist_rows, grad_dist_rows (= −Log_u v / d) and exp_rows (prirfed.reference.manifolds.lorentz_rows)
    against prirfed.reference.manifolds.Lorentz."""
    rng = np.random.default_rng(seed)
    M = Lorentz(2)
    x = M.random_point(rng)
    y = M.exp(x, scale * M.random_tangent(x, rng))
    v = M.random_tangent(x, rng)
    d = lr.dist_rows(x[None], y[None])[0]
    assert d == pytest.approx(M.dist(x, y), rel=1e-9, abs=1e-15)
    g = lr.grad_dist_rows(x[None], y[None], np.array([d]))[0]
    tol = 1e-12 * x[0] ** 2 * max(1.0, float(np.max(np.abs(y))))
    assert np.allclose(g, -M.log(x, y) / M.dist(x, y), atol=tol)
    assert np.allclose(lr.exp_rows(x[None], v[None])[0], M.exp(x, v), rtol=1e-10, atol=1e-10 * x[0] ** 2)


def test_projection_to_ball_known_answer():
    """A point at distance ρ = 3 along e_1 projected on B(o, 1) is (cosh 1, sinh 1, 0)."""
    y = np.array([[np.cosh(3.0), np.sinh(3.0), 0.0], [np.cosh(0.5), 0.0, np.sinh(0.5)]])
    out = wn._project_to_ball(y, 1.0)
    assert np.allclose(out[0], [np.cosh(1.0), np.sinh(1.0), 0.0], rtol=1e-14, atol=1e-15) and np.array_equal(out[1], y[1])


# ------------------------------------------------------------------------------- embedding and HSP data


def _random_baseline(closure):
    """Mean rank of a uniformly random embedding is ≈ 1 + (#non-neighbours of u)/2, averaged over edges."""
    A = wn.adjacency(closure, self_loops=True) > 0
    non = closure.n - A.sum(1)
    return float(np.mean(1 + non[closure.edges[:, 0]] / 2))


def test_embedding_of_a_tree_beats_random(tmp_path):
    """Complete 3-ary tree of depth 3 (40 nodes): after training, mean rank is below a quarter of the random
    baseline and ancestors are closer to the origin (smaller y₀) than their descendants on ≥ 90% of edges.
    Seeded; the margins are wide (observed: mean rank ≈ 1–2 vs baseline ≈ 17)."""
    c = _tree_closure(tmp_path)
    Y = wn.train_lorentz_embedding(c, np.random.default_rng(0), epochs=40, batch_size=16, burnin_epochs=5)
    M = Lorentz(2)
    for y in Y:
        M.check_point(y)
    assert wn.mean_rank(c, Y) < 0.25 * _random_baseline(c)
    assert np.mean(Y[c.edges[:, 1], 0] < Y[c.edges[:, 0], 0]) >= 0.9


def test_mammal_embedding_beats_random():
    """Seeded 10-epoch run on the 1180-node closure (≈ 2 s): mean rank below 15% of the random baseline
    (≈ 560; observed ≈ 38) and ancestors nearer the origin on ≥ 95% of closure edges (observed 99%)."""
    c = _shared_closure()
    Y = wn.train_lorentz_embedding(c, np.random.default_rng(0))
    assert np.all(np.isfinite(Y))
    assert np.allclose(lr.inner_rows(Y, Y), -1.0, atol=1e-12 * Y[:, 0].max() ** 2)
    assert wn.mean_rank(c, Y) < 0.15 * _random_baseline(c)
    assert np.mean(Y[c.edges[:, 1], 0] < Y[c.edges[:, 0], 0]) >= 0.95


def test_hsp_dataset_of_the_paper():
    """000 §6.3: features in R^3, targets on H^2, 'primate' held out, 1179 = 9 × 131 training pairs."""
    c = _shared_closure()
    data = wn.hsp_dataset(c, np.random.default_rng(1), epochs=2, burnin_epochs=1)
    assert data.w.shape == (1180, 3) and data.y.shape == (1180, 3)
    assert data.names[data.test] == "primate.n.02"
    assert data.train.size == 1179 and data.test not in data.train
    parts = partition_equal(data.train.size, 9, np.random.default_rng(2))
    assert {p.size for p in parts} == {131}
    W = wn.adjacency(c)
    D = W.sum(1)
    assert np.allclose((data.w * D[:, None]).T @ data.w, np.eye(3), atol=1e-9)
    L = np.diag(D) - W
    assert np.allclose(L @ data.w, (D[:, None] * data.w) * data.eigenvalues, atol=1e-9)
    assert np.all(np.diff(data.eigenvalues) >= 0) and data.eigenvalues[0] > 0


def test_hsp_and_training_bad_input(tmp_path):
    c = _tree_closure(tmp_path, 2, 2)
    with pytest.raises(ValueError, match="test word 'primate.n.02' is not a node"):
        wn.hsp_dataset(c, np.random.default_rng(0))
    bad = np.zeros((c.n, 3))
    bad[:, 0] = 2.0
    with pytest.raises(ValueError, match="not on the hyperboloid"):
        wn.hsp_dataset(c, np.random.default_rng(0), test_name="r", embedding=bad)
    with pytest.raises(ValueError, match="lr must be finite and > 0"):
        wn.train_lorentz_embedding(c, np.random.default_rng(0), lr=-1.0)
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        wn.train_lorentz_embedding(c, 0)
    with pytest.raises(ValueError, match="max_radius"):
        wn.train_lorentz_embedding(c, np.random.default_rng(0), max_radius=0.0)
