# The character classes (data/char-classes.txt, compiled by tools/charclass.c
# into src/charclass.h's tables; issue 20). Sourced by tests/run.sh, which
# provides ok/bad/skip, run, err1, run_cmocka, B, TMP and ROOT.

charclass_suite() {
    local gen=$B/charclass data=data/char-classes.txt # as make names it (cd "$ROOT")
    # The tables against the file, code point by code point (tests/charclass.c).
    run_cmocka "$B/tests/charclass"
    if [ ! -x "$gen" ]; then
        bad "charclass: $gen not built"
        return
    fi

    # The build's tables are what the generator writes from the file.
    run "$gen" "$data"
    if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$B/gen/char_classes.c"; then
        ok "charclass: $B/gen/char_classes.c is data/char-classes.txt compiled"
    else
        bad "charclass: $B/gen/char_classes.c is data/char-classes.txt compiled" "exit $rc: $(err1)"
    fi

    # The test notices tables that are not the file's: 點 left out of a
    # class, a map that gives another character.
    sed 's/^class word-dot: 点 點$/class word-dot: 点/' "$data" >"$TMP/cc-class.txt"
    sed 's/^map fullwidth: ,， /map fullwidth: ,、 /' "$data" >"$TMP/cc-map.txt"
    local doctored
    for doctored in cc-class cc-map; do
        if cmp -s "$data" "$TMP/$doctored.txt"; then
            bad "charclass: tests/charclass fails on $doctored" "the sed changed nothing"
            continue
        fi
        FANJIAN_CHAR_CLASSES=$TMP/$doctored.txt "$B/tests/charclass" >"$TMP/out" 2>&1
        rc=$?
        if [ "$rc" -ne 0 ] && grep -q "$doctored.txt:[0-9]*: .*U+" "$TMP/out"; then
            ok "charclass: tests/charclass fails on a file the tables do not match ($doctored)"
        else
            bad "charclass: tests/charclass fails on a file the tables do not match ($doctored)" \
                "exit $rc: $(grep -m1 'U+' "$TMP/out")"
        fi
    done

    # Each damaged file is refused with its file, line and reason; the
    # line number is where the fault is (LAST: the file's last line).
    local last
    last=$(wc -l <"$data")
    local name edit want line
    # NAME|EDIT (a sed script, or append:LINE)|LINE|WHAT THE MESSAGE SAYS
    while IFS='|' read -r name edit line want; do
        [ -n "$name" ] || continue
        local fixture=$TMP/cc-${name// /-}.txt
        case $edit in
        append:*) { cat "$data"; printf '%s\n' "${edit#append:}"; } >"$fixture" ;;
        *) sed "$edit" "$data" >"$fixture" ;;
        esac
        [ "$line" = LAST ] && line=$last
        [ "$line" = NEXT ] && line=$((last + 1))
        run "$gen" "$fixture"
        local first
        first=$(err1)
        if [ "$rc" -eq 1 ] && [ ! -s "$TMP/out" ] &&
            case $first in "$fixture:$line: "*"$want"*) true ;; *) false ;; esac; then
            ok "charclass: refuses $name (${first#"$TMP"/})"
        else
            bad "charclass: refuses $name" "exit $rc, want line $line '$want': $(err1)"
        fi
    done <<LIST
unknown class|append:class no-such-class: x|NEXT|unknown class "no-such-class"
map named as a class|append:class fullwidth: x|NEXT|"fullwidth" is a map, not a class
defined twice|append:class word-dot: 点|NEXT|defined twice
bad code point|s/^class before-han: U+0000..U+33FF$/class before-han: U+0000..U+D800/|$(grep -n '^class before-han:' "$data" | cut -d: -f1)|not a character
beyond U+10FFFF|s/^class typography-cjk: U+2E80..U+FDFF U+FE10..U+10FFFF$/class typography-cjk: U+2E80..U+FDFF U+FE10..U+110000/|$(grep -n '^class typography-cjk:' "$data" | cut -d: -f1)|not a character
short U+|s/^class line-break: U+000A /class line-break: U+0A /|$(grep -n '^class line-break:' "$data" | cut -d: -f1)|4 to 6 hex digits
not UTF-8|s/^class word-dot: 点 點$/class word-dot: 点 \xff/|$(grep -n '^class word-dot:' "$data" | cut -d: -f1)|not valid UTF-8
overlapping ranges|s/^class han-detect: U+4E00..U+9FFF /class han-detect: U+4E00..U+9FFF U+9000..U+9100 /|$(grep -n '^class han-detect:' "$data" | cut -d: -f1)|U+9000 is given twice
a character twice|s/^class word-dot: 点 點$/class word-dot: 点 點 点/|$(grep -n '^class word-dot:' "$data" | cut -d: -f1)|given twice
range backwards|s/^class before-han: U+0000..U+33FF$/class before-han: U+33FF..U+0000/|$(grep -n '^class before-han:' "$data" | cut -d: -f1)|ends before it starts
map given twice|s/^map fullwidth: ,， /map fullwidth: ,， ,、 /|$(grep -n '^map fullwidth:' "$data" | cut -d: -f1)|given twice
map ranges of two lengths|s/^map fold-width: ！..～=!..~ /map fold-width: ！..～=!..} /|$(grep -n '^map fold-width:' "$data" | cut -d: -f1)|differ in length
map to itself|s/^map fullwidth: ,， /map fullwidth: ,, /|$(grep -n '^map fullwidth:' "$data" | cut -d: -f1)|to itself
astral map|s/^map fullwidth: ,， /map fullwidth: ,\xf0\xa0\x80\x80 /|$(grep -n '^map fullwidth:' "$data" | cut -d: -f1)|in the BMP
not a definition|append:klass word-dot: x|NEXT|a line is
class missing|/^class before-han:/d|$((last - 1))|class "before-han" is missing
map missing|/^map ellipsis:/d|$((last - 1))|map "ellipsis" is missing
LIST

    # No CJK or punctuation code point is written as a number in src/*.c
    # (ASCII as 'x' is fine). Not code points: U+FFFD and the surrogates
    # (UTF-8's own), 0xFFFF (a sentinel), 0x3F00 (a mask of UTF-8 bits).
    if grep -niP '0x(?!FFFD|FFFF|3F00)(3[0-9A-F]{3}|4[E-F][0-9A-F]{2}|[5-9][0-9A-F]{3}|FF[0-9A-F]{2}|20[0-9A-F]{2}|2E[89A-F][0-9A-F]|F[9A][0-9A-F]{2}|FE[0-9A-F]{2})(?![0-9A-Fa-f])' \
        "$ROOT"/src/*.c >"$TMP/literals"; then
        bad "charclass: no CJK code-point literal in src/*.c" "$(head -n 3 "$TMP/literals")"
    else
        ok "charclass: no CJK code-point literal in src/*.c"
    fi
}

charclass_suite
