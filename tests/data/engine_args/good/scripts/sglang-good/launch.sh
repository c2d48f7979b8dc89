#!/bin/sh
python3 -m sglang.launch_server \
  --model-path 'org/it'"'"'s' \
  --tp-size 16 \
  --dist-init-addr "$HEAD_IP:5000" \
  --nnodes 2 \
  --node-rank "$NODE_RANK" \
  --enable-dp-attention \
  --moe-a2a-backend deepep \
  --disaggregation-mode prefill
