"""Random small configurations of probabilistic-clock and DCS broadcast for ``causal-lab soak``:
2 to 30 processes, every send model, loads from a trickle to bursts, short and jittery or constant
(FIFO) delays, clocks from 2 entries up, every size policy with deactivation rounds, remove rounds
and load balancing switched on at random.

A run fails on a duplicate, a message not delivered everywhere, a process left blocked or with
pending messages, an open round or a broken counting invariant; out-of-order deliveries are the
protocols' measured error rate (a known flaw, counted apart).
"""

from __future__ import annotations

import numpy as np

from causal_lab.engine import network
from causal_lab.families.probabilistic_clocks import kernel, policy, workload
from causal_lab.soak import Protocol


def _draw_common(g: np.random.Generator) -> dict:
    jitter = g.random() < 0.8
    return {
        "n": int(g.integers(2, 31)),
        "load": float(g.choice([5.0, 50.0, 150.0, 400.0]) * g.uniform(0.5, 1.5)),
        "duration": float(g.uniform(0.5, 2.5)),
        "send_model": str(g.choice(workload.SEND_MODELS)),
        "k": int(g.integers(1, 4)),
        "tpp": "normal" if jitter else "constant",
        "tpp_mean": float(g.choice([0.0, 0.01, 0.1, 0.5])),
        "tpp_sigma": float(g.uniform(0.0, 0.2)) if jitter else 0.0,
    }


def draw_pc(g: np.random.Generator) -> dict:
    config = _draw_common(g)
    config["m"] = int(g.integers(config["k"], 80))
    config["f_mode"] = str(g.choice(["balanced", "hash"]))
    return config


def draw_dcs(g: np.random.Generator) -> dict:
    config = _draw_common(g)
    config.update({
        "m_c": int(g.integers(config["k"], 30)),
        "c_max": int(g.integers(1, 9)),
        "policy": str(g.choice(policy.DCS_POLICIES)),
        "p_star": float(g.choice([1e-2, 1e-4, 1e-6])),
        "hysteresis": float(g.uniform(0.0, 0.4)),
        "t_hold": float(g.choice([0.0, 0.1, 0.5])),
        "t_down_hold": float(g.choice([0.0, 0.3, 2.0])),
        "t_retry": float(g.choice([0.05, 0.3, 1.0])),
        "remove_rounds": bool(g.random() < 0.3),
        "sincr_mode": str(g.choice(list(kernel.SINCR_MODES))),
    })
    config["initial_components"] = int(g.integers(1, config["c_max"] + 1))
    config["balancing"] = bool(g.random() < 0.2)
    return config


def _workload(config: dict, seed: np.random.SeedSequence) -> workload.Workload:
    p = workload.pattern("constant", config["load"], config["duration"])
    return workload.Workload.from_pattern(p, config["n"], config["send_model"], seed)


def _net(config: dict) -> network.Network:
    return network.Network(t_pc=0.0, t_t=0.0, tpp=config["tpp"], tpp_mean=config["tpp_mean"],
                           tpp_sigma=config["tpp_sigma"], tpp_negative="clip")


def run_pc(config: dict, seed: np.random.SeedSequence) -> kernel.Run:
    return kernel.simulate(_workload(config, seed), net=_net(config), seed=seed,
                           config=kernel.Config.pc(config["m"], config["k"], config["f_mode"]))


def run_dcs(config: dict, seed: np.random.SeedSequence) -> kernel.Run:
    c = kernel.Config(
        m_c=config["m_c"], k=config["k"], c_max=config["c_max"], policy=config["policy"],
        p_star=config["p_star"], hysteresis=config["hysteresis"], t_hold=config["t_hold"],
        t_down_hold=config["t_down_hold"], t_retry=config["t_retry"],
        remove_rounds=config["remove_rounds"], t_remove_hold=config["t_down_hold"],
        sincr_mode=config["sincr_mode"], initial_components=config["initial_components"],
        initial_sincr="modulo", balancing=config["balancing"], t_balance=0.5)
    return kernel.simulate(_workload(config, seed), net=_net(config), seed=seed, config=c)


PROTOCOLS = (
    Protocol("probabilistic_clocks", "pc_broadcast", draw_pc, run_pc),
    Protocol("probabilistic_clocks", "dcs_broadcast", draw_dcs, run_dcs),
)
