"""A run's metrics.jsonl as records, for the figure scripts beside this file (docs/FORMATS.md)."""
import json


METRICS_VERSION = 2  # the newest version of metrics.jsonl these scripts read (docs/FORMATS.md)


def records(run):
    """Every record of RUN/metrics.jsonl in file order; a partial last line of a run still going is skipped.
    A log of a newer version, or not a metrics log, is refused at its start record, as the workbench does."""
    path = f"{run}/metrics.jsonl"
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if number == 0 and isinstance(record, dict) and record.get("type") == "start":
                fmt, version = record.get("format", "normfree-metrics"), record.get("version", 1)
                if fmt != "normfree-metrics" or not isinstance(version, int) or version > METRICS_VERSION:
                    raise SystemExit(f"{path}: is {fmt} version {version}; these scripts read "
                                     f"normfree-metrics up to version {METRICS_VERSION}")
            yield record


def current_history(run):
    """The records that still stand, in file order (docs/FORMATS.md, metrics.jsonl version 2): a resume or
    rollback at step S supersedes the step, eval and checkpoint records after S and the event and track
    records at or after S written before it (the rule of currentHistory in core/run/metrics_log.h)."""
    kept = []
    for r in records(run):
        if not isinstance(r, dict):
            continue
        if r.get("type") in ("resume", "rollback"):
            at = r.get("step", 0)
            kept = [k for k in kept
                    if not ((k.get("type") in ("step", "eval", "checkpoint") and k.get("step", 0) > at)
                            or (k.get("type") in ("event", "track") and k.get("step", 0) >= at))]
        kept.append(r)
    return kept
