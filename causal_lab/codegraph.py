"""Which ``causal_lab`` modules a piece of code imports, directly or through others.

Two things need it: the sweep's result cache, whose keys include a fingerprint of the code a
replication runs (``causal_lab.sweep.code_fingerprint``), and the Makefile's per-notebook rules,
which re-run a notebook when a module it uses changes (``causal_lab.figures --deps``).  The import
statements are read from the source (``ast``), so nothing is executed to find them.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def _is_module(name: str) -> bool:
    """Whether ``name`` is an importable module (``from a.b import c``: c may be a name in b)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _imported_names(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return [n for n in names if n.split(".")[0] == PACKAGE.name]


def imported_files(source: Path | ast.AST) -> set[Path]:
    """The files of the ``causal_lab`` modules that ``source`` (a file, or parsed code) imports,
    directly or not; a file includes itself."""
    seen: set[Path] = set()
    todo: list[Path] = []
    if isinstance(source, ast.AST):
        names = _imported_names(source)
    else:
        todo.append(Path(source).resolve())
        names = []
    while True:
        for name in names:
            if _is_module(name):
                spec = importlib.util.find_spec(name)
                if spec.origin:
                    todo.append(Path(spec.origin).resolve())
        if not todo:
            return seen
        current = todo.pop()
        if current in seen:
            names = []
            continue
        seen.add(current)
        names = _imported_names(ast.parse(current.read_text(), str(current)))


def fingerprint(files) -> str:
    """64 bits of SHA-256 over the files' package-relative names and contents."""
    digest = hashlib.sha256()
    for f in sorted(files):
        name = f.relative_to(PACKAGE).as_posix() if PACKAGE in f.parents else f.name
        digest.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
