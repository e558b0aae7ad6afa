#!/usr/bin/env bash
# Exploratory (not part of the product): which tiny LLaMA recipe grows an IOI circuit, on the GPU.
# usage: runs/sweep/sweep.sh CLI OUT STEPS
set -uo pipefail
C=$1 OUT=$2 STEPS=$3
W=/tmp/sweep; mkdir -p $W/data
start=$SECONDS
$C corpus --out $W/data --seed 0 --train-mb 100 --val-mb 2 --alt-mb 2 > /dev/null
for s in train val; do $C tokenize $W/data/$s.txt --tokenizer resources/tiny-gpt2 --out $W/data/$s.bin > /dev/null & done; wait
echo "data ready after $((SECONDS - start)) s" | tee -a $OUT/sweep.txt
$C ioi --tokenizer resources/tiny-gpt2 --out $W/ioi.json > /dev/null
variant() {  # name lr init-args...
  local name=$1 lr=$2; shift 2
  $C init --out $W/$name-shape --layers 4 --heads 4 --d-model 128 --context 128 --vocab 2048 --seed 0 "$@" > /dev/null
  cp resources/tiny-gpt2/vocab.json resources/tiny-gpt2/merges.txt $W/$name-shape/
  $C pretrain $W/$name --model $W/$name-shape --train $W/data/train.bin --eval $W/data/val.bin --steps $STEPS \
    --lr $lr --min-lr 2e-4 --warmup 300 --micro-batch 16 --context 128 --seed 0 --eval-interval 1000 \
    --eval-tokens 65536 --checkpoint-interval 1000 --device cuda > $W/$name.log 2>&1 &
  local pid=$! seen=""
  while kill -0 $pid 2>/dev/null || [ -n "$(ls $W/$name/checkpoints 2>/dev/null | grep step | grep -v -F "$seen")" ]; do
    for d in $(ls $W/$name/checkpoints 2>/dev/null | grep '^step-'); do
      case " $seen " in *" $d "*) continue ;; esac
      step=$((10#${d#step-}))
      r=$($C analyze ioi $W/$name --step $step --prompts $W/ioi.json --device cuda 2>/dev/null) && {
        seen="$seen $d"; echo "$name step $step $r" >> $OUT/ioi.txt; }
    done
    sleep 1
  done
  wait $pid; echo "$name pretrain exit $? after $((SECONDS - start)) s" | tee -a $OUT/sweep.txt
  grep '"type":"eval"' $W/$name/metrics.jsonl | python3 -c "
import json,sys
for l in sys.stdin: j=json.loads(l); print('$name', j['step'], round(j['mean_loss'],4))" >> $OUT/evals.txt
}
variant llama-kv2 2e-3 --family llama --kv-heads 2 --mlp-width 344 &
variant llama-mha 2e-3 --family llama --mlp-width 344 &
variant llama-kv2-lr1e3 1e-3 --family llama --kv-heads 2 --mlp-width 344 &
variant gpt2 2e-3 --family gpt2 &
wait
echo "all done after $((SECONDS - start)) s" | tee -a $OUT/sweep.txt
(cd $W && tar cf $OUT/models.tar llama-*/final/config.json llama-*/final/model.safetensors)
cat $OUT/ioi.txt | python3 -c "
import json,sys
for l in sys.stdin:
    n,_,s,j=l.split(' ',3); j=json.loads(j); print(n,s,round(j['mean_clean_logit_diff'],3),round(j['clean_accuracy'],3))" | sort -k1,1 -k2n
