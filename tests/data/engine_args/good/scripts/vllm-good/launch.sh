#!/bin/sh
# Hand-made: flags of every kind, written as ShardLab writes them.
set -e
: "${HEAD_IP:?}" "${NODE_RANK:?}"
if [ "$NODE_RANK" = 0 ]; then
VLLM_ALL2ALL_BACKEND=deepep_low_latency vllm serve "org/model" \
  --tensor-parallel-size 8 \
  --data-parallel-size 2 \
  --enable-expert-parallel \
  --no-enable-prefix-caching \
  --eplb-config '{"num_redundant_experts":32}' \
  --max-model-len 8k \
  --gpu-memory-utilization 0.92 \
  --dtype bfloat16 \
  --kv-transfer-config "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}" \
  --data-parallel-address "$HEAD_IP" \
  --data-parallel-rpc-port 13345
else
vllm serve org/model \
  --tensor-parallel-size 8 \
  --headless \
  --data-parallel-start-rank "$((NODE_RANK * 1))" \
  --data-parallel-address "$HEAD_IP"
fi
