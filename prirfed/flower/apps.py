"""The Flower ServerApp and ClientApp of a prirfed run (needs ``pip install 'prirfed[flower]'``).

The apps use Flower's Message API: the ServerApp drives the rounds through the ``Grid`` and the
ClientApp answers two message types, ``query`` (which agents a node holds; RFedSVRG's gradients)
and ``train`` (the local training of the node's agents sampled in the round). Every decision is
made by :class:`prirfed.flower.protocol.RoundServer` and :func:`prirfed.flower.protocol.client_update`.

A node holds the shards (:func:`~prirfed.flower.protocol.agent_shard`) of its agents: agent i
lives on the node whose ``partition-id`` is i mod ``num-partitions`` (Flower's node config; set
by the simulation engine, and by ``flower-supernode --node-config``).

Failure policy (Flower's: a reply carrying an error, or no reply before the timeout, is a
failure; the strategy aggregates the replies that arrived): the uploads of a failed node are
recorded as missing and the round aggregates the others. The round counts for privacy in full,
whoever replied (its sampled agents ran, or may have run, their noisy steps).
"""

from __future__ import annotations

import json
import os
import time

os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")  # no network at run time (Flower's telemetry is on by default)

import numpy as np  # noqa: E402
from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, MessageType, RecordDict  # noqa: E402
from flwr.clientapp import ClientApp  # noqa: E402
from flwr.serverapp import Grid, ServerApp  # noqa: E402

from .protocol import RoundServer, agents_of_node, client_gradient, client_update, key_from_words, key_words  # noqa: E402

__all__ = ["build_server_app", "build_client_app", "node_partition"]


def _arrays(d: dict) -> ArrayRecord:
    return ArrayRecord({k: Array(np.ascontiguousarray(v, dtype=np.float64)) for k, v in d.items()})


def _numpy(rec: ArrayRecord, name: str) -> np.ndarray:
    return rec[name].numpy()


def node_partition(context: Context) -> tuple[int, int]:
    """(partition-id, num-partitions) of the node running this ClientApp (Flower's node config)."""
    cfg = context.node_config
    if "partition-id" not in cfg or "num-partitions" not in cfg:
        raise ValueError("prirfed.flower: the SuperNode has no node config 'partition-id' and 'num-partitions' "
                         "(start it with --node-config \"partition-id=P num-partitions=P_total\")")
    return int(cfg["partition-id"]), int(cfg["num-partitions"])


def build_server_app(make_server, *, on_result, min_nodes, timeout: float = 600.0) -> ServerApp:
    """A ServerApp running :class:`RoundServer` ``make_server(context)`` and handing its
    :class:`~prirfed.flower.protocol.FlowerRunResult` to ``on_result(result, context)``. It waits
    (at most ``timeout`` seconds) until ``min_nodes(context)`` SuperNodes are connected.
    ``timeout``: also the seconds to wait for the replies of a round (Flower's failure policy after it)."""
    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        server = make_server(context)
        words = key_words(server.key)
        nodes = _wait_for_nodes(grid, server, int(min_nodes(context)), timeout)
        owner = {}
        hello = [Message(RecordDict({"ask": ConfigRecord({"what": "agents"})}), n, MessageType.QUERY, group_id="0")
                 for n in nodes]
        for reply in grid.send_and_receive(hello, timeout=timeout):
            if reply.has_error():
                server.log(f"node {reply.metadata.src_node_id} did not say which agents it holds: {reply.error.reason}")
                continue
            for i in reply.content["agents"]["agents"]:
                owner[int(i)] = reply.metadata.src_node_id
        server.log(f"{len(nodes)} nodes hold {len(owner)} of {server.sizes.N} agents")
        for t in range(server.T):
            if not server.may_run(t):
                break
            S = server.agents(t)
            x = server.x
            full = None
            if server.algorithm == "rfedsvrg":
                full = _full_gradient(grid, server, owner, t, timeout)
                if full is None:
                    server.stopped = f"stopped before round {t}: grad f(x^(t)) needs every agent's gradient"
                    server.log(server.stopped)
                    break
            by_node = {}
            for i in S:
                if i not in owner:
                    server.note_missing(t, i, "no node holds this agent")
                    continue
                by_node.setdefault(owner[i], []).append(i)
            msgs = []
            for node, agents in by_node.items():
                arrays = {"x": x} if full is None else {"x": x, "full": full}
                cfg = {"key": words, "instructions": json.dumps([server.instructions(t, i) for i in agents])}
                msgs.append(Message(RecordDict({"x": _arrays(arrays), "cfg": ConfigRecord(cfg)}), node, MessageType.TRAIN,
                                    group_id=str(t + 1)))
            replies = {r.metadata.src_node_id: r for r in grid.send_and_receive(msgs, timeout=timeout)}
            accepted = {}
            for node, agents in by_node.items():
                reply = replies.get(node)
                if reply is None or reply.has_error():
                    why = "no reply before the timeout" if reply is None else f"node failed: {reply.error.reason}"
                    for i in agents:
                        server.note_missing(t, i, why)
                    continue
                rec = reply.content["uploads"]
                for i in agents:
                    name = f"agent-{i}"
                    if name not in rec:
                        server.note_missing(t, i, "the reply has no upload for this agent")
                        continue
                    up = server.check_upload(t, i, _numpy(rec, name))
                    if up is not None:
                        accepted[i] = up
            server.step(t, S, accepted)
            server.after_round(t)
        on_result(server.result(), context)

    return app


def _wait_for_nodes(grid, server, n: int, timeout: float) -> list:
    start = time.monotonic()
    while True:
        nodes = sorted(grid.get_node_ids())
        if len(nodes) >= n:
            return nodes
        if time.monotonic() - start > timeout:
            raise RuntimeError(f"prirfed.flower: only {len(nodes)} of {n} SuperNodes connected within {timeout:g} s")
        time.sleep(0.1)


def _full_gradient(grid, server, owner, t, timeout):
    nodes = sorted(set(owner.values()))
    msgs = [Message(RecordDict({"x": _arrays({"x": server.x}), "ask": ConfigRecord({"what": "gradients"})}), n,
                    MessageType.QUERY, group_id=str(t + 1)) for n in nodes]
    grads = {}
    for reply in grid.send_and_receive(msgs, timeout=timeout):
        if reply.has_error():
            continue
        rec = reply.content["grads"]
        for name in rec.keys():
            i = int(name.split("-")[1])
            g = server.check_upload(t, i, _numpy(rec, name), tangent=True)
            if g is not None:
                grads[i] = g
    if len(grads) != server.sizes.N:
        for i in range(server.sizes.N):
            if i not in grads:
                server.note_missing(t, i, "no gradient for grad f(x^(t))")
        return None
    return server.full_gradient(grads)


def build_client_app(load_shards, *, upload_hook=None) -> ClientApp:
    """A ClientApp whose node holds ``load_shards(context)``: a dict agent index -> that agent's
    shard (:func:`~prirfed.flower.protocol.agent_shard`), loaded once per node and kept.
    ``upload_hook(t, i, upload) -> upload``, if given, sees each upload before it is sent (for
    client-side audits, and the fault-injection tests)."""
    app = ClientApp()
    cache = {}

    def shards(context):
        key = (context.node_id, context.run_id)
        if key not in cache:
            cache[key] = load_shards(context)
        return cache[key]

    @app.query()
    def query(msg: Message, context: Context) -> Message:
        held = shards(context)
        what = msg.content["ask"]["what"]
        if what == "agents":
            return Message(RecordDict({"agents": ConfigRecord({"agents": sorted(held)})}), reply_to=msg)
        x = _numpy(msg.content["x"], "x")
        return Message(RecordDict({"grads": _arrays({f"agent-{i}": client_gradient(sh, i, x) for i, sh in held.items()})}),
                       reply_to=msg)

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        held = shards(context)
        rec = msg.content["x"]
        x = _numpy(rec, "x")
        full = _numpy(rec, "full") if "full" in rec else None
        cfg = msg.content["cfg"]
        key = key_from_words(cfg["key"])
        out = {}
        for ins in json.loads(cfg["instructions"]):
            i = int(ins["agent"])
            up = client_update(held[i], i, x, ins, key, full)
            if upload_hook is not None:
                up = upload_hook(int(ins["t"]), i, up)
            out[f"agent-{i}"] = up
        return Message(RecordDict({"uploads": _arrays(out)}), reply_to=msg)

    return app


def shards_for_node(problem, context, load_agent=None) -> dict:
    """The shards of the agents of this node (:func:`~prirfed.flower.protocol.agents_of_node`):
    ``agent_shard(problem, i)``, or ``load_agent(i)`` when given (``problem`` then only says N)."""
    from .protocol import agent_shard

    p, P = node_partition(context)
    load = load_agent if load_agent is not None else (lambda i: agent_shard(problem, i))
    return {i: load(i) for i in agents_of_node(problem.N, p, P)}
