#!/usr/bin/env python3
"""Our tokenizer.json encodings against Hugging Face's own `tokenizers` library (issue 13, item 4).

The test suite checks the engine against hf_tokenizer_reference.py, our own reading of the format in Python,
because Debian has no `tokenizers`. This closes the loop where it is installed: run test_tokenizer_formats
with NF_TOKENIZER_CASES=DIR to keep each tokenizer.json it checks and the engine's encodings of its texts
(DIR/<name>/tokenizer.json, cases.json), then

    python3 tests/reference/hf_tokenizers_check.py DIR

encodes every text with tokenizers.Tokenizer.from_file — special tokens recognised, and (encode_special_tokens)
as ordinary text — and compares ids. Prints one line per tokenizer and the first mismatches; exits 1 on any.
"""
import json, os, sys

import tokenizers


def main():
    root = sys.argv[1]
    failures = 0
    print(f"tokenizers {tokenizers.__version__}")
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        tokenizer = tokenizers.Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        cases = json.load(open(os.path.join(folder, "cases.json"), encoding="utf-8"))
        wrong = []
        for case in cases:
            for key, as_text in (("ids", False), ("ids_special_as_text", True)):
                tokenizer.encode_special_tokens = as_text
                theirs = tokenizer.encode(case["text"], add_special_tokens=False).ids
                if theirs != case[key]:
                    wrong.append((case["text"], key, case[key], theirs))
        failures += len(wrong)
        print(f"{'ok  ' if not wrong else 'FAIL'} {name}: {2 * len(cases) - len(wrong)} of {2 * len(cases)} "
              f"encodings equal", flush=True)
        for text, key, ours, theirs in wrong[:5]:
            print(f"    {text!r} ({key}):\n      ours   {ours}\n      theirs {theirs}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
