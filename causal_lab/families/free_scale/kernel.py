"""The free-scale P2P causal protocol (Evropeytsev et al. 2016, Listings 1-15; spec §3) on one
compiled event loop: one internal group, one super peer (SP), one external group.

Follow an internal peer's message from send to delivery:

1. ``internal_send`` (Listing 4): peer p numbers it with its own ``SN``, attaches its dependency
   vector ``DV`` (the SP-assigned numbers of its immediate predecessors), empties ``DV`` and
   sends the message (wire kind ``UP``) to the SP alone.
2. ``sp_receive_up`` (Listing 7): the SP delivers messages of one internal peer in FIFO order
   (``LR[p].in``); ``sp_relay`` (Listing 8) gives it the next SP number, fills in ``Last`` (the
   SP number of p's previous message) and relays it (``RELAY``) to every internal peer, p
   included; ``translate_internal`` (Listing 14) turns ``DV`` into external-group control
   information (``CI``: the SP's own bit-vector entry, plus a pair (z, in) for every dependency
   that was the translation of external peer z's message ``in``) and sends it (``TRANS_EXT``) to
   every external peer.
3. ``internal_receive`` (Listing 5) at every internal peer: deliverable once ``RV[Last]`` is set
   (FIFO per origin) and every ``DV`` bit is in ``RV``; ``internal_deliver`` (Listing 6) sets
   ``RV[SN]`` and, for a foreign message, replaces the peer's ``DV`` bits it covers by its own.
   External peers receive the translation through ``external_receive`` (Listings 10-11) and
   deliver it with ``external_deliver`` (Listing 12).

An external peer's message (``external_send``, Listing 9: own counter, ``CI``) goes directly to
every other external peer and to the SP; the SP delivers it under Listing 11 (``sp_receive_ext``),
numbers it and translates it for the internal group (``translate_external``, Listing 15:
``TRANS_INT``, internal id 0, its pairs mapped through the translation table ``TT``).

Buffered messages are parked on wake-up lists (``buffers``, spec §3.5), never rescanned.  The
translation table is garbage-collected by the spec §3.7 oracle rule.  Every send and every
application delivery goes to the event log that ``causal_lab.oracle`` checks (own messages
returned to an internal peer are not application deliveries); the byte accounting of spec §5.4,
the DS8 model of the Dependency Sequences baseline (spec §5.3, computed passively from the
external peers' state) and the reception and delivery latencies (``Run.mean_reception_latency``)
are summed as the run goes (``accounting``).

Data layout: a node's bit vectors are rows of bitmaps indexed by SP number (``bitvec``); the
external group's integer entries are ``vt[e, z]`` (external ids, 1 = SP); a wire message is a row
of ``wires`` whose bit vectors and pairs sit in the pools ``bits`` and ``pairs`` (its columns
``W_DV_*`` hold ``DV`` for an ``m_int`` and the SP's bit-vector entry ``CI[SP]`` for an
``m_ext``).  Only one super peer exists in the simulated topology (paper §3.2): the branches of
Listings 10-15 for bit-vector entries of *other* super peers are never taken.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_lab import oracle
from causal_lab.engine import events, memory, state
from causal_lab.engine.jit import njit
from causal_lab.engine.run import Run as BaseRun
from causal_lab.families.free_scale import accounting, bitvec, broadcasts, buffers, channel, pairs
from causal_lab.families.free_scale.accounting import EXT_HEADER, INT_HEADER, INTEGER, PAIR, add
from causal_lab.families.free_scale.pairs import VT
from causal_lab.families.free_scale.workload import Schedule

SP_ID = 1  # the super peer's external id (spec §1)
# wire kinds
UP, RELAY, TRANS_EXT, EXT, TRANS_INT = range(5)
# a wire message: kind, application message, id and SN fields, Last, its dependency bit vector
# (DV of an m_int, CI[SP] of an m_ext: pool offset, first word, words, lo, hi), its integer pairs
# (pool offset, count) and its I vector (m_ext from the SP)
(W_KIND, W_APP, W_ID, W_SN, W_LAST, W_DV_OFF, W_DV_W0, W_DV_NW, W_DV_LO, W_DV_HI, W_CI_OFF,
 W_CI_N, W_I_OFF, W_I_W0, W_I_NW, W_I_LO, W_I_HI) = range(17)
WIRE_COLUMNS = 17
# roles of buffered messages
AT_INTERNAL, AT_EXTERNAL, AT_SP_INTERNAL, AT_SP_EXTERNAL = range(4)
ROLES = ("internal peers", "external peers", "SP (internal messages)", "SP (external messages)")
RING = 1024  # position lists per node (buffers)
# fill levels in tops
T_RECS, T_FREE_RECS, T_READY, T_LOG, T_WIRES, T_BITS, T_PAIRS, T_OUT = range(
    broadcasts.FIRST_FREE_TOP, broadcasts.FIRST_FREE_TOP + 8)
N_TOPS = broadcasts.FIRST_FREE_TOP + 8
# sp[...]: the super peer's scalars
SP_SN, SP_GC_UPTO, SP_TT_LIVE, SP_STAMP = range(4)
# acc[...]: (sum, count) pairs of the window: byte counts, then the latencies (ms) of the
# messages broadcast in it
(A_UP, A_RELAY, A_TRANS, A_EXT_PEER, A_EXT_SP, A_STOR_INT, A_STOR_EXT, A_STOR_SP, A_TT, A_DS8,
 A_DS12, A_DSNP, A_DSNP_EARLY, A_DSNP_LATE, A_RUNS, A_RECEPTION, A_DELIVERY) = range(0, 34, 2)
N_ACC = 34
# cnt[...]
C_EVENTS, C_MULTI_MATCH, C_BELOW, C_GC, C_COLLECTED = range(5)
N_CNT = 5

FIELDS = (
    # layout and configuration
    "n", "L", "E", "G", "ring", "start", "end", "tt_gc", "gc_interval", "channel",
    # workload: per message its sender, own SN, send time; (peer, SN) -> message
    "app_src", "app_seq", "app_time", "msg_off", "msg_ids",
    # internal peers: SN, RV (receive-type), DV (dependency-type)
    "sn_int", "rv", "rv_f0", "rv_l1", "dv", "dv_lo", "dv_hi",
    # external peers: integer VTx entries and CI pairs (pairs.py), VTx[SP], CI[SP], DS8 state
    "vc", "ci_n", "vsp", "vsp_f0", "vsp_l1", "csp", "csp_lo", "csp_hi", "ds_nz", "ds_runs",
    "ds_np",
    # super peer: scalars, VTx of external peers, LR, TT (by message; newest per sender), SN ->
    # message and the instant it was given, I, Listing 14 scratch
    "sp", "sp_gc_time", "sp_vt", "lr_in", "lr_out", "tt_out", "tt_newest", "pos_app", "pos_time",
    "isp", "isp_lo", "isp_hi", "hit", "tmp", "tmp_lo", "tmp_hi", "positions",
    # wire messages and their pools; each message's first wire
    "wires", "bits", "pairs", "app_wire", "outbox",
    # buffers (buffers.py) and broadcasts (broadcasts.py)
    "recs", "heads", "occupied", "ready", "parked", "server_free", "blk_time", "blk_dest",
    "blk_wire", "blk_n", "blk_free", "dests", "arrivals", "keys",
    # measurements and the event log
    "acc", "cnt", "log", "tops",
)
StateType, State = state.define("State", FIELDS, __name__)


def new_state(schedule: Schedule, net: channel.Channel, tt_gc: bool = True,
              gc_interval: float = 10.0) -> State:
    """The initial state of every role (Listings 1-3) for ``schedule``."""
    n = schedule.n_peers
    if n < 2 or n % 2:
        raise ValueError(f"n_peers must be even and >= 2 (peers split equally), got {n}")
    L = E = n // 2
    G = E + 1
    m = len(schedule.times)
    words = bitvec.words_for(m + 2)
    msg_off, msg_ids = schedule.message_of()
    u64, i64, i32 = np.uint64, np.int64, np.int32
    rv, vsp = np.zeros((L, words), u64), np.zeros((E, words), u64)
    rv_f0, vsp_f0 = np.ones(L, i64), np.ones(E, i64)
    rv[:, 0] = vsp[:, 0] = 1  # bit 0 is always set in receive-type vectors
    heads = L * RING + E * (G + 1) + E * RING + (G + 1) + L
    tops = np.zeros(N_TOPS, i64)
    tops[T_FREE_RECS] = -1  # the free list of buffer records is empty
    return State.create(
        n=n, L=L, E=E, G=G, ring=RING, start=schedule.window.start, end=schedule.window.end,
        tt_gc=bool(tt_gc), gc_interval=float(gc_interval), channel=net,
        app_src=schedule.senders.astype(i64), app_seq=schedule.seqs.astype(i64),
        app_time=schedule.times.astype(np.float64), msg_off=msg_off, msg_ids=msg_ids,
        sn_int=np.zeros(L, i64), rv=rv, rv_f0=rv_f0, rv_l1=np.zeros(L, i64),
        dv=np.zeros((L, words), u64), dv_lo=np.zeros(L, i64), dv_hi=np.zeros(L, i64),
        vc=np.zeros((E, G + 1, 2), pairs.entry_type(schedule.seqs)), ci_n=np.zeros(E, i64),
        vsp=vsp, vsp_f0=vsp_f0, vsp_l1=np.zeros(E, i64),
        csp=np.zeros((E, words), u64), csp_lo=np.zeros(E, i64), csp_hi=np.zeros(E, i64),
        ds_nz=np.zeros(E, i64), ds_runs=np.ones(E, i64), ds_np=np.zeros(E, i64),
        sp=np.zeros(4, i64), sp_gc_time=np.zeros(1), sp_vt=np.zeros((1, G + 1, 2), i32),
        lr_in=np.zeros(L, i64), lr_out=np.zeros(L, i64), tt_out=np.zeros(m, i64),
        tt_newest=np.zeros(G + 1, i64), pos_app=np.full(m + 2, -1, i64), pos_time=np.zeros(m + 2),
        isp=np.zeros((1, words), u64), isp_lo=np.zeros(1, i64), isp_hi=np.zeros(1, i64),
        hit=np.zeros(G + 1, i64), tmp=np.zeros((1, words), u64), tmp_lo=np.zeros(1, i64),
        tmp_hi=np.zeros(1, i64), positions=np.empty(64 * words, i64),
        wires=state.table(WIRE_COLUMNS, max(2 * m, 16)), bits=np.empty(1024, u64),
        pairs=np.empty(1024, pairs.pool_type(schedule.seqs, G + 1)), app_wire=np.full(m, -1, i64),
        outbox=np.empty(64, i64),
        **buffers.new_fields(heads, len(ROLES)),
        **broadcasts.new_fields(E, n + 1),
        acc=np.zeros(N_ACC), cnt=np.zeros(N_CNT, i64),
        log=state.new_log(max(m * n, 16), np.int32), tops=tops,
    )


# ------------------------------------------------------------------------------------------
# wire messages, list heads, small helpers
# ------------------------------------------------------------------------------------------


@njit
def _wire(st, kind, app, ident, sn, last):
    """A new wire message row with empty vectors and no pairs."""
    st.wires, w = state.append(st.wires, st.tops, T_WIRES)
    row = st.wires[w]
    row[:] = 0
    row[W_KIND] = kind
    row[W_APP] = app
    row[W_ID] = ident
    row[W_SN] = sn
    row[W_LAST] = last
    return w


@njit(inline="always")
def _emit(st, w):
    """Queue wire ``w`` for sending (the loop fans the outbox out after each handler)."""
    k = st.tops[T_OUT]
    if k == len(st.outbox):
        st.outbox = state.grown(st.outbox, k + 1)
    st.outbox[k] = w
    st.tops[T_OUT] = k + 1


@njit
def _pack(st, w, bm, lo, hi, r, col_off):
    """Attach row r of a dependency-type vector to wire w (columns from ``col_off``:
    offset, first word, words, lo, hi)."""
    nw = bitvec.span_words(lo[r], hi[r])
    top = st.tops[T_BITS]
    if top + nw > len(st.bits):
        st.bits = state.grown(st.bits, top + nw)
    w0, nw = bitvec.pack(bm, lo, hi, r, st.bits, top)
    st.tops[T_BITS] = top + nw
    row = st.wires[w]
    row[col_off] = top
    row[col_off + 1] = w0
    row[col_off + 2] = nw
    row[col_off + 3] = lo[r]
    row[col_off + 4] = hi[r]


@njit(inline="always")
def _pair_room(st, n):
    """Pool offset for n more pairs (the pool grows if needed)."""
    top = st.tops[T_PAIRS]
    if top + 2 * n > len(st.pairs):
        st.pairs = state.grown(st.pairs, top + 2 * n)
    return top


@njit(inline="always")
def _message(st, peer, seq):
    """The application message that is ``peer``'s ``seq``-th."""
    return st.msg_ids[st.msg_off[peer] + seq - 1]


@njit(inline="always")
def _ext_global(st, z):
    """Global peer number of external id z (2..E+1)."""
    return st.L + z - 2


@njit(inline="always")
def _ext_id(st, g):
    return g - st.L + 2


# heads of the wake-up lists (buffers.py)
@njit(inline="always")
def _h_internal(st, p, position):
    return p * st.ring + (position & (st.ring - 1))


@njit(inline="always")
def _h_external(st, e, z):
    return st.L * st.ring + e * (st.G + 1) + z


@njit(inline="always")
def _h_external_bit(st, e, position):
    return st.L * st.ring + st.E * (st.G + 1) + e * st.ring + (position & (st.ring - 1))


@njit(inline="always")
def _h_sp_external(st, z):
    return st.L * st.ring + st.E * (st.G + 1) + st.E * st.ring + z


@njit(inline="always")
def _h_sp_internal(st, p):
    return st.L * st.ring + st.E * (st.G + 1) + st.E * st.ring + st.G + 1 + p


@njit(inline="always")
def _park(st, head, w, role, node, need, resume):
    buffers.park(st, T_RECS, T_FREE_RECS, head, w, role, node, need, resume)


# ------------------------------------------------------------------------------------------
# internal group (Listings 4-6)
# ------------------------------------------------------------------------------------------


@njit
def internal_send(st, p, app, now):
    """Listing 4 at internal peer p (internal id p + 1)."""
    st.sn_int[p] += 1
    w = _wire(st, UP, app, p + 1, st.sn_int[p], 0)
    _pack(st, w, st.dv, st.dv_lo, st.dv_hi, p, W_DV_OFF)
    add(st.acc, A_UP, INT_HEADER + bitvec.dep_bytes(st.dv_lo[p], st.dv_hi[p]), now, st.start, st.end)
    bitvec.dep_clear(st.dv, st.dv_lo, st.dv_hi, p)
    st.app_wire[app] = w
    state.log(st, T_LOG, oracle.BROADCAST, p, app)
    _emit(st, w)


@njit
def internal_receive(st, p, w, resume, now):
    """Listing 5: deliver, or park under the *highest* unmet position of (DV & ~RV) | {Last}
    (``resume``: the word of the lowest).  SP numbers are handed out in time order, so the
    highest is most likely the last to arrive: parked under the lowest, a message was woken and
    parked again about three times (N = 900 bench case) before it could be delivered."""
    wires, rv = st.wires, st.rv
    off, w0, nw = wires[w, W_DV_OFF], wires[w, W_DV_W0], wires[w, W_DV_NW]
    missing, resume = bitvec.first_missing(st.bits, off, w0, nw, rv, p, resume)
    if missing != 0:
        missing = bitvec.last_missing(st.bits, off, w0, nw, rv, p, resume)
    last = wires[w, W_LAST]
    if last != 0 and last > missing and not bitvec.get(rv, p, last):
        missing = last
    if missing != 0:
        _park(st, _h_internal(st, p, missing), w, AT_INTERNAL, p, missing, resume)
        return
    internal_deliver(st, p, w, now)


@njit
def internal_deliver(st, p, w, now):
    """Listing 6, then a storage sample and the wake-up of messages waiting for RV[SN]."""
    wires, rv, rv_f0, rv_l1 = st.wires, st.rv, st.rv_f0, st.rv_l1
    dv, dv_lo, dv_hi = st.dv, st.dv_lo, st.dv_hi
    sn = wires[w, W_SN]
    buffers.prefetch(st, _h_internal(st, p, sn))
    bitvec.recv_put(rv, rv_f0, rv_l1, p, sn)
    if wires[w, W_ID] != p + 1:  # foreign (translations have id 0): an application delivery
        bitvec.dep_andnot(dv, dv_lo, dv_hi, p, st.bits, wires[w, W_DV_OFF], wires[w, W_DV_W0],
                          wires[w, W_DV_NW])
        bitvec.dep_put(dv, dv_lo, dv_hi, p, sn)
        bitvec.dep_drop(dv, dv_lo, dv_hi, p, wires[w, W_LAST])
        state.log(st, T_LOG, oracle.DELIVER, p, wires[w, W_APP])
        accounting.latency(st, A_DELIVERY, wires[w, W_APP], now)
    add(st.acc, A_STOR_INT, INTEGER + bitvec.recv_bytes(rv_f0[p], rv_l1[p])
        + bitvec.dep_bytes(dv_lo[p], dv_hi[p]), now, st.start, st.end)
    buffers.wake_at(st, T_READY, _h_internal(st, p, sn), sn)


# ------------------------------------------------------------------------------------------
# external group (Listings 9-12)
# ------------------------------------------------------------------------------------------


@njit
def external_send(st, e, app, now):
    """Listing 9 at external peer e (external id e + 2); DS8 sizes the same message."""
    z = e + 2
    st.vc[e, z, VT] += 1
    w = _wire(st, EXT, app, z, st.vc[e, z, VT], 0)
    top = _pair_room(st, st.ci_n[e])
    n = pairs.ci_take(st.vc, st.ci_n, e, st.pairs, top)
    st.tops[T_PAIRS] = top + 2 * n
    st.wires[w, W_CI_OFF] = top
    st.wires[w, W_CI_N] = n
    _pack(st, w, st.csp, st.csp_lo, st.csp_hi, e, W_DV_OFF)
    size = EXT_HEADER + PAIR * n
    if st.csp_lo[e] != 0:
        size += INTEGER + bitvec.dep_bytes(st.csp_lo[e], st.csp_hi[e])
    bitvec.dep_clear(st.csp, st.csp_lo, st.csp_hi, e)
    add(st.acc, A_EXT_PEER, size, now, st.start, st.end)
    _dependency_sequences(st, e, now)
    st.app_wire[app] = w
    state.log(st, T_LOG, oracle.BROADCAST, st.L + e, app)
    _emit(st, w)


@njit
def _dependency_sequences(st, e, now):
    """DS8 (spec §5.3): 8 + 8 per external peer whose prefix [1, VT_e[j]] is non-empty + 8 per
    maximal run of e's VTx[SP] (position 0 included); DS12 charges 12 per external peer and
    4 + 8 per run.  The non-pruning variant (amendment 3) never lets a sender's size shrink."""
    ds8 = 8 + 8 * st.ds_nz[e] + 8 * st.ds_runs[e]
    if ds8 > st.ds_np[e]:
        st.ds_np[e] = ds8
    acc, a, b = st.acc, st.start, st.end
    add(acc, A_DS8, ds8, now, a, b)
    add(acc, A_DS12, 8 + 12 * st.ds_nz[e] + 4 + 8 * st.ds_runs[e], now, a, b)
    add(acc, A_DSNP, st.ds_np[e], now, a, b)
    half = (a + b) / 2
    add(acc, A_DSNP_EARLY, st.ds_np[e], now, a, half)
    add(acc, A_DSNP_LATE, st.ds_np[e], now, half, b)
    add(acc, A_RUNS, st.ds_runs[e], now, a, b)


@njit(inline="always")
def _vsp_put(st, e, x):
    """Set VTx[SP][x] at external peer e (a delivery or an I merge): DS runs, wake-ups."""
    vsp = st.vsp
    if bitvec.recv_put(vsp, st.vsp_f0, st.vsp_l1, e, x):
        st.ds_runs[e] += 1 - bitvec.get(vsp, e, x - 1) - bitvec.get(vsp, e, x + 1)
        buffers.wake_at(st, T_READY, _h_external_bit(st, e, x), x)


@njit(inline="always")
def _sent(st, i, seq):
    """When external peer i (external id) broadcast its ``seq``-th message."""
    return st.app_time[_message(st, _ext_global(st, i), seq)]


@njit
def external_receive(st, e, w, resume, now):
    """Listing 11 at external peer e (Listing 10 ran on arrival); ``resume`` counts the pairs
    already met, then the words of CI[SP] already covered.  A message that must wait is parked
    under the unmet requirement whose message was sent *last* (the FIFO predecessor and the
    pairs by their broadcast instant, CI[SP] positions by the instant the SP numbered them),
    the one most likely to be met last, and every requirement is listed in one pass: parked
    under the first unmet one, a message was woken and parked again about three times (N = 900
    bench case) before it could be delivered."""
    row = st.wires[w]
    z, sn = row[W_ID], row[W_SN]
    n, off = row[W_CI_N], row[W_CI_OFF]
    head, need, latest = -1, 0, -np.inf
    if z != SP_ID and sn != st.vc[e, z, VT] + 1:  # FIFO for peer senders
        head, need, latest = _h_external(st, e, z), sn - 1, _sent(st, z, sn - 1)
    words = 0  # CI[SP] words known to be covered
    if resume < n:
        k = pairs.first_unmet(st.vc, e, st.pairs, off, n, resume, e + 2)
        resume = k
        while k < n:
            i, dep = st.pairs[off + 2 * k], st.pairs[off + 2 * k + 1]
            t = _sent(st, i, dep)
            if t > latest:
                head, need, latest = _h_external(st, e, i), dep, t
            k = pairs.first_unmet(st.vc, e, st.pairs, off, n, k + 1, e + 2)
    else:
        words = resume - n
    bits, w0, nw = row[W_DV_OFF], row[W_DV_W0], row[W_DV_NW]
    missing, k = bitvec.first_missing(st.bits, bits, w0, nw, st.vsp, e, words)
    if missing != 0:
        if resume >= n:
            resume = n + k
        x = bitvec.last_missing(st.bits, bits, w0, nw, st.vsp, e, k)
        if st.pos_time[x] > latest:
            head, need = _h_external_bit(st, e, x), x
    elif resume >= n:
        resume = n + nw
    if head >= 0:
        _park(st, head, w, AT_EXTERNAL, e, need, resume)
        return
    external_deliver(st, e, w, now)


@njit
def external_deliver(st, e, w, now):
    """Listing 12 at external peer e, then a storage sample and the wake-ups."""
    row = st.wires[w]
    z, sn = row[W_ID], row[W_SN]
    buffers.prefetch(st, _h_external(st, e, z) if z != SP_ID else _h_external_bit(st, e, sn))
    if z != SP_ID:
        if st.vc[e, z, VT] == 0:
            st.ds_nz[e] += 1
        st.vc[e, z, VT] = sn
        pairs.ci_put(st.vc, st.ci_n, e, z, sn)
    else:
        _vsp_put(st, e, sn)
        bitvec.dep_put(st.csp, st.csp_lo, st.csp_hi, e, sn)
    st.cnt[C_BELOW] += pairs.ci_absorb(st.vc, st.ci_n, e, st.pairs, row[W_CI_OFF], row[W_CI_N])
    bitvec.dep_andnot(st.csp, st.csp_lo, st.csp_hi, e, st.bits, row[W_DV_OFF], row[W_DV_W0],
                      row[W_DV_NW])
    state.log(st, T_LOG, oracle.DELIVER, st.L + e, row[W_APP])
    accounting.latency(st, A_DELIVERY, row[W_APP], now)
    size = INTEGER * st.E + bitvec.recv_bytes(st.vsp_f0[e], st.vsp_l1[e]) + PAIR * st.ci_n[e]
    if st.csp_lo[e] != 0:
        size += INTEGER + bitvec.dep_bytes(st.csp_lo[e], st.csp_hi[e])
    add(st.acc, A_STOR_EXT, size, now, st.start, st.end)
    if z != SP_ID:
        buffers.wake_upto(st, T_READY, _h_external(st, e, z), sn)


@njit
def external_arrival(st, e, w, now):
    """Listing 10 (learn the positions the SP announces in I), then Listing 11.  Only the
    positions e lacks are visited: setting one it holds changes nothing."""
    row = st.wires[w]
    if row[W_KIND] == TRANS_EXT and row[W_I_NW] != 0:
        count = bitvec.missing_positions(st.bits, row[W_I_OFF], row[W_I_W0], row[W_I_NW],
                                         st.vsp, e, st.positions)
        for k in range(count):
            _vsp_put(st, e, st.positions[k])
    external_receive(st, e, w, 0, now)


# ------------------------------------------------------------------------------------------
# the super peer (Listings 7, 8, 11, 13, 14, 15) and TT garbage collection (spec §3.7)
# ------------------------------------------------------------------------------------------


@njit
def sp_receive_up(st, w, resume, now):
    """Listing 7: FIFO per internal peer."""
    p = st.wires[w, W_ID] - 1
    sn = st.wires[w, W_SN]
    if sn != st.lr_in[p] + 1:
        _park(st, _h_sp_internal(st, p), w, AT_SP_INTERNAL, p, sn - 1, 0)
        return
    sp_relay(st, w, now)


@njit
def sp_relay(st, w_up, now):
    """Listing 8: number the message, relay it to the internal group, translate it (Listing 14)
    for the external group."""
    up = st.wires[w_up]
    p = up[W_ID] - 1
    last = st.lr_out[p]
    st.sp[SP_SN] += 1
    sn = st.sp[SP_SN]
    st.lr_in[p] = up[W_SN]
    st.lr_out[p] = sn
    app = up[W_APP]
    st.pos_app[sn] = app
    st.pos_time[sn] = now
    w = _wire(st, RELAY, app, p + 1, sn, last)
    st.wires[w, W_DV_OFF:W_DV_HI + 1] = st.wires[w_up, W_DV_OFF:W_DV_HI + 1]  # DV unchanged
    add(st.acc, A_RELAY, INT_HEADER + bitvec.dep_bytes(st.wires[w, W_DV_LO], st.wires[w, W_DV_HI]),
        now, st.start, st.end)
    _emit(st, w)
    translate_internal(st, w, now)
    _sp_storage(st, now)
    if st.tt_gc and now - st.sp_gc_time[0] >= st.gc_interval:
        collect(st, now)
    buffers.wake_upto(st, T_READY, _h_sp_internal(st, p), st.lr_in[p])


@njit
def translate_internal(st, w, now):
    """Listing 14: CI = {<SP, DV + Last>}, every DV bit that translated external peer z's
    message ``in`` becomes the pair <z, in> (newest first, one per peer: "Exit For") and moves
    to I; I_m = I, then I := empty."""
    row = st.wires[w]
    tmp, tlo, thi = st.tmp, st.tmp_lo, st.tmp_hi
    bitvec.unpack_or(tmp, tlo, thi, 0, st.bits, row[W_DV_OFF], row[W_DV_W0], row[W_DV_NW],
                     row[W_DV_LO], row[W_DV_HI])
    bitvec.dep_put(tmp, tlo, thi, 0, row[W_LAST])
    st.sp[SP_STAMP] += 1
    stamp = st.sp[SP_STAMP]
    count = bitvec.pooled_positions(st.bits, row[W_DV_OFF], row[W_DV_W0], row[W_DV_NW], st.positions)
    top = _pair_room(st, count)
    n = 0
    for k in range(count - 1, -1, -1):  # newest first
        out = st.positions[k]
        a = st.pos_app[out]
        if st.tt_out[a] != out:  # not a (live) translation of an external message
            continue
        z = _ext_id(st, st.app_src[a])
        if st.hit[z] == stamp:  # a second, older hit of the same peer: left as a CI[SP] bit
            st.cnt[C_MULTI_MATCH] += 1
            continue
        st.hit[z] = stamp
        bitvec.dep_put(st.isp, st.isp_lo, st.isp_hi, 0, out)
        bitvec.dep_drop(tmp, tlo, thi, 0, out)
        st.pairs[top + 2 * n] = z
        st.pairs[top + 2 * n + 1] = st.app_seq[a]
        n += 1
    st.tops[T_PAIRS] = top + 2 * n
    x = _wire(st, TRANS_EXT, row[W_APP], SP_ID, row[W_SN], 0)
    st.wires[x, W_CI_OFF] = top
    st.wires[x, W_CI_N] = n
    _pack(st, x, tmp, tlo, thi, 0, W_DV_OFF)
    _pack(st, x, st.isp, st.isp_lo, st.isp_hi, 0, W_I_OFF)
    size = EXT_HEADER + PAIR * n + bitvec.dep_bytes(st.isp_lo[0], st.isp_hi[0])
    if tlo[0] != 0:
        size += INTEGER + bitvec.dep_bytes(tlo[0], thi[0])
    add(st.acc, A_EXT_SP, size, now, st.start, st.end)
    bitvec.dep_clear(tmp, tlo, thi, 0)
    bitvec.dep_clear(st.isp, st.isp_lo, st.isp_hi, 0)
    _emit(st, x)


@njit
def sp_receive_ext(st, w, resume, now):
    """Listing 11 at the SP: FIFO, then every integer pair (its own entry is skipped, and the
    SP has no other bit-vector entry)."""
    row = st.wires[w]
    z, sn = row[W_ID], row[W_SN]
    if sn != st.sp_vt[0, z, VT] + 1:
        _park(st, _h_sp_external(st, z), w, AT_SP_EXTERNAL, 0, sn - 1, resume)
        return
    n = row[W_CI_N]
    k = pairs.first_unmet(st.sp_vt, 0, st.pairs, row[W_CI_OFF], n, resume, SP_ID)
    if k < n:
        i = st.pairs[row[W_CI_OFF] + 2 * k]
        _park(st, _h_sp_external(st, i), w, AT_SP_EXTERNAL, 0, st.pairs[row[W_CI_OFF] + 2 * k + 1], k)
        return
    # Listing 13
    st.sp_vt[0, z, VT] = sn
    st.sp[SP_SN] += 1
    translate_external(st, w, now)
    _sp_storage(st, now)
    buffers.wake_upto(st, T_READY, _h_sp_external(st, z), sn)


@njit
def translate_external(st, w, now):
    """Listing 15: DV = CI[SP] plus, for every pair <z, dep>, the SP number of z's message dep
    (TT; not translated if garbage-collected); Last = the newest TT entry of the sender; the new
    number is recorded in TT and I."""
    row = st.wires[w]
    sn = st.sp[SP_SN]
    tmp, tlo, thi = st.tmp, st.tmp_lo, st.tmp_hi
    bitvec.unpack_or(tmp, tlo, thi, 0, st.bits, row[W_DV_OFF], row[W_DV_W0], row[W_DV_NW],
                     row[W_DV_LO], row[W_DV_HI])
    off = row[W_CI_OFF]
    for k in range(row[W_CI_N]):
        z = st.pairs[off + 2 * k]
        if z == SP_ID:  # spec A9
            continue
        out = st.tt_out[_message(st, _ext_global(st, z), st.pairs[off + 2 * k + 1])]
        if out != 0:
            bitvec.dep_put(tmp, tlo, thi, 0, out)
    z, app = row[W_ID], row[W_APP]
    x = _wire(st, TRANS_INT, app, 0, sn, st.tt_newest[z])
    st.tt_out[app] = sn
    st.tt_newest[z] = sn
    st.sp[SP_TT_LIVE] += 1
    st.pos_app[sn] = app
    st.pos_time[sn] = now
    bitvec.dep_put(st.isp, st.isp_lo, st.isp_hi, 0, sn)
    _pack(st, x, tmp, tlo, thi, 0, W_DV_OFF)
    add(st.acc, A_TRANS, INT_HEADER + bitvec.dep_bytes(tlo[0], thi[0]), now, st.start, st.end)
    bitvec.dep_clear(tmp, tlo, thi, 0)
    _emit(st, x)


@njit
def _sp_storage(st, now):
    """The SP's storage (diagnostic, spec A16): VTx, I, LR, TT."""
    size = (INTEGER * st.G + bitvec.dep_bytes(st.isp_lo[0], st.isp_hi[0]) + PAIR * st.L
            + PAIR * st.sp[SP_TT_LIVE])
    add(st.acc, A_STOR_SP, size, now, st.start, st.end)
    add(st.acc, A_TT, st.sp[SP_TT_LIVE], now, st.start, st.end)


@njit
def collect(st, now):
    """Spec §3.7: delete every TT entry whose SP number is below T, the lowest position that an
    internal peer has not delivered, still holds in DV, or that a not yet relayed internal
    message names in its DV (the in-transit guard)."""
    st.sp_gc_time[0] = now
    st.cnt[C_GC] += 1
    t = st.sp[SP_SN] + 1
    for p in range(st.L):
        t = min(t, st.rv_f0[p])
        if st.dv_lo[p] != 0:
            t = min(t, st.dv_lo[p])
        for s in range(st.lr_in[p] + 1, st.sn_int[p] + 1):
            lo = st.wires[st.app_wire[_message(st, p, s)], W_DV_LO]
            if lo != 0:
                t = min(t, lo)
    for x in range(st.sp[SP_GC_UPTO], t):
        a = st.pos_app[x]
        if a >= 0 and st.tt_out[a] == x:
            st.tt_out[a] = 0
            z = _ext_id(st, st.app_src[a])
            if st.tt_newest[z] == x:
                st.tt_newest[z] = 0
            st.sp[SP_TT_LIVE] -= 1
            st.cnt[C_COLLECTED] += 1
    st.sp[SP_GC_UPTO] = max(st.sp[SP_GC_UPTO], t)


# ------------------------------------------------------------------------------------------
# dispatch, fan-out and the run
# ------------------------------------------------------------------------------------------


@njit
def _evaluate(st, role, node, w, resume, now):
    if role == AT_INTERNAL:
        internal_receive(st, node, w, resume, now)
    elif role == AT_EXTERNAL:
        external_receive(st, node, w, resume, now)
    elif role == AT_SP_INTERNAL:
        sp_receive_up(st, w, resume, now)
    else:
        sp_receive_ext(st, w, resume, now)


@njit
def receive_copy(st, w, dest, now):
    """A copy of wire ``w`` arrives at node ``dest``: its delivery condition."""
    if dest == st.n:
        if st.wires[w, W_KIND] == UP:
            sp_receive_up(st, w, 0, now)
        else:
            sp_receive_ext(st, w, 0, now)
        return
    _reception(st, w, dest, now)
    if dest < st.L:
        internal_receive(st, dest, w, 0, now)
    else:
        external_arrival(st, dest - st.L, w, now)


@njit(inline="always")
def _reception(st, w, dest, now):
    """Wire ``w`` reaching peer ``dest`` is the one copy of its message that peer receives (a
    relay, a translation or an external peer's direct send), unless it is an internal peer's own
    message relayed back: that is no reception.  The super peer is no application process."""
    app = st.wires[w, W_APP]
    if dest != st.app_src[app]:
        accounting.latency(st, A_RECEPTION, app, now)


@njit
def recheck(st, now):
    """Re-evaluate every buffered message a delivery woke up, to a fix-point."""
    while True:
        w, role, node, resume = buffers.pop_ready(st, T_READY, T_FREE_RECS)
        if role < 0:
            return
        _evaluate(st, role, node, w, resume, now)


@njit
def send(st, app, now):
    """Application message ``app`` is generated at its sender."""
    g = st.app_src[app]
    if g < st.L:
        internal_send(st, g, app, now)
    else:
        external_send(st, g - st.L, app, now)


@njit
def _fan_out(st, q, now):
    """Send every wire of the outbox to its destinations."""
    dests, L, n = st.dests, st.L, st.n
    for k in range(st.tops[T_OUT]):
        w = st.outbox[k]
        kind, app = st.wires[w, W_KIND], st.wires[w, W_APP]
        count = 0
        if kind == UP:
            sender = st.app_src[app]
            dests[0] = n
            count = 1
        elif kind == EXT:
            sender = st.app_src[app]
            for d in range(L, n):
                if d != sender:
                    dests[count] = d
                    count += 1
            dests[count] = n
            count += 1
        elif kind == TRANS_EXT:
            sender = n
            for d in range(L, n):
                dests[count] = d
                count += 1
        else:  # RELAY, TRANS_INT: the whole internal group
            sender = n
            for d in range(L):
                dests[count] = d
                count += 1
        broadcasts.send(st, q, w, app, sender, count, now)
    st.tops[T_OUT] = 0


@njit(inline="always")
def _prefetch(st, q):
    """Start loading the receiver's rows that the next arrival will read (``broadcasts.prefetch``
    says which), while this one is handled: an external peer's vector-time row (its ~120 pairs
    are checked against it: that load was the hottest instruction of ``external_receive``), an
    internal peer's RV words of the message's Last and first DV word and its DV word; and the
    bit and head of the wake-up list its delivery will look at (``buffers.prefetch``).  With the
    block and wake-up prefetches, the 900-peer bench case (``bench``) ran 10 % more arrival
    events per CPU-second: 26 alternating runs each, medians 5.44e5 against 4.94e5, 18 of 22
    pairs faster, the same runs bit for bit."""
    w, d = broadcasts.prefetch(st, q)
    if d < 0 or d >= st.n:
        return
    if d >= st.L:
        width = (st.G + 1) * 2
        row = (d - st.L) * width
        line = 64 // st.vc.itemsize
        for k in range(row, row + width + line, line):
            memory.prefetch(st.vc, k)
        z, sn = st.wires[w, W_ID], st.wires[w, W_SN]
        head = _h_external(st, d - st.L, z) if z != SP_ID else _h_external_bit(st, d - st.L, sn)
    else:
        words = st.rv.shape[1]
        memory.prefetch(st.rv, d * words + (st.wires[w, W_LAST] >> 6))
        memory.prefetch(st.rv, d * words + st.wires[w, W_DV_W0])
        memory.prefetch(st.dv, d * words + st.wires[w, W_DV_W0])
        head = _h_internal(st, d, st.wires[w, W_SN])
    # the wake-up list a delivery will look at (``buffers.prefetch`` then reads both)
    memory.prefetch(st.occupied, head >> 6)
    memory.prefetch(st.heads, head)


@njit
def _run(st):
    q = events.new_queue()
    times = st.app_time
    i = 0
    m = len(times)
    while True:
        if i < m and (events.empty(q) or times[i] <= events.next_time(q)):
            now = times[i]
            send(st, i, now)
            i += 1
        elif not events.empty(q):
            now, w, dest = broadcasts.next_arrival(st, q)
            _prefetch(st, q)
            st.cnt[C_EVENTS] += 1
            receive_copy(st, w, dest, now)
            recheck(st, now)
        else:
            return
        _fan_out(st, q, now)


@njit
def step(st, app, w, dest, now, drain):
    """Scenario driving without the event queue: a send (``app >= 0``), or the arrival of wire
    ``w`` at ``dest`` (``w >= 0``), then (``drain``) the re-check of what it woke up; returns
    the wires it created (the caller routes them) and empties the outbox."""
    if app >= 0:
        send(st, app, now)
    elif w >= 0:
        receive_copy(st, w, dest, now)
    if drain:
        recheck(st, now)
    created = st.outbox[:st.tops[T_OUT]].copy()
    st.tops[T_OUT] = 0
    return created


# ------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Run(BaseRun):
    """A free-scale run: byte and latency sums of the window (``acc``, see ``metrics`` and the
    latency means), counters and what was left when the network drained."""

    acc: np.ndarray
    counters: np.ndarray
    parked_max: np.ndarray  # per role, the most messages buffered at once
    leftovers: dict  # what must be empty or complete after the drain

    def metrics(self) -> dict:
        """Means of the window: communication per stream and group (accountings A and B),
        storage per group, the DS8 model, the SP's diagnostics."""
        acc = self.acc

        def pair(i):
            return acc[i], acc[i + 1]

        def mean(i):
            return accounting.mean(*pair(i))

        ext_a = accounting.mean(acc[A_EXT_PEER] + acc[A_EXT_SP], acc[A_EXT_PEER + 1] + acc[A_EXT_SP + 1])
        out = {f"comm_int_{x}": accounting.internal_comm(pair(A_UP), pair(A_RELAY), pair(A_TRANS), x)
               for x in accounting.ACCOUNTINGS}
        out.update({f"comm_ext_{x}": accounting.headerless(ext_a, EXT_HEADER, x)
                    for x in accounting.ACCOUNTINGS})
        out.update({f"comm_ds_{x}": accounting.headerless(mean(A_DS8), accounting.DS_HEADER, x)
                    for x in accounting.ACCOUNTINGS})
        ds_count = acc[A_EXT_PEER + 1]
        out.update({
            "comm_int_up": mean(A_UP), "comm_int_relay": mean(A_RELAY),
            "comm_int_trans": mean(A_TRANS), "comm_ext_peer": mean(A_EXT_PEER),
            "comm_ext_sp": mean(A_EXT_SP), "stor_int": mean(A_STOR_INT),
            "stor_ext": mean(A_STOR_EXT), "stor_sp": mean(A_STOR_SP), "tt_entries": mean(A_TT),
            "comm_ds12": accounting.mean(acc[A_DS12], ds_count),
            "comm_ds_np": accounting.mean(acc[A_DSNP], ds_count),
            "comm_ds_np_early": mean(A_DSNP_EARLY), "comm_ds_np_late": mean(A_DSNP_LATE),
            "ds_runs": accounting.mean(acc[A_RUNS], ds_count),
            "messages_int": int(acc[A_UP + 1]), "messages_ext": int(acc[A_EXT_PEER + 1]),
            "samples_stor_int": int(acc[A_STOR_INT + 1]), "samples_stor_ext": int(acc[A_STOR_EXT + 1]),
            "multi_match": int(self.counters[C_MULTI_MATCH]),
            "ci_removed_below": int(self.counters[C_BELOW]),
            "tt_collections": int(self.counters[C_GC]), "tt_collected": int(self.counters[C_COLLECTED]),
            **{f"max_buffered_{k}": int(self.parked_max[r]) for r, k in
               enumerate(("internal", "external", "sp_internal", "sp_external"))},
        })
        return out

    def mean_reception_latency(self) -> float:
        """Mean, over (message broadcast in the window, peer other than its sender), of the
        instant the message reaches that peer (an internal peer's message through the SP's relay
        or translation, an external peer's message directly or through the SP's translation)
        minus its broadcast instant, in ms; its copies at the SP are not receptions."""
        return accounting.mean(self.acc[A_RECEPTION], self.acc[A_RECEPTION + 1])

    def mean_delivery_latency(self) -> float:
        """Mean, over the application deliveries of messages broadcast in the window, of the
        delivery instant minus the broadcast instant, in ms: the reception latency plus the wait
        in the buffers (an internal peer's own returned message is no delivery)."""
        return accounting.mean(self.acc[A_DELIVERY], self.acc[A_DELIVERY + 1])

    def invariants(self, report: oracle.Report) -> list[str]:
        """The oracle, then what the drained network must show: nothing buffered, every
        internal message relayed, every SP number delivered at every internal peer (own
        returned messages included, which the oracle does not see)."""
        problems = super().invariants(report)
        problems += [f"{k}: {v}" for k, v in self.leftovers.items() if v]
        return problems


@njit
def _leftovers(st):
    """Counts that must all be 0 once the network drained."""
    sn = st.sp[SP_SN]
    short_rv = 0
    for p in range(st.L):
        if st.rv_f0[p] != sn + 1:
            short_rv += 1
    unrelayed = 0
    for p in range(st.L):
        unrelayed += st.sn_int[p] - st.lr_in[p]
    parked = 0
    for r in range(st.parked.shape[0]):
        parked += st.parked[r, 0]
    untranslated = len(st.app_time) - sn
    return parked, unrelayed, short_rv, untranslated


@njit
def _outputs(st):
    return st.log, st.tops[T_LOG], st.acc, st.cnt, st.parked[:, 1].copy()


def finish(st: State, n_peers: int) -> Run:
    """The ``Run`` of a state whose network has drained."""
    log, entries, acc, cnt, parked_max = _outputs(st)
    kind, node, msg = state.log_arrays(log, entries)
    parked, unrelayed, short_rv, untranslated = _leftovers(st)
    return Run(n_nodes=n_peers, log_kind=kind, log_node=node, log_msg=msg, events=int(cnt[C_EVENTS]),
               acc=acc.copy(), counters=cnt.copy(), parked_max=parked_max,
               leftovers={"messages still buffered": int(parked),
                          "internal messages never relayed": int(unrelayed),
                          "internal peers missing an SP number": int(short_rv),
                          "messages without an SP number": int(untranslated)})


def simulate(schedule: Schedule, *, net: channel.Channel, seed: np.random.SeedSequence | None = None,
             tt_gc: bool = True, gc_interval: float = 10.0) -> Run:
    """Run ``schedule`` through the free-scale protocol (the kernel contract of
    ``causal_lab.engine.run``; ``seed`` is already in ``net``'s delay key).  Options: the TT
    garbage collection (spec §3.7) and its period (ms)."""
    st = new_state(schedule, net, tt_gc, gc_interval)
    _run(st)
    return finish(st, schedule.n_peers)
