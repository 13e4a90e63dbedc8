#!/usr/bin/env bash
# Scale-out figures on a GPU machine, in under 5 minutes:  bash scripts/device_check.sh
#
# Self-play positions/s with every actor's network on the GPU, two ways: each worker process with
# its own CUDA evaluator (scale_processes_N_actors_positions_per_s) against ONE batching
# inference server that all N worker processes feed (selfplay.inference_server=true:
# scale_processes_server_N_actors_positions_per_s), for N = 1, 8 and 15 actors (the uttt_cpu
# 3x32 ResNet), then 15 actors with the 8x96 ResNet; then the learner's samples/s.
#
# The GPU machine has torch (CUDA), numba, numpy, tensorboard but not hydra-core, omegaconf or
# gymnasium (imported by `import ultimate_rl`), nor Ray. Prepare their wheels where pip can
# download (wheels/ is git-ignored; carry it along):
#   pip download -d wheels --no-deps hydra-core==1.3.8 omegaconf==2.3.1 gymnasium cloudpickle \
#       farama-notifications packaging typing_extensions
#   pip wheel -w wheels --no-deps antlr4-python3-runtime==4.9.3
#   for v in 3.10 3.11 3.12 3.13; do pip download -d wheels --no-deps --only-binary=:all: \
#       --python-version $v --platform manylinux2014_x86_64 pyyaml; done
# Ray's wheel is too big to carry (~70 MB); `python scripts/bench.py suite=scale` measures the ray
# backend where Ray is installed. Each bench call prints its table; its last line is its JSON
# figures. Every call has its own time limit, so one that overruns loses only its own rows.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD
OUT=${OUT:-/tmp}
SECONDS_EACH=${SECONDS_EACH:-8}
DEVICE=${DEVICE:-cuda}  # DEVICE=cpu GAMES=2 SECONDS_EACH=1 ACTORS=2 BIG=0: a try without a GPU
GAMES=${GAMES:-64}      # games each actor plays at once (its search's batch of leaves)
ACTORS=${ACTORS:-"1 8 15"}
BIG=${BIG:-1}           # 0: skip the 8x96 ResNet row
if ! python -c "import hydra, gymnasium" 2>/dev/null; then
    pip install -q --no-index --find-links wheels/ hydra-core omegaconf gymnasium pyyaml
fi
nvidia-smi --query-gpu=name,memory.total,utilization.gpu --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
echo "cores: $(nproc)  device: $DEVICE  games per actor: $GAMES  actors: $ACTORS"
bench() {  # $1: a name for the output folder, $2: its time limit (s); the rest: overrides
    local name=$1 limit=$2
    shift 2
    timeout "$limit" python scripts/bench.py suite=scale seconds="$SECONDS_EACH" "$@" \
        "scale.backends=[processes]" "scale.inference_server=[false,true]" \
        scale.games_per_job="$GAMES" scale.actor_device="$DEVICE" \
        "hydra.run.dir=$OUT/bench_$name" || echo "bench $name: failed or over ${limit}s"
}
# per-actor CUDA evaluators vs one inference server: 1, 8, 15 worker processes (~3.5 minutes)
for n in $ACTORS; do
    bench "uttt_cpu_$n" $((50 + 2 * n)) "scale.actors=[$n]" scale.learner=false \
        "scale.overrides=['device=$DEVICE']"
done
# the 8x96 ResNet, 15 actors both ways, and the learner's samples/s on the GPU (~1.5 minutes)
if [ "$BIG" = 1 ]; then
    bench resnet 75 "scale.actors=[15]" "scale.overrides=['model=resnet','device=$DEVICE']"
fi
