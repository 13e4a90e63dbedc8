#!/usr/bin/env bash
# Scale-out figures on a GPU machine, in under 5 minutes:  bash scripts/device_check.sh
#
# The GPU machine has torch (CUDA), numba, numpy, tensorboard but not hydra-core, omegaconf or
# gymnasium (imported by `import ultimate_rl`), nor Ray. Prepare their wheels where pip can
# download (wheels/ is git-ignored; carry it along):
#   pip download -d wheels --no-deps hydra-core==1.3.8 omegaconf==2.3.1 gymnasium cloudpickle \
#       farama-notifications packaging typing_extensions
#   pip wheel -w wheels --no-deps antlr4-python3-runtime==4.9.3
#   for v in 3.10 3.11 3.12 3.13; do pip download -d wheels --no-deps --only-binary=:all: \
#       --python-version $v --platform manylinux2014_x86_64 pyyaml; done
# Ray's wheel is too big to carry (~70 MB), so the ray backend is measured only where Ray is
# already installed. Prints the bench's table; its last line is the JSON figures.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD
OUT=${OUT:-/tmp}
SECONDS_EACH=${SECONDS_EACH:-10}
DEVICE=${DEVICE:-cuda}  # DEVICE=cpu GAMES=4 SECONDS_EACH=1: a try on a machine without a GPU
GAMES=${GAMES:-128}   # games each actor plays at once
if ! python -c "import hydra, gymnasium" 2>/dev/null; then
    pip install -q --no-index --find-links wheels/ hydra-core omegaconf gymnasium pyyaml
fi
backends=processes
if python -c "import ray" 2>/dev/null; then backends=processes,ray; fi
nvidia-smi --query-gpu=name,memory.total,utilization.gpu --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
echo "cores: $(nproc)  backends: $backends"
bench() {  # $1: a name for the output folder, $2: its time limit (s); the rest: overrides
    local name=$1 limit=$2
    shift 2
    timeout "$limit" python scripts/bench.py suite=scale seconds="$SECONDS_EACH" "$@" \
        scale.actor_device="$DEVICE" "hydra.run.dir=$OUT/bench_$name" || echo "bench $name: failed"
}
# the uttt_cpu network (3x32 ResNet): 1 and every core's actors, each with a CUDA evaluator
bench uttt_cpu 170 "scale.backends=[$backends]" "scale.actors=[1,all]" scale.games_per_job="$GAMES" \
    "scale.overrides=['device=$DEVICE']"
# the 8x96 ResNet
bench resnet 110 "scale.backends=[processes]" "scale.actors=[all]" scale.games_per_job="$GAMES" \
    "scale.overrides=['model=resnet','device=$DEVICE']"
