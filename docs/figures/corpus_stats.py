#!/usr/bin/env python3
"""Measured structure of a synthetic-corpus file (docs/DATA.md): the share of sentences that are IOI frames,
the share of documents with one, and the share of documents that repeat a span of at least 6 words.

usage: corpus_stats.py FILE.txt
"""
import re
import sys

FRAMES = [
    r"When \w+ and \w+ went to the [\w ]+?, \w+ gave an? [\w ]+? to \w+",
    r"After \w+ and \w+ arrived at the [\w ]+?, \w+ handed an? [\w ]+? to \w+",
    r"While \w+ and \w+ were at the [\w ]+?, \w+ passed an? [\w ]+? to \w+",
    r"Then \w+ and \w+ walked to the [\w ]+?, and \w+ brought an? [\w ]+? to \w+",
    r"When \w+ and \w+ got to the [\w ]+?, \w+ showed an? [\w ]+? to \w+",
    r"After \w+ and \w+ met at the [\w ]+?, \w+ gave an? [\w ]+? to \w+",
    r"Once \w+ and \w+ had left the [\w ]+?, \w+ threw an? [\w ]+? to \w+",
    r"While \w+ and \w+ were working at the [\w ]+?, \w+ sent an? [\w ]+? to \w+",
]
IOI = re.compile("|".join(f"(?:{f})" for f in FRAMES))


def repeats_span(words, n=6):
    seen = set()
    for i in range(len(words) - n + 1):
        gram = tuple(words[i:i + n])
        if gram in seen:
            return True
        seen.add(gram)
    return False


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    documents = [d for d in text.split("<|endoftext|>") if d.strip()]
    sentences = ioi_sentences = ioi_documents = repeating = 0
    for d in documents:
        parts = [s for s in re.split(r"(?<=[.!?])\s+", d) if s.strip()]
        hits = sum(1 for s in parts if IOI.search(s))
        sentences += len(parts)
        ioi_sentences += hits
        ioi_documents += hits > 0
        repeating += repeats_span(d.split())
    print(f"{len(documents)} documents, {sentences} sentences")
    print(f"IOI sentences: {100 * ioi_sentences / sentences:.1f}% of sentences; "
          f"documents with one: {100 * ioi_documents / len(documents):.1f}%")
    print(f"documents repeating a span of >= 6 words: {100 * repeating / len(documents):.1f}%")


if __name__ == "__main__":
    main()
