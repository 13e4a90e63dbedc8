"""Copies the sweep's `full` match (the shipped file, stop_early=false) into the shipped agent's
evaluation as uttt_agent's match against UCT-100,000: the same games, the player's label renamed.

    python relabel.py SOURCE.jsonl TARGET.jsonl   (evaluate_shipped.sh runs it)
"""

import json
import sys

src, dst = sys.argv[1:3]
with open(src) as f, open(dst, "w") as out:
    for line in f:
        if not line.strip():
            continue
        entry = json.loads(line)
        if entry["type"] == "match":
            for agent in entry["agents"]:
                if agent["label"] == "full":
                    agent["label"] = "uttt_agent"
            entry["weights"] = {"uttt_agent": entry["weights"].pop("full")}
        else:
            entry["players"] = ["uttt_agent" if p == "full" else p for p in entry["players"]]
        out.write(json.dumps(entry) + "\n")
