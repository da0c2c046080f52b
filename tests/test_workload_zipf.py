"""Zipf topic workload (thesis §5.6.5; spec vcube_ps.md §5.1 check E0-2 and §5.7).

E0-2 numbers are the spec's closed-form values for 128 topics and exponent 0.825, given to the
precision the spec prints them with.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from causal_lab.engine import rng
from causal_lab.engine.workload import zipf_topics, zipf_weights

N_TOPICS, S = 128, 0.825


def _seed(k: int = 0) -> np.random.SeedSequence:
    return np.random.SeedSequence([20181113, k])


def test_e0_2_closed_form_for_128_topics():
    p = zipf_weights(N_TOPICS, S)
    harmonic = (np.arange(1, N_TOPICS + 1) ** -S).sum()
    assert harmonic == pytest.approx(8.2166, abs=5e-5)
    assert 100 * p[0] == pytest.approx(12.17, abs=5e-3)
    assert 100 * p[1] == pytest.approx(6.87, abs=5e-3)
    assert 100 * p[:5].sum() == pytest.approx(31.06, abs=5e-3)
    assert 100 * p[:10].sum() == pytest.approx(42.28, abs=5e-3)
    assert 100 * p[-1] == pytest.approx(0.222, abs=5e-4)


def test_weights_are_a_decreasing_power_law_and_s0_is_uniform():
    p = zipf_weights(N_TOPICS, S)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(p) < 0)
    slope = np.polyfit(np.log(np.arange(1, N_TOPICS + 1)), np.log(p), 1)[0]
    assert slope == pytest.approx(-S, abs=1e-12)
    assert np.array_equal(zipf_weights(N_TOPICS, 0.0), np.full(N_TOPICS, 1 / N_TOPICS))
    with pytest.raises(ValueError):
        zipf_weights(0, S)
    with pytest.raises(ValueError):
        zipf_weights(N_TOPICS, -0.5)


def test_topics_are_deterministic_per_seed():
    a = zipf_topics(N_TOPICS, S, 5000, _seed(1))
    b = zipf_topics(N_TOPICS, S, 5000, _seed(1))
    c = zipf_topics(N_TOPICS, S, 5000, _seed(2))
    assert a.dtype == np.int64 and a.shape == (5000,)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.min() >= 0 and a.max() < N_TOPICS
    # a longer request extends the same sequence (one uniform per draw after the permutation)
    assert np.array_equal(zipf_topics(N_TOPICS, S, 8000, _seed(1))[:5000], a)
    assert zipf_topics(N_TOPICS, S, 0, _seed(1)).shape == (0,)


def test_hot_topic_is_random_and_shared_by_the_uniform_workload():
    hot = {int(np.bincount(zipf_topics(N_TOPICS, S, 4000, _seed(k))).argmax()) for k in range(8)}
    assert len(hot) >= 6  # the rank -> topic permutation changes with the seed
    perm = rng.generator(_seed(3), "topics").permutation(N_TOPICS)
    zipf = zipf_topics(N_TOPICS, S, 4000, _seed(3))
    uniform = zipf_topics(N_TOPICS, 0.0, 4000, _seed(3))
    assert np.bincount(zipf, minlength=N_TOPICS).argmax() == perm[0]
    # common random numbers: the same variates fall in rank 1 under both laws when they are small
    u = rng.generator(_seed(3), "topics")
    u.permutation(N_TOPICS)
    variates = u.random(4000)
    low = variates < 1 / N_TOPICS
    assert np.all(zipf[low] == perm[0]) and np.all(uniform[low] == perm[0])


@pytest.mark.parametrize("s", [S, 0.0])
def test_sampled_frequencies_follow_the_law(s):
    size = 200_000
    topics = zipf_topics(N_TOPICS, s, size, _seed(4))
    perm = rng.generator(_seed(4), "topics").permutation(N_TOPICS)
    counts_by_rank = np.bincount(topics, minlength=N_TOPICS)[perm]
    expected = size * zipf_weights(N_TOPICS, s)
    assert stats.chisquare(counts_by_rank, expected).pvalue > 1e-3
    # the test has power: the other law is rejected outright
    other = size * zipf_weights(N_TOPICS, 0.0 if s else S)
    assert stats.chisquare(counts_by_rank, other).pvalue < 1e-12
