"""``prirfed run CONFIG.toml --engine flower``: one repeat of a ``prirfed run`` configuration on
Flower's simulation engine (the runner that :func:`prirfed.experiments.custom.run_trial` calls in
place of the in-process trainer)."""

from __future__ import annotations

__all__ = ["flower_trial"]


def flower_trial(config: dict, problem, x0_rng, rng, name: str, settings: dict):
    """One repeat on Flower's simulation engine: the same x0 (from ``x0_rng``) and run key (from
    ``rng``) as the in-process trial, so the iterates are the in-process trainer's; PriRFed stops
    before a round that would exceed [privacy] (eps, delta). The history (f, ||grad f||, error) is
    recorded by the driver from the returned iterates, every [run] record_every rounds and at the
    last round run. Returns a :class:`~prirfed.reference.trainers.base.TrainResult`."""
    from prirfed.reference.trainers.base import History, TrainResult

    from .simulation import run_simulation

    x0 = problem.manifold.random_point(x0_rng)
    budget = (config["privacy"]["eps"], config["privacy"]["delta"]) if config["privacy"] and name == "prirfed" else None
    res = run_simulation(problem, x0, name, rng=rng, supernodes=config.get("supernodes"), budget=budget, **settings)
    every = config["run"]["record_every"]
    hist = History()
    for t, x in enumerate(res.iterates):
        if t % every == 0 or t == res.rounds:
            hist.record(problem, t, x)
    info = dict(privacy=res.info["privacy"] if res.stopped is None else f"{res.info['privacy']}; {res.stopped}")
    if name == "prirfed":
        info["sigma"] = settings.get("sigma", 0.0)
    return TrainResult(x=res.x, history=hist, event=res.event, info=info)
