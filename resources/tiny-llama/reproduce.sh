#!/usr/bin/env bash
# Rebuilds the bundled tiny LLaMA-style model (RMSNorm, rotary embeddings, SwiGLU, grouped-query attention)
# from nothing but this repository, with the project's own CLI: the synthetic corpus (seed 0, as the tiny
# GPT-2's), the tiny GPT-2's 2048-token BPE, token files, then pretraining.
#   resources/tiny-llama/reproduce.sh [WORK_DIR]              (after ./bootstrap.sh build)
#   NF_DEVICE=cuda resources/tiny-llama/reproduce.sh [WORK_DIR]   (how the bundled weights were made)
# The result is WORK_DIR/pretrain/final; copy its files over resources/tiny-llama/ to re-bundle. A CPU run
# gives a model of the same quality, not the same bits (float reduction order differs between devices).
set -euo pipefail
cd "$(dirname "$0")/../.."
cli="${NF_CLI:-build/app/normfree-cli}"
work="${1:-runs/tiny-llama}"
mkdir -p "$work"

if [ ! -f "$work/data/train.bin" ]; then
  "$cli" corpus --out "$work/data" --overwrite --seed 0 --train-mb 100 --val-mb 2 --alt-mb 2
  for split in train val alt; do
    "$cli" tokenize "$work/data/$split.txt" --tokenizer resources/tiny-gpt2 --out "$work/data/$split.bin" --overwrite
  done
fi
# The shape: the tiny GPT-2's depth, width, context and tied unembedding; 2 key/value heads; a SwiGLU MLP of
# 344 (≈ 8/3 · 128, LLaMA's ratio, so its three matrices hold as many weights as the GPT-2's two of 512).
# pretrain initialises the weights itself, from --seed.
"$cli" init --out "$work/shape" --overwrite --family llama --layers 4 --heads 4 --kv-heads 2 --d-model 128 \
  --mlp-width 344 --context 128 --vocab 2048 --seed 0
cp resources/tiny-gpt2/vocab.json resources/tiny-gpt2/merges.txt "$work/shape/"
# LR 1e-3, not the tiny GPT-2's 2e-3: at 2e-3 the IOI circuit formed 1,500 steps later and weaker (see README.md).
"$cli" pretrain "$work/pretrain" --model "$work/shape" --train "$work/data/train.bin" \
  --eval "$work/data/val.bin,$work/data/alt.bin" --steps 10000 --lr 1e-3 --min-lr 2e-4 --warmup 300 \
  --micro-batch 16 --context 128 --seed 0 --eval-interval 1000 --eval-tokens 65536 --checkpoint-interval 500 \
  --device "${NF_DEVICE:-cpu}"
