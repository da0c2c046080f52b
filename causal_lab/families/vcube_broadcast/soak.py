"""Random small configurations of VCube causal broadcast for ``causal-lab soak``: 2 to 128 nodes,
every variant (aggregation, single tree, payload), both broadcast laws, FIFO and non-FIFO links
(a delay per packet or one per link), windows from one burst to broadcasts far apart."""

from __future__ import annotations

import numpy as np

from causal_lab.engine import network, workload
from causal_lab.families.vcube_broadcast import kernel
from causal_lab.soak import Protocol


def draw(g: np.random.Generator) -> dict:
    jitter = g.random() < 0.7
    return {
        "d": int(g.integers(1, 8)),
        "window": float(g.choice([1.0, 50.0, 500.0, 5000.0]) * g.uniform(0.2, 2.0)),
        "sources": str(g.choice(workload.SOURCE_MODES)),
        "aggregate": bool(g.random() < 0.5),
        "trees": str(g.choice(list(kernel.TREES))),
        "payload": int(g.integers(0, 400)),
        "t_pc": float(g.choice([0.0, 1.0, g.uniform(0, 5)])),
        "t_t": float(g.choice([0.0, 1.0, g.uniform(0, 5)])),
        "tpp": "normal" if jitter else "constant",
        "tpp_mean": float(g.uniform(0, 200)),
        "tpp_sigma": float(g.uniform(0, 120)) if jitter else 0.0,
        "tpp_negative": str(g.choice(list(network.NEGATIVE_RULES))),
        "tpp_per": str(g.choice(kernel.TPP_PER)),
    }


def run(config: dict, seed: np.random.SeedSequence) -> kernel.Run:
    net = network.Network(**{k: config[k] for k in (*network.PARAMETER_NAMES, "tpp_negative")})
    schedule = kernel.Schedule.one_shot(config["d"], config["window"], config["sources"], seed)
    return kernel.simulate(schedule, net=net, seed=seed, aggregate=config["aggregate"],
                           trees=config["trees"], payload=config["payload"],
                           tpp_per=config.get("tpp_per", "packet"))


PROTOCOLS = (Protocol("vcube_broadcast", "vcube_broadcast", draw, run),)
