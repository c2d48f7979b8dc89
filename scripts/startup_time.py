#!/usr/bin/env python3
"""Start-up time of a command: runs it N times, prints the minimum and the median wall time.

    scripts/startup_time.py 50 build/app/shardlab-cli presets

The machine is usually shared with other builds: compare minima, interleave old and new
binaries, and say the load average (docs/benchmarks.md, "Start-up").
"""
import statistics
import subprocess
import sys
import time

if len(sys.argv) < 3:
    sys.exit("usage: startup_time.py N COMMAND [ARGS...]")
n = int(sys.argv[1])
cmd = sys.argv[2:]
times = []
code = 0
for _ in range(n):
    t0 = time.perf_counter()
    code = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    times.append((time.perf_counter() - t0) * 1000)
times.sort()
print(f"min {times[0]:.1f} ms  median {statistics.median(times):.1f} ms  (n={n}, exit {code})  {' '.join(cmd)}")
