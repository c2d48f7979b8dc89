#!/usr/bin/env python3
"""Structure checks of the source tree, run by ctest (tests/structure):

1. Layering: core/'s directories include only downward, in the order written in
   tests/structure/layers.txt; an include of a directory above is an error unless that
   file lists it as a known exception (each with its reason). An exception that no longer
   occurs is an error too, so the list only shrinks.
2. Size: no file in core/, ui/ or app/ over 600 lines and no function over 80, except
   those listed with a reason in tests/structure/size_exceptions.txt (same ratchet).
3. LibTorch: only core/rl/policy_net.cpp includes a LibTorch header (<torch/...>,
   <ATen/...>, <c10/...>) among the sources of core/, ui/, app/ and tests/. Its headers cost ~30 s per translation unit, and no header may
   carry a LibTorch type: the network is behind the plain interface of core/rl/policy_net.h.
   No exceptions.

Usage: check_structure.py SOURCE_DIR [--list]   (--list prints every finding, exempt or not)
"""
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
SOURCE_DIRS = ("core", "ui", "app")
EXTENSIONS = (".cpp", ".h")


def read_list(path):
    """Non-comment lines of PATH as (key, reason) pairs: 'key  # reason'."""
    entries = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, _, reason = line.partition("#")
            key = key.strip()
            if not reason.strip():
                sys.exit(f"{path}:{n}: '{key}' has no reason (write 'entry  # why')")
            entries[key] = reason.strip()
    return entries


def sources(root, tops=SOURCE_DIRS):
    for top in tops:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    full = os.path.join(dirpath, name)
                    yield os.path.relpath(full, root), full


def strip_code(text):
    """TEXT with comments, string and character literals blanked (newlines kept), so
    braces and parentheses can be counted."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "".join("\n" for ch in text[i:j] if ch == "\n"))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONTAINER = re.compile(r"^\s*(template\s*<.*>\s*)?(namespace|class|struct|union|enum|extern\s+\"C\")\b")


def functions(text):
    """(name, first line, line count) of every function body that is not nested inside
    another function: blocks opened at namespace or class level whose header has a
    parameter list."""
    code = strip_code(text)
    found = []
    stack = []  # per open brace: ('container'|'function'|'other', header, line)
    header_start = 0
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            header = code[header_start:i]
            inside_function = any(kind == "function" for kind, _, _ in stack)
            if inside_function:
                kind = "other"
            elif CONTAINER.match(" ".join(header.split())):
                kind = "container"
            elif "(" in header and ("=" not in header.split("(")[0] or "operator" in header):
                kind = "function"
            else:
                kind = "other"
            stack.append((kind, " ".join(header.split()), line))
            header_start = i + 1
        elif c == "}":
            if stack:
                kind, header, start = stack.pop()
                if kind == "function":
                    name = header.split("(")[0].split()[-1] if header.split("(")[0].split() else header
                    found.append((name, start, line - start + 1))
            header_start = i + 1
        elif c == ";":
            header_start = i + 1
        elif c == ":" and stack and stack[-1][0] == "container":
            # "public:" and friends end a header inside a class.
            before = code[header_start:i].strip()
            if before in ("public", "private", "protected", "signals", "Q_SIGNALS", "public Q_SLOTS",
                          "private Q_SLOTS", "protected Q_SLOTS", "public slots", "private slots"):
                header_start = i + 1
    return found


def layer_order(path):
    order = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                order.append(line.split())
    rank = {}
    for r, names in enumerate(order):
        for name in names:
            rank[name] = r
    return rank


INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)


def check_layers(root, findings):
    here = os.path.join(root, "tests", "structure")
    rank = layer_order(os.path.join(here, "layers.txt"))
    for rel, full in sources(root):
        parts = rel.split(os.sep)
        if parts[0] != "core" or len(parts) < 3:
            continue
        own = parts[1]
        if own not in rank:
            findings.append(("layer", f"{rel}: directory core/{own} is not in tests/structure/layers.txt"))
            continue
        with open(full, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for target in sorted(set(INCLUDE.findall(text))):
            if target in rank and rank[target] > rank[own]:
                findings.append(("layer", f"{rel} -> {target}"))


def check_sizes(root, findings):
    for rel, full in sources(root):
        with open(full, encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            findings.append(("size", f"{rel}"))
        for name, start, count in functions(text):
            if count > MAX_FUNCTION_LINES:
                findings.append(("size", f"{rel}:{name}"))


TORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](torch|ATen|c10)/', re.M)
TORCH_HOME = os.path.join("core", "rl", "policy_net.cpp")


def check_torch(root, errors):
    for rel, full in sources(root, SOURCE_DIRS + ("tests",)):
        if rel == TORCH_HOME:
            continue
        with open(full, encoding="utf-8", errors="replace") as f:
            if TORCH_INCLUDE.search(f.read()):
                errors.append(f"{rel}: includes LibTorch; only {TORCH_HOME} may (keep the network behind "
                              "core/rl/policy_net.h's plain interface)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    listing = "--list" in sys.argv
    here = os.path.join(root, "tests", "structure")
    findings = []
    check_layers(root, findings)
    check_sizes(root, findings)
    allowed = {"layer": read_list(os.path.join(here, "layer_exceptions.txt")),
               "size": read_list(os.path.join(here, "size_exceptions.txt"))}
    errors = []
    seen = {"layer": set(), "size": set()}
    for kind, key in findings:
        seen[kind].add(key)
        if listing:
            print(f"{kind}: {key}{'  (listed)' if key in allowed[kind] else ''}")
        elif key not in allowed[kind]:
            what = ("includes a directory above its own (tests/structure/layers.txt)" if kind == "layer"
                    else f"is over {MAX_FILE_LINES} lines per file / {MAX_FUNCTION_LINES} per function")
            errors.append(f"{key}: {what}")
    for kind, entries in allowed.items():
        for key in entries:
            if key not in seen[kind]:
                errors.append(f"{key}: listed in tests/structure/{kind}_exceptions.txt but no longer "
                              "occurs; remove the line")
    listed = len(findings) - len(errors)
    check_torch(root, errors)
    for e in errors:
        print(f"structure: {e}", file=sys.stderr)
    if not listing:
        print(f"structure: {len(findings)} findings, {listed} listed with a reason, "
              f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
