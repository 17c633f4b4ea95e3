#!/usr/bin/env bash
# 4-seed runs of every RL trainer with --preset published (the published code's training,
# design.md §7a), one trainer after another, each followed by a re-match of every seed's best
# agent against 1StepLA and 2StepLA (experiments/summarize.py --rematch; PPO and REINFORCE also
# greedily, --rematch-mode det).
#
#   nice -n 10 nohup experiments/published_preset_runs.sh runs/fidelity > runs/fidelity.log 2>&1 &
#
# Writes OUT/<algo>/ (seed_0..seed_3, summary.json, seeds.md, curves.png) and OUT/<algo>/rematch/
# (summary.md, summary.csv), OUT/<algo>/rematch_det/ for PPO and REINFORCE. Run it again to continue: a finished trainer is skipped, an
# interrupted one resumes from its last checkpoint. Extra arguments go to every trainer.
set -euo pipefail
OUT=${1:-runs/fidelity}
shift || true
PY=${PYTHON:-.venv/bin/python}
ALGOS=${ALGOS:-"dueling_dqn dqn ppo reinforce"}
mkdir -p "$OUT"
for algo in $ALGOS; do
  if [ ! -f "$OUT/$algo/summary.json" ]; then
    resume=()
    [ -f "$OUT/$algo/last/metadata.json" ] && resume=(--resume)
    echo "== $algo: $(date -u +%H:%M:%S)"
    "$PY" "experiments/$algo.py" --preset published --vmap-seeds 4 --out "$OUT/$algo" --no-progress \
      ${resume[@]+"${resume[@]}"} "$@"
  fi
  if [ ! -f "$OUT/$algo/rematch/summary.md" ]; then
    "$PY" experiments/summarize.py "$OUT/$algo"/seed_* --out "$OUT/$algo/rematch" --rematch 1steplA 2steplA
  fi
  if [[ $algo == ppo || $algo == reinforce ]] && [ ! -f "$OUT/$algo/rematch_det/summary.md" ]; then
    "$PY" experiments/summarize.py "$OUT/$algo"/seed_* --out "$OUT/$algo/rematch_det" --rematch 1steplA 2steplA \
      --rematch-mode det
  fi
done
echo "== done: $(date -u +%H:%M:%S)"
