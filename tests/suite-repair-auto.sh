# Repair's damage estimate (--repair=auto, the default): text converted
# character by character is repaired as freely as a conversion from
# Simplified, correct text is changed less than careful repair changes it, and a stream
# equals one call. Sourced by tests/run.sh, which provides FJ, ROOT, TMP, run,
# ok, bad, check, skip, err1 and FANJIAN_OPENCC_DATA.

RA=$TMP/repair-auto
mkdir -p "$RA"
DEV=$ROOT/bench/fiction/dev.tsv
RD=$ROOT/tests/repair-damage.py

# ra_fewer LABEL GOLD OURS THEIRS -lt|-le: passes when OURS has fewer (or no
# more) differences from GOLD than THEIRS.
ra_fewer() {
    local e_ours e_theirs
    e_ours=$(python3 "$RD" errors "$2" "$3")
    e_theirs=$(python3 "$RD" errors "$2" "$4")
    if [ -n "$e_ours" ] && [ "$e_ours" "$5" "$e_theirs" ] 2>/dev/null; then
        ok "$1: $e_ours errors, against $e_theirs"
    else
        bad "$1" "$e_ours errors, against $e_theirs"
    fi
}

if ! command -v python3 >/dev/null || [ ! -r "$FANJIAN_OPENCC_DATA/dictionary/STCharacters.txt" ]; then
    skip "repair auto" "python3 or the OpenCC data not found"
else
    python3 "$RD" damage "$FANJIAN_OPENCC_DATA" <"$DEV" >"$RA/damaged.txt"
    python3 "$RD" gold <"$DEV" >"$RA/gold.txt"
    for level in auto careful thorough; do
        "$FJ" -c t2tw --repair=$level -i "$RA/damaged.txt" -o "$RA/$level.txt"
    done
    "$FJ" -c t2tw -i "$RA/damaged.txt" -o "$RA/default.txt"
    e_in=$(python3 "$RD" errors "$RA/gold.txt" "$RA/damaged.txt")
    e_auto=$(python3 "$RD" errors "$RA/gold.txt" "$RA/auto.txt")
    e_careful=$(python3 "$RD" errors "$RA/gold.txt" "$RA/careful.txt")
    e_thorough=$(python3 "$RD" errors "$RA/gold.txt" "$RA/thorough.txt")
    # Measured when written: input 1079, careful 357, thorough 226, auto 76.
    check "repair auto: the default is auto" cmp -s "$RA/default.txt" "$RA/auto.txt"
    if [ "$e_auto" -gt 0 ] 2>/dev/null && [ $((e_auto * 2)) -lt "$e_thorough" ] &&
        [ $((e_auto * 4)) -lt "$e_careful" ] && [ $((e_auto * 10)) -lt "$e_in" ]; then
        ok "repair auto: damaged dev sentences, $e_auto errors (careful $e_careful, thorough $e_thorough, input $e_in)"
    else
        bad "repair auto: damaged dev sentences" "auto $e_auto, careful $e_careful, thorough $e_thorough, input $e_in"
    fi
    # Correct text: the estimate turns negative, and a clause that reads as
    # correct changes a character only where a word makes it 10 nats more
    # likely, so auto changes less than careful. Measured when written:
    # auto 0 characters, careful 4 (复合 -> 複合, 里程表 -> 里程錶, ...).
    "$FJ" -c t2tw --repair=auto -i "$RA/gold.txt" -o "$RA/gold.auto.txt"
    "$FJ" -c t2tw --repair=careful -i "$RA/gold.txt" -o "$RA/gold.careful.txt"
    ra_fewer "repair auto: correct text changes less than careful repair changes it" \
        "$RA/gold.txt" "$RA/gold.auto.txt" "$RA/gold.careful.txt" -lt
    # The same damaged sentences after the correct ones: the estimate turns.
    cat "$RA/gold.txt" "$RA/damaged.txt" >"$RA/both.txt"
    cat "$RA/gold.txt" "$RA/gold.txt" >"$RA/both.gold.txt"
    "$FJ" -c t2tw -i "$RA/both.txt" -o "$RA/both.auto.txt"
    e_both=$(python3 "$RD" errors "$RA/both.gold.txt" "$RA/both.auto.txt")
    if [ "$e_both" -lt $((e_careful / 2)) ] 2>/dev/null; then
        ok "repair auto: damaged text after correct text is still repaired freely ($e_both errors)"
    else
        bad "repair auto: damaged text after correct text" "$e_both errors (careful alone: $e_careful)"
    fi
    # A stream read in short pieces equals one call.
    python3 "$RD" trickle 7 <"$RA/both.txt" | "$FJ" -c t2tw >"$RA/both.stream.txt"
    check "repair auto: a stream read in short pieces equals the file converted at once" \
        cmp -s "$RA/both.stream.txt" "$RA/both.auto.txt"
    # A chapter on its own: its first clauses are judged on the evidence of
    # the first 8 KiB, so a short damaged text is repaired from its first
    # line on. Measured when written, lines 301-400: auto 2 errors, the round
    # trip 2, and 7 without the window.
    sed -n 301,400p "$RA/damaged.txt" >"$RA/chapter.txt"
    sed -n 301,400p "$RA/gold.txt" >"$RA/chapter.gold.txt"
    "$FJ" -c t2tw -i "$RA/chapter.txt" -o "$RA/chapter.auto.txt"
    "$FJ" -c t2s -i "$RA/chapter.txt" | "$FJ" -c s2tw >"$RA/chapter.rt.txt"
    ra_fewer "repair auto: a damaged chapter of 100 lines alone, no worse than the round trip" \
        "$RA/chapter.gold.txt" "$RA/chapter.auto.txt" "$RA/chapter.rt.txt" -le
    python3 "$RD" trickle 11 <"$RA/chapter.txt" | "$FJ" -c t2tw >"$RA/chapter.stream.txt"
    check "repair auto: the chapter read in short pieces equals the chapter converted at once" \
        cmp -s "$RA/chapter.stream.txt" "$RA/chapter.auto.txt"
    # Off: the profile's steps alone, as --compat.
    "$FJ" -c t2tw --repair=off -i "$RA/damaged.txt" -o "$RA/off.txt"
    "$FJ" -c t2tw --compat -i "$RA/damaged.txt" -o "$RA/compat.txt"
    check "repair off: t2tw writes what --compat writes" cmp -s "$RA/off.txt" "$RA/compat.txt"
    run "$FJ" -c t2tw --repair=sometimes -i "$RA/gold.txt"
    check "repair: an unknown level is refused with the four names" \
        test "$rc" -eq 2 -a -n "$(grep 'auto, careful, thorough or off' "$TMP/err")"
fi

# Forms never right that the data gives (麽, 処 is listed): a repaired chapter
# can be written as Big5, which has no 麽.
printf '他說什麽好処都沒有\n' >"$RA/me.txt"
run "$FJ" -c t2tw --to-encoding big5 -i "$RA/me.txt" -o "$RA/me.big5"
check "repair: 什麽好処 is repaired and written as Big5" \
    test "$rc" -eq 0 -a "$(iconv -f BIG5 -t UTF-8 <"$RA/me.big5" 2>/dev/null)" = "他說什麼好處都沒有"

# detect reports the estimate: high for the damaged sentences, low for the
# correct ones, none for a short text.
run "$FJ" detect "$RA/damaged.txt"
check "detect: damaged text is converted character by character" \
    grep -q '^.*damaged.txt: traditional, converted character by character (damage 0\.[89][0-9]) (UTF-8)$' "$TMP/out"
run "$FJ" detect --json "$RA/gold.txt"
check "detect: correct text, damage near 0 and no note" \
    grep -q '"script":"traditional",.*"damage":0\.0[0-9],' "$TMP/out"
run "$FJ" detect --json "$RA/me.txt"
check "detect: a short text shows too little (damage null)" grep -q '"damage":null' "$TMP/out"

# --to tw on a file of three chapters: Simplified, converted character by
# character, and correct Taiwan text (our dev sentences, 400 lines each). It
# leaves no more errors than the best chain of profiles (measured when
# written: --to tw 22; s2tw | t2tw 30, t2s | s2tw 31, t2tw | s2tw 36).
cut -f1 "$DEV" >"$RA/simp.txt"
{ sed -n 1,400p "$RA/simp.txt"; sed -n 401,800p "$RA/damaged.txt"; sed -n 801,1200p "$RA/gold.txt"; } >"$RA/three.txt"
"$FJ" --to tw -i "$RA/three.txt" -o "$RA/three.to.txt"
e_to=$(python3 "$RD" errors "$RA/gold.txt" "$RA/three.to.txt")
best=
for chain in "s2tw" "t2tw" "s2tw t2tw" "t2tw s2tw" "t2s s2tw" "s2tw t2tw=thorough"; do
    cp "$RA/three.txt" "$RA/chain.txt"
    for p in $chain; do
        level=${p#*=}; p=${p%=*}
        if [ "$level" != "$p" ]; then
            "$FJ" -c "$p" --repair="$level" -i "$RA/chain.txt" -o "$RA/chain.next"
        else
            "$FJ" -c "$p" -i "$RA/chain.txt" -o "$RA/chain.next"
        fi
        mv "$RA/chain.next" "$RA/chain.txt"
    done
    e=$(python3 "$RD" errors "$RA/gold.txt" "$RA/chain.txt")
    if [ -z "$best" ] || [ "$e" -lt "${best%% *}" ]; then best="$e ($chain)"; fi
done
if [ "$e_to" -le "${best%% *}" ] 2>/dev/null; then
    ok "--to tw: three chapters, $e_to errors; the best chain of profiles $best"
else
    bad "--to tw: three chapters" "$e_to errors against the best chain's $best"
fi
python3 "$RD" trickle 11 <"$RA/three.txt" | "$FJ" --to tw >"$RA/three.stream.txt"
check "--to tw: a stream read in short pieces equals the file converted at once" \
    cmp -s "$RA/three.stream.txt" "$RA/three.to.txt"
run "$FJ" --to tw -c s2t -i "$RA/me.txt"
check "--to and -c together are refused" test "$rc" -eq 2
run "$FJ" --to xx -i "$RA/me.txt"
check "--to: an unknown target is refused with the names" \
    test "$rc" -eq 2 -a -n "$(grep 'tw, twp, hk, hkp, cn, hant or hans' "$TMP/err")"
