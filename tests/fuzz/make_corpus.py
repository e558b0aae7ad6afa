#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus, tests/fuzz/corpus/<target>/: small valid files of every format, as the
engine writes them (the field names and layouts of its toJson functions, docs/FORMATS.md). Deterministic:
rerunning it rewrites the same bytes. The BPE and tokenizer.json seeds are a 256-byte alphabet with a few
merges (GPT-2's byte-to-character mapping), small enough for libFuzzer to mutate (a few KB each).

    tests/fuzz/make_corpus.py            # rewrites tests/fuzz/corpus
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "..", "reference"))
from bpe_reference import bytes_to_unicode  # noqa: E402  GPT-2's byte -> character map, written once
CORPUS = os.path.join(ROOT, "corpus")
REPO = os.path.dirname(os.path.dirname(ROOT))


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def dumps(obj, indent=None):
    return json.dumps(obj, indent=indent, ensure_ascii=False) + "\n"


# --- safetensors: 8-byte little-endian header length, JSON header (padded with spaces to 8), the data.
def safetensors(tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, array, dtype in tensors:
        raw = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def safetensors_seeds():
    f32 = np.arange(6, dtype="<f4").reshape(2, 3) / 4
    write("safetensors", "two_tensors.safetensors",
          safetensors([("wte.weight", f32, "F32"), ("positions", np.array([0, 1], dtype="<i8"), "I64")],
                      {"format": "pt"}))
    write("safetensors", "every_dtype.safetensors",
          safetensors([("f64", np.array([1.5], dtype="<f8"), "F64"),
                       ("f16", np.array([1, 2], dtype="<f2"), "F16"),
                       ("bf16", np.array([0x3f80, 0x4000], dtype="<u2"), "BF16"),
                       ("i32", np.array([-1, 7], dtype="<i4"), "I32"),
                       ("i16", np.array([3], dtype="<i2"), "I16"),
                       ("i8", np.array([-2], dtype="i1"), "I8"),
                       ("u8", np.array([255], dtype="u1"), "U8"),
                       ("bool", np.array([1, 0], dtype="u1"), "BOOL"),
                       ("scalar", np.array(2.0, dtype="<f4"), "F32"),
                       ("empty", np.zeros((0, 4), dtype="<f4"), "F32")]))
    write("safetensors", "no_tensors.safetensors", safetensors([]))


# --- model config.json: the bundled models' and a GPT-2 with FakeLN sites (the normfree block).
def model_config_seeds():
    for name in ("tiny-gpt2", "tiny-llama"):
        with open(os.path.join(REPO, "resources", name, "config.json"), "rb") as f:
            write("model_config", name + ".json", f.read())
    sites = {}
    for layer in range(2):
        sites[f"LN_qk.{layer}"] = {"kind": "fakeln", "scale": 2.5}
        sites[f"LN_v.{layer}"] = {"kind": "fakeln", "scale": 1.25, "scale_pos0": 8.0, "pos0_treatment": True,
                                  "eot_treatment": True}
        sites[f"LN_mlp.{layer}"] = {"kind": "fakeln", "scale": 3.0, "real_mix": 0.5}
    sites["LN_f"] = {"kind": "layernorm"}
    write("model_config", "gpt2_fake_sites.json", dumps({
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": 2, "n_head": 2, "n_embd": 16,
        "n_positions": 32, "vocab_size": 300, "layer_norm_epsilon": 1e-5, "eos_token_id": 299,
        "tie_word_embeddings": True,
        "normfree": {"format": "normfree-model", "version": 1, "layernorm_free": False, "folded": False,
                     "sites": sites}}, 1))
    write("model_config", "pythia.json", dumps({
        "architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "gelu",
        "hidden_size": 64, "intermediate_size": 256, "layer_norm_eps": 1e-05, "max_position_embeddings": 128,
        "model_type": "gpt_neox", "num_attention_heads": 4, "num_hidden_layers": 2, "rotary_emb_base": 10000,
        "rotary_pct": 0.25, "tie_word_embeddings": False, "use_parallel_residual": True, "vocab_size": 512,
        "normfree": {"format_version": 1, "folded": True, "sites": {"LN_f": {"kind": "fakeln", "scale": 4.0}}}}))
    write("model_config", "qwen2.json", dumps({
        "architectures": ["Qwen2ForCausalLM"], "eos_token_id": 7, "hidden_act": "silu", "hidden_size": 64,
        "intermediate_size": 160, "max_position_embeddings": 256, "model_type": "qwen2",
        "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0, "tie_word_embeddings": True, "use_sliding_window": False, "vocab_size": 512}))


# --- schedules (schedule.json, a bare list of events) and the answers to schedule edits.
def schedule_seeds():
    events = [{"id": i + 1, "step": 20 + 2 * i, "action": "make_fake", "site": "LN_mlp", "layer": i}
              for i in range(3)]
    events += [{"id": 4, "step": 30, "action": "make_fake", "site": "LN_qk", "layer": "all"},
               {"id": 5, "step": 34, "action": "make_fake", "site": "LN_v", "layer": 1},
               {"id": 6, "step": 40, "action": "end_eot_treatment", "site": "LN_v", "layer": 1},
               {"id": 7, "step": 41, "action": "end_pos0_treatment", "site": "LN_qk", "layer": 0},
               {"id": 8, "step": 50, "action": "make_fake", "site": "LN_f"}]
    write("schedule", "schedule.json", dumps({"format": "normfree-schedule", "version": 1, "events": events}, 1))
    write("schedule", "bare_list.json", dumps([{"step": 5, "site": "LN_mlp", "layer": "all"},
                                               {"step": 9, "site": "LN_f"}]))
    write("schedule", "edit_accepted.json", dumps({"accepted": True, "event_id": 9}))
    write("schedule", "edit_refused.json", dumps({
        "accepted": False, "event_id": 3, "reason": "the edited schedule would not be valid",
        "refusal": {"code": "invalid_schedule", "problems": [
            {"code": "layer_out_of_range", "event_id": 3, "event": "step 20: LN_mlp.12 \u2192 fake",
             "step": 20, "layer": 12, "limit": 12},
            {"code": "site_already_changed", "event_id": 4, "event": "step 30: LN_mlp.0 \u2192 fake",
             "site": "LN_mlp.0", "make_fake": True, "first_step": 20}]}}))
    write("schedule", "edit_too_late.json", dumps({
        "accepted": False, "event_id": 0, "reason": "step 5 has started",
        "refusal": {"code": "step_already_started", "step": 5, "run_step": 7}}))


# --- a run's config.json (train/settings.cpp's toJson).
def run_config(mode, schedule_events):
    return {"format": "normfree-run", "version": 1, "mode": mode, "preset": "tiny", "model": "resources/tiny-gpt2",
            "train_data": "data/train.bin", "eval_data": ["data/val.bin", "data/alt.bin"], "device": "cpu",
            "checkpoint_interval": 50, "keep_checkpoints": 2,
            "optimizer": {"micro_batch": 8, "accumulation": 2, "context": 64, "max_steps": 200, "warmup_steps": 10,
                          "lr": 6e-4, "min_lr": 3e-4, "weight_decay": 0.01, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8,
                          "clip_norm": 1.0, "seed": 7, "bf16": False, "activation_checkpointing": False},
            "removal": {"ema_momentum": 0.9, "aux_weight": 0.1, "pos0_treatment": True, "eot_treatment": True,
                        "interpolation_steps": 0},
            "eval": {"interval": 50, "tokens": 4096},
            "divergence": {"action": "rollback", "factor": 10.0, "lr_factor": 0.5, "max_rollbacks": 2},
            "schedule": {"format": "normfree-schedule", "version": 1, "events": schedule_events}}


def run_config_seeds():
    events = [{"id": 1, "step": 20, "action": "make_fake", "site": "LN_mlp", "layer": "all"},
              {"id": 2, "step": 40, "action": "make_fake", "site": "LN_qk", "layer": 0},
              {"id": 3, "step": 60, "action": "end_pos0_treatment", "site": "LN_qk", "layer": 0},
              {"id": 4, "step": 80, "action": "make_fake", "site": "LN_f"}]
    write("run_config", "remove.json", dumps(run_config("remove", events), 1))
    finetune = run_config("finetune", [])
    del finetune["divergence"], finetune["eval_data"], finetune["preset"]
    write("run_config", "finetune.json", dumps(finetune))


# --- GPT-2 tokenizer files: vocab.json, NUL, merges.txt.
def small_bpe():
    """256 byte tokens, merges of a few frequent English pairs, then <|endoftext|>."""
    alphabet = bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)}
    merges = []
    for left, right in [("\u0120", "t"), ("h", "e"), ("\u0120t", "he"), ("i", "n"), ("\u0120", "w"),
                        ("o", "r"), ("\u0120w", "or"), ("l", "d"), ("\u0120wor", "ld"), ("e", "r")]:
        vocab[left + right] = len(vocab)
        merges.append((left, right))
    vocab["<|endoftext|>"] = len(vocab)
    return vocab, merges


def bpe_seeds():
    vocab, merges = small_bpe()
    merges_txt = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)
    write("bpe_tokenizer", "small.txt", dumps(vocab) + "\0" + merges_txt)
    write("bpe_tokenizer", "crlf_no_version.txt", dumps(vocab) + "\0" + "".join(f"{a} {b}\r\n" for a, b in merges))


# --- tokenizer.json in the settings of three model families (tests/support/tokenizer_fixtures.h).
FAMILIES = {
    "gpt-neox": ({"type": "NFC"},
                 {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
                 {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}, False,
                 ["<|padding|>", "  "]),
    "qwen2": ({"type": "NFC"},
              {"type": "Sequence", "pretokenizers": [
                  {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
                                                "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
                   "behavior": "Isolated", "invert": False},
                  {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
              {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}, True,
              ["<|im_start|>", "<|im_end|>"]),
    "smollm2": (None,
                {"type": "Sequence", "pretokenizers": [
                    {"type": "Digits", "individual_digits": True},
                    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]},
                {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}, False,
                ["<|im_start|>", "<repo_name>"]),
}


def hf_seeds():
    vocab, merges = small_bpe()
    for name, (normalizer, pre, decoder, pair_merges, extra) in FAMILIES.items():
        added = [{"id": vocab["<|endoftext|>"], "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                  "rstrip": False, "normalized": False, "special": True}]
        for i, content in enumerate(extra):
            added.append({"id": len(vocab) + i, "content": content, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": content.strip() == "", "special": content.strip() != ""})
        model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                 "end_of_word_suffix": None, "fuse_unk": False, "vocab": vocab,
                 "merges": [[a, b] if pair_merges else f"{a} {b}" for a, b in merges]}
        tokenizer = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
                     "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": decoder, "decoder": decoder,
                     "model": model}
        write("hf_tokenizer", name + ".json", dumps(tokenizer))


# --- token files: the sidecar, NUL, the tokens; or bare uint16 tokens (no NUL: no sidecar).
def token_file_seeds():
    ids = np.array([5, 300, 50256, 17, 0, 50256, 42, 7], dtype="<u2")
    sidecar = {"format": "nanogpt-tokens", "version": 1, "dtype": "uint16", "vocab_size": 50257,
               "eot_token_id": 50256, "tokens": len(ids), "documents": 2, "tokenizer": "resources/tiny-gpt2",
               "sources": ["TinyStories.txt"]}
    write("token_file", "uint16_with_sidecar.bin", dumps(sidecar).encode() + b"\0" + ids.tobytes())
    wide = np.array([70000, 3, 100255, 9], dtype="<u4")
    sidecar32 = {"format": "nanogpt-tokens", "version": 1, "dtype": "uint32", "vocab_size": 100277,
                 "eot_token_id": 100255, "tokens": len(wide), "documents": 1, "tokenizer": "", "sources": []}
    write("token_file", "uint32_with_sidecar.bin", dumps(sidecar32).encode() + b"\0" + wide.tobytes())
    write("token_file", "legacy_sidecar.bin",
          dumps({"dtype": "uint16", "vocab_size": 2048, "tokens": 3}).encode() + b"\0" +
          np.array([1, 2, 2047], dtype="<u2").tobytes())
    # No NUL byte in a bare file, or the harness would take its start for a sidecar.
    write("token_file", "bare_uint16.bin", np.array([0x0101 * k for k in range(1, 10)], dtype="<u2").tobytes())


# --- metrics.jsonl: a short remove run's records, one per line.
def metrics_seeds():
    records = [
        {"type": "start", "format": "normfree-metrics", "version": 1, "mode": "remove", "max_steps": 3,
         "time": 1700000000.5},
        {"type": "event", "step": 1, "id": 1, "description": "step 1: LN_mlp.all \u2192 fake"},
        {"type": "step", "step": 1, "ce": 3.5, "aux": 0.25, "loss": 3.525, "lr": 0.0006, "grad_norm": 1.7,
         "tokens_per_second": 12000.0, "world_size": 2, "worker_tokens_per_second": [6000.0, 6100.5],
         "scales": {"LN_mlp.0": {"tracked": 2.5, "frozen": 2.5}, "LN_qk.0": {"tracked": 1.5}}},
        {"type": "eval", "step": 2, "file": "data/val.bin", "mean_loss": 3.4, "tokens": 4096},
        {"type": "edit", "step": 2, "changes": [{"kind": "move", "id": 1, "from": 1, "step": 2}]},
        {"type": "checkpoint", "step": 2, "path": "checkpoints/step-0000002"},
        {"type": "pause", "step": 2}, {"type": "continue", "step": 2},
        {"type": "step", "step": 2, "ce": 3.4, "aux": 0.2, "loss": 3.42, "lr": 0.0005, "grad_norm": 1.2,
         "tokens_per_second": 11000.0},
        {"type": "finish", "step": 3},
    ]
    write("metrics", "remove_run.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    write("metrics", "resumed_partial_line.jsonl",
          json.dumps({"type": "resume", "step": 2}) + "\n" + json.dumps({"type": "stop", "step": 4}) +
          "\n{\"type\": \"step\", \"st")


# --- analysis requests (docs/STEERING.md, POST /v1/analyze).
def analysis_seeds():
    requests = {
        "norms": {"analysis": "norms", "sequences": 8, "length": 64, "bins": 20},
        "sinks": {"analysis": "sinks", "sequences": 4, "threshold": 0.5},
        "dla": {"analysis": "dla", "sequences": 4, "trace_layer": 1, "trace_head": 2, "trace_sequence": 0,
                "trace_pattern": True, "bootstrap": 100, "seed": 3},
        "patching": {"analysis": "patching", "count": 8, "frame": 1, "head_positions": False, "seed": 1},
        "neurons": {"analysis": "neurons", "sequences": 2, "top": 5},
        "calibration": {"analysis": "calibration", "prompts": ["Once upon a time", "The cat"], "new_tokens": 5,
                        "temperature": 0.7, "seed": 2},
        "benchmark": {"analysis": "benchmark", "task": "hellaswag", "file": "hellaswag_val.jsonl",
                      "items": [{"line": 1, "gold": 1, "requests": [["Story: A man", " sat."], ["Story: A man", " ran."]],
                                 "lengths": [4, 4]},
                                {"line": 2, "gold": 0, "requests": [["Q", " yes"]], "lengths": [3]}]},
    }
    for kind, request in requests.items():
        write("analysis_request", kind + ".json", dumps(request))


# --- IOI prompt sets (data/ioi.cpp's toJson): four prompts of one frame.
def ioi_seeds():
    prompts = []
    for order, io, s in [("ABBA", "Mary", "John"), ("ABBA", "John", "Mary"), ("BABA", "Mary", "John"),
                         ("BABA", "John", "Mary")]:
        first, second = (io, s) if order == "ABBA" else (s, io)
        clean = f"When {first} and {second} went to the store, {s} gave a drink to"
        corrupted = f"When {first} and {second} went to the store, {io} gave a drink to"
        a, b = (11, 12) if first == "Mary" else (12, 11)
        ids_clean = [2047, 5, a, 7, b, 20, 21, 22, 23, 9, 12 if s == "John" else 11, 30, 31, 32, 33]
        ids_corrupt = ids_clean[:10] + [11 if s == "John" else 12] + ids_clean[11:]
        prompts.append({"order": order, "indirect_object": io, "subject": s, "place": "store", "object": "drink",
                        "clean_text": clean, "corrupted_text": corrupted, "clean_tokens": ids_clean,
                        "corrupted_tokens": ids_corrupt, "correct_id": 11 if io == "Mary" else 12,
                        "wrong_id": 12 if io == "Mary" else 11})
    write("ioi_prompts", "four_prompts.json", dumps({
        "format": "normfree-ioi", "version": 1,
        "frame": "When {A} and {B} went to the {PLACE}, {S} gave a {OBJECT} to",
        "corruption": "the repeated subject is replaced by the indirect object", "starts_with_end_of_text": True,
        "length": 15, "positions": {"first_name": 2, "second_name": 4, "subject": 10, "end": 14},
        "words_available": {"names": 2, "places": 1, "objects": 1}, "prompts": prompts}))


# --- downstream benchmark files (eval/benchmark_tasks.cpp): a task byte (its index in allBenchmarkTasks),
# then two lines in that task's distributed format.
def benchmark_seeds():
    lines = [
        [{"activity_label": "Baking", "ctx_a": "A woman mixes flour.", "ctx_b": "she [header] pours",
          "endings": ["it [title] out.", "into the sea."], "label": "1"}],
        [{"goal": "To open a jar,", "sol1": "twist the lid.", "sol2": "sing.", "label": 0}],
        [{"sentence": "Mary gave John a book because _ was kind.", "option1": "Mary", "option2": "John",
          "answer": "1"}],
        [{"question": "is it", "passage": "It is.", "answer": True}, {"question": "q", "passage": "p", "label": 0}],
        [{"question": {"stem": "Which?", "choices": [{"text": "a", "label": "A"}, {"text": "b", "label": "B"}]},
          "answerKey": "B"},
         {"question": "What?", "choices": {"text": ["x", "y"], "label": ["1", "2"]}, "answerKey": "1"}],
        [{"question": "Which?", "choices": {"text": ["a", "b", "c"], "label": ["A", "B", "C"]}, "answerKey": "C"}],
        [{"text": "She said hello to the robot and the robot said hello to her"}, {"text": "word"}],
    ]
    for index, items in enumerate(lines):
        write("benchmark_tasks", f"task{index}.jsonl", bytes([index]) + "".join(dumps(i) for i in items).encode())


# --- a checkpoint's state.json (train/checkpoint.cpp's toJson).
def checkpoint_seeds():
    write("checkpoint_state", "state.json", dumps({
        "format": "normfree-checkpoint", "version": 1, "steps_done": 100,
        "sampler_state": ["12345678901234567890", "42"], "trackers": {"LN_mlp.0": {"s": 2.5, "s_pos0": 7.0}},
        "schedule": {"format": "normfree-schedule", "version": 1,
                     "events": [{"id": 1, "step": 20, "action": "make_fake", "site": "LN_mlp", "layer": 0}]},
        "applied_events": [1], "edits": [], "metrics_bytes": 4096, "world_size": 1}, 1))
    write("checkpoint_state", "step_zero.json", dumps({"format": "normfree-checkpoint", "version": 1,
                                                             "steps_done": 0}))


# --- libFuzzer dictionaries, dict/<target>.dict: JSON's syntax, numbers at the edges of the types the
# readers convert to (int32, int64, uint64, float32, double), and every key and string of the target's seeds.
EDGE_NUMBERS = ["0", "-1", "1.5", "-0.0", "1e-320", "1e308", "1e309", "2147483647", "2147483648", "4294967296",
                "4294967297", "9223372036854775807", "9223372036854775808", "18446744073709551615",
                "18446744073709551616", "3.4028235e38", "1e39", "true", "false", "null"]
JSON_SYNTAX = ["{", "}", "[", "]", ":", ",", '"', "\\u0000", "\\ud800", "\\n"]  # JSON's escapes, as text


# --- steering answers: serve.json, a metrics page, an analysis answer and a metrics stream.
def steering_seeds():
    write("steering_answers", "serve.json", dumps({"format": "normfree-serve", "version": 1,
          "host": "127.0.0.1", "port": 40213, "token": "3f9c" * 16, "pid": 4242}, 2))
    write("steering_answers", "metrics_page.json", dumps({"records": [
        {"type": "start", "format": "normfree-metrics", "version": 2, "mode": "remove", "max_steps": 3},
        {"type": "step", "step": 1, "ce": 3.2, "loss": 3.3}], "next_offset": 212, "restarted": False}))
    write("steering_answers", "analysis_answer.json", dumps({"job": 3, "state": "queued", "model": "now",
          "data": 0, "task": "", "done": 0, "total": 0, "step": 12}))
    stream = ("data: " + json.dumps({"type": "step", "step": 1, "ce": 3.2}) + "\n\n"
              ": keep-alive\n\n"
              "data: " + json.dumps({"type": "eval", "step": 1, "mean_loss": 3.1}) + "\n\n"
              "id: 180\n\n"
              "event: restarted\ndata: {}\n\n"
              "data: " + json.dumps({"type": "resume", "step": 1}) + "\n\n"
              "id: 64\n\n"
              "data: {\"type\": \"step\"")
    write("steering_answers", "stream.txt", stream)


def strings_of(value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            strings_of(k, out)
            strings_of(v, out)
    elif isinstance(value, list):
        for v in value:
            strings_of(v, out)
    elif isinstance(value, str) and 2 <= len(value) <= 40:
        out.add(value)


def json_parts(data):
    """Every JSON value in a seed: the whole file, each NUL-separated part, each line; others are skipped."""
    parts = []
    for chunk in data.split(b"\0"):
        for candidate in [chunk] + chunk.split(b"\n"):
            try:
                parts.append(json.loads(candidate.decode("utf-8")))
            except (UnicodeDecodeError, ValueError):
                pass
    return parts


def write_dicts():
    folder = os.path.join(ROOT, "dict")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for target in sorted(os.listdir(CORPUS)):
        words = set()
        for name in os.listdir(os.path.join(CORPUS, target)):
            with open(os.path.join(CORPUS, target, name), "rb") as f:
                data = f.read()
            if target == "safetensors":  # the JSON header after the 8-byte length
                data = data[8:8 + struct.unpack("<Q", data[:8])[0]]
            for part in json_parts(data):
                strings_of(part, words)
        entries = [e.encode() for e in JSON_SYNTAX + EDGE_NUMBERS]
        entries += [('"%s"' % w).encode() for w in sorted(words)]
        if target == "bpe_tokenizer":
            entries += [b"#version: 0.2", b"\0", b"\r\n", b"<|endoftext|>"]
        with open(os.path.join(folder, target + ".dict"), "w", encoding="ascii") as f:
            for entry in entries:
                f.write('"%s"\n' % "".join(dict_char(byte) for byte in entry))


def dict_char(byte):
    """libFuzzer's dictionary syntax: printable ASCII as is, but \\ and \"; every other byte as \\xAB."""
    if byte in b'\\"':
        return "\\" + chr(byte)
    return chr(byte) if 0x20 <= byte < 0x7F else "\\x%02X" % byte


if __name__ == "__main__":
    shutil.rmtree(CORPUS, ignore_errors=True)
    for make in (safetensors_seeds, model_config_seeds, schedule_seeds, run_config_seeds, bpe_seeds, hf_seeds,
                 token_file_seeds, metrics_seeds, analysis_seeds, ioi_seeds, checkpoint_seeds,
                 steering_seeds, benchmark_seeds):
        make()
    write_dicts()
    for target in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, target))
        sizes = [os.path.getsize(os.path.join(CORPUS, target, f)) for f in files]
        print(f"{target}: {len(files)} seeds, largest {max(sizes)} bytes")
