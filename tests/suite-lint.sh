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
    sed -n 's/^fjdict: lint: //p' "$TMP/out" | sed 's/^/      /'

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

    # Entries that change nothing: the real tables with small s2t.tsv and
    # t2s.tsv (three images to build, not four of the whole tables). 头发
    # and 頭髮 convert so without their entries; 百里 too; 数百里 does with
    # 百里 but not without it (數百裏), so it is tested in an image that keeps
    # 百里. 想象 -> 想像 and 想像 -> 想象 change what their key gives.
    if [ ! -r "$essay" ] || [ ! -d "$FANJIAN_OPENCC_DATA/dictionary" ]; then
        skip "lint: entries that change nothing" "no word list ($essay) or OpenCC data"
        return
    fi
    local cur=$TMP/lint-curated
    rm -rf "$cur"
    cp -r "$ROOT/data/context" "$cur"
    printf '# lint test\n想象\t想像\n百里\t百里\n数百里\t數百里\n头发\t頭髮\n' >"$cur/s2t.tsv"
    printf '想像\t想象\n頭髮\t头发\n' >"$cur/t2s.tsv"
    run timeout 1200 "$fjdict" --lint "$cur" --data "$FANJIAN_OPENCC_DATA" --essay "$essay"
    local got
    got=$(sed -n 's|^'"$cur"'/\(.*\) changes nothing$|\1|p' "$TMP/out" | sort | tr '\n' ' ')
    if [ "$rc" -eq 0 ] && [ "$got" = "s2t.tsv:3: 百里 -> 百里 s2t.tsv:4: 数百里 -> 數百里 s2t.tsv:5: 头发 -> 頭髮 t2s.tsv:2: 頭髮 -> 头发 " ] &&
        grep -q '^fjdict: lint: 3 s2t.tsv and 1 t2s.tsv entries change nothing' "$TMP/out"; then
        ok "lint: entries whose key converts so without them are named"
    else
        bad "lint: entries whose key converts so without them are named" \
            "exit $rc: $(err1); named: $got"
    fi
    rm -rf "$cur"
}
lint_suite
