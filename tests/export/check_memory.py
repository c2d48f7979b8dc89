#!/usr/bin/env python3
"""Checks the memory and scheduler settings of exported launch configurations against the
plan's memory breakdown (docs/launch.md, "Memory settings").

    check_memory.py DIR

DIR holds pairs NAME.export.json (`shardlab-cli export --json`) and NAME.eval.json
(`shardlab-cli evaluate --json` of the same plan). For every engine pool:

- the memory terms in the export's `memory` equal the simulator's `memory_gb` for that pool
  (evaluate: the plan's, or its prefill/decode pool's);
- the fraction in the pool's command (and TensorRT-LLM's YAML) is `written_fraction`;
- the KV cache the engine allocates at that fraction, by the engine's own arithmetic written
  out below, is `kv_room_gb` and holds `kv_needed_gb`, the plan's KV cache per GPU;
- the token budget per step is at least the sequences a rank runs, as the engine reads its
  flags (SGLang divides both totals by --dp-size under --enable-dp-attention).

Prints one summary line; exits 1 on any error.
"""
import json
import re
import sys
from pathlib import Path

FLAGS = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static",
         "trtllm": "--kv_cache_free_gpu_memory_fraction"}
SCHEDULER = {"vllm": ("--max-num-seqs", "--max-num-batched-tokens"),
             "sglang": ("--max-running-requests", "--chunked-prefill-size"),
             "trtllm": ("--max_batch_size", "--max_num_tokens")}
TERMS = {"weights_gb": "weights", "activations_gb": "activations", "reserve_gb": "reserve",
         "capacity_gb": "capacity", "kv_needed_gb": "kv_cache"}
SLACK_GB = 1e-6


def kv_room(engine, m, f):
    """The KV cache per GPU the engine allocates at fraction f."""
    w, a, r, c = m["weights_gb"], m["activations_gb"], m["reserve_gb"], m["capacity_gb"]
    if engine == "vllm":    # a share of the whole GPU for weights, activations and KV cache
        return f * c - w - a
    if engine == "sglang":  # a share of the GPU for weights and the KV pool
        return f * c - w
    return f * (c - r - w - a)  # a share of what is free after weights, activations, runtime


def values(command, flag):
    return re.findall(re.escape(flag) + r" (\S+)", command)


def check_pool(errors, name, engine, pool, files, sim):
    m = pool.get("memory")
    where = f"{name}: {pool['role']}"
    if m is None:
        errors.append(f"{where}: no memory figures")
        return
    for key, term in TERMS.items():
        if abs(m[key] - sim[term]) > 1e-6:
            errors.append(f"{where}: {key} {m[key]} is not the simulator's {term} {sim[term]}")
    written = m["written_fraction"]
    found = {float(v) for v in values(pool["command"], FLAGS[engine])}
    if found != {written}:
        errors.append(f"{where}: {FLAGS[engine]} {sorted(found)} in the command, written_fraction {written}")
    for f in pool["files"]:
        for v in re.findall(r"free_gpu_memory_fraction: (\S+)", files.get(f, "")):
            if float(v) != written:
                errors.append(f"{where}: {f} has free_gpu_memory_fraction {v}, written_fraction {written}")
    room = kv_room(engine, m, written)
    if abs(room - m["kv_room_gb"]) > 1e-6:
        errors.append(f"{where}: kv_room_gb {m['kv_room_gb']} but the engine allocates {room:.4f} GB at {written}")
    if room < m["kv_needed_gb"] - SLACK_GB:
        errors.append(f"{where}: {FLAGS[engine]} {written} gives the KV cache {room:.2f} GB, "
                      f"the plan's batch needs {m['kv_needed_gb']:.2f} GB")
    seqs_flag, tokens_flag = SCHEDULER[engine]
    ranks = 1
    if engine == "sglang" and "--enable-dp-attention" in pool["command"]:
        ranks = int(values(pool["command"], "--dp-size")[0])
    seqs = [int(v) // ranks for v in values(pool["command"], seqs_flag)]
    tokens = [int(v) // ranks for v in values(pool["command"], tokens_flag)]
    if not seqs or not tokens or min(tokens) < max(seqs):
        errors.append(f"{where}: {tokens_flag} {tokens} per rank below {seqs_flag} {seqs} per rank")


def main():
    root = Path(sys.argv[1])
    errors, pools = [], 0
    exports = sorted(root.glob("*.export.json"))
    for path in exports:
        name = path.name[: -len(".export.json")]
        export = json.loads(path.read_text())
        ev = json.loads((root / f"{name}.eval.json").read_text())
        for pool in export["pools"]:
            if pool["role"] == "router":
                continue
            sim = ev["memory_gb"] if pool["role"] == "serve" else ev[pool["role"]]["memory_gb"]
            check_pool(errors, name, export["engine"], pool, export["files"], sim)
            pools += 1
    for e in errors:
        print("check_memory: " + e, file=sys.stderr)
    print(f"memory settings: {len(exports)} exports, {pools} pools: "
          + ("each fraction holds its plan's batch" if not errors and exports else f"{len(errors)} errors"))
    return 1 if errors or not exports else 0


if __name__ == "__main__":
    sys.exit(main())
