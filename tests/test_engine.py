"""The event queue, the packet-switched delay model and the memory helpers."""

import math
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

from causal_lab.engine import events, memory, network, rng


@numba.njit
def _drain(times, kinds):
    q = events.new_queue()
    for k in range(len(times)):
        events.schedule(q, times[k], kinds[k], k, 0)
    order = np.empty(len(times), np.int64)
    for k in range(len(times)):
        _, _, a, _ = events.pop(q)
        order[k] = a
    return order


def test_events_pop_by_time_then_insertion_order():
    times = np.array([5.0, 1.0, 5.0, 0.5, 1.0])
    assert list(_drain(times, np.zeros(5, np.int64))) == [3, 1, 4, 0, 2]


@numba.njit
def _peek_then_pop(times):
    q = events.new_queue()
    for k in range(len(times)):
        events.schedule(q, times[k], 7, k, 10 * k)
    same = 0
    while not events.empty(q):
        kind, a, b = events.peek(q)
        _, kind2, a2, b2 = events.pop(q)
        same += (kind, a, b) == (kind2, a2, b2)
    return same


def test_peek_shows_the_event_pop_returns_next():
    assert _peek_then_pop(np.array([3.0, 1.0, 2.0, 1.0])) == 4


@numba.njit
def _mixed(ops, times, capacity):
    """Apply ``ops`` (0: schedule, 1: pop, 2: pop then schedule, which fills the slot the pop
    left) to a queue; returns the popped a's (-2 if ``peek`` or ``next_time`` had shown another
    event), the times popped, and the pending count at the end."""
    q = events.new_queue(capacity)
    out = np.full(len(ops), -1, np.int64)
    out_t = np.full(len(ops), -1.0)
    for k in range(len(ops)):
        if ops[k] == 0 or events.empty(q):
            events.schedule(q, times[k], 3, k, -k)
            continue
        t_next, (kind_next, a_next, b_next) = events.next_time(q), events.peek(q)
        t, kind, a, b = events.pop(q)
        same = (t, kind, a, b) == (t_next, kind_next, a_next, b_next) and b == -a
        out[k], out_t[k] = (a, t) if same else (-2, -2.0)
        if ops[k] == 2:
            events.schedule(q, times[k], 3, k, -k)
    return out, out_t, events.pending(q)


def _model(ops, times):
    """The same operations on a sorted Python list of (time, seq, a)."""
    pending, out, out_t, seq = [], [], [], 0
    for k, op in enumerate(ops):
        if op == 0 or not pending:
            pending.append((times[k], seq, k)); seq += 1
            out.append(-1); out_t.append(-1.0)
        else:
            pending.sort()
            t, _, a = pending.pop(0)
            if op == 2:
                pending.append((times[k], seq, k)); seq += 1
            out.append(a); out_t.append(t)
    return out, out_t, len(pending)


@pytest.mark.parametrize("seed", range(4))
def test_queue_matches_a_sorted_list(seed):
    """Pops and pushes in any mix leave in (time, insertion) order, and ``peek`` shows what
    ``pop`` returns next, with the popped slot open or filled; ties are frequent (times on a
    grid of 20) and the queue outgrows its first capacity."""
    g = np.random.default_rng(seed)
    ops = g.choice(3, 3000, p=[0.5, 0.25, 0.25])
    times = g.integers(0, 20, 3000) * 0.5
    times[(times == 0.0) & (np.arange(3000) % 2 == 0)] = -0.0  # the same instant as 0.0
    out, out_t, left = _mixed(ops, times, 2)
    model, model_t, model_left = _model(ops, times)
    assert list(out) == model and list(out_t) == model_t and left == model_left


@numba.njit
def _runners_up(times):
    q = events.new_queue()
    for k in range(len(times)):
        events.schedule(q, times[k], 0, k, 0)
    events.pop(q)
    shown = np.full(events.ARITY, -1, np.int64)
    for j in range(events.runners_up(q)):
        shown[j] = events.runner_up(q, j)[1]
    return shown, events.peek(q)[1]


def test_runners_up_hold_the_event_after_next():
    """After the first pop, the next event is peeked and the one after it is a runner-up."""
    times = np.array([0.0, 5.0, 1.0, 7.0, 2.0, 9.0, 3.0, 8.0])
    shown, head = _runners_up(times)
    assert head == 2  # time 1.0
    assert 4 in shown  # time 2.0, next but one
    assert set(shown) <= set(range(8)) | {-1}


@numba.njit
def _replay(times, b, fed, follow):
    """Pop everything, each fed event k scheduling ``follow[k]`` later ones (kind 1) at ties-prone
    times; the workload is fed (``events.feed``) or scheduled up front."""
    q = events.new_queue()
    if fed:
        events.feed(q, times, 0, b)
    else:
        for k in range(len(times)):
            events.schedule(q, times[k], 0, k, b[k])
    log = []
    left = [events.pending(q)]
    while not events.empty(q):
        t, kind, a, x = events.pop(q)
        log.append((t, kind, a, x))
        if kind == 0:
            for j in range(follow[a]):
                events.schedule(q, t + 0.5 * (j % 3), 1, a, j)
        left.append(events.pending(q))
    return log, left


def test_a_fed_workload_leaves_as_if_scheduled_up_front():
    """``feed`` keeps only the next workload event in the heap, yet every event leaves in the
    same order with the same payload as when the whole workload is scheduled first (unsorted
    times on a grid, so ties between fed and scheduled events are frequent), and ``pending``
    counts the fed events not in the heap yet."""
    g = np.random.default_rng(5)
    times = g.integers(0, 40, 2000) * 0.5
    b = g.integers(-9, 9, 2000)
    follow = g.integers(0, 4, 2000)
    fed = _replay(times, b, True, follow)
    assert fed == _replay(times, b, False, follow)
    assert len(fed[0]) == 2000 + follow.sum()


@numba.njit
def _feed_twice():
    q = events.new_queue()
    events.schedule(q, 1.0, 0, 0, 0)
    events.feed(q, np.zeros(3), 0, np.zeros(3, np.int64))


def test_feed_needs_a_new_queue_and_valid_times():
    with pytest.raises(ValueError, match="must be new"):
        _feed_twice()
    with pytest.raises(ValueError, match=">= 0"):
        _replay(np.array([1.0, np.nan]), np.zeros(2, np.int64), True, np.zeros(2, np.int64))


def test_a_negative_time_is_refused():
    with pytest.raises(ValueError, match=">= 0"):
        _drain(np.array([1.0, -0.5]), np.zeros(2, np.int64))


@numba.njit
def _sum_with_prefetch(a, b):
    total = 0
    for k in range(len(a)):
        memory.prefetch(a, k + 64)  # beyond the end is allowed: a hint never faults
        memory.prefetch(b, 7 * k)  # 2-D, element index in memory order
        total += a[k]
    return total


def test_prefetch_is_only_a_hint():
    a = np.arange(100, dtype=np.int32)
    b = np.zeros((100, 8), np.int64)
    assert _sum_with_prefetch(a, b) == 4950
    assert (b == 0).all()


@pytest.mark.parametrize("huge_pages", [False, True])
def test_zeros_in_either_page_size(huge_pages):
    z = memory.zeros((1 << 20, 8), np.int32, huge_pages)
    assert z.shape == (1 << 20, 8) and z.dtype == np.int32 and not z.any()


def test_ring_benchmark_counts_every_hop():
    assert events.ring_benchmark(10, 3, 1000) == 1000


def test_fifo_sending_queue_departure_rule():
    """start = max(ready, server_free): the k-th copy of an idle node leaves k * t_t later."""
    net = network.Network(t_pc=1.0, t_t=2.0, tpp="constant", tpp_mean=100.0)
    p, s = net.params(np.random.SeedSequence(0)), network.new_state(2)
    sent = [network.send(p, s, 0, 10.0) for _ in range(3)]
    assert sent == [(113.0, 0.0), (115.0, 2.0), (117.0, 4.0)]
    # after the queue drained, a packet waits for nobody
    assert network.send(p, s, 0, 1000.0) == (1103.0, 0.0)
    # queues are per node
    assert network.send(p, s, 1, 10.0) == (113.0, 0.0)


def test_vcube_ps_configuration_is_the_same_model():
    net = network.Network(t_pc=0.0, t_t=1.0, tpp="constant", tpp_mean=100.0)
    p, s = net.params(np.random.SeedSequence(0)), network.new_state(1)
    assert [network.send(p, s, 0, 0.0)[0] for _ in range(3)] == [101.0, 102.0, 103.0]


def test_propagation_is_counter_based_and_normal():
    net = network.Network()
    p = net.params(np.random.SeedSequence(1))
    draws = np.array([network.propagation(p, 3, k) for k in range(20000)])
    assert abs(draws.mean() - 100) < 0.6 and abs(draws.std() - 25) < 0.6
    assert network.propagation(p, 3, 17) == draws[17]  # a pure function of (sender, k)
    assert network.propagation(p, 4, 17) != draws[17]
    other = network.Network().params(np.random.SeedSequence(2))
    assert network.propagation(other, 3, 17) != draws[17]


@pytest.mark.parametrize("rule,lowest", [("redraw", "positive"), ("clip", "zero")])
def test_negative_delays(rule, lowest):
    net = network.Network(tpp_mean=1.0, tpp_sigma=5.0, tpp_negative=rule)
    p = net.params(np.random.SeedSequence(0))
    draws = np.array([network.propagation(p, 0, k) for k in range(2000)])
    assert draws.min() >= 0
    assert ((draws == 0).sum() > 100) == (lowest == "zero")


def test_network_rejects_bad_configuration():
    with pytest.raises(ValueError, match="t_t"):
        network.Network(t_t=-1.0)
    with pytest.raises(ValueError, match="tpp must be one of"):
        network.Network(tpp="lognormal")
    with pytest.raises(ValueError, match="header"):
        network.Network(mtu=10, header=20)


def test_uniform_draws_are_in_the_open_unit_interval():
    key = rng.stream_key(np.random.SeedSequence(5), "x")
    u = np.array([rng.uniform(key, 0, k) for k in range(50000)])
    assert 0 < u.min() and u.max() < 1 and math.isclose(u.mean(), 0.5, abs_tol=0.01)


def test_named_streams_are_independent_of_creation_order():
    seed = np.random.SeedSequence(9)
    a = rng.generator(seed, "schedule").random(3)
    rng.generator(seed, "other").random(3)
    assert np.array_equal(a, rng.generator(seed, "schedule").random(3))
    assert not np.array_equal(a, rng.generator(seed, "other").random(3))


def test_every_family_names_the_network_the_same_way():
    """One set of network parameters, whatever the family's defaults."""
    from causal_lab import catalog

    for family in catalog.families():
        for experiment in getattr(catalog.family_module(family, "experiments"), "EXPERIMENTS", ()):
            names = {p.name for p in experiment.params}
            assert set(network.PARAMETER_NAMES) <= names, experiment.name
            point = {p.name: p.default for p in experiment.params}
            assert isinstance(network.from_point(point), network.Network)


def test_a_kernel_compiles_once_for_constants_narrow_ints_and_int64():
    """``engine.jit.njit``: a call with a literal, an int32 and an int64 share one version."""
    from causal_lab.engine.jit import njit

    @njit
    def twice(x, flag):
        return 2 * x if flag else x

    @njit
    def caller(narrow, wide):
        return twice(0, True) + twice(narrow[0], False) + twice(wide, True)

    assert caller(np.array([5], np.int32), 7) == 0 + 5 + 14
    assert [str(s) for s in twice.signatures] == ["(int64, bool)"]


PLAIN_COUNTS_SCRIPT = """
import numba
import numpy as np
from numba.core.runtime import _nrt_python, nrt
from causal_lab.engine import jit

@numba.njit
def allocate(k):
    total = 0.0
    for i in range(k):
        total += np.ones(100).sum()  # an array made and dropped inside compiled code
    return total

_nrt_python.memsys_enable_stats()
allocate(1)
made, freed = _nrt_python.memsys_get_stats_mi_alloc(), _nrt_python.memsys_get_stats_mi_free()
allocate(1000)
made, freed = _nrt_python.memsys_get_stats_mi_alloc() - made, _nrt_python.memsys_get_stats_mi_free() - freed
print(jit.PLAIN_REFERENCE_COUNTS, "atomicrmw" in nrt.rtsys.library.get_llvm_str(), made, freed)
"""


def test_reference_counts_are_plain_and_arrays_are_still_freed():
    """``engine.jit``: a process that imports the engine first gets NRT counts without locked
    instructions, and every array compiled code makes is freed (numba's own switch frees none)."""
    out = subprocess.run([sys.executable, "-c", PLAIN_COUNTS_SCRIPT], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "1000", "1000"]


STALE_CALLEE_SCRIPT = """
import sys
from pathlib import Path
from causal_lab.engine import jit
jit.SOURCES_DIGEST = jit.sources_digest(Path(sys.argv[1]) / "pkg")
sys.path.insert(0, sys.argv[1])
from pkg import kern
print(kern.run())
"""


def test_a_cached_kernel_is_recompiled_when_a_callee_in_another_file_changes(tmp_path):
    """``engine.jit``: numba alone checks only the kernel's own file, so a cached kernel kept
    running an edited helper's old code; keyed on the sources' digest, it recompiles."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    helper = "from causal_lab.engine.jit import njit\n\n@njit(inline='always')\ndef value():\n    return {}\n"
    (pkg / "helper.py").write_text(helper.format(1))
    (pkg / "kern.py").write_text("from causal_lab.engine.jit import njit\nfrom pkg import helper\n\n"
                                 "@njit\ndef run():\n    return helper.value()\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run():
        out = subprocess.run([sys.executable, "-c", STALE_CALLEE_SCRIPT, str(tmp_path)], env=env,
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()

    assert run() == "1"
    assert list((tmp_path / "cache").rglob("*.nbi"))  # the kernel was cached
    (pkg / "helper.py").write_text(helper.format(2))
    assert run() == "2"


def test_no_kernel_runs_outside_the_gil():
    """Plain reference counts (``engine.jit``) are exact only while one thread at a time runs
    compiled code: no source of the package may release the GIL or run kernels in parallel."""
    import re
    from pathlib import Path

    import causal_lab

    pattern = re.compile(r"nogil\s*=\s*True|parallel\s*=\s*True|\bprange\(")
    root = Path(causal_lab.__file__).parent
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


KEEP_SCRIPT = """
import sys
import numpy as np
from causal_lab.engine import memory

def rss_mb():
    line = next(l for l in open('/proc/self/status') if l.startswith('VmRSS'))
    return int(line.split()[1]) // 1024

kept = memory.keep_freed_memory() if sys.argv[1] == 'keep' else False
table = np.ones(25_000_000)  # 200 MB, touched
before = rss_mb()
del table
print(kept, before, rss_mb())
"""


@pytest.mark.parametrize("mode", ["keep", "default"])
def test_keep_freed_memory_keeps_a_freed_table_in_the_process(mode):
    out = subprocess.run([sys.executable, "-c", KEEP_SCRIPT, mode], check=True,
                         capture_output=True, text=True).stdout.split()
    kept, before, after = out[0] == "True", int(out[1]), int(out[2])
    assert kept == (mode == "keep")
    if kept:  # its pages stay mapped for the next run to reuse
        assert after > before - 20
    else:  # glibc gave them back
        assert after < before - 150
