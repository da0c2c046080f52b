"""The mutable state of a compiled protocol kernel: a struct with named fields, growable tables,
free lists and the event log.

A kernel's state (node arrays, message tables, work lists, the event log) is one numba
*structref*: a mutable struct passed by reference.  A named tuple of ~50 arrays would be copied
at every call and have the reference count of each array updated, which profiling showed to be
half the run time of a kernel.

``define("State", FIELDS, __name__)`` returns ``(StateType, State)``: the numba type and the
Python class.  ``State.create(name=value, ...)`` builds one from named fields (every field
exactly once, so a forgotten or misspelt field is an error, not a silent shift).  Python code
(tests, notebooks) reads a field as an attribute and gets the very array the kernel mutates.

Growable tables.  Kernels fill tables whose final size is not known in advance (packets, waiting
lists, ACK slots).  A table is one 2-D integer array (``int64`` unless a kernel asks for a
narrower type), one row per record and one column per field, with its fill level (and, for
records that are freed and reused, the head of a free list linked through one of its columns)
in the kernel's ``tops`` array.  ``append`` and ``take`` hand
out a row and double the table when it is full, ``release`` gives a row back: amortised O(1) like
a list, but each read or write is a plain memory access, whereas a ``numba.typed.List`` access is a
call into C.  Both return the table, which may be a new, larger array: assign it back to the
struct field (``st.slots, e = state.take(st.slots, ...)``).

The event log, the input of ``causal_lab.oracle``, is such a table with the columns
``LOG_KIND`` (``oracle.BROADCAST`` or ``oracle.DELIVER``), ``LOG_NODE`` and ``LOG_MSG``: ``log``
appends one entry and ``log_arrays`` returns the filled part as the oracle's three arrays.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.experimental import structref
from numba.extending import intrinsic

from causal_lab.engine import memory
from causal_lab.engine.jit import njit

LOG_KIND, LOG_NODE, LOG_MSG = range(3)
LOG_COLUMNS = 3


def _preprocess_fields(self, fields):
    return tuple((name, numba.types.unliteral(typ)) for name, typ in fields)


def define(name: str, fields: tuple[str, ...], module: str):
    """Create the structref type ``<name>Type`` and its proxy class ``<name>`` in ``module``.

    Both classes must then be bound to those names in ``module`` (so that numba's on-disk cache
    can find them again), e.g. ``StateType, State = define("State", FIELDS, __name__)``.
    """
    typ = type(f"{name}Type", (numba.types.StructRef,), {
        "preprocess_fields": _preprocess_fields, "__module__": module,
    })
    structref.register(typ)
    def __getattr__(self, attr):
        if attr not in fields:
            raise AttributeError(attr)
        key = (self._type, attr)
        get = _getters.get(key)
        if get is None:
            _field(self, attr)  # compiles the getter, or loads it from the disk cache
            get = _getters[key] = _field.overloads[(self._type, numba.types.literal(attr))].entry_point
        return get(self, attr)

    def create(cls, **values):
        """A new state from named fields: every field of the struct exactly once."""
        missing = [f for f in fields if f not in values]
        unknown = [f for f in values if f not in fields]
        if missing or unknown:
            raise TypeError(f"{name}.create: missing fields {missing}, unknown fields {unknown}")
        ordered = tuple(values[f] for f in fields)
        instance_type = typ([(f, numba.typeof(v)) for f, v in zip(fields, ordered)])
        return _construct(instance_type, ordered)

    proxy = type(name, (structref.StructRefProxy,), {
        "__getattr__": __getattr__, "__module__": module, "create": classmethod(create),
        "__doc__": f"Kernel state with fields: {', '.join(fields)}.",
    })
    structref.define_proxy(proxy, typ, list(fields))
    return typ, proxy


@intrinsic
def _fill(typingctx, struct, values):
    """Store ``values`` (a tuple, in field order) into the fields of a fresh, zeroed ``struct``."""
    def codegen(context, builder, signature, args):
        instance, tuple_value = args
        data = structref._Utils(context, builder, struct).get_data_struct(instance)
        for i, (field, field_type) in enumerate(struct.field_dict.items()):
            value = context.cast(builder, builder.extract_value(tuple_value, i), values[i], field_type)
            context.nrt.incref(builder, field_type, value)
            setattr(data, field, value)
        return context.get_dummy_value()
    return numba.types.void(struct, values), codegen


@njit
def _construct(struct_type, values):
    """A new struct of ``struct_type`` holding ``values``.

    structref's own constructor (``Proxy(*values)``) is compiled anew in every process and never
    cached: for a kernel state of 40-70 arrays that took 1-5 s in each notebook and each Spark
    worker.  This one is cached on disk, once per state type."""
    instance = structref.new(struct_type)
    _fill(instance, values)
    return instance


@intrinsic
def _get(typingctx, struct, name):
    """The field ``name`` (a string literal) of ``struct``."""
    if not isinstance(name, numba.types.StringLiteral):
        return None  # numba.literally in the caller retries with the literal
    field_type = struct.field_dict[name.literal_value]

    def codegen(context, builder, signature, args):
        data = structref._Utils(context, builder, struct).get_data_struct(args[0])
        value = getattr(data, name.literal_value)
        context.nrt.incref(builder, field_type, value)
        return value
    return field_type(struct, name), codegen


@njit
def _field(instance, name):
    """Python's view of one field (``State.<field>``), cached on disk per type and field: a
    getter compiled on each first read cost 0.1-0.3 s per field per process."""
    return _get(instance, numba.literally(name))


# (state type, field) -> the compiled getter of ``_field``, called directly: calling ``_field``
# itself re-ran numba's type inference to find the literal field name on every read (6 ms, and a
# VCube-PS replication reads up to a few hundred fields), the compiled getter takes 0.5 us
_getters: dict = {}


def table(columns: int, rows: int = 1024, dtype: type = np.int64) -> np.ndarray:
    """An empty growable table (its fill level lives in the kernel's ``tops``); a narrower
    ``dtype`` where every field fits keeps more of a large table in the caches."""
    return np.empty((rows, columns), dtype)


def new_log(rows: int = 1024, dtype: type = np.int64) -> np.ndarray:
    """An empty event log (``log``); ``np.int32`` when every node and message id fits halves
    the memory a long run writes (the free-scale kernel's log is one row per arrival)."""
    return table(LOG_COLUMNS, rows, dtype)


@njit
def grown(a, need):
    """``a`` itself if it holds at least ``need`` items, else a copy at least twice as large."""
    if need <= len(a):
        return a
    b = np.empty(max(need, 2 * len(a)), a.dtype)
    b[:len(a)] = a
    return b


@njit
def grown_rows(a, need):
    """``grown`` for a table: ``a`` itself if it has ``need`` rows, else a copy with at least
    twice as many."""
    if need <= a.shape[0]:
        return a
    b = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), a.dtype)
    b[:a.shape[0]] = a
    return b


@njit
def append(tab, tops, fill):
    """A new row at the end of ``tab`` (fill level ``tops[fill]``); returns (table, row)."""
    e = tops[fill]
    tops[fill] = e + 1
    return grown_rows(tab, e + 1), e


@njit
def full(tab, tops, fill):
    """Whether the next ``append`` must grow ``tab``: hot paths (the log, one entry per
    delivery) test this first and assign the struct field only then, since storing an array
    into a struct field costs two reference-count updates."""
    return tops[fill] >= tab.shape[0]


@njit
def take(tab, tops, fill, free, link):
    """A row for a new record: the head of the free list ``tops[free]`` (-1: empty), whose rows
    are linked through column ``link``, else a new row at the end; returns (table, row).

    The new head's row is prefetched: a freed row has usually left the caches by the time it is
    handed out again, and reading its link was the one cache miss of most takes (6 % of a
    VCube-PS churn run at N = 4096, ACK slots and membership tuples)."""
    e = tops[free]
    if e != -1:
        nxt = tab[e, link]
        tops[free] = nxt
        memory.prefetch(tab, nxt * tab.shape[1])
        return tab, e
    return append(tab, tops, fill)


@njit
def release(tab, tops, free, link, e):
    """Give row ``e`` back to the free list ``tops[free]``."""
    tab[e, link] = tops[free]
    tops[free] = e


@njit
def log(st, top, kind, node, msg):
    """Append (kind, node, message) to a kernel's event log, the input of ``causal_lab.oracle``.

    ``st`` is any kernel state with the fields ``log`` (a table of ``LOG_COLUMNS`` columns) and
    ``tops``, where ``tops[top]`` is the log's fill level.
    """
    tops = st.tops
    if full(st.log, tops, top):
        st.log = grown_rows(st.log, tops[top] + 1)
    k = tops[top]
    tops[top] = k + 1
    table = st.log
    table[k, LOG_KIND] = kind
    table[k, LOG_NODE] = node
    table[k, LOG_MSG] = msg


def log_arrays(log_table: np.ndarray, entries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first ``entries`` log entries as the oracle's (kind int8, node int64, msg int64)."""
    filled = np.asarray(log_table)[:entries]
    return (filled[:, LOG_KIND].astype(np.int8), filled[:, LOG_NODE].astype(np.int64),
            filled[:, LOG_MSG].astype(np.int64))
