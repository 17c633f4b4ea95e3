#!/usr/bin/env bash
# One-switch-at-a-time ablation of the published-code preset (design.md §7a): for each trainer,
# 4-seed runs (--vmap-seeds 4) of `--preset published` with one difference turned back to the
# thesis text, each followed by a re-match of every seed's best agent against 1StepLA and
# 2StepLA (PPO and REINFORCE: sampled and greedy). The full preset itself is
# experiments/published_preset_runs.sh (OUT/<algo>/).
#
#   nice -n 10 nohup experiments/published_ablation.sh runs/fidelity > runs/ablation.log 2>&1 &
#   python experiments/fidelity_table.py runs/fidelity --save-to docs/results/fidelity  # keep the summaries
#   python experiments/fidelity_table.py docs/results/fidelity --out docs/results/fidelity/ablation.md
#
# Writes OUT/<algo>-no_<switch>/ (seed_0..seed_3, summary.json, rematch/summary.csv, rematch_det/).
# Run it again to continue: a finished variant is skipped, an interrupted one resumes from its last checkpoint.
# ALGOS picks the trainers (default: dqn dueling_dqn ppo reinforce), SWITCHES the switches (default:
# every switch of each trainer, in the order below). Extra arguments go to every trainer.
set -euo pipefail
OUT=${1:-runs/fidelity}
shift || true
PY=${PYTHON:-.venv/bin/python}
ALGOS=${ALGOS:-"dqn dueling_dqn ppo reinforce"}

# switch name -> the flags that turn it back to the thesis text
declare -A BACK=(
  [reward_backprop]="--reward-backprop per_player"
  [replace_draws]="--no-replace-draws"
  [old_rule]="--old-best-start -1 --no-revert-at-equal"
  [target_online]="--no-target-online"
  [target_mirror_avg]="--no-target-mirror-avg"
  [target_unmasked]="--no-target-unmasked"
  [eps_per_update]="--no-eps-per-update"
  [selfplay_mirror_avg]="--no-selfplay-mirror-avg"
  [reset_target_on_old]="--no-reset-target-on-old"
  [td_advantage]="--no-td-advantage"
  [explore]="--explore 0.0"
  [unmasked_log_probs]="--no-unmasked-log-probs"
  [buffers_per_eval]="--eval-every 315"
)
COMMON="reward_backprop replace_draws old_rule"
DQN_SWITCHES="target_online target_mirror_avg target_unmasked eps_per_update selfplay_mirror_avg reset_target_on_old $COMMON"
declare -A SWITCHES_OF=(
  [dqn]="$DQN_SWITCHES"
  [dueling_dqn]="$DQN_SWITCHES"
  [ppo]="td_advantage explore unmasked_log_probs selfplay_mirror_avg buffers_per_eval $COMMON"
  [reinforce]="$COMMON"
)

mkdir -p "$OUT"
for algo in $ALGOS; do
  for switch in ${SWITCHES:-${SWITCHES_OF[$algo]}}; do
    case " ${SWITCHES_OF[$algo]} " in *" $switch "*) ;; *) continue ;; esac
    run="$OUT/$algo-no_$switch"
    if [ ! -f "$run/summary.json" ]; then
      resume=()
      [ -f "$run/last/metadata.json" ] && resume=(--resume)
      echo "== $algo without $switch: $(date -u +%H:%M:%S)"
      # shellcheck disable=SC2086  # BACK holds several words on purpose
      "$PY" "experiments/$algo.py" --preset published ${BACK[$switch]} --vmap-seeds 4 --out "$run" \
        --no-progress ${resume[@]+"${resume[@]}"} "$@"
    fi
    if [ ! -f "$run/rematch/summary.csv" ]; then
      "$PY" experiments/summarize.py "$run"/seed_* --out "$run/rematch" --rematch 1steplA 2steplA
    fi
    # the policy-gradient agents also play greedily (their targets are greedy re-matches)
    if [[ $algo == ppo || $algo == reinforce ]] && [ ! -f "$run/rematch_det/summary.csv" ]; then
      "$PY" experiments/summarize.py "$run"/seed_* --out "$run/rematch_det" --rematch 1steplA 2steplA --rematch-mode det
    fi
  done
done
echo "== done: $(date -u +%H:%M:%S)"
