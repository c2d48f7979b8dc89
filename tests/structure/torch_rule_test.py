#!/usr/bin/env python3
"""The structure check's LibTorch rule on a made-up tree: an include of <torch/...>,
<ATen/...> or <c10/...> anywhere but core/rl/policy_net.cpp is an error naming the file,
and policy_net.cpp's own include is not.

Usage: torch_rule_test.py   (exit 0 when the rule holds)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_structure  # noqa: E402

CASES = {
    "core/rl/policy_net.cpp": ("#include <torch/torch.h>\n", False),
    "core/rl/policy_net.h": ("#include <torch/torch.h>\n", True),
    "core/rl/ppo_agent.cpp": ("  #  include <ATen/ATen.h>\n", True),
    "app/pretrain_main.cpp": ('#include "c10/util/Exception.h"\n', True),
    "ui/plan_view.cpp": ("// #include <torch/torch.h> is mentioned in a comment only\n", False),
    "core/search/plain.cpp": ("#include <vector>\n", False),
    "tests/core/tst_ppo.cpp": ("#include <torch/torch.h>\n", True),
}


def main():
    failures = []
    with tempfile.TemporaryDirectory() as root:
        for rel, (text, _) in CASES.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        errors = []
        check_structure.check_torch(root, errors)
        for rel, (_, flagged) in CASES.items():
            hit = any(e.startswith(rel + ":") for e in errors)
            if hit != flagged:
                failures.append(f"{rel}: {'not ' if flagged else ''}flagged, expected the opposite")
    for f in failures:
        print(f"torch rule: {f}", file=sys.stderr)
    print(f"torch rule: {len(CASES) - len(failures)} of {len(CASES)} cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
