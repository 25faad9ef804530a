#!/usr/bin/env bash
# `make test`'s runner. The tests without a server run first, on every core (a file per
# worker: a file's tests share its fixtures). Then the system and live tests run side by
# side in several pytest processes: each server generation's part (`--part`) split into
# shards (`--shard K/N`, whole modules balanced by their measured time: tests/conftest.py,
# tests/_testutil/shards.py). Each process starts only its own clusters on its own random
# loopback ports and waits on its servers most of the time. Each line of theirs is
# prefixed with its part and shard. At the end: how long each part took and how it ended.
# Any part failing fails the run, exit 5 (no test collected) included.
#
# The split is a measured compromise for a 2-core machine: the 1.0 part (the longer) in two
# shards, the 0.9 part in one. Everything at once (the tests without a server beside four
# live shards) took 30 min with a dozen failures from load (checks missing their 8 s
# timeout); see docs/performance.md.
#
# Usage: tests/run_suite.sh PYTHON  (the environment carries KONSOLE_TEST_FLUSS_*).
# SUITE_NO_SERVER and SUITE_LIVE (paths) run a smaller selection the same way;
# SUITE_SHARDS_09 and SUITE_SHARDS_10 (default 1 and 2) are the processes per generation.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${1:?usage: tests/run_suite.sh PYTHON}
read -r -a no_server <<<"${SUITE_NO_SERVER:-tests/unit tests/pilot snapshots}"
read -r -a live <<<"${SUITE_LIVE:-tests/system tests/live}"
declare -A shards=([0.9]=${SUITE_SHARDS_09:-1} [1.0]=${SUITE_SHARDS_10:-2})

results=$(mktemp)
trap 'rm -f "$results"' EXIT

# run_timed NAME CMD...: runs CMD, appends "NAME|seconds|exit status" to the results.
run_timed() {
  local name=$1 t0=$SECONDS rc
  shift
  "$@"
  rc=$?
  echo "$name|$((SECONDS - t0))|$rc" >>"$results"
  return "$rc"
}

# live_part GEN K: shard K of the system and live tests of one generation, each line
# prefixed (as it comes: pytest writing into a pipe would otherwise hold its lines back).
live_part() {
  local n=${shards[$1]}
  PYTHONUNBUFFERED=1 "$PY" -m pytest --part "fluss$1" --shard "$2/$n" "${live[@]}" 2>&1 |
    sed -u "s|^|[fluss$1 $2/$n] |"
  return "${PIPESTATUS[0]}"
}

run_timed "no server (unit, pilot, snapshots)" \
  "$PY" -m pytest --numprocesses auto --maxprocesses 4 --dist loadfile "${no_server[@]}"

t0=$SECONDS
pids=()
for gen in 0.9 1.0; do
  for k in $(seq 1 "${shards[$gen]}"); do
    run_timed "system + live, Fluss $gen, $k/${shards[$gen]}" live_part "$gen" "$k" &
    pids+=($!)
  done
done
for pid in "${pids[@]}"; do
  wait "$pid"
done
echo "system + live, side by side|$((SECONDS - t0))|-" >>"$results"

failed=0
echo
echo "=== make test: time per part ==="
while IFS='|' read -r name secs rc; do
  printf '%-44s %3dm%02ds' "$name" $((secs / 60)) $((secs % 60))
  if [ "$rc" = "-" ]; then
    echo
  elif [ "$rc" = 0 ]; then
    echo "  passed"
  else
    echo "  FAILED (pytest exit $rc)"
    failed=1
  fi
done <"$results"
echo "total ${SECONDS}s"
exit "$failed"
