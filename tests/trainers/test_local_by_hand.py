"""The local trainers of Huang et al. (2024) (Algorithms 2 and 3) on Euclidean space, by hand, and
the streams they accept.

On R^2 agent i's gradient is x - m_i (Frechet mean, 1/2 convention) and Exp_x(v) = x + v, so with
sigma = 0 every local step is x <- x - alpha (x - m_i); with noise the step adds -alpha sigma z for
the normals z of agent i's stream (module docstring of ``reference/trainers/local.py``: a
Generator stands for agent i's stream of round 0 under the key it draws; a Stream passed in must
be that agent's and unread).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from prirfed.reference.manifolds import Euclidean
from prirfed.reference.problems.frechet_mean import FrechetMean
from prirfed.reference.randomness import agent_stream, run_key, server_stream
from prirfed.reference.trainers.local import dp_rsgd_local, dp_rsvrg_local, rsvrg_local

DATA = [np.array([[0.0, 0.0], [2.0, 0.0]]), np.array([[0.0, 3.0], [1.0, 1.0], [2.0, -1.0]])]
M1 = np.array([1.0, 1.0])  # agent 1's mean


def problem():
    return FrechetMean(Euclidean(2), DATA)


def test_rsvrg_local_is_noiseless_gradient_descent_on_f_i():
    """RSVRG (DP-RSVRG with sigma = 0, no clipping): with one record drawn per inner step the
    variance-reduced direction grad f_il(x) - grad f_il(x~) + grad f_i(x~) is x - m_i on R^2 (the
    per-record terms x - a_l and x~ - a_l differ by x - x~), so K m = 2 * 3 steps give m_i + (1 -
    alpha)^6 (x - m_i)."""
    x0 = np.array([3.0, -1.0])
    got = rsvrg_local(problem(), 1, x0, 2, 3, 0.2, np.random.default_rng(0))
    np.testing.assert_allclose(got, M1 + 0.8**6 * (x0 - M1), rtol=0, atol=1e-14)


def test_dp_rsgd_local_on_a_stream_and_its_refusals():
    """A Stream passed as rng is read as agent i's stream: one full-batch step with sigma = 0.5 is
    x - alpha (x - m_1 + sigma z), z the first 2 normals of that stream. A stream already read, a
    server stream, or another agent's stream is refused (naming the agent); a bad rng is refused
    before a bad maps setting."""
    key = run_key(np.random.default_rng(4))
    x0 = np.array([3.0, -1.0])
    z = agent_stream(key, 2, 1).standard_normal(2)
    got = dp_rsgd_local(problem(), 1, x0, 1, 3, 0.5, math.inf, 0.25, agent_stream(key, 2, 1))
    np.testing.assert_allclose(got, x0 - 0.25 * (x0 - M1 + 0.5 * z), rtol=0, atol=1e-14)
    read = agent_stream(key, 2, 1)
    read.standard_normal(1)
    for bad in (read, server_stream(key, 2), agent_stream(key, 2, 0)):
        with pytest.raises(ValueError, match=r"^dp_rsgd_local: a Stream passed as rng must be agent 1's and unread"):
            dp_rsgd_local(problem(), 1, x0, 1, 3, 0.5, math.inf, 0.25, bad)
    # the rng is checked before the geometry (maps) and the start point, so that both twins refuse it
    # before anything else, whatever else is wrong
    with pytest.raises(ValueError, match=r"^dp_rsvrg_local: rng must be a numpy.random.Generator or a randomness.Stream"):
        dp_rsvrg_local(problem(), 1, x0, 1, 1, 0.0, 1.0, 1.0, 0.25, 7, maps="qr")
    with pytest.raises(ValueError, match=r"^dp_rsgd_local: rng must be a numpy.random.Generator or a randomness.Stream"):
        dp_rsgd_local(problem(), 1, x0, 1, 3, 0.5, math.inf, 0.25, 7, maps="qr")
    with pytest.raises(ValueError, match=r"^dp_rsvrg_local: option must be 1 or 2 \(got 0\)$"):
        dp_rsvrg_local(problem(), 1, x0, 1, 1, 0.0, 1.0, 1.0, 0.25, np.random.default_rng(0), option=0)
