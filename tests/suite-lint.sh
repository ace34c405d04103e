# fjdict --lint (issue 18): the curated tables of data/context. Sourced by
# tests/run.sh, which provides ok/bad/skip, run, err1, B, TMP, ROOT and
# FANJIAN_OPENCC_DATA.

lint_suite() {
    local fjdict=$B/fjdict essay=${FANJIAN_ESSAY:-$B/essay.txt}
    [ -r "$essay" ] || essay=build/essay.txt
    if [ ! -x "$fjdict" ]; then
        bad "lint: $fjdict not built"
        return
    fi

    # The real tables have no conflict.
    run "$fjdict" --lint "$ROOT/data/context"
    if [ "$rc" -eq 0 ] && grep -q 'no conflicts' "$TMP/out" &&
        grep -q 'curated entries in all' "$TMP/out"; then
        ok "lint: data/context has no conflicting entries"
    else
        bad "lint: data/context has no conflicting entries" "exit $rc: $(err1)"
    fi

    # Each fixture holds one conflict: refused, with both places named.
    local fixture want name where
    while read -r fixture want; do
        name="lint: tests/lint/$fixture is refused"
        run "$fjdict" --lint "$ROOT/tests/lint/$fixture"
        local missing=""
        for where in $want; do
            grep -qE "tests/lint/$fixture/${where}[:)]" "$TMP/err" || missing="$missing $where"
        done
        if [ "$rc" -eq 1 ] && [ -z "$missing" ]; then
            ok "$name"
        else
            bad "$name" "exit $rc, not naming$missing: $(err1)"
        fi
    done <<'LIST'
duplicate-key s2t.tsv:4 s2t.tsv:2
forms-cycle s2t-forms.tsv:2 s2t-forms.tsv:3
forms-chain s2t-forms.tsv:2 s2t-forms.tsv:3
s2t-against-forms s2t.tsv:1 s2t-forms.tsv:2
surname-against-s2t s2t.tsv:2 s2t-surnames.tsv:2
repair-twice repair.tsv:4 repair.tsv:2
either-rewritten repair-either.tsv:2 s2t-forms.tsv:1
malformed s2t.tsv:2
LIST

    # Entries that change nothing: a copy of the real tables with one such
    # entry added to s2t.tsv and one to t2s.tsv (头发 and 頭髮 convert so
    # without them). Those two are named; 想象 -> 想像, which the model
    # needs, is not.
    if [ ! -r "$essay" ] || [ ! -d "$FANJIAN_OPENCC_DATA/dictionary" ]; then
        skip "lint: entries that change nothing" "no word list ($essay) or OpenCC data"
        return
    fi
    local cur=$TMP/lint-curated
    rm -rf "$cur"
    cp -r "$ROOT/data/context" "$cur"
    printf '头发\t頭髮\n' >>"$cur/s2t.tsv"
    printf '頭髮\t头发\n' >>"$cur/t2s.tsv"
    local s2t_line t2s_line imagine
    s2t_line=$(wc -l <"$cur/s2t.tsv")
    t2s_line=$(wc -l <"$cur/t2s.tsv")
    imagine=$(grep -n "^想象	想像" "$cur/s2t.tsv" | cut -d: -f1)
    run timeout 1200 "$fjdict" --lint "$cur" --data "$FANJIAN_OPENCC_DATA" --essay "$essay"
    if [ "$rc" -eq 0 ] &&
        grep -qxF "$cur/s2t.tsv:$s2t_line: 头发 -> 頭髮 changes nothing" "$TMP/out" &&
        grep -qxF "$cur/t2s.tsv:$t2s_line: 頭髮 -> 头发 changes nothing" "$TMP/out" &&
        [ -n "$imagine" ] && ! grep -q "^$cur/s2t.tsv:$imagine:" "$TMP/out" &&
        grep -q 'entries change nothing' "$TMP/out"; then
        ok "lint: entries whose key converts so without them are named"
    else
        bad "lint: entries whose key converts so without them are named" \
            "exit $rc: $(err1); $(grep -c 'changes nothing' "$TMP/out") warnings"
    fi
    sed -n 's/^fjdict: lint: //p' "$TMP/out" | sed 's/^/      /'
    rm -rf "$cur"
}
lint_suite
