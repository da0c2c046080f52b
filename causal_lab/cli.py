"""The ``causal-lab`` command line: list experiments, run a sweep, print verdicts.

Every parameter problem is reported before any work starts, with exit code 2 and nothing
written (``ParameterError`` is raised while planning the sweep).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from causal_lab import catalog
from causal_lab.params import SCALES, ParameterError

EXIT_USAGE = 2


def _parse_sets(experiment, sets: list[str]) -> dict[str, list]:
    """``--set key=value[,value...]``: a value list sweeps that parameter."""
    overrides: dict[str, list] = {}
    for item in sets:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ParameterError(f"--set expects key=value, got {item!r}")
        param = experiment.param(key.strip())
        overrides[param.name] = [param.parse(v) for v in text.split(",")]
    return overrides


def cmd_list(args) -> int:
    found = catalog.experiments()
    for name in sorted(found):
        e = found[name]
        print(f"{name}: {e.description}  [{e.source}]")
        print(f"  replications: " + ", ".join(f"{s}={e.reps[s]}" for s in SCALES))
        for s in SCALES:
            products = e.products(s)
            for i, product in enumerate(products):
                union = f" (product {i + 1} of {len(products)})" if len(products) > 1 else ""
                for key, values in product.items():
                    print(f"  {s} sweeps {key} over {list(values)}{union}")
        for p in e.params:
            allowed = p.describe_allowed()
            print(f"  --set {p.name}=<{p.type.__name__}>  default {p.default!r}"
                  f"{'  (allowed: ' + allowed + ')' if allowed else ''}  {p.doc}")
    return 0


def cmd_run(args) -> int:
    from causal_lab import sweep

    experiment = catalog.get(args.experiment)
    overrides = _parse_sets(experiment, args.set or [])
    tasks = sweep.plan(experiment, args.scale, overrides, args.reps)  # validates everything
    print(f"{experiment.name}: {len(tasks)} replications at scale {args.scale}", file=sys.stderr)
    sweep.run_sweep(experiment, args.scale, overrides, args.reps, out=args.out)
    summary = sweep.summarize(experiment, out=args.out, tasks=tasks)
    swept = list(dict.fromkeys([*experiment.swept(args.scale), *overrides]))
    means = [c for c in summary.columns if c.endswith("_mean")]
    with pd.option_context("display.max_columns", None, "display.width", 200):
        print(summary[[*swept, "reps", *means]].to_string(index=False))
    return 0


def cmd_verdicts(args) -> int:
    from causal_lab import claims

    table = claims.load_verdicts(Path(args.dir) if args.dir else None)
    if args.totals:
        print(claims.totals(table).to_string())
    else:
        table.to_csv(sys.stdout, index=False)
    return 0


def cmd_soak(args) -> int:
    from causal_lab import soak

    if args.runs < 1:
        raise ParameterError(f"--runs must be >= 1, got {args.runs}")
    if args.jobs is not None and args.jobs < 1:
        raise ParameterError(f"--jobs must be >= 1, got {args.jobs}")
    if args.family is not None and args.family not in catalog.families():
        raise ParameterError(f"unknown family {args.family!r}; families: {', '.join(catalog.families())}")
    return soak.main(args.family, args.runs, args.jobs)


def cmd_cluster(args) -> int:
    from causal_lab import cluster

    if args.workers < 1 or args.cores < 1:
        raise ParameterError(f"--workers and --cores must be >= 1, got {args.workers}, {args.cores}")
    command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not command:
        raise ParameterError("no command to run; e.g. causal-lab cluster -- make figures SCALE=smoke")
    return cluster.run_on(command, args.workers, args.cores)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="causal-lab", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="experiments with their parameters and defaults").set_defaults(func=cmd_list)
    run = sub.add_parser("run", help="run a sweep, write Parquet, print a summary")
    run.add_argument("experiment")
    run.add_argument("--scale", default="default", choices=SCALES)
    run.add_argument("--set", action="append", metavar="KEY=VALUE[,VALUE...]",
                     help="override a parameter; a comma-separated list sweeps it")
    run.add_argument("--reps", type=int, help="replications per parameter point")
    run.add_argument("--out", help="result directory (default data/results/EXPERIMENT)")
    run.set_defaults(func=cmd_run)
    verdicts = sub.add_parser("verdicts", help="print every verdict row as CSV")
    verdicts.add_argument("--dir", help="verdict directory (default data/verdicts)")
    verdicts.add_argument("--totals", action="store_true",
                          help="per notebook: paper PASS / DEVIATES / NOT_RUN, report and sanity rows")
    verdicts.set_defaults(func=cmd_verdicts)
    soak = sub.add_parser("soak", help="random small configurations of every protocol, each verified; "
                                       "exit 1 on any violation")
    soak.add_argument("family", nargs="?", help="one family (default: all)")
    soak.add_argument("--runs", type=int, default=1000, help="runs per protocol (default 1000)")
    soak.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    soak.set_defaults(func=cmd_soak)
    clus = sub.add_parser("cluster", help="run a command against a fresh local Spark standalone cluster "
                                          "(SPARK_MASTER set), e.g. -- make figures SCALE=smoke")
    clus.add_argument("--workers", type=int, default=2, help="worker daemons (default 2)")
    clus.add_argument("--cores", type=int, default=1, help="cores per worker (default 1)")
    clus.add_argument("cmd", nargs=argparse.REMAINDER, help="-- the command and its arguments")
    clus.set_defaults(func=cmd_cluster)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ParameterError as error:
        print(f"causal-lab: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
