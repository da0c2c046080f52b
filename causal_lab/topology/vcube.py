"""VCube clusters and the spanning trees built on them (seed 000 §2, §4.2; thesis 003 §2.4, §5.5.1).

Two layers live here.

* Reference functions (``cluster_list``, ``first_child``, ``cluster``, ``children_calls``,
  ``children``, ``children_topic``) follow the papers' recursive definitions word for word,
  faults and topic membership included.  They are slow and exist so that tests and readers
  can hold the fast layer against the text.
* Closed forms (``tree_parent``, ``n_tree_children``, ``tree_child``, ``is_tree_child``,
  ``children_after``, ``tree_depth``) are compiled kernels for the fault-free,
  full-membership case that the simulators use in their inner loops.

Why the closed forms are equivalent.  By induction on ``s``, the recursive list
``c(i,s) = [i ⊕ 2^(s-1)] ++ c(i ⊕ 2^(s-1), 1) ++ ... ++ c(i ⊕ 2^(s-1), s-1)`` is
``[i ⊕ y for y = 2^(s-1) .. 2^s - 1]``: the nodes whose highest bit differing from ``i`` is
bit ``s-1``.  Hence ``CLUSTER(i, j) = bitlen(i ⊕ j)`` and, without faults,
``FIRSTCHILD(i, s) = i ⊕ 2^(s-1)``.  When node ``i`` evaluates Algorithm 1 for root ``r``,
each recursive step moves the root to ``FIRSTCHILD(r, CLUSTER(r, i))``, which clears the
highest set bit of ``x = i ⊕ r``, and sets the height to the index of that bit.  The
descent stops when ``x`` is exhausted, so with ``p = lowbit(i ⊕ r)``:

* ``i`` is at depth ``popcount(i ⊕ r)``;
* its parent is the root of the last step, ``i ⊕ 2^p``;
* its subtree has height ``p`` and its children are ``i ⊕ 2^t`` for ``t < p``
  (``t < d`` at the root), in ascending cluster order, which is the sending order.

``k = i ⊕ 2^t`` is therefore a child of ``i`` iff ``(i ⊕ r) mod 2^(t+1) = 0``, and a node's
children depend only on its parent ``j``: there are ``CLUSTER(j, i) - 1`` of them whatever the
root.  Every fault-free tree is a binomial tree of height ``d``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection

import numba

from causal_lab.engine.jit import njit

__all__ = [
    "cluster_list",
    "first_child",
    "cluster",
    "children_calls",
    "children",
    "children_topic",
    "tree_parent",
    "n_tree_children",
    "tree_child",
    "is_tree_child",
    "children_after",
    "tree_depth",
    "tree_edges",
    "topic_tree_edges",
]


# --------------------------------------------------------------------------------------------
# Reference layer: the definitions of the texts, literally.
# --------------------------------------------------------------------------------------------


def cluster_list(i: int, s: int) -> list[int]:
    """Ordered cluster ``c(i, s)``, ``s >= 1``, by the recursive definition of seed 000 §2.

    The order matters, not only the set: FIRSTCHILD picks the first correct node of it.
    """
    if s < 1:
        raise ValueError(f"cluster index s must be >= 1, got {s}")
    head = i ^ (1 << (s - 1))
    result = [head]
    for k in range(1, s):
        result += cluster_list(head, k)
    return result


def first_child(i: int, s: int, faulty: Collection[int] = frozenset()) -> int | None:
    """FIRSTCHILD(i, s): first node of ``c(i, s)`` not in ``faulty``; ``None`` stands for ⊥."""
    return next((k for k in cluster_list(i, s) if k not in faulty), None)


def cluster(i: int, j: int) -> int:
    """CLUSTER(i, j): index of the cluster of ``i`` holding ``j``; symmetric in ``i`` and ``j``.

    The symmetry is why seed 000's ``CLUSTER(i, j) - 1`` and the thesis's
    ``CLUSTER(j, i) - 1`` in Algorithm 2 line 19 are the same thing.
    """
    if i == j:
        raise ValueError(f"a node is in none of its own clusters (i = j = {i})")
    return (i ^ j).bit_length()


def children_calls(
    i: int, r: int, h: int, faulty: Collection[int] = frozenset()
) -> list[tuple[int, int]]:
    """Arguments ``(r, h)`` of the successive CHILDREN calls node ``i`` makes (Algorithm 1).

    Line 5 of Algorithm 1 is the only recursion: it descends from ``r`` into the cluster of
    ``r`` that holds ``i`` until the call is about ``i`` itself.  Exposing the chain lets the
    worked example of the texts (``CHILDREN(2,3) -> CHILDREN(6,2) -> CHILDREN(4,1)`` for node 4)
    be checked step by step.  ``i`` must be correct: a faulty node is in no tree.
    """
    if i in faulty:
        raise ValueError(f"node {i} is faulty and belongs to no tree")
    if i == r:
        return [(r, h)]
    s = cluster(r, i)
    return [(r, h)] + children_calls(i, first_child(r, s, faulty), s - 1, faulty)


def children(i: int, r: int, h: int, faulty: Collection[int] = frozenset()) -> list[int]:
    """CHILDREN(r, h) evaluated at node ``i``: its children in the tree rooted at ``r``.

    ``h`` is the height of ``r``'s (sub)tree: ``d`` for a broadcast source, and
    ``CLUSTER(p, r) - 1`` when ``r`` received the message from ``p``.  Line 3 of the listing
    reads ``1 < s <= h``; it is applied as ``1 <= s <= h``, which every worked example of
    both texts requires (otherwise ``CHILDREN(4, 1)`` would be empty instead of ``{5}``).
    Children come in ascending cluster order, the order copies enter the sending queue.
    """
    _, height = children_calls(i, r, h, faulty)[-1]
    return [k for s in range(1, height + 1) if (k := first_child(i, s, faulty)) is not None]


def children_topic(i: int, h: int, members: Collection[int] | None = None) -> list[int]:
    """VCube-PS CHILDREN(i, t, h) (thesis §5.5.1): first member of each cluster ``s <= h``.

    ``members`` is node ``i``'s local view of the subscribers of topic ``t`` (not a global
    oracle: stale views are what create temporary relays); ``None`` is the topic ``'*'``,
    for which every node is a member.  The tree root does not appear because the caller
    encodes its position in ``h``: ``d`` at the publisher, ``CLUSTER(p, i) - 1`` at a node
    that received from ``p``.  As the thesis puts it, a non-member "plays the role of a faulty
    node" for ``t``, so this is Algorithm 1's line 3 with the non-members of ``i``'s first
    ``h`` clusters as the faulty set.
    """
    if members is None:
        return children(i, i, h)
    non_members = {i ^ y for y in range(1, 1 << h)}.difference(members)
    return children(i, i, h, non_members)


# --------------------------------------------------------------------------------------------
# Closed forms for the fault-free, full-membership trees (see the module docstring).
# --------------------------------------------------------------------------------------------


@njit
def _lowbit(x):
    """Index of the lowest set bit of ``x > 0``."""
    p = 0
    while ((x >> p) & 1) == 0:
        p += 1
    return p


@njit
def _bitlen(x):
    """Number of bits needed for ``x >= 0`` (``int.bit_length`` is not available in numba)."""
    n = 0
    while x >> n:
        n += 1
    return n


@njit
def _popcount(x):
    """Number of set bits of ``x >= 0``."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit
def tree_parent(i, r):
    """Parent of ``i`` in ``r``'s tree, -1 for the root: flip the lowest bit where ``i``, ``r`` differ."""
    x = i ^ r
    if x == 0:
        return -1
    return i ^ (x & -x)


@njit
def n_tree_children(i, r, d):
    """Number of children of ``i`` in ``r``'s tree of a ``d``-VCube (= its subtree height)."""
    x = i ^ r
    if x == 0:
        return d
    return _lowbit(x)


@njit
def tree_child(i, r, k):
    """The ``k``-th child (0-based, ascending cluster order) of ``i`` in ``r``'s tree.

    Valid for ``0 <= k < n_tree_children(i, r, d)``.  The answer, ``FIRSTCHILD(i, k + 1)``,
    does not depend on ``r``; ``r`` is in the signature so that call sites name the tree.
    """
    return i ^ (1 << k)


@njit
def is_tree_child(i, k, r):
    """Whether ``k`` is a child of ``i`` in ``r``'s tree, without listing ``i``'s children.

    Algorithm 2 asks this for every pending message and every dependency, so it must be O(1).
    """
    y = i ^ k
    if y == 0 or (y & (y - 1)) != 0:
        return False
    t = _lowbit(y)
    return ((i ^ r) & ((1 << (t + 1)) - 1)) == 0


@njit
def children_after(i, j):
    """Number of children of ``i`` in every tree where ``j`` is its parent: ``CLUSTER(j, i) - 1``.

    It does not depend on the root, which is why one packet received from ``j`` has a single
    forwarding set at ``i`` (Algorithm 2 line 19).
    """
    return _bitlen(i ^ j) - 1


@njit
def tree_depth(i, r):
    """Hop count from ``r`` to ``i`` in ``r``'s tree: one hop per bit where they differ."""
    return _popcount(i ^ r)


# --------------------------------------------------------------------------------------------
# Whole trees, for drawings, tests and table checks.
# --------------------------------------------------------------------------------------------


def _bfs_edges(r: int, children_of: Callable[[int, int | None], list[int]]) -> dict[int, list[int]]:
    """Adjacency ``{parent: ordered children}`` of the tree grown from ``r``, leaves omitted.

    ``children_of(node, parent)`` gets ``parent = None`` at the root.  Leaves are omitted so
    that the result reads like the edge lists printed in the specs.
    """
    edges: dict[int, list[int]] = {}
    queue: deque[tuple[int, int | None]] = deque([(r, None)])
    while queue:
        node, parent = queue.popleft()
        kids = children_of(node, parent)
        if kids:
            edges[node] = kids
            queue.extend((k, node) for k in kids)
    return edges


def tree_edges(r: int, d: int) -> dict[int, list[int]]:
    """Fault-free spanning tree of a broadcast from ``r`` in a ``d``-VCube, by the closed form."""
    return _bfs_edges(
        r, lambda node, _: [tree_child(node, r, k) for k in range(n_tree_children(node, r, d))]
    )


def topic_tree_edges(r: int, d: int, members: Collection[int] | None = None) -> dict[int, list[int]]:
    """VCube-PS tree of a publication by ``r`` when every node's view of the topic is ``members``.

    Each node applies ``children_topic`` with the height its parent implies
    (``CLUSTER(parent, node) - 1``, thesis A4:45/47); ``None`` is the topic ``'*'``.
    """
    return _bfs_edges(
        r,
        lambda node, parent: children_topic(
            node, d if parent is None else cluster(parent, node) - 1, members
        ),
    )
