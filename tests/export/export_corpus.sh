#!/usr/bin/env bash
# The export corpus: every launch script ShardLab writes for the shipped scenarios and
# examples (the exact and Megatron plans, one-pool and disaggregated, for each engine),
# plus scripts whose checkpoint name is a shell-injection payload (through --model and
# through a HuggingFace config's _name_or_path). Every script must pass `bash -n`,
# `dash -n` and shellcheck at its default severity.
#
#   export_corpus.sh CLI REPO OUT     writes the corpus into OUT and checks it
#
# Later export work extends the corpus here; tests/fuzz/export_fuzz.py runs the scripts.
set -euo pipefail
cli=$1 repo=$2 out=$3
for tool in bash dash shellcheck; do
  command -v "$tool" >/dev/null || { echo "export_corpus: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 2; }
done
rm -rf "$out"
mkdir -p "$out/plans" "$out/scripts"

scenarios=("$repo"/resources/scenarios/*.json "$repo"/resources/examples/disaggregation/*.json
           "$repo/resources/examples/moe/deepseek-v3-72gpu.json")
engines=(vllm sglang trtllm)
# Each engine's certified runnable optimum and its recipe: the plans export accepts (it
# refuses a plan the engine does not run as planned).
for sc in "${scenarios[@]}"; do
  b=$(basename "$sc" .json)
  for engine in "${engines[@]}"; do
    "$cli" search --scenario "$sc" --engine "$engine" --runnable --algo exact --out "$out/plans/$b.exact.$engine.json" >/dev/null
    "$cli" megatron --scenario "$sc" --engine "$engine" --runnable --out "$out/plans/$b.megatron.$engine.json" >/dev/null
  done
done

export_one() { # plan engine name [export options...]
  local plan=$1 engine=$2 name=$3
  shift 3
  mkdir -p "$out/scripts/$name"
  if ! "$cli" export --plan "$plan" --engine "$engine" --out "$out/scripts/$name/launch.sh" "$@" >/dev/null 2>"$out/scripts/$name/stderr"; then
    echo "export_corpus: export failed: $name: $(cat "$out/scripts/$name/stderr")" >&2
    exit 1
  fi
}

# Each plan's export and evaluation as JSON, for the memory check at the end.
mkdir -p "$out/memory"
memory_one() { # plan engine name [options...]
  local plan=$1 engine=$2 name=$3
  shift 3
  "$cli" export --plan "$plan" --engine "$engine" --json "$@" >"$out/memory/$name.export.json"
  "$cli" evaluate --plan "$plan" --json "$@" >"$out/memory/$name.eval.json"
}

for plan in "$out"/plans/*.json; do
  engine=${plan%.json}
  engine=${engine##*.}
  export_one "$plan" "$engine" "$(basename "$plan" .json)"
  memory_one "$plan" "$engine" "$(basename "$plan" .json)"
done

# The shipped example plan carries no scenario: it is exported with its own, by the engines
# that run it as planned (TensorRT-LLM's export has no all-to-all exchange).
for engine in vllm sglang; do
  export_one "$repo/resources/examples/moe/deepseek-v3-72gpu-ep72.plan.json" "$engine" "deepseek-v3-72gpu-ep72.$engine" \
    --scenario "$repo/resources/examples/moe/deepseek-v3-72gpu.json"
  memory_one "$repo/resources/examples/moe/deepseek-v3-72gpu-ep72.plan.json" "$engine" "deepseek-v3-72gpu-ep72.$engine" \
    --scenario "$repo/resources/examples/moe/deepseek-v3-72gpu.json"
done

# Checkpoint names a hostile config or a careless user might give. The --model path
# refuses control characters; _name_or_path goes through import-hf.
mapfile -t payloads <<'PAYLOADS'
org/$((touch pwned) )
org/$((PWNVAR))
org/$HOME
org/$HEAD_IP
org/$NODE_RANK
org/${HOME}
org/`touch pwned`
org/$(touch pwned)
org/it's
org/"quoted"
org/back\slash
org/a b
org/;touch pwned
org/|touch pwned
org/&touch pwned
org/*
org/~
org/#x
org/!x
org/$'x'
org/a\$b
PAYLOADS
carriers=(llama3-70b-8gpu.megatron llama3-70b-64gpu-8000-1000-aggregated.exact
          llama3-70b-8gpu-8000-1000-disaggregated.exact llama3-70b-64gpu-8000-1000-disaggregated.exact
          deepseek-v3-256gpu.exact)
i=0
for p in "${payloads[@]}"; do
  for c in "${carriers[@]}"; do
    for engine in "${engines[@]}"; do
      export_one "$out/plans/$c.$engine.json" "$engine" "payload$i.$c.$engine" --model "$p"
    done
  done
  # The same payload as a HuggingFace config's _name_or_path: the imported model names
  # the checkpoint the script loads.
  python3 - "$repo/tests/data/hf/llama3-70b.config.json" "$out/hf$i.json" "$p" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["_name_or_path"] = sys.argv[3]
json.dump(c, open(sys.argv[2], "w"))
PY
  "$cli" import-hf "$out/hf$i.json" --out "$out/hf$i.model.json" >/dev/null
  python3 - "$repo/resources/scenarios/llama3-70b-8gpu.json" "$out/hf$i.model.json" "$out/hf$i.scenario.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["model"] = json.load(open(sys.argv[2]))
json.dump(s, open(sys.argv[3], "w"))
PY
  for engine in "${engines[@]}"; do
    "$cli" megatron --scenario "$out/hf$i.scenario.json" --engine "$engine" --runnable --out "$out/hf$i.$engine.plan.json" >/dev/null
    export_one "$out/hf$i.$engine.plan.json" "$engine" "hf$i.$engine"
  done
  i=$((i + 1))
done

scripts=("$out"/scripts/*/launch.sh)
fail=0
for s in "${scripts[@]}"; do
  bash -n "$s" 2>"$s.bash" || { echo "bash -n fails: $s: $(head -1 "$s.bash")" >&2; fail=1; }
  dash -n "$s" 2>"$s.dash" || { echo "dash -n fails: $s: $(head -1 "$s.dash")" >&2; fail=1; }
  if grep -q "shellcheck disable" "$s"; then echo "a disable directive in $s" >&2; fail=1; fi
done
if ! shellcheck "${scripts[@]}" >"$out/shellcheck.txt" 2>&1; then
  echo "shellcheck reports (first lines; all in $out/shellcheck.txt):" >&2
  head -30 "$out/shellcheck.txt" >&2
  fail=1
fi
[ -e pwned ] && { echo "export_corpus: a payload ran while writing the corpus" >&2; fail=1; }
echo "export corpus: ${#scripts[@]} scripts; bash -n, dash -n and shellcheck: $([ $fail = 0 ] && echo clean || echo FAILED)"
# Every engine command and options file against the engines' own argument definitions.
python3 "$repo/tests/export/check_engine_args.py" "$repo/tests/data/engine_args" "$out" || fail=1
# Every pool's memory fraction holds its plan's batch by the memory model, and its token
# budget covers the sequences a rank runs (docs/launch.md, "Memory settings").
python3 "$repo/tests/export/check_memory.py" "$out/memory" || fail=1
# The memory check itself sees a fraction too small for the batch: one export with its
# fraction lowered in the command must fail it.
mkdir -p "$out/memory-tampered"
victim=$(ls "$out/memory"/*.exact.vllm.export.json | head -1)
cp "${victim%.export.json}.eval.json" "$out/memory-tampered/"
sed -E 's/--gpu-memory-utilization [0-9.]+/--gpu-memory-utilization 0.10/g; s/"written_fraction": [0-9.]+/"written_fraction": 0.1/' \
  "$victim" >"$out/memory-tampered/$(basename "$victim")"
if python3 "$repo/tests/export/check_memory.py" "$out/memory-tampered" >/dev/null 2>&1; then
  echo "export_corpus: check_memory.py accepted a fraction of 0.10" >&2
  fail=1
fi
exit $fail
