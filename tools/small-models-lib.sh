# Shared by tools/small-models-sweep.sh and tools/small-models-continue.sh (sourced from the repository's root,
# never run): their work folder, log, data and the four phenomena issue 39 asks of a bundled model.

# small_models_setup FOLDER_NAME LOG_NAME DEVICE OUT: sets work (emptied), device, tok, log; on a GPU one core
# per process is enough to launch kernels (16 idle OpenMP threads per process would only compete).
small_models_setup() {
  work=${TMPDIR:-/tmp}/$1
  small_models_log=$work/$2
  device=$3
  tok=resources/tiny-gpt2
  [ "$device" = cpu ] || export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
  rm -rf "$work" && mkdir -p "$work/data" "$4"
  small_models_start=$SECONDS
}
log() { echo "[$((SECONDS - small_models_start)) s] $*" | tee -a "$small_models_log"; }

# small_models_data TRAIN_MB [REPEATS…]: the tiny models' corpus (seed 0) and tokenizer, in work/data: for 0
# (the text alone, where the induction test draws its tokens) and each REPEATS share (default 0.25),
# train-rREPEATS.bin (after that share of the documents, a span of uniformly random tokens and its copy —
# the induction test's own kind of text), val.bin, alt.bin and ioi.json.
# Progress bars go to work/data.log.
small_models_data() {
  local d=$work/data mb=$1 p
  shift
  [ $# -gt 0 ] || set -- 0.25
  set -- $(printf '%s\n' 0 "$@" | sort -u)
  {
    "$cli" corpus --out "$d" --overwrite --seed 0 --train-mb "$mb" --val-mb 2 --alt-mb 2 || return 1
    for p in "$@"; do
      "$cli" tokenize "$d/train.txt" --tokenizer $tok --out "$d/train-r$p.bin" --overwrite --random-repeats "$p" &
    done
    for split in val alt; do "$cli" tokenize "$d/$split.txt" --tokenizer $tok --out "$d/$split.bin" --overwrite & done
    wait
    "$cli" ioi --tokenizer $tok --count 480 --out "$d/ioi.json"
  } >>"$work/data.log" 2>&1 && for p in "$@"; do ls "$d/train-r$p.bin" >/dev/null || return 1; done &&
    ls "$d"/val.bin "$d"/alt.bin >/dev/null
}

# small_models_rare_jobs JOBS REPEATS…: documents of rare jobs (normfree-cli rare-jobs, from the text's own
# bigrams; docs/DATA.md) in work/data. JOBS "mixN": one after each document of train-rREPEATS.bin (into
# train-rREPEATS-mixN.bin) and of val.bin (val-mixN.bin, another seed); "aloneN": SWEEP_ALONE_DOCUMENTS
# (default 300,000, ~100 M tokens) alone (train-rREPEATS-aloneN.bin; the repeats share is not used) and 300
# of at least 257 tokens to measure on (val-aloneN.bin); "sentN": as mixN, with the filler and its events
# between each document's sentences instead (rare-jobs --between-sentences 24: the text's heads idle most of
# the time). N backcopy offsets: 4 share one kind of event (the CPU preview's "sparse"), more are kinds of
# their own ("sparse8").
small_models_rare_jobs() {
  local jobs=$1 d=$work/data p kind
  shift
  local offsets=${jobs//[a-z]/}
  kind=(--offsets "$offsets" --separate-offsets)
  [ "$offsets" = 4 ] && kind=()
  [[ $jobs == sent* ]] && kind+=(--between-sentences 24 --tokenizer "$tok")
  {
    for p in "$@"; do
      if [[ $jobs == mix* || $jobs == sent* ]]; then
        "$cli" rare-jobs "$d/train-r0.bin" "${kind[@]}" --after "$d/train-r$p.bin" --out "$d/train-r$p-$jobs.bin" \
          --overwrite || return 1
      else
        "$cli" rare-jobs "$d/train-r0.bin" "${kind[@]}" --documents "${SWEEP_ALONE_DOCUMENTS:-300000}" \
          --out "$d/train-r$p-$jobs.bin" --overwrite || return 1
      fi
    done
    if [[ $jobs == mix* || $jobs == sent* ]]; then
      "$cli" rare-jobs "$d/train-r0.bin" "${kind[@]}" --seed 1 --after "$d/val.bin" --out "$d/val-$jobs.bin" --overwrite
    else
      "$cli" rare-jobs "$d/train-r0.bin" "${kind[@]}" --seed 1 --documents 300 --min-length 257 --out "$d/val-$jobs.bin" \
        --overwrite
    fi
  } >>"$work/data.log" 2>&1
}

# small_models_phenomena DIR FIELDS MODEL [ANALYZE_OPTIONS…]: sinks, norms, induction and IOI of MODEL (a model
# folder or a run; --step N for a checkpoint) into DIR, and one JSON line: FIELDS (a JSON object; a "metrics"
# path becomes the last evaluation of each set) with the measurements and issue 39's four thresholds met.
# Sinks and norms are measured twice: on consecutive chunks of the validation split, as GPT-2 is analysed,
# and on sequences that start at a document with the end-of-text token before it (a BOS, as a model
# pretrained on document windows sees its data); the thresholds take the better of the two, named "on".
# The sink threshold is issue 39's: the per-query sink rate (`query_sink_rate`); the paper's per-sequence
# `sink_rate`, which earlier rounds reported, is kept beside it. VAL (default work/data/val.bin) is the
# validation split of the model's corpus; where it is not the text's, the sinks on the text's documents are
# measured too ("text_documents").
small_models_phenomena() {
  local dir=$1 fields=$2 model=$3 d=$work/data starts val=${VAL:-$work/data/val.bin}
  shift 3
  mkdir -p "$dir"
  for starts in chunks documents; do
    local flag=(); [ $starts = documents ] && flag=(--document-starts)
    "$cli" analyze sinks "$model" "$@" --data "$val" --sequences 64 "${flag[@]}" --device "$device" \
      --out "$dir/sinks-$starts.json" >/dev/null &&
      "$cli" analyze norms "$model" "$@" --data "$val" --sequences 32 "${flag[@]}" --device "$device" \
        --out "$dir/norms-$starts.json" >/dev/null || return 1
  done
  [ "$val" = "$d/val.bin" ] || "$cli" analyze sinks "$model" "$@" --data "$d/val.bin" --sequences 64 --document-starts \
    --device "$device" --out "$dir/sinks-text-documents.json" >/dev/null || return 1
  "$cli" analyze induction "$model" "$@" --span 50 --from "$d/train-r0.bin" --device "$device" \
    >"$dir/induction.json" &&
    "$cli" analyze ioi "$model" "$@" --prompts "$d/ioi.json" --device "$device" >"$dir/ioi.json" &&
    python3 - "$dir" "$fields" <<'PY'
import json, sys
folder, fields = sys.argv[1], json.loads(sys.argv[2])
load = lambda kind: json.load(open(f"{folder}/{kind}.json"))
induction, ioi = load("induction"), load("ioi")
def measured(starts):
    sinks, norms = load(f"sinks-{starts}"), load(f"norms-{starts}")
    ratios = [row["position0"]["mean"] / row["rest"]["mean"] for row in norms["residual_norms"]
              if row["point"].endswith("resid_pre")]
    return {"query_sink_rate": sinks["query_sink_rate"], "sink_rate": sinks["sink_rate"],
            "max_pos0_ratio": max(ratios), "pos0_ratio_by_layer": ratios}
if "metrics" in fields:
    evals = {}
    for r in map(json.loads, open(fields.pop("metrics"))):
        if r.get("type") == "eval": evals[r["file"].rsplit("/", 1)[-1]] = r["mean_loss"]
    fields["eval"] = evals
chunks, documents = measured("chunks"), measured("documents")
try:
    text = load("sinks-text-documents")
    fields["text_documents"] = {"query_sink_rate": text["query_sink_rate"], "sink_rate": text["sink_rate"]}
except FileNotFoundError:
    pass
on = max(("chunks", chunks), ("documents", documents), key=lambda m: (m[1]["query_sink_rate"], m[1]["max_pos0_ratio"]))
induction_ratio = induction["second_copy_loss"] / induction["first_copy_loss"]
row = dict(fields, on=on[0], **on[1], chunks=chunks, documents=documents,
           induction_first=induction["first_copy_loss"], induction_second=induction["second_copy_loss"],
           induction_ratio=induction_ratio, ioi_logit_diff=ioi["mean_clean_logit_diff"],
           ioi_accuracy=ioi["clean_accuracy"])
row["passes"] = [row["query_sink_rate"] >= 0.2, row["max_pos0_ratio"] >= 4, induction_ratio <= 0.35,
                 row["ioi_accuracy"] >= 0.9]
print(json.dumps(row))
PY
}
