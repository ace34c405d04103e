# Watermark injection (issue 17): tests/clean-inject.py builds paragraphs of
# the project's own story text, injects notices of invented sites in
# wordings of its own (both scripts, fixed seed) and measures what
# `fanjian clean` does: 0 story characters lost, at most 5 % of the
# watermark characters left. Sourced by tests/run.sh, which provides
# ok/bad/skip and FJ, TMP, ROOT.

clean_inject_suite() {
    if ! command -v python3 >/dev/null 2>&1; then
        skip "clean: watermark injection" "python3 not found"
        return
    fi
    if [ ! -x "$FJ" ]; then
        bad "clean: watermark injection" "$FJ not built"
        return
    fi
    local rc=0
    python3 "$ROOT/tests/clean-inject.py" "$FJ" "$ROOT" >"$TMP/inject.out" 2>&1 || rc=$?
    sed 's/^/      /' "$TMP/inject.out" | head -4
    if [ "$rc" -eq 0 ]; then
        ok "clean: injected watermarks go, no story character is lost"
    else
        bad "clean: injected watermarks go, no story character is lost" "$(tr '\n' '|' <"$TMP/inject.out" | head -c 600)"
    fi
}
clean_inject_suite
