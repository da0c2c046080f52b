"""Random small configurations of seed 004's protocols for ``causal-lab soak``: probabilistic
causal broadcast alone (with every detector evaluated in shadow half of the time), the hash
detector with dependency requests in both modes, and Mostéfaoui's detector with requests; 2 to
24 processes, clocks of 1 to 30 entries, serial and parallel recovery, narrow hashes, non-FIFO
and constant delays, sending queues.  Out-of-order deliveries are the protocols' error rate
(known flaws); a duplicate, a lost delivery or a run that does not terminate fails the soak."""

from __future__ import annotations

import numpy as np

from causal_lab.engine import network
from causal_lab.families.error_detectors import kernel
from causal_lab.families.error_detectors.workload import Schedule
from causal_lab.soak import Protocol


def draw(g: np.random.Generator) -> dict:
    n = int(g.integers(2, 25))
    m_size = int(g.integers(1, 31))
    k = int(g.integers(1, min(4, m_size) + 1))
    jitter = g.random() < 0.8
    # loads up to λ·0.1 s·k = M increments per delay: beyond, the clock is saturated and the
    # residual search spends its whole budget on every test (correct, but not a few ms)
    shortest = max(0.05, n * k * 0.1 / m_size)
    return {
        "n": n, "clock_size": m_size, "k": k,
        "period": float(g.uniform(shortest, max(3.0, 2 * shortest))),
        "duration": float(g.uniform(0.2, 2.0)),
        "jitter": float(g.choice([0.0, 0.01, 0.05])),
        "recovery": str(g.choice(kernel.RECOVERY)),
        "hash_bits": int(g.choice([64, 64, 64, 8, 2])),
        "shadow": bool(g.random() < 0.5),
        "mw_polarity": str(g.choice(kernel.MW_POLARITIES)),
        "t_pc": float(g.choice([0.0, 0.0, g.uniform(0, 0.01)])),
        "t_t": float(g.choice([0.0, 0.0, g.uniform(0, 0.002)])),
        "tpp": "normal" if jitter else "constant",
        "tpp_mean": float(g.uniform(0.0, 0.2)),
        "tpp_sigma": float(g.uniform(0.0, 0.08)) if jitter else 0.0,
        "tpp_negative": str(g.choice(list(network.NEGATIVE_RULES))),
    }


def _runner(detector: str, hash_mode: str = "authors"):
    def run(config: dict, seed: np.random.SeedSequence) -> kernel.Run:
        net = network.Network(**{k: config[k] for k in (*network.PARAMETER_NAMES, "tpp_negative")})
        n = config["n"]
        schedule = Schedule.periodic(n, config["period"], config["duration"], warmup=0.0,
                                     jitter=config["jitter"], seed=seed)
        return kernel.simulate(
            schedule, net=net, seed=seed, clock_size=config["clock_size"], k=config["k"],
            detector=detector, shadow=config["shadow"] and detector == "none",
            hash_mode=hash_mode, mw_polarity=config["mw_polarity"], recovery=config["recovery"],
            hash_bits=config["hash_bits"])
    return run


PROTOCOLS = (
    Protocol("error_detectors", "pc_broadcast", draw, _runner("none")),
    Protocol("error_detectors", "hash_authors_recovery", draw, _runner("hash", "authors")),
    Protocol("error_detectors", "hash_residual_recovery", draw, _runner("hash", "residual")),
    Protocol("error_detectors", "mostefaoui_recovery", draw, _runner("mostefaoui")),
)
