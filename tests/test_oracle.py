"""The causality oracle against a brute-force reading of the definitions."""

import numpy as np
import pytest

from causal_lab import oracle

B, D = oracle.BROADCAST, oracle.DELIVER


def brute_force(n, kind, node, msg, entitled=None):
    """(errors, duplicates, missing, late) from explicit causal-past sets replayed over the log.

    past[m] is every message that happened before m's broadcast (Lamport); ``hist[p]`` is what
    p delivered or broadcast so far.  error_strict: something of past[m] is not in hist[q];
    late: m is in the past of something already in hist[q].
    """
    hist = [set() for _ in range(n)]
    past = {}
    errors = dup = late = 0
    for k, p, m in zip(kind, node, msg):
        if k == B:
            past[m] = set().union(*(past[x] | {x} for x in hist[p]))
            hist[p].add(m)
        elif m in hist[p]:
            dup += 1
        else:
            errors += any(x not in hist[p] for x in past[m])
            late += any(m in past[x] for x in hist[p])
            hist[p].add(m)
    n_msgs = max(past) + 1
    ent = np.ones((n_msgs, n), bool) if entitled is None else entitled
    missing = sum(ent[m, p] and m not in hist[p] for m in range(n_msgs) for p in range(n))
    return errors, dup, missing, late


def counts(report):
    return report.errors, report.duplicates, report.missing, report.late


def causal_log(n=3):
    """p0 broadcasts m0; p1 delivers m0 then broadcasts m1; everyone delivers in causal order."""
    return [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 0), (D, 2, 1), (D, 0, 1)]


def check(log, n=3, **kw):
    kind, node, msg = zip(*log)
    return oracle.check(n, kind, node, msg, **kw)


def test_causal_log_is_ok():
    report = check(causal_log())
    assert report.ok and report.ok_pubsub and report.deliveries == 6 and report.late == 0


def test_inverted_delivery_is_an_error_and_late():
    log = [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 1), (D, 2, 0), (D, 0, 1)]
    report = check(log)
    assert (report.errors, report.messages_with_error, report.missing, report.late) == (1, 1, 0, 1)
    assert report.error_example == ((1, 2),) and report.late_example == ((0, 2),)
    assert not report.ok_pubsub
    with pytest.raises(AssertionError):
        report.assert_ok()
    with pytest.raises(AssertionError):
        report.assert_ok(pubsub=True)


def test_transitive_predecessor_counts():
    # m0 -> m1 -> m2 (p0, p1, p2 relay); p3 delivers m1 first: error; m2 after m1 but before m0: error
    log = [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 0), (D, 2, 1), (B, 2, 2),
           (D, 3, 1), (D, 3, 2), (D, 3, 0), (D, 0, 1), (D, 0, 2), (D, 1, 2)]
    report = check(log, n=4)
    assert report.errors == 2 and report.messages_with_error == 2 and report.missing == 0
    assert report.late == 1 and report.late_example == ((0, 3),)  # only m0 came after a successor


def test_late_through_a_message_never_delivered():
    # m0 -> m1 -> m2; p3 never delivers m1, but m0 after m2 is still an inversion (m0 -> m2)
    log = [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 0), (D, 2, 1), (B, 2, 2), (D, 3, 2), (D, 3, 0)]
    entitled = np.ones((3, 4), bool)
    entitled[1:, 0] = entitled[2, 1] = entitled[1, 3] = False
    report = check(log, n=4, entitled=entitled)
    assert (report.errors, report.late, report.missing) == (1, 1, 0)
    assert report.late_example == ((0, 3),)


def test_late_joiner_skipping_old_messages_is_not_late():
    """Thesis Figure 5.3 (spec T10): p3 joins after m0 and m2, delivers m1 and m3 only."""
    log = [(B, 0, 0), (D, 1, 0), (D, 2, 0), (B, 1, 1), (B, 2, 2), (D, 0, 1), (D, 2, 1),
           (D, 0, 2), (D, 1, 2), (B, 1, 3), (D, 0, 3), (D, 2, 3), (D, 3, 1), (D, 3, 3)]
    entitled = np.ones((4, 4), bool)
    entitled[[0, 2], 3] = False
    report = check(log, n=4, entitled=entitled)
    assert report.errors == 2 and report.error_example == ((1, 3), (3, 3))
    assert (report.late, report.duplicates, report.missing) == (0, 0, 0)
    assert report.ok_pubsub and not report.ok
    report.assert_ok(pubsub=True)
    assert check(log, n=4).missing == 2  # without the mask p3 owes m0 and m2


def test_broadcast_counts_as_having_seen_the_past():
    # p2 delivers m0, broadcasts m1; p2 cannot be late for m0 (duplicate), but p3 can
    log = [(B, 0, 0), (D, 2, 0), (B, 2, 1), (D, 2, 0), (D, 3, 1), (D, 3, 0)]
    report = check(log, n=4, entitled=np.array([[1, 0, 1, 1], [0, 0, 1, 1]], bool))
    assert (report.duplicates, report.late, report.late_example) == (1, 1, ((0, 3),))


def test_fifo_violation_from_one_source():
    log = [(B, 0, 0), (B, 0, 1), (D, 1, 1), (D, 1, 0)]
    report = check(log, n=2)
    assert (report.errors, report.late) == (1, 1)


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
    entitled[0, 0] = entitled[1, 0] = True
    assert check(short, entitled=entitled).undelivered_example == ((1, 0),)


def test_delivery_before_broadcast_is_rejected():
    with pytest.raises(ValueError):
        check([(D, 1, 0), (B, 0, 0)])


def random_log(g, n, m_total, churn):
    """Random logs with wrong orders, gaps and duplicates.

    With ``churn`` every process is subscribed during a random window of broadcasts and gets
    only those messages (some deliveries are still dropped); returns the entitlement mask too.
    """
    window = np.tile([0, m_total], (n, 1))  # [join, leave) in broadcasts
    if churn:
        window = np.sort(g.integers(0, m_total + 1, (n, 2)), axis=1)
    entitled = np.zeros((m_total, n), bool)
    log, pool = [], []  # pool: (process, message) deliveries still to happen
    for m in range(m_total):
        # before each broadcast, some deliveries happen in random order
        for _ in range(int(g.integers(0, len(pool) + 1))):
            log.append((D, *pool.pop(int(g.integers(len(pool))))))
        p = int(g.integers(n))
        log.append((B, p, m))
        entitled[m] = (window[:, 0] <= m) & (m < window[:, 1])
        entitled[m, p] = True
        pool += [(q, m) for q in np.flatnonzero(entitled[m]) if q != p and g.random() < 0.9]
        if g.random() < 0.2 and pool:
            pool.append(pool[int(g.integers(len(pool)))])  # a duplicate delivery
    g.shuffle(pool)
    log += [(D, q, m) for q, m in pool]
    return log, entitled


def seeded_log(seed):
    g = np.random.default_rng(seed)
    n, m_total, churn = int(g.integers(2, 6)), int(g.integers(3, 25)), seed % 2 == 1
    return n, *random_log(g, n, m_total, churn)


@pytest.mark.parametrize("seed", range(16))
def test_random_logs_match_brute_force(seed):
    n, log, entitled = seeded_log(seed)
    kind, node, msg = zip(*log)
    assert counts(oracle.check(n, kind, node, msg)) == brute_force(n, kind, node, msg)
    expected = brute_force(n, kind, node, msg, entitled)
    assert counts(oracle.check(n, kind, node, msg, entitled=entitled)) == expected


def test_random_logs_cover_the_cases():
    """The seeds above include late joiners (errors but nothing late), real inversions,
    duplicates and missing deliveries."""
    found = [brute_force(n, *zip(*log), entitled) for n, log, entitled in map(seeded_log, range(16))]
    assert any(e > 0 and late == 0 for e, _, _, late in found)
    assert any(late > 0 for _, _, _, late in found)
    assert any(d > 0 for _, d, _, _ in found) and any(miss > 0 for _, _, miss, _ in found)


@pytest.mark.parametrize("limit", [1, 2])
def test_small_pending_limit_matches_brute_force(monkeypatch, limit):
    """Pending vector clocks merged early (and their rows outliving the log) change nothing."""
    monkeypatch.setattr(oracle, "PENDING_LIMIT", limit)
    for seed in range(12):
        g = np.random.default_rng([limit, seed])
        n, m_total = int(g.integers(3, 7)), int(g.integers(10, 30))
        log, entitled = random_log(g, n, m_total, churn=seed % 2 == 1)
        kind, node, msg = zip(*log)
        assert counts(oracle.check(n, kind, node, msg, entitled=entitled)) == \
            brute_force(n, kind, node, msg, entitled)


def by_hand(n, log, msg_topic, entitled):
    """check_by_topic's meaning: oracle.check on each topic's sub-log, counts summed."""
    total = np.zeros(5, int)
    for t in np.unique(msg_topic):
        ids = np.flatnonzero(msg_topic == t)
        local = {int(g): i for i, g in enumerate(ids)}
        sub = [(k, p, local[m]) for k, p, m in log if m in local]
        kind, node, msg = zip(*sub)
        report = oracle.check(n, kind, node, msg, entitled=entitled[ids])
        total += (*counts(report), report.deliveries)
    return tuple(total)


@pytest.mark.parametrize("seed", range(8))
def test_check_by_topic_sums_the_topics(seed):
    g = np.random.default_rng([7, seed])
    n, m_total = int(g.integers(3, 8)), int(g.integers(8, 40))
    log, entitled = random_log(g, n, m_total, churn=seed % 2 == 0)
    msg_topic = g.choice([3, 10, 11], m_total)  # topics are any integers
    msg_topic[:3] = [3, 10, 11]
    kind, node, msg = zip(*log)
    report = oracle.check_by_topic(n, kind, node, msg, msg_topic, entitled=entitled)
    assert (*counts(report), report.deliveries) == by_hand(n, log, msg_topic, entitled)
    assert report.messages == m_total
    for m, q in report.error_example + report.late_example:
        assert any(e == (D, q, m) for e in log)  # examples are in global ids
    for m, q in report.undelivered_example:
        assert entitled[m, q] and (D, q, m) not in log and (B, q, m) not in log


def test_inversion_across_topics_is_not_an_error():
    # m0 (topic 0) -> m1 (topic 1) through p1; p2 delivers m1 before m0
    log = [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 1), (D, 2, 0), (D, 0, 1)]
    kind, node, msg = zip(*log)
    assert counts(oracle.check(3, kind, node, msg)) == (1, 0, 0, 1)
    report = oracle.check_by_topic(3, kind, node, msg, [0, 1])
    assert report.ok and report.messages == 2 and report.deliveries == 6
    same_topic = oracle.check_by_topic(3, kind, node, msg, [5, 5])
    assert (same_topic.errors, same_topic.late, same_topic.late_example) == (1, 1, ((0, 2),))


def test_check_by_topic_compacts_processes_but_counts_all_for_liveness():
    # topic 1 only involves p2 and p3: p0 and p1 still owe its message unless the mask says no
    log = [(B, 0, 0), (D, 1, 0), (B, 2, 1), (D, 3, 1)]
    kind, node, msg = zip(*log)
    report = oracle.check_by_topic(4, kind, node, msg, [0, 1])
    assert report.missing == 2 + 2 and (1, 0) in report.undelivered_example
    entitled = np.array([[1, 1, 0, 0], [0, 0, 1, 1]], bool)
    report = oracle.check_by_topic(4, kind, node, msg, [0, 1], entitled=entitled)
    assert report.ok
    report = oracle.check_by_topic(4, kind, node, msg, [0, 1], entitled=~entitled)
    assert report.missing == 4
    assert set(report.undelivered_example) == {(0, 2), (0, 3), (1, 0), (1, 1)}


def test_pending_clock_outlives_its_last_log_entry():
    # m1 is pending at p2 after its last log entry; m2's broadcast must not reuse its clock,
    # which is what shows that m0 (in m1's past) arrives late at p2
    log = [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 1), (B, 3, 2), (D, 2, 0)]
    report = check(log, n=4, entitled=np.array([[1, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 1]], bool))
    assert (report.errors, report.late, report.missing) == (1, 1, 0)
    assert report.late_example == ((0, 2),)


def test_check_by_topic_needs_a_topic_for_every_message():
    kind, node, msg = zip(*causal_log())
    with pytest.raises(ValueError):
        oracle.check_by_topic(3, kind, node, msg, [0])


def brute_immediate(n, kind, node, msg, msg_topic):
    """Thesis §5.4.1 word for word: q delivers m after m', where m' was broadcast (same topic) by
    a process that had delivered or broadcast m before."""
    hist = [[] for _ in range(n)]  # what each process delivered or broadcast, in order
    before = {}
    late = 0
    for k, p, m in zip(kind, node, msg):
        if k == B:
            before[m] = {x for x in hist[p] if msg_topic[x] == msg_topic[m]}
        elif m in hist[p]:
            continue  # a duplicate, not a late delivery
        else:
            late += any(m in before[x] for x in hist[p])
        hist[p].append(m)
    return late


@pytest.mark.parametrize("seed", range(64))
def test_late_immediate_matches_the_thesis_wording(seed):
    n, log, _ = seeded_log(seed)
    kind, node, msg = zip(*log)
    topics = np.random.default_rng(seed).integers(0, 2, max(msg) + 1)
    for msg_topic in (np.zeros(max(msg) + 1, int), topics):
        assert oracle.late_immediate(n, kind, node, msg, msg_topic) == brute_immediate(n, kind, node, msg, msg_topic)


def test_late_immediate_ignores_chains_that_late_counts():
    """m0 -> m1 -> m2 and p3 gets m2 then m0: late through m1 (the oracle's transitive rule) but no
    immediate pair, since p2 never delivered m0; with p2 delivering m0 first it becomes one."""
    chain = [(B, 0, 0), (D, 1, 0), (B, 1, 1), (D, 2, 1), (B, 2, 2), (D, 3, 2), (D, 3, 0)]
    kind, node, msg = zip(*chain)
    assert oracle.check(4, kind, node, msg).late == 1
    assert oracle.late_immediate(4, kind, node, msg, [0, 0, 0]) == 0
    direct = chain[:3] + [(D, 2, 0)] + chain[3:]
    kind, node, msg = zip(*direct)
    assert oracle.late_immediate(4, kind, node, msg, [0, 0, 0]) == 1
    assert oracle.late_immediate(4, kind, node, msg, [0, 0, 1]) == 0  # m2 in another topic


def test_random_logs_cover_immediate_and_chain_only_lateness():
    """The 64 seeds above include immediate pairs and late deliveries through a chain only."""
    found = []
    for seed in range(64):
        n, log, _ = seeded_log(seed)
        kind, node, msg = zip(*log)
        found.append((brute_force(n, kind, node, msg)[3], brute_immediate(n, kind, node, msg, [0] * (max(msg) + 1))))
    assert any(i > 0 for _, i in found) and any(late > i for late, i in found)


def brute_force_flags(n, kind, node, msg):
    """Per log entry: (ordering error, late), by the definitions, for first deliveries only."""
    hist = [set() for _ in range(n)]
    past, flags = {}, []
    for k, p, m in zip(kind, node, msg):
        if k == B:
            past[m] = set().union(*(past[x] | {x} for x in hist[p]))
            hist[p].add(m)
            flags.append((False, False))
        elif m in hist[p]:
            flags.append((False, False))  # a duplicate is counted as such, not flagged
        else:
            flags.append((any(x not in hist[p] for x in past[m]),
                          any(m in past[x] for x in hist[p])))
            hist[p].add(m)
    return np.array(flags, bool).reshape(-1, 2)


@pytest.mark.parametrize("seed", range(16))
def test_per_delivery_ground_truth_matches_the_definitions(seed):
    """``per_delivery=True``: which deliveries were out of causal order, entry by entry, as a
    detector-based protocol is scored (the counts are those flags summed)."""
    n, log, _ = seeded_log(seed)
    kind, node, msg = zip(*log)
    report = oracle.check(n, kind, node, msg, per_delivery=True)
    expected = brute_force_flags(n, kind, node, msg)
    np.testing.assert_array_equal(report.delivery_error, expected[:, 0])
    np.testing.assert_array_equal(report.delivery_late, expected[:, 1])
    assert report.delivery_error.sum() == report.errors and report.delivery_late.sum() == report.late
    assert oracle.check(n, kind, node, msg).delivery_error is None  # only when asked


@pytest.mark.parametrize("seed", range(4))
def test_per_delivery_flags_by_topic_are_in_log_order(seed):
    g = np.random.default_rng([11, seed])
    n, m_total = int(g.integers(3, 7)), int(g.integers(8, 30))
    log, _ = random_log(g, n, m_total, churn=False)
    msg_topic = g.choice([0, 5], m_total)
    kind, node, msg = zip(*log)
    report = oracle.check_by_topic(n, kind, node, msg, msg_topic, per_delivery=True)
    for t in (0, 5):
        where = [i for i, m in enumerate(msg) if msg_topic[m] == t]
        ids = np.flatnonzero(msg_topic == t)
        local = {int(x): i for i, x in enumerate(ids)}
        sub = oracle.check(n, [kind[i] for i in where], [node[i] for i in where],
                           [local[msg[i]] for i in where], per_delivery=True)
        np.testing.assert_array_equal(report.delivery_error[where], sub.delivery_error)
        np.testing.assert_array_equal(report.delivery_late[where], sub.delivery_late)
