#!/bin/sh
# Hand-made: a value not among an SGLang flag's choices.
python3 -m sglang.launch_server --model-path org/model \
  --tp-size 8 \
  --disaggregation-mode both \
  --mem-fraction-static "$FRACTION"
