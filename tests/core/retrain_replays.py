#!/usr/bin/env python3
"""Retrains the shipped ppo policy with the command recorded in its header and checks
that the weights come out bit for bit the same (training is deterministic per seed and
build; only the header's wall times differ).

usage: retrain_replays.py SHARDLAB_PRETRAIN WEIGHTS_FILE
"""
import json
import os
import shlex
import struct
import subprocess
import sys
import tempfile

MAGIC = b"SHARDLAB-PPO-WEIGHTS 1\n"


def split(data, path):
    if not data.startswith(MAGIC):
        sys.exit(f"{path}: not a ShardLab policy weights file (bad header)")
    at = len(MAGIC)
    (length,) = struct.unpack_from("<I", data, at)
    header = json.loads(data[at + 4:at + 4 + length])
    body = data[at + 4 + length:]
    return header, body


def parameters(body):
    """name -> bytes of the values, in file order."""
    (count,) = struct.unpack_from("<I", body, 0)
    at, out = 4, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", body, at)
        name = body[at + 4:at + 4 + n].decode()
        at += 4 + n
        (numel,) = struct.unpack_from("<I", body, at)
        out[name] = body[at + 4:at + 4 + 4 * numel]
        at += 4 + 4 * numel
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    trainer, shipped_path = sys.argv[1], sys.argv[2]
    with open(shipped_path, "rb") as f:
        shipped_header, shipped_body = split(f.read(), shipped_path)
    args = shlex.split(shipped_header.get("command", ""))
    if not args or os.path.basename(args[0]) != "shardlab-pretrain" or "--out" not in args:
        sys.exit(f"{shipped_path}: the header's command is not a shardlab-pretrain command: {args}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "policy.bin")
        args[args.index("--out") + 1] = out
        print("retraining:", shlex.join([trainer] + args[1:]), flush=True)
        subprocess.run([trainer] + args[1:], check=True)
        with open(out, "rb") as f:
            header, body = split(f.read(), out)
    for key in ("fingerprint", "training_scenarios", "validation_scenarios", "skipped_infeasible",
                "skipped_over_work_limit", "curve"):
        if header.get(key) != shipped_header.get(key):
            print(f"differs: header field {key}: shipped {shipped_header.get(key)!r}, retrained {header.get(key)!r}")
            return 1
    a, b = parameters(shipped_body), parameters(body)
    if list(a) != list(b):
        print(f"differs: parameter names: shipped {list(a)}, retrained {list(b)}")
        return 1
    for name in a:
        if a[name] != b[name]:
            print(f"differs: parameter {name}")
            return 1
    print(f"the retrained weights equal the shipped ones bit for bit ({len(a)} parameters)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
