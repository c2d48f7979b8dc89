#!/usr/bin/env bash
# A disaggregated scenario on 100,000 nodes: the search stays bounded in memory and time
# (1.5 GB of address space and 60 s here; it took 4.5 GB and minutes before the bound on
# splits), a budgeted search says how many splits it examined, and exact refuses clearly.
#   big_cluster.sh CLI REPO OUT_DIR
set -u
cli=$1 repo=$2 out=$3
mkdir -p "$out"
python3 - "$repo" "$out/big.json" <<'PY'
import json, sys
repo, path = sys.argv[1], sys.argv[2]
s = json.load(open(repo + "/resources/examples/disaggregation/llama3-70b-8gpu-8000-1000-disaggregated.json"))
c = json.load(open(repo + "/resources/clusters/h100-8.json"))
c["nodes"] = 100000
s["cluster"] = c
json.dump(s, open(path, "w"))
PY
fail() { echo "FAIL: $*"; exit 1; }
# The address-space bound, except under AddressSanitizer, whose shadow memory needs terabytes
# of address space (its run checks the time bound and the messages only).
limit=1500000
if ldd "$cli" 2>/dev/null | grep -q libasan; then limit=unlimited; fi
msg=$(ulimit -v "$limit"; timeout 60 "$cli" search --scenario "$out/big.json" --algo random --budget 2000 2>&1)
rc=$?
[ "$rc" -le 1 ] || fail "random search: exit $rc: $msg"
[[ "$msg" =~ [0-9]+" of the cluster's 99999 prefill:decode splits examined" ]] || fail "random search: $msg"
msg=$(ulimit -v "$limit"; timeout 60 "$cli" search --scenario "$out/big.json" --algo exact 2>&1)
rc=$?
[ "$rc" -eq 1 ] || fail "exact: exit $rc: $msg"
[[ "$msg" == *"scenario.cluster.nodes: exact proves its answer over every prefill:decode split; this cluster has 99999"* ]] || fail "exact: $msg"
echo "100,000 nodes: bounded search and a clear refusal from exact"
