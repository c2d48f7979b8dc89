#!/bin/sh
# Hand-made: a TensorRT-LLM options file with a misspelled nested key and a wrong type.
cd "$(dirname "$0")"
trtllm-serve org/model \
  --backend pytorch \
  --tp_size 4 \
  --extra_llm_api_options launch.extra_llm_api_options.yaml
