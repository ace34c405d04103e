# The language model: fjdict's KenLM reader against the reference dump, a
# damaged model refused, and an image built with the model (make
# LM_WEIGHT=...) converting with it. Sourced by tests/run.sh, which provides
# FJ, B, TMP, run, ok, bad, check, skip, err1.

L=$TMP/lm
mkdir -p "$L"
FJDICT=$B/fjdict
LM_FILE=$B/zh_CN.lm
DUMP=$FANJIAN_SHARED/tools/kenlm-dump.py

if [ ! -r "$LM_FILE" ]; then
    skip "lm: reader and model image" "$LM_FILE not found (make fetches it for make check)"
else
    # -- the reader, on the real file -------------------------------------------------
    if [ -r "$DUMP" ] && command -v python3 >/dev/null; then
        "$FJDICT" --lm-dump "$LM_FILE" unigrams >"$L/uni.ours" 2>"$L/err"
        python3 "$DUMP" "$LM_FILE" unigrams >"$L/uni.ref"
        if cmp -s "$L/uni.ours" "$L/uni.ref" && [ "$(wc -l <"$L/uni.ref")" -eq 164887 ]; then
            ok "lm: every unigram and back-off equals the reference dump (164,887 words)"
        else
            bad "lm: every unigram and back-off equals the reference dump" "$(head -n 1 "$L/err")"
        fi
        "$FJDICT" --lm-dump "$LM_FILE" bigrams >"$L/bi.ours" 2>"$L/err"
        python3 "$DUMP" "$LM_FILE" bigrams >"$L/bi.ref"
        if cmp -s "$L/bi.ours" "$L/bi.ref" && [ "$(wc -l <"$L/bi.ref")" -eq 1983152 ]; then
            ok "lm: every bigram equals the reference dump (1,983,152)"
        else
            bad "lm: every bigram equals the reference dump" "$(head -n 1 "$L/err")"
        fi
        "$FJDICT" --lm-dump "$LM_FILE" bigrams 我们 >"$L/bi.some"
        python3 "$DUMP" "$LM_FILE" bigrams 我们 >"$L/bi.some.ref"
        check "lm: bigrams after one word equal the reference dump" \
            test -s "$L/bi.some" -a "$(cmp -s "$L/bi.some" "$L/bi.some.ref" && echo same)" = same
    else
        skip "lm: reader against the reference dump" "$DUMP or python3 not found (no ../shared)"
    fi
    # The trigrams under each bigram, found through the array-compressed
    # pointers, add up to the header's count.
    n3=$("$FJDICT" --lm-dump "$LM_FILE" trigrams | wc -l)
    check "lm: the trigram ranges cover the header's 634,213 trigrams" test "$n3" -eq 634213
    "$FJDICT" --lm-dump "$LM_FILE" trigrams 我们 | grep -q "^我们	几乎	每	-0.962$"
    check "lm: a trigram with its probability (我们 几乎 每)" test $? -eq 0

    # -- damaged models: a message, never a crash --------------------------------------
    for cut in 100 5000000 17000000; do
        head -c "$cut" "$LM_FILE" >"$L/cut.lm"
        run "$FJDICT" --lm-dump "$L/cut.lm" unigrams
        if [ "$rc" -eq 1 ] && grep -q 'cut.lm: ' "$TMP/err"; then
            ok "lm: a model cut at $cut bytes is refused with a message"
        else
            bad "lm: a model cut at $cut bytes is refused with a message" "exit $rc: $(err1)"
        fi
    done
    run "$FJDICT" --lm-dump "$L/none.lm" unigrams
    check "lm: a missing model is an error" test "$rc" -eq 1 -a -s "$TMP/err"

    # -- an image with the model ---------------------------------------------------------
    run "$FJDICT" --compile "$FANJIAN_OPENCC_DATA" -o "$L/lm.fjd" --essay "$B/essay.txt" \
        --lm "$LM_FILE" --lm-weight 0.5 --curated "$ROOT/data/context"
    if [ "$rc" -eq 0 ] && grep -q 'language model: .* bigram and .* back-off costs' "$TMP/out"; then
        ok "lm: fjdict builds an image with the model"
        # Cases the model decides (from make accuracy's tuning set) that the
        # word list alone gets wrong: 製成 (made of), 菸蒂 (a cigarette end).
        printf '%s\n' '由纳米碳管制成的薄盔甲' '大麻烟蒂' >"$L/in.txt"
        printf '%s\n' '由納米碳管製成的薄盔甲' '大麻菸蒂' >"$L/want.txt"
        run "$FJ" --dict "$L/lm.fjd" -c s2tw -i "$L/in.txt"
        check "lm: the model's image chooses by the word before (製成, 菸蒂)" cmp -s "$TMP/out" "$L/want.txt"
        run "$FJ" -c s2tw -i "$L/in.txt"
        check "lm: the default image, without the model, does not (制成, 煙蒂)" \
            test "$(sed -n 1p "$TMP/out")" = '由納米碳管制成的薄盔甲'
        if [ -r "$SHARED_COMPAT/input.txt" ]; then
            head -c 60000 "$SHARED_COMPAT/input.txt" >"$L/part.txt"
            for p in s2t s2tw s2twp t2tw; do
                "$FJ" --dict "$L/lm.fjd" -c $p "$L/part.txt" >"$L/whole.out" 2>/dev/null
                dd if="$L/part.txt" bs=5 status=none |
                    "$FJ" --dict "$L/lm.fjd" -c $p >"$L/piped.out" 2>/dev/null
                check "lm: $p with the model streams as it converts at once" \
                    cmp -s "$L/whole.out" "$L/piped.out"
            done
            # Text already in Traditional stays as it is.
            "$FJ" --dict "$L/lm.fjd" -c s2tw "$SHARED_COMPAT/s2tw.txt" >"$L/again.out" 2>/dev/null
            "$FJ" --dict "$L/lm.fjd" -c s2tw "$L/again.out" >"$L/again2.out" 2>/dev/null
            check "lm: s2tw with the model is idempotent on its own output" cmp -s "$L/again.out" "$L/again2.out"
        fi
        # A damaged table with no empty slot: the unit test, run on this image.
        FANJIAN_DICT="$L/lm.fjd" FANJIAN_TEST_FILTER=test_image_lm_table_full \
            "$B/tests/unit" >"$L/unit.out" 2>&1
        if [ $? -eq 0 ] && grep -q '^\[       OK \] test_image_lm_table_full' "$L/unit.out"; then
            ok "lm: a model table with no empty slot does not hang a conversion"
        else
            bad "lm: a model table with no empty slot does not hang a conversion" "$(tail -n 2 "$L/unit.out")"
        fi
        # --compat is the same engine with or without the model.
        printf '%s\n' '这是只有一个人的世界，头发干了。' >"$L/c.txt"
        a=$("$FJ" --dict "$L/lm.fjd" --compat -c s2twp "$L/c.txt")
        b=$("$FJ" --compat -c s2twp "$L/c.txt")
        check "lm: --compat is unchanged by the model" test -n "$a" -a "$a" = "$b"
    else
        bad "lm: fjdict builds an image with the model" "exit $rc: $(err1)"
    fi
fi
