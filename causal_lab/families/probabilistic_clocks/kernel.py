"""Causal broadcast with Dynamic Clock Sets (seed 002 Algorithm 2) and, as its one-component
special case, with Mostéfaoui-Weiss probabilistic clocks (Algorithm 1), on one compiled loop.

Follow one message from broadcast to delivery:

1. ``_broadcast`` at p_i (a workload instant): the size policy may first expand the clock
   (``_policy``, spec §2.8); p_i adds 1 to its entries f(p_i) of every component in S_incr,i,
   stores ``need`` = its active components minus that increment (what a receiver must have
   delivered, spec §1.5) and S_incr,i with the message, logs the broadcast (its own delivery)
   and draws one independent delay per other process (the network's counter-based draw (b, r):
   every variant of a replication sees the same delays).  The N - 1 copies, sorted by arrival,
   wait in an arrival list; only the next one is in the arrival heap (``copies``).
2. ``_arrival`` pops a copy and hands it to ``_receive`` at p_i, which adds its reception
   latency (arrival instant minus broadcast instant) to a sum; the load estimate counts it;
   during a round p_i defers a message that would need an Add/Activate (``_needs_dynamicity``);
   ``_check_expand`` adds the components p_i lacks and re-activates those that carry news
   (seed 002 §IV-B); then the message is delivered if ``_deliverable`` (every entry of the first
   |D_m| components is at least ``need``), else it joins p_i's pending list.
3. ``_deliver`` adds 1 to the sender's entries of the sender's components S_incr,m (Algorithm 2
   line 6, counting semantics: a clock is the sum of the increments of everything its process
   delivered), logs the delivery and adds its delivery latency (delivery instant minus
   broadcast instant) to a sum; ``_scan_pending`` then delivers pending messages in arrival
   order, restarting after each delivery, until none is deliverable ("iterative delivery").

Whether a delivery respected causal order is never decided here: the kernel only logs, and the
independent ``causal_lab.oracle`` finds the out-of-order deliveries (spec §4.2, error_strict).

The DCS machinery around this path (spec §2): component operations Add / Activate /
Deactivate / Remove (``_add`` ...), S_incr re-assignment (``_reassign``), the size policies
(``_policy``: model, formula_only, authors_table; tables from ``policy``), the two-phase
deactivation and remove rounds coordinated by p_0 and exchanged as control messages with their
own delays (``_start_round``, ``_on_control``), the blocking of dynamicity during a round with
deferred receptions, and the load balancing of seed 002 §V-C (``_balance``).  A probabilistic
clock of M entries is a DCS of one component of M entries with policy ``static``: the same code
path, without the DCS branches.

Layout: clocks are one int32 array, process i's component c at ``(i * c_max + c) * m_c``, so a
message's first a_m components are one contiguous slice; a message's ``need`` lives in a pool
row (freed when its last copy is delivered) followed by the generations of its components.
S_incr sets are bitmasks (c_max <= 32).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from causal_lab import oracle
from causal_lab.engine import events, network, rng, state
from causal_lab.engine.jit import njit
from causal_lab.engine.run import Run as BaseRun
from causal_lab.families.probabilistic_clocks import clocks, copies, policy as policies
from causal_lab.families.probabilistic_clocks.workload import (
    OP_BROADCAST, OP_DEACTIVATION_ROUND, OP_EXPAND, OP_REMOVE_ROUND, Workload)

EV_OP, EV_CONTROL, EV_TIMER, EV_SAMPLE, EV_BALANCE, EV_LOCAL = range(6)  # copies: own heap
LOCAL_POLICY, LOCAL_ANSWER = 0, 1  # EV_LOCAL: work a process does right after a decision
# control messages of the rounds (spec §2.9, §2.10)
DEACT, ACK_DEACT, DECIDE_DEACT, REMOVE, ACK_REMOVE, DECIDE_REMOVE = range(6)
NO_ROUND, DEACT_ROUND, REMOVE_ROUND = 0, 1, 2
RANDOM, MODULO = 0, 1
SINCR_MODES = {"random": RANDOM, "modulo": MODULO}
STATIC, NONE, MODEL, FORMULA_ONLY, AUTHORS_TABLE = (
    policies.STATIC, policies.NONE, policies.MODEL, policies.FORMULA_ONLY, policies.AUTHORS_TABLE)
C_MAX_LIMIT = 32  # S_incr sets are bitmasks in an int64
NODE_LIMIT = 1 << 16  # control events pack (source, destination) in 32 bits

# counters[...]
(C_EVENTS, C_BROADCASTS, C_RECEPTIONS, C_DELIVERIES, C_WAITED, C_DEFERRED, C_EXPANSIONS,
 C_ADDS, C_REACTIVATIONS, C_REASSIGNS, C_SOFT, C_DEACT_ROUNDS, C_DEACT_OK, C_DEACTIVATIONS,
 C_REMOVE_ROUNDS, C_REMOVE_OK, C_REMOVALS, C_CONTROL, C_CONTROL_INTS, C_FAIL_1, C_FAIL_2,
 C_FAIL_3, C_FAIL_4, C_MOVES, C_STALE, C_QUEUED, C_MAX_PENDING, C_ATTACHED) = range(28)
N_COUNTERS = 28
COUNTER_NAMES = (
    "events", "broadcasts", "receptions", "deliveries", "waited", "deferred", "expansions",
    "adds", "reactivations", "reassignments", "soft_contractions", "deact_rounds", "deact_ok",
    "deactivations", "remove_rounds", "remove_ok", "removals", "control_messages",
    "control_integers", "deact_fail_cond1", "deact_fail_cond2", "deact_fail_cond3",
    "deact_fail_cond4", "balancing_moves", "stale_generations", "queued_round_messages",
    "max_pending", "attached_entries")
# fcounters[...]: seconds summed over the run (the latency sums divide by the receptions and
# deliveries counters: application messages at processes other than their sender only)
F_BLOCKED, F_RECEPTION_LATENCY, F_DELIVERY_LATENCY = range(3)
N_FCOUNTERS = 3
# tops[...]: fill levels and free-list heads of the growable tables (causal_lab.engine.state)
T_LOG, T_PEND, T_PEND_FREE, T_NEED, T_NEED_FREE, T_ARR, T_ARR_FREE = range(7)
PE_MSG, PE_NEXT = range(2)  # pending / deferred list entries

FIELDS = (
    # configuration
    "n", "k", "m_c", "c_max", "width", "dynamic", "policy", "sincr_mode", "rounds",
    "remove_rounds", "balancing", "window", "count_own", "hyst", "t_hold", "t_down_hold",
    "t_retry", "t_remove_hold", "t_balance", "ratio", "min_mean", "move_p", "t_stop",
    "thresholds", "expand_table", "reduce_table", "f", "net", "control_net", "sincr_key",
    "balance_key", "scripted", "delays", "script",
    # per process
    "clock", "n_comp", "active", "sincr", "shrink", "shrink_since", "last_change", "blocked",
    "blocked_since", "queued", "seq", "gen", "ring", "ring_n", "ring_lo", "p_head", "p_tail",
    "p_len", "d_head", "d_tail", "sincr_draws", "balance_draws", "script_pos", "streak",
    "bal_count", "inactive_since",
    # messages (index b = broadcast number = the oracle's message id)
    "m_src", "m_seq", "m_comps", "m_sincr", "m_row", "m_left", "m_time", "m_arr",
    "need", "arr_node", "arr_time", "lists", "keys", "heap_t", "heap_b", "heap_c", "heap_n",
    # rounds (one at a time, coordinated by p_0)
    "round_kind", "round_c", "round_values", "round_acks", "round_ok", "round_top", "last_decision",
    "round_log", "round_time", "n_rounds", "rm_need", "rm_last",
    # prefixes for the remove round
    "seen", "prefix", "by_seq", "seq_off",
    # observables
    "counters", "fcounters", "sec_log", "sec_bcast", "sec_attached", "sec_mean", "sec_min",
    "sec_max", "sec_comp", "moves", "log", "tops",
)
StateType, State = state.define("State", FIELDS, __name__)
POOL = 256


@dataclasses.dataclass(frozen=True)
class Config:
    """The protocol variant and every constant of the policies (spec §2.8-§2.11, defaults)."""

    m_c: int = 50  # entries per component (a probabilistic clock: its size M)
    k: int = 2
    c_max: int = 32
    policy: str = "model"
    p_star: float = 1e-5
    load_window: float = 1.0
    hysteresis: float = 0.15
    t_hold: float = 0.5
    t_down_hold: float = 2.0
    t_retry: float = 1.0
    rounds: bool = True
    remove_rounds: bool = False
    t_remove_hold: float = 10.0
    sincr_mode: str = "random"
    initial_components: int = 1
    initial_sincr: str = "zero"  # or "modulo": S_incr,i = {i mod initial_components} (§6.4)
    balancing: bool = False
    t_balance: float = 10.0
    balance_ratio: float = 1.3
    balance_min_mean: float = 20.0
    balance_p: float = 0.5
    f_mode: str = "balanced"
    independent_senders: bool = False  # the model's overtake term (send model poisson_indep)

    @classmethod
    def pc(cls, m: int, k: int = 2, f_mode: str = "balanced") -> "Config":
        """A probabilistic clock of M entries: one static component."""
        return cls(m_c=m, k=k, c_max=1, policy="static", rounds=False, f_mode=f_mode)

    def check(self) -> None:
        problems = []
        if not 1 <= self.k <= self.m_c:
            problems.append(f"need 1 <= k <= M_c, got k={self.k}, M_c={self.m_c}")
        if not 1 <= self.c_max <= C_MAX_LIMIT:
            problems.append(f"c_max must be in 1..{C_MAX_LIMIT}, got {self.c_max}")
        if self.policy not in policies.POLICIES:
            problems.append(f"policy must be one of {', '.join(policies.POLICIES)}")
        if self.sincr_mode not in SINCR_MODES:
            problems.append(f"sincr_mode must be one of {', '.join(SINCR_MODES)}")
        if not 1 <= self.initial_components <= self.c_max:
            problems.append("initial_components must be in 1..c_max")
        if self.f_mode not in ("balanced", "hash"):
            problems.append("f_mode must be balanced or hash")
        if problems:
            raise ValueError("; ".join(problems))


def entries(n: int, config: Config) -> np.ndarray:
    """f(p) for every process: the spec's balanced map (or its hash sensitivity), int64[N, k]."""
    make = clocks.entry_map if config.f_mode == "balanced" else clocks.hashed_map
    return np.asarray(make(n, config.m_c, config.k), np.int64).reshape(n, config.k)


def new_state(workload: Workload, config: Config, net: network.Network,
              seed: np.random.SeedSequence, f: np.ndarray | None = None,
              script: np.ndarray | None = None, drain: float = 5.0):
    """A fresh kernel state for ``workload`` (clocks all zero, one active component)."""
    config.check()
    n, c_max, m_c = workload.n_nodes, config.c_max, config.m_c
    f = entries(n, config) if f is None else np.asarray(f, np.int64).reshape(n, -1)
    if f.shape[1] != config.k or f.min() < 0 or f.max() >= m_c:
        raise ValueError("f must give k entries in 0..M_c-1 per process")
    is_b = workload.ops == OP_BROADCAST
    n_b = int(is_b.sum())
    width = c_max * m_c
    dynamic = config.policy != "static"
    per_second = np.histogram(workload.times[is_b], bins=np.arange(0, workload.duration + 2))[0]
    ring = 1 << int(math.ceil(math.log2(3 * max(1, per_second.max(initial=1)) * max(config.load_window, policies.AUTHORS_WINDOW) + 64)))
    n_sec = int(math.ceil(workload.duration + drain)) + 1
    remove = bool(config.remove_rounds)
    counts = np.bincount(workload.nodes[is_b], minlength=n)
    seq_off = np.r_[0, np.cumsum(counts)].astype(np.int64)
    policy_code = policies.POLICIES[config.policy]
    table = policies.thresholds(config.policy, n, config.k, m_c, c_max, config.p_star,
                                config.independent_senders)
    i64, i32 = np.int64, np.int32
    tops = np.zeros(7, i64)
    tops[[T_PEND_FREE, T_NEED_FREE, T_ARR_FREE]] = -1
    control = dataclasses.replace(net).params(seed)._replace(key=rng.stream_key(seed, "ctrl_delay"))
    script = np.full((n, 1), -1, i64) if script is None else np.asarray(script, i64)
    delays = np.zeros((1, 1)) if workload.delays is None else np.asarray(workload.delays, np.float64)
    st = State.create(
        n=n, k=config.k, m_c=m_c, c_max=c_max, width=width, dynamic=dynamic, policy=policy_code,
        sincr_mode=SINCR_MODES[config.sincr_mode], rounds=bool(config.rounds) and dynamic,
        remove_rounds=remove and dynamic, balancing=bool(config.balancing),
        window=config.load_window if policy_code != AUTHORS_TABLE else policies.AUTHORS_WINDOW,
        count_own=policy_code != AUTHORS_TABLE, hyst=config.hysteresis, t_hold=config.t_hold,
        t_down_hold=config.t_down_hold, t_retry=config.t_retry,
        t_remove_hold=config.t_remove_hold, t_balance=config.t_balance,
        ratio=config.balance_ratio, min_mean=config.balance_min_mean, move_p=config.balance_p,
        t_stop=float(workload.duration), thresholds=table,
        expand_table=policies.AUTHORS_EXPAND, reduce_table=policies.AUTHORS_REDUCE, f=f,
        net=net.params(seed), control_net=control, sincr_key=rng.stream_key(seed, "sincr"),
        balance_key=rng.stream_key(seed, "balance"), scripted=workload.delays is not None,
        delays=delays, script=script,
        clock=np.zeros(n * width, i32), n_comp=np.ones(n, i64), active=np.ones(n, i64),
        sincr=np.ones(n, i64), shrink=np.zeros(n, np.bool_), shrink_since=np.zeros(n),
        last_change=np.full(n, -np.inf), blocked=np.zeros(n, np.bool_),
        blocked_since=np.zeros(n), queued=np.zeros(n, i64), seq=np.zeros(n, i64),
        gen=np.zeros(n * c_max, i64), ring=np.zeros(n * ring if dynamic else 1),
        ring_n=np.zeros(n, i64), ring_lo=np.zeros(n, i64), p_head=np.full(n, -1, i64),
        p_tail=np.full(n, -1, i64), p_len=np.zeros(n, i64), d_head=np.full(n, -1, i64),
        d_tail=np.full(n, -1, i64), sincr_draws=np.zeros(n, i64),
        balance_draws=np.zeros(n, i64), script_pos=np.zeros(n, i64), streak=np.zeros(n, i64),
        bal_count=np.zeros(n * c_max if config.balancing else 1, i64),
        inactive_since=np.full(c_max, np.inf),
        m_src=np.zeros(n_b, i64), m_seq=np.zeros(n_b, i64), m_comps=np.zeros(n_b, i64),
        m_sincr=np.zeros(n_b, i64), m_row=np.full(n_b, -1, i64), m_left=np.zeros(n_b, i64),
        m_time=np.zeros(n_b), m_arr=np.full(n_b, -1, i64),
        need=np.zeros((POOL, width + c_max), i32),
        arr_node=np.zeros((POOL, max(1, n - 1)), i32), arr_time=np.zeros((POOL, max(1, n - 1))),
        lists=state.table(2, POOL), keys=np.zeros(max(1, n - 1), i64),
        heap_t=np.zeros(POOL), heap_b=np.zeros(POOL, i64), heap_c=np.zeros(POOL, i64),
        heap_n=np.zeros(1, i64),
        round_kind=np.zeros(1, i64), round_c=np.zeros(1, i64), round_values=np.zeros(m_c, i32),
        round_acks=np.zeros(1, i64), round_ok=np.zeros(1, np.bool_), round_top=np.full(2, -1, i64),
        last_decision=np.full(1, -np.inf), round_log=np.zeros((POOL, 3), i64),
        round_time=np.zeros(POOL), n_rounds=np.zeros(1, i64),
        rm_need=np.zeros(n if remove else 1, i64), rm_last=np.zeros(n if remove else 1, i64),
        seen=np.zeros(n_b * ((n + 7) // 8) if remove else 1, np.uint8),
        prefix=np.zeros(n * n if remove else 1, i32), by_seq=np.full(n_b, -1, i64),
        seq_off=seq_off,
        counters=np.zeros(N_COUNTERS, i64), fcounters=np.zeros(N_FCOUNTERS),
        sec_log=np.full(n_sec + 1, -1, i64), sec_bcast=np.zeros(n_sec, i64),
        sec_attached=np.zeros(n_sec, i64), sec_mean=np.zeros(n_sec), sec_min=np.zeros(n_sec, i64),
        sec_max=np.zeros(n_sec, i64), sec_comp=np.zeros(n_sec * c_max, i64),
        moves=np.zeros((int(workload.duration / max(config.t_balance, 1e-3)) + 2, 2)),
        log=state.new_log(max(1, n_b * n)), tops=tops,
    )
    _initial_components(st, config.initial_components, config.initial_sincr == "modulo")
    return st


# ------------------------------------------------------------------------------------------
# DCS structure: components and S_incr (spec §2.1, §2.4, §2.6)
# ------------------------------------------------------------------------------------------


@njit
def _set_active(st, i, a, now):
    """a_i = a; p_0 remembers since when each component is inactive (remove round, §2.10)."""
    old = st.active[i]
    st.active[i] = a
    if i == 0:
        for c in range(a, old):
            st.inactive_since[c] = now
        for c in range(old, a):
            st.inactive_since[c] = np.inf


@njit
def _add(st, i, now):
    """Add(): a new all-zero component at the end; every component becomes active."""
    c = st.n_comp[i]
    base = (i * st.c_max + c) * st.m_c
    st.clock[base:base + st.m_c] = 0
    st.n_comp[i] = c + 1
    _set_active(st, i, c + 1, now)
    st.counters[C_ADDS] += 1


@njit
def _activate(st, i, now):
    """Activate(): the inactive component with the lowest index; False if there is none."""
    if st.active[i] >= st.n_comp[i]:
        return False
    _set_active(st, i, st.active[i] + 1, now)
    return True


@njit
def _deactivate(st, i, now):
    """Deactivate(): the active component with the highest index; False if only C_0 is."""
    if st.active[i] <= 1:
        return False
    _set_active(st, i, st.active[i] - 1, now)
    st.counters[C_DEACTIVATIONS] += 1
    return True


@njit
def _remove(st, i):
    """Remove(): delete the highest component (its index gets a new generation); False if
    |D| = 1."""
    c = st.n_comp[i] - 1
    if c < 1:
        return False
    base = (i * st.c_max + c) * st.m_c
    st.clock[base:base + st.m_c] = 0
    st.n_comp[i] = c
    st.gen[i * st.c_max + c] += 1
    st.counters[C_REMOVALS] += 1
    return True


@njit
def _allowed(st, i):
    """How many components p_i may increment: a_i, or a_i - 1 while it wants to contract."""
    a = st.active[i]
    return a - 1 if st.shrink[i] and a > 1 else a


@njit
def _reassign(st, i):
    """reassign_S_incr (spec §2.6): S_incr,i = {u}, u drawn uniformly among the allowed
    components (stream ``sincr``, one counter per process), or i mod allowed (``modulo``, the
    authors' code), or the next scripted draw of a scenario test."""
    allowed = _allowed(st, i)
    pos = st.script_pos[i]
    if pos < st.script.shape[1] and st.script[i, pos] >= 0:
        u = st.script[i, pos]
        st.script_pos[i] = pos + 1
    elif st.sincr_mode == MODULO:
        u = i % allowed
    else:
        u = int(rng.uniform(st.sincr_key, i, st.sincr_draws[i]) * allowed)
        st.sincr_draws[i] += 1
    st.sincr[i] = np.int64(1) << u
    st.counters[C_REASSIGNS] += 1


@njit
def _initial_components(st, count, modulo):
    """Figure 10 starts with ``count`` active components everywhere (three Add() at start-up),
    S_incr,i = {i mod count} with ``modulo``."""
    for i in range(st.n):
        for _ in range(count - 1):
            _add(st, i, 0.0)
        if modulo:
            st.sincr[i] = np.int64(1) << (i % count)
    st.counters[C_ADDS] = 0


@njit
def _component_differs(st, i, b, c, news_only):
    """Whether message b's component c differs from p_i's (``news_only``: has an entry larger
    than p_i's, i.e. carries causal information p_i lacks)."""
    m_c = st.m_c
    row = st.m_row[b]
    base = (i * st.c_max + c) * m_c
    j = st.m_src[b]
    inc = (st.m_sincr[b] >> c) & 1
    for x in range(m_c):
        v = st.need[row, c * m_c + x]
        if inc:
            for e in range(st.k):
                if st.f[j, e] == x:
                    v += 1
        mine = st.clock[base + x]
        if v > mine or (not news_only and v != mine):
            return True
    return False


@njit
def _newer_generation(st, i, b):
    """Whether message b carries a component index that p_i has not yet removed and re-created
    (its generation at p_i is older: wait for p_i's own DECIDE_REMOVE, spec §2.10)."""
    row = st.m_row[b]
    for c in range(st.m_comps[b]):
        theirs = st.need[row, st.width + c]
        mine = st.gen[i * st.c_max + c]
        if theirs > mine:
            return True
        if theirs < mine:
            st.counters[C_STALE] += 1
    return False


@njit
def _needs_dynamicity(st, i, b):
    """needs_dynamicity (spec §2.9): m would make p_i Add or Activate a component."""
    a_m = st.m_comps[b]
    if st.n_comp[i] < a_m:
        return True
    for c in range(st.active[i], a_m):
        if _component_differs(st, i, b, c, True):
            return True
    return st.remove_rounds and _newer_generation(st, i, b)


@njit
def _check_expand(st, i, b, now):
    """checkExpand (seed 002 §IV-B): (1) Add() until p_i has |D_m| components, (2) re-activate
    C_0..C_c for every inactive C_c of m that carries news, (3) re-assign S_incr if anything
    changed."""
    a_m = st.m_comps[b]
    changed = False
    while st.n_comp[i] < a_m:
        _add(st, i, now)
        changed = True
    top = -1
    for c in range(st.active[i], a_m):
        if _component_differs(st, i, b, c, True):
            top = c
    if top >= 0:
        _set_active(st, i, top + 1, now)
        st.counters[C_REACTIVATIONS] += 1
        changed = True
    if changed:
        _reassign(st, i)


@njit
def _expand(st, i, now, own_new_top):
    """Spontaneous expansion (spec §2.7): Activate(), else Add(); then S_incr is re-assigned
    (``own_new_top``: the authors' code moves the process onto the new top component)."""
    if st.blocked[i]:
        return
    if not _activate(st, i, now):
        if st.n_comp[i] >= st.c_max:
            return
        _add(st, i, now)
    st.shrink[i] = False
    if own_new_top:
        st.sincr[i] = np.int64(1) << (st.active[i] - 1)
    else:
        _reassign(st, i)
    st.last_change[i] = now
    st.counters[C_EXPANSIONS] += 1


# ------------------------------------------------------------------------------------------
# Broadcast, reception, delivery (Algorithms 1 and 2)
# ------------------------------------------------------------------------------------------


@njit
def _increment(st, i, j, mask):
    """Add 1 to the entries f(p_j) of p_i's components in ``mask``."""
    c = 0
    s = mask
    while s:
        if s & 1:
            base = (i * st.c_max + c) * st.m_c
            for e in range(st.k):
                st.clock[base + st.f[j, e]] += 1
        s >>= 1
        c += 1


@njit
def _mark_delivered(st, i, b):
    """The prefix of messages of b's sender that p_i delivered (remove round only)."""
    a = st.m_src[b]
    nbytes = (st.n + 7) // 8
    st.seen[b * nbytes + (i >> 3)] |= np.uint8(1 << (i & 7))
    p = i * st.n + a
    s = st.m_seq[b]
    if s == st.prefix[p] + 1:
        while s < st.seq[a]:
            nxt = st.by_seq[st.seq_off[a] + s]
            if st.seen[nxt * nbytes + (i >> 3)] & np.uint8(1 << (i & 7)) == 0:
                break
            s += 1
        st.prefix[p] = s


@njit
def _log(st, kind, i, b):
    state.log(st, T_LOG, kind, i, b)


@njit
def _count_balance(st, i, mask):
    c = 0
    s = mask
    while s:
        if s & 1:
            st.bal_count[i * st.c_max + c] += 1
        s >>= 1
        c += 1


@njit
def _record_load(st, i, now):
    """One more reception (or own broadcast) in p_i's sliding window (a ring of times)."""
    size = len(st.ring) // st.n
    nr = st.ring_n[i]
    st.ring[i * size + (nr & (size - 1))] = now
    st.ring_n[i] = nr + 1
    if nr + 1 - st.ring_lo[i] > size:
        st.ring_lo[i] = nr + 1 - size


@njit
def _load(st, i, now):
    """p_i's load estimate: events of the last ``window`` seconds, per second."""
    size = len(st.ring) // st.n
    lo, nr = st.ring_lo[i], st.ring_n[i]
    while lo < nr and st.ring[i * size + (lo & (size - 1))] <= now - st.window:
        lo += 1
    st.ring_lo[i] = lo
    return (nr - lo) / st.window


@njit
def _broadcast(st, q, i, now):
    if st.dynamic:
        _policy(st, q, i, now, True)
    counters = st.counters
    b = counters[C_BROADCASTS]
    counters[C_BROADCASTS] = b + 1
    s = st.seq[i] + 1
    st.seq[i] = s
    mask = st.sincr[i]
    _increment(st, i, i, mask)
    a = st.active[i]
    w = a * st.m_c
    st.need, row = state.take(st.need, st.tops, T_NEED, T_NEED_FREE, 0)
    need = st.need
    base = i * st.width
    for x in range(w):
        need[row, x] = st.clock[base + x]
    c = 0
    bits = mask
    while bits:
        if bits & 1:
            for e in range(st.k):
                need[row, c * st.m_c + st.f[i, e]] -= 1
        bits >>= 1
        c += 1
    for c in range(a):
        need[row, st.width + c] = st.gen[i * st.c_max + c]
    st.m_src[b] = i
    st.m_seq[b] = s
    st.m_comps[b] = a
    st.m_sincr[b] = mask
    st.m_row[b] = row
    st.m_left[b] = st.n - 1
    st.m_time[b] = now
    _log(st, oracle.BROADCAST, i, b)
    sec = int(now)
    st.sec_bcast[sec] += 1
    st.sec_attached[sec] += w
    counters[C_ATTACHED] += w
    c = 0
    bits = mask
    while bits:
        if bits & 1:
            st.sec_comp[sec * st.c_max + c] += 1
        bits >>= 1
        c += 1
    if st.balancing:
        _count_balance(st, i, mask)
    if st.remove_rounds:
        st.by_seq[st.seq_off[i] + s - 1] = b
        _mark_delivered(st, i, b)
    if st.dynamic and st.count_own:
        _record_load(st, i, now)
    if st.n == 1:
        _release_need(st, b)
        return
    _send_copies(st, i, b, now)


@njit
def _send_copies(st, i, b, now):
    """One copy to every other process, sorted by arrival (``copies``); only the first enters
    the arrival heap, the next one when it arrives (``_arrival``)."""
    st.arr_node, row = state.take(st.arr_node, st.tops, T_ARR, T_ARR_FREE, 0)
    if st.arr_time.shape[0] < st.arr_node.shape[0]:
        st.arr_time = state.grown_rows(st.arr_time, st.arr_node.shape[0])
    copies.sorted_copies(st.net, st.delays, st.scripted, b, i, now, st.keys, st.arr_node[row],
                         st.arr_time[row])
    st.m_arr[b] = row
    n = st.heap_n[0]
    if n >= len(st.heap_t):
        st.heap_t = state.grown(st.heap_t, n + 1)
        st.heap_b = state.grown(st.heap_b, n + 1)
        st.heap_c = state.grown(st.heap_c, n + 1)
    copies.heap_push(st.heap_t, st.heap_b, st.heap_c, st.heap_n, st.arr_time[row, 0], b, 0)


@njit
def _arrival(st, q, now):
    """The earliest copy in flight reaches its receiver."""
    b, cursor = st.heap_b[0], st.heap_c[0]
    row = st.m_arr[b]
    i = st.arr_node[row, cursor]
    if cursor + 2 < st.n:
        copies.heap_replace_root(st.heap_t, st.heap_b, st.heap_c, st.heap_n,
                                 st.arr_time[row, cursor + 1], b, cursor + 1)
    else:
        copies.heap_drop_root(st.heap_t, st.heap_b, st.heap_c, st.heap_n)
        state.release(st.arr_node, st.tops, T_ARR_FREE, 0, row)
    _receive(st, q, i, b, now)


@njit
def _deliverable(st, i, b):
    """Every entry of m's first |D_m| components at p_i is at least ``need`` (Algorithm 2 lines
    4-5; for a probabilistic clock Algorithm 1 line 3).  Components of p_i beyond |D_m| are not
    examined."""
    w = st.m_comps[b] * st.m_c
    base = st.width * i
    mine = st.clock[base:base + w]
    need = st.need[st.m_row[b]]
    worst = np.int32(0)
    for x in range(w):  # a min-reduction over 1-D slices, which the compiler vectorises
        worst = min(worst, np.int32(mine[x] - need[x]))
    return worst >= 0


@njit
def _release_need(st, b):
    state.release(st.need, st.tops, T_NEED_FREE, 0, st.m_row[b])
    st.m_row[b] = -1


@njit
def _deliver(st, i, b, now):
    j = st.m_src[b]
    mask = st.m_sincr[b]
    _increment(st, i, j, mask)
    _log(st, oracle.DELIVER, i, b)
    st.counters[C_DELIVERIES] += 1
    st.fcounters[F_DELIVERY_LATENCY] += now - st.m_time[b]
    if st.balancing:
        _count_balance(st, i, mask)
    if st.remove_rounds:
        _mark_delivered(st, i, b)
    left = st.m_left[b] - 1
    st.m_left[b] = left
    if left == 0:
        _release_need(st, b)


@njit
def _push(st, i, b, deferred):
    """Append b to p_i's pending (or deferred) list, in arrival order."""
    st.lists, e = state.take(st.lists, st.tops, T_PEND, T_PEND_FREE, PE_NEXT)
    st.lists[e, PE_MSG] = b
    st.lists[e, PE_NEXT] = -1
    if deferred:
        if st.d_tail[i] >= 0:
            st.lists[st.d_tail[i], PE_NEXT] = e
        else:
            st.d_head[i] = e
        st.d_tail[i] = e
        return
    if st.p_tail[i] >= 0:
        st.lists[st.p_tail[i], PE_NEXT] = e
    else:
        st.p_head[i] = e
    st.p_tail[i] = e
    st.p_len[i] += 1
    if st.p_len[i] > st.counters[C_MAX_PENDING]:
        st.counters[C_MAX_PENDING] = st.p_len[i]


@njit
def _scan_pending(st, i, now):
    """try_deliver_pending (spec §1.5): deliver the first deliverable pending message in
    arrival order, restart, until a full scan delivers nothing."""
    lists = st.lists
    delivered = True
    while delivered:
        delivered = False
        prev = -1
        e = st.p_head[i]
        while e != -1:
            b = lists[e, PE_MSG]
            nxt = lists[e, PE_NEXT]
            if _deliverable(st, i, b):
                if prev == -1:
                    st.p_head[i] = nxt
                else:
                    lists[prev, PE_NEXT] = nxt
                if st.p_tail[i] == e:
                    st.p_tail[i] = prev
                st.p_len[i] -= 1
                state.release(lists, st.tops, T_PEND_FREE, PE_NEXT, e)
                _deliver(st, i, b, now)
                delivered = True
                break
            prev = e
            e = nxt


@njit
def _accept(st, i, b, now):
    """A reception p_i may process now: checkExpand, then deliver or keep pending."""
    if st.dynamic:
        _check_expand(st, i, b, now)
    ready = _deliverable(st, i, b)
    if not ready:
        st.counters[C_WAITED] += 1
    if ready and st.p_len[i] == 0:
        _deliver(st, i, b, now)
    else:  # older pending messages come first (arrival order)
        _push(st, i, b, False)
        _scan_pending(st, i, now)


@njit
def _receive(st, q, i, b, now):
    st.counters[C_RECEPTIONS] += 1
    st.fcounters[F_RECEPTION_LATENCY] += now - st.m_time[b]  # at arrival, deferred or not
    if st.dynamic:
        _record_load(st, i, now)
        if st.blocked[i] and _needs_dynamicity(st, i, b):
            st.counters[C_DEFERRED] += 1
            _push(st, i, b, True)
            return
    _accept(st, i, b, now)


# ------------------------------------------------------------------------------------------
# Size policies (spec §2.8, amendment 2)
# ------------------------------------------------------------------------------------------


@njit
def _c_target(st, load):
    t = st.thresholds
    for c in range(len(t)):
        if load <= t[c]:
            return c + 1
    return len(t)


@njit
def _soft_contraction(st, i, now):
    """Stop incrementing the highest active component (no message: spec §2.8)."""
    if not st.shrink[i]:
        st.shrink[i] = True
        st.shrink_since[i] = now
        st.counters[C_SOFT] += 1
    if (st.sincr[i] >> (st.active[i] - 1)) & 1:
        _reassign(st, i)


@njit
def _policy(st, q, i, now, at_broadcast):
    """The size policy of p_i, at its broadcasts and on its 1-s timer."""
    if st.policy == AUTHORS_TABLE:
        _authors_policy(st, q, i, now, at_broadcast)
        return
    if (st.policy != MODEL and st.policy != FORMULA_ONLY) or st.blocked[i]:
        return  # a participant of a round changes neither its components nor S_incr (§2.9)
    load = _load(st, i, now)
    a = st.active[i]
    up = _c_target(st, load * (1.0 - st.hyst))
    down = _c_target(st, load * (1.0 + st.hyst))
    if up >= a and st.shrink[i]:  # contraction no longer wanted
        st.shrink[i] = False
        _reassign(st, i)
    if up > a:
        if not st.blocked[i] and now - st.last_change[i] >= st.t_hold:
            _expand(st, i, now, False)
    elif down < a:
        _soft_contraction(st, i, now)
    if i == 0 and st.rounds and st.round_kind[0] == NO_ROUND:
        if (_round_target(st) >= 1 and st.shrink[0] and now - st.shrink_since[0] >= st.t_down_hold
                and now - st.last_decision[0] >= st.t_retry):
            _start_round(st, q, DEACT_ROUND, now)
        elif not at_broadcast and st.remove_rounds:
            _maybe_remove(st, q, now)


@njit
def _table_holds(table, count, size, expand):
    for r in range(table.shape[0]):
        if expand and count > table[r, 0] and size < table[r, 1]:
            return True
        if not expand and count < table[r, 0] and size > table[r, 1]:
            return True
    return False


@njit
def _authors_policy(st, q, i, now, at_broadcast):
    """amendment 2: expansion from the table at the process's own broadcast, reduction on the
    1-s timer (every process contracts softly; p_0 also starts the round); 0.5 s since the last
    change and no round in progress for both."""
    if st.blocked[i] or now - st.last_change[i] < policies.AUTHORS_HOLD:
        return
    count = int(round(_load(st, i, now) * st.window))
    size = st.active[i] * st.m_c
    if at_broadcast:
        if _table_holds(st.expand_table, count, size, True):
            _expand(st, i, now, True)
    elif st.active[i] > 1 and _table_holds(st.reduce_table, count, size, False):
        if not st.shrink[i]:
            st.shrink[i] = True
            st.shrink_since[i] = now
            st.counters[C_SOFT] += 1
        _reassign(st, i)  # the authors re-draw S_incr among the a_i - 1 lower components
        st.last_change[i] = now
        if i == 0 and st.rounds and st.round_kind[0] == NO_ROUND and _round_target(st) >= 1:
            _start_round(st, q, DEACT_ROUND, now)


# ------------------------------------------------------------------------------------------
# Deactivation and remove rounds (spec §2.9, §2.10): p_0 coordinates, one round at a time
# ------------------------------------------------------------------------------------------


@njit
def _send_control(st, q, typ, ok, c, extra, src, dst, size, now):
    """A round message from src to dst (its own delay, stream ``ctrl_delay``): type, ok flag,
    component and one extra integer packed in the event."""
    k = st.counters[C_CONTROL]
    st.counters[C_CONTROL] = k + 1
    st.counters[C_CONTROL_INTS] += size
    d = network.propagation(st.control_net, 0, k)
    events.schedule(q, now + d, EV_CONTROL, typ | (ok << 3) | (c << 4) | (extra << 10),
                    (src << 16) | dst)


@njit
def _round_target(st):
    """The component p_0's next deactivation round targets: its highest active one, or a higher
    one that a participant of the previous (failed) round still had active.  Without the
    latter, a process left with one more active component than p_0 (its Activate() carried no
    news, so nobody followed) would fail condition 1 of every round forever."""
    c = st.active[0] - 1
    ahead = st.round_top[1]
    if c < ahead < st.n_comp[0]:
        return ahead
    return c


@njit
def _maybe_remove(st, q, now):
    h = st.n_comp[0] - 1
    if (h >= 1 and h >= st.active[0] and now - st.inactive_since[h] >= st.t_remove_hold
            and now - st.last_decision[0] >= st.t_retry):
        _start_round(st, q, REMOVE_ROUND, now)


@njit
def _start_round(st, q, kind, now):
    """Phase 1 at p_0: DEACT(c, values of C_c) for its highest active component, or
    REMOVE(h, S) for its highest (inactive) component, to every other process."""
    if kind == DEACT_ROUND:
        c = _round_target(st)
        st.round_values[:] = st.clock[c * st.m_c:(c + 1) * st.m_c]  # p_0's C_c
        st.counters[C_DEACT_ROUNDS] += 1
        typ, size = DEACT, st.m_c + 2
    else:
        c = st.n_comp[0] - 1
        pairs = 0
        for a in range(st.n):
            have = st.prefix[a]  # p_0's row of the prefix matrix
            if have > st.rm_last[a]:
                st.rm_need[a] = have
                pairs += 1
            else:
                st.rm_need[a] = 0
            st.rm_last[a] = have
        st.counters[C_REMOVE_ROUNDS] += 1
        typ, size = REMOVE, 2 + 2 * pairs
    st.round_kind[0] = kind
    st.round_c[0] = c
    st.round_acks[0] = 0
    st.round_ok[0] = True
    st.round_top[0] = -1
    r = st.n_rounds[0]
    if r >= st.round_log.shape[0]:
        st.round_log = state.grown_rows(st.round_log, r + 1)
        st.round_time = state.grown(st.round_time, r + 1)
    st.round_log[r, 0] = kind
    st.round_log[r, 1] = c
    st.round_log[r, 2] = -1  # open
    st.round_time[r] = now
    st.n_rounds[0] = r + 1
    for j in range(1, st.n):
        _send_control(st, q, typ, 0, c, 0, 0, j, size, now)
    _answer(st, q, 0, kind, now)


@njit
def _pending_uses(st, i, c, values_of_round):
    """Condition 4: a pending or deferred message of p_i carries C_c and incremented it or
    differs on it (``values_of_round``: the authors' test, differs from the round's values)."""
    lists = st.lists
    for head in (st.p_head[i], st.d_head[i]):
        e = head
        while e != -1:
            b = lists[e, PE_MSG]
            if c < st.m_comps[b]:
                if values_of_round:
                    row = st.m_row[b]
                    inc = (st.m_sincr[b] >> c) & 1
                    j = st.m_src[b]
                    for x in range(st.m_c):
                        v = st.need[row, c * st.m_c + x]
                        if inc:
                            for y in range(st.k):
                                if st.f[j, y] == x:
                                    v += 1
                        if v != st.round_values[x]:
                            return True
                elif (st.m_sincr[b] >> c) & 1 or _component_differs(st, i, b, c, False):
                    return True
            e = lists[e, PE_NEXT]
    return False


@njit
def _deact_ok(st, i, c, now):
    """ok_i of spec §2.9 (authors' mode: the conditions OR no pending message needs C_c).

    Condition 1 reads "C_c is not below an active component": it is p_i's highest active
    component, or already inactive there (a round may target a component p_0 no longer has
    active, ``_round_target``)."""
    c1 = c == st.active[i] - 1 or st.active[i] <= c < st.n_comp[i]
    base = (i * st.c_max + c) * st.m_c
    c2 = True
    for x in range(st.m_c):
        if st.clock[base + x] != st.round_values[x]:
            c2 = False
            break
    c3 = ((st.sincr[i] >> c) & 1) == 0
    if st.policy == AUTHORS_TABLE:
        return (c1 and c2 and c3) or not _pending_uses(st, i, c, True)
    c4 = not _pending_uses(st, i, c, False)
    if not c1:
        st.counters[C_FAIL_1] += 1
    elif not c2:
        st.counters[C_FAIL_2] += 1
    elif not c3:
        st.counters[C_FAIL_3] += 1
    elif not c4:
        st.counters[C_FAIL_4] += 1
    if not c3:
        _soft_contraction(st, i, now)
    return c1 and c2 and c3 and c4


@njit
def _remove_ok(st, i, h):
    """ok_i of spec §2.10."""
    if st.n_comp[i] - 1 != h or h < st.active[i]:
        return False
    for a in range(st.n):
        if st.prefix[i * st.n + a] < st.rm_need[a]:
            return False
    lists = st.lists
    for head in (st.p_head[i], st.d_head[i]):
        e = head
        while e != -1:
            if st.m_comps[lists[e, PE_MSG]] > h:
                return False
            e = lists[e, PE_NEXT]
    return True


@njit
def _answer(st, q, i, kind, now):
    """A participant's phase-1 answer; it blocks its dynamicity until the decision."""
    c = st.round_c[0]
    ok = _deact_ok(st, i, c, now) if kind == DEACT_ROUND else _remove_ok(st, i, c)
    st.blocked[i] = True
    st.blocked_since[i] = now
    if i == 0:
        _collect(st, q, ok, st.active[0], now)
    else:  # the answer also carries a_i (one integer)
        _send_control(st, q, ACK_DEACT if kind == DEACT_ROUND else ACK_REMOVE, int(ok), c,
                      st.active[i], i, 0, 4, now)


@njit
def _collect(st, q, ok, active, now):
    """p_0 counts the answers; after all N, phase 2: DECIDE(ok = all answers ok) to all."""
    st.round_acks[0] += 1
    st.round_ok[0] = st.round_ok[0] and ok
    st.round_top[0] = max(st.round_top[0], active - 1)
    if st.round_acks[0] < st.n:
        return
    kind, c, ok = st.round_kind[0], st.round_c[0], st.round_ok[0]
    r = st.n_rounds[0] - 1
    st.round_log[r, 2] = int(ok)
    if kind == DEACT_ROUND and ok:
        st.counters[C_DEACT_OK] += 1
    elif kind == REMOVE_ROUND and ok:
        st.counters[C_REMOVE_OK] += 1
    st.last_decision[0] = now
    st.round_top[1] = -1 if ok or kind != DEACT_ROUND else st.round_top[0]
    typ = DECIDE_DEACT if kind == DEACT_ROUND else DECIDE_REMOVE
    for j in range(1, st.n):
        _send_control(st, q, typ, int(ok), c, 0, 0, j, 3, now)
    st.round_kind[0] = NO_ROUND
    _decide(st, q, 0, kind, ok, c, now)


@njit
def _decide(st, q, i, kind, ok, c, now):
    """Phase 2 at a participant: apply the decision, unblock, then the deferred receptions (in
    arrival order) and the pending ones; a successful deactivation re-runs the policy."""
    if kind == DEACT_ROUND:
        if ok and c == st.active[i] - 1:
            _deactivate(st, i, now)
            st.shrink[i] = False
        if ((st.sincr[i] >> c) & 1 and c >= st.active[i]) or (not ok and st.policy == AUTHORS_TABLE):
            _reassign(st, i)
    elif ok and c == st.n_comp[i] - 1 and c >= st.active[i]:
        _remove(st, i)
    st.blocked[i] = False
    st.fcounters[F_BLOCKED] += now - st.blocked_since[i]
    e = st.d_head[i]
    st.d_head[i] = -1
    st.d_tail[i] = -1
    while e != -1:
        b = st.lists[e, PE_MSG]
        nxt = st.lists[e, PE_NEXT]
        state.release(st.lists, st.tops, T_PEND_FREE, PE_NEXT, e)
        _accept(st, i, b, now)
        e = nxt
    _scan_pending(st, i, now)
    # as separate events (same instant): a phase-1 message of the next round that came before
    # this decision, or the policy's re-evaluation after a successful deactivation
    if st.queued[i]:
        st.queued[i] = 0
        events.schedule(q, now, EV_LOCAL, i, LOCAL_ANSWER)
    elif kind == DEACT_ROUND and ok and st.policy != AUTHORS_TABLE:
        events.schedule(q, now, EV_LOCAL, i, LOCAL_POLICY)


@njit
def _on_control(st, q, a, b, now):
    typ, ok, c, extra = a & 7, (a >> 3) & 1, (a >> 4) & 63, a >> 10
    src, dst = b >> 16, b & 0xFFFF
    if typ == DEACT or typ == REMOVE:
        if st.blocked[dst]:
            st.queued[dst] = 1
            st.counters[C_QUEUED] += 1
        else:
            _answer(st, q, dst, DEACT_ROUND if typ == DEACT else REMOVE_ROUND, now)
    elif typ == ACK_DEACT or typ == ACK_REMOVE:
        _collect(st, q, ok == 1, extra, now)
    else:
        _decide(st, q, dst, DEACT_ROUND if typ == DECIDE_DEACT else REMOVE_ROUND, ok == 1, c, now)


# ------------------------------------------------------------------------------------------
# Load balancing (seed 002 §V-C, spec §2.11)
# ------------------------------------------------------------------------------------------


@njit
def _balance(st, now, check):
    """Every T_lb: a process whose single component was incremented more than ``ratio`` times
    the mean at two consecutive checks moves with probability ``move_p`` to a less used one."""
    movers = 0
    cm = st.c_max
    for i in range(st.n):
        a = st.active[i]
        total = 0
        for c in range(a):
            total += st.bal_count[i * cm + c]
        mean = total / a
        mine = -1
        s = st.sincr[i]
        for c in range(a):
            if s == (np.int64(1) << c):
                mine = c
        if mine >= 0 and mean >= st.min_mean and st.bal_count[i * cm + mine] > st.ratio * mean:
            st.streak[i] += 1
        else:
            st.streak[i] = 0
        if st.streak[i] >= 2:
            st.streak[i] = 0
            u = rng.uniform(st.balance_key, i, st.balance_draws[i])
            st.balance_draws[i] += 1
            if u < st.move_p and a > 1:
                under = 0
                for c in range(a):
                    if c != mine and st.bal_count[i * cm + c] < mean:
                        under += 1
                pick = int(rng.uniform(st.balance_key, i, st.balance_draws[i]) * (under if under else a - 1))
                st.balance_draws[i] += 1
                for c in range(a):
                    if c != mine and (st.bal_count[i * cm + c] < mean or under == 0):
                        if pick == 0:
                            st.sincr[i] = np.int64(1) << c
                            break
                        pick -= 1
                movers += 1
        for c in range(cm):
            st.bal_count[i * cm + c] = 0
    st.moves[check, 0] = now
    st.moves[check, 1] = movers
    st.counters[C_MOVES] += movers


# ------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------


@njit
def _sample(st, sec):
    """Per-second observables: log position (errors per second from the oracle's flags) and the
    active entries a_i * M_c over processes."""
    st.sec_log[sec] = st.tops[T_LOG]
    lo, hi, total = st.active[0], st.active[0], 0
    for i in range(st.n):
        a = st.active[i]
        total += a
        lo = min(lo, a)
        hi = max(hi, a)
    st.sec_mean[sec] = total * st.m_c / st.n
    st.sec_min[sec] = lo * st.m_c
    st.sec_max[sec] = hi * st.m_c


@njit
def _run(st, op_time, op_node, op_kind, until):
    q = events.new_queue()
    events.feed(q, op_time, EV_OP, np.zeros(len(op_time), np.int64))
    if st.dynamic and st.policy != NONE:
        for i in range(st.n):
            events.schedule(q, 1.0 + 0.5 * i / st.n, EV_TIMER, i, 0)
    events.schedule(q, 0.0, EV_SAMPLE, 0, 0)
    if st.balancing:
        events.schedule(q, st.t_balance, EV_BALANCE, 0, 0)
    n_sec = len(st.sec_mean)
    counters = st.counters
    while True:  # the next event: the earliest copy in flight, or the queue's head if earlier
        if st.heap_n[0] > 0 and (events.empty(q) or st.heap_t[0] < events.next_time(q)):
            now = st.heap_t[0]
            if now > until:
                break
            counters[C_EVENTS] += 1
            _arrival(st, q, now)
            continue
        if events.empty(q):
            break
        now, kind, a, b = events.pop(q)
        if now > until:
            break
        counters[C_EVENTS] += 1
        if kind == EV_OP:
            node, op = op_node[a], op_kind[a]
            if op == OP_BROADCAST:
                _broadcast(st, q, node, now)
            elif op == OP_EXPAND:
                _expand(st, node, now, False)
            elif st.round_kind[0] == NO_ROUND and not st.blocked[0]:
                if op == OP_DEACTIVATION_ROUND and st.active[0] >= 2:
                    _start_round(st, q, DEACT_ROUND, now)
                elif op == OP_REMOVE_ROUND and st.n_comp[0] - 1 >= max(1, st.active[0]):
                    _start_round(st, q, REMOVE_ROUND, now)
        elif kind == EV_CONTROL:
            _on_control(st, q, a, b, now)
        elif kind == EV_TIMER:
            _policy(st, q, a, now, False)
            if now + 1.0 < st.t_stop:
                events.schedule(q, now + 1.0, EV_TIMER, a, 0)
        elif kind == EV_LOCAL:
            if b == LOCAL_ANSWER:
                _answer(st, q, a, st.round_kind[0], now)
            else:
                _policy(st, q, a, now, False)
        elif kind == EV_SAMPLE:
            _sample(st, a)
            if a + 1 < n_sec:
                events.schedule(q, a + 1.0, EV_SAMPLE, a + 1, 0)
        else:
            _balance(st, now, a)
            if now + st.t_balance <= st.t_stop:
                events.schedule(q, now + st.t_balance, EV_BALANCE, a + 1, 0)
    for sec in range(n_sec + 1):  # seconds the loop did not reach (``until``), and the end
        if st.sec_log[sec] < 0:
            st.sec_log[sec] = st.tops[T_LOG]
    return events.pending(q) + st.heap_n[0]


@njit
def _outputs(st):
    """Everything a Run keeps, copied out of the state in one compiled call (reading struct
    fields from Python compiles a getter per field)."""
    n_b = st.counters[C_BROADCASTS]
    r = st.n_rounds[0]
    pending, deferred = 0, 0
    for i in range(st.n):
        pending += st.p_len[i]
        e = st.d_head[i]
        while e != -1:
            deferred += 1
            e = st.lists[e, PE_NEXT]
    return (st.log, st.tops[T_LOG], st.counters.copy(), st.fcounters.copy(), st.m_src[:n_b].copy(),
            st.m_time[:n_b].copy(), st.m_comps[:n_b].copy(), st.m_sincr[:n_b].copy(),
            st.sec_log.copy(), st.sec_bcast.copy(), st.sec_attached.copy(), st.sec_mean.copy(),
            st.sec_min.copy(), st.sec_max.copy(), st.sec_comp.copy(), st.round_log[:r].copy(),
            st.round_time[:r].copy(), st.moves.copy(), st.clock.copy(), st.n_comp.copy(),
            pending, deferred, st.blocked.sum())


@njit
def _entries_of(st):
    return st.f.copy()


# ------------------------------------------------------------------------------------------
# Python side: simulate() and the Run it returns
# ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Run(BaseRun):
    """One PC or DCS run: the log (every broadcast and delivery) and the observables.

    Out-of-order deliveries are how a probabilistic clock fails by design (it captures causality
    without characterising it, seed 002 §II): they are the protocol's measured error rate, which
    the oracle counts (``errors``), not a violation of our code.  What is a violation: a message
    delivered twice, a message not delivered everywhere at the end (termination, seed 002
    Theorems 2-3), a process left blocked or with pending or deferred messages, a round left
    open, or clocks that are not the sum of the increments of everything delivered (spec §1.3
    counting invariant; at the end every process delivered everything, so all clocks equal it).
    """

    config: Config
    f: np.ndarray
    counters: dict
    blocked_time: float
    reception_latency_sum: float  # seconds, over the receptions (counters["receptions"])
    delivery_latency_sum: float  # seconds, over the deliveries (counters["deliveries"])
    msg_src: np.ndarray
    msg_time: np.ndarray
    msg_comps: np.ndarray  # active components attached to each message
    msg_sincr: np.ndarray  # S_incr of each message (bitmask)
    sec_log: np.ndarray  # log position at each whole second (and at the end)
    sec_broadcasts: np.ndarray
    sec_attached: np.ndarray  # entries attached to the messages broadcast in each second
    sec_mean: np.ndarray  # active entries a_i * M_c sampled at each second: mean, min, max
    sec_min: np.ndarray
    sec_max: np.ndarray
    sec_components: np.ndarray  # broadcasts incrementing each component, per second
    rounds: np.ndarray  # per round: kind (1 deact, 2 remove), component, ok (1/0/-1 open)
    round_times: np.ndarray
    moves: np.ndarray  # balancing checks: (time, movers)
    start_clocks: np.ndarray  # int32[N, c_max * M_c]: zeros, unless a test prepared them
    final_clocks: np.ndarray
    final_components: np.ndarray  # |D_i|
    left_pending: int
    left_deferred: int
    left_blocked: int
    left_events: int
    state: object = None

    def violations(self, report: oracle.Report) -> int:
        """Duplicates only: out-of-causal-order deliveries are the measured error rate of a
        probabilistic protocol (see the class docstring), reported as a known flaw."""
        return report.duplicates

    def known_flaws(self, report: oracle.Report) -> dict[str, int]:
        return {"out-of-order deliveries (probabilistic clock, by design)": report.errors} if report.errors else {}

    def mean_reception_latency(self) -> float:
        """Mean over (application message, receiving process other than its sender) of the
        arrival instant minus the broadcast instant, in seconds (the propagation delay: this
        model has no sending queue); NaN without receptions.  Round messages do not count."""
        n = self.counters["receptions"]
        return self.reception_latency_sum / n if n else math.nan

    def mean_delivery_latency(self) -> float:
        """Mean over the deliveries at processes other than the sender of the delivery instant
        minus the broadcast instant, in seconds; NaN without deliveries.  Above the reception
        latency by the time messages wait pending (clock test) or deferred (during a round)."""
        n = self.counters["deliveries"]
        return self.delivery_latency_sum / n if n else math.nan

    def expected_clock(self) -> np.ndarray:
        """What every process adds to its clock by delivering everything: per component, the
        sum of the increments of the messages that incremented it."""
        m_c = self.config.m_c
        out = np.zeros(self.final_clocks.shape[1], np.int64)
        for c in range(self.config.c_max):
            on = (self.msg_sincr >> c) & 1 == 1
            np.add.at(out, c * m_c + self.f[self.msg_src[on]].ravel(), 1)
        return out

    def invariants(self, report: oracle.Report) -> list[str]:
        problems = super().invariants(report)
        if self.left_pending or self.left_deferred or self.left_blocked:
            problems.append(f"left at the end: {self.left_pending} pending, {self.left_deferred} "
                            f"deferred, {self.left_blocked} processes blocked")
        if self.left_events or (len(self.rounds) and (self.rounds[:, 2] < 0).any()):
            problems.append(f"run did not terminate: {self.left_events} events left, "
                            f"{int((self.rounds[:, 2] < 0).sum())} rounds open")
        if not self.counters["removals"] and not report.missing:
            expected = self.start_clocks + self.expected_clock()[None, :]
            bad = np.flatnonzero((self.final_clocks != expected).any(axis=1))
            if len(bad):
                problems.append(f"counting invariant: {len(bad)} processes' clocks are not the sum "
                                f"of the increments they delivered (e.g. p{bad[0]})")
        return problems

    def verify(self, per_delivery: bool = False) -> oracle.Report:
        """``Run.verify`` with the oracle's per-delivery flags kept if asked (errors per second)."""
        report = self.oracle_report(per_delivery=per_delivery)
        problems = self.invariants(report)
        if problems:
            from causal_lab.engine.run import ProtocolViolation
            raise ProtocolViolation(f"{type(self).__module__}: " + "; ".join(problems))
        return report

    def errors_per_second(self, report: oracle.Report) -> np.ndarray:
        """Out-of-order deliveries (oracle flags) in each whole second of simulated time.

        Errors are a few per 10^5 deliveries: counting their log positions below each second's
        mark takes one pass over the flags, where a running sum of the whole 3.6 x 10^7-entry log
        (Figure 7 at the default scale) took about 2 s per run in a profile."""
        errors = np.flatnonzero(report.delivery_error)
        marks = np.minimum(self.sec_log, len(report.delivery_error))
        below = np.searchsorted(errors, marks)  # errors at log positions < mark
        return below[1:] - below[:-1]


def message_clock(st, b: int) -> list[list[int]]:
    """The DCS clock message b carries, component by component (while it is in flight)."""
    row, m_c = st.m_row[b], st.m_c
    values = np.asarray(st.need[row, :st.m_comps[b] * m_c]).copy()
    for c in range(st.m_comps[b]):
        if (st.m_sincr[b] >> c) & 1:
            values[c * m_c + np.asarray(st.f[st.m_src[b]])] += 1
    return values.reshape(-1, m_c).tolist()


def components(st, i: int) -> list[list[int]]:
    """p_i's DCS clock, all its components (active first)."""
    m_c, c_max = st.m_c, st.c_max
    return np.asarray(st.clock).reshape(-1, c_max, m_c)[i, :st.n_comp[i]].tolist()


def simulate(workload: Workload, *, net: network.Network, seed: np.random.SeedSequence,
             config: Config = Config(), f: np.ndarray | None = None,
             script: np.ndarray | None = None, until: float = math.inf,
             keep_state: bool = False, prepare=None) -> Run:
    """Run ``workload`` under ``config`` (the kernel contract of ``causal_lab.engine.run``).

    ``net``: only the propagation delay is modelled (direct broadcast, no sending queue, spec
    §5.1), so t_pc and t_t must be 0.  Scenario tests may override the entry map (``f``) and
    the S_incr draws (``script[i]`` lists p_i's draws, -1 = none), set up the initial state
    (``prepare(state)``), stop early (``until``) and keep the kernel state (``keep_state``)."""
    if net.t_pc != 0 or net.t_t != 0:
        raise ValueError("direct broadcast without sending queue: t_pc and t_t must be 0")
    if not 1 <= workload.n_nodes < NODE_LIMIT:
        raise ValueError(f"need 1 <= N < {NODE_LIMIT}, got {workload.n_nodes}")
    st = new_state(workload, config, net, seed, f, script)
    if prepare is not None:
        prepare(st)
    n = workload.n_nodes
    start = np.asarray(st.clock).reshape(n, -1).copy() if prepare is not None else None
    left = _run(st, np.asarray(workload.times, np.float64), np.asarray(workload.nodes, np.int64),
                np.asarray(workload.ops, np.int64), float(until))
    (log, log_len, counters, fcounters, src, times, comps, sincr, sec_log, sec_bcast, sec_attached,
     sec_mean, sec_min, sec_max, sec_comp, rounds, round_times, moves, clock, n_comp, pending,
     deferred, blocked_now) = _outputs(st)
    log_kind, log_node, log_msg = state.log_arrays(log, log_len)
    clock = clock.reshape(n, -1)
    return Run(
        n_nodes=n, log_kind=log_kind, log_node=log_node, log_msg=log_msg,
        events=int(counters[C_EVENTS]), config=config, f=_entries_of(st),
        counters=dict(zip(COUNTER_NAMES, (int(x) for x in counters))),
        blocked_time=float(fcounters[F_BLOCKED]),
        reception_latency_sum=float(fcounters[F_RECEPTION_LATENCY]),
        delivery_latency_sum=float(fcounters[F_DELIVERY_LATENCY]),
        msg_src=src, msg_time=times, msg_comps=comps, msg_sincr=sincr, sec_log=sec_log,
        sec_broadcasts=sec_bcast, sec_attached=sec_attached, sec_mean=sec_mean, sec_min=sec_min,
        sec_max=sec_max, sec_components=sec_comp.reshape(-1, config.c_max), rounds=rounds,
        round_times=round_times, moves=moves,
        start_clocks=np.zeros_like(clock) if start is None else start, final_clocks=clock,
        final_components=n_comp, left_pending=int(pending), left_deferred=int(deferred),
        left_blocked=int(blocked_now), left_events=int(left), state=st if keep_state else None,
    )
