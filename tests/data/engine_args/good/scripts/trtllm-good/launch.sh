#!/bin/sh
cd "$(dirname "$0")"
trtllm-serve org/model \
  --backend pytorch \
  --tp_size 8 \
  --ep_size 8 \
  --kv_cache_free_gpu_memory_fraction 0.90 \
  --extra_llm_api_options launch.extra_llm_api_options.yaml
