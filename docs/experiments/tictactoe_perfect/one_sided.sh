#!/bin/bash
# tictactoe_quick, seeds 0-4, one-sided random openings off and at 0.5: the iteration at which
# each run stops as perfect. Run from the repository root; RUNS names the folder for the runs.
set -euo pipefail
runs="${RUNS:-runs/one_sided}"
mkdir -p "$runs"
for share in 0.0 0.5; do
  for seed in 0 1 2 3 4; do
    dir="$runs/tq_os${share}_s$seed"
    python scripts/train.py experiment=tictactoe_quick seed=$seed \
      selfplay.random_opening.one_sided=$share train.max_minutes=10 hydra.run.dir="$dir" \
      > "$dir.log" 2>&1
    python -c "import json, sys; d = json.load(open(sys.argv[1])); \
print(sys.argv[2], sys.argv[3], d['iterations'], d['perfect'])" "$dir/summary.json" $share $seed
  done
done
