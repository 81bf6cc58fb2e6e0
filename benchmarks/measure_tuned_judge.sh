#!/bin/bash
# The measurement of docs/tuning.md: judgelab calibrate of a model on held-out sets written by
# judgelab.tuning.heldout_split (see docs/tuning.md), one set after another.
# usage: chain.sh MODEL LABEL SET:LIMIT ...   (LIMIT 0 = all rows; SET "starter" = the starter set)
MODEL=$1; LABEL=$2; shift 2
cd /work/wt-tune
for item in "$@"; do
  s=${item%%:*}; lim=${item##*:}
  args=(--model "$MODEL" --out /work/tune-runs/cal/$LABEL-$s --threads 1 --no-progress --no-plots)
  [ "$s" != starter ] && args+=(--set /work/tune-runs/eval/$s.jsonl)
  [ "$lim" != 0 ] && args+=(--limit $lim)
  echo "$(date -u +%T) start $LABEL-$s: judgelab calibrate ${args[*]}" >> /work/tune-runs/cal/commands.log
  PYTHONPATH=/work/wt-tune/src nice -n 5 judgelab calibrate "${args[@]}" > /work/tune-runs/cal/$LABEL-$s.log 2>&1
  echo "$(date -u +%T) end $LABEL-$s rc=$?" >> /work/tune-runs/cal/commands.log
done
