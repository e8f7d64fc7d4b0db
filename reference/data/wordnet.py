"""WordNet mammal closure and the hyperbolic structured prediction (HSP) data of Huang et al. (2024) §6.3.

Pipeline (see proofs_notes/data_hsp.md):

1. :func:`load_mammal_closure` — the transitive closure of the WordNet noun hierarchy under
   ``mammal.n.01`` (``child<TAB>ancestor`` lines; Huang et al. (2024) §6.3: 1180 nodes, 6540 edges).
2. :func:`train_lorentz_embedding` — a 2-D hyperbolic embedding ``y_i ∈ H²`` of the closure,
   trained by Riemannian SGD on the loss of Nickel & Kiela (2017, eq. (6); 2018 in the Lorentz
   model) with negative sampling. Huang et al. (2024) uses the NK17 pretrained embedding; we train our own.
3. :func:`laplacian_eigenmap` — features ``w_i ∈ R^r`` (``r = 3``) of the closure graph by the
   Laplacian eigenmap of Belkin & Niyogi (2003): ``L f = λ D f``, the eigenvectors of the
   ``r`` smallest non-zero ``λ``.
4. :func:`hsp_dataset` — the pairs ``{(w_i, y_i)}`` and the split of Huang et al. (2024) §6.3 ("primate" is
   the test word, the remaining 1179 = 9 × 131 nodes train).

The Lorentz model is that of Huang et al. (2024) §6.3: ``⟨x, y⟩_L = xᵀy − 2 x₀y₀``, ``H^d = {⟨x, x⟩_L = −1, x₀ > 0}``.
Training needs the geometry on batches of thousands of pairs at once, so the few formulas it uses
are vectorised over rows in :mod:`prirfed.reference.manifolds.lorentz_rows` (``inner_rows``,
``dist_rows``, ``exp_rows``, ``grad_dist_rows``); they are the formulas of
:class:`prirfed.reference.manifolds.lorentz.Lorentz` (same stable forms) and the tests check them
against that class point by point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from prirfed.reference.manifolds.lorentz_rows import dist_rows, exp_rows, grad_dist_rows, inner_rows

__all__ = [
    "MAMMAL_CLOSURE",
    "CLOSURE_MAX_BYTES",
    "MammalClosure",
    "load_mammal_closure",
    "adjacency",
    "laplacian_eigenmap",
    "train_lorentz_embedding",
    "mean_rank",
    "HSPData",
    "hsp_dataset",
]

MAMMAL_CLOSURE = "wordnet/mammal_closure.tsv"


@dataclass(frozen=True)
class MammalClosure:
    """Nodes (synset names, sorted) and closure edges ``child → ancestor`` as index pairs ``(m, 2)``.

    Parameters
    ----------
    names : tuple of str
        Synset names, sorted; a node's id is its position.
    edges : numpy.ndarray
        ``(m, 2)`` index pairs ``(child, ancestor)``.
    index : dict
        Name to id.
    """

    names: tuple
    edges: np.ndarray
    index: dict = field(repr=False)

    @property
    def n(self) -> int:
        return len(self.names)


#: Cap on the bytes :func:`load_mammal_closure` reads (64 MiB; the mammal closure has 200 KB, the
#: whole WordNet noun closure about 30 MB). A larger file needs an explicit ``max_bytes``.
CLOSURE_MAX_BYTES = 64 << 20


def load_mammal_closure(path, *, root: str = "mammal.n.01", descendants_only: bool = True,
                        max_bytes: int = CLOSURE_MAX_BYTES) -> MammalClosure:
    """Read ``child<TAB>ancestor`` lines of a transitive closure; ids are positions in the sorted names.

    ``descendants_only=True`` keeps only ``root`` and the nodes with an edge to ``root`` (in a
    closure that is exactly the set of descendants of ``root``), and the edges among them. The
    shared file has one stray edge ``packhorse.n.01 → pack_animal.n.01`` (``pack_animal`` is not a
    mammal); dropping it gives the 1180 nodes and 6540 edges quoted in Huang et al. (2024) §6.3.
    ``descendants_only=False`` keeps the file as it is (1181 nodes, 6541 edges).

    Parameters
    ----------
    path : str or os.PathLike
        The closure file (UTF-8 text).
    root : str, optional
        The root synset (default ``"mammal.n.01"``).
    descendants_only : bool, optional
        Keep only the root's descendants (default ``True``).
    max_bytes : int, optional
        Cap on the file size (default :data:`CLOSURE_MAX_BYTES`; checked before reading, and the
        read itself stops there).

    Returns
    -------
    MammalClosure
        The nodes and edges.

    Raises
    ------
    ValueError
        Naming the file: if ``max_bytes`` is not a positive integer, the file does not exist or is
        larger than ``max_bytes``, is not UTF-8, has a malformed line (with its number), a self-loop,
        a repeated edge, no edges, or (with ``descendants_only``) no edge to ``root``.
    """
    where = "load_mammal_closure"
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) or max_bytes < 1:
        raise ValueError(f"{where}: max_bytes must be a positive integer (got {max_bytes!r})")
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{where}: no such file {str(path)!r}")
    name = path.name
    size = path.stat().st_size
    if size > max_bytes:
        raise ValueError(f"{where}: {name} has {size} bytes, more than the cap max_bytes = {max_bytes} "
                         "(pass a larger max_bytes to read it)")
    with open(path, "rb") as fh:
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:  # grew after the stat
        raise ValueError(f"{where}: {name} has more than the cap max_bytes = {max_bytes} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: {name} is not UTF-8 text ({exc})") from None
    pairs = []
    seen = set()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise ValueError(f"{where}: {name}: line {lineno} is not 'child<TAB>ancestor' ({line[:80]!r})")
        c, a = parts[0].strip(), parts[1].strip()
        if c == a:
            raise ValueError(f"{where}: {name}: line {lineno} is a self-loop ({c})")
        if (c, a) in seen:
            raise ValueError(f"{where}: {name}: line {lineno} repeats the edge {c} -> {a}")
        seen.add((c, a))
        pairs.append((c, a))
    if not pairs:
        raise ValueError(f"{where}: {name} has no edges")
    if descendants_only:
        keep = {root} | {c for c, a in pairs if a == root}
        if len(keep) == 1:
            raise ValueError(f"{where}: {name}: no edge points to the root {root!r}")
        pairs = [(c, a) for c, a in pairs if c in keep and a in keep]
    names = tuple(sorted({c for c, _ in pairs} | {a for _, a in pairs}))
    index = {s: i for i, s in enumerate(names)}
    edges = np.array([(index[c], index[a]) for c, a in pairs], dtype=np.int64)
    return MammalClosure(names=names, edges=edges, index=index)


def adjacency(closure: MammalClosure, *, self_loops: bool = False) -> np.ndarray:
    """Symmetric 0/1 adjacency ``W`` of the closure graph ("the adjacency matrix formed by the edges", Huang et al. (2024) §6.3).

    ``self_loops=True`` adds ``I`` as the authors' ``dp_hsp.py`` does (it changes ``D`` by ``I``
    and so the eigenmap; the paper does not mention it).

    Parameters
    ----------
    closure : MammalClosure
        The closure.
    self_loops : bool, optional
        Add the identity (default ``False``).

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric 0/1 matrix (plus ``I`` with ``self_loops``).
    """
    W = np.zeros((closure.n, closure.n))
    W[closure.edges[:, 0], closure.edges[:, 1]] = 1.0
    W[closure.edges[:, 1], closure.edges[:, 0]] = 1.0
    if self_loops:
        W += np.eye(closure.n)
    return W


def laplacian_eigenmap(W, r: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Laplacian eigenmap (Belkin & Niyogi 2003, §3 step 3): solve ``L f = λ D f``, ``L = D − W``.

    Computed through the symmetric normalised Laplacian ``N = I − D^{-1/2} W D^{-1/2}`` (same
    eigenvalues, ``f = D^{-1/2} g``). Returns ``F`` (n, r) whose columns are the generalised eigenvectors ``f_1, …, f_r`` of the
    ``r`` smallest eigenvalues after ``λ_0 = 0`` (the constant vector is left out), normalised
    ``fᵀ D f = 1``, each column's sign fixed so that its largest-magnitude entry is positive, and
    the eigenvalues ``λ_1 ≤ … ≤ λ_r``. The graph must be connected (``λ_1 > 0``).

    Parameters
    ----------
    W : array_like
        ``(n, n)`` symmetric non-negative weights of a connected graph without isolated nodes.
    r : int
        Number of eigenvectors, ``1 <= r <= n - 1``.

    Returns
    -------
    F : numpy.ndarray
        ``(n, r)`` eigenvectors.
    eigenvalues : numpy.ndarray
        :math:`\lambda_1 \le \dots \le \lambda_r`.

    Raises
    ------
    ValueError
        If ``W`` is not square, not symmetric, has negative weights or an isolated node, ``r`` is
        out of range, or the graph is not connected.
    """
    where = "laplacian_eigenmap"
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"{where}: W must be a square matrix (got shape {W.shape})")
    n = W.shape[0]
    if isinstance(r, (bool, np.bool_)) or not isinstance(r, (int, np.integer)) or not 1 <= r <= n - 1:
        raise ValueError(f"{where}: r must be an integer in [1, n-1] = [1, {n - 1}] (got {r!r})")
    asym = float(np.max(np.abs(W - W.T)))
    if asym > 0:
        raise ValueError(f"{where}: W is not symmetric (max |W - W^T| = {asym:.3e})")
    if np.any(W < 0):
        raise ValueError(f"{where}: W has negative weights (min {W.min():.3e})")
    deg = W.sum(axis=1)
    if np.any(deg <= 0):
        raise ValueError(f"{where}: {int(np.sum(deg <= 0))} isolated node(s) (degree 0): D is singular")
    # L f = λ D f  ⇔  N g = λ g with N = D^{-1/2} L D^{-1/2} = I − D^{-1/2} W D^{-1/2}, f = D^{-1/2} g
    # (one symmetric eigh; fᵀ D f = gᵀ g = 1). The eigenvalues lie in [0, 2].
    s = 1.0 / np.sqrt(deg)
    S = (s[:, None] * W) * s[None, :]  # N = I - S: the smallest λ of N are the largest μ = 1 − λ of S
    S = 0.5 * (S + S.T)
    if n <= 64 or r + 1 >= n // 2:
        mu, G = scipy.linalg.eigh(S)
        mu, G = mu[::-1][: r + 1], G[:, ::-1][:, : r + 1]
    else:
        # Lanczos (ARPACK) for the r + 1 largest μ, to machine precision (tol=0), fixed start vector
        v0 = 1.0 + np.linspace(0.0, 1.0, n)
        mu, G = scipy.sparse.linalg.eigsh(scipy.sparse.csr_matrix(S), k=r + 1, which="LA", v0=v0, tol=0.0)
        order = np.argsort(mu)[::-1]
        mu, G = mu[order], G[:, order]
    lam = 1.0 - mu
    if lam[1] <= 1e-10:
        raise ValueError(f"{where}: the graph is not connected (second eigenvalue {lam[1]:.3e} ~ 0)")
    F = s[:, None] * G[:, 1:]
    idx = np.argmax(np.abs(F), axis=0)
    F = F * np.sign(F[idx, np.arange(r)])
    return F, lam[1:]


def _project_to_ball(Y, R):
    """Rows with ``dist(o, y) = acosh(y₀) > R`` moved to ``(cosh R, sinh R · ȳ/‖ȳ‖)`` (geodesic ball projection)."""
    rho = np.arccosh(np.maximum(Y[:, 0], 1.0))
    out = rho > R
    if np.any(out):
        ybar = Y[out, 1:]
        Y = Y.copy()
        Y[out, 1:] = np.sinh(R) * ybar / np.linalg.norm(ybar, axis=1, keepdims=True)
        Y[out, 0] = np.cosh(R)
    return Y


def train_lorentz_embedding(
    closure: MammalClosure,
    rng: np.random.Generator,
    *,
    dim: int = 2,
    epochs: int = 10,
    lr: float = 1.0,
    burnin_epochs: int = 5,
    burnin_factor: float = 0.1,
    n_negatives: int = 10,
    batch_size: int = 64,
    init_scale: float = 1e-3,
    max_step: float = 0.3,
    max_radius: float | None = None,
) -> np.ndarray:
    r"""Hyperbolic embedding ``Y`` (n, dim+1) of the closure on ``H^dim`` by Riemannian SGD.

    Loss (Nickel & Kiela 2017, eq. (6)): for every closure edge ``(u, v)`` and ``K`` negatives
    ``v'`` drawn uniformly among nodes not adjacent to ``u``::

        ℓ(u, v) = −log( e^{−d(u, v)} / Σ_{v'' ∈ {v} ∪ negatives} e^{−d(u, v'')} ),

    so ``∂ℓ/∂d(u, v'') = 1[v'' = v] − softmax(−d)_{v''}``; the Riemannian gradient of ``d`` in
    either argument is ``−Log_u(v)/d`` (:func:`grad_dist_rows`). Each mini-batch sums these
    gradients per node and moves the node by ``Exp_y(−η g)`` (Riemannian SGD, Bonnabel 2013;
    NK 2018 §3). The first ``burnin_epochs`` use ``η · burnin_factor`` (NK17 §3's burn-in).
    Initial points: ``ȳ ~ U(−init_scale, init_scale)^dim``, ``y₀ = √(1 + ‖ȳ‖²)``.
    Negatives that hit a neighbour of ``u`` (or ``u``) are masked out of the softmax, not redrawn.
    A hub such as ``mammal.n.01`` sums the gradients of hundreds of pairs in one batch, so each
    node's step ``η‖g‖`` is capped at ``max_step`` (a trust region on the geodesic step length,
    stated here, not a repair of input): without it ``η = 1`` overflows ``cosh``.
    ``max_radius = R`` makes it projected RSGD on the geodesic ball ``B(o, R)`` around the origin
    ``o = (1, 0, …)`` (convex in a Hadamard manifold): a point at ``ρ = dist(o, y) > R`` moves to
    ``Exp_o((R/ρ) Log_o y) = (cosh R, sinh R · ȳ/‖ȳ‖)``. Unconstrained leaves drift outwards
    (``y₀`` in the 10⁴–10⁵ range after 10 epochs), where Lorentz round-off grows like ``eps·y₀²``.

    Parameters
    ----------
    closure : MammalClosure
        The closure to embed.
    rng : numpy.random.Generator
        Source of the initial points, batches and negatives.
    dim : int, optional
        Hyperbolic dimension (default 2).
    epochs : int, optional
        Passes over the edges (default 10).
    lr : float, optional
        Step size :math:`\eta > 0` (default 1).
    burnin_epochs : int, optional
        Epochs at the reduced step (default 5).
    burnin_factor : float, optional
        Step factor during burn-in, > 0 (default 0.1).
    n_negatives : int, optional
        Negatives per edge (default 10).
    batch_size : int, optional
        Edges per mini-batch (default 64).
    init_scale : float, optional
        Half-width of the uniform initialisation, > 0 (default 1e-3).
    max_step : float, optional
        Cap on each node's geodesic step, > 0 (default 0.3).
    max_radius : float or None, optional
        Radius of the projection ball; ``None`` (default) for none.

    Returns
    -------
    numpy.ndarray
        ``(n, dim + 1)`` points on the hyperboloid.

    Raises
    ------
    ValueError
        If ``rng`` is not a Generator, an integer argument is below its minimum, a float argument is
        not finite and > 0, ``max_radius`` is neither ``None`` nor finite and > 0, or the embedding
        diverges.
    """
    where = "train_lorentz_embedding"
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator (got {type(rng).__name__})")
    for name, v, low in (("dim", dim, 1), ("epochs", epochs, 0), ("burnin_epochs", burnin_epochs, 0), ("n_negatives", n_negatives, 1), ("batch_size", batch_size, 1)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{where}: {name} must be an integer >= {low} (got {v!r})")
    if max_radius is not None and not (np.isfinite(max_radius) and max_radius > 0):
        raise ValueError(f"{where}: max_radius must be None or finite and > 0 (got {max_radius})")
    for name, v in (("lr", lr), ("burnin_factor", burnin_factor), ("init_scale", init_scale), ("max_step", max_step)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{where}: {name} must be finite and > 0 (got {v})")
    n = closure.n
    E = closure.edges
    m = E.shape[0]
    A = adjacency(closure, self_loops=True) > 0
    Y = np.empty((n, dim + 1))
    Y[:, 1:] = rng.uniform(-init_scale, init_scale, size=(n, dim))
    Y[:, 0] = np.sqrt(1.0 + np.sum(Y[:, 1:] ** 2, axis=1))
    for epoch in range(epochs):
        eta = lr * burnin_factor if epoch < burnin_epochs else lr
        perm = rng.permutation(m)
        for start in range(0, m, batch_size):
            b = perm[start : start + batch_size]
            u, v = E[b, 0], E[b, 1]
            negs = rng.integers(0, n, size=(b.size, n_negatives))
            cand = np.concatenate([v[:, None], negs], axis=1)
            valid = np.concatenate([np.ones((b.size, 1), bool), ~A[u[:, None], negs]], axis=1)
            Yu = np.broadcast_to(Y[u][:, None, :], (b.size, n_negatives + 1, dim + 1))
            Yc = Y[cand]
            d = dist_rows(Yu, Yc)
            logits = np.where(valid, -d, -np.inf)
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            coef = -p
            coef[:, 0] += 1.0
            gu = coef[..., None] * grad_dist_rows(Yu, Yc, d)
            gc = coef[..., None] * grad_dist_rows(Yc, Yu, d)
            G = np.zeros_like(Y)
            np.add.at(G, u, gu.sum(axis=1))
            np.add.at(G, cand.ravel(), gc.reshape(-1, dim + 1))
            touched = np.unique(np.concatenate([u, cand.ravel()]))
            step = -eta * G[touched]
            length = np.sqrt(np.maximum(inner_rows(step, step), 0.0))
            step *= np.minimum(1.0, max_step / np.where(length > 0, length, 1.0))[:, None]
            Y[touched] = exp_rows(Y[touched], step)
            if max_radius is not None:
                Y[touched] = _project_to_ball(Y[touched], max_radius)
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{where}: the embedding diverged (non-finite coordinates); lower lr")
    return Y


def mean_rank(closure: MammalClosure, Y) -> float:
    """Mean rank of NK17 §4.1: for each edge ``(u, v)``, 1 + the number of non-neighbours ``v'`` of ``u``
    with ``d(u, v') < d(u, v)``, averaged over edges. A random embedding scores about half the
    number of non-neighbours; a perfect one scores 1.

    Parameters
    ----------
    closure : MammalClosure
        The closure.
    Y : array_like
        ``(n, d + 1)`` embedding on the hyperboloid.

    Returns
    -------
    float
        The mean rank (1 is perfect).
    """
    Y = np.asarray(Y, dtype=np.float64)
    G = Y @ Y.T - 2.0 * np.outer(Y[:, 0], Y[:, 0])
    D = np.arccosh(np.maximum(-G, 1.0))
    A = adjacency(closure, self_loops=True) > 0
    ranks = []
    for u, v in closure.edges:
        ranks.append(1 + int(np.sum((D[u] < D[u, v]) & ~A[u])))
    return float(np.mean(ranks))


@dataclass(frozen=True)
class HSPData:
    """The HSP data of Huang et al. (2024) §6.3: features ``w`` (n, r), targets ``y`` (n, d+1) on ``H^d``, names,
    the test index (the word "primate") and the training indices (all others, in id order).

    Parameters
    ----------
    w : numpy.ndarray
        ``(n, r)`` features.
    y : numpy.ndarray
        ``(n, d + 1)`` targets on the hyperboloid.
    names : tuple of str
        Synset names.
    test : int
        Index of the test word.
    train : numpy.ndarray
        Training indices.
    eigenvalues : numpy.ndarray
        The eigenmap's eigenvalues.
    """

    w: np.ndarray
    y: np.ndarray
    names: tuple
    test: int
    train: np.ndarray
    eigenvalues: np.ndarray


def hsp_dataset(
    closure: MammalClosure,
    rng: np.random.Generator,
    *,
    r: int = 3,
    test_name: str = "primate.n.02",
    embedding=None,
    self_loops: bool = False,
    **train_kwargs,
) -> HSPData:
    """Build ``{(w_i, y_i)} ⊂ R^r × H²`` of Huang et al. (2024) §6.3 from the closure.

    ``y`` is ``embedding`` if given (e.g. pretrained NK17 points in the Lorentz model), else
    :func:`train_lorentz_embedding` ``(closure, rng, **train_kwargs)``; ``w`` is
    :func:`laplacian_eigenmap` ``(adjacency(closure), r)``. ``primate.n.02`` is the primate
    mammal synset (``primate.n.01`` is an archbishop); with the 1180-node closure the 1179
    training pairs split into ``N = 9`` agents of ``N_i = 131`` (use
    :func:`prirfed.reference.data.partition.partition_equal` on ``train``).

    Parameters
    ----------
    closure : MammalClosure
        The closure.
    rng : numpy.random.Generator
        Source of the embedding's randomness (unused with ``embedding``).
    r : int, optional
        Feature dimension (default 3).
    test_name : str, optional
        The test word (default ``"primate.n.02"``).
    embedding : array_like or None, optional
        Precomputed ``(n, d + 1)`` points on the hyperboloid.
    self_loops : bool, optional
        Passed to :func:`adjacency` (default ``False``).
    train_kwargs
        Passed to :func:`train_lorentz_embedding`.

    Returns
    -------
    HSPData
        Features, targets and the split.

    Raises
    ------
    ValueError
        If ``test_name`` is not a node, ``embedding`` has the wrong shape or rows off the
        hyperboloid, or as :func:`train_lorentz_embedding` and :func:`laplacian_eigenmap`.
    """
    where = "hsp_dataset"
    if test_name not in closure.index:
        raise ValueError(f"{where}: test word {test_name!r} is not a node of the closure")
    if embedding is None:
        Y = train_lorentz_embedding(closure, rng, **train_kwargs)
    else:
        Y = np.asarray(embedding, dtype=np.float64)
        if Y.ndim != 2 or Y.shape[0] != closure.n or Y.shape[1] < 2:
            raise ValueError(f"{where}: embedding has shape {Y.shape}, expected ({closure.n}, d+1)")
        defect = float(np.max(np.abs(inner_rows(Y, Y) + 1.0) / Y[:, 0] ** 2))
        if defect > 1e-10 or np.any(Y[:, 0] <= 0):
            raise ValueError(f"{where}: embedding rows are not on the hyperboloid (max |<y,y>_L + 1|/y0^2 = {defect:.3e})")
    F, lam = laplacian_eigenmap(adjacency(closure, self_loops=self_loops), r)
    t = closure.index[test_name]
    train = np.array([i for i in range(closure.n) if i != t], dtype=np.int64)
    return HSPData(w=F, y=Y, names=closure.names, test=t, train=train, eigenvalues=lam)
