#!/usr/bin/env bash
# The full test suite N times in a row (default 10) with two busy loops beside it: on these 2-core machines
# that is how a test that leans on wall-clock time shows itself. Run from anywhere, with the venv's python:
#     PYTHON=.venv/bin/python bash bench/underload.sh 10
set -uo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
runs="${1:-10}"
( while :; do :; done ) & busy1=$!
( while :; do :; done ) & busy2=$!
trap 'kill $busy1 $busy2 2>/dev/null' EXIT
failed=0
for i in $(seq 1 "$runs"); do
  out=$("$python" -m pytest -p no:cacheprovider -rfE 2>&1)
  status=$?
  echo "run $i/$runs: exit $status, $(grep -E '^[0-9]+ (passed|failed)|^(FAILED|ERROR) ' <<<"$out" | tr '\n' ' ')"
  [ "$status" -eq 0 ] || failed=$((failed + 1))
done
echo "$failed of $runs runs failed"
exit $((failed > 0))
