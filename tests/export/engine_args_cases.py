#!/usr/bin/env python3
"""Runs check_engine_args.py on a hand-made corpus and states what it must say.

    engine_args_cases.py REF_DIR CASE_DIR            the checker must pass
    engine_args_cases.py REF_DIR CASE_DIR EXPECTED   the checker must fail and print every
                                                     line of EXPECTED (as a part of an error)
"""
import subprocess
import sys
from pathlib import Path

CHECKER = Path(__file__).with_name("check_engine_args.py")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    run = subprocess.run([sys.executable, str(CHECKER), sys.argv[1], sys.argv[2]],
                         capture_output=True, text=True)
    print(run.stdout, end="")
    print(run.stderr, end="", file=sys.stderr)
    if len(sys.argv) == 3:
        sys.exit(0 if run.returncode == 0 else f"engine_args_cases: the checker rejects {sys.argv[2]}")
    expected = [l for l in Path(sys.argv[3]).read_text().splitlines() if l.strip()]
    missing = [l for l in expected if l not in run.stderr]
    if run.returncode != 1:
        sys.exit(f"engine_args_cases: the checker exits {run.returncode} on {sys.argv[2]}, not 1")
    if missing:
        sys.exit("engine_args_cases: the checker does not report:\n  " + "\n  ".join(missing))
    print(f"engine_args_cases: all {len(expected)} expected errors reported")


if __name__ == "__main__":
    main()
