#!/usr/bin/env bash
# `make test`'s runner. The tests without a server run first, on every core (a file per
# worker: a file's tests share its fixtures). Then the system and live tests run as two
# pytest processes side by side, one per server generation (`--part`, tests/conftest.py):
# each starts only its own generation's clusters on its own random loopback ports, and
# waits on its servers most of the time, so the two share the machine well. Each line of
# theirs is prefixed with its part. At the end: how long each part took and how it ended.
# Any part failing fails the run, exit 5 (no test collected) included.
#
# Usage: tests/run_suite.sh PYTHON  (the environment carries KONSOLE_TEST_FLUSS_*).
# SUITE_NO_SERVER and SUITE_LIVE (paths) run a smaller selection the same way.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${1:?usage: tests/run_suite.sh PYTHON}
read -r -a no_server <<<"${SUITE_NO_SERVER:-tests/unit tests/pilot snapshots}"
read -r -a live <<<"${SUITE_LIVE:-tests/system tests/live}"

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

# live_part GEN: the system and live tests of one generation, each line prefixed (as it
# comes: pytest writing into a pipe would otherwise hold its lines back).
live_part() {
  PYTHONUNBUFFERED=1 "$PY" -m pytest --part "fluss$1" "${live[@]}" 2>&1 | sed -u "s/^/[fluss$1] /"
  return "${PIPESTATUS[0]}"
}

run_timed "no server (unit, pilot, snapshots)" \
  "$PY" -m pytest --numprocesses auto --maxprocesses 4 --dist loadfile "${no_server[@]}"

t0=$SECONDS
run_timed "system + live, Fluss 0.9" live_part 0.9 &
p09=$!
run_timed "system + live, Fluss 1.0" live_part 1.0 &
p10=$!
wait "$p09"
wait "$p10"
echo "system + live, both side by side|$((SECONDS - t0))|-" >>"$results"

failed=0
echo
echo "=== make test: time per part ==="
while IFS='|' read -r name secs rc; do
  printf '%-40s %3dm%02ds' "$name" $((secs / 60)) $((secs % 60))
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
