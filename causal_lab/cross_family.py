"""The cross-family benchmark (issue 14): every causal broadcast protocol on one common workload.

What is common, and stated once here:

* **The workload** (``Point``): N processes, ``broadcasts`` application broadcasts at a system
  load of ``load`` broadcasts per second (the whole system's rate, so concurrency grows with the
  load, not with N), i.e. over ``duration_ms = 1000 * broadcasts / load``.  Instants are the
  sorted Uniform(0, duration) draws of a Poisson process conditioned on its count, senders are
  uniform over the N processes (with replacement), both from the replication's named stream
  ``cross_schedule`` (``causal_lab.engine.rng``).  The protocol is a ``variant_params`` entry,
  so every protocol of one replication replays the very same (instant, sender) list: common
  random numbers.  Times are in milliseconds; a family whose kernel counts in seconds converts
  in its adapter.
* **The delay model**: ``causal_lab.engine.network.Network`` with propagation only
  (``t_pc = t_t = 0``, Normal(``tpp_mean``, ``tpp_sigma``) per copy, negative draws clipped):
  the probabilistic-clock kernels model no sending queue, so that is the one model every family
  can run.  The free-scale family's ``channel`` expresses the same law (its clamp interval set to
  [0, inf) is the same clip); its draws are keyed per (message, destination) rather than per
  (sender, packet), so the law is shared but not the individual draws.
* **The overlay**: a family's own (VCube trees, the VCube-PS tree of the one topic, the
  free-scale groups and super peer); direct all-to-all otherwise.
* **The byte accounting** (``INTEGER``, ``HASH``): every integer (counter, process id, sequence
  number) 4 bytes, a bit vector its bits / 8 plus a 4-byte offset, a hash 8 bytes; the payload is
  never counted.  ``control_bytes`` is the mean control information per wire message carrying an
  application message (a send to several destinations counted once); ``stored_bytes`` the mean
  control state one process keeps (clocks, vectors, tables; buffered messages excluded).
  Adapters convert a family's own accounting to this one and say so in their docstrings.
* **The metric schema** (``METRICS``): the columns every adapter returns; NaN where a family's
  kernel does not record what the metric needs (its adapter says why).

Protocols plug in by convention: a family's ``cross.py`` defines ``PROTOCOLS``, a tuple of
``Protocol(name, label, exact, run)`` with ``run(point, seed) -> dict`` of the ``METRICS``;
``causal_lab.catalog`` finds them and builds the experiment with ``experiment(protocols)``.  This
module names no family and imports nothing that lists families (families import it).
"""

from __future__ import annotations

import dataclasses
import time
import zlib
from typing import Callable

import numpy as np

from causal_lab import oracle
from causal_lab.engine import network, rng
from causal_lab.experiment import Experiment
from causal_lab.params import Param, positive

INTEGER = 4  # bytes per counter, process id or sequence number
HASH = 8  # bytes per (64-bit) hash

# column -> (unit, meaning); every adapter returns exactly these keys
METRICS = {
    "control_bytes": ("B", "control information per wire message carrying an application message"),
    "stored_bytes": ("B", "control state kept per process"),
    "reception_latency": ("ms", "mean time from broadcast to reception, over (message, receiver)"),
    "delivery_latency": ("ms", "mean time from broadcast to delivery, over (message, receiver)"),
    "packets_per_broadcast": ("", "packets sent per application broadcast (relays, ACKs, control "
                              "and recovery messages included)"),
    "out_of_order": ("", "oracle: deliveries before a causal predecessor"),
    "duplicates": ("", "oracle: deliveries made twice"),
    "undelivered": ("", "oracle: (message, process) deliveries owed and never made"),
    "logged_broadcasts": ("", "application broadcasts in the run's log"),
    "senders_crc": ("", "CRC-32 of the senders in message-id order: equal for every protocol"),
}


@dataclasses.dataclass(frozen=True)
class Point:
    """One common configuration: the workload and the delay model every adapter runs."""

    n_nodes: int
    load: float  # broadcasts per second, whole system
    broadcasts: int
    tpp_mean: float  # ms
    tpp_sigma: float  # ms

    @classmethod
    def of(cls, point) -> "Point":
        return cls(point["n_nodes"], point["load"], point["broadcasts"], point["tpp_mean"],
                   point["tpp_sigma"])

    @property
    def duration_ms(self) -> float:
        return 1000.0 * self.broadcasts / self.load

    @property
    def net(self) -> network.Network:
        """The common delay model in ms (propagation only)."""
        return network.Network(t_pc=0.0, t_t=0.0, tpp="normal", tpp_mean=self.tpp_mean,
                               tpp_sigma=self.tpp_sigma, tpp_negative="clip")

    def net_seconds(self) -> network.Network:
        """The same model in seconds, for kernels that count time in seconds."""
        return dataclasses.replace(self.net, tpp_mean=self.tpp_mean / 1e3, tpp_sigma=self.tpp_sigma / 1e3)


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Who broadcasts when: message id k is ``senders[k]`` at ``times[k]`` (ms, ascending)."""

    n_nodes: int
    times: np.ndarray  # float64[B]
    senders: np.ndarray  # int64[B]

    def seqs(self) -> np.ndarray:
        """Each broadcast's rank among its sender's broadcasts, 1, 2, ..."""
        seqs = np.zeros(len(self.senders), np.int64)
        count = np.zeros(self.n_nodes, np.int64)
        for k, s in enumerate(self.senders):
            count[s] += 1
            seqs[k] = count[s]
        return seqs


def schedule(p: Point, seed: np.random.SeedSequence) -> Schedule:
    """The common broadcast schedule of one replication (stream ``cross_schedule``)."""
    g = rng.generator(seed, "cross_schedule")
    times = np.sort(g.uniform(0.0, p.duration_ms, p.broadcasts))
    senders = g.integers(0, p.n_nodes, p.broadcasts)
    return Schedule(p.n_nodes, times.astype(np.float64), senders.astype(np.int64))


@dataclasses.dataclass(frozen=True)
class Protocol:
    """One protocol of the benchmark, contributed by its family's ``cross.py``."""

    name: str
    label: str
    seed: str  # the seed file number of the protocol's paper ("000"...), prefix of its claim id
    exact: bool  # deterministic causal order: any out-of-order delivery is a bug
    run: Callable[[Point, np.random.SeedSequence], dict]


def oracle_counts(run, report: oracle.Report) -> dict:
    """The violation columns and the schedule check of a run's log."""
    bcast = run.log_kind == oracle.BROADCAST
    order = np.argsort(run.log_msg[bcast], kind="stable")
    senders = np.ascontiguousarray(run.log_node[bcast][order], np.int64)
    return {"out_of_order": int(report.errors), "duplicates": int(report.duplicates),
            "undelivered": int(report.missing), "logged_broadcasts": int(bcast.sum()),
            "senders_crc": int(zlib.crc32(senders.tobytes()))}


def _check_n(n: int) -> bool:
    return 2 <= n <= 4096 and n & (n - 1) == 0


def replicate_with(protocols: dict[str, Protocol], point, seed: np.random.SeedSequence) -> dict:
    """One protocol on the common workload of this replication: the ``METRICS`` row."""
    started = time.perf_counter()
    metrics = protocols[point["protocol"]].run(Point.of(point), seed)
    missing = set(METRICS) - set(metrics)
    if missing:
        raise ValueError(f"protocol {point['protocol']!r} did not return {sorted(missing)}")
    return {**{k: metrics[k] for k in METRICS}, "wall_seconds": time.perf_counter() - started}


LOADS = {"light": 20.0, "heavy": 300.0}  # broadcasts per second (the notebook explains why)


def experiment(found: tuple[Protocol, ...]) -> Experiment:
    """The ``cross_family`` experiment over the protocols the catalog found."""
    by_name = {p.name: p for p in found}
    names = list(by_name)
    both = [LOADS["light"], LOADS["heavy"]]
    return Experiment(
        name="cross_family",
        description="every causal broadcast protocol on one common workload (issue 14)",
        source="issue 14, cross-family benchmark (no single paper)",
        params=(
            Param("protocol", str, names[0] if names else "", "the protocol (a family's cross.py)",
                  choices=tuple(names)),
            Param("n_nodes", int, 64, "number of processes N (VCube overlays need a power of two)",
                  check=_check_n, allowed="powers of two from 2 to 4096"),
            Param("load", float, LOADS["heavy"], "system load: broadcasts per second, all processes",
                  check=positive, allowed="> 0"),
            Param("broadcasts", int, 400, "application broadcasts per run",
                  check=lambda x: x >= 1, allowed=">= 1"),
            Param("tpp_mean", float, 100.0, "mean propagation delay (ms)", check=positive, allowed="> 0"),
            Param("tpp_sigma", float, 25.0, "standard deviation of the propagation delay (ms)",
                  check=lambda x: 0 <= x < float("inf"), allowed=">= 0"),
        ),
        grid={
            "smoke": {"protocol": names, "n_nodes": [16], "load": both, "broadcasts": [100]},
            "default": {"protocol": names, "n_nodes": [64, 256, 1024], "load": both, "broadcasts": [200]},
            "paper": {"protocol": names, "n_nodes": [64, 128, 256, 512, 1024], "load": both,
                      "broadcasts": [1000]},
        },
        reps={"smoke": 1, "default": 1, "paper": 3},
        replicate=lambda point, seed: replicate_with(by_name, point, seed),
        variant_params=("protocol",),
        code_modules=tuple(sorted({p.run.__module__ for p in found})),
    )


# ------------------------------------------------------------------------------------------
# Notebook 90: the table, the sanity claims and the generated reading
# ------------------------------------------------------------------------------------------

NOTEBOOK = "90_cross_family"
VIOLATIONS = ("out_of_order", "duplicates", "undelivered")
SHOWN = ("control_bytes", "stored_bytes", "reception_latency", "delivery_latency",
         "packets_per_broadcast", "out_of_order_pct", *VIOLATIONS)


def load_name(load: float) -> str:
    return next((k for k, v in LOADS.items() if v == load), f"{load:g}/s")


def table(rows, found: tuple[Protocol, ...]):
    """Per (protocol, N, load): the metrics' means over replications, violations summed, and the
    out-of-order share of the deliveries owed (B (N - 1) per run); protocols in the order of their
    papers' seeds."""
    rows = rows.assign(out_of_order_pct=100.0 * rows.out_of_order / (rows.broadcasts * (rows.n_nodes - 1)))
    keys = ["protocol", "n_nodes", "load"]
    means = rows.groupby(keys)[[c for c in SHOWN if c not in VIOLATIONS]].mean()
    out = means.join(rows.groupby(keys)[list(VIOLATIONS)].sum()).reset_index()
    rank = {p.name: (p.seed, i) for i, p in enumerate(found)}
    out["label"] = out.protocol.map({p.name: p.label for p in found})
    out["load_name"] = out.load.map(load_name)
    out = out.sort_values(keys, key=lambda c: c.map(rank) if c.name == "protocol" else c)
    return out[["label", "n_nodes", "load_name", *SHOWN, "protocol", "load"]].reset_index(drop=True)


def measure(rows, found: tuple[Protocol, ...]) -> dict:
    """Sanity claims: exact protocols oracle-clean and complete in every run, probabilistic ones
    free of duplicates and losses, and one schedule per (N, load, replication) across protocols."""
    from causal_lab.claims import Measured

    out = {}
    for p in found:
        mine = rows[rows.protocol == p.name]
        counted = VIOLATIONS if p.exact else ("duplicates", "undelivered")
        bad = int(mine[list(counted)].to_numpy().sum())
        out[f"{p.seed}-cross-{p.name}"] = Measured(bool(len(mine)) and bad == 0,
                                                   f"{bad} in {len(mine)} runs")
    schedules = rows.groupby(["n_nodes", "load", "rep"]).senders_crc.nunique()
    out["000-cross-schedule"] = Measured(bool((schedules == 1).all()),
                                         f"{int((schedules > 1).sum())} of {len(schedules)} points differ")
    return out


def reading(t, found: tuple[Protocol, ...]) -> str:
    """Sentences quoting this run's table at its largest N and heavy load (notebook 90's close)."""
    n = int(t.n_nodes.max())
    exact = {p.name: p.exact for p in found}
    at = t[(t.n_nodes == n) & (t.load_name == "heavy")].set_index("protocol")
    at = at.assign(exact=at.index.map(exact))
    light = t[(t.n_nodes == n) & (t.load_name == "light")].set_index("protocol")
    timed = at[at.reception_latency.notna()]
    cheapest = at.control_bytes.idxmin()
    lines = [
        f"At N = {n} and the heavy load ({LOADS['heavy']:g} broadcasts/s), control information per "
        f"message ranges from {at.control_bytes.min():.0f} B ({at.label[cheapest]}) to "
        f"{at.control_bytes.max():.0f} B ({at.label[at.control_bytes.idxmax()]}); stored state per "
        f"process from {at.stored_bytes.min():.0f} B ({at.label[at.stored_bytes.idxmin()]}) to "
        f"{at.stored_bytes.max():.0f} B ({at.label[at.stored_bytes.idxmax()]}).",
        "Packets per broadcast: " + ", ".join(f"{at.label[p]} {v:.0f}" for p, v in at.packets_per_broadcast.items()) + ".",
        "Mean delivery latency where the kernel records it: " + ", ".join(
            f"{timed.label[p]} {v:.0f} ms (reception {timed.reception_latency[p]:.0f} ms)"
            for p, v in timed.delivery_latency.items()) + ".",
        "Out-of-order deliveries found by the oracle (share of deliveries): heavy load " + ", ".join(
            f"{at.label[p]} {at.out_of_order[p]:.0f} ({at.out_of_order_pct[p]:.2f} %)" for p in at.index
            if at.out_of_order[p] or light.out_of_order.get(p, 0)) + "; light load " + ", ".join(
            f"{light.label[p]} {light.out_of_order[p]:.0f}" for p in light.index if light.out_of_order[p] or at.out_of_order[p]) + ".",
        "From the light to the heavy load, control bytes per message: " + ", ".join(
            f"{at.label[p]} {light.control_bytes[p]:.0f} -> {at.control_bytes[p]:.0f} B" for p in at.index) + ".",
        "Protocols that can deliver out of order, from the fewest to the most errors at the heavy load: "
        + " < ".join(f"{at.label[p]} ({at.out_of_order_pct[p]:.2f} %)"
                     for p in at[~at.exact].sort_values("out_of_order_pct").index) + "; "
        + ("the exact protocols made none." if not at[at.exact].out_of_order.any()
           else "an exact protocol erred (a bug: the run would have failed its verification)."),
        f"Duplicates and undelivered messages over every protocol and point: "
        f"{int(t.duplicates.sum())} and {int(t.undelivered.sum())}.",
    ]
    return "\n\n".join(lines)
