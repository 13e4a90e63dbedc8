#!/usr/bin/env bash
# The shipped file at the network agent's new default, the whole 0.9 s a move (issue 43): its
# ladder evaluation (checkpoints/uttt_agent_evaluation/) and its UCT-1,000,000 match
# (checkpoints/uttt_agent_vs_uct1m/), as run on 2026-12-04. The UCT-vs-UCT ladder games are the
# previous evaluation's (now docs/experiments/uttt_agent_v3/evaluation_early_stop/), and the
# UCT-100,000 match is this sweep's 200 `full` games, the label renamed (relabel.py); the spec
# names stop_early=false, so the records hold whatever the code's default.
set -euo pipefail
cd "$(dirname "$0")/../../.."
A='file:path=checkpoints/uttt_agent.urla,stop_early=false,label=uttt_agent'
OUT=checkpoints/uttt_agent_evaluation
mkdir -p $OUT/games
cp docs/experiments/uttt_agent_v3/evaluation_early_stop/games/uct-*.jsonl $OUT/games/
python docs/experiments/uttt_agent_rollouts/relabel.py \
  docs/experiments/uttt_agent_rollouts/full/games/full__vs__uct-100000.jsonl \
  $OUT/games/uttt_agent__vs__uct-100000.jsonl
python scripts/evaluate.py game=uttt "agents=[\"$A\"]" games_per_opponent=100 workers=2 anchor=uct-10000 \
  'ladder=["uct:num_simulations=10000"]' plot=false progress=false output_dir=$OUT
python scripts/evaluate.py game=uttt "agents=[\"$A\"]" games_per_opponent=40 ladder_games=200 workers=2 \
  'ladder=["uct:num_simulations=1000","uct:num_simulations=10000","uct:num_simulations=100000"]' \
  progress=false output_dir=$OUT
python scripts/evaluate.py game=uttt "agents=[\"$A\"]" games_per_opponent=40 workers=2 \
  anchor=uct-1000000 'ladder=["uct:num_simulations=1000000"]' progress=false \
  output_dir=checkpoints/uttt_agent_vs_uct1m
