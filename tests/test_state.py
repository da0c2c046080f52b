"""Kernel state with named fields, growable tables and free lists (``causal_lab.engine.state``)."""

import numba
import numpy as np
import pytest

from causal_lab.engine import state

T_FILL, T_FREE = 0, 1
StateType, Probe = state.define("Probe", ("rows", "tops", "log"), __name__)


def test_create_takes_every_field_by_name():
    st = Probe.create(rows=state.table(2, 1), tops=np.array([0, -1]), log=state.new_log(1))
    assert st.rows.shape == (1, 2)
    with pytest.raises(TypeError, match=r"missing fields \['log'\]"):
        Probe.create(rows=state.table(2), tops=np.zeros(2, np.int64))
    with pytest.raises(TypeError, match=r"unknown fields \['lgo'\]"):
        Probe.create(rows=state.table(2), tops=np.zeros(2, np.int64), log=state.new_log(), lgo=1)


@numba.njit
def _churn(st, steps):
    """Take rows, give every other one back, take again: returns the rows handed out."""
    got = np.empty(steps, np.int64)
    for k in range(steps):
        st.rows, e = state.take(st.rows, st.tops, T_FILL, T_FREE, 1)
        st.rows[e, 0] = k
        got[k] = e
        if k % 2 == 1:
            state.release(st.rows, st.tops, T_FREE, 1, e)
        state.log(st, 2, 1, k, e)
    return got


def test_tables_grow_and_reuse_freed_rows():
    st = Probe.create(rows=state.table(2, 1), tops=np.array([0, -1, 0]), log=state.new_log(1))
    got = _churn(st, 100)
    # every odd step frees its row and the next step takes it again: 50 distinct rows in use
    assert len(set(got.tolist())) == 51 and st.tops[T_FILL] == 51
    assert st.rows.shape[0] >= 51  # grown from 1 row by doubling
    kind, node, msg = state.log_arrays(st.log, st.tops[2])
    assert kind.dtype == np.int8 and (node == np.arange(100)).all() and (msg == got).all()


def test_grown_copies_only_when_needed():
    a = np.arange(4)
    assert state.grown(a, 4) is a
    b = state.grown(a, 5)
    assert len(b) == 8 and (b[:4] == a).all()
    t = state.table(3, 2)
    t[:] = 7
    g = state.grown_rows(t, 3)
    assert g.shape == (4, 3) and (g[:2] == 7).all()


def test_a_field_read_from_python_is_the_kernels_array_and_calls_numba_once(monkeypatch):
    st = Probe.create(rows=state.table(2, 1), tops=np.array([0, -1, 0]), log=state.new_log(1))
    _churn(st, 3)
    assert st.tops is not None and st.tops[T_FILL] == 2
    # later reads go straight to the compiled getter: re-dispatching ``_field`` re-ran numba's
    # type inference on every read (6 ms each)
    monkeypatch.setattr(state, "_field", lambda *a: pytest.fail("_field dispatched again"))
    st.tops[T_FILL] = 7
    assert _churn(st, 1)[0] == 7  # the very array the kernel reads
