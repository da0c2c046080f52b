"""Experiments of thesis §5.6: VCube-PS against SRPT-S and SRPT-B (vcube_ps spec §5, E1-E8).

One experiment per workload; ``system`` is a variant parameter, so VCube-PS and the baselines
of one replication run the same workload (spec §5.0 "paired workloads").  Every run is checked
before its row is returned (``_checked``): the oracle verifies per-topic causal order on the
delivery log; the kernel's own counters must show no duplicate reception, receptions in
creation order per (source, topic), every ACK wave completed and no message left in a queue;
static runs must also deliver every publication to every subscriber.  Churn runs report what
the thesis allows (subscribers lost to stale views, messages still blocked) as metrics, and so
the oracle's deliveries after a causal successor, both under Lamport's transitive order
(``oracle_late``) and under the thesis's wording, immediate pairs only
(``oracle_late_immediate``): with the pseudo-code's CHECKCB (``checkcb = strict``) runs of ten
minutes and more have some, which notebook 37 reports rather than the sweep stop.  Static runs
still raise.
"""

from __future__ import annotations

import time

import numpy as np

from causal_lab import oracle
from causal_lab.engine import network
from causal_lab.experiment import Experiment
from causal_lab.families.vcube_ps import kernel as vcube_ps
from causal_lab.families.vcube_ps import srpt_broker
from causal_lab.families.vcube_ps import workload as pubsub_workload
from causal_lab.params import Param, ParameterError, non_negative, positive, power_of_two

_N_CHECK, _N_ALLOWED = power_of_two(8, vcube_ps.MAX_NODES)
SIZES = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
SYSTEMS = ("vcube_ps", "srpt")
QUEUE_BINS = {"0": (0, 0), "0_2": (0, 2), "2_4": (2, 4), "4_8": (4, 8), "8_16": (8, 16),
              "16_32": (16, 32), "32_4096": (32, 4096), "4096_8192": (4096, 8192)}
BARRIER_BINS = {"0": (0, 0), "1": (1, 1), "2": (2, 2), "3": (3, 3), "4": (4, 4), "5_9": (5, 9),
                "10": (10, 10), "11_14": (11, 14), "15_19": (15, 19), "ge20": (20, 10**9)}


def _fraction(x: float) -> bool:
    return 0 < x <= 1


# thesis ch. 5's delay model (spec §3.2, A18): t_send = t_t = 1 per copy, constant t_pp = 100
NET_PARAMS = (
    *network.parameters(t_pc=0.0, t_t=1.0, tpp="constant", tpp_mean=100.0, tpp_sigma=0.0),
    Param("ack_cost", str, "free", "ACKs bypass the sending queue (free) or are ordinary copies (queued), spec A4", choices=("free", "queued")),
)
SYSTEM = Param("system", str, "vcube_ps", "VCube-PS or the single-root-per-topic baseline SRPT-S", choices=SYSTEMS)


def _n(default: int, doc: str = "number of nodes N") -> Param:
    return Param("n_nodes", int, default, doc, check=_N_CHECK, allowed=_N_ALLOWED)


def _net(point) -> network.Network:
    return network.from_point(point, tpp_negative="clip")


def _d(point) -> int:
    return point["n_nodes"].bit_length() - 1


# ------------------------------------------------------------------------------------------
# Running and checking one system on one workload
# ------------------------------------------------------------------------------------------


def _checked(workload: vcube_ps.Workload, point, seed, layout: str = "rows") -> tuple[vcube_ps.Run, dict]:
    """Simulate ``point["system"]`` on ``workload`` with its records in ``layout`` (the cheaper
    for that workload: ``kernel.LAYOUTS``), verify the run (``Run.verify``), return it and the
    metrics every experiment shares."""
    run = vcube_ps.simulate(workload, net=_net(point), seed=seed, mode=point["system"],
                            ack_cost=point["ack_cost"],
                            checkcb=point.get("checkcb", "strict"),
                            cb_prune=point.get("cb_prune", True),
                            srpt_membership=point.get("srpt_membership", "delegate_broadcast"),
                            layout=layout)
    report = run.verify()
    c = run.counters
    receptions = c["subscriber_receptions"] + c["false_positives"]
    metrics = {
        "latency": run.mean_latency(),
        "latency_from_start": run.mean_latency(from_start=True),
        "latency_max": c["latency_max"],
        "delivery_latency": run.mean_delivery_latency(),
        "path_wait": run.mean_path_wait(),
        "path_wait_copies": run.mean_path_wait("copy"),
        "pub_copies": c["pub_copies"],
        "delegations": c["delegations"],
        "sub_copies": c["sub_copies"],
        "uns_copies": c["uns_copies"],
        "ack_copies": c["ack_copies"],
        "copies": c["copies"],
        "publications": len(run.pubs),
        "subscriber_receptions": c["subscriber_receptions"],
        "false_positives": c["false_positives"],
        "false_positive_pct": 100.0 * c["false_positives"] / receptions if receptions else 0.0,
        "deliveries": c["deliveries"],
        "queue_wait": c["wait_sum"] / c["copies"] if c["copies"] else 0.0,
        "missing": run.missing_deliveries(),
        "blocked_end": c["pending_live"],
        "barrier_replaced": c["barrier_replaced"],
        "oracle_errors_strict": report.errors,
        "oracle_late": report.late,
        "events": c["events"],
    }
    return run, metrics


def _timed(replicate):
    def wrapped(point, seed):
        started = time.perf_counter()
        row = replicate(point, seed)
        row["wall_seconds"] = time.perf_counter() - started  # the one non-deterministic column
        return row

    wrapped.__doc__ = replicate.__doc__
    return wrapped


# ------------------------------------------------------------------------------------------
# E1/E2 (Figures 5.6 and 5.7): one publisher, one message
# ------------------------------------------------------------------------------------------


def replicate_single(point, seed) -> dict:
    """One publication at t = 0 by a random subscriber; SRPT tree size, relays and path length."""
    w = pubsub_workload.single_publisher(_d(point), point["sub_fraction"], seed)
    run, m = _checked(w, point, seed)
    members = np.flatnonzero(w.initial[0])
    publisher, root = int(w.nodes[0]), int(w.roots[0])
    others = members[members != publisher]
    hops = np.array([bin(root ^ int(x)).count("1") for x in others]) + (publisher != root)
    m.update({
        "n_subscribers": len(members),
        "relays": m["false_positives"],
        "tree_size": m["pub_copies"] - m["delegations"] + 1,
        "srpt_mean_hops": float(hops.mean()) if len(hops) else 0.0,
        "publisher_is_root": bool(publisher == root),
    })
    return m


# ------------------------------------------------------------------------------------------
# E3/E4 (Figure 5.8, Table 5.1): many publishers of one topic
# ------------------------------------------------------------------------------------------


def replicate_many(point, seed) -> dict:
    """Publishers send one message each in [0, window]; queue-length distribution per node."""
    w = pubsub_workload.many_publishers(_d(point), point["pub_fraction"], point["window"], seed)
    run, m = _checked(w, point, seed)
    q = run.queue_mean
    for name, (lo, hi) in QUEUE_BINS.items():
        m[f"qbin_{name}"] = int((q == 0).sum()) if hi == 0 else int(((q > lo) & (q <= hi)).sum())
    busiest = int(np.argmax(q))
    m.update({
        "q_share_4_16": float(((q > 4) & (q <= 16)).mean()),
        "q_nodes_gt64": int((q > 64).sum()),
        "q_busiest_mean": float(q[busiest]),
        "q_busiest_max": int(run.queue_max[busiest]),
        "q_busiest_is_root": bool(busiest == int(w.roots[0])),
        "q_root_mean": float(q[int(w.roots[0])]),
        "q_root_max": int(run.queue_max[int(w.roots[0])]),
    })
    return m


# ------------------------------------------------------------------------------------------
# E5 (Figure 5.9, §5.6.4): message order
# ------------------------------------------------------------------------------------------


def replicate_order(point, seed) -> dict:
    """p initial publishers, everybody else reacts after its p-th delivery; causal barrier
    sizes and delivery delays."""
    w = pubsub_workload.message_order(_d(point), point["initial_publishers"], seed)
    run, m = _checked(w, point, seed)
    sizes = run.barrier_size[run.pubs]
    pct = lambda mask: 100.0 * float(mask.mean())  # noqa: E731
    for name, (lo, hi) in BARRIER_BINS.items():
        m[f"cb_{name}_pct"] = pct((sizes >= lo) & (sizes <= hi))
    counts = np.bincount(sizes)
    counts[:2] = 0
    c = run.counters
    m.update({
        "cb_lt5_pct": pct(sizes < 5),
        "cb_lt15_pct": pct(sizes < 15),
        "cb_mean": float(sizes.mean()),
        "cb_mode_ge2": int(np.argmax(counts)) if counts.any() else 0,
        "delay_zero_pct": 100.0 * c["delay_zero"] / c["deliveries"],
        "delay_lt10_pct": 100.0 * c["delay_lt10"] / c["deliveries"],
        "delay_gt50": c["delay_gt50"],
        "delay_max": c["delay_max"],
        "delay_mean": c["delay_sum"] / c["deliveries"],
    })
    return m


# ------------------------------------------------------------------------------------------
# E6 (Figure 5.10): 128 topics, uniform or Zipf
# ------------------------------------------------------------------------------------------


def replicate_topics(point, seed) -> dict:
    w = pubsub_workload.topics(_d(point), point["n_topics"], point["messages"],
                               point["distribution"], point["period"], point["zipf_s"], seed)
    run, m = _checked(w, point, seed)
    per_topic = np.bincount(w.topics, minlength=w.n_topics)
    m["hottest_topic_share"] = float(per_topic.max() / per_topic.sum())
    return m


# ------------------------------------------------------------------------------------------
# E7 (Figure 5.11): churn
# ------------------------------------------------------------------------------------------


def replicate_churn(point, seed) -> dict:
    """Swap churn at a t_med label (minutes; 0 = static) or an explicit rate (% of N_s per
    minute, when churn_pct > 0); 1 u.t. = 1 ms."""
    ns = point["n_subscribers"]
    if point["churn_pct"] > 0:
        rate = point["churn_pct"] / 100.0 * ns
    elif point["t_med"] > 0:
        rate = pubsub_workload.churn_rate(ns, point["t_med"])
    else:
        rate = 0.0
    w = pubsub_workload.churn(_d(point), ns, rate, point["minutes"], point["period"], seed)
    run, m = _checked(w, point, seed, layout="sources")  # one publication at a time
    swaps = int((w.ops == vcube_ps.OP_SUBSCRIBE).sum())
    m.update({
        # immediate pairs are a subset of oracle_late, which static runs have already shown is 0
        "oracle_late_immediate": oracle.late_immediate(run.n_nodes, run.log_kind, run.log_node,
                                                       run.log_msg, run.msg_topic) if rate else 0,
        "swaps": swaps,
        "swaps_per_minute": swaps / point["minutes"],
        "target_swaps_per_minute": rate,
        "subscribers_end": int(run.subscribed.sum()),
        # receptions that were never delivered because the node unsubscribed while they waited
        "dropped": m["subscriber_receptions"] - m["deliveries"] - m["blocked_end"],
        **_stable_shares(w, run),
    })
    return m


def _stable_shares(w: vcube_ps.Workload, run: vcube_ps.Run) -> dict:
    """The liveness a subscriber that never churns gets (spec §2.10: it delivers every later
    publication): over the nodes subscribed from t = 0 to the end of a churn run with no
    operation of their own but publications, the share of the other nodes' publications they
    received and the share they delivered (%; NaN when churn left no such node)."""
    churned = np.zeros(w.n, bool)
    churned[w.nodes[w.ops != vcube_ps.OP_PUBLISH]] = True
    stable = w.initial[0] & ~churned
    pubs = run.pubs
    own = int(stable[run.msg_src[pubs]].sum())  # a source counts as reached by its own PUB
    owed = int(stable.sum()) * len(pubs) - own
    if owed == 0:
        return {"stable_nodes": int(stable.sum()), "stable_received_pct": np.nan,
                "stable_delivered_pct": np.nan}
    received = int(run.received[np.ix_(pubs, np.flatnonzero(stable))].sum()) - own
    delivered = int(np.count_nonzero((run.log_kind == oracle.DELIVER) & stable[run.log_node]))
    return {"stable_nodes": int(stable.sum()), "stable_received_pct": 100.0 * received / owed,
            "stable_delivered_pct": 100.0 * delivered / owed}


# ------------------------------------------------------------------------------------------
# E8 (Figure 5.12): brokers
# ------------------------------------------------------------------------------------------

BROKER_SYSTEMS = ("vcube_ps", "srpt", "srpt_b32", "srpt_b256", "srpt_b2048")


def replicate_brokers(point, seed) -> dict:
    """P publishers, 128 messages (one each, periodic with a random phase; or Poisson sources
    under a global cap); SRPT-B splits latency into Tree and B-S parts."""
    system = point["system"]
    if system.startswith("srpt_b"):
        started = time.perf_counter()
        w = pubsub_workload.broker_publications(point["n_nodes"], int(system[6:]), point["publishers"],
                                                point["messages"], point["mean_interval"], seed,
                                                schedule=point["schedule"])
        run = srpt_broker.simulate(w, net=_net(point), seed=seed)
        run.verify()
        return {"latency": run.total_mean, "tree_latency": run.tree_mean,
                "bs_latency": run.bs_mean, "events": run.events,
                "wall_seconds": time.perf_counter() - started}
    w = pubsub_workload.broker_subscribers(_d(point), point["publishers"], point["messages"],
                                           point["mean_interval"], seed, schedule=point["schedule"])
    _, m = _checked(w, point, seed)
    m.update({"tree_latency": m["latency"], "bs_latency": 0.0})
    return m


def _check_links(point) -> None:
    """SRPT-S and SRPT-B deliver on reception, which needs FIFO links (a constant t_pp)."""
    if point["system"] != "vcube_ps" and point["tpp"] != "constant":
        raise ParameterError(f"system {point['system']!r} delivers on reception and needs FIFO links: "
                             f"tpp must be 'constant', got {point['tpp']!r}")


def _check_churn(point) -> None:
    _check_links(point)
    if point["n_subscribers"] >= point["n_nodes"]:
        raise ParameterError(f"n_subscribers must be < n_nodes (a pool of candidates, spec A5), "
                             f"got {point['n_subscribers']} >= {point['n_nodes']}")
    if point["srpt_membership"] != "delegate_broadcast" and point["system"] != "srpt":
        raise ParameterError(f"srpt_membership={point['srpt_membership']!r} is an SRPT-S option; "
                             f"system={point['system']!r} keeps the default 'delegate_broadcast'")
    if point["t_med"] > 0 and point["churn_pct"] > 0:
        raise ParameterError(f"give a t_med label or a churn rate, not both (t_med = {point['t_med']}, "
                             f"churn_pct = {point['churn_pct']}); set t_med = 0 for a churn rate")


def _check_brokers(point) -> None:
    _check_links(point)
    system = point["system"]
    if system.startswith("srpt_b") and int(system[6:]) >= point["n_nodes"]:
        raise ParameterError(f"{system}: brokers must be fewer than n_nodes={point['n_nodes']}")


SINGLE = Experiment(
    name="ps_single",
    description="One publisher, one message: VCube-PS vs SRPT-S latency, #PUB, relays",
    source="003 §5.6.2 Figures 5.6 and 5.7",
    params=(_n(1024), Param("sub_fraction", float, 0.25, "fraction of subscribers", check=_fraction, allowed="0 < f <= 1"),
            SYSTEM, *NET_PARAMS),
    grid={
        "smoke": {"n_nodes": [8, 16, 32, 64], "sub_fraction": [0.25, 1.0], "system": list(SYSTEMS)},
        "default": {"n_nodes": SIZES, "sub_fraction": [0.25, 1.0], "system": list(SYSTEMS)},
        "paper": {"n_nodes": SIZES, "sub_fraction": [0.25, 1.0], "system": list(SYSTEMS)},
    },
    reps={"smoke": 2, "default": 10, "paper": 40},
    replicate=_timed(replicate_single),
    validate_point=_check_links,
    variant_params=("system",),
)

MANY = Experiment(
    name="ps_many",
    description="Several publishers of one topic (all subscribed): latency and queue loads",
    source="003 §5.6.3 Figure 5.8 and Table 5.1",
    params=(_n(256), Param("pub_fraction", float, 1.0, "fraction of nodes that publish once", check=_fraction, allowed="0 < f <= 1"),
            Param("window", float, 1000.0, "publication instants are Uniform[0, window]", check=positive, allowed="> 0"),
            SYSTEM, *NET_PARAMS),
    grid={
        "smoke": {"n_nodes": [8, 16, 32, 64], "pub_fraction": [0.25, 1.0], "system": list(SYSTEMS)},
        "default": {"n_nodes": SIZES[:8], "pub_fraction": [0.25, 1.0], "system": list(SYSTEMS), "tpp_mean": [100.0, 1000.0]},
        "paper": {"n_nodes": SIZES, "pub_fraction": [0.25, 1.0], "system": list(SYSTEMS), "tpp_mean": [100.0, 1000.0]},
    },
    reps={"smoke": 1, "default": 2, "paper": 10},  # 40 do not fit: see notebook 33
    replicate=_timed(replicate_many),
    validate_point=_check_links,
    variant_params=("system", "ack_cost"),
)

ORDER = Experiment(
    name="ps_order",
    description="Message order: causal barrier sizes and delivery delays (reactive publications)",
    source="003 §5.6.4 Figure 5.9",
    params=(_n(256), Param("initial_publishers", int, 1, "p: initial publishers; the others publish after their p-th delivery", check=lambda p: p >= 1, allowed=">= 1"),
            Param("cb_prune", bool, True, "prune the barrier with the original cb at delivery (A4:94) or never (A9 variant)"),
            Param("checkcb", str, "strict", "CHECKCB as the pseudo-code (strict), the prose (lenient), or without the first_rec shortcut (safe), A8", choices=tuple(vcube_ps.CHECKCB_RULES)),
            Param("system", str, "vcube_ps", "only VCube-PS has causal barriers", choices=("vcube_ps",)),
            *NET_PARAMS),
    grid={
        "smoke": {"n_nodes": [32], "initial_publishers": [1, 10]},
        "default": {"initial_publishers": [1, 10], "cb_prune": [True, False]},
        "paper": {"initial_publishers": [1, 10], "cb_prune": [True, False]},
    },
    reps={"smoke": 2, "default": 5, "paper": 40},
    replicate=_timed(replicate_order),
    variant_params=("cb_prune", "checkcb", "ack_cost"),
)

TOPICS = Experiment(
    name="ps_topics",
    description="128 topics, every node publishes every 500 u.t. on a uniform or Zipf topic",
    source="003 §5.6.5 Figure 5.10",
    params=(_n(256), Param("n_topics", int, 128, "number of topics", check=lambda t: 1 <= t, allowed=">= 1"),
            Param("messages", int, 1024, "total publications M", check=lambda m: m >= 1, allowed=">= 1"),
            Param("distribution", str, "uniform", "topic of each publication", choices=("uniform", "zipf")),
            Param("zipf_s", float, 0.825, "Zipf exponent (§5.6.5)", check=non_negative, allowed=">= 0"),
            Param("period", float, 500.0, "publication period of every node (u.t.)", check=positive, allowed="> 0"),
            SYSTEM, *NET_PARAMS),
    grid={
        "smoke": {"n_nodes": [32], "n_topics": [16], "messages": [64, 256], "distribution": ["uniform", "zipf"], "system": list(SYSTEMS)},
        "default": {"messages": [2**k for k in range(8, 15)], "distribution": ["uniform", "zipf"], "system": list(SYSTEMS)},
        "paper": {"messages": [2**k for k in range(8, 15)], "distribution": ["uniform", "zipf"], "system": list(SYSTEMS)},
    },
    reps={"smoke": 1, "default": 1, "paper": 10},  # 40 do not fit: see notebook 36
    replicate=_timed(replicate_topics),
    validate_point=_check_links,
    variant_params=("system", "ack_cost", "distribution", "zipf_s"),
)

CHURN = Experiment(
    name="ps_churn",
    description="Churn: swaps of subscribers at a t_med label or churn rate; 1 u.t. = 1 ms",
    source="003 §5.6.6 Figure 5.11",
    params=(_n(4096, "number of nodes N (spec A5: 4096)"),
            Param("n_subscribers", int, 1000, "N_s, kept constant", check=lambda x: x >= 1, allowed=">= 1"),
            Param("t_med", float, 0.0, "t_med label in minutes (0: static unless churn_pct > 0), spec A6", check=non_negative, allowed=">= 0"),
            Param("churn_pct", float, 0.0, "churn rate in % of N_s per minute (Figure 5.11(b)); needs t_med = 0", check=non_negative, allowed=">= 0"),
            Param("minutes", float, 120.0, "simulated duration (minutes)", check=positive, allowed="> 0"),
            Param("period", float, 500.0, "one publication every period (ms)", check=positive, allowed="> 0"),
            Param("checkcb", str, "strict", "CHECKCB as the pseudo-code (strict), the prose (lenient), or without the first_rec shortcut (safe), A8", choices=tuple(vcube_ps.CHECKCB_RULES)),
            Param("srpt_membership", str, "delegate_broadcast",
                  "SRPT-S membership: SUB/UNS broadcast from the root (spec §4.2), the authors' oracle "
                  "fast subscription with FORWARD path marks (fast_subscription), or the same with marks "
                  "never cleared (fast_sticky); SRPT-S only", choices=tuple(vcube_ps.SRPT_MEMBERSHIP)),
            SYSTEM, *NET_PARAMS),
    grid={
        "smoke": {"n_nodes": [256], "n_subscribers": [100], "t_med": [0.0, 1.0], "minutes": [2.0], "system": list(SYSTEMS)},
        "default": {"n_subscribers": [500, 1000, 2000, 4000], "t_med": [0.0, 1.0], "minutes": [2.0], "system": list(SYSTEMS)},
        "paper": {"n_subscribers": [500, 1000, 2000, 4000], "t_med": [0.0, 1.0, 30.0, 60.0], "system": list(SYSTEMS)},
    },
    reps={"smoke": 1, "default": 1, "paper": 3},  # 120-minute runs: see notebook 37
    replicate=_timed(replicate_churn),
    validate_point=_check_churn,
    # churn labels are variants too: the static baseline and the churn runs of one replication
    # start from the same subscribers and publication stream (paired comparisons, E7-3/E7-4)
    variant_params=("system", "ack_cost", "t_med", "churn_pct", "checkcb", "srpt_membership"),
)

BROKERS = Experiment(
    name="ps_brokers",
    description="VCube-PS, SRPT-S and broker-based SRPT-B (32/256/2048 brokers), 4096 nodes",
    source="003 §5.6.7 Figure 5.12",
    params=(_n(4096), Param("publishers", int, 128, "P publishers (spec A16)", check=lambda p: p >= 1, allowed=">= 1"),
            Param("messages", int, 128, "global cap on publications", check=lambda m: m >= 1, allowed=">= 1"),
            Param("mean_interval", float, 500.0, "publication period (periodic) or mean inter-publication time (poisson) of a publisher", check=positive, allowed="> 0"),
            Param("schedule", str, "periodic",
                  "each publisher publishes every mean_interval from a random phase, so P = 128 publish once "
                  "(spec A16 amendment); or Poisson sources under the global cap (the spec body's E8, a "
                  "sensitivity option)", choices=("periodic", "poisson")),
            Param("system", str, "vcube_ps", "system", choices=BROKER_SYSTEMS), *NET_PARAMS),
    grid={
        "smoke": {"n_nodes": [256], "publishers": [16], "messages": [16], "system": ["vcube_ps", "srpt", "srpt_b32"]},
        "default": {"system": list(BROKER_SYSTEMS)},
        "paper": {"system": list(BROKER_SYSTEMS), "publishers": [32, 48, 64, 128]},
    },
    reps={"smoke": 1, "default": 3, "paper": 10},  # see notebook 38
    replicate=_timed(replicate_brokers),
    validate_point=_check_brokers,
    # the schedule is a variant too: both schedules of a replication draw the same publishers
    # and the Poisson one keeps the seeds (and results) it had before the periodic default
    variant_params=("system", "ack_cost", "schedule"),
)

EXPERIMENTS = (SINGLE, MANY, ORDER, TOPICS, CHURN, BROKERS)
