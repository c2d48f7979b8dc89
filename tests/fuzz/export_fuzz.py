#!/usr/bin/env python3
"""Fuzz target for the launch-script export: random checkpoint names, output paths and
option values go through `shardlab-cli export` (and a HuggingFace config's _name_or_path
through `import-hf`); every script written is run under bash and under dash with stub
engines on PATH that record their argv. The engine must receive each input string byte
for byte, and nothing in a name may run: a canary file, and PWNVAR='a[$(touch canary)]'
in the environment (which bash arithmetic would execute), must have no effect.

    export_fuzz.py CLI REPO WORKDIR [--seconds S] [--seed N]

S defaults to $SHARDLAB_EXPORT_FUZZ_SECONDS or 120. Deterministic for a seed: the inputs
of iteration i depend only on the seed and i.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time

# Pieces a hostile name is built from: shell syntax, expansions, quotes, and the
# variables the scripts themselves read.
PIECES = ["$", "(", ")", "`", "'", '"', "\\", " ", ";", "|", "&", "<", ">", "*", "?", "~", "#", "!",
          "{", "}", "[", "]", "=", ",", ":", "-", ".", "/", "%", "@", "+", "^", "é", "€", "💥",
          "$((", "))", "${", "$(touch canary)", "`touch canary`", "$((PWNVAR))", "$PWNVAR",
          "a[$(touch canary)]", "$HOME", "$HEAD_IP", "$NODE_RANK", "$IB_DEVICE", "'\\''", "\\$",
          "org", "model", "PWNVAR", "x", "7"]

STUB = """#!/bin/sh
# Records this call's argv, NUL-separated, in a file of its own under $STUB_DIR.
f=$(mktemp "$STUB_DIR/call.XXXXXX")
printf '%s\\0' "$(basename "$0")" "$@" > "$f"
"""

# Plans the fuzzer exports: one node, several nodes, disaggregated on one and on several
# nodes, and a multi-node MoE plan.
CARRIERS = [("resources/scenarios/llama3-70b-8gpu.json", "megatron"),
            ("resources/examples/disaggregation/llama3-70b-64gpu-8000-1000-aggregated.json", "exact"),
            ("resources/examples/disaggregation/llama3-70b-8gpu-8000-1000-disaggregated.json", "exact"),
            ("resources/examples/disaggregation/llama3-70b-64gpu-8000-1000-disaggregated.json", "exact"),
            ("resources/scenarios/deepseek-v3-256gpu.json", "megatron")]
ENGINES = ["vllm", "sglang", "trtllm"]
SHELL_VARS = {"HEAD_IP": "10.0.0.1", "PREFILL_HEAD_IP": "10.0.0.1", "DECODE_HEAD_IP": "10.0.0.9",
              "IB_DEVICE": "mlx5_0"}


def hostile(rng, lo=1, hi=12):
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(lo, hi)))


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, timeout=60, **kw)


def make_plans(cli, repo, work):
    plans = []
    for i, (scenario, algo) in enumerate(CARRIERS):
        out = os.path.join(work, f"plan{i}.json")
        cmd = [cli, "search", "--scenario", os.path.join(repo, scenario), "--algo", "exact", "--out", out] \
            if algo == "exact" else [cli, "megatron", "--scenario", os.path.join(repo, scenario), "--out", out]
        r = run(cmd)
        if r.returncode != 0:
            sys.exit(f"export_fuzz: could not make a plan for {scenario}: {r.stderr.decode()}")
        plans.append(out)
    return plans


def engine_calls(stub_dir):
    calls = []
    for name in sorted(os.listdir(stub_dir)):
        with open(os.path.join(stub_dir, name), "rb") as f:
            calls.append(f.read().split(b"\0")[:-1])
    return calls


def model_of(call):
    """The checkpoint an engine call loads, or None for a call that loads none (a router)."""
    prog = call[0]
    if prog == b"vllm" and len(call) > 2 and call[1] == b"serve":
        return call[2]
    if prog == b"trtllm-serve" and len(call) > 1 and call[1] != b"disaggregated":
        return call[1]
    if prog == b"python3" and b"--model-path" in call:
        return call[call.index(b"--model-path") + 1]
    return None


def script_model(model, cwd):
    """The checkpoint as the script names it (scriptModelPath in core/report/launch_config):
    a path relative to the export's working directory ("./x", "../x", ".", "..", or any
    relative name that exists there) written absolute and normalised; anything else as given."""
    explicit = model in (".", "..") or model.startswith("./") or model.startswith("../")
    if not model or os.path.isabs(model) or not (explicit or os.path.exists(os.path.join(cwd, model))):
        return model
    return os.path.normpath(os.path.join(cwd, model))


def flag_value(call, flag):
    return call[call.index(flag) + 1] if flag in call else None


TOKEN_FLAG = {"vllm": b"--max-num-batched-tokens", "sglang": b"--chunked-prefill-size", "trtllm": b"--max_num_tokens"}


def expected_tokens(call, engine, tokens):
    """The token flag's value for a per-rank budget `tokens`: SGLang divides
    --chunked-prefill-size by --dp-size under --enable-dp-attention, so it is written times that."""
    if engine == "sglang" and b"--enable-dp-attention" in call:
        return str(int(tokens) * int(flag_value(call, b"--dp-size"))).encode()
    return tokens.encode()


class Fuzz:
    def __init__(self, cli, repo, work, seed):
        self.cli, self.repo, self.work, self.seed = cli, repo, work, seed
        self.stubs = os.path.join(work, "stubs")
        os.makedirs(self.stubs)
        for prog in ["vllm", "python3", "trtllm-serve", "mpirun", "ray"]:
            path = os.path.join(self.stubs, prog)
            with open(path, "w") as f:
                f.write(STUB)
            os.chmod(path, 0o755)
        self.plans = make_plans(cli, repo, work)
        self.stats = {"iterations": 0, "exports": 0, "refused": 0, "scripts_run": 0, "engine_calls": 0,
                      "payloads_executed": 0, "failures": 0}

    def fail(self, what):
        self.stats["failures"] += 1
        print("export_fuzz: FAIL: " + what, file=sys.stderr)

    def inputs(self, i, rng):
        model = hostile(rng) if rng.random() < 0.8 else "org/" + hostile(rng)
        opts = []
        tokens = None
        if rng.random() < 0.5:
            tokens = str(rng.choice([rng.randint(1, 200000), rng.randint(8192, 65536)]))
            opts += ["--max-num-tokens", tokens]
        if rng.random() < 0.3:
            opts += ["--memory-fraction", rng.choice(["0.5", "0.9", "0.95", "1.5", "-1", "nan", hostile(rng, 1, 3)])]
        if rng.random() < 0.3:
            opts += ["--checkpoint", rng.choice(["bf16", "fp8", hostile(rng, 1, 3)])]
        folder = hostile(rng, 1, 6).replace("/", "_")
        if folder in (".", ".."):
            folder += "_"
        return model, opts, tokens, folder

    def via_hf(self, i, rng, case):
        """A HuggingFace config whose _name_or_path is hostile: import-hf, then a plan."""
        name = "org/" + hostile(rng)
        cfg = json.load(open(os.path.join(self.repo, "tests/data/hf/llama3-70b.config.json")))
        cfg["_name_or_path"] = name
        json.dump(cfg, open(os.path.join(case, "config.json"), "w"))
        model = os.path.join(case, "model.json")
        if run([self.cli, "import-hf", os.path.join(case, "config.json"), "--out", model]).returncode != 0:
            return None, None
        scenario = json.load(open(os.path.join(self.repo, CARRIERS[0][0])))
        scenario["model"] = json.load(open(model))
        json.dump(scenario, open(os.path.join(case, "scenario.json"), "w"))
        plan = os.path.join(case, "plan.json")
        if run([self.cli, "megatron", "--scenario", os.path.join(case, "scenario.json"), "--out", plan]).returncode:
            self.fail(f"iteration {i}: megatron on an imported model failed")
            return None, None
        return name, plan

    def one(self, i):
        rng = random.Random(f"{self.seed}:{i}")
        case = os.path.join(self.work, "case")
        shutil.rmtree(case, ignore_errors=True)
        os.makedirs(case)
        engine = rng.choice(ENGINES)
        model, opts, tokens, folder = self.inputs(i, rng)
        plan = rng.choice(self.plans)
        args = ["--model", model] + opts
        if rng.random() < 0.15:
            model, plan = self.via_hf(i, rng, case)
            if plan is None:
                return
            args = opts
        outdir = os.path.join(case, folder)
        os.makedirs(outdir, exist_ok=True)
        script = os.path.join(outdir, "launch.sh")
        r = run([self.cli, "export", "--plan", plan, "--engine", engine, "--out", script] + args, cwd=case)
        self.stats["exports"] += 1
        if r.returncode != 0:
            self.stats["refused"] += 1
            # A malformed command line is a usage error (exit 2, named after the
            # command); anything else the export refuses is exit 1, "error: ".
            said = (r.returncode == 1 and r.stderr.startswith(b"error: ")) or \
                (r.returncode == 2 and r.stderr.startswith(b"shardlab-cli export: "))
            if not said or os.path.exists(script):
                self.fail(f"iteration {i}: a refused export must say why and write nothing: {r.stderr[:200]!r}")
            return
        model = script_model(model, case) if args[:1] == ["--model"] else model
        for shell in ["bash", "dash"]:
            self.run_script(i, shell, script, case, engine, model, tokens)

    def run_script(self, i, shell, script, case, engine, model, tokens):
        stub_dir = os.path.join(case, "calls." + shell)
        os.makedirs(stub_dir)
        env = dict(SHELL_VARS, PATH=self.stubs + ":/usr/bin:/bin", STUB_DIR=stub_dir, HOME=case,
                   PWNVAR="a[$(touch canary)]", NODE_RANK=str(random.Random(f"{self.seed}:{i}:{shell}").randint(0, 3)))
        r = run([shell, script], env=env, cwd=case)
        self.stats["scripts_run"] += 1
        if r.returncode != 0:
            self.fail(f"iteration {i}: {shell} {script!r} exited {r.returncode}: {r.stderr[:300]!r}")
        calls = engine_calls(stub_dir)
        self.stats["engine_calls"] += len(calls)
        loads = [c for c in calls if model_of(c) is not None]
        if not loads:
            self.fail(f"iteration {i}: {shell} ran no engine")
        for c in loads:
            if model_of(c) != model.encode():
                self.fail(f"iteration {i}: {shell}: the engine got {model_of(c)!r}, not {model!r}")
            if tokens is not None and flag_value(c, TOKEN_FLAG[engine]) != expected_tokens(c, engine, tokens):
                self.fail(f"iteration {i}: {shell}: token budget {flag_value(c, TOKEN_FLAG[engine])!r}, not {tokens}")
        for root, _, files in os.walk(self.work):
            for f in files:
                if f in ("canary", "pwned"):
                    self.stats["payloads_executed"] += 1
                    self.fail(f"iteration {i}: a payload ran ({os.path.join(root, f)})")
                    os.remove(os.path.join(root, f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("repo")
    ap.add_argument("work")
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("SHARDLAB_EXPORT_FUZZ_SECONDS", 120)))
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    for tool in ["bash", "dash"]:
        if shutil.which(tool) is None:
            sys.exit(f"export_fuzz: {tool} is missing (scripts/install-deps.sh installs it)")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    fuzz = Fuzz(os.path.abspath(a.cli), os.path.abspath(a.repo), os.path.abspath(a.work), a.seed)
    end = time.monotonic() + a.seconds
    i = 0
    while time.monotonic() < end and fuzz.stats["failures"] < 20:
        fuzz.one(i)
        i += 1
        fuzz.stats["iterations"] = i
    print("export fuzz: seed %d, %.0f s: %s" % (a.seed, a.seconds, json.dumps(fuzz.stats)))
    sys.exit(1 if fuzz.stats["failures"] else 0)


if __name__ == "__main__":
    main()
