#!/usr/bin/env python3
"""The command shardlab-pretrain records in a weights file's header (and shows as the
command to retrain it with) is a shell command that gives the trainer back the arguments it
was run with, a path with a blank, a quote and a ';' included.

usage: pretrain_command.py SHARDLAB_PRETRAIN SCRATCH_DIR
"""
import json
import os
import shlex
import struct
import subprocess
import sys

MAGIC = b"SHARDLAB-PPO-WEIGHTS 1\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    trainer, scratch = sys.argv[1], sys.argv[2]
    folder = os.path.join(scratch, "a folder")
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, "it's;touch x.bin")
    args = ["--out", out, "--train", "1", "--validation", "0", "--epochs", "1", "--exact-work", "1000"]
    subprocess.run([trainer] + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out, "rb") as f:
        data = f.read()
    if not data.startswith(MAGIC):
        sys.exit(f"{out}: not a weights file")
    (length,) = struct.unpack_from("<I", data, len(MAGIC))
    command = json.loads(data[len(MAGIC) + 4:len(MAGIC) + 4 + length])["command"]
    try:
        words = shlex.split(command)
    except ValueError as e:
        sys.exit(f"the header's command {command!r} is not a shell command: {e}")
    if words != ["shardlab-pretrain"] + args:
        sys.exit(f"the header's command {command!r} reads back as {words}, not the arguments given")
    print("command quoted:", command)


if __name__ == "__main__":
    main()
