#!/usr/bin/env python3
"""Times exact and the Pareto front on the 1.6 T scenario, this build against an older one,
and writes the table into docs/choices.md (block "speed-targets"). The front itself (block
"pareto-output") is scripts/choices_examples.py's, which needs no older build.

    scripts/speed_table.py build/app/shardlab-cli OLD/build/app/shardlab-cli 9c5b491 [--runs 3]

Each command runs RUNS times per build, the two builds alternately (new, old, new, old, ...)
so that a drift of the machine's speed hits both alike; one unmeasured warm-up run each
first. Wall time is a monotonic clock around the child; CPU time is the child's user +
system time from the operating system (resource.getrusage). The table quotes medians with
the range. Run it on a quiet machine: the targets are wall times on 2 cores.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_block import write_block  # noqa: E402

SCENARIO = "moe-1.6t-1024gpu"
COMMANDS = [
    ("search --algo exact", ["search", "--scenario", SCENARIO, "--algo", "exact"], "1 s"),
    ("pareto", ["pareto", "--scenario", SCENARIO, "--quiet"], "5 s"),
]


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    code = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if code != 0:
        sys.exit(f"speed_table: {' '.join(cmd)} exited {code}")
    return wall, cpu


def result_words(cli, args):
    """What the command answered, from its JSON: the optimum, or the front's size and SLO end."""
    out = subprocess.run([cli] + args + ["--json"], capture_output=True, text=True)
    try:
        j = json.loads(out.stdout)
    except json.JSONDecodeError:
        return "(no JSON output)"
    if "points" in j:
        pts = j["points"]
        slo = max((p["output_tokens_per_s_per_gpu"] for p in pts), default=0)
        return f"{len(pts)} points, {slo:.1f} tokens/s per GPU at the SLO"
    ev = j.get("evaluation", {})
    return f"{ev.get('output_tokens_per_s_per_gpu', 0):.1f} tokens/s per GPU"


def span(xs):
    return f"{statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("new_cli")
    ap.add_argument("old_cli")
    ap.add_argument("old_label")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--doc", default="docs/choices.md")
    a = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    rows = ["| command | target | build | wall, median (range) | CPU, median | answer |", "|---|---|---|---|---|---|"]
    for label, args, target in COMMANDS:
        times = {"new": [], "old": []}
        for cli in (a.new_cli, a.old_cli):
            timed([cli] + args)  # warm-up: page cache, dynamic linking
        for _ in range(a.runs):
            times["new"].append(timed([a.new_cli] + args))
            times["old"].append(timed([a.old_cli] + args))
        for key, cli, name in (("new", a.new_cli, commit), ("old", a.old_cli, a.old_label)):
            walls = [w for w, _ in times[key]]
            cpus = [c for _, c in times[key]]
            rows.append(f"| `{label}` | {target} | {name} | {span(walls)} | {statistics.median(cpus):.2f} s | "
                        f"{result_words(cli, args)} |")
            print(rows[-1], flush=True)
    load = os.getloadavg()[0]
    body = "\n".join(rows) + (f"\n\n{a.runs} runs per build, alternately; load average {load:.2f} when it ended. "
                              f"Commands: `shardlab-cli search --scenario {SCENARIO} --algo exact` and "
                              f"`shardlab-cli pareto --scenario {SCENARIO} --quiet`.\n")
    write_block(a.doc, "speed-targets", "scripts/speed_table.py", body)


if __name__ == "__main__":
    main()
