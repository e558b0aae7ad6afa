#!/usr/bin/env bash
# Continued pretraining of a small model from the sweep (tools/small-models-sweep.sh) alone on the GPU, with
# large batches: the sweep's six runs side by side were launch-bound (~100k tokens/s each, 21 M tokens in
# all) and grew induction and IOI but no attention sinks, which need far more tokens.
#   tools/small-models-continue.sh CLI OUT SECONDS MODEL_FOLDER [LR]
# Trains on the sweep's data mix (random repeats CONTINUE_REPEATS, default 0.25; a share CONTINUE_DOCUMENTS
# of the windows at documents, default 0) until SECONDS have passed (Ctrl-C's checkpoint), then measures the
# four phenomena on that checkpoint. CONTINUE_DEVICE (default cuda), CONTINUE_MICRO (default 128 sequences
# of 256 tokens) and CONTINUE_TRAIN_MB allow a dry run on a CPU. Writes OUT/continued.tar
# (the model folder, in pieces of 15 MiB: OUT/continued.tar.NN) and OUT/continue-results.tar.
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/small-models-lib.sh
cli=$1 out=$2 seconds=$3 model=$4 lr=${5:-2e-3}
small_models_setup nf-small-continue continue.log "${CONTINUE_DEVICE:-cuda}" "$out"
repeats=${CONTINUE_REPEATS:-0.25}
small_models_data "${CONTINUE_TRAIN_MB:-200}" "$repeats" || { log "data failed: $(tail -3 "$work/data.log")"; exit 1; }
log "data ready"

bf16=(); [ "$device" = cpu ] || bf16=(--bf16)
run=$work/run
# finetune: from the model's weights (pretrain would initialise them afresh).
timeout -s INT "$seconds" "$cli" finetune "$run" --model "$model" --train "$work/data/train-r$repeats.bin" \
  --steps 1000000 --document-windows "${CONTINUE_DOCUMENTS:-0}" \
  --lr "$lr" --min-lr "$(python3 -c "print($lr / 10)")" --weight-decay 0.1 --warmup 100 \
  --micro-batch "${CONTINUE_MICRO:-128}" --accumulation 1 --context 256 --seed 1 --device "$device" "${bf16[@]}" \
  --eval-interval 0 --checkpoint-interval 0 >"$work/pretrain.log" 2>&1
last=$(ls "$run/checkpoints" | grep '^step-' | sort | tail -1)
step=$((10#${last#step-}))
log "trained $step steps of ${CONTINUE_MICRO:-128} × 256 tokens (stopped: $(tail -c 300 "$work/pretrain.log" | tr '\r\n' '  ' | tail -c 120))"

small_models_phenomena "$work/analyses" "{\"step\": $step}" "$run" --step "$step" | tee "$work/phenomena.json"
mkdir -p "$work/continued"
cp "$run/checkpoints/$last/config.json" "$run/checkpoints/$last/model.safetensors" $tok/vocab.json $tok/merges.txt \
  "$work/continued/"
(cd "$work" && tar cf "$out/continue-results.tar" continue.log data.log pretrain.log phenomena.json analyses \
  run/metrics.jsonl run/config.json)
(cd "$work" && tar cf - continued | split -b 15M -d - "$out/continued.tar.")
log "done"
