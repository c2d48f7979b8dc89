#!/bin/sh
# Hand-made: a misspelled vLLM flag, a non-integer for an int flag, a value for a switch, bad JSON.
set -e
if [ "${NODE_RANK:-0}" = 0 ]; then
VLLM_LOGGING_LEVEL=INFO vllm serve org/model \
  --tensor-paralel-size 8 \
  --max-num-seqs eight \
  --enable-expert-parallel true \
  --kv-transfer-config '{"kv_connector": NixlConnector}'
fi
