"""The worked scenario of the free-scale paper (seed 001 §3.1.4, Figure 3; spec §4), step by step.

Two internal peers P(i)1, P(i)2 (internal ids 1, 2), the super peer Sp1 (external id 1) and two
external peers P(e)2, P(e)3 (external ids 2, 3).  The reconstructed prehistory H1-H6 (spec
§4.1) and the 17 narrated steps S1-S17 (§4.2) are driven one message copy at a time through the
kernel's own handlers (``kernel.step``); after every step each value the spec lists is asserted
(VTx, CI, DV, RV, I, TT, LR and the message tuples).  Bit strings are written as in the paper:
the leftmost character is position 1, ``∅`` is the empty vector.
"""

import numpy as np
import pytest

from causal_lab.families.free_scale import channel, kernel, workload
from causal_lab.families.free_scale.kernel import (
    W_CI_N, W_CI_OFF, W_DV_NW, W_DV_OFF, W_DV_W0, W_I_NW, W_I_OFF, W_I_W0, W_ID, W_LAST, W_SN)
from causal_lab.families.free_scale.pairs import CI, VT

# global peer numbers and nodes
PI1, PI2, PE2, PE3, SP = 0, 1, 2, 3, 4
E2, E3 = 0, 1  # external peer rows (external ids 2, 3)


def _positions(words, w0=0):
    return [64 * (w0 + k) + b for k, word in enumerate(words) for b in range(64)
            if int(word) >> b & 1 and 64 * (w0 + k) + b > 0]


def _string(positions):
    if not positions:
        return "∅"
    return "".join("1" if x in set(positions) else "0" for x in range(1, max(positions) + 1))


class Scenario:
    """The four messages m1..m4 of Figure 3 in send order, and readers of every state value."""

    def __init__(self, tt_gc=False):
        schedule = workload.Schedule.scripted(4, [PE3, PE2, PI2, PE2])  # m1, m2, m3, m4
        point = dict(t_pc=0.0, t_t=0.0, tpp="constant", tpp_mean=1.0, tpp_sigma=0.0,
                     delay_min=0.0, delay_max=50.0, link_delay="per_message")
        self.st = kernel.new_state(schedule, channel.from_point(point, np.random.SeedSequence(0)),
                                   tt_gc=tt_gc, gc_interval=0.0)
        self.now = 10.0

    def send(self, app):
        self.now += 1
        return list(kernel.step(self.st, app, -1, -1, self.now, True))

    def arrive(self, wire, node, drain=True):
        self.now += 1
        return list(kernel.step(self.st, -1, wire, node, self.now, drain))

    def recheck(self):
        return list(kernel.step(self.st, -1, -1, -1, self.now, True))

    # state readers ---------------------------------------------------------------------
    def vtx(self, e):
        """(VTx[Sp1], VTx[2], VTx[3]) at external peer row e."""
        vc = self.st.vc
        return (_string(_positions(self.st.vsp[e])), int(vc[e, 2, VT]), int(vc[e, 3, VT]))

    def ci(self, e):
        """CI at external peer row e: {1: CI[Sp1] bits, z: integer}."""
        out = {z: int(v) for z, v in enumerate(self.st.vc[e, :, CI]) if v}
        sp = _positions(self.st.csp[e])
        return {1: _string(sp), **out} if sp else out

    def rv(self, p):
        return _string(_positions(self.st.rv[p]))

    def dv(self, p):
        return _string(_positions(self.st.dv[p]))

    def sp_vtx(self):
        return (int(self.st.sp[kernel.SP_SN]), int(self.st.sp_vt[0, 2, VT]), int(self.st.sp_vt[0, 3, VT]))

    def tt(self, z):
        """TT[z] as (in, out) pairs: z's messages translated and not collected, in order."""
        sched_src, seqs, tt_out = self.st.app_src, self.st.app_seq, self.st.tt_out
        peer = z  # external id z is global peer L + z - 2 = z (L = 2)
        return [(int(seqs[a]), int(tt_out[a])) for a in range(len(tt_out))
                if sched_src[a] == peer and tt_out[a]]

    def i(self):
        return _string(_positions(self.st.isp[0]))

    def lr(self, p):
        return (int(self.st.lr_in[p]), int(self.st.lr_out[p]))

    # message readers -------------------------------------------------------------------
    def _bits(self, w, off, w0, nw):
        row = self.st.wires[w]
        return _string(_positions(self.st.bits[row[off]:row[off] + row[nw]], row[w0]))

    def m_int(self, w):
        """(id, SN, Last, DV)"""
        row = self.st.wires[w]
        return (int(row[W_ID]), int(row[W_SN]), int(row[W_LAST]), self._bits(w, W_DV_OFF, W_DV_W0, W_DV_NW))

    def m_ext(self, w):
        """(id, SN, CI, I): CI as in ``ci``"""
        row = self.st.wires[w]
        pairs = self.st.pairs[row[W_CI_OFF]:row[W_CI_OFF] + 2 * row[W_CI_N]].reshape(-1, 2)
        ci = {int(z): int(v) for z, v in pairs}
        sp = self._bits(w, W_DV_OFF, W_DV_W0, W_DV_NW)
        if sp != "∅":
            ci = {1: sp, **ci}
        return (int(row[W_ID]), int(row[W_SN]), ci, self._bits(w, W_I_OFF, W_I_W0, W_I_NW))

    def buffered(self):
        return int(self.st.parked[:, 0].sum())


@pytest.fixture(scope="module")
def run():
    """The whole scenario, recording every step's checks; each test below asserts one part."""
    return _play(Scenario())


def _play(s):
    seen = {}
    # --- prehistory H1-H6 (spec §4.1) ---
    [e1] = s.send(0)  # H1: P(e)3 sends m1
    seen["H1"] = (s.m_ext(e1), s.vtx(E3), s.ci(E3))
    [t1] = s.arrive(e1, SP)  # H2: Sp1 delivers m1 and translates it
    seen["H2"] = (s.sp_vtx(), s.m_int(t1), s.tt(3), s.i())
    assert s.arrive(e1, PE2) == []  # H3: P(e)2 delivers m1
    seen["H3"] = (s.vtx(E2), s.ci(E2))
    [e2] = s.send(1)  # H4: P(e)2 sends m2
    seen["H4"] = (s.m_ext(e2), s.vtx(E2), s.ci(E2))
    [t2] = s.arrive(e2, SP)  # H5
    seen["H5"] = (s.sp_vtx(), s.m_int(t2), s.tt(2), s.i())
    for p in (PI1, PI2):  # H6
        s.arrive(t1, p)
        s.arrive(t2, p)
    seen["H6"] = [(s.rv(p), s.dv(p), int(s.st.sn_int[p])) for p in (PI1, PI2)] + [s.lr(0), s.lr(1)]
    # --- narrated steps S1-S17 (spec §4.2) ---
    [up3] = s.send(2)  # S1: P(i)2 sends m3
    seen["S1"] = (int(s.st.sn_int[1]), s.m_int(up3), s.dv(PI2))
    relay3, ext3 = s.arrive(up3, SP)  # S2-S4: Sp1 delivers, relays and translates m3
    seen["S3"] = (s.sp_vtx(), s.lr(1), s.m_int(relay3))
    seen["S4"] = (s.m_ext(ext3), s.i(), s.tt(2), s.tt(3))
    s.arrive(ext3, PE3)  # S5: m(e)3 at P(e)3, buffered
    seen["S5"] = (s.vtx(E3), s.buffered())
    s.arrive(e2, PE3, drain=False)  # S6: m2 at P(e)3, before the buffer re-check
    seen["S6"] = (s.vtx(E3), s.ci(E3))
    s.recheck()  # S7: the buffer re-check delivers m(e)3
    seen["S7"] = (s.vtx(E3), s.ci(E3), s.buffered())
    s.arrive(ext3, PE2)  # S8
    seen["S8"] = (s.vtx(E2), s.ci(E2))
    [e4] = s.send(3)  # S9: P(e)2 sends m4
    seen["S9"] = (s.vtx(E2), s.m_ext(e4), s.ci(E2))
    s.arrive(e4, PE3)  # S10
    seen["S10"] = (s.vtx(E3), s.ci(E3))
    [t4] = s.arrive(e4, SP)  # S11-S12: Sp1 delivers and translates m4
    seen["S11"] = s.sp_vtx()
    seen["S12"] = (s.m_int(t4), s.tt(2), s.i())
    s.arrive(relay3, PI2)  # S13: own m(i)3 back at P(i)2
    seen["S13"] = (s.rv(PI2), s.dv(PI2))
    s.arrive(t4, PI2)  # S14
    seen["S14"] = (s.rv(PI2), s.dv(PI2))
    s.arrive(t4, PI1)  # S15: buffered at P(i)1
    seen["S15"] = (s.rv(PI1), s.buffered())
    s.arrive(relay3, PI1, drain=False)  # S16
    seen["S16"] = (s.rv(PI1), s.dv(PI1))
    s.recheck()  # S17
    seen["S17"] = (s.rv(PI1), s.dv(PI1), s.buffered())
    seen["run"] = kernel.finish(s.st, 4)
    seen["scenario"] = s
    return seen


def test_prehistory_h1_to_h6(run):
    assert run["H1"] == ((3, 1, {}, "∅"), ("∅", 0, 1), {})
    assert run["H2"] == ((1, 0, 1), (0, 1, 0, "∅"), [(1, 1)], "1")
    assert run["H3"] == (("∅", 0, 1), {3: 1})
    assert run["H4"] == ((2, 1, {3: 1}, "∅"), ("∅", 1, 1), {})
    assert run["H5"] == ((2, 1, 1), (0, 2, 0, "1"), [(1, 2)], "11")
    assert run["H6"] == [("11", "01", 0), ("11", "01", 0), (0, 0), (0, 0)]


def test_s1_internal_peer_sends_m3(run):
    # SN = 1, m3 = (2, 1, 0, 01, Data), DV <- ∅
    assert run["S1"] == (1, (2, 1, 0, "01"), "∅")


def test_s2_s3_super_peer_relays_m3(run):
    # VTx = (3, 1, 1), LR[2] = <1, 3>, m3.Last = LR[2].out = 0, m3.SN = 3
    assert run["S3"] == ((3, 1, 1), (1, 3), (2, 3, 0, "01"))


def test_s4_translation_to_the_external_group(run):
    # m(e)3 = (1, 3, <2,1>, 11, Data): CI[1] = 01 lost its bit 2 to the pair <2, 1>; I <- ∅
    assert run["S4"] == ((1, 3, {2: 1}, "11"), "∅", [(1, 2)], [(1, 1)])


def test_s5_to_s7_buffering_at_external_peer_3(run):
    assert run["S5"] == (("11", 0, 1), 1)  # L10 merged I; <2,1> unmet: buffered
    assert run["S6"] == (("11", 1, 1), {2: 1})  # m2 delivered, before the re-check
    assert run["S7"] == (("111", 1, 1), {1: "001"}, 0)  # m(e)3 delivered; <2,1> removed


def test_s8_s9_external_peer_2_delivers_and_sends_m4(run):
    assert run["S8"] == (("111", 1, 1), {1: "001"})
    assert run["S9"] == (("111", 2, 1), (2, 2, {1: "001"}, "∅"), {})


def test_s10_m4_at_external_peer_3(run):
    # CI = <1,001>, <2,2>, then <1,000> is dropped: CI = <2,2>
    assert run["S10"] == (("111", 2, 1), {2: 2})


def test_s11_s12_super_peer_translates_m4(run):
    assert run["S11"] == (4, 2, 1)
    # m(i)4 = (0, 4, 2, 001): Last = newest TT[2] entry; TT[2] = <1,2>, <2,4>; I = 0001
    assert run["S12"] == ((0, 4, 2, "001"), [(1, 2), (2, 4)], "0001")


def test_s13_to_s17_internal_deliveries(run):
    assert run["S13"] == ("111", "∅")  # own message: RV only
    assert run["S14"] == ("1111", "0001")
    assert run["S15"] == ("11", 1)  # 001 & 11 = ∅: buffered
    assert run["S16"] == ("111", "001")
    assert run["S17"] == ("1111", "0001", 0)


def test_final_state_and_oracle(run):
    s = run["scenario"]
    assert [s.rv(p) for p in (PI1, PI2)] == ["1111", "1111"]
    assert [s.dv(p) for p in (PI1, PI2)] == ["0001", "0001"]
    assert int(s.st.sn_int[PI2]) == 1
    assert (s.sp_vtx(), s.lr(1), s.tt(2), s.tt(3), s.i()) == ((4, 2, 1), (1, 3), [(1, 2), (2, 4)], [(1, 1)], "0001")
    assert (s.vtx(E2), s.ci(E2)) == (("111", 2, 1), {})
    assert (s.vtx(E3), s.ci(E3)) == (("111", 2, 1), {2: 2})
    # exactly two messages were ever buffered at once, one at a time (S5, S15)
    assert list(s.st.parked[:, 1]) == [1, 1, 0, 0]
    report = run["run"].verify()  # the causality oracle: no violation, everything delivered
    assert report.deliveries == 4 * 4 and report.errors == 0  # a broadcast counts as its sender's


def test_translation_table_collection_at_the_relay_of_m3():
    """Spec §3.7 on the scenario: when Sp1 relays m3 (S3), every internal peer has delivered SP
    numbers 1 and 2 and holds only bit 2 in DV, and m3 (in transit) names 2, so T = 2: the entry
    <1, 1> of TT[3] goes; <1, 2> stays (it is translated into m(e)3's pair <2, 1>)."""
    s = Scenario(tt_gc=True)
    seen = _play(s)
    assert seen["S4"] == ((1, 3, {2: 1}, "11"), "∅", [(1, 2)], [])
    assert s.tt(3) == [] and s.tt(2)[0] == (1, 2)
    seen["run"].verify()
