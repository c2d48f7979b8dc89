#!/usr/bin/env python3
"""Regenerates every generated figure of README.md and docs/ with one build: runs each
generator of scripts/ with the arguments that produce the shipped blocks, one after another.

    scripts/regenerate_docs.py build/app/shardlab-cli [--root DIR] [--only A,B] [--skip A,B]
                               [--old-cli OLD/build/app/shardlab-cli --old-label COMMIT] [--list]

--root writes the docs under DIR (a copy of the repository's README.md and docs/) instead of
the repository's own; scripts/check_doc_figures.py uses it. The generators are independent of
each other (each reads the CLI and resources/ and writes only its own blocks), so the order is
simply cheapest first. Some cannot run everywhere, and then are skipped with the reason, never
silently:
  - ppo-eval-*, search-under-load: need the ppo algorithm (a build with SHARDLAB_BUILD_RL=ON);
  - speed-targets: times this build against an older one (--old-cli, --old-label);
  - memory-table: about 15 minutes (anneal at 2*10^7 calls); give --only memory-table or
    leave it out with --skip memory-table.
Not generators of doc figures, so not run here: scripts/engine_args_reference.py (writes
tests/data/engine_args/*.json from the engines' source trees: docs/engine-args.md,
"Regenerating") and scripts/startup_time.py (prints timings for docs/benchmarks.md,
"Start-up", a before/after record of one change).
Exit status: 0 when every generator that ran succeeded, 1 otherwise.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PPO_CONFIGS = ("megatron,random,anneal,genetic,ppo,ppo-no-recovery,ppo-no-near,ppo-no-batch-repair,ppo-finish-elite,"
               "ppo-no-replica-moves,ppo-no-redundant-moves,ppo-no-operator-moves")
PPO_SHIPPED = ["--scenarios", "resources/scenarios", "--budgets", "1000,4000", "--seeds", "5",
               "--configs", PPO_CONFIGS, "--operator-share"]
PPO_HELD_OUT = ["--scenarios", "resources/benchmarks/held-out", "--budgets", "1000,4000", "--seeds", "5",
                "--configs", PPO_CONFIGS, "--operator-share"]
# The second held-out set: generated after the last search-time choice was made, and used
# only to check it (docs/benchmarks.md).
PPO_HELD_OUT_2 = ["--scenarios", "resources/benchmarks/held-out-2", "--budgets", "1000,4000", "--seeds", "5",
                  "--configs", "random,anneal,genetic,ppo,ppo-no-batch-repair,ppo-finish-elite,"
                  "ppo-no-replica-moves,ppo-no-redundant-moves,ppo-no-operator-moves"]
PPO_DISAGGREGATED = ["--scenarios", "resources/examples/disaggregation,resources/benchmarks/disaggregated",
                     "--name-filter", "disaggregated", "--budgets", "1000,4000", "--seeds", "5",
                     "--configs", "random,anneal,ppo"]
# Disaggregated deployments written before the moved pools were resized, and used only to
# check that change (docs/benchmarks.md, "Disaggregated").
PPO_DISAGGREGATED_HELD_OUT = ["--scenarios", "resources/benchmarks/disaggregated-held-out", "--budgets", "1000,4000",
                              "--seeds", "5", "--configs", "random,anneal,ppo"]


# A rejected default (docs/ppo.md, "How the defaults were chosen"): 64 samples per update
# instead of 256, at 1000 calls, on the sets it was tried on and on the second held-out set.
PPO_SAMPLES = ["--budgets", "1000", "--seeds", "5", "--configs", "ppo,ppo-samples-64"]


class Generator:
    """One generator run: its name, the doc (relative to the root) and blocks it writes, and
    how to call it. `args(cli, doc, opts)` gives the arguments after the script's path."""

    def __init__(self, name, script, doc, blocks, args, needs=None):
        self.name, self.script, self.doc, self.blocks, self.args, self.needs = name, script, doc, blocks, args, needs


GENERATORS = [
    Generator("moe-decode-floor", "moe_decode_floor.py", "docs/simulator.md", ["moe-decode-floor"],
              lambda cli, doc, o: [cli, doc]),
    Generator("calibration", "calibration_table.py", "docs/simulator.md",
              ["calibration", "calibration-measurements", "calibration-in-step"], lambda cli, doc, o: [cli, doc]),
    Generator("disaggregation-examples", "disaggregation_examples.py", "docs/simulator.md",
              ["disaggregation-examples"], lambda cli, doc, o: [cli, doc]),
    Generator("disaggregated-load", "disaggregated_load.py", "docs/simulator.md", ["disaggregated-load"],
              lambda cli, doc, o: [cli, doc]),
    Generator("search-under-load", "search_under_load.py", "docs/search.md", ["search-under-load"],
              lambda cli, doc, o: [cli, doc], needs="ppo"),
    Generator("explain-examples", "explain_examples.py", "docs/explain.md", ["examples"],
              lambda cli, doc, o: [cli, doc]),
    Generator("launch-examples", "launch_examples.py", "docs/launch-examples.md", ["launch-examples"],
              lambda cli, doc, o: [cli, doc]),
    Generator("launch-memory", "launch_memory.py", "docs/launch-memory.md", ["launch-memory"],
              lambda cli, doc, o: [cli, doc]),
    Generator("choices-examples", "choices_examples.py", "docs/choices.md",
              ["pareto-output", "pareto-disaggregated-example", "size-example", "sweep-example",
               "load-front-example", "pareto-engine-example"],
              lambda cli, doc, o: [cli, doc]),
    Generator("engine-gap", "engine_gap.py", "docs/engines.md", ["engine-gap"],
              lambda cli, doc, o: [cli, doc, "--seed", "20261130", "--count", str(o.engine_gap_count),
                                   "--timeout", "60"]),
    Generator("speed-targets", "speed_table.py", "docs/choices.md", ["speed-targets"],
              lambda cli, doc, o: [cli, o.old_cli, o.old_label, "--doc", doc], needs="old build"),
    Generator("ppo-selection-study", "ppo_selection_study.py", "docs/ppo.md", ["ppo-selection-study"],
              lambda cli, doc, o: [os.path.join(os.path.dirname(cli), "shardlab-pretrain"), "--train",
                                   "1,2,3,1s,2s,3s", "--check", "shipped=resources/scenarios", "--check",
                                   "held-out=resources/benchmarks/held-out,resources/benchmarks/held-out-2",
                                   "--doc", doc], needs="ppo"),
    Generator("ppo-eval-shipped", "ppo_eval.py", "docs/benchmarks.md", ["ppo-eval-shipped"],
              lambda cli, doc, o: ["--cli", cli] + PPO_SHIPPED + ["--doc", doc, "--block", "ppo-eval-shipped"],
              needs="ppo"),
    Generator("ppo-eval-held-out", "ppo_eval.py", "docs/benchmarks.md", ["ppo-eval-held-out"],
              lambda cli, doc, o: ["--cli", cli] + PPO_HELD_OUT + ["--doc", doc, "--block", "ppo-eval-held-out"],
              needs="ppo"),
    Generator("ppo-eval-held-out-2", "ppo_eval.py", "docs/benchmarks.md", ["ppo-eval-held-out-2"],
              lambda cli, doc, o: ["--cli", cli] + PPO_HELD_OUT_2 + ["--doc", doc, "--block", "ppo-eval-held-out-2"],
              needs="ppo"),
    Generator("ppo-eval-disaggregated", "ppo_eval.py", "docs/benchmarks.md", ["ppo-eval-disaggregated"],
              lambda cli, doc, o: ["--cli", cli] + PPO_DISAGGREGATED
              + ["--doc", doc, "--block", "ppo-eval-disaggregated"], needs="ppo"),
    Generator("ppo-eval-disaggregated-held-out", "ppo_eval.py", "docs/benchmarks.md",
              ["ppo-eval-disaggregated-held-out"],
              lambda cli, doc, o: ["--cli", cli] + PPO_DISAGGREGATED_HELD_OUT
              + ["--doc", doc, "--block", "ppo-eval-disaggregated-held-out"], needs="ppo"),
    Generator("ppo-samples-tuning", "ppo_eval.py", "docs/ppo.md", ["ppo-samples-tuning"],
              lambda cli, doc, o: ["--cli", cli, "--scenarios", "resources/scenarios,resources/benchmarks/held-out"]
              + PPO_SAMPLES + ["--doc", doc, "--block", "ppo-samples-tuning"], needs="ppo"),
    Generator("ppo-samples-validation", "ppo_eval.py", "docs/ppo.md", ["ppo-samples-validation"],
              lambda cli, doc, o: ["--cli", cli, "--scenarios", "resources/benchmarks/held-out-2"]
              + PPO_SAMPLES + ["--doc", doc, "--block", "ppo-samples-validation"], needs="ppo"),
    Generator("memory-table", "memory_table.py", "docs/memory.md", ["memory-table"],
              lambda cli, doc, o: [os.path.dirname(os.path.dirname(cli)), "--doc", doc]),
]


def has_ppo(cli):
    """Whether the build's search registry lists ppo (built with the RL library)."""
    return " ppo " in subprocess.run([cli, "--help"], capture_output=True, text=True).stdout


def missing(gen, cli, opts):
    """Why the generator cannot run here, or None."""
    if gen.needs == "ppo" and not has_ppo(cli):
        return "needs the ppo algorithm: this build has none (SHARDLAB_BUILD_RL=OFF)"
    if gen.needs == "old build" and not (opts.old_cli and opts.old_label):
        return "times this build against an older one: give --old-cli and --old-label"
    return None


def run(gen, cli, root, opts):
    """Runs one generator from the repository (resources are found there) into root's doc.
    Returns (exit code, seconds, standard error)."""
    doc = os.path.join(root, gen.doc)
    cmd = [sys.executable, os.path.join(REPO, "scripts", gen.script)] + gen.args(cli, doc, opts)
    t0 = time.monotonic()
    # The generators leave their plan files in temporary directories: under one that goes.
    with tempfile.TemporaryDirectory(prefix="regenerate-docs-") as tmp:
        r = subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, TMPDIR=tmp))
    return r.returncode, time.monotonic() - t0, r.stderr


def select(names_only, names_skip):
    known = {g.name for g in GENERATORS}
    for n in names_only + names_skip:
        if n not in known:
            sys.exit(f"regenerate_docs: unknown generator '{n}' (known: {', '.join(sorted(known))})")
    return [g for g in GENERATORS if (not names_only or g.name in names_only) and g.name not in names_skip]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cli")
    ap.add_argument("--root", default=REPO, help="the tree whose README.md and docs/ are written")
    ap.add_argument("--only", default="", help="comma-separated generator names")
    ap.add_argument("--skip", default="", help="comma-separated generator names")
    ap.add_argument("--old-cli", help="an older build's shardlab-cli, for speed-targets")
    ap.add_argument("--old-label", help="that build's commit, for speed-targets")
    ap.add_argument("--engine-gap-count", type=int, default=100, help=argparse.SUPPRESS)
    ap.add_argument("--list", action="store_true", help="list the generators and the blocks they write")
    opts = ap.parse_args()
    split = lambda s: [x for x in s.split(",") if x]
    gens = select(split(opts.only), split(opts.skip))
    if opts.list:
        for g in gens:
            print(f"{g.name:24} scripts/{g.script:28} {g.doc}: {', '.join(g.blocks)}"
                  + (f"  (needs {g.needs})" if g.needs else ""))
        return 0
    cli = os.path.abspath(opts.cli)
    failed = 0
    total = time.monotonic()
    for g in gens:
        why = missing(g, cli, opts)
        if why:
            print(f"skipped  {g.name}: {why}", flush=True)
            continue
        code, secs, err = run(g, cli, os.path.abspath(opts.root), opts)
        print(f"{'ok' if code == 0 else 'FAILED':8} {g.name} ({g.doc}: {', '.join(g.blocks)}) {secs:.1f} s", flush=True)
        if code != 0:
            failed += 1
            sys.stderr.write(err)
    print(f"regenerate_docs: {time.monotonic() - total:.1f} s, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
