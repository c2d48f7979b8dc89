#!/usr/bin/env python3
"""Writes the engine-argument reference (tests/data/engine_args/<engine>.json) by reading an
engine's own argument definitions with `ast`, from its source at a pinned tag or commit.

    engine_args_reference.py vllm   --git DIR --ref REF --tag TAG [--version V] --out FILE
    engine_args_reference.py sglang --git DIR --ref REF --tag TAG [--version V] --out FILE
    engine_args_reference.py ENGINE --root SRC ...        (a checked-out tree instead of a git dir)

DIR is a git directory of the engine's repository (a bare mirror is enough: files are read
with `git show REF:PATH`); nothing is imported or run from the engine. The reference records
each flag's name, kind (int, float, str, json, bool, store_true, choice, list), choices where
the parser states them, the aliases, and where the flag was derived from.

vLLM builds most flags from its config dataclasses (`**get_kwargs(ModelConfig)["dtype"]`): the
generator reads those dataclasses (vllm/config/*.py) and applies the rules of
vllm.engine.arg_utils._compute_kwargs to the field's annotation (Literal -> choices,
bool -> --x/--no-x, nested config dataclass or dict -> json, int/float/str, list -> nargs).
SGLang's ServerArgs.add_cli_args states every flag explicitly; module-level choice lists are
resolved. TensorRT-LLM's reference (trtllm.json) is transcribed by hand; see docs/engine-args.md.
"""
import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

GENERATOR = "scripts/engine_args_reference.py"


class Source:
    """Reads files of the engine tree from a git directory at a ref, or from a directory."""

    def __init__(self, git=None, ref=None, root=None):
        self.git, self.ref, self.root = git, ref, root

    def read(self, path):
        if self.root:
            return (Path(self.root) / path).read_text()
        return subprocess.run(["git", "-C", self.git, "show", f"{self.ref}:{path}"],
                              check=True, capture_output=True, text=True).stdout

    def listdir(self, path):
        if self.root:
            return sorted(p.name for p in (Path(self.root) / path).iterdir())
        out = subprocess.run(["git", "-C", self.git, "ls-tree", "--name-only", f"{self.ref}:{path}"],
                             check=True, capture_output=True, text=True).stdout
        return out.split()

    def commit(self):
        if self.root:
            return None
        return subprocess.run(["git", "-C", self.git, "rev-parse", self.ref], check=True,
                              capture_output=True, text=True).stdout.strip()


def literal_value(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def flag_names(call):
    return [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            and a.value.startswith("-")]


def keyword(call, name):
    return next((k.value for k in call.keywords if k.arg == name), None)


def add_argument_calls(func):
    return [n for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "add_argument"]


def find_def(tree, cls, name):
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    return None


# --- annotations -> argparse kinds (vLLM's _compute_kwargs rules) -------------------------

def flatten_union(node, aliases):
    """The set of leaf annotations of `X | Y`, Optional[X], Union[...], Annotated[X, ...]."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return flatten_union(node.left, aliases) + flatten_union(node.right, aliases)
    if isinstance(node, ast.Subscript):
        head = ast.unparse(node.value).split(".")[-1]
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Optional":
            return flatten_union(args[0], aliases) + [ast.Constant(None)]
        if head == "Union":
            return [leaf for a in args for leaf in flatten_union(a, aliases)]
        if head in ("Annotated", "SkipValidation"):
            return flatten_union(args[0], aliases)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return flatten_union(ast.parse(node.value, mode="eval").body, aliases)
    if isinstance(node, ast.Name) and node.id in aliases:
        return flatten_union(aliases[node.id], aliases)
    return [node]


def head_name(node):
    if isinstance(node, ast.Subscript):
        node = node.value
    return ast.unparse(node).split(".")[-1]


def literal_choices(leaves):
    out = []
    for leaf in leaves:
        if head_name(leaf) == "Literal":
            args = leaf.slice.elts if isinstance(leaf.slice, ast.Tuple) else [leaf.slice]
            out += [literal_value(a) for a in args]
    return out


BUILTINS = {"int", "float", "str", "bool", "dict", "list", "tuple", "set", "None", "Any", "object"}


def annotation_kind(ann, aliases, dataclasses):
    """The argparse kind vLLM derives from a dataclass field's annotation."""
    leaves = flatten_union(ann, aliases)
    heads = {head_name(leaf) for leaf in leaves}
    optional = any(isinstance(leaf, ast.Constant) and leaf.value is None for leaf in leaves)
    heads.discard("None")
    if heads & dataclasses:
        return {"type": "json", "derived": "nested config dataclass (JSON)"}
    if "bool" in heads:
        return {"type": "bool", "negatable": True}
    if "Literal" in heads:
        choices = sorted(str(c) for c in literal_choices(leaves))
        if "str" in heads:
            return {"type": "str", "suggested": choices}
        return {"type": "choice", "choices": choices + (["None"] if optional else [])}
    for coll in ("tuple", "list", "set"):
        if coll in heads:
            return {"type": "list", "item": collection_item(leaves, coll, aliases, dataclasses)}
    if "int" in heads:
        return {"type": "int"}
    if "float" in heads:
        return {"type": "float"}
    if "dict" in heads or "Dict" in heads:
        other = heads - {"dict", "Dict", "str"} - BUILTINS
        return {"type": "json_or_str" if "str" in heads or other else "json"}
    return {"type": "str"}


def collection_item(leaves, coll, aliases, dataclasses):
    for leaf in leaves:
        if head_name(leaf) == coll and isinstance(leaf, ast.Subscript):
            args = leaf.slice.elts if isinstance(leaf.slice, ast.Tuple) else [leaf.slice]
            item = annotation_kind(args[0], aliases, dataclasses)["type"]
            return "str" if item in ("choice", "json", "json_or_str") and "str" in ast.unparse(args[0]) else item
    return "str"


# --- vLLM --------------------------------------------------------------------------------

def module_aliases(tree, aliases):
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            aliases.setdefault(node.targets[0].id, node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None \
                and "TypeAlias" in ast.unparse(node.annotation):
            aliases.setdefault(node.target.id, node.value)


def class_fields(tree, classes):
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            fields = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) \
                        and "ClassVar" not in ast.unparse(item.annotation):
                    fields[item.target.id] = item.annotation
            classes.setdefault(node.name, fields)


def vllm_trees(src):
    paths = [f"vllm/config/{n}" for n in src.listdir("vllm/config") if n.endswith(".py")]
    paths += ["vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py",
              "vllm/model_executor/layers/quantization/__init__.py"]
    return {p: ast.parse(src.read(p)) for p in paths}


def kwargs_sources(func):
    """Maps each `x_kwargs = get_kwargs(Cls)` in a function to Cls."""
    out = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and ast.unparse(node.value.func) == "get_kwargs" and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.unparse(node.value.args[0])
    return out


def kwargs_overrides(func):
    """`x_kwargs["field"]["type"] = expr` assignments: (var, field) -> kind."""
    out = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            text = ast.unparse(node.targets[0])
            if text.endswith('["type"]') or text.endswith("['type']"):
                inner = node.targets[0].value
                if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name):
                    out[(inner.value.id, literal_value(inner.slice))] = explicit_type(node.value)
    return out


def explicit_type(node):
    text = ast.unparse(node)
    if "json" in text:
        return "json"
    for t in ("float", "int"):
        if t in text or (t == "int" and "human_readable_int" in text):
            return t
    return "str"


# Fields _compute_kwargs parses with human_readable_int ("1k", "2M" accepted).
HUMAN_READABLE_INTS = {"max_model_len", "max_num_batched_tokens", "kv_cache_memory_bytes"}


class VllmReader:
    def __init__(self, src):
        self.trees = vllm_trees(src)
        self.aliases, self.classes = {}, {}
        for tree in self.trees.values():
            module_aliases(tree, self.aliases)
            class_fields(tree, self.classes)
        self.dataclasses = {c for c in self.classes if c.endswith("Config")}
        self.flags = {}

    def field_kind(self, cls, field):
        ann = self.classes.get(cls, {}).get(field)
        if ann is None:
            return {"type": "str", "derived": f"{cls}.{field} (not found; taken as str)"}
        kind = annotation_kind(ann, self.aliases, self.dataclasses)
        if field in HUMAN_READABLE_INTS:
            kind = {"type": "int", "human_readable": True}
        kind.setdefault("derived", f"{cls}.{field}: {ast.unparse(ann)}")
        return kind

    def add(self, names, kind, origin):
        if not names:
            return
        entry = dict(kind)
        entry["name"] = names[0]
        if names[1:]:
            entry["aliases"] = names[1:]
        entry["source"] = origin
        self.flags[names[0]] = entry

    def read_function(self, path, cls, fname):
        func = find_def(self.trees[path], cls, fname) if cls else next(
            n for n in self.trees[path].body if isinstance(n, ast.FunctionDef) and n.name == fname)
        sources, overrides = kwargs_sources(func), kwargs_overrides(func)
        for call in add_argument_calls(func):
            self.read_call(call, sources, overrides, f"{path}:{cls + '.' if cls else ''}{fname}")
        return func

    def read_call(self, call, sources, overrides, origin):
        names = flag_names(call)
        kind = None
        for kw in call.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Subscript) and isinstance(kw.value.value, ast.Name):
                var, field = kw.value.value.id, literal_value(kw.value.slice)
                kind = self.field_kind(sources.get(var, "?"), field)
                if (var, field) in overrides:
                    kind = {"type": overrides[(var, field)], "derived": kind.get("derived")}
        kind = apply_explicit(call, kind)
        if names:
            self.add(names, kind, origin)
        elif isinstance(call.args[0], ast.JoinedStr) if call.args else False:
            self.add_loop(call, sources, overrides, origin)
        elif call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == "arg":
            self.add_deprecated_loop(call, origin)

    def add_loop(self, call, sources, overrides, origin):
        """`for key, value in frontend_kwargs.items(): add_argument(f"--{key...}", **value)`."""
        var = next(iter(sources))
        for field in self.classes[sources[var]]:
            kind = self.field_kind(sources[var], field)
            if (var, field) in overrides:
                kind = {"type": overrides[(var, field)], "derived": kind.get("derived")}
            self.add(["--" + field.replace("_", "-")], kind, origin)

    def add_deprecated_loop(self, call, origin):
        """The deprecated `for arg, type in [("--x", str), ...]` flags."""
        for node in ast.walk(self.trees["vllm/engine/arg_utils.py"]):
            if isinstance(node, ast.For) and any(c is call for c in ast.walk(node)):
                for pair in node.iter.elts:
                    name, typ = literal_value(pair.elts[0]), ast.unparse(pair.elts[1])
                    self.add([name], {"type": "bool" if typ == "bool" else "str", "deprecated": True}, origin)


def apply_explicit(call, kind):
    """Explicit type=/action=/choices=/nargs= keywords override what a dataclass field gave."""
    kind = dict(kind or {"type": "str"})
    action = keyword(call, "action")
    if action is not None:
        text = ast.unparse(action)
        if "store_true" in text or "store_false" in text:
            return {"type": "store_true"}
        if "BooleanOptionalAction" in text:
            return {"type": "bool", "negatable": True}
        if text == "'append'" or text == '"append"':
            kind["repeatable"] = True
    typ = keyword(call, "type")
    if typ is not None:
        kind["type"] = explicit_type(typ)
        kind.pop("choices", None)
    choices = keyword(call, "choices")
    if choices is not None:
        values = literal_value(choices)
        if isinstance(values, list):
            kind.update(type="choice", choices=[str(v) for v in values])
        else:
            kind["choices_dynamic"] = ast.unparse(choices)
    nargs = keyword(call, "nargs")
    if nargs is not None and kind["type"] not in ("list",):
        kind["nargs"] = literal_value(nargs) if literal_value(nargs) is not None else ast.unparse(nargs)
    if keyword(call, "deprecated") is not None:
        kind["deprecated"] = True
    return kind


def vllm_reference(src):
    reader = VllmReader(src)
    reader.read_function("vllm/entrypoints/openai/cli_args.py", None, "make_arg_parser")
    reader.read_function("vllm/entrypoints/openai/cli_args.py", "FrontendArgs", "add_cli_args")
    reader.read_function("vllm/engine/arg_utils.py", "EngineArgs", "add_cli_args")
    reader.read_function("vllm/engine/arg_utils.py", "AsyncEngineArgs", "add_cli_args")
    for entry in reader.flags.values():
        if entry.get("negatable"):
            entry["negation"] = "--no-" + entry["name"][2:]
    return {
        "command": "vllm serve MODEL [flags]",
        "positional": ["model_tag"],
        "files": sorted(reader.trees),
        "flags": dict(sorted(reader.flags.items())),
        "notes": [
            "Flags built from config dataclasses (**get_kwargs(Cls)['field']) take their kind from "
            "the field annotation in vllm/config/*.py by the rules of _compute_kwargs: nested config "
            "dataclass -> json, bool -> --x/--no-x, Literal -> choices (plus 'None' when Optional; "
            "Literal together with str -> any string), list/tuple/set -> one or more values, int, "
            "float, dict -> json, anything else -> str. Explicit type=/action=/choices= override.",
            "FrontendArgs flags come from every FrontendArgs field (cli_args.py loops over them).",
            "Choices computed at run time (e.g. --reasoning-parser) are recorded as choices_dynamic "
            "and checked as free strings.",
        ],
    }


# --- SGLang ------------------------------------------------------------------------------

def sglang_reference(src):
    path = "python/sglang/srt/server_args.py"
    tree = ast.parse(src.read(path))
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            value = literal_value(node.value)
            if isinstance(value, list):
                consts[node.targets[0].id] = value
    func = find_def(tree, "ServerArgs", "add_cli_args")
    flags = {}
    for call in add_argument_calls(func):
        names = flag_names(call)
        if not names:
            continue
        choices = keyword(call, "choices")
        if isinstance(choices, ast.Name) and choices.id in consts:
            call.keywords = [k for k in call.keywords if k.arg != "choices"] + [
                ast.keyword("choices", ast.Constant(consts[choices.id]))]
        kind = apply_explicit(call, {"type": "str"})
        action = keyword(call, "action")
        if action is not None and "DeprecatedAction" in ast.unparse(action):
            kind = {"type": "store_true", "deprecated": True}
        entry = dict(kind, name=names[0], source=f"{path}:ServerArgs.add_cli_args")
        if names[1:]:
            entry["aliases"] = names[1:]
        flags[names[0]] = entry
    return {
        "command": "python3 -m sglang.launch_server --model-path MODEL [flags]",
        "positional": [],
        "files": [path],
        "flags": dict(sorted(flags.items())),
        "notes": [
            "Every flag is stated in ServerArgs.add_cli_args; choices naming a module-level list "
            "(QUANTIZATION_CHOICES, ...) are resolved from that list. JSON-valued flags are typed str "
            "by SGLang's parser and recorded as str.",
        ],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("engine", choices=["vllm", "sglang"])
    ap.add_argument("--git")
    ap.add_argument("--ref")
    ap.add_argument("--root")
    ap.add_argument("--tag", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--provenance", default="", help="how the source tree relates to the tag")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    src = Source(a.git, a.ref, a.root)
    ref = vllm_reference(src) if a.engine == "vllm" else sglang_reference(src)
    doc = {"engine": a.engine, "version": a.version, "tag": a.tag, "commit": src.commit(),
           "provenance": a.provenance, "generator": GENERATOR}
    doc.update(ref)
    Path(a.out).write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    print(f"{a.out}: {len(ref['flags'])} flags", file=sys.stderr)


if __name__ == "__main__":
    main()
