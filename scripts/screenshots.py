#!/usr/bin/env python3
"""Retakes every screenshot in docs/images (README.md and docs/window.md show them) with the
build given, and records in docs/window.md's "screenshots" block the date, commit and machine
and the command behind each image.

    scripts/screenshots.py build [--only NAME,...]

`build` is the CMake build directory (its app/shardlab and tests/ui/tst_window_views are run).
Each window runs offscreen with HOME and the XDG directories pointed at a new empty directory,
so no earlier session's runs or settings appear in the pictures. Searches are seeded: the
same build gives the same plans, though a picture's pixels (fonts, timings in the status
line) may differ between machines.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_block import REPO, write_block  # noqa: E402

IMAGES = "docs/images"

# name -> (images written, what the picture shows, arguments of build/app/shardlab); the
# "views" entry is the window test that drives tabs and comparisons a command line cannot.
SHOTS = {
    "window": (["window.png"], "the README's picture: pretrained ppo on the 1.6 T MoE scenario",
               ["--scenario", "moe-1.6t-1024gpu", "--algo", "ppo", "--seed", "0", "--autostart",
                "--size", "1440x900", "--screenshot", "{out}/window.png", "--quit-when-done"]),
    "pareto": (["window-pareto.png"], "the Pareto tab: the certified front of the 1.6 T scenario",
               ["--scenario", "moe-1.6t-1024gpu", "--tab", "pareto", "--size", "1440x900",
                "--screenshot", "{out}/window-pareto.png", "--quit-when-done"]),
    "disaggregated": (["window-disaggregated.png"], "exact on a disaggregated deployment, the decode pool's topology",
                      ["--scenario", "resources/examples/disaggregation/llama3-70b-64gpu-8000-1000-disaggregated.json",
                       "--algo", "exact", "--budget", "4000", "--autostart", "--tab", "topology",
                       "--size", "1440x900", "--screenshot", "{out}/window-disaggregated.png", "--quit-when-done"]),
    "ppo-policy": (["window-ppo-policy.png"], "pretrained ppo on Mixtral-8x22B: the policy view",
                   ["--scenario", "mixtral-8x22b-64gpu", "--algo", "ppo", "--seed", "0", "--budget", "4000",
                    "--autostart", "--size", "1920x1200", "--screenshot", "{out}/window-ppo-policy.png",
                    "--quit-when-done"]),
    "views": (["window-runs.png", "window-compare.png", "window-topology.png", "window-heatmap.png",
               "window-topology-moe.png", "window-1024x700.png", "window-load-front.png"],
              "two variants' runs, the comparison with the recipe, the topologies, the heatmap, "
              "1024x700 and the front under load (tests/ui/tst_window_views.cpp, docScreenshots)", None),
}


def take(build, name, out, env):
    images, _, args = SHOTS[name]
    if args is None:
        cmd = [os.path.join(build, "tests/ui/tst_window_views"), "docScreenshots"]
        env = dict(env, SHARDLAB_DOC_SHOTS=out)
    else:
        cmd = [os.path.join(build, "app/shardlab")] + [a.format(out=out) for a in args]
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    missing = [i for i in images if not os.path.exists(os.path.join(out, i))]
    if r.returncode != 0 or missing:
        sys.exit(f"{name}: `{' '.join(cmd)}` exited {r.returncode}"
                 + (f", without {', '.join(missing)}" if missing else "") + f"\n{r.stdout[-2000:]}{r.stderr[-2000:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--only", default=",".join(SHOTS), help="comma-separated: " + ", ".join(SHOTS))
    a = ap.parse_args()
    names = [n for n in a.only.split(",") if n]
    unknown = [n for n in names if n not in SHOTS]
    if unknown:
        sys.exit(f"--only: unknown screenshot(s) {', '.join(unknown)}; known: {', '.join(SHOTS)}")
    build = os.path.abspath(a.build)
    rows = []
    with tempfile.TemporaryDirectory() as out:
        for name in names:
            # A fresh HOME per shot: the window restores the runs of the session before it.
            with tempfile.TemporaryDirectory() as home:
                env = dict(os.environ, HOME=home, XDG_DATA_HOME=home, XDG_CONFIG_HOME=home, XDG_RUNTIME_DIR=home,
                           QT_QPA_PLATFORM="offscreen")
                take(build, name, out, env)
            print(f"{name}: {', '.join(SHOTS[name][0])}")
        # Only when every shot was taken are the committed images replaced, each whole.
        for name in names:
            for image in SHOTS[name][0]:
                shutil.copyfile(os.path.join(out, image), os.path.join(REPO, IMAGES, image + ".tmp"))
                os.replace(os.path.join(REPO, IMAGES, image + ".tmp"), os.path.join(REPO, IMAGES, image))
    for name, (images, what, args) in SHOTS.items():
        cmd = ("SHARDLAB_DOC_SHOTS=docs/images build/tests/ui/tst_window_views docScreenshots" if args is None
               else "build/app/shardlab " + " ".join(x.format(out=IMAGES) for x in args))
        rows.append(f"| {', '.join(images)} | {what} | `{cmd}` |")
    body = ("Every screenshot here and in README.md, retaken by `scripts/screenshots.py build` (offscreen, with an\n"
            "empty HOME); the stamp above is the last full run" + ("" if len(names) == len(SHOTS) else
            f" (this one retook {', '.join(names)} only)") + ":\n\n"
            "| images | what | command |\n|---|---|---|\n" + "\n".join(rows) + "\n")
    write_block(os.path.join(REPO, "docs/window.md"), "screenshots", "scripts/screenshots.py", body)


if __name__ == "__main__":
    main()
