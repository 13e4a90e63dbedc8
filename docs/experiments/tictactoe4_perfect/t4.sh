#!/bin/bash
# t4.sh NAME SEED [extra overrides...]: 4x4 (four in a row) with the numerical every-line recipe
# (from the repository's root; T4r_s0's final settings, after its resumes, are T4r_s0/config.yaml)
name=$1; seed=$2; shift 2
mkdir -p runs/t4
exec python scripts/train.py experiment=tictactoe_quick \
  game.size=4 game.k=4 model.board_size=null seed=$seed run_name=t4 \
  train.iterations=3000 train.max_minutes=900 train.progress_bar=false train.stop_when_perfect=true \
  search.num_simulations=64 selfplay.parallel_games=128 selfplay.games_per_iteration=128 \
  selfplay.temperature_moves=6 selfplay.random_opening.fraction=0.8 \
  selfplay.random_opening.max_plies=8 selfplay.random_opening.one_sided=0.5 \
  selfplay.random_opening.record_searching_side=true \
  train.replay_window=60000 train.min_replay=1000 train.steps_per_iteration=60 train.batch_size=256 \
  optim.lr=0.002 optim.schedule=constant optim.warmup_steps=0 "model.mlp_hidden=[1024,1024]" \
  eval.every=10 eval.optimal_positions=200 \
  selfplay.book.walk=true selfplay.book.fraction=0.8 selfplay.book.lost_share=0.8 \
  selfplay.book.walk_from_optimal=0.95 "selfplay.book.walk_budgets=[0,32,200,800]" \
  selfplay.book.teacher=800 selfplay.book.missed_share=0.5 \
  "$@" hydra.run.dir=runs/t4/$name > runs/t4/$name.log 2>&1
