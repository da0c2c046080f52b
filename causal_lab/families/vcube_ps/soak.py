"""Random small configurations of VCube-PS, SRPT-S and SRPT-B for ``causal-lab soak``: 8 to 128
nodes, every workload of thesis ch. 5 (one or many publishers, reactive publications, several
topics, churn with swaps of subscribers), every CHECKCB rule, barrier pruning, queued or free
ACKs, every SRPT-S membership protocol and both E8 publication schedules; VCube-PS also on
non-FIFO links.

Under churn the thesis's CHECKCB (strict, and the prose's lenient rule) can deliver a message
after one of its causal successors: ``Run.known_flaws`` counts those runs apart (notebook 37
reports the flaw); the safe rule, soaked beside them, must stay exact.
"""

from __future__ import annotations

import numpy as np

from causal_lab.families.vcube_ps import kernel, srpt_broker, workload
from causal_lab.soak import Protocol

WORKLOADS = ("single", "many", "order", "topics", "churn")


def _pubsub_workload(g: np.random.Generator, d: int, kind: str, seed) -> kernel.Workload:
    n = 1 << d
    if kind == "single":
        return workload.single_publisher(d, float(g.uniform(0.05, 1.0)), seed)
    if kind == "many":
        return workload.many_publishers(d, float(g.uniform(0.05, 1.0)),
                                        float(g.choice([1.0, 100.0, 1000.0])), seed)
    if kind == "order":
        return workload.message_order(d, int(g.integers(1, min(n, 10) + 1)), seed)
    if kind == "topics":
        return workload.topics(d, int(g.integers(1, 9)), int(g.integers(1, 4 * n)),
                               str(g.choice(["uniform", "zipf"])), float(g.uniform(10, 500)),
                               0.825, seed)
    subscribers = int(g.integers(1, n))
    return workload.churn(d, subscribers, float(g.uniform(1, 40)) * subscribers / 10,
                          float(g.uniform(0.02, 0.2)), float(g.uniform(20, 300)), seed)


def draw_pubsub(g: np.random.Generator, fifo_only: bool) -> dict:
    jitter = not fifo_only and g.random() < 0.3
    return {
        "d": int(g.integers(3, 8)),
        "workload": str(g.choice(WORKLOADS)),
        "checkcb": str(g.choice(list(kernel.CHECKCB_RULES))),
        "cb_prune": bool(g.random() < 0.8),
        "ack_cost": str(g.choice(["free", "queued"])),
        "t_t": float(g.choice([0.0, 1.0, g.uniform(0, 5)])),
        "tpp_mean": float(g.uniform(1, 200)),
        "tpp_sigma": float(g.uniform(1, 80)) if jitter else 0.0,
        "workload_key": int(g.integers(2**31)),
        "srpt_membership": str(g.choice(list(kernel.SRPT_MEMBERSHIP))),  # SRPT-S only
    }


def run_pubsub(mode: str):
    def run(config: dict, seed: np.random.SeedSequence) -> kernel.Run:
        g = np.random.default_rng(config["workload_key"])
        w = _pubsub_workload(g, config["d"], config["workload"], seed)
        net = kernel.thesis_network(config["t_t"], config["tpp_mean"], config["tpp_sigma"])
        return kernel.simulate(w, net=net, seed=seed, mode=mode, ack_cost=config["ack_cost"],
                               checkcb=config["checkcb"], cb_prune=config["cb_prune"],
                               srpt_membership=config["srpt_membership"] if mode == "srpt" else "delegate_broadcast")
    return run


def draw_brokers(g: np.random.Generator) -> dict:
    n = 1 << int(g.integers(3, 8))
    brokers = 1 << int(g.integers(0, n.bit_length() - 1))
    return {"n_nodes": n, "brokers": brokers, "publishers": int(g.integers(1, n - brokers + 1)),
            "messages": int(g.integers(1, 64)), "mean_interval": float(g.uniform(1, 500)),
            "t_t": float(g.choice([0.0, 1.0, g.uniform(0, 5)])), "tpp_mean": float(g.uniform(1, 200)),
            "schedule": str(g.choice(list(workload.SCHEDULES)))}


def run_brokers(config: dict, seed: np.random.SeedSequence) -> srpt_broker.Run:
    w = workload.broker_publications(config["n_nodes"], config["brokers"], config["publishers"],
                                     config["messages"], config["mean_interval"], seed, config["schedule"])
    net = kernel.thesis_network(config["t_t"], config["tpp_mean"])
    return srpt_broker.simulate(w, net=net, seed=seed)


PROTOCOLS = (
    Protocol("vcube_ps", "vcube_ps", lambda g: draw_pubsub(g, fifo_only=False), run_pubsub("vcube_ps")),
    # SRPT-S delivers on reception: it needs FIFO links (constant t_pp)
    Protocol("vcube_ps", "srpt_s", lambda g: draw_pubsub(g, fifo_only=True), run_pubsub("srpt")),
    Protocol("vcube_ps", "srpt_b", draw_brokers, run_brokers),
)
