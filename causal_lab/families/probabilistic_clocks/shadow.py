"""Figure 5's evaluator: one exact causal broadcast, and for every clock size of a grid, whether
a probabilistic clock of that size would have delivered a message too early (spec §6.1 step 5,
§8.4).

Running the probabilistic-clock broadcast once per clock size M (15 sizes x 7 loads x 10^7
receptions) is what this avoids.  Errors are rare (below 10^-3 per delivery) and need two
things: a message m that arrives at q before one of its causal predecessors (the exact
execution knows which), and a clock test that passes anyway.  With counting clocks (spec §1.3)
the test needs no clock at all:

    V_q - (m.V - inc_j) = Σ_u s_u · inc_src(u),   s_u = [q delivered u] - [j delivered u before m]

so only messages recent enough to be delivered by one of q, j and not the other contribute:
those in flight when m was broadcast (``related``: each flagged "in m's past" or not) and those
broadcast after m.  A size M's test passes iff that sum, spread over M's entry map, has no
negative entry.  It is evaluated when m arrives blocked at q and after every delivery at q
while m stays blocked; the first pass counts one would-be error for (m, q) and size M.

The execution itself delivers exactly in causal order (a message waits until the in-flight
messages of its past are delivered), its log goes through the oracle like every run, and it
draws the same copies as the protocol kernel (``copies``): a direct PC run of one size on the
same replication is a paired check of the evaluator (§6.1 step 5).  What it ignores: the
feedback of an early delivery on later states (second order at these rates).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_lab import oracle
from causal_lab.engine import network, state
from causal_lab.engine.jit import njit
from causal_lab.families.probabilistic_clocks import clocks, copies
from causal_lab.families.probabilistic_clocks.workload import Workload

T_LOG, T_REL, T_LIST, T_LIST_FREE, T_ARR, T_ARR_FREE = range(6)
LI_MSG, LI_NEXT, LI_FLAGS = range(3)  # pending list entries: message, next, sizes that erred
MAX_SIZES = 63  # sizes that erred are a bitmask

FIELDS = (
    "n", "k", "t_warm", "net", "scripted", "delays", "maps", "n_sizes",
    "seq", "m_src", "m_seq", "m_time", "m_left", "m_arr", "rel_start", "rel_len", "rel",
    "live", "live_pos", "n_live", "slot", "free_slots", "n_free", "have", "need", "words",
    "p_head", "lists", "acc", "pair_u", "pair_s",
    "arr_node", "arr_time", "keys", "heap_t", "heap_b", "heap_c", "heap_n",
    "errors", "counters", "log", "tops",
)
StateType, State = state.define("State", FIELDS, __name__)
C_RECEPTIONS, C_WAITED, C_EVALUATIONS, C_MEASURED = range(4)
POOL = 256


@dataclasses.dataclass
class Evaluation:
    """What one exact execution says about every clock size."""

    sizes: np.ndarray
    errors: np.ndarray  # would-be out-of-order deliveries per size (messages after warm-up)
    deliveries: int  # receptions of messages broadcast after warm-up (the exposure)
    waited: int  # of those, receptions that arrived before a causal predecessor
    evaluations: int
    report: oracle.Report  # the exact execution, checked by the oracle

    @property
    def rates(self) -> np.ndarray:
        return self.errors / max(self.deliveries, 1)


def new_state(workload: Workload, sizes, k: int, net: network.Network,
              seed: np.random.SeedSequence, t_warm: float, maps=None):
    n = workload.n_nodes
    sizes = [int(m) for m in sizes]
    if len(sizes) > MAX_SIZES:
        raise ValueError(f"at most {MAX_SIZES} clock sizes, got {len(sizes)}")
    if maps is None:
        maps = [clocks.entry_map(n, m, k) for m in sizes]
    maps = np.stack([np.asarray(f, np.int64).reshape(n, k) for f in maps])
    n_b = len(workload.times)
    i64 = np.int64
    per_second = np.bincount(np.asarray(workload.times, np.float64).astype(i64)).max(initial=1)
    words = max(2, -(-int(2 * per_second + 64) // 64))  # live messages: well under 2 s of load
    tops = np.zeros(6, i64)
    tops[[T_LIST_FREE, T_ARR_FREE]] = -1
    return State.create(
        n=n, k=k, t_warm=float(t_warm), net=net.params(seed),
        scripted=workload.delays is not None,
        delays=np.zeros((1, 1)) if workload.delays is None else np.asarray(workload.delays, float),
        maps=maps, n_sizes=len(sizes),
        seq=np.zeros(n, i64), m_src=np.asarray(workload.nodes, i64),
        m_seq=np.zeros(n_b, i64), m_time=np.asarray(workload.times, np.float64),
        m_left=np.zeros(n_b, i64), m_arr=np.full(n_b, -1, i64), rel_start=np.zeros(n_b, i64),
        rel_len=np.zeros(n_b, i64), rel=np.zeros(4096, i64), live=np.zeros(POOL, i64),
        live_pos=np.full(n_b, -1, i64), n_live=np.zeros(1, i64), slot=np.full(n_b, -1, i64),
        free_slots=np.arange(64 * words - 1, -1, -1, dtype=i64), n_free=np.full(1, 64 * words, i64),
        have=np.zeros(n * words, np.uint64), need=np.zeros(n_b * words, np.uint64), words=words,
        p_head=np.full(n, -1, i64),
        lists=state.table(3, POOL), acc=np.zeros(max(sizes), i64), pair_u=np.zeros(POOL, i64),
        pair_s=np.zeros(POOL, i64),
        arr_node=np.zeros((POOL, max(1, n - 1)), np.int32), arr_time=np.zeros((POOL, max(1, n - 1))),
        keys=np.zeros(max(1, n - 1), i64), heap_t=np.zeros(POOL), heap_b=np.zeros(POOL, i64),
        heap_c=np.zeros(POOL, i64), heap_n=np.zeros(1, i64),
        errors=np.zeros(len(sizes), i64), counters=np.zeros(4, i64),
        log=state.new_log(max(1, n_b * n)), tops=tops,
    )


@njit
def _delivered(st, q, u):
    """Whether q delivered message u: it is delivered everywhere, or q holds its slot's bit."""
    if st.m_left[u] == 0:
        return True
    slot = st.slot[u]
    return (st.have[q * st.words + (slot >> 6)] >> np.uint64(slot & 63)) & np.uint64(1) != 0


@njit
def _broadcast(st, b, now):
    """j broadcasts b: it records which messages still in flight are in b's past (j delivered
    them) and which are not; then its copies leave."""
    j = st.m_src[b]
    st.seq[j] += 1
    st.m_seq[b] = st.seq[j]
    n_live = st.n_live[0]
    start = st.tops[T_REL]
    st.rel = state.grown(st.rel, start + n_live)
    for x in range(n_live):
        u = st.live[x]
        st.rel[start + x] = 2 * u + (1 if _delivered(st, j, u) else 0)
    st.rel_start[b] = start
    st.rel_len[b] = n_live
    st.tops[T_REL] = start + n_live
    state.log(st, T_LOG, oracle.BROADCAST, j, b)
    if st.n == 1:
        return
    w = st.words
    for x in range(w):  # b's past among the messages in flight: what j delivered of them
        st.need[b * w + x] = st.have[j * w + x]
    if st.n_free[0] == 0:
        raise ValueError("too many messages in flight for the live-message bitsets")
    st.n_free[0] -= 1
    slot = st.free_slots[st.n_free[0]]
    st.slot[b] = slot
    st.have[j * w + (slot >> 6)] |= np.uint64(1) << np.uint64(slot & 63)
    st.live = state.grown(st.live, n_live + 1)
    st.live[n_live] = b
    st.live_pos[b] = n_live
    st.n_live[0] = n_live + 1
    st.m_left[b] = st.n - 1
    st.arr_node, row = state.take(st.arr_node, st.tops, T_ARR, T_ARR_FREE, 0)
    if st.arr_time.shape[0] < st.arr_node.shape[0]:
        st.arr_time = state.grown_rows(st.arr_time, st.arr_node.shape[0])
    copies.sorted_copies(st.net, st.delays, st.scripted, b, j, now, st.keys, st.arr_node[row],
                         st.arr_time[row])
    st.m_arr[b] = row
    n = st.heap_n[0]
    if n >= len(st.heap_t):
        st.heap_t = state.grown(st.heap_t, n + 1)
        st.heap_b = state.grown(st.heap_b, n + 1)
        st.heap_c = state.grown(st.heap_c, n + 1)
    copies.heap_push(st.heap_t, st.heap_b, st.heap_c, st.heap_n, st.arr_time[row, 0], b, 0)


@njit
def _causally_ready(st, q, b):
    """Every in-flight message of b's past is delivered at q: each message in flight holds a
    slot, and ``have[q]`` / ``need[b]`` are bitsets over the slots."""
    w = st.words
    for x in range(w):
        if st.need[b * w + x] & ~st.have[q * w + x]:
            return False
    return True


@njit
def _deliver(st, q, b):
    state.log(st, T_LOG, oracle.DELIVER, q, b)
    w = st.words
    slot = st.slot[b]
    word, bit = slot >> 6, np.uint64(1) << np.uint64(slot & 63)
    st.have[q * w + word] |= bit
    left = st.m_left[b] - 1
    st.m_left[b] = left
    if left == 0:  # delivered everywhere: no longer in flight, its slot is free again
        for p in range(st.n):
            st.have[p * w + word] &= ~bit
        for x in range(st.n_live[0]):
            st.need[st.live[x] * w + word] &= ~bit
        st.free_slots[st.n_free[0]] = slot
        st.n_free[0] += 1
        pos = st.live_pos[b]
        last = st.n_live[0] - 1
        moved = st.live[last]
        st.live[pos] = moved
        st.live_pos[moved] = pos
        st.n_live[0] = last


@njit
def _contribute(st, n_pairs, u, sign):
    if n_pairs >= len(st.pair_u):
        st.pair_u = state.grown(st.pair_u, n_pairs + 1)
        st.pair_s = state.grown(st.pair_s, n_pairs + 1)
    st.pair_u[n_pairs] = u
    st.pair_s[n_pairs] = sign
    return n_pairs + 1


@njit
def _evaluate(st, q, b, flagged):
    """Which sizes' clock test would let blocked message b pass at q now (a bitmask)."""
    st.counters[C_EVALUATIONS] += 1
    n_pairs = 0
    # messages in flight at b's broadcast: +1 if only q delivered it, -1 if only j had
    start = st.rel_start[b]
    for x in range(start, start + st.rel_len[b]):
        r = st.rel[x]
        sign = (1 if _delivered(st, q, r >> 1) else 0) - (r & 1)
        if sign != 0:
            n_pairs = _contribute(st, n_pairs, r >> 1, sign)
    # messages broadcast after b that q delivered
    u = b + 1
    while u < len(st.m_seq) and st.m_seq[u] > 0:
        if _delivered(st, q, u):
            n_pairs = _contribute(st, n_pairs, u, 1)
        u += 1
    passes = 0
    acc, maps = st.acc, st.maps
    for c in range(st.n_sizes):
        if (flagged >> c) & 1:
            continue
        for p in range(n_pairs):  # the clock surplus V_q - need_b in this size's entry map
            a = st.m_src[st.pair_u[p]]
            for e in range(st.k):
                acc[maps[c, a, e]] += st.pair_s[p]
        ok = True
        for p in range(n_pairs):
            a = st.m_src[st.pair_u[p]]
            for e in range(st.k):
                x = maps[c, a, e]
                if acc[x] < 0:
                    ok = False
                acc[x] = 0
        if ok:
            passes |= np.int64(1) << c
    return passes


@njit
def _count(st, b, passes):
    """Count the sizes whose test passed for the first time (messages after warm-up)."""
    if st.m_time[b] < st.t_warm:
        return
    c = 0
    while passes:
        if passes & 1:
            st.errors[c] += 1
        passes >>= 1
        c += 1


@njit
def _after_delivery(st, q):
    """Deliver q's blocked messages that became ready (repeatedly), then evaluate the others."""
    lists = st.lists
    progress = True
    while progress:
        progress = False
        prev = -1
        e = st.p_head[q]
        while e != -1:
            b, nxt = lists[e, LI_MSG], lists[e, LI_NEXT]
            if _causally_ready(st, q, b):
                if prev == -1:
                    st.p_head[q] = nxt
                else:
                    lists[prev, LI_NEXT] = nxt
                state.release(lists, st.tops, T_LIST_FREE, LI_NEXT, e)
                _deliver(st, q, b)
                progress = True
                break
            prev = e
            e = nxt
    e = st.p_head[q]
    while e != -1:
        b = lists[e, LI_MSG]
        passes = _evaluate(st, q, b, lists[e, LI_FLAGS])
        _count(st, b, passes)
        lists[e, LI_FLAGS] |= passes
        e = lists[e, LI_NEXT]


@njit
def _receive(st, q, b):
    st.counters[C_RECEPTIONS] += 1
    measured = st.m_time[b] >= st.t_warm
    if measured:
        st.counters[C_MEASURED] += 1
    if _causally_ready(st, q, b):
        _deliver(st, q, b)
        if st.p_head[q] != -1:
            _after_delivery(st, q)
        return
    if measured:
        st.counters[C_WAITED] += 1
    passes = _evaluate(st, q, b, 0)
    _count(st, b, passes)
    st.lists, e = state.take(st.lists, st.tops, T_LIST, T_LIST_FREE, LI_NEXT)
    st.lists[e, LI_MSG] = b
    st.lists[e, LI_NEXT] = st.p_head[q]
    st.lists[e, LI_FLAGS] = passes
    st.p_head[q] = e


@njit
def _run(st):
    times = st.m_time
    next_b = 0
    while True:
        if st.heap_n[0] > 0 and (next_b == len(times) or st.heap_t[0] < times[next_b]):
            b, cursor = st.heap_b[0], st.heap_c[0]
            row = st.m_arr[b]
            q = st.arr_node[row, cursor]
            if cursor + 2 < st.n:
                copies.heap_replace_root(st.heap_t, st.heap_b, st.heap_c, st.heap_n,
                                         st.arr_time[row, cursor + 1], b, cursor + 1)
            else:
                copies.heap_drop_root(st.heap_t, st.heap_b, st.heap_c, st.heap_n)
                state.release(st.arr_node, st.tops, T_ARR_FREE, 0, row)
            _receive(st, q, b)
        elif next_b < len(times):
            _broadcast(st, next_b, times[next_b])
            next_b += 1
        else:
            break


def evaluate(workload: Workload, sizes, *, net: network.Network, seed: np.random.SeedSequence,
             k: int = 2, t_warm: float = 5.0, maps=None) -> Evaluation:
    """Run the exact execution of ``workload`` (broadcasts only) and evaluate every clock size
    of ``sizes`` with entry maps ``clocks.entry_map(N, M, k)`` (or ``maps``, one per size: tests);
    messages broadcast before ``t_warm`` are simulated but not counted (spec §5.3)."""
    if net.t_pc != 0 or net.t_t != 0:
        raise ValueError("direct broadcast without sending queue: t_pc and t_t must be 0")
    st = new_state(workload, sizes, k, net, seed, t_warm, maps)
    _run(st)
    log, log_len, counters, errors = _outputs(st)
    report = oracle.check(workload.n_nodes, *state.log_arrays(log, log_len))
    return Evaluation(np.asarray(sizes), errors, int(counters[C_MEASURED]),
                      int(counters[C_WAITED]), int(counters[C_EVALUATIONS]), report)


@njit
def _outputs(st):
    """The log and the counts, in one compiled call (a struct field read from Python compiles
    a getter)."""
    return st.log, st.tops[T_LOG], st.counters.copy(), st.errors.copy()
