#!/usr/bin/env bash
# `make test`'s runner. Everything runs side by side: the tests without a server (on every
# core, a file per worker: a file's tests share its fixtures), and each server generation's
# system and live tests split into SUITE_SHARDS pytest processes (`--part`, `--shard K/N`,
# tests/conftest.py and tests/_testutil/shards.py: whole modules, balanced by their measured
# time). Each live process starts only its own clusters on its own random loopback ports,
# and waits on its servers most of the time, so they share the machine well. Each line of
# theirs is prefixed with its part and shard. At the end: how long each part took and how it
# ended. Any part failing fails the run, exit 5 (no test collected) included.
#
# Usage: tests/run_suite.sh PYTHON  (the environment carries KONSOLE_TEST_FLUSS_*).
# SUITE_NO_SERVER and SUITE_LIVE (paths) run a smaller selection the same way;
# SUITE_SHARDS (default 2) is the number of live processes per server generation.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${1:?usage: tests/run_suite.sh PYTHON}
read -r -a no_server <<<"${SUITE_NO_SERVER:-tests/unit tests/pilot snapshots}"
read -r -a live <<<"${SUITE_LIVE:-tests/system tests/live}"
shards=${SUITE_SHARDS:-2}
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
  PYTHONUNBUFFERED=1 "$PY" -m pytest --part "fluss$1" --shard "$2/$shards" "${live[@]}" 2>&1 |
    sed -u "s|^|[fluss$1 $2/$shards] |"
  return "${PIPESTATUS[0]}"
}

no_server_part() {
  "$PY" -m pytest --numprocesses auto --maxprocesses 4 --dist loadfile "${no_server[@]}" 2>&1 |
    sed -u "s|^|[no server] |"
  return "${PIPESTATUS[0]}"
}

pids=()
run_timed "no server (unit, pilot, snapshots)" no_server_part &
pids+=($!)
for gen in 0.9 1.0; do
  for k in $(seq 1 "$shards"); do
    run_timed "system + live, Fluss $gen, $k/$shards" live_part "$gen" "$k" &
    pids+=($!)
  done
done
for pid in "${pids[@]}"; do
  wait "$pid"
done
echo "everything, side by side|$SECONDS|-" >>"$results"

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
