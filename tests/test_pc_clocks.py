"""Probabilistic clocks: the entry map, its hashing and the error model against the spec's
test vectors (probabilistic_clocks spec §1.2, §1.6, Appendix A)."""

import numpy as np
import pytest

from causal_lab.families.probabilistic_clocks import clocks


def test_hash_vectors():
    assert clocks.splitmix64(0) == 0xE220A8397B1DCDAF
    assert clocks.hash_u64(0, 0, 0) == 0x238275BC38FCBE91
    for words in [(0, 0, 0), (7, 2**63 + 5, 123456789), (clocks.SALT_H, 3, 9)]:
        assert int(clocks.hash_u64_nb(*(np.uint64(w) for w in words))) == clocks.hash_u64(*words)
    assert 0 <= clocks.u01(1, 2) < 1
    assert clocks.causal_past_term(4, 0) == 0 and clocks.causal_past_term(4, 2) == clocks.hash_u64(clocks.SALT_H, 4, 2)


@pytest.mark.parametrize("args, expected", [
    ((6, 5, 2, 0), [(0, 4), (1, 4), (1, 2), (2, 3), (0, 3), (0, 1)]),
    ((6, 5, 2, 1), [(1, 2), (0, 1), (0, 3), (3, 4), (3, 4), (2, 4)]),
    ((4, 3, 2, 0), [(0, 1), (1, 2), (0, 2), (0, 1)]),
    ((10, 50, 2, 0), [(8, 12), (15, 17), (5, 28), (22, 37), (3, 29), (42, 46), (40, 45), (4, 41),
                      (2, 36), (30, 33)]),
])
def test_entry_map_vectors(args, expected):
    assert clocks.entry_map(*args) == expected


@pytest.mark.parametrize("n, m, k, loads", [
    (200, 50, 2, {8}), (1000, 50, 2, {40}), (2000, 260, 2, {15, 16}), (5000, 50, 2, {200}),
])
def test_entry_map_is_balanced(n, m, k, loads):
    f = clocks.entry_map(n, m, k)
    assert all(len(set(hand)) == k for hand in f)
    assert set(clocks.increments(f, m).sum(axis=0).tolist()) == loads


def test_hashed_map_gives_k_distinct_entries():
    f = clocks.hashed_map(100, 20, 3)
    assert all(len(set(h)) == 3 and all(0 <= x < 20 for x in h) for h in f)


@pytest.mark.parametrize("bad", [(5, 3, 0), (5, 3, 4), (0, 3, 2)])
def test_entry_map_rejects_bad_sizes(bad):
    with pytest.raises(ValueError):
        clocks.entry_map(*bad)


P_COND_K2 = {  # spec §1.6, 4 significant digits
    20: [0.009506, 0.03441, 0.1610, 0.4115, 0.7595],
    25: [0.006147, 0.02270, 0.1123, 0.3114, 0.6474],
    50: [0.001568, 0.006027, 0.03346, 0.1105, 0.3072],
    100: [0.0003960, 0.001553, 0.009143, 0.03316, 0.1096],
    260: [5.894e-05, 0.0002340, 0.001429, 0.005502, 0.02041],
}


@pytest.mark.parametrize("m", sorted(P_COND_K2))
def test_p_cond_table(m):
    for x, expected in zip([1, 2, 5, 10, 20], P_COND_K2[m]):
        assert clocks.p_cond(m, x, 2) == pytest.approx(expected, rel=5e-4)


def test_optimal_k_and_inverse():
    assert clocks.k_optimal(50, 10) == pytest.approx(3.47, abs=0.005)
    assert [round(clocks.p_cond(50, 10, k), 4) for k in (2, 3, 4)] == [0.1105, 0.0939, 0.0944]
    for p, x, k in [(1e-4, 20, 2), (1e-6, 200, 2), (0.01, 5, 3)]:
        assert clocks.p_cond(clocks.m_required(p, x, k), x, k) == pytest.approx(p, rel=1e-9)
    with pytest.raises(ValueError):
        clocks.m_required(1.0, 10, 2)


def test_model_constants_and_sizing_policy():
    assert clocks.E1 == pytest.approx(1.9639e-05, rel=1e-4)
    assert clocks.E2 == pytest.approx(1.1284e-02, rel=1e-4)
    assert clocks.c_target(200, 1000) == 16 and clocks.c_target(20, 1000) == 1
    assert clocks.c_target(0, 1000) == 1 and clocks.c_target(1e6, 1000) == 32
    assert clocks.overtake(100, 10, independent_senders=True) > clocks.overtake(100, 10)
    assert np.isclose(clocks.p_model(50, 100, 1000), clocks.overtake(100, 1000) * clocks.p_cond(50, 10, 2))
