"""Random small configurations of the free-scale protocol and of IDR for ``causal-lab soak``:
2 to 24 peers, any delay interval (constant, narrow, wide, FIFO per-link channels), generation
gaps from much shorter to much longer than the delays, both starts, sending queues, TT garbage
collection on, off or at every relay."""

from __future__ import annotations

import numpy as np

from causal_lab.families.free_scale import channel, idr, kernel, workload
from causal_lab.soak import Protocol


def draw(g: np.random.Generator) -> dict:
    lo = float(g.choice([0.0, g.uniform(0, 100)]))
    hi = lo + float(g.choice([0.0, g.uniform(0, 20), g.uniform(0, 500)]))
    gap = float(g.choice([g.uniform(1, 20), g.uniform(20, 200), g.uniform(200, 1000)]))
    spread = float(g.uniform(0, 0.9))
    return {
        "n_peers": int(2 * g.integers(1, 13)),
        "gap_mean": gap, "gap_sigma": float(g.uniform(0, 0.3)) * gap,
        "gap_min": (1 - spread) * gap, "gap_max": (1 + spread) * gap,
        "messages": int(g.integers(1, 120)), "start": str(g.choice(workload.STARTS)),
        "t_pc": float(g.choice([0.0, g.uniform(0, 5)])), "t_t": float(g.choice([0.0, g.uniform(0, 2)])),
        "tpp": str(g.choice(["normal", "constant"])), "tpp_mean": float(g.uniform(lo, hi)),
        "tpp_sigma": float(g.uniform(0, (hi - lo) / 2 + 1)), "delay_min": lo, "delay_max": hi,
        "link_delay": str(g.choice(list(channel.LINK_DELAYS))),
        "tt_gc": bool(g.random() < 0.7), "gc_interval": float(g.choice([0.0, 10.0, 100.0])),
    }


def schedule(config: dict, seed: np.random.SeedSequence) -> workload.Schedule:
    """About ``messages`` messages in all, the window in their middle."""
    end = config["messages"] * config["gap_mean"] / config["n_peers"]
    win = workload.Window(end / 3, end)
    return workload.Schedule.periodic(config["n_peers"], config["gap_mean"], config["gap_sigma"],
                                      config["gap_min"], config["gap_max"], win, config["start"], seed)


def run_free_scale(config: dict, seed: np.random.SeedSequence) -> kernel.Run:
    return kernel.simulate(schedule(config, seed), net=channel.from_point(config, seed), seed=seed,
                           tt_gc=config["tt_gc"], gc_interval=config["gc_interval"])


def run_idr(config: dict, seed: np.random.SeedSequence) -> idr.Run:
    return idr.simulate(schedule(config, seed), net=channel.from_point(config, seed), seed=seed)


PROTOCOLS = (Protocol("free_scale", "free_scale", draw, run_free_scale),
             Protocol("free_scale", "free_scale_idr", draw, run_idr))
