#!/bin/sh
# A stand-in for a model benchmark: "generates" 64 tokens per sequence of
# the batch, each costing a fixed amount of arithmetic per layer of the
# model, times it, prints its throughput and writes it as JSON.
#   sh bench.sh MODEL BATCH OUTPUT.json
set -eu
model=$1 batch=$2 out=$3
case $model in
  tiny) layers=2 ;;
  small) layers=6 ;;
  *) echo "bench.sh: unknown model '$model' (tiny or small)" >&2; exit 2 ;;
esac
tokens=$((batch * 64))
start=$(date +%s%N)
awk -v n=$((tokens * layers * 100)) 'BEGIN { for (i = 0; i < n; i++) x += i % 7; if (x < 0) print x }'
end=$(date +%s%N)
mkdir -p "$(dirname "$out")"
awk -v tokens=$tokens -v ns=$((end - start)) -v out="$out" 'BEGIN {
  seconds = ns / 1e9
  printf "throughput: %.1f tokens/s\n", tokens / seconds
  printf "{\"tokens\": %d, \"seconds\": %.6f, \"tokens_per_second\": %.1f}\n", tokens, seconds, tokens / seconds > out
}'
