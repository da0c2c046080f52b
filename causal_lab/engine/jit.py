"""``njit``: the decorator every compiled function of the project uses instead of ``numba.njit``.

It is ``numba.njit(cache=True)`` with one difference, which only matters when one kernel calls
another.  Plain numba compiles a callee once per distinct argument *type* at its call sites, and a
constant (``_answer(st, q, 0, kind, now)``, ``_policy(..., False)``) has its own literal type, as
has an int32 read from an int32 array.  So a function called with ``0`` in one place, ``i`` in
another and ``st.arr_node[r, k]`` in a third was compiled three times, and everything it calls
with it: the probabilistic-clock family's warm-up (``causal_lab.warm``) compiled 186 versions of
its 88 functions, and 96 with this module.  Here a call between kernels is typed with the
constants made ordinary and signed integers widened to int64, so a function compiles once per
signature of its ordinary arguments; the caller converts the value at the call, as it would for
any declared signature.

What this gives up: numba's pruning of a branch on a literal ``True``/``False`` argument.  Such a
branch now stays and is decided when the code runs, one well-predicted test (LLVM can still fold
it where it inlines the callee); the kernels ran as fast or faster in paired benchmarks.  Results
are the same, bit for bit: an int32 widened to int64 only removes overflow that the code never
relies on, and the test suite's recorded smoke outputs did not change.  Strings keep their
literal type (``engine.state`` reads fields by literal name).

Reference counts without locked instructions.  Numba's runtime (NRT) reference-counts every
array a kernel touches, and every read of a state field (``st.rs``) is an increment and a
decrement, done with locked instructions so that threads may share arrays.  A profile of
VCube-PS (N = 2048, every node publishing) put 16 % of its samples on those two instructions.
No kernel here runs outside the GIL or on several threads (``tests/test_engine.py`` checks the
sources for ``nogil``, ``parallel`` and ``prange``), and the GIL orders every other access, so
plain increments are exact.  NRT builds its increment and decrement (``nrt_atomic_add`` /
``_sub``, called by name from every compiled kernel, cached ones included) once, when the first
kernel compiles or loads; ``_plain_counts`` builds them without the lock first.  Numba's own
switch for this (``nrtdynmod._disable_atomicity``) returns the count *before* the decrement,
so NRT would never free an array: that is why the builder is ours.  Same results bit for bit;
``tests/test_engine.py`` checks that arrays are still freed.

A cache that sees the callees.  Numba keys a cached kernel on its own bytecode and discards it
when its own file changes, but a kernel inlines what it calls from other files: after an edit
of ``free_scale/pairs.py`` the cached ``free_scale.kernel._run`` still ran the old pair loops.
Here every cached kernel is also keyed on a digest of all the package's sources, so any edit
recompiles what it may reach (once: ``make`` re-runs the warm-up when a source changes).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from llvmlite import ir
from numba.core import types
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher
from numba.core.runtime import nrt, nrtdynmod


def _plain_inc_dec(module, op, ordering):
    """NRT's ``nrt_atomic_add`` / ``nrt_atomic_sub`` as a plain load, add and store, returning
    the new count as the locked version does (``ordering`` is NRT's argument, moot here)."""
    word = nrtdynmod._word_type
    function = ir.Function(module, ir.FunctionType(word, [word.as_pointer()]), name=f"nrt_atomic_{op}")
    builder = ir.IRBuilder(function.append_basic_block())
    [count] = function.args
    new = getattr(builder, op)(builder.load(count), ir.Constant(word, 1))
    builder.store(new, count)
    builder.ret(new)
    return function


def _plain_counts() -> bool:
    """Give NRT the plain increment and decrement unless its runtime is already built;
    whether its counts are plain."""
    if not nrt.rtsys._init:
        nrtdynmod._define_atomic_inc_dec = _plain_inc_dec
    return nrtdynmod._define_atomic_inc_dec is _plain_inc_dec


PLAIN_REFERENCE_COUNTS = _plain_counts()


def _ordinary(t: types.Type) -> types.Type:
    """The type a kernel is compiled for when a caller passes a value of type ``t``."""
    if isinstance(t, (types.IntegerLiteral, types.BooleanLiteral)):
        t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64:
        return types.int64
    return t


def sources_digest(package: Path) -> str:
    """SHA-256 over the path and text of every Python source under ``package``."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


SOURCES_DIGEST = sources_digest(Path(__file__).resolve().parents[1])


class _SourcesCache(FunctionCache):
    """Numba's on-disk cache of one function, its entries keyed also on ``SOURCES_DIGEST``."""

    def _index_key(self, sig, codegen):
        return (*super()._index_key(sig, codegen), SOURCES_DIGEST)


class _Kernel(CPUDispatcher):
    """A CPU dispatcher that compiles calls from other compiled code for ordinary types, and
    caches on disk keyed also on the package's sources."""

    def enable_caching(self):
        self._cache = _SourcesCache(self.py_func)

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_ordinary(t) for t in args),
                                         {name: _ordinary(t) for name, t in kws.items()})


def njit(func=None, *, inline: str = "never"):
    """``numba.njit(cache=True)`` (``inline="always"`` passed through), typed as the module says.

    Use as ``@njit`` or ``@njit(inline="always")``."""

    def compile_lazily(f):
        dispatcher = _Kernel(py_func=f, locals={}, targetoptions={"nopython": True, "inline": inline})
        dispatcher.enable_caching()
        return dispatcher

    return compile_lazily if func is None else compile_lazily(func)
