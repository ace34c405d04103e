# Fuzz targets in `make check` (sourced by tests/run.sh): each target's
# standalone build over its seeds (plain and sanitizer runs), then, in the
# plain run where clang built them, each libFuzzer target for
# FANJIAN_FUZZ_SECONDS (default 15) on its corpus. `make fuzz-long` is the
# long run (README, "Fuzzing").
FUZZ_LIST="convert stream image encoding markup epub api"
export FUZZ_IMAGE=$B/fuzz/mini.fjd
for t in $FUZZ_LIST; do
    if [ ! -x "$B/fuzz/standalone-$t" ]; then
        bad "fuzz $t: seeds" "$B/fuzz/standalone-$t not built"
        continue
    fi
    run "$B/fuzz/standalone-$t" "$B/fuzz/seeds/$t"
    if [ "$rc" -eq 0 ]; then
        ok "fuzz $t: every seed holds the invariants ($(tail -n 1 "$TMP/out" | sed 's/^standalone: //'))"
    else
        bad "fuzz $t: seeds" "exit $rc: $(grep -m1 -E 'invariant|ERROR|runtime error' "$TMP/err")"
    fi
done
if [ "$B" = build ] && [ -x build-fuzz/fuzz-convert ]; then
    FUZZ_LOGS=$TMP/fuzz-logs FUZZ_SECONDS=${FANJIAN_FUZZ_SECONDS:-15} \
        ./fuzz/run.sh build-fuzz "$B/fuzz" $FUZZ_LIST >"$TMP/fuzz.out" 2>&1
    for t in $FUZZ_LIST; do
        line=$(grep "^fuzz $t:" "$TMP/fuzz.out")
        case $line in
        *"nothing found"*) ok "libFuzzer ${line#fuzz }" ;;
        *) bad "libFuzzer $t" "${line:-no result}" ;;
        esac
    done
elif [ "$B" = build ]; then
    skip "libFuzzer targets" "clang is not installed (make fuzz needs it)"
fi
