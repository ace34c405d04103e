# Custom OpenCC configs (-c FILE.json, formats/opencc_config.c): a config
# that is not a stock one converts as OpenCC 1.4.2's algorithm does over its
# own chain and dictionaries, checked against tests/opencc-reference (the
# literal reference converter of formats/ocdata.c over the same files); a
# stock one, under any name, is the stock profile; what cannot be honoured
# fails with the file's name. Dictionaries may be .ocd2 files (checked
# against Debian's opencc too). Sourced by tests/run.sh, which provides FJ, B,
# ROOT, TMP, run, ok, bad, check, skip, err1 and FANJIAN_OPENCC_DATA.

OCC=$TMP/opencc-config
REF=$B/tests/opencc-reference
mkdir -p "$OCC/sub"

# What cannot be honoured: an error naming the file, no output, exit 2.
occ_fails() {
    local label=$1 config=$2 want=$3
    run "$FJ" -c "$config" <<<'头发干了'
    if [ "$rc" != 0 ] && [ ! -s "$TMP/out" ] && grep -qF -- "$want" "$TMP/err"; then
        ok "custom config fails: $label"
    else
        bad "custom config fails: $label" "rc=$rc, stderr: $(err1)" "wanted: $want"
    fi
}

# A made-up chain in which maximum matching matters: a normalization step,
# a segmentation whose phrases overlap (头发干 / 发干 / 干了), a short-circuit
# group of phrases before characters, a union group whose longest key wins
# over its first member, and a plain step whose entries have several values
# (the first is taken).
printf '１\t1\n２\t2\nＡＢ\tab\n' >"$OCC/sub/norm.txt"
printf '头发\t头发\n头发干\t头发干\n发干\t发干\n干了\t干了\n干净\t干净\n' >"$OCC/sub/seg.txt"
printf '头发\t頭髮\n发干\t發乾\n干了\t乾了\n干净\t乾淨\n头发干\t頭髮幹\n' >"$OCC/sub/phrases.txt"
printf '头\t頭\n发\t發 髮\n干\t幹 乾 干\n了\t了 瞭\n净\t淨\n的\t的\n一\t一\n' >"$OCC/sub/chars.txt"
printf '頭髮\t头发(union-a)\n乾\t乾(a)\n' >"$OCC/sub/union-a.txt"
printf '頭髮乾\t头发干(union-b)\n頭\t头(b)\n乾淨\t干净(b)\n' >"$OCC/sub/union-b.txt"
printf '(a)\t[a] [x]\n發\t发 發\n' >"$OCC/sub/last.txt"
cat >"$OCC/my-s2t.json" <<'JSON'
{
  "name": "made up for the test",
  "normalization": [{ "dict": { "type": "text", "file": "sub/norm.txt" } }],
  "segmentation": { "type": "mmseg", "dict": { "type": "text", "file": "sub/seg.txt" } },
  "conversion_chain": [
    { "dict": { "type": "group", "dicts": [
        { "type": "text", "file": "sub/phrases.txt" },
        { "type": "text", "file": "sub/chars.txt" } ] } },
    { "dict": { "type": "group", "match_policy": "union", "dicts": [
        { "type": "text", "file": "sub/union-a.txt" },
        { "type": "text", "file": "sub/union-b.txt" } ] } },
    { "dict": { "type": "text", "file": "sub/last.txt" } }
  ]
}
JSON

# Random lines over the keys' characters (and some others), so keys meet
# and overlap in every way; a fixed seed, so a failure can be repeated.
awk 'BEGIN {
    srand(21);
    n = split("头 发 干 了 净 的 一 １ ２ Ａ Ｂ a ( ) 乾 頭 髮 中", c, " ");
    for (l = 0; l < 3000; l++) {
        s = ""; len = int(rand() * 24);
        for (i = 0; i < len; i++) s = s c[int(rand() * n) + 1];
        print s;
    }
}' >"$OCC/random.txt"

if [ ! -x "$REF" ]; then
    bad "custom config: $REF not built"
else
    # The expected output of one line, worked out by hand: segments 头发干 |
    # 了 | 的 | 干净; 头发干 -> 頭髮幹 (the longest phrase), then the union's
    # longest key 頭髮 (頭髮幹 has no key of b at 頭髮乾), and (a) -> [a].
    run "$FJ" -c "$OCC/my-s2t.json" <<<'头发干了的干净１ＡＢ'
    check "custom config: hand-checked line" \
        test "$rc" = 0 -a "$(cat "$TMP/out")" = '头发(union-a)幹了的干净(b)1ab'
    "$REF" "$OCC/my-s2t.json" "$FANJIAN_OPENCC_DATA" <<<'头发干了的干净１ＡＢ' >"$OCC/hand.ref"
    check "custom config: the reference agrees on the hand-checked line" \
        test "$(cat "$OCC/hand.ref")" = '头发(union-a)幹了的干净(b)1ab'
    "$REF" "$OCC/my-s2t.json" "$FANJIAN_OPENCC_DATA" <"$OCC/random.txt" >"$OCC/random.ref"
    run "$FJ" -c "$OCC/my-s2t.json" -i "$OCC/random.txt"
    if [ "$rc" = 0 ] && cmp -s "$TMP/out" "$OCC/random.ref"; then
        ok "custom config: 3000 random lines as the reference converts them"
    else
        bad "custom config: 3000 random lines as the reference converts them" "rc=$rc $(err1)" \
            "$(diff "$OCC/random.ref" "$TMP/out" | head -n 4)"
    fi
    # Through a pipe in small pieces (streaming) and from a relative path.
    occ_fj=$FJ occ_dict=$FANJIAN_DICT
    case $occ_fj in /*) ;; *) occ_fj=$ROOT/$occ_fj ;; esac
    case $occ_dict in /*) ;; *) occ_dict=$ROOT/$occ_dict ;; esac
    (cd "$OCC" && while IFS= read -r line; do printf '%s\n' "$line"; done <random.txt |
        FANJIAN_DICT=$occ_dict "$occ_fj" -c my-s2t.json >"$OCC/random.piped" 2>"$OCC/random.err")
    check "custom config: streamed, config named relatively" cmp -s "$OCC/random.piped" "$OCC/random.ref"
    run "$FJ" --compat -c "$OCC/my-s2t.json" -i "$OCC/random.txt"
    check "custom config: --compat gives the same" cmp -s "$TMP/out" "$OCC/random.ref"

    # Segmentation with one-character keys, a step after it that is the
    # segmentation's dictionary, and ideographic description sequences.
    printf '发\t发\n头发\t头发\n干\t干\n' >"$OCC/sub/seg1.txt"
    printf '{ "segmentation": { "type": "mmseg", "dict": { "type": "text", "file": "sub/seg1.txt" } },\n  "conversion_chain": [ { "dict": { "type": "text", "file": "sub/phrases.txt" } },\n    { "dict": { "type": "text", "file": "sub/seg1.txt" } }, { "dict": { "type": "text", "file": "sub/chars.txt" } } ] }\n' >"$OCC/seg1.json"
    awk 'BEGIN { srand(3); n = split("头 发 干 了 ⿰ 言 兑 a", c, " ");
                 for (l = 0; l < 2000; l++) { s = ""; len = int(rand() * 20);
                     for (i = 0; i < len; i++) s = s c[int(rand() * n) + 1]; print s } }' >"$OCC/random1.txt"
    "$REF" "$OCC/seg1.json" "$FANJIAN_OPENCC_DATA" <"$OCC/random1.txt" >"$OCC/random1.ref"
    run "$FJ" -c "$OCC/seg1.json" -i "$OCC/random1.txt"
    if [ "$rc" = 0 ] && [ -s "$OCC/random1.ref" ] && cmp -s "$TMP/out" "$OCC/random1.ref"; then
        ok "custom config: one-character segments and IDS as the reference"
    else
        bad "custom config: one-character segments and IDS as the reference" "rc=$rc $(err1)"
    fi

    # A config named like a stock one whose chain is not the stock one is custom.
    cp "$OCC/my-s2t.json" "$OCC/s2t.json"
    run "$FJ" -c "$OCC/s2t.json" <<<'头发干了的干净１ＡＢ'
    check "custom config: a custom s2t.json is custom" \
        test "$rc" = 0 -a "$(cat "$TMP/out")" = '头发(union-a)幹了的干净(b)1ab'

    # OpenCC's stock dictionaries named as .ocd2, beside a text one: the
    # image's copy (OpenCC 1.4.2's data), the generated regional phrases too.
    printf '鼠标\t滑鼠\n' >"$OCC/sub/mine.txt"
    cat >"$OCC/stock-dicts.json" <<'JSON'
{
  "name": "s2t with a phrase of my own, then Taiwan's variants",
  "normalization": [{ "dict": { "type": "ocd2", "file": "CJK_Compatibility_Ideographs.ocd2" } }],
  "segmentation": { "type": "mmseg", "dict": { "type": "group", "match_policy": "union", "dicts": [
      { "type": "text", "file": "sub/mine.txt" },
      { "type": "ocd2", "file": "STPhrases.ocd2" },
      { "type": "ocd2", "file": "STPhrases_GeneratedFromRegionalPhrases.ocd2" } ] } },
  "conversion_chain": [
    { "dict": { "type": "group", "dicts": [
        { "type": "group", "match_policy": "union", "dicts": [
            { "type": "text", "file": "sub/mine.txt" },
            { "type": "ocd2", "file": "STPhrases.ocd2" },
            { "type": "ocd2", "file": "STPhrases_GeneratedFromRegionalPhrases.ocd2" } ] },
        { "type": "ocd2", "file": "STCharacters.ocd2" } ] } },
    { "dict": { "type": "ocd2", "file": "TWVariants.ocd2" } }
  ]
}
JSON
    if [ -r "$FANJIAN_OPENCC_DATA/dictionary/STPhrases.txt" ]; then
        # Every phrase key of OpenCC's tables, a few to a line: text where
        # the phrases meet and overlap.
        cut -f1 "$FANJIAN_OPENCC_DATA/dictionary/STPhrases.txt" \
            "$FANJIAN_OPENCC_DATA/dictionary/TWPhrases.txt" "$FANJIAN_OPENCC_DATA/dictionary/HKPhrases.txt" |
            paste -d '' - - - - >"$OCC/phrases.in"
        printf '我的鼠标坏了，头发干了。\n' >>"$OCC/phrases.in"
        "$REF" "$OCC/stock-dicts.json" "$FANJIAN_OPENCC_DATA" <"$OCC/phrases.in" >"$OCC/phrases.ref"
        run "$FJ" -c "$OCC/stock-dicts.json" -i "$OCC/phrases.in"
        if [ "$rc" = 0 ] && cmp -s "$TMP/out" "$OCC/phrases.ref" && tail -n 1 "$TMP/out" | grep -q '滑鼠'; then
            ok "custom config with stock .ocd2 dictionaries: $(wc -l <"$OCC/phrases.in") lines as the reference"
        else
            bad "custom config with stock .ocd2 dictionaries" "rc=$rc $(err1)" \
                "$(diff "$OCC/phrases.ref" "$TMP/out" | head -n 4)"
        fi
    else
        skip "custom config with stock .ocd2 dictionaries" "no OpenCC data in $FANJIAN_OPENCC_DATA"
    fi
fi

# Any other .ocd2 (formats/ocd2.c), made from the text dictionaries above by
# Debian's opencc_dict: the same output as the text config, and as Debian's
# OpenCC 1.1.6 over the same files.
if ! command -v opencc_dict >/dev/null || ! command -v opencc >/dev/null; then
    skip "custom config with .ocd2 dictionaries" "Debian's opencc (opencc_dict) not installed"
elif [ ! -x "$REF" ]; then
    bad "custom config with .ocd2 dictionaries: $REF not built"
else
    occ_made=0
    for t in norm seg phrases chars union-a union-b last; do
        opencc_dict -i "$OCC/sub/$t.txt" -o "$OCC/sub/$t.ocd2" -f text -t ocd2 >/dev/null 2>&1 &&
            occ_made=$((occ_made + 1))
    done
    check "ocd2: opencc_dict made the seven .ocd2 files" test "$occ_made" = 7
    # Every text dictionary of my-s2t.json (normalization, segmentation,
    # both groups) named as its .ocd2.
    sed 's|"type": "text", "file": "\(sub/[a-z-]*\)\.txt"|"type": "ocd2", "file": "\1.ocd2"|' \
        "$OCC/my-s2t.json" >"$OCC/my-s2t-ocd2.json"
    check "ocd2: the config names no text dictionary" \
        test "$(grep -c '"text"' "$OCC/my-s2t-ocd2.json")" = 0 -a "$(grep -c '\.ocd2"' "$OCC/my-s2t-ocd2.json")" = 7
    run "$FJ" -c "$OCC/my-s2t-ocd2.json" -i "$OCC/random.txt"
    if [ "$rc" = 0 ] && [ -s "$OCC/random.ref" ] && cmp -s "$TMP/out" "$OCC/random.ref"; then
        ok "ocd2: my-s2t.json's dictionaries as .ocd2 give the text config's output (3000 lines)"
    else
        bad "ocd2: my-s2t.json's dictionaries as .ocd2 give the text config's output" "rc=$rc $(err1)" \
            "$(diff "$OCC/random.ref" "$TMP/out" | head -n 4)"
    fi
    # What OpenCC 1.1.6 reads (no normalization, no union; segmentation
    # required): overlapping phrases before characters, then two steps whose
    # keys overlap again. Its output is the oracle for both configs.
    cat >"$OCC/mm-text.json" <<'JSON'
{
  "segmentation": { "type": "mmseg", "dict": { "type": "text", "file": "sub/seg.txt" } },
  "conversion_chain": [
    { "dict": { "type": "group", "dicts": [
        { "type": "text", "file": "sub/phrases.txt" },
        { "type": "text", "file": "sub/chars.txt" } ] } },
    { "dict": { "type": "text", "file": "sub/union-b.txt" } },
    { "dict": { "type": "text", "file": "sub/last.txt" } }
  ]
}
JSON
    sed 's|"type": "text", "file": "\(sub/[a-z-]*\)\.txt"|"type": "ocd2", "file": "\1.ocd2"|' \
        "$OCC/mm-text.json" >"$OCC/mm-ocd2.json"
    (cd / && opencc -c "$OCC/mm-ocd2.json" -i "$OCC/random.txt" -o "$OCC/mm.opencc" 2>"$OCC/mm.opencc-err")
    (cd / && opencc -c "$OCC/mm-text.json" -i "$OCC/random.txt" -o "$OCC/mm-text.opencc" 2>/dev/null)
    run "$FJ" -c "$OCC/mm-ocd2.json" -i "$OCC/random.txt"
    cp "$TMP/out" "$OCC/mm.fj"
    run "$FJ" -c "$OCC/mm-text.json" -i "$OCC/random.txt"
    if [ -s "$OCC/mm.opencc" ] && ! cmp -s "$OCC/mm.opencc" "$OCC/random.txt" &&
        cmp -s "$OCC/mm.opencc" "$OCC/mm-text.opencc" && cmp -s "$OCC/mm.fj" "$OCC/mm.opencc" &&
        cmp -s "$TMP/out" "$OCC/mm.opencc"; then
        ok "ocd2: a made-up chain as .ocd2 and as text, as Debian's opencc converts it (3000 lines)"
    else
        bad "ocd2: a made-up chain as .ocd2 and as text, as Debian's opencc converts it" \
            "$(head -n 1 "$OCC/mm.opencc-err")" "$(diff "$OCC/mm.opencc" "$OCC/mm.fj" | head -n 4)"
    fi
    # Debian's own STPhrases and STCharacters under names that are not
    # OpenCC's (so they are read, not taken from the image), against
    # Debian's opencc over every phrase of OpenCC's tables.
    if [ -r /usr/share/opencc/STPhrases.ocd2 ] && [ -r /usr/share/opencc/STCharacters.ocd2 ] &&
        [ -s "$OCC/phrases.in" ]; then
        cp /usr/share/opencc/STPhrases.ocd2 "$OCC/sub/DebianPhrases.ocd2"
        cp /usr/share/opencc/STCharacters.ocd2 "$OCC/sub/DebianCharacters.ocd2"
        cat >"$OCC/debian-renamed.json" <<'JSON'
{
  "segmentation": { "type": "mmseg", "dict": { "type": "ocd2", "file": "sub/DebianPhrases.ocd2" } },
  "conversion_chain": [{ "dict": { "type": "group", "dicts": [
      { "type": "ocd2", "file": "sub/DebianPhrases.ocd2" },
      { "type": "ocd2", "file": "sub/DebianCharacters.ocd2" } ] } }]
}
JSON
        (cd / && opencc -c "$OCC/debian-renamed.json" -i "$OCC/phrases.in" -o "$OCC/debian.opencc")
        run "$FJ" -c "$OCC/debian-renamed.json" -i "$OCC/phrases.in"
        if [ "$rc" = 0 ] && [ -s "$OCC/debian.opencc" ] && cmp -s "$TMP/out" "$OCC/debian.opencc" &&
            ! cmp -s "$TMP/out" "$OCC/phrases.in"; then
            ok "ocd2: Debian's STPhrases.ocd2 and STCharacters.ocd2, renamed, as Debian's opencc ($(wc -l <"$OCC/phrases.in") lines)"
        else
            bad "ocd2: Debian's STPhrases.ocd2 and STCharacters.ocd2, renamed, as Debian's opencc" \
                "rc=$rc $(err1)" "$(diff "$OCC/debian.opencc" "$TMP/out" | head -n 4)"
        fi
    else
        skip "ocd2: Debian's own .ocd2 files" "/usr/share/opencc or OpenCC's text data not found"
    fi

    # Damaged files: an error naming the file, no output, never a crash.
    ocd2_size=$(wc -c <"$OCC/sub/chars.ocd2")
    for cut in 0 10 19 40 200 $((ocd2_size / 2)) $((ocd2_size - 60)) $((ocd2_size - 1)); do
        head -c "$cut" "$OCC/sub/chars.ocd2" >"$OCC/sub/cut-$cut.ocd2"
        sed "s|sub/chars.ocd2|sub/cut-$cut.ocd2|" "$OCC/my-s2t-ocd2.json" >"$OCC/cut-$cut.json"
        occ_fails "an .ocd2 cut to $cut of $ocd2_size bytes" "$OCC/cut-$cut.json" "sub/cut-$cut.ocd2: "
    done
    { printf 'OPENCC_MARISA_0.2.4'; tail -c +20 "$OCC/sub/chars.ocd2"; } >"$OCC/sub/header.ocd2"
    sed "s|sub/chars.ocd2|sub/header.ocd2|" "$OCC/my-s2t-ocd2.json" >"$OCC/header.json"
    occ_fails "an .ocd2 with another header" "$OCC/header.json" \
        "sub/header.ocd2: not an OpenCC .ocd2 dictionary"
    { cat "$OCC/sub/chars.ocd2"; printf 'x'; } >"$OCC/sub/longer.ocd2"
    sed "s|sub/chars.ocd2|sub/longer.ocd2|" "$OCC/my-s2t-ocd2.json" >"$OCC/longer.json"
    occ_fails "an .ocd2 with a byte after its values" "$OCC/longer.json" "sub/longer.ocd2: damaged"
    # The values section is the file's end: 8 bytes of counts, each value
    # with its NUL, and per key a count and a length per value (u16s).
    if command -v python3 >/dev/null; then
        python3 - "$OCC/sub/chars.txt" "$OCC/sub/chars.ocd2" "$OCC/sub" <<'PY'
import struct, sys
lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[1], encoding="utf-8")]
values = [v for _, vs in lines for v in vs.split(" ")]
size = 8 + sum(len(v.encode()) + 1 for v in values) + 2 * len(lines) + 2 * len(values)
data = bytearray(open(sys.argv[2], "rb").read())
at = len(data) - size
items, total = struct.unpack_from("<II", data, at)
assert items == len(lines), (items, len(lines))
def write(name, b):
    open("%s/%s.ocd2" % (sys.argv[3], name), "wb").write(b)
more = bytearray(data); struct.pack_into("<I", more, at, items + 1); write("count", more)
first = at + 8 + total  # the first key's value count
none = bytearray(data); struct.pack_into("<H", none, first, 0); write("novalue", none)
long_ = bytearray(data); struct.pack_into("<H", long_, first + 2, 60000); write("longvalue", long_)
latin = bytearray(data); latin[at + 8] = 0xFF; write("latin1", latin)
PY
        for t in count:"damaged: 8 values for 7 keys" novalue:"damaged: no value for key" \
            longvalue:"damaged: a value beyond the values" latin1:"not UTF-8: a value"; do
            sed "s|sub/chars.ocd2|sub/${t%%:*}.ocd2|" "$OCC/my-s2t-ocd2.json" >"$OCC/${t%%:*}.json"
            occ_fails "an .ocd2 whose values are damaged (${t%%:*})" "$OCC/${t%%:*}.json" \
                "sub/${t%%:*}.ocd2: ${t#*:}"
        done
    else
        skip "ocd2: damaged values" "python3 not found"
    fi
fi

# Out of memory while a custom config loads: tests/nomem-preload.so fails
# one allocation, the n-th after the config is opened and before the input
# is, for every 7th n. Each run converts correctly or stops with no output,
# never a crash; the loader's own failures say "CONFIG: out of memory"
# (exit 2), not the tools' exit 70.
NOMEM_SO=$B/tests/nomem-preload.so
printf '头发干了的干净１ＡＢ\n' >"$OCC/nomem.in"
if grep -qa __asan_init "$FJ" 2>/dev/null; then
    skip "custom config out of memory" "the preload shim runs in the plain build only"
elif [ ! -e "$NOMEM_SO" ]; then
    bad "custom config out of memory: $NOMEM_SO not built"
else
    nomem_env=(env LD_PRELOAD="$NOMEM_SO" FANJIAN_NOMEM_ARM=/my-s2t.json FANJIAN_NOMEM_DISARM=/nomem.in)
    nomem_total=$("${nomem_env[@]}" FANJIAN_NOMEM_COUNT=1 "$FJ" -c "$OCC/my-s2t.json" -i "$OCC/nomem.in" 2>&1 \
        >/dev/null | sed -n 's/^nomem-preload: \([0-9]*\) allocations$/\1/p')
    nomem_runs=0 nomem_bad="" nomem_oom=0
    for ((n = 1; n <= ${nomem_total:-0}; n += 7)); do
        run "${nomem_env[@]}" FANJIAN_NOMEM_NTH=$n "$FJ" -c "$OCC/my-s2t.json" -i "$OCC/nomem.in"
        nomem_runs=$((nomem_runs + 1))
        if [ "$rc" = 0 ]; then
            [ "$(cat "$TMP/out")" = '头发(union-a)幹了的干净(b)1ab' ] || nomem_bad="$nomem_bad $n:wrong-output"
        elif [ "$rc" -ge 128 ] || [ -s "$TMP/out" ]; then
            nomem_bad="$nomem_bad $n:rc=$rc"
        elif grep -qF "my-s2t.json: out of memory" "$TMP/err"; then
            nomem_oom=$((nomem_oom + 1))
            [ "$rc" = 2 ] || nomem_bad="$nomem_bad $n:loader-rc=$rc"
        fi
    done
    if [ "${nomem_total:-0}" -gt 100 ] && [ -z "$nomem_bad" ] && [ "$nomem_oom" -gt 10 ]; then
        ok "custom config out of memory: $nomem_runs of $nomem_total allocations failed in turn, no crash ($nomem_oom loader errors)"
    else
        bad "custom config out of memory" "allocations: ${nomem_total:-?}, loader errors: $nomem_oom" \
            "failing runs (n:what):${nomem_bad:0:300}"
    fi
fi

# Stock configs under any name and from any place are the stock profile:
# the default mode as -c s2t, not OpenCC's 頭髮幹了.
want=$("$FJ" -c s2t <<<'她的头发干了')
if [ -r "$FANJIAN_OPENCC_DATA/config/s2t.json" ]; then
    cp "$FANJIAN_OPENCC_DATA/config/s2t.json" "$OCC/renamed.json"
    run "$FJ" -c "$OCC/renamed.json" <<<'她的头发干了'
    check "stock config: OpenCC 1.4.2's s2t.json under another name is s2t" \
        test "$rc" = 0 -a "$(cat "$TMP/out")" = "$want" -a "$want" = '她的頭髮乾了'
else
    skip "stock config: OpenCC 1.4.2's s2t.json" "no OpenCC data in $FANJIAN_OPENCC_DATA"
fi
# Debian's OpenCC 1.1.6 s2t.json (/usr/share/opencc/s2t.json), as it reads.
cat >"$OCC/debian-s2t.json" <<'JSON'
{
  "name": "Simplified Chinese to Traditional Chinese",
  "segmentation": { "type": "mmseg", "dict": { "type": "ocd2", "file": "STPhrases.ocd2" } },
  "conversion_chain": [{ "dict": { "type": "group", "dicts": [
      { "type": "ocd2", "file": "STPhrases.ocd2" }, { "type": "ocd2", "file": "STCharacters.ocd2" } ] } }]
}
JSON
run "$FJ" -c "$OCC/debian-s2t.json" <<<'她的头发干了'
check "stock config: Debian's OpenCC 1.1.6 s2t.json is s2t" test "$rc" = 0 -a "$(cat "$TMP/out")" = "$want"
run "$FJ" -c s2t.json <<<'她的头发干了'
check "stock config: -c s2t.json with no such file is the profile" \
    test "$rc" = 0 -a "$(cat "$TMP/out")" = "$want"
# The list of stock configs matches the fetched OpenCC data.
if command -v python3 >/dev/null && [ -d "$FANJIAN_OPENCC_DATA/config" ]; then
    if python3 - "$ROOT/data/opencc-stock-configs.tsv" "$FANJIAN_OPENCC_DATA/config" >"$OCC/stock.log" 2>&1 <<'PY'
import json, os, sys
listed = {}
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    name, source, text = line.rstrip("\n").split("\t")
    if source == "OpenCC 1.4.2":
        listed[name] = json.loads(text)
def canon(d):
    o = {"type": d.get("type")}
    if "file" in d:
        o["file"] = d["file"]
    if d.get("type") == "group":
        o["match_policy"] = d.get("match_policy", "short_circuit")
        o["dicts"] = [canon(x) for x in d.get("dicts", [])]
    if d.get("may_output_tofu"):
        o["may_output_tofu"] = True
    return o
bad = 0
names = sorted(f[:-5] for f in os.listdir(sys.argv[2]) if f.endswith(".json") and "schema" not in f)
for name in names:
    c = json.load(open(os.path.join(sys.argv[2], name + ".json"), encoding="utf-8"))
    want = {"conversion_chain": [{"dict": canon(s["dict"])} for s in c["conversion_chain"]]}
    if "normalization" in c:
        want["normalization"] = [{"dict": canon(s["dict"])} for s in c["normalization"]]
    if "segmentation" in c:
        want["segmentation"] = {"type": c["segmentation"]["type"], "dict": canon(c["segmentation"]["dict"])}
    if listed.get(name) != want:
        print("differs or missing:", name)
        bad = 1
if len(names) != 16 or set(listed) != set(names):
    print("configs:", names, "listed:", sorted(listed))
    bad = 1
sys.exit(bad)
PY
    then
        ok "stock configs: data/opencc-stock-configs.tsv lists OpenCC's 16"
    else
        bad "stock configs: data/opencc-stock-configs.tsv lists OpenCC's 16" "$(head -n 3 "$OCC/stock.log")"
    fi
else
    skip "stock configs: the list against OpenCC's data" "python3 or $FANJIAN_OPENCC_DATA/config not found"
fi

printf '{ "conversion_chain": [ { "dict": { "type": "text", "file": "sub/chars.txt" } }, ]\n' >"$OCC/bad-json.json"
occ_fails "malformed JSON" "$OCC/bad-json.json" "bad-json.json:1:"
printf '{ "name": "no chain" }\n' >"$OCC/no-chain.json"
occ_fails "no conversion_chain" "$OCC/no-chain.json" "no-chain.json: not an OpenCC config"
sed 's|sub/chars.txt|sub/missing.txt|' "$OCC/my-s2t.json" >"$OCC/missing.json"
occ_fails "a missing dictionary" "$OCC/missing.json" "missing.json: dictionary sub/missing.txt not found"
sed 's|"type": "text", "file": "sub/chars.txt"|"type": "marisa", "file": "sub/chars.txt"|' "$OCC/my-s2t.json" >"$OCC/type.json"
occ_fails "an unknown dictionary type" "$OCC/type.json" 'unknown dictionary type "marisa"'
printf '头\t頭\n发 髮\n' >"$OCC/sub/no-tab.txt"
sed 's|sub/chars.txt|sub/no-tab.txt|' "$OCC/my-s2t.json" >"$OCC/no-tab.json"
occ_fails "a dictionary line without a tab" "$OCC/no-tab.json" "sub/no-tab.txt:2: no tab between key and value"
printf '头\t頭\n头\t头\n' >"$OCC/sub/dup.txt"
sed 's|sub/chars.txt|sub/dup.txt|' "$OCC/my-s2t.json" >"$OCC/dup.json"
occ_fails "a duplicated key" "$OCC/dup.json" "duplicated key 头"
printf '\t頭\n' >"$OCC/sub/empty-key.txt"
sed 's|sub/chars.txt|sub/empty-key.txt|' "$OCC/my-s2t.json" >"$OCC/empty-key.json"
occ_fails "an empty key" "$OCC/empty-key.json" "sub/empty-key.txt: an empty key"
sed 's|"type": "text", "file": "sub/chars.txt"|"type": "ocd2", "file": "MyOwn.ocd2"|' "$OCC/my-s2t.json" >"$OCC/own-ocd2.json"
occ_fails "a binary dictionary that is not a stock one" "$OCC/own-ocd2.json" "dictionary MyOwn.ocd2"
# A derived stock dictionary the image does not keep is a file like any
# other: read from OpenCC's data directory as OpenCC reads it (there, as
# Debian's opencc converts), else not found.
printf '{ "segmentation": { "type": "mmseg", "dict": { "type": "ocd2", "file": "TWVariantsRev.ocd2" } },\n  "conversion_chain": [ { "dict": { "type": "ocd2", "file": "TWVariantsRev.ocd2" } } ] }\n' >"$OCC/derived.json"
if [ -r /usr/share/opencc/TWVariantsRev.ocd2 ] && command -v opencc >/dev/null; then
    # Taiwan's variants (the dictionary's keys) as text, when the data is there.
    cut -f2 "$FANJIAN_OPENCC_DATA/dictionary/TWVariants.txt" 2>/dev/null | tr ' ' '\n' >"$OCC/derived.in"
    printf '台灣的線上遊戲，裡面的衛生紙。\n' >>"$OCC/derived.in"
    (cd / && opencc -c "$OCC/derived.json" -i "$OCC/derived.in" -o "$OCC/derived.opencc")
    run "$FJ" -c "$OCC/derived.json" -i "$OCC/derived.in"
    check "custom config: a derived stock dictionary is read from /usr/share/opencc, as Debian's opencc" \
        test "$rc" = 0 -a -s "$OCC/derived.opencc" -a "$(cat "$TMP/out")" = "$(cat "$OCC/derived.opencc")" \
        -a "$(cat "$TMP/out")" != "$(cat "$OCC/derived.in")"
else
    occ_fails "a derived stock dictionary the image does not keep, and no such file" \
        "$OCC/derived.json" "dictionary TWVariantsRev.ocd2 not found"
fi
printf '{ "segmentation": { "type": "jieba", "dict": { "type": "text", "file": "sub/seg.txt" } },\n  "conversion_chain": [ { "dict": { "type": "text", "file": "sub/chars.txt" } } ] }\n' >"$OCC/seg.json"
occ_fails "an unknown segmentation" "$OCC/seg.json" "seg.json: unsupported segmentation"
step='{ "dict": { "type": "text", "file": "sub/chars.txt" } }'
printf '{ "conversion_chain": [ %s, %s, %s, %s, %s ] }\n' "$step" "$step" "$step" "$step" "$step" >"$OCC/five.json"
occ_fails "five conversion steps" "$OCC/five.json" "five.json: more than 4 conversion steps"
