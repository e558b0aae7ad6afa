"""A run's metrics.jsonl as records, for the figure scripts beside this file (docs/FORMATS.md)."""
import json


def records(run):
    """Every record of RUN/metrics.jsonl in file order; a partial last line of a run still going is skipped."""
    with open(f"{run}/metrics.jsonl", encoding="utf-8") as f:
        for line in f:
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue
