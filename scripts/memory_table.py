#!/usr/bin/env python3
"""Peak resident memory of `shardlab-cli search` against its budget, for docs/memory.md.

Runs each (algorithm, budget) on the 1.6 T-parameter MoE scenario under /usr/bin/time -v
and writes the table between the "<!-- memory-table -->" markers of the doc, stamped with
when, from which commit and on which machine it was measured.

    scripts/memory_table.py [BUILD_DIR] [--quick] [--doc DOC]

--quick measures the small budgets only (a minute instead of ~15). DOC defaults to the
repository's docs/memory.md. A build without the RL library has no ppo: its row then says
so instead of a measurement.
"""
import argparse, json, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_block import write_block  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build", nargs="?", default="build")
ap.add_argument("--quick", action="store_true")
ap.add_argument("--doc", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "memory.md"))
args = ap.parse_args()
build, quick = args.build, args.quick
cli = os.path.join(build, "app", "shardlab-cli")
scenario = "moe-1.6t-1024gpu"
rows = [("random", 100), ("random", 200_000), ("random", 2_000_000), ("random", 20_000_000),
        ("anneal", 200_000), ("anneal", 2_000_000), ("anneal", 20_000_000),
        ("genetic", 2_000_000), ("ppo", 20_000)]
if quick:
    rows = [r for r in rows if r[1] <= 200_000]


def measure(algo, budget):
    cmd = ["/usr/bin/time", "-v", cli, "search", "--scenario", scenario, "--algo", algo,
           "--budget", str(budget), "--seed", "0", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", p.stderr).group(1)
    out = json.loads(p.stdout) if p.stdout.strip() else {}
    return {"rss_mb": rss / 1024, "wall": wall, "calls": out.get("calls"), "stop": out.get("stop_reason", ""),
            "rc": p.returncode, "error": out.get("error", "")}


def has_ppo():
    """Whether this build's search registry lists ppo (built with the RL library)."""
    return " ppo " in subprocess.run([cli, "--help"], capture_output=True, text=True).stdout


mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "0")
lines = [f"{int(mem) // 1024 // 1024} GB of memory; load average {os.getloadavg()[0]:.1f} at the start.", "",
         f"`/usr/bin/time -v shardlab-cli search --scenario {scenario} --algo A --budget N --seed 0 --json`,",
         "\"Maximum resident set size\"; Release build. The CLI does not link LibTorch: ppo loads",
         "the RL plugin (and LibTorch with it) when it runs, so only its row carries LibTorch.", "",
         "| algorithm | budget | calls made | peak RSS | wall time | note |", "|---|---|---|---|---|---|"]
ppo = has_ppo()
for algo, budget in rows:
    if algo == "ppo" and not ppo:
        lines.append(f"| {algo} | {budget:,} | — | — | — | not measured: this build has no ppo (SHARDLAB_BUILD_RL=OFF) |")
        print(lines[-1], file=sys.stderr)
        continue
    r = measure(algo, budget)
    note = r["error"] or r["stop"] or ("exit %d" % r["rc"] if r["rc"] else "")
    calls = f"{r['calls']:,}" if isinstance(r["calls"], int) else "—"
    lines.append(f"| {algo} | {budget:,} | {calls} | {r['rss_mb']:.0f} MB | {r['wall']} | {note} |")
    print(lines[-1], file=sys.stderr)
write_block(args.doc, "memory-table", "scripts/memory_table.py", "\n".join(lines) + "\n")
print(f"wrote {args.doc}")
