"""Reading a runner state directory's journal back, for the scenarios."""

import json
import os


def read_journal(state_dir):
    """Every record: the sealed segments (journal/000001.jsonl, ...) in
    order, then the live journal.jsonl."""
    sealed = os.path.join(state_dir, "journal")
    paths = sorted(os.path.join(sealed, name) for name in os.listdir(sealed)
                   if name.endswith(".jsonl")) if os.path.isdir(sealed) else []
    records = []
    for path in paths + [os.path.join(state_dir, "journal.jsonl")]:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        records.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    return records
