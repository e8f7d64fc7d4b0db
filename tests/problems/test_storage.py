"""stacked_view (reference/problems/base.py): the agents' data as one C-ordered array, a view of
their buffer when they are consecutive blocks of it, else one copy. Oracle: np.concatenate."""

import numpy as np

from prirfed.reference.problems.base import is_stacked, stacked_view


def test_blocks_of_one_buffer_give_a_view():
    buf = np.arange(24.0).reshape(8, 3)
    parts = np.split(buf, [3, 5])
    assert is_stacked(parts)
    v = stacked_view(parts)
    assert np.shares_memory(v, buf) and np.array_equal(v, buf)


def test_fortran_ordered_data_give_one_c_ordered_copy():
    # one agent's data transposed (Fortran order): the copy must be C-ordered, or the compiled loops
    # would see a second array type (tests/verified/test_compile_once.py)
    parts = [np.asfortranarray(np.arange(12.0).reshape(4, 3)), np.asfortranarray(np.ones((2, 3)))]
    assert not is_stacked(parts)
    v = stacked_view(parts)
    assert v.flags.c_contiguous
    assert np.array_equal(v, np.concatenate(parts, axis=0))
    single = stacked_view([np.asfortranarray(np.arange(6.0).reshape(3, 2))])
    assert single.flags.c_contiguous


def test_a_scalar_is_not_a_list_of_agents():
    """agent_arrays wraps one array of samples (ndim >= 1) as a single agent; a 0-d array is no
    sequence of agents and is refused with that reason (a mutant wrapping 0-d arrays too gave a
    message about shapes instead)."""
    import numpy as np
    import pytest

    from prirfed.reference.problems.base import agent_arrays

    with pytest.raises(ValueError, match=r"^f: Z must be a sequence of per-agent arrays \(got ndarray\)$"):
        agent_arrays("f", "Z", np.array(3.0))
    (one,) = agent_arrays("f", "Z", np.ones((2, 3)))
    assert one.shape == (2, 3)


# ---------------------------------------------------------------------- agent_arrays: what is read, what is refused
def test_agent_arrays_refuses_what_is_not_real_data_naming_the_agent_and_the_cause():
    """The documented refusals of agent_arrays, each naming the function, the argument, the agent and
    the cause: arrays of complex, boolean or string dtype (a silent cast would drop the imaginary part
    or turn True and "1.5" into numbers); entries float() cannot read (an int beyond float64, a dict);
    ragged rows; an agent that is a scalar or has no rows; non-finite entries, counted (here 3 of 6)."""
    import pytest

    from prirfed.reference.problems.base import agent_arrays

    cases = [
        ([np.ones((2, 2)), 1j * np.ones((1, 2))], r"Z\[1\] is a complex array \(dtype complex128\); expected real numbers"),
        ([np.array([[True, False]])], r"Z\[0\] is a boolean array \(dtype bool\); expected real numbers"),
        ([np.array([["1.5"]])], r"Z\[0\] is a string array \(dtype <U3\); expected real numbers"),
        ([[[10**400]]], r"Z\[0\] cannot be read as a float array \(int too large to convert to float\)"),
        ([np.array([[{}]], dtype=object)], r"Z\[0\] cannot be read as a float array \(float\(\) argument must be .*'dict'\)"),
        ([np.ones((1, 2)), [[1.0, 2.0], [3.0]]], r"Z\[1\] cannot be read as a float array \(.*inhomogeneous.*\)"),
        ([1.0, 2.0], r"Z\[0\] has no samples \(shape \(\)\)"),
        ([np.ones((2, 3)), np.zeros((0, 3))], r"Z\[1\] has no samples \(shape \(0, 3\)\)"),
        ([np.array([[1.0, np.nan, 3.0], [np.inf, 0.0, -np.inf]])], r"Z\[0\] has 3 non-finite entries \(NaN or inf\)"),
    ]
    for data, msg in cases:
        with pytest.raises(ValueError, match=rf"^f: {msg}$"):
            agent_arrays("f", "Z", data)


def test_agent_arrays_reads_one_array_as_one_agent_and_returns_one_buffer():
    """A single array of ndim >= 1 is one agent (a 1-D array: N scalar samples). The result is always
    consecutive blocks of one float64 buffer (is_stacked): separate arrays are copied into one, with
    their values; blocks of one buffer (np.split) are returned as they are, without a copy."""
    from prirfed.reference.problems.base import agent_arrays

    (one,) = agent_arrays("f", "Z", np.array([1.0, 2.0, 3.0]))
    assert one.shape == (3,) and np.array_equal(one, [1.0, 2.0, 3.0])
    sep = [np.arange(6.0).reshape(2, 3), -np.ones((1, 3)), np.arange(3, dtype=np.int64).reshape(1, 3)]
    out = agent_arrays("f", "Z", sep)
    assert is_stacked(out) is True
    assert all(np.array_equal(o, s) and o.dtype == np.float64 for o, s in zip(out, sep))
    buf = np.arange(30.0).reshape(10, 3)
    parts = np.split(buf, [2, 7])
    out = agent_arrays("f", "Z", parts)
    assert all(o is p for o, p in zip(out, parts)) and all(np.shares_memory(o, buf) for o in out)


def test_stacked_view_of_one_agent_and_of_matrix_samples():
    """One C-contiguous float64 agent is stacked with itself: its view is the array (shared memory).
    Samples that are matrices (N_i, n, n), as SPD data are: the view of blocks of one buffer has the
    buffer's shape and values (row strides n*n*8 and n*8 bytes), like np.concatenate."""
    single = np.arange(6.0).reshape(3, 2)
    v = stacked_view([single])
    assert np.shares_memory(v, single) and np.array_equal(v, single)
    buf = np.arange(5 * 2 * 2, dtype=np.float64).reshape(5, 2, 2)
    parts = np.split(buf, [2])
    v = stacked_view(parts)
    assert v.shape == (5, 2, 2) and np.shares_memory(v, buf)
    assert np.array_equal(v, np.concatenate(parts, axis=0))


def test_adjacent_blocks_with_different_owners_are_not_stacked():
    """is_stacked requires ONE owner (the end of the .base chain), not only adjacent addresses: here the
    two halves of one bytearray are exported by two different memoryviews, so a view of the first that
    spans both (what stacked_view would build) reads past the 24 bytes its owner exports and keeps only
    that owner alive. The answer is the bool False, and stacked_view copies."""
    raw = bytearray(48)
    mv = memoryview(raw)
    a, b = np.frombuffer(mv[:24]), np.frombuffer(mv[24:])
    assert a.__array_interface__["data"][0] + 24 == b.__array_interface__["data"][0]
    assert is_stacked([a, b]) is False
    v = stacked_view([a, b])
    assert v.shape == (6,) and not np.shares_memory(v, a)
