#!/usr/bin/env python3
"""Checks the engine command lines of exported launch scripts against each engine's own
argument definitions (the reference in tests/data/engine_args/<engine>.json).

    check_engine_args.py REF_DIR CORPUS_DIR

Reads CORPUS_DIR/scripts/*/launch.sh, finds every `vllm serve`, `python3 -m
sglang.launch_server` and `trtllm-serve` command (joined across `\\` continuations, inside
if/else blocks, after VAR=value assignments), and checks each flag: it must be a flag of that
engine version, and its value must have the flag's type (int, float, one of the choices, valid
JSON, no value for a switch). Shell expansions are accepted where the type is a string, and a
value that is a single $VAR, ${VAR} or $((...)) where it is an integer. TensorRT-LLM YAML files (the
--extra_llm_api_options file, the disaggregated -c file, and every *.yaml beside a script)
must parse, and every key, nested, must be a known key with a value of the right type.
Prints one summary line; exits 1 on any error.
"""
import json
import re
import shlex
import sys
from pathlib import Path

import yaml

ENGINES = ("vllm", "sglang", "trtllm")
SWITCHES = ("store_true", "bool")
SEPARATORS = {"&", "&&", "||", "|", ";"}


class Reference:
    """One engine's flags, looked up by name, alias and --no- negation."""

    def __init__(self, doc):
        self.doc = doc
        self.label = f"{doc['engine']} {doc['version']} ({doc['tag']})"
        self.flags = self.index(doc["flags"])
        self.subcommands = {name: self.index(sub["flags"]) for name, sub in doc.get("subcommands", {}).items()}

    @staticmethod
    def index(flags):
        out = {}
        for entry in flags.values():
            for name in [entry["name"]] + entry.get("aliases", []):
                out[name] = entry
            if entry.get("negation"):
                out[entry["negation"]] = dict(entry, type="store_true")
        return out

    def lookup(self, name, table):
        if name in table:
            return table[name]
        if self.doc["engine"] == "vllm" and name.startswith("--"):
            # vLLM's FlexibleArgumentParser reads --a_b as --a-b.
            return table.get("--" + name[2:].replace("_", "-"))
        return None


class Report:
    def __init__(self):
        self.errors, self.scripts, self.commands, self.flags, self.yamls = [], 0, {}, 0, set()

    def error(self, where, text):
        self.errors.append(f"{where}: {text}")


# --- finding commands in a script --------------------------------------------------------

def logical_lines(text):
    """The script's lines with `\\` continuations joined."""
    return re.sub(r"\\\n", " ", text).splitlines()


def command_of(tokens):
    """(engine, subcommand, argument tokens) of an engine command line, else None."""
    while tokens and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", tokens[0]):
        tokens = tokens[1:]
    cut = next((i for i, t in enumerate(tokens) if t in SEPARATORS), len(tokens))
    tokens = tokens[:cut]
    if tokens[:2] == ["vllm", "serve"]:
        return "vllm", None, tokens[2:]
    if len(tokens) >= 3 and tokens[0] in ("python3", "python") and tokens[1:3] == ["-m", "sglang.launch_server"]:
        return "sglang", None, tokens[3:]
    if tokens[:1] == ["trtllm-serve"]:
        if tokens[1:2] == ["disaggregated"]:
            return "trtllm", "disaggregated", tokens[2:]
        return "trtllm", None, tokens[1:]
    return None


def split_tokens(line):
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return []


# --- values ------------------------------------------------------------------------------

# A value that is one shell expansion: $VAR, ${VAR} or $((arithmetic)); its number is only
# known when the script runs, so it is accepted where an integer is expected.
WHOLE_EXPANSION = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$\(\(.*\)\)")
HUMAN_INT = re.compile(r"^\d+(\.\d+)?[kKmMgGtT]$")


def is_expansion(value):
    return "$" in value or "`" in value


def value_problem(entry, value):
    """Why `value` does not fit the flag, or None."""
    kind = entry["type"]
    if kind == "list":
        kind = entry.get("item", "str")
    if kind in ("str", "json_or_str") and (is_expansion(value) or not value.lstrip().startswith("{")):
        return None
    if kind == "int":
        if re.fullmatch(r"-?\d+", value) or WHOLE_EXPANSION.fullmatch(value):
            return None
        if entry.get("human_readable") and HUMAN_INT.match(value):
            return None
        return f"expects an integer, got {value!r}"
    if kind == "float":
        try:
            float(value)
            return None
        except ValueError:
            return f"expects a number, got {value!r}"
    if kind == "choice":
        return choice_problem(entry, value)
    if kind in ("json", "json_or_str"):
        try:
            json.loads(value)
            return None
        except ValueError as e:
            return f"expects JSON, got {value!r} ({e})"
    return None


def choice_problem(entry, value):
    choices = [str(c) for c in entry.get("choices", [])]
    if value in choices or (entry.get("case_insensitive") and value.lower() in [c.lower() for c in choices]):
        return None
    return f"expects one of {', '.join(choices)}; got {value!r}"


# --- checking one command ----------------------------------------------------------------

def check_command(ref, sub, args, where, script_dir, report):
    table = ref.subcommands[sub] if sub else ref.flags
    label = ref.label + (f" {sub}" if sub else "")
    positional = [] if sub or ref.doc["engine"] == "sglang" else args[:1]
    if positional and positional[0].startswith("-"):
        report.error(where, f"{label}: the command names no model before its flags")
        positional = []
    i = len(positional)
    while i < len(args):
        i = check_flag(ref, table, label, args, i, where, script_dir, report)


def check_flag(ref, table, label, args, i, where, script_dir, report):
    """Checks the flag at args[i] and its values; returns the index after them."""
    token = args[i]
    if not token.startswith("-"):
        report.error(where, f"{label}: unexpected argument {token!r}")
        return i + 1
    name, _, inline = token.partition("=")
    base, dot, _ = name.partition(".")
    entry = ref.lookup(base if dot else name, table)
    report.flags += 1
    if entry is None:
        report.error(where, f"{label}: unknown flag {name}")
        return skip_values(args, i + 1)
    values = [inline] if "=" in token else args[i + 1:skip_values(args, i + 1)]
    end = i + 1 + (0 if "=" in token else len(values))
    if dot:
        if entry["type"] not in ("json", "json_or_str"):
            report.error(where, f"{label}: {name}: only JSON flags take .key parts")
        return end if values else end
    check_values(entry, label, name, values, where, report)
    if entry.get("yaml") and values:
        check_yaml(ref, entry["yaml"], script_dir / values[0], where, report)
    return end


def skip_values(args, i):
    while i < len(args) and not (args[i].startswith("-") and len(args[i]) > 1 and not args[i][1].isdigit()):
        i += 1
    return i


def check_values(entry, label, name, values, where, report):
    kind = entry["type"]
    if kind in SWITCHES:
        if values:
            report.error(where, f"{label}: {name} is a switch and takes no value, got {values[0]!r}")
        return
    nargs = entry.get("nargs")
    if not values:
        if nargs not in ("?", "*"):
            report.error(where, f"{label}: {name} needs a value")
        return
    if kind != "list" and nargs not in ("+", "*") and len(values) > 1:
        report.error(where, f"{label}: {name} takes one value, got {len(values)}: {' '.join(values)}")
    for value in values:
        problem = value_problem(entry, value)
        if problem:
            report.error(where, f"{label}: {name} {problem}")


# --- YAML --------------------------------------------------------------------------------

def check_yaml(ref, schema_name, path, where, report):
    where = f"{where} ({path.name})"
    if str(path) in report.yamls:
        return
    report.yamls.add(str(path))
    schema = ref.doc.get("yaml", {}).get(schema_name)
    if schema is None:
        report.error(where, f"{ref.label}: no YAML schema {schema_name} in the reference")
        return
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        report.error(where, f"{ref.label}: the YAML file does not parse: {e}")
        return
    check_node(ref, schema, data, schema_name, where, report)


def check_node(ref, spec, value, key, where, report):
    kind = spec["type"]
    if value is None:
        if not spec.get("nullable") and kind != "json":
            report.error(where, f"{ref.label}: YAML key {key} may not be null")
        return
    if kind in ("object", "object_or_str") and isinstance(value, dict):
        for k, v in value.items():
            sub = spec["keys"].get(k)
            if sub is None:
                report.error(where, f"{ref.label}: unknown YAML key {key}.{k}")
            else:
                check_node(ref, sub, v, f"{key}.{k}", where, report)
        return
    problem = yaml_type_problem(spec, kind, value)
    if problem:
        report.error(where, f"{ref.label}: YAML key {key} {problem}")


def yaml_type_problem(spec, kind, value):
    if kind == "object_or_str" and isinstance(value, str):
        return None
    if kind in ("object", "object_or_str"):
        return f"expects a mapping, got {value!r}"
    if kind == "list":
        if not isinstance(value, list):
            return f"expects a list, got {value!r}"
        item = {"type": spec.get("item", "str")}
        return next((p for p in (yaml_type_problem(item, item["type"], v) for v in value) if p), None)
    checks = {
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool), "store_true": lambda v: isinstance(v, bool),
        "str": lambda v: isinstance(v, str),
        "choice": lambda v: choice_problem(spec, str(v)) is None,
    }
    if kind in checks and not checks[kind](value):
        return f"expects {kind}" + (f" (one of {', '.join(spec['choices'])})" if kind == "choice" else "") + \
            f", got {value!r}"
    return None


YAML_SCHEMAS = {"extra_llm_api_options.yaml": "llm_api_options", "disagg_config.yaml": "disagg_config"}


def check_companions(refs, script_dir, where, report):
    """Every TensorRT-LLM YAML file beside a script, referenced or not."""
    for path in sorted(script_dir.glob("*.yaml")):
        schema = next((s for suffix, s in YAML_SCHEMAS.items() if path.name.endswith(suffix)), None)
        if schema is None:
            report.error(f"{where} ({path.name})", "a YAML file no engine reference describes")
        else:
            check_yaml(refs["trtllm"], schema, path, where, report)


def check_script(refs, path, report):
    report.scripts += 1
    where = str(path)
    for line in logical_lines(path.read_text()):
        found = command_of(split_tokens(line))
        if found:
            engine, sub, args = found
            report.commands[engine] = report.commands.get(engine, 0) + 1
            check_command(refs[engine], sub, args, where, path.parent, report)
    check_companions(refs, path.parent, where, report)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ref_dir, corpus = Path(sys.argv[1]), Path(sys.argv[2])
    refs = {e: Reference(json.loads((ref_dir / f"{e}.json").read_text())) for e in ENGINES}
    report = Report()
    scripts = sorted((corpus / "scripts").glob("*/launch.sh"))
    for path in scripts:
        check_script(refs, path, report)
    for e in report.errors:
        print(e, file=sys.stderr)
    counts = ", ".join(f"{e} {report.commands.get(e, 0)}" for e in ENGINES)
    print(f"engine args: {report.scripts} scripts, {sum(report.commands.values())} commands ({counts}), "
          f"{report.flags} flags, {len(report.yamls)} yaml files checked; "
          f"{len(report.errors)} errors" + ("" if report.errors else ", clean"))
    sys.exit(1 if report.errors or not scripts else 0)


if __name__ == "__main__":
    main()
