"""The VCube topology of seed 000 §2, §4.2 and thesis 003 §2.4, §2.4.1: the cluster table
(000 Figure 3 = 003 Figure 2.6) and the spanning trees of Algorithm 1 (000 Figure 4 = 003
Figures 2.7-2.8), computed with the reference functions of ``causal_lab.topology.vcube``
(notebook ``00_vcube``).

Nothing here is simulated or random: every claim is an exact comparison of our computed lists
with the ones the texts print, at every scale.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from causal_lab import claims
from causal_lab.claims import Measured
from causal_lab.topology.vcube import children, children_calls, cluster_list, tree_edges

NOTEBOOK = "00_vcube"
FIGURE = "00_vcube_trees"  # the figure's file name (kept from before the notebook was thinned)
PAPER_D = 3  # every published example is a 3-VCube (N = 8)
FAULTY = frozenset({2, 4, 6})  # the faulty nodes of thesis Figure 2.8(b)


def cluster_cells(dim: int) -> dict[tuple[int, int], str]:
    """{(s, i): c(i, s)} written as in the printed table, space-separated in order (the order
    matters: a node's child in cluster s is the first correct node of that list)."""
    return {(s, i): " ".join(map(str, cluster_list(i, s)))
            for s in range(1, dim + 1) for i in range(2**dim)}


def cluster_table(dim: int) -> pd.DataFrame:
    """The cluster table of a ``dim``-VCube laid out like the texts: row s, column i."""
    return pd.Series(cluster_cells(dim)).rename_axis(["s", "i"]).unstack("i")


def differing_cells() -> tuple[int, list[tuple[int, int]]]:
    """Cells compared with the published table of the 3-VCube, and the (s, i) that differ."""
    published = claims.table("000_figure3_clusters").astype({"c_is": str})
    theirs = dict(zip(zip(published["s"], published["i"]), published["c_is"]))
    ours = cluster_cells(PAPER_D)
    return len(theirs), sorted(k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k))


def fmt_edges(edges: dict[int, list[int]]) -> str:
    """A tree as the texts and the spec print it: ``parent→[children]; ...`` (leaves omitted)."""
    return "; ".join(f"{p}→[{','.join(map(str, kids))}]" for p, kids in edges.items())


def fmt_calls(i: int, r: int, h: int) -> str:
    """The CHILDREN recursion node ``i`` runs in the tree of ``r``, and its answer."""
    chain = " → ".join(f"CHILDREN({root},{height})" for root, height in children_calls(i, r, h))
    return f"{chain} = {{{','.join(map(str, children(i, r, h)))}}}"


def faulty_tree(root: int, d: int, faulty=FAULTY) -> dict[int, list[int]]:
    """Edges of ``root``'s tree when ``faulty`` nodes are down (reference recursion, leaves omitted)."""
    return {i: kids for i in range(2**d) if i not in faulty and (kids := children(i, root, d, faulty))}


def _layered_positions(root: int, edges: dict[int, list[int]]) -> dict[int, tuple[float, int]]:
    """Leaves placed left to right in sending order, parents centred above their children."""
    pos: dict[int, tuple[float, int]] = {}
    next_leaf = 0

    def place(node: int, depth: int) -> None:
        nonlocal next_leaf
        kids = edges.get(node, [])
        for k in kids:
            place(k, depth + 1)
        if kids:
            x = (pos[kids[0]][0] + pos[kids[-1]][0]) / 2
        else:
            x, next_leaf = next_leaf, next_leaf + 1
        pos[node] = (x, -depth)

    place(root, 0)
    return pos


def _draw_tree(ax, root: int, d: int) -> None:
    edges = tree_edges(root, d)
    pos = _layered_positions(root, edges)
    for parent, kids in edges.items():
        for k in kids:
            ax.plot(*zip(pos[parent], pos[k]), color="0.45", lw=1, zorder=1)
    for node, (x, y) in pos.items():
        ax.text(x, y, str(node), ha="center", va="center", zorder=2,
                bbox=dict(boxstyle="circle", facecolor="white" if node != root else "0.85"))
    height = -min(y for _, y in pos.values())
    ax.set_yticks([-k for k in range(height + 1)], labels=range(height + 1))
    ax.set_ylabel("depth")
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_title(f"tree rooted at {root} ({2**d}-node VCube)")


def plot(d: int, roots=(0, 2)):
    """The fault-free trees of ``roots`` in a ``d``-VCube, children left to right in sending
    order (ascending cluster), depth downwards."""
    fig, axes = plt.subplots(1, len(roots), figsize=(max(8.0, min(40.0, 1.2 * 2**d)), 1.2 + 0.9 * d))
    for ax, root in zip(axes, roots):
        _draw_tree(ax, root, d)
    fig.tight_layout()
    return fig


def measure() -> dict[str, Measured]:
    """Every claim of the notebook: the 3-VCube's clusters and trees against the texts (the
    paper and the thesis print the same things, so each comparison backs one row per text)."""
    _, differing = differing_cells()
    clusters = Measured(not differing, f"{len(differing)} cells differ: {differing}" if differing else "identical")
    tree_0, chain = fmt_edges(tree_edges(0, PAPER_D)), fmt_calls(4, 2, PAPER_D)
    return {
        "000-F3-clusters": clusters,
        "003-F2.6-clusters": clusters,
        "000-F4L-tree0": Measured(tree_0),
        "003-F2.8a-tree0": Measured(tree_0),
        "000-F4R-node4-chain": Measured(chain),
        "003-F2.7-node4-chain": Measured(chain),
        "003-F2.8c-tree2": Measured(fmt_edges(tree_edges(2, PAPER_D))),
        "003-F2.8b-tree0-faulty": Measured(fmt_edges(faulty_tree(0, PAPER_D))),
    }
