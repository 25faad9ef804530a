#!/usr/bin/env bash
# `make test`'s runner. The system and live tests run in several pytest processes side by
# side: each server generation's part (`--part`) split into shards (`--shard K/N`, whole
# modules balanced by their measured time: tests/conftest.py, tests/_testutil/shards.py).
# Each process starts only its own clusters on its own random loopback ports. Beside them,
# from the start, the tests without a server run on every core at the lowest CPU priority
# (nice 19, a file per worker: a file's tests share its fixtures): they take the CPU the
# live tests leave while they wait on their servers, and yield it at once when a server
# starts or a check runs, so the live tests' timeouts see the load of the live tests only.
# Each line of the live parts is prefixed with its part and shard. At the end: how long each
# part took and how it ended. Any part failing fails the run, exit 5 (no test collected)
# included.
#
# The layout is measured on the 2-core machine (docs/performance.md "The test suite"): the
# tests without a server first, then three live processes, took 28 min; everything at once
# at the same priority took 30 min with a dozen failures from load (checks missing their 8 s
# timeout).
#
# Usage: tests/run_suite.sh PYTHON  (the environment carries KONSOLE_TEST_FLUSS_*).
# SUITE_NO_SERVER and SUITE_LIVE (paths) run a smaller selection the same way (an empty
# one leaves that half out); SUITE_SHARDS_09 and SUITE_SHARDS_10 (default 2 and 2) are the
# processes per generation; SUITE_NO_SERVER_FIRST=1 runs the tests without a server before
# the live ones, at normal priority, as the runner did before.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${1:?usage: tests/run_suite.sh PYTHON}
read -r -a no_server <<<"${SUITE_NO_SERVER-tests/unit tests/pilot snapshots}"
read -r -a live <<<"${SUITE_LIVE-tests/system tests/live}"
declare -A shards=([0.9]=${SUITE_SHARDS_09:-2} [1.0]=${SUITE_SHARDS_10:-2})

results=$(mktemp)
# Every part's lines are kept too, so the end can name the tests that failed: a CI log is
# often read from its tail only.
logs=$(mktemp -d)
trap 'rm -rf "$results" "$logs"' EXIT

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
    sed -u "s|^|[fluss$1 $2/$n] |" | tee "$logs/fluss$1-$2.log"
  return "${PIPESTATUS[0]}"
}

# no_server_part [PREFIX]: the tests without a server, each line prefixed when they run
# beside the live parts.
no_server_part() {
  if [ -z "${1:-}" ]; then
    "$PY" -m pytest --numprocesses auto --maxprocesses 4 --dist loadfile "${no_server[@]}"
    return
  fi
  # nice applies to this pytest and the workers it forks, never to the live parts.
  PYTHONUNBUFFERED=1 nice -n 19 "$PY" -m pytest --numprocesses auto --maxprocesses 4 \
    --dist loadfile "${no_server[@]}" 2>&1 | sed -u "s|^|$1 |" | tee "$logs/no-server.log"
  return "${PIPESTATUS[0]}"
}

t0=$SECONDS
pids=()
if [ "${#no_server[@]}" -gt 0 ]; then
  if [ "${SUITE_NO_SERVER_FIRST:-0}" = 1 ]; then
    run_timed "no server (unit, pilot, snapshots)" no_server_part
  else
    run_timed "no server (unit, pilot, snapshots), nice 19" no_server_part "[no server]" &
    pids+=($!)
  fi
fi
if [ "${#live[@]}" -gt 0 ]; then
  for gen in 0.9 1.0; do
    for k in $(seq 1 "${shards[$gen]}"); do
      run_timed "system + live, Fluss $gen, $k/${shards[$gen]}" live_part "$gen" "$k" &
      pids+=($!)
    done
  done
fi
for pid in "${pids[@]}"; do
  wait "$pid"
done
echo "all parts, side by side|$((SECONDS - t0))|-" >>"$results"

# The short summaries' FAILED and ERROR lines of every part (at most 12, each cut at 200
# characters), right above the table, so that a log's last lines name what failed.
failures=$(cat "$logs"/*.log 2>/dev/null | grep -a -E '^\[[^]]*\] (FAILED|ERROR) ' | cut -c1-200)
if [ -n "$failures" ]; then
  echo
  echo "=== make test: what failed ==="
  head -n 12 <<<"$failures"
  more=$(($(wc -l <<<"$failures") - 12))
  if [ "$more" -gt 0 ]; then echo "... and $more more (above, in each part's summary)"; fi
fi

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
# The 1.0 servers report their data dir's disk as 1 - available/size, and konsole warns from
# 80%: a fuller machine turns every OK a live test expects into a WARNING.
tmp=${TMPDIR:-/tmp}
df -P "$tmp" | awk -v d="$tmp" 'NR == 2 { printf "disk of %s as the servers see it: %.0f%% used\n", d, 100 * (1 - $4 / $2) }'
echo "total ${SECONDS}s"
exit "$failed"
