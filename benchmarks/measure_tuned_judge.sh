#!/bin/bash
# The measurement of docs/tuning.md: judgelab calibrate of a model on held-out sets written by
# judgelab.tuning.heldout_split (see docs/tuning.md), one set after another.
# usage: chain.sh MODEL LABEL SET:LIMIT ...   (LIMIT 0 = all rows; SET "starter" = the starter set)
MODEL=$1; LABEL=$2; shift 2
EVAL=${EVAL:-/work/tune-runs/eval}; CAL=${CAL:-/work/tune-runs/cal}
cd "$(dirname "$0")/.."
for item in "$@"; do
  s=${item%%:*}; lim=${item##*:}
  args=(--model "$MODEL" --out $CAL/$LABEL-$s --threads 1 --no-progress --no-plots)
  [ "$s" != starter ] && args+=(--set $EVAL/$s.jsonl)
  [ "$lim" != 0 ] && args+=(--limit $lim)
  echo "$(date -u +%T) start $LABEL-$s: judgelab calibrate ${args[*]}" >> $CAL/commands.log
  PYTHONPATH=$PWD/src nice -n 5 judgelab calibrate "${args[@]}" > $CAL/$LABEL-$s.log 2>&1
  echo "$(date -u +%T) end $LABEL-$s rc=$?" >> $CAL/commands.log
done
