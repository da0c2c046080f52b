"""The causality oracle against a brute-force reading of the definition."""

import numpy as np
import pytest

from causal_lab import oracle

B, D = oracle.BROADCAST, oracle.DELIVER


def brute_force(n, kind, node, msg):
    """error_strict by dense vector clocks replayed over the log (O(N) per event)."""
    know = np.zeros((n, n), int)
    delivered = [set() for _ in range(n)]
    vc, src, seq, nb = {}, {}, {}, np.zeros(n, int)
    by = {}
    errors = dup = 0
    for k, p, m in zip(kind, node, msg):
        if k == B:
            nb[p] += 1
            src[m], seq[m] = p, nb[p]
            by[(p, nb[p])] = m
            know[p, p] = nb[p]
            vc[m] = know[p].copy()
            delivered[p].add(m)
        else:
            if m in delivered[p]:
                dup += 1
                continue
            past = [by[(a, c)] for a in range(n) for c in range(1, vc[m][a] + 1) if by[(a, c)] != m]
            if any(x not in delivered[p] for x in past):
                errors += 1
            know[p] = np.maximum(know[p], vc[m])
            delivered[p].add(m)
    missing = n * len(src) - sum(len(s) for s in delivered)
    return errors, dup, missing


def causal_log(n=3):
    """p0 broadcasts m0; p1 delivers m0 then broadcasts m1; everyone delivers in causal order."""
    return [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 0), (D, 2, 1), (D, 0, 1)]


def check(log, n=3, **kw):
    kind, node, msg = zip(*log)
    return oracle.check(n, kind, node, msg, **kw)


def test_causal_log_is_ok():
    report = check(causal_log())
    assert report.ok and report.deliveries == 6


def test_inverted_delivery_is_an_error():
    log = [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 1), (D, 2, 0), (D, 0, 1)]
    report = check(log)
    assert (report.errors, report.messages_with_error, report.missing) == (1, 1, 0)
    assert report.error_example == ((1, 2),)
    with pytest.raises(AssertionError):
        report.assert_ok()


def test_transitive_predecessor_counts():
    # m0 -> m1 -> m2 (p0, p1, p2 relay); p3 delivers m1 first: error; m2 after m1 but before m0: error
    log = [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 0), (D, 2, 1), (B, 2, 2),
           (D, 3, 1), (D, 3, 2), (D, 3, 0), (D, 0, 1), (D, 0, 2), (D, 1, 2)]
    report = check(log, n=4)
    assert report.errors == 2 and report.messages_with_error == 2 and report.missing == 0


def test_fifo_violation_from_one_source():
    log = [(B, 0, 0), (B, 0, 1), (D, 1, 1), (D, 1, 0)]
    assert check(log, n=2).errors == 1


def test_duplicates_and_missing():
    log = causal_log() + [(D, 2, 0)]
    assert check(log).duplicates == 1
    short = [e for e in causal_log() if e != (D, 0, 1)]
    report = check(short)
    assert report.missing == 1 and report.undelivered_example == ((1, 0),)


def test_entitlement_mask_limits_liveness():
    short = [e for e in causal_log() if e != (D, 0, 1)]
    entitled = np.ones((2, 3), bool)
    entitled[1, 0] = False
    assert check(short, entitled=entitled).ok


def test_delivery_before_broadcast_is_rejected():
    with pytest.raises(ValueError):
        check([(D, 1, 0), (B, 0, 0)])


@pytest.mark.parametrize("seed", range(12))
def test_random_logs_match_brute_force(seed):
    """Random logs with wrong orders, gaps and duplicates: same counts as the definition."""
    g = np.random.default_rng(seed)
    n, m_total = int(g.integers(2, 6)), int(g.integers(3, 25))
    log, pool = [], []  # pool: (process, message) deliveries still to happen
    for m in range(m_total):
        # before each broadcast, some deliveries happen in random order
        for _ in range(int(g.integers(0, len(pool) + 1))):
            log.append((D, *pool.pop(int(g.integers(len(pool))))))
        p = int(g.integers(n))
        log.append((B, p, m))
        pool += [(q, m) for q in range(n) if q != p and g.random() < 0.9]
        if g.random() < 0.2 and pool:
            pool.append(pool[int(g.integers(len(pool)))])  # a duplicate delivery
    g.shuffle(pool)
    log += [(D, q, m) for q, m in pool]
    kind, node, msg = zip(*log)
    report = oracle.check(n, kind, node, msg)
    assert (report.errors, report.duplicates, report.missing) == brute_force(n, kind, node, msg)
