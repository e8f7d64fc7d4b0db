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
