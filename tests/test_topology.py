"""VCube topology against the worked examples of the texts and against its own closed form.

Worked examples: vcube_causal_aggregation.md §1 and vcube_ps.md §1.2-1.4 (seed 000 §2, §4.2;
thesis 003 §2.4, §2.4.1, §5.5.1, Figures 2.6-2.8, 5.2, 5.4).
"""

from __future__ import annotations

import math
import random
from collections import Counter

import numba
import pytest

from causal_lab.topology.vcube import (
    children,
    children_after,
    children_calls,
    children_topic,
    cluster,
    cluster_list,
    first_child,
    is_tree_child,
    n_tree_children,
    topic_tree_edges,
    tree_child,
    tree_depth,
    tree_edges,
    tree_parent,
)

# Thesis Figure 2.6 (= seed 000 Figure 3): row s, column i holds the ordered list c(i, s).
FIGURE_2_6 = """
1 | 1       | 0       | 3       | 2       | 5       | 4       | 7       | 6
2 | 2 3     | 3 2     | 0 1     | 1 0     | 6 7     | 7 6     | 4 5     | 5 4
3 | 4 5 6 7 | 5 4 7 6 | 6 7 4 5 | 7 6 5 4 | 0 1 2 3 | 1 0 3 2 | 2 3 0 1 | 3 2 1 0
"""


def _published_clusters() -> dict[tuple[int, int], list[int]]:
    table = {}
    for row in FIGURE_2_6.strip().splitlines():
        s, *cells = (cell.strip() for cell in row.split("|"))
        for i, cell in enumerate(cells):
            table[int(s), i] = [int(k) for k in cell.split()]
    return table


def _reference_tree(r: int, d: int, faulty=frozenset()) -> dict[int, list[int]]:
    """Every correct node asks Algorithm 1 for its own children; leaves omitted."""
    nodes = (i for i in range(1 << d) if i not in faulty)
    return {i: kids for i in nodes if (kids := children(i, r, d, faulty))}


def _depths(r: int, edges: dict[int, list[int]]) -> dict[int, int]:
    """Depth of every node reachable from r, counted along the edges (not by tree_depth)."""
    depth, frontier = {r: 0}, [r]
    while frontier:
        parent = frontier.pop()
        for k in edges.get(parent, []):
            assert k not in depth, f"node {k} reached twice"
            depth[k] = depth[parent] + 1
            frontier.append(k)
    return depth


def _closed_form_children(i: int, r: int, d: int) -> list[int]:
    return [tree_child(i, r, k) for k in range(n_tree_children(i, r, d))]


# ------------------------------------------------------------------ §1.1 clusters c(i, s)


@pytest.mark.parametrize(("s", "i"), sorted(_published_clusters()))
def test_cluster_list_matches_figure_2_6(s, i):
    assert cluster_list(i, s) == _published_clusters()[s, i]


@pytest.mark.parametrize("d", range(1, 8))
def test_cluster_list_properties(d):
    n = 1 << d
    for i in range(n):
        lists = [cluster_list(i, s) for s in range(1, d + 1)]
        for s, c in enumerate(lists, start=1):
            assert len(c) == 2 ** (s - 1)
            assert c[0] == i ^ 2 ** (s - 1)
            assert set(c) == {j for j in range(n) if (i ^ j).bit_length() == s}
            assert c == [i ^ y for y in range(2 ** (s - 1), 2**s)]  # vcube_ps §1.2 closed form
        members = [k for c in lists for k in c]
        assert sorted(members) == [j for j in range(n) if j != i]  # a partition of the others


def test_cluster_list_translates_by_xor():
    for r in range(16):
        for i in range(16):
            for s in range(1, 5):
                assert cluster_list(i ^ r, s) == [k ^ r for k in cluster_list(i, s)]


def test_cluster_list_rejects_cluster_zero():
    with pytest.raises(ValueError):
        cluster_list(0, 0)


# ------------------------------------------------------------------ §1.2 FIRSTCHILD


@pytest.mark.parametrize(
    ("i", "s", "expected"), [(0, 1, 1), (1, 2, 3), (1, 3, 5), (7, 2, 5), (4, 1, 5)]
)
def test_first_child_fault_free(i, s, expected):
    assert first_child(i, s) == expected


@pytest.mark.parametrize(("i", "s", "expected"), [(1, 3, 4), (7, 2, 4), (4, 1, None)])
def test_first_child_with_node_5_faulty(i, s, expected):
    assert first_child(i, s, faulty={5}) == expected


def test_first_child_is_none_only_when_whole_cluster_is_faulty():
    assert first_child(0, 3, faulty={4, 5, 6}) == 7
    assert first_child(0, 3, faulty={4, 5, 6, 7}) is None


# ------------------------------------------------------------------ §1.3 CLUSTER


@pytest.mark.parametrize(
    ("j", "expected"), [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 3), (7, 3)]
)
def test_cluster_vectors(j, expected):
    assert cluster(0, j) == expected


def test_cluster_is_the_index_of_the_list_holding_j_and_is_symmetric():
    d = 5
    for i in range(1 << d):
        for s in range(1, d + 1):
            for j in cluster_list(i, s):
                assert cluster(i, j) == s == cluster(j, i)


def test_cluster_of_a_node_with_itself_is_an_error():
    with pytest.raises(ValueError):
        cluster(3, 3)


# ------------------------------------------------------------------ §1.4 CHILDREN (Algorithm 1)

# (node j, h, expected): j evaluates CHILDREN(j, h) on receiving m0 in the tree of 0 (Figure 2.8(a)).
TREE_0_CALLS = [(0, 3, [1, 2, 4]), (1, 0, []), (2, 1, [3]), (4, 2, [5, 6]), (5, 0, []),
                (6, 1, [7]), (7, 0, [])]  # fmt: skip


@pytest.mark.parametrize(("j", "h", "expected"), TREE_0_CALLS)
def test_children_as_called_by_the_receiver(j, h, expected):
    assert children(j, j, h) == expected
    assert children(j, 0, 3) == expected  # same answer when j searches itself in 0's tree


def test_recursion_chain_of_node_4_in_the_tree_of_2():
    assert children_calls(4, 2, 3) == [(2, 3), (6, 2), (4, 1)]
    assert children(4, 2, 3) == [5]


def test_guard_is_one_le_s_le_h():
    """The listing's `1 < s <= h` would drop cluster 1: CHILDREN(4, 1) must be {5}, not empty."""
    assert children(4, 4, 1) == [5]
    assert children(0, 0, 3)[0] == 1


def test_faulty_node_has_no_children_list():
    with pytest.raises(ValueError):
        children(2, 0, 3, faulty={2})


FULL_TREES_N8 = {  # vcube_ps.md §1.3 (prototype); roots 0, 1, 2 also in vcube_causal_aggregation.md §1.4
    0: {0: [1, 2, 4], 2: [3], 4: [5, 6], 6: [7]},
    1: {1: [0, 3, 5], 3: [2], 5: [4, 7], 7: [6]},
    2: {2: [3, 0, 6], 0: [1], 6: [7, 4], 4: [5]},
    3: {3: [2, 1, 7], 1: [0], 7: [6, 5], 5: [4]},
    4: {4: [5, 6, 0], 0: [1, 2], 2: [3], 6: [7]},
    5: {5: [4, 7, 1], 1: [0, 3], 3: [2], 7: [6]},
    6: {6: [7, 4, 2], 2: [3, 0], 0: [1], 4: [5]},
    7: {7: [6, 5, 3], 3: [2, 1], 1: [0], 5: [4]},
}


@pytest.mark.parametrize("r", sorted(FULL_TREES_N8))
def test_full_trees_n8(r):
    assert _reference_tree(r, 3) == FULL_TREES_N8[r]
    assert tree_edges(r, 3) == FULL_TREES_N8[r]


def test_node_5_is_the_parent_of_4_in_the_tree_of_1():
    assert tree_parent(4, 1) == 5  # seed 000 §4.3
    assert not is_tree_child(4, 5, 1)


def test_fault_aware_tree_figure_2_8_b():
    faulty = {2, 4, 6}
    assert children(0, 0, 3, faulty) == [1, 3, 5]
    assert children(3, 3, 1, faulty) == []
    assert children(5, 5, 2, faulty) == [7]
    assert _reference_tree(0, 3, faulty) == {0: [1, 3, 5], 5: [7]}


# ------------------------------------------------------------------ vcube_ps §1.4 topic-aware CHILDREN

T1 = {0, 3, 4}
T2 = {0, 2, 3, 5, 7}


@pytest.mark.parametrize(
    ("i", "h", "members", "expected"),
    [
        # T5 (thesis §5.5.1)
        (0, 3, None, [1, 2, 4]),
        (0, 2, None, [1, 2]),
        (4, 2, None, [5, 6]),
        (0, 3, T1, [3, 4]),
        (4, 2, T1, []),
        # T6 (Figure 5.4 left: every node subscribes)
        (0, 3, set(range(8)), [1, 2, 4]),
        (1, 0, set(range(8)), []),
        (2, 1, set(range(8)), [3]),
        (3, 0, set(range(8)), []),
        (4, 2, set(range(8)), [5, 6]),
        (6, 1, set(range(8)), [7]),
        # T7 (Figure 5.4 right)
        (2, 3, T2, [3, 0, 7]),
        (3, 0, T2, []),
        (0, 1, T2, []),
        (7, 2, T2, [5]),
        (5, 1, T2, []),
    ],
)
def test_children_topic_vectors(i, h, members, expected):
    assert children_topic(i, h, members) == expected


@pytest.mark.parametrize(
    ("root", "members", "expected"),
    [
        (0, set(range(8)), {0: [1, 2, 4], 2: [3], 4: [5, 6], 6: [7]}),  # T6
        (2, T2, {2: [3, 0, 7], 7: [5]}),  # T7
        (0, {0, 1, 3, 5, 6}, {0: [1, 3, 5], 5: [6]}),  # T8, VCube-PS tree
    ],
)
def test_topic_trees(root, members, expected):
    assert topic_tree_edges(root, 3, members) == expected


def test_srpt_tree_of_figure_5_2_is_the_pruned_binomial_tree():
    """T8: pruning member-free subtrees of the full tree of 0 leaves relays 2 and 4."""
    members = {0, 1, 3, 5, 6}
    full = tree_edges(0, 3)

    def keeps(node):
        return node in members or any(keeps(k) for k in full.get(node, []))

    pruned = {p: kept for p, kids in full.items() if (kept := [k for k in kids if keeps(k)])}
    assert pruned == {0: [1, 2, 4], 2: [3], 4: [5, 6]}
    assert {k for kids in pruned.values() for k in kids} - members == {2, 4}


def test_topic_star_is_the_fault_free_tree():
    for d in range(1, 7):
        for r in range(1 << d):
            assert topic_tree_edges(r, d) == tree_edges(r, d)


def test_non_members_play_the_faulty_nodes():
    rng = random.Random(5)
    n = 32
    for _ in range(300):
        i, h = rng.randrange(n), rng.randrange(6)
        members = {k for k in range(n) if rng.random() < 0.4}
        faulty = set(range(n)) - members - {i}
        assert children_topic(i, h, members) == children(i, i, h, faulty)


@pytest.mark.parametrize("d", range(1, 7))
def test_topic_tree_spans_exactly_the_members(d):
    """Coverage property of vcube_ps §1.4: no relay, each member reached once."""
    n = 1 << d
    rng = random.Random(d)
    for _ in range(40):
        members = set(rng.sample(range(n), rng.randint(1, n)))
        root = rng.choice(sorted(members))
        edges = topic_tree_edges(root, d, members)
        reached = set(_depths(root, edges))
        assert reached == members
        assert sum(map(len, edges.values())) == len(members) - 1


# ------------------------------------------------------------------ closed form == recursion


@pytest.mark.parametrize("d", range(1, 7))
def test_closed_form_matches_algorithm_1(d):
    n = 1 << d
    for r in range(n):
        for i in range(n):
            calls = children_calls(i, r, d)
            kids = children(i, r, d)
            assert _closed_form_children(i, r, d) == kids
            assert tree_depth(i, r) == len(calls) - 1
            assert tree_parent(i, r) == (calls[-2][0] if i != r else -1)
            if i != r:
                assert children_after(i, tree_parent(i, r)) == len(kids)
            assert [k for k in range(n) if is_tree_child(i, k, r)] == sorted(kids)


def test_children_after_ignores_the_root():
    """A node's children depend only on its parent: the same list in every tree with that parent."""
    d, n = 5, 32
    for i in range(n):
        for j in (i ^ (1 << t) for t in range(d)):  # a parent is always a hypercube neighbour
            lists = {tuple(children(i, r, d)) for r in range(n) if tree_parent(i, r) == j}
            assert lists == {tuple(children(i, i, cluster(j, i) - 1))}
            assert children_after(i, j) == cluster(j, i) - 1


def test_trees_translate_by_xor():
    for d in range(1, 7):
        base = tree_edges(0, d)
        for r in range(1 << d):
            assert tree_edges(r, d) == {p ^ r: [k ^ r for k in kids] for p, kids in base.items()}


def test_subtree_of_a_child_is_its_sub_cube():
    """vcube_ps §1.4: the child chosen in cluster s covers {x : x xor k < 2^(s-1)}."""
    d, n = 5, 32
    for r in range(n):
        edges = tree_edges(r, d)
        for k in range(n):
            if k == r:
                continue
            below = set(_depths(k, edges))
            assert below == {x for x in range(n) if x ^ k < 2 ** n_tree_children(k, r, d)}


# ------------------------------------------------------------------ full-tree properties, d = 1..10

MEAN_DEPTH_PRINTED = {3: 1.714, 4: 2.133, 5: 2.581, 6: 3.048, 7: 3.528, 8: 4.016, 9: 4.509, 10: 5.005}


@pytest.mark.parametrize("d", range(1, 11))
def test_binomial_tree_properties(d):
    n = 1 << d
    for r in sorted({0, n - 1, n // 3, 0b1010101010 % n}):
        edges = tree_edges(r, d)
        depth = _depths(r, edges)
        assert sorted(depth) == list(range(n))  # spans every node
        assert sum(map(len, edges.values())) == n - 1
        assert len(edges[r]) == d
        assert max(depth.values()) == d
        assert Counter(depth.values()) == {k: math.comb(d, k) for k in range(d + 1)}
        assert all(tree_depth(i, r) == depth[i] for i in range(n))
        assert all(tree_parent(k, r) == p for p, kids in edges.items() for k in kids)
        mean_depth = sum(depth.values()) / (n - 1)
        assert mean_depth == pytest.approx(d * 2 ** (d - 1) / (2**d - 1))
        if d in MEAN_DEPTH_PRINTED:
            assert round(mean_depth, 3) == MEAN_DEPTH_PRINTED[d]


# ------------------------------------------------------------------ usable inside other kernels


def test_closed_forms_compile_inside_njit_kernels():
    @numba.njit
    def total_depth_and_fanout(r, d):
        depth_sum, edges = 0, 0
        for i in range(1 << d):
            depth_sum += tree_depth(i, r)
            for k in range(n_tree_children(i, r, d)):
                c = tree_child(i, r, k)
                if is_tree_child(i, c, r) and tree_parent(c, r) == i:
                    edges += 1
            if i != r:
                edges -= children_after(i, tree_parent(i, r)) - n_tree_children(i, r, d)
        return depth_sum, edges

    assert total_depth_and_fanout(5, 6) == (6 * 2**5, 63)
