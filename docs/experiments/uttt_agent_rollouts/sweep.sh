#!/usr/bin/env bash
# Stage 1 of issue 43's sweep: the shipped agent (whole 0.9 s a move or its early stop, with and
# without playouts mixed into its leaf values) against UCT-100,000, 40 games a setting from the
# same 20 two-ply openings, each from both sides (GAMES=100 or 200 for the later stages: a rerun
# into the same folder keeps the games already played, the openings being the same).
# Usage: [GAMES=40] sweep.sh WORKERS NAME OPTIONS [NAME OPTIONS...]
# e.g. sweep.sh 1 full-r16-l0.5 "stop_early=false,rollouts=16,rollout_weight=0.5"
set -euo pipefail
cd "$(dirname "$0")/../../.."
A=checkpoints/uttt_agent.urla
OUT=docs/experiments/uttt_agent_rollouts
workers=$1; shift
while [ $# -gt 0 ]; do
  name=$1 opts=$2; shift 2
  python scripts/evaluate.py game=uttt "agents=[\"file:path=$A,$opts,label=$name\"]" \
    games_per_opponent="${GAMES:-40}" workers="$workers" anchor=uct-100000 \
    'ladder=["uct:num_simulations=100000"]' plot=false progress=false output_dir="$OUT/$name"
done
