#!/usr/bin/env python3
"""Peak resident memory of `shardlab-cli search` against its budget, for docs/memory.md.

Runs each (algorithm, budget) on the 1.6 T-parameter MoE scenario under /usr/bin/time -v
and writes the table with when, from which commit and on which machine it was measured.

    scripts/memory_table.py [BUILD_DIR] [--quick]

--quick measures the small budgets only (a minute instead of ~15).
"""
import datetime, json, os, platform, re, subprocess, sys

build = next((a for a in sys.argv[1:] if not a.startswith("--")), "build")
quick = "--quick" in sys.argv
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


def provenance():
    git = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True).stdout.strip()
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
    return (f"_Measured {datetime.date.today().isoformat()} at commit {git('rev-parse', '--short', 'HEAD')}{dirty}"
            f" on {platform.node() or 'an unnamed machine'} ({platform.machine()}, {os.cpu_count()} cores,"
            f" {int(mem) // 1024 // 1024} GB; load average {os.getloadavg()[0]:.1f} at the start)"
            f" by `scripts/memory_table.py`._\n")


lines = ["# Peak memory of a search", "", provenance(),
         f"`/usr/bin/time -v shardlab-cli search --scenario {scenario} --algo A --budget N --seed 0 --json`,",
         "\"Maximum resident set size\"; Release build. The CLI does not link LibTorch: ppo loads",
         "the RL plugin (and LibTorch with it) when it runs, so only its row carries LibTorch.", "",
         "| algorithm | budget | calls made | peak RSS | wall time | note |", "|---|---|---|---|---|---|"]
for algo, budget in rows:
    r = measure(algo, budget)
    note = r["error"] or r["stop"] or ("exit %d" % r["rc"] if r["rc"] else "")
    calls = f"{r['calls']:,}" if isinstance(r["calls"], int) else "—"
    lines.append(f"| {algo} | {budget:,} | {calls} | {r['rss_mb']:.0f} MB | {r['wall']} | {note} |")
    print(lines[-1], file=sys.stderr)
doc = os.path.join("docs", "memory.md")
open(doc, "w").write("\n".join(lines) + "\n")
print(f"wrote {doc}")
