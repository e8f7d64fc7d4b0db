"""Module-level trial functions for the CLI tests that need a real worker process (a spawned
process imports them by name; a closure would not travel). Plain functions."""

from __future__ import annotations

import os
import signal

import numpy as np


def killing_trial(config: dict, spec: dict, seq) -> dict:
    """Trial ``config["victim"]`` kills its own worker process (SIGKILL: no Python cleanup, as the
    kernel's out-of-memory killer would); the others return one draw of their generator."""
    if spec["k"] == config["victim"]:
        os.kill(os.getpid(), signal.SIGKILL)
    return dict(x=float(np.random.default_rng(seq).standard_normal()))


def gentle_trial(config: dict, spec: dict, seq) -> dict:
    """The same draws as :func:`killing_trial` without the kill."""
    return dict(x=float(np.random.default_rng(seq).standard_normal()))
