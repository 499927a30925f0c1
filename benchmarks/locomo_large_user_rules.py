"""LoCoMo recall if every user searched as a large one does: what the large-user rules of the BM25
leg would cost on natural text.

LoCoMo's users hold a few hundred memories, far below `PARALLEL_MIN_DOCS`, so the rules never run on
them, and no labelled set here is large enough to take them. This runs `mirix eval locomo` with
`PARALLEL_MIN_DOCS` at 0 (every user large, so searched in two parts: that alone ranks the same),
`NEAR_COMMON_SHARE` at GUARD and `LEFT_OUT_SHARE` at CUTOFF (1.0 turns a rule off), and passes the
rest of the command line to it:

    .venv/bin/python benchmarks/locomo_large_user_rules.py --cutoff 1.0  -- --data DATA --no-baselines --fresh --context 3 --out A
    .venv/bin/python benchmarks/locomo_large_user_rules.py --cutoff 0.05 -- --data DATA --no-baselines --fresh --context 3 --out B
"""

from __future__ import annotations

import argparse
import sys

import mirix_py.store.sqlite_fulltext as sqlite_fulltext


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--guard", type=float, default=1.0, help="NEAR_COMMON_SHARE for every user (default 1.0: off)")
    ap.add_argument("--cutoff", type=float, default=1.0, help="LEFT_OUT_SHARE for every user (default 1.0: off)")
    ap.add_argument("eval_args", nargs=argparse.REMAINDER, help="after --: the arguments of `mirix eval locomo`")
    args = ap.parse_args()
    sqlite_fulltext.PARALLEL_MIN_DOCS = 0
    sqlite_fulltext.NEAR_COMMON_SHARE = args.guard
    sqlite_fulltext.LEFT_OUT_SHARE = args.cutoff
    from mirix_py.cli.commands import app

    rest = [a for a in args.eval_args if a != "--"]
    print(f"every user large: NEAR_COMMON_SHARE {args.guard}, LEFT_OUT_SHARE {args.cutoff}", flush=True)
    app(["eval", "locomo", *rest], standalone_mode=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
