"""``make figures``: execute every notebook with papermill at one scale.

Each notebook runs into ``papermill_runs/<name>.ipynb`` (written to a temporary file first, so an
interrupted batch never leaves a half-written notebook behind) with ``scale`` injected as a
parameter.  Notebooks write their own images and verdict rows.  Smoke runs go to ``build/smoke``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

import nbformat
import papermill
from tqdm import tqdm

from causal_lab import paths
from causal_lab.experiments.base import SCALES


def notebooks(pattern: str = "*.ipynb") -> list[Path]:
    return sorted((paths.repo_root() / "notebooks").glob(pattern))


def output_dir(scale: str) -> Path:
    root = paths.repo_root() / "build" / "smoke" if scale == "smoke" else paths.repo_root()
    folder = root / "papermill_runs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _relative_paths(executed: Path, source: Path, target: Path) -> None:
    """Record repository-relative paths in papermill's metadata: committed outputs must not
    depend on where the checkout lives (papermill stores the absolute paths it was given)."""
    book = nbformat.read(executed, as_version=4)
    root = paths.repo_root()
    book.metadata.papermill["input_path"] = source.relative_to(root).as_posix()
    book.metadata.papermill["output_path"] = target.relative_to(root).as_posix()
    nbformat.write(book, executed)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run(scale: str, pattern: str = "*.ipynb") -> list[tuple[str, float, str]]:
    """Run the notebooks; return (name, seconds, error or '') per notebook."""
    signal.signal(signal.SIGTERM, _interrupt)  # a terminated batch cleans up like Ctrl-C
    outcomes = []
    out_dir = output_dir(scale)
    for stale in out_dir.glob(".*.tmp.ipynb"):
        stale.unlink()
    for nb in tqdm(notebooks(pattern), desc=f"notebooks ({scale})", unit="nb"):
        target = out_dir / nb.name
        tmp = target.with_name(f".{nb.stem}.tmp.ipynb")
        started = time.perf_counter()
        try:
            papermill.execute_notebook(
                str(nb), str(tmp), parameters={"scale": scale}, kernel_name="python3",
                cwd=str(nb.parent), progress_bar=False,
            )
            _relative_paths(tmp, nb, target)
            os.replace(tmp, target)
            error = ""
        except papermill.PapermillExecutionError as exc:
            error = f"{exc.ename}: {exc.evalue}"
        finally:
            tmp.unlink(missing_ok=True)
        outcomes.append((nb.name, time.perf_counter() - started, error))
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="default", choices=SCALES)
    parser.add_argument("--only", default="*.ipynb", help="glob of notebooks to run")
    args = parser.parse_args(argv)
    outcomes = run(args.scale, args.only)
    for name, seconds, error in outcomes:
        print(f"{name:40s} {seconds:8.1f} s  {'FAILED: ' + error if error else 'ok'}")
    print(f"total {sum(s for _, s, _ in outcomes):.1f} s")
    return 1 if any(error for *_, error in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
