#!/usr/bin/env python3
"""Independent reference for the downstream benchmarks (tests/core/test_benchmarks.cpp).

Written from lm-evaluation-harness's definitions (lm_eval/tasks/*/*.yaml and utils.py, lm_eval/api/task.py's
construct_requests and process_results, lm_eval/models/huggingface.py's _encode_pair and
_loglikelihood_tokens, lm_eval/api/metrics.py), zero-shot; it shares no code with the C++ engine. Tokens come
from bpe_reference.py (GPT-2 byte-level BPE), logits from gpt2_reference.py (float64).

usage: lm_eval_reference.py TASK FILE MODEL_DIR OUT_JSON
  TASK  hellaswag | piqa | winogrande | boolq | arc_easy | arc_challenge | lambada
  OUT   {"loglikelihoods": [[per choice] per item], "greedy": [...], "pred": [...], "pred_norm": [...],
         "gold": [...], "acc", "acc_norm", "acc_stderr", "perplexity"}
"""
import json
import math
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe_reference  # noqa: E402
import gpt2_reference  # noqa: E402


def hellaswag_preprocess(text):
    text = text.strip()
    text = text.replace(" [title]", ". ")
    text = re.sub("\\[.*?\\]", "", text)
    text = text.replace("  ", " ")
    return text


def documents(task, path):
    docs = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    if task == "piqa" and "label" not in docs[0]:
        labels = [int(x) for x in open(path[: -len(".jsonl")] + "-labels.lst") if x.strip()]
        for doc, label in zip(docs, labels):
            doc["label"] = label
    return docs


def requests(task, doc):
    """(list of (context, continuation), choices as strings for acc_norm, gold)."""
    if task == "hellaswag":
        ctx = doc["ctx_a"] + " " + doc["ctx_b"].capitalize()
        query = hellaswag_preprocess(doc["activity_label"] + ": " + ctx)
        choices = [hellaswag_preprocess(e) for e in doc["endings"]]
        return [(query, " " + c) for c in choices], choices, int(doc["label"])
    if task == "piqa":
        choices = [doc["sol1"], doc["sol2"]]
        return [("Question: " + doc["goal"] + "\nAnswer:", " " + c) for c in choices], choices, int(doc["label"])
    if task == "winogrande":
        idx = doc["sentence"].index("_")
        target = doc["sentence"][idx + 1:].strip()
        contexts = [doc["sentence"][:idx] + opt for opt in (doc["option1"], doc["option2"])]
        return [(c, " " + target) for c in contexts], contexts, {"1": 0, "2": 1}[doc["answer"]]
    if task == "boolq":
        gold = int(doc["answer"]) if "answer" in doc else int(doc["label"])
        # The harness's boolq reads SuperGLUE, whose passages are "<title> -- <text>"; BoolQ's own files keep
        # the title in a field of its own.
        passage = doc["passage"]
        if "title" in doc and not passage.startswith(doc["title"] + " -- "):
            passage = doc["title"] + " -- " + passage
        context = passage + "\nQuestion: " + doc["question"] + "?\nAnswer:"
        return [(context, " no"), (context, " yes")], ["no", "yes"], gold
    if task in ("arc_easy", "arc_challenge"):
        if isinstance(doc["question"], dict):
            question = doc["question"]["stem"]
            texts = [c["text"] for c in doc["question"]["choices"]]
            labels = [c["label"] for c in doc["question"]["choices"]]
        else:
            question, texts, labels = doc["question"], doc["choices"]["text"], doc["choices"]["label"]
        context = "Question: " + question + "\nAnswer:"
        return [(context, " " + t) for t in texts], texts, labels.index(doc["answerKey"])
    if task == "lambada":
        words = doc["text"].split(" ")
        return [(" ".join(words[:-1]), " " + words[-1])], [words[-1]], 0
    raise SystemExit("unknown task " + task)


def main():
    task, path, model_dir, out = sys.argv[1:5]
    vocab, ranks = bpe_reference.load_tokenizer(model_dir)
    encode = lambda text: bpe_reference.encode(text.encode("utf-8"), vocab, ranks)
    cfg, w = gpt2_reference.load(model_dir)
    max_length = cfg["n_positions"]
    result = {k: [] for k in ("loglikelihoods", "greedy", "pred", "pred_norm", "gold")}
    for doc in documents(task, path):
        pairs, choices, gold = requests(task, doc)
        lls, greedy = [], []
        for context, continuation in pairs:
            n_spaces = len(context) - len(context.rstrip())  # _encode_pair
            if n_spaces > 0:
                continuation = context[-n_spaces:] + continuation
                context = context[:-n_spaces]
            whole = encode(context + continuation)
            context_enc = encode(context)
            continuation_enc = whole[len(context_enc):]
            inp = (context_enc + continuation_enc)[-(max_length + 1):][:-1]
            with torch.no_grad():
                logits = gpt2_reference.forward(cfg, w, torch.tensor([inp]))[0]
            logprobs = torch.log_softmax(logits.double(), dim=-1)[len(inp) - len(continuation_enc):]
            cont = torch.tensor(continuation_enc)
            lls.append(float(logprobs.gather(1, cont[:, None]).sum()))
            greedy.append(bool((logprobs.argmax(-1) == cont).all()))
        lengths = [float(len(c)) for c in choices]
        result["loglikelihoods"].append(lls)
        result["greedy"].append(greedy[0])
        result["pred"].append(max(range(len(lls)), key=lambda i: (lls[i], -i)))
        result["pred_norm"].append(max(range(len(lls)), key=lambda i: (lls[i] / lengths[i], -i)))
        result["gold"].append(gold)
    n = len(result["gold"])
    if task == "lambada":
        correct = [float(g) for g in result["greedy"]]
        result["perplexity"] = math.exp(-sum(l[0] for l in result["loglikelihoods"]) / n)
    else:
        correct = [float(p == g) for p, g in zip(result["pred"], result["gold"])]
        result["acc_norm"] = sum(float(p == g) for p, g in zip(result["pred_norm"], result["gold"])) / n
    result["acc"] = sum(correct) / n
    mu = result["acc"]
    result["acc_stderr"] = math.sqrt(sum((x - mu) ** 2 for x in correct) / (n - 1)) / math.sqrt(n)
    json.dump(result, open(out, "w"))


if __name__ == "__main__":
    main()
