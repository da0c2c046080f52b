"""Mutable state structs for the compiled protocol kernels.

A kernel's state (node arrays, message tables, work lists, the event log) is one numba
*structref*: a mutable struct passed by reference.  A named tuple of ~50 arrays would be copied
at every call and have the reference count of each array updated, which profiling showed to be
half the run time of a kernel.

``define("State", fields, __name__)`` returns ``(StateType, State)``: the numba type and the
Python class whose constructor takes the fields in order.  Python code (tests, notebooks) reads a
field as an attribute; it gets the very array or list the kernel mutates.
"""

from __future__ import annotations

import numba
from numba.experimental import structref

from causal_lab.buffers import grown


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
    getters: dict = {}

    def __getattr__(self, attr):
        if attr not in fields:
            raise AttributeError(attr)
        if attr not in getters:
            namespace: dict = {}
            exec(f"def get(st):\n    return st.{attr}\n", namespace)
            getters[attr] = numba.njit(namespace["get"])
        return getters[attr](self)

    proxy = type(name, (structref.StructRefProxy,), {
        "__getattr__": __getattr__, "__module__": module,
        "__doc__": f"Kernel state with fields: {', '.join(fields)}.",
    })
    structref.define_proxy(proxy, typ, list(fields))
    return typ, proxy


@numba.njit(cache=True)
def log(st, top, kind, node, msg):
    """Append (kind, node, message) to a kernel's event log, the input of ``causal_lab.oracle``.

    ``st`` is any kernel state with the fields ``log_kind``, ``log_node``, ``log_msg`` (growable
    arrays) and ``tops``, where ``tops[top]`` is the log's fill level.
    """
    k = st.tops[top]
    if k >= len(st.log_msg):
        st.log_kind = grown(st.log_kind, k + 1)
        st.log_node = grown(st.log_node, k + 1)
        st.log_msg = grown(st.log_msg, k + 1)
    st.log_kind[k] = kind
    st.log_node[k] = node
    st.log_msg[k] = msg
    st.tops[top] = k + 1
