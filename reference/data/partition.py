"""Partitioning of a data set into N agents (the federated split D = D_1 ∪ … ∪ D_N of Huang et al. (2024) §2).

Every function returns a list of ``N`` integer index arrays ``parts`` with

- every selected record in exactly one agent (the ``parts`` are pairwise disjoint),
- no empty agent (an agent with ``N_i = 0`` makes ``p_i = N_i / Σ N_j = 0`` and ``f_i``
  undefined in (6.1)–(6.3) of Huang et al. (2024), so it is refused with ``ValueError``),
- all randomness from the caller's ``numpy.random.Generator`` (same seed, same split).

Sizes used in the papers: Huang et al. (2024) §6.1 MNIST ``(N, N_i) ∈ {(50, 1200), (60, 1000), (80, 750),
(100, 600)}`` of 60,000 images; Huang et al. (2024) §6.2 PathMNIST ``(50, 400)``, ``(100, 200)`` of 20,000 images
chosen at random from 89,996; Huang et al. (2024) §6.3 WordNet ``N = 9, N_i = 131``; Li and Ma (2023) §5.2–5.3 equal splits
of 10,000 points and of Iris/Wine into 10 agents. Unequal sizes (``p_i`` not all equal) are
allowed by (2.1) of Huang et al. (2024) and offered here as given sizes or a Dirichlet draw.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "partition_equal",
    "partition_sizes",
    "dirichlet_sizes",
    "partition_dirichlet",
    "split",
    "check_partition",
]


def _check_rng(where: str, rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator (got {type(rng).__name__})")


def _positive_int(where: str, name: str, v) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"{where}: {name} must be an integer (got {v!r})")
    v = int(v)
    if v < 1:
        raise ValueError(f"{where}: {name} must be >= 1 (got {v})")
    return v


def partition_sizes(n_records: int, sizes, rng: np.random.Generator, *, shuffle: bool = True) -> list[np.ndarray]:
    r"""Split records ``0..n_records-1`` into agents of the given sizes ``N_1, …, N_N``.

    A uniformly random permutation of the records (``shuffle=True``) is cut into consecutive
    blocks of lengths ``sizes``; when ``Σ N_i < n_records`` the remaining records are left out
    (a uniformly random subset of ``Σ N_i`` records is used, as Huang et al. (2024) §6.2 does with
    20,000 of the PathMNIST images). ``shuffle=False`` cuts ``0, 1, …`` in order (no randomness
    used).

    Parameters
    ----------
    n_records : int
        Number of records, >= 1.
    sizes : sequence of int
        The agents' sizes :math:`N_i \ge 1`, summing to at most ``n_records``.
    rng : numpy.random.Generator
        Source of the permutation (needed when ``shuffle``).
    shuffle : bool, optional
        Permute the records first (default ``True``).

    Returns
    -------
    list of numpy.ndarray
        One ``int64`` index array per agent.

    Raises
    ------
    ValueError
        If ``n_records`` is not an integer >= 1, ``sizes`` is empty, not 1-D, not integer or has an
        entry < 1, the sizes sum to more than ``n_records``, or ``rng`` is not a Generator (with
        ``shuffle``).
    """
    where = "partition_sizes"
    n_records = _positive_int(where, "n_records", n_records)
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"{where}: sizes must be a non-empty 1-D sequence (got shape {sizes.shape})")
    if not np.issubdtype(sizes.dtype, np.integer):
        raise ValueError(f"{where}: sizes must be integers (got dtype {sizes.dtype})")
    if np.any(sizes < 1):
        bad = np.flatnonzero(sizes < 1)
        raise ValueError(
            f"{where}: empty agents are refused: {bad.size} agent(s) have N_i < 1 (first: agent {bad[0]} with N_i = {sizes[bad[0]]})"
        )
    total = int(sizes.sum())
    if total > n_records:
        raise ValueError(f"{where}: the sizes ask for {total} records but only {n_records} exist (excess {total - n_records})")
    if shuffle:
        _check_rng(where, rng)
        order = rng.permutation(n_records)[:total]
    else:
        order = np.arange(total)
    cuts = np.cumsum(sizes)[:-1]
    return [np.asarray(p, dtype=np.int64) for p in np.split(order, cuts)]


def partition_equal(
    n_records: int, n_agents: int, rng: np.random.Generator, *, n_per_agent: int | None = None, shuffle: bool = True
) -> list[np.ndarray]:
    """Equal split: ``N`` agents with ``N_i = n_per_agent`` records each (``p_i = 1/N``).

    Without ``n_per_agent`` every record is used and ``n_records`` must be divisible by
    ``n_agents`` (no record is silently dropped); with it, ``N · n_per_agent`` records are drawn
    uniformly without replacement (Huang et al. (2024) §6.2: 20,000 of 89,996 PathMNIST images).

    Parameters
    ----------
    n_records : int
        Number of records, >= 1.
    n_agents : int
        Number of agents, >= 1.
    rng : numpy.random.Generator
        Source of the permutation.
    n_per_agent : int or None, optional
        Records per agent; ``None`` (default) uses all records.
    shuffle : bool, optional
        Permute the records first (default ``True``).

    Returns
    -------
    list of numpy.ndarray
        ``n_agents`` index arrays of equal length.

    Raises
    ------
    ValueError
        If a count is not an integer >= 1, ``n_records`` is not divisible by ``n_agents`` (without
        ``n_per_agent``), or as :func:`partition_sizes`.
    """
    where = "partition_equal"
    n_records = _positive_int(where, "n_records", n_records)
    n_agents = _positive_int(where, "n_agents", n_agents)
    if n_per_agent is None:
        if n_records % n_agents:
            raise ValueError(
                f"{where}: {n_records} records do not split equally into {n_agents} agents "
                f"(remainder {n_records % n_agents}); pass n_per_agent to use a subset"
            )
        n_per_agent = n_records // n_agents
    n_per_agent = _positive_int(where, "n_per_agent", n_per_agent)
    return partition_sizes(n_records, np.full(n_agents, n_per_agent, dtype=np.int64), rng, shuffle=shuffle)


def dirichlet_sizes(n_records: int, n_agents: int, concentration: float, rng: np.random.Generator, *, min_size: int = 1) -> np.ndarray:
    """Unequal sizes ``N_i = min_size + M_i``, ``M ~ Multinomial(n − N·min_size, q)``, ``q ~ Dir(c·1_N)``.

    The floor ``min_size ≥ 1`` makes every agent non-empty by construction (no rejection loop);
    ``Σ N_i = n_records`` exactly. Small ``concentration`` gives very unequal sizes, large gives
    nearly equal ones. ``E[N_i] = min_size + (n − N·min_size)/N``.

    Parameters
    ----------
    n_records : int
        Number of records, >= 1.
    n_agents : int
        Number of agents, >= 1.
    concentration : float
        Dirichlet concentration :math:`c > 0`.
    rng : numpy.random.Generator
        Source of the draws.
    min_size : int, optional
        Smallest agent size, >= 1 (default 1).

    Returns
    -------
    numpy.ndarray
        ``int64`` sizes summing to ``n_records``.

    Raises
    ------
    ValueError
        If a count is not an integer >= 1, ``concentration`` is not finite and > 0, ``rng`` is not a
        Generator, or ``n_agents * min_size > n_records``.
    """
    where = "dirichlet_sizes"
    n_records = _positive_int(where, "n_records", n_records)
    n_agents = _positive_int(where, "n_agents", n_agents)
    min_size = _positive_int(where, "min_size", min_size)
    c = float(concentration)
    if not (np.isfinite(c) and c > 0):
        raise ValueError(f"{where}: concentration must be finite and > 0 (got {concentration})")
    _check_rng(where, rng)
    free = n_records - n_agents * min_size
    if free < 0:
        raise ValueError(
            f"{where}: {n_agents} agents with at least {min_size} record(s) need {n_agents * min_size} records, "
            f"only {n_records} exist (short by {-free})"
        )
    q = rng.dirichlet(np.full(n_agents, c))
    return (min_size + rng.multinomial(free, q)).astype(np.int64)


def partition_dirichlet(
    n_records: int, n_agents: int, concentration: float, rng: np.random.Generator, *, min_size: int = 1
) -> list[np.ndarray]:
    """Unequal split of all records with sizes from :func:`dirichlet_sizes`, then a random permutation.

    Parameters
    ----------
    n_records : int
        Number of records, >= 1.
    n_agents : int
        Number of agents, >= 1.
    concentration : float
        Dirichlet concentration, > 0.
    rng : numpy.random.Generator
        Source of the sizes and of the permutation.
    min_size : int, optional
        Smallest agent size, >= 1 (default 1).

    Returns
    -------
    list of numpy.ndarray
        One index array per agent, covering every record.

    Raises
    ------
    ValueError
        As :func:`dirichlet_sizes`.
    """
    sizes = dirichlet_sizes(n_records, n_agents, concentration, rng, min_size=min_size)
    return partition_sizes(n_records, sizes, rng)


def split(data, parts: list[np.ndarray]) -> list[np.ndarray]:
    """The agents' data sets ``D_i = data[parts[i]]`` (rows of ``data`` are the records).

    Parameters
    ----------
    data : array_like
        Records along the first axis.
    parts : list of numpy.ndarray
        Index arrays, checked by :func:`check_partition`.

    Returns
    -------
    list of numpy.ndarray
        ``data[p]`` for each part.

    Raises
    ------
    ValueError
        If ``data`` has no axis, or as :func:`check_partition`.
    """
    data = np.asarray(data)
    if data.ndim == 0:
        raise ValueError("split: data must have at least one axis of records")
    check_partition(parts, data.shape[0], where="split")
    return [data[p] for p in parts]


def check_partition(parts, n_records: int, *, where: str = "check_partition") -> None:
    """Raise ``ValueError`` unless ``parts`` are non-empty, disjoint, in range ``[0, n_records)``.

    Parameters
    ----------
    parts : sequence of array_like
        Index arrays, one per agent.
    n_records : int
        Number of records.
    where : str, optional
        Function named in the error message (default ``"check_partition"``).

    Raises
    ------
    ValueError
        If there is no agent, an agent is empty or holds non-integer or out-of-range indices, or a
        record belongs to more than one agent.
    """
    if len(parts) == 0:
        raise ValueError(f"{where}: no agents")
    seen = np.zeros(n_records, dtype=np.int64)
    for i, p in enumerate(parts):
        p = np.asarray(p)
        if p.size == 0:
            raise ValueError(f"{where}: agent {i} is empty (empty agents are refused)")
        if not np.issubdtype(p.dtype, np.integer):
            raise ValueError(f"{where}: agent {i} holds non-integer indices (dtype {p.dtype})")
        if p.min() < 0 or p.max() >= n_records:
            raise ValueError(f"{where}: agent {i} has indices outside [0, {n_records}) (min {p.min()}, max {p.max()})")
        np.add.at(seen, p, 1)
    if np.any(seen > 1):
        dup = np.flatnonzero(seen > 1)
        raise ValueError(f"{where}: {dup.size} record(s) belong to more than one agent (first: record {dup[0]}, {seen[dup[0]]} times)")
