"""Spec §2.6 scenario test vectors S0-S4: drive single nodes of the compiled simulator directly.

No timing and no event loop: each reception is one packet appended to the module's packet
table (by the module's own ``_send``) and handed to ``on_packet``.  What the node sends during
that reception is read back from the packet table (new rows whose sender is the node), what it
delivers from the event log.  Messages are named as in the spec; their ids are the broadcast
(causal) order, because ``define_message`` must see them in id order.
"""

import numba
import numpy as np
import pytest

from causal_lab import oracle
from causal_lab.engine import events, network, state
from causal_lab.families.vcube_broadcast import kernel as vb

NODE = 4  # the node the spec drives (N = 8)


# ------------------------------------------------------------------------------------------
# Compiled glue: the event queue is a reflected list and must be created in compiled code.
# ------------------------------------------------------------------------------------------


@numba.njit
def _inject(st, sender, receiver, msgs, now):
    """Node ``receiver`` receives a new packet [msgs] from ``sender``; returns the packet id."""
    q = events.new_queue()
    p = st.tops[vb.T_PKT]
    vb._send(st, q, sender, receiver, msgs, len(msgs), now, False)  # also schedules an arrival: ignored
    vb.on_packet(st, q, p, receiver, now)
    return p


@numba.njit
def _process(st, p, receiver, now):
    """Node ``receiver`` receives the already existing packet ``p``."""
    q = events.new_queue()
    vb.on_packet(st, q, p, receiver, now)


@numba.njit
def _broadcast(st, m, i, now):
    q = events.new_queue()
    vb.broadcast(st, q, m, i, now)


# ------------------------------------------------------------------------------------------
# Harness
# ------------------------------------------------------------------------------------------


def _state(d, n_messages, aggregate):
    return vb.new_state(
        d=d, n_messages=n_messages, aggregate=aggregate, trees=vb.PER_SOURCE, payload=50,
        net=network.Network(), seed=np.random.SeedSequence(0),
    )


class Scenario:
    """An N = 2^d system whose messages are predefined; receptions are driven one by one.

    ``messages`` lists ``(name, source, {source: count})`` in causal (= id) order.
    """

    def __init__(self, messages, aggregate=True, d=3):
        self.n = 1 << d
        self.st = _state(d, len(messages), aggregate)
        self.ids = {}
        self.names = {}
        for m, (name, source, clock) in enumerate(messages):
            row = np.zeros(self.n, np.int32)
            for l, count in clock.items():
                row[l] = count
            assert row[source] >= 1
            vb.define_message(self.st, m, source, row)
            self.st.entries[m] = np.count_nonzero(row)  # size accounting only
            self.ids[name] = m
            self.names[m] = name
        self.now = 0.0

    def _packets_since(self, first, sender):
        st = self.st
        out = []
        for p in range(first, st.tops[vb.T_PKT]):
            if st.pkts[p, vb.PK_SENDER] == sender:
                a = st.pkts[p, vb.PK_FIRST]
                msgs = [self.names[st.pkt_msgs[k]] for k in range(a, a + st.pkts[p, vb.PK_LEN])]
                out.append((st.pkts[p, vb.PK_RECEIVER], msgs))
        return out

    def _deliveries_since(self, first, node):
        st = self.st
        return [
            self.names[st.log[k, state.LOG_MSG]]
            for k in range(first, st.tops[vb.T_LOG])
            if st.log[k, state.LOG_KIND] == oracle.DELIVER and st.log[k, state.LOG_NODE] == node
        ]

    def _check_invariants(self, node):
        st = self.st
        assert (st.vc[node] <= st.vmax[node]).all()  # I5
        assert st.counters[0] == 0  # I1: no duplicate reception

    def receive(self, names, sender, node=NODE):
        """``node`` receives the packet [names] from ``sender``.

        Returns (sends, deliveries): the packets ``node`` sent during this reception as
        ``(receiver, [message names])`` in emission order, and the messages it delivered.
        """
        if isinstance(names, str):
            names = [names]
        self.now += 1.0
        first_pkt, first_log = self.st.tops[vb.T_PKT], self.st.tops[vb.T_LOG]
        msgs = np.array([self.ids[x] for x in names], np.int64)
        _inject(self.st, sender, node, msgs, self.now)
        self._check_invariants(node)
        return (self._packets_since(first_pkt + 1, node),
                self._deliveries_since(first_log, node))

    def process(self, p, node):
        """``node`` receives the existing packet ``p`` (e.g. one sent by another driven node)."""
        self.now += 1.0
        first_pkt, first_log = self.st.tops[vb.T_PKT], self.st.tops[vb.T_LOG]
        _process(self.st, p, node, self.now)
        self._check_invariants(node)
        return self._packets_since(first_pkt, node), self._deliveries_since(first_log, node)

    def deliveries(self, node=NODE):
        return self._deliveries_since(0, node)

    def run(self, steps, node=NODE):
        """Play ``(message, sender, expected sends)`` steps; return the final delivery order."""
        for name, sender, expected in steps:
            sends, _ = self.receive(name, sender, node)
            assert sends == expected, f"reception of {name} from {sender}"
        assert self.st.n_pending[node] == 0  # PENDING empty at the end
        return self.deliveries(node)


# ------------------------------------------------------------------------------------------
# S0 — vector-clock semantics (P §3, Fig 2; N = 4)
# ------------------------------------------------------------------------------------------


def test_s0_vector_clocks_and_delivery_rule_n4():
    """S0: m2 -> m1 -> m0 built by the module's broadcasts; node 3 gets m0 first and holds it
    until m2 and then m1 are delivered."""
    st = _state(2, 3, True)
    m2, m1, m0 = 0, 1, 2  # broadcast order

    def packet(sender, receiver, m):
        for p in range(st.tops[vb.T_PKT]):
            a = st.pkts[p, vb.PK_FIRST]
            if (st.pkts[p, vb.PK_SENDER], st.pkts[p, vb.PK_RECEIVER]) == (sender, receiver) and m in [
                st.pkt_msgs[k] for k in range(a, a + st.pkts[p, vb.PK_LEN])
            ]:
                return p
        raise AssertionError(f"no packet {sender}->{receiver} carrying {m}")

    _broadcast(st, m2, 2, 1.0)  # tree 2 (N = 4): 2 -> [3, 0], 0 -> [1]
    assert list(st.msg_vc[m2]) == [0, 0, 1, 0]
    _process(st, packet(2, 0, m2), 0, 2.0)
    _process(st, packet(0, 1, m2), 1, 3.0)
    _broadcast(st, m1, 1, 4.0)  # node 1 delivered m2: tree 1: 1 -> [0, 3], 3 -> [2]
    assert list(st.msg_vc[m1]) == [0, 1, 1, 0]
    _process(st, packet(1, 0, m1), 0, 5.0)
    _broadcast(st, m0, 0, 6.0)  # node 0 delivered m2 and m1
    assert list(st.msg_vc[m0]) == [1, 1, 1, 0]

    def delivered_at_3():
        return [st.log[k, state.LOG_MSG] for k in range(st.tops[vb.T_LOG])
                if st.log[k, state.LOG_KIND] == oracle.DELIVER and st.log[k, state.LOG_NODE] == 3]

    _inject(st, 2, 3, np.array([m0], np.int64), 7.0)  # node 3's parent in tree 0 is 2
    assert delivered_at_3() == [] and st.n_pending[3] == 1  # m0 held: VC[1], VC[2] too small
    _process(st, packet(2, 3, m2), 3, 8.0)
    assert delivered_at_3() == [m2] and st.n_pending[3] == 1  # m0 still needs m1
    _process(st, packet(1, 3, m1), 3, 9.0)
    assert delivered_at_3() == [m2, m1, m0]
    assert list(st.vc[3]) == [1, 1, 1, 0]
    assert st.n_pending[3] == 0


# ------------------------------------------------------------------------------------------
# S1 — P Fig 5 / T Fig 4.2; S4 — NO_AGG on the S1 order
# ------------------------------------------------------------------------------------------

S1_MESSAGES = [
    ("m2", 2, {2: 1}),
    ("m1", 1, {1: 1, 2: 1}),
    ("m0", 0, {0: 1, 1: 1, 2: 1}),
]


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param(
            [("m0", 0, [(6, ["m0"])]), ("m1", 5, []), ("m2", 6, [(5, ["m0", "m2"])])],
            id="m0-m1-m2",
        ),
        pytest.param(
            # m2 does not wait for m1: 5 is not 4's child in tree 1
            [("m0", 0, [(6, ["m0"])]), ("m2", 6, [(5, ["m0", "m2"])]), ("m1", 5, [])],
            id="m0-m2-m1",
        ),
        pytest.param(
            # received in causal order: no aggregation
            [("m2", 6, [(5, ["m2"])]), ("m0", 0, [(5, ["m0"]), (6, ["m0"])]), ("m1", 5, [])],
            id="m2-m0-m1",
        ),
    ],
)
def test_s1_fig5_sends_per_reception(steps):
    """S1 (P Fig 5 / T Fig 4.2), one row per reception order: node 4's sends, delivery m2, m1, m0."""
    sc = Scenario(S1_MESSAGES, aggregate=True)
    assert sc.run(steps) == ["m2", "m1", "m0"]


def test_s4_no_aggregation_on_s1_order():
    """S4: NO_AGG, S1 order m0 (0), m1 (5), m2 (6): ->5[m0], ->6[m0]; none; ->5[m2]."""
    sc = Scenario(S1_MESSAGES, aggregate=False)
    steps = [("m0", 0, [(5, ["m0"]), (6, ["m0"])]), ("m1", 5, []), ("m2", 6, [(5, ["m2"])])]
    assert sc.run(steps) == ["m2", "m1", "m0"]


# ------------------------------------------------------------------------------------------
# S2 — P §4.4 / T §4.4.3 example 1
# ------------------------------------------------------------------------------------------

S2_MESSAGES = [
    ("m21", 2, {2: 1}),
    ("m22", 2, {2: 2}),
    ("m23", 2, {2: 3}),
    ("m01", 0, {0: 1, 2: 3}),
]


def test_s2_example1_vmax_jumps_and_one_packet():
    """S2 main order m21, m23, m01, m22: ->5[m21]; none; ->6[m01] only; ->5[m23, m01, m22]."""
    sc = Scenario(S2_MESSAGES)
    vmax = sc.st.vmax[NODE]

    assert sc.receive("m21", 6) == ([(5, ["m21"])], ["m21"])
    assert vmax[2] == 1
    assert sc.receive("m23", 6) == ([], [])  # held for 5: VMAX[2] = 1 < 3
    assert vmax[2] == 1
    assert sc.receive("m01", 0) == ([(6, ["m01"])], [])  # held for 5: m22 missing
    assert vmax[2] == 1 and vmax[0] == 1
    sends, delivered = sc.receive("m22", 6)
    assert vmax[2] == 3  # 1 -> 3 before CHECKAGG, so one packet
    assert sends == [(5, ["m23", "m01", "m22"])]
    assert delivered == ["m22", "m23", "m01"]
    assert sc.deliveries() == ["m21", "m22", "m23", "m01"]
    assert sc.st.n_pending[NODE] == 0


def test_s2_example1_variant_order():
    """S2 variant order m21, m01, m23, m22: ->5[m21]; ->6[m01]; none; ->5[m01, m23, m22]."""
    sc = Scenario(S2_MESSAGES)
    steps = [
        ("m21", 6, [(5, ["m21"])]),
        ("m01", 0, [(6, ["m01"])]),
        ("m23", 6, []),
        ("m22", 6, [(5, ["m01", "m23", "m22"])]),
    ]
    assert sc.run(steps) == ["m21", "m22", "m23", "m01"]
    assert sc.st.vmax[NODE, 2] == 3


# ------------------------------------------------------------------------------------------
# S3 — P §4.4 / T §4.4.3 example 2 (why CHECKAGG's first condition exists)
# ------------------------------------------------------------------------------------------

S3_MESSAGES = [
    ("m21", 2, {2: 1}),
    ("m01", 0, {0: 1, 2: 1}),
    ("m02", 0, {0: 2, 2: 1}),
]


def _s3_at_node_4():
    sc = Scenario(S3_MESSAGES)
    assert sc.receive("m01", 0) == ([(6, ["m01"])], [])
    # without the first condition (x.vc[m.s] >= m.vc[m.s]) this would be ->6[m01, m02]
    assert sc.receive("m02", 0) == ([(6, ["m02"])], [])
    assert sc.receive("m21", 6) == ([(5, ["m01", "m02", "m21"])], ["m21", "m01", "m02"])
    assert sc.st.n_pending[NODE] == 0
    return sc


def test_s3_example2_no_duplicate_forwarding():
    """S3 expected column: ->6[m01]; ->6[m02] (not [m01, m02]); ->5[m01, m02, m21]."""
    sc = _s3_at_node_4()
    assert sc.deliveries() == ["m21", "m01", "m02"]
    # every message crossed the link 4 -> 6 (m01, m02) and 4 -> 5 (all) exactly once
    sent = sc._packets_since(0, NODE)
    assert sum(len(m) for k, m in sent if k == 6) == 2


def test_s3_node5_receives_the_aggregated_packet():
    """S3 remark: node 5 (leaf in trees 0 and 2) receiving [m01, m02, m21] from 4 sends nothing
    and delivers m21, m01, m02."""
    sc = _s3_at_node_4()
    st = sc.st
    (p,) = [p for p in range(st.tops[vb.T_PKT]) if (st.pkts[p, vb.PK_SENDER], st.pkts[p, vb.PK_RECEIVER]) == (4, 5)]
    sends, delivered = sc.process(p, 5)
    assert sends == []
    assert delivered == ["m21", "m01", "m02"]
    assert st.n_pending[5] == 0
