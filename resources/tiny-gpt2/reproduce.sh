#!/usr/bin/env bash
# Rebuilds the bundled tiny GPT-2 from nothing but this repository, with the project's own CLI:
# the synthetic corpus (seed 0), a 2048-token BPE trained on it, token files, then pretraining.
#   resources/tiny-gpt2/reproduce.sh [WORK_DIR]        (after ./bootstrap.sh build; ~40 min on 2 cores)
# The result is WORK_DIR/pretrain/final; copy its files over resources/tiny-gpt2/ to re-bundle.
set -euo pipefail
cd "$(dirname "$0")/../.."
cli="${NF_CLI:-build/app/normfree-cli}"
work="${1:-runs/tiny-gpt2}"
mkdir -p "$work"

"$cli" corpus --out "$work/data" --overwrite --seed 0 --train-mb 100 --val-mb 2 --alt-mb 2
"$cli" train-tokenizer "$work/data/train.txt" --out "$work/shape" --vocab 2048 --overwrite
for split in train val alt; do
  "$cli" tokenize "$work/data/$split.txt" --tokenizer "$work/shape" --out "$work/data/$split.bin" --overwrite
done
# The shape (pretrain initialises the weights itself, from --seed).
"$cli" init --out "$work/shape" --overwrite --layers 4 --heads 4 --d-model 128 --context 128 --vocab 2048 --seed 0
"$cli" pretrain "$work/pretrain" --model "$work/shape" --train "$work/data/train.bin" \
  --eval "$work/data/val.bin,$work/data/alt.bin" --steps 9000 --lr 2e-3 --min-lr 2e-4 --warmup 300 \
  --micro-batch 16 --context 128 --seed 0 --eval-interval 1000 --eval-tokens 65536 --checkpoint-interval 500
