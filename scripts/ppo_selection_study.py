#!/usr/bin/env python3
"""Scores ppo weights files by the search itself on the pretrainer's selection scenarios
(`shardlab-pretrain --score`, docs/ppo.md "Choosing the checkpoint"): the mean over
scenarios of the median best / exact optimum, the share at 0.99, and every scenario where
some file is below 0.99. Each file's header says how it was trained (its command and, when
it chose a checkpoint, every checkpoint's score), so the table can be remade.

    scripts/ppo_selection_study.py build/app/shardlab-pretrain [--weights F ...]
        [--train 1,2,3,1s,2s] [--select 60] [--select-budget 1000] [--select-search-seeds 3] [--select-margin 0]
        [--check NAME=DIR[,DIR...] ...] [--doc docs/ppo.md --block ppo-selection-study]

--train retrains the shipped weights' recorded command with each of these seeds (about
5 min each on 2 cores), "Ns" with checkpoint selection on the same selection flags (about
6 min more), and scores the results after the shipped file and the files given. --check
scores every file the same way on scenario files (`--score-scenarios`: the shipped four, the
held-out sets), so the table shows whether the selection score ranks files as those do."""
import argparse, json, os, re, shlex, struct, subprocess, sys, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(REPO, "resources", "ppo", "pretrained-policy.bin")


def header(path):
    data = open(path, "rb").read()
    at = data.index(b"\n") + 1
    (length,) = struct.unpack("<I", data[at:at + 4])
    return json.loads(data[at + 4:at + 4 + length])


def retrain(pretrain, seed, select, out, o):
    cmd = shlex.split(header(SHIPPED)["command"])[1:]
    flags = dict(zip(cmd[0::2], cmd[1::2]))
    flags["--seed"], flags["--out"] = str(seed), out
    for k in [k for k in flags if k.startswith("--select")]:  # the shipped file may have used selection
        del flags[k]
    if select:
        flags.update({"--select": str(o.select), "--select-budget": str(o.select_budget),
                      "--select-search-seeds": str(o.select_search_seeds), "--select-margin": str(o.select_margin)})
    args = [pretrain] + [x for kv in flags.items() for x in kv]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def score(pretrain, path, o, dirs=None):
    t0 = time.monotonic()
    args = [pretrain, "--score", path, "--select", str(o.select), "--select-budget", str(o.select_budget),
            "--select-search-seeds", str(o.select_search_seeds)]
    if dirs:
        args += ["--score-scenarios", dirs]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    m = re.search(r": (\d+) (?:selection )?scenarios .*best / optimum ([\d.]+) \(mean\), ([\d.]+) of scenarios", r.stdout)
    per = {}
    for line in r.stderr.splitlines():
        s = re.match(r"(gen-\S+) \(Generated scenario: (.*?)\)(?: \[[^]]*\])?: ([\d.]+)$", line)
        if s:
            per[s.group(1)] = (s.group(2), float(s.group(3)))
    return int(m.group(1)), float(m.group(2)), float(m.group(3)), per, time.monotonic() - t0


def describe(path):
    h = header(path)
    sel = h.get("selection")
    kept = f"epoch {sel['selected_epoch']} of {h['epochs']}" if sel else f"last ({h['epochs']})"
    how = f"seed {h['seed']}" + (", checkpoint selection" if sel else "")
    return h, how, kept


def body(pretrain, files, o):
    rows, scores, counts = [], [], {}
    checks = [c.split("=", 1) for c in o.check]
    for path in files:
        h, how, kept = describe(path)
        n, mean, at, per, secs = score(pretrain, path, o)
        scores.append((os.path.basename(path), per))
        checked = ""
        for name, dirs in checks:
            cn, cmean, cat, _, _ = score(pretrain, path, o, dirs)
            counts[name] = cn
            checked += f" {cmean:.4f} ({cat:.3f}) |"
        rows.append(f"| `{os.path.basename(path)}` | {how} | {kept} | {mean:.4f} | {at:.3f} |{checked} {secs:.0f} |")
        for c in (h.get("selection") or {}).get("checkpoints", []):
            budgets = h["selection"].get("budgets") or [h["selection"].get("budget")]
            rows.append(f"| &nbsp;&nbsp;its checkpoint (scored in training, {','.join(map(str, budgets))} calls) | | "
                        f"epoch {c['epoch']} | {c['mean_ratio']:.4f} | "
                        f"{c['at_optimum']:.3f} |" + " |" * len(checks) + " |")
    shown = " ".join(a.replace(REPO + os.sep, "") for a in sys.argv[1:]) # paths as from the repository
    out = [f"```\n$ scripts/ppo_selection_study.py {shown}\n```\n",
           f"ppo at {o.select_budget} calls, median of {o.select_search_seeds} search seeds, on {n} selection scenarios "
           f"(generator seed 20261128, the first {o.select} indices, those exact certifies); each file's training "
           "command is in its header (the seed and selection below; the rest as the shipped command). "
           "`score s`: the wall time of `--score` (certifying the scenarios and the searches)."
           + "".join(f" `{name}`: the same score on the {counts.get(name, 0)} scenarios of {dirs} "
                     "(mean best/exact, and in brackets the share at 0.99)." for name, dirs in checks) + "\n",
           "| weights | training | weights kept | mean best/exact | share at 0.99 |"
           + "".join(f" {name} |" for name, _ in checks) + " score s |",
           "|---|---|---|---:|---:|" + "---:|" * len(checks) + "---:|"] + rows
    low = sorted({k for _, per in scores for k, (_, r) in per.items() if r < 0.99},
                 key=lambda k: int(k.rsplit("-", 1)[1]))
    if low:
        out += ["", "Scenarios where some file is below 0.99:", "",
                "| scenario | | " + " | ".join(f"`{n}`" for n, _ in scores) + " |",
                "|---|---|" + "---:|" * len(scores)]
        for k in low:
            what = next(per[k][0] for _, per in scores if k in per)
            out.append(f"| {k} | {what} | " + " | ".join(f"{per[k][1]:.3f}" if k in per else "-" for _, per in scores) + " |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pretrain")
    ap.add_argument("--weights", nargs="*", default=[])
    ap.add_argument("--train", default="")
    ap.add_argument("--select", type=int, default=60)
    ap.add_argument("--select-budget", default="1000", help="calls, or a list: 1000,4000")
    ap.add_argument("--select-search-seeds", type=int, default=3)
    # 0: the best checkpoint, the later on a tie (the rule the docs table was made with);
    # the trainer's own default is 0.005.
    ap.add_argument("--select-margin", type=float, default=0.0)
    ap.add_argument("--check", action="append", default=[], metavar="NAME=DIR[,DIR...]")
    ap.add_argument("--doc")
    ap.add_argument("--block", default="ppo-selection-study")
    o = ap.parse_args()
    if any("=" not in c for c in o.check):
        ap.error("--check: NAME=DIR[,DIR...]")
    with tempfile.TemporaryDirectory(prefix="ppo-selection-") as tmp:
        files = [SHIPPED] + list(o.weights)
        for item in [s for s in o.train.split(",") if s]:
            seed, select = int(item.rstrip("s")), item.endswith("s")
            files.append(os.path.join(tmp, f"seed{seed}{'-selected' if select else ''}.bin"))
            retrain(o.pretrain, seed, select, files[-1], o)
        text = body(o.pretrain, files, o)
    if o.doc:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from doc_block import write_block
        write_block(o.doc, o.block, "scripts/ppo_selection_study.py", text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
