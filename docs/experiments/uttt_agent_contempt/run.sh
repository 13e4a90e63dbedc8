#!/usr/bin/env bash
# Issue 43: contempt (search.contempt: a draw counts -c for the agent, dead draws end the
# descent) on the shipped agent at its one second a move against UCT-100,000, the same 108
# openings as docs/experiments/uttt_agent_v3_planes/ (each from both sides), two games at a
# time on an otherwise idle machine. Usage: run.sh LABEL CONTEMPT [GAMES]
set -euo pipefail
D=docs/experiments/uttt_agent_contempt
label=$1 contempt=$2 games=${3:-108}
python scripts/evaluate.py game=uttt \
  "agents=[\"file:path=checkpoints/uttt_agent.urla,stop_early=false,contempt=$contempt,label=$label\"]" \
  games_per_opponent=$games workers=2 anchor=uct-100000 'ladder=["uct:num_simulations=100000"]' \
  plot=false progress=false output_dir=$D/$label
