# --rules with Legado (阅读) replacement-rule JSON (formats/legado.c,
# docs/clean-rules.md). Sourced by tests/run.sh, which provides B, FJ, TMP,
# ROOT, run, run_cmocka, ok, bad, check, err1.
#
# tests/legado/rules.json holds, on purpose: literal and regex removals whose
# order decides the result (请收藏 / 请收藏本站), a rule that works on what an
# earlier one left （首发）, Java spellings (\u00b7, (?u), \p{IsHan}), a rule
# scoped to 青云志, one excluding it, a replacement, a disabled rule, a
# title-only rule, a lookbehind PCRE2 cannot compile, a Java class
# intersection and a field of the wrong type. The expected-*.txt files were
# checked by hand.

# The C interface (tests/legado.c: document spans, line numbers), counted
# test by test as run.sh counts the other cmocka programs.
run_cmocka "$B/tests/legado"

LG=$ROOT/tests/legado
W=$TMP/legado
mkdir -p "$W"
cp "$LG/story.txt" "$W/青云志.txt"
cp "$LG/story.txt" "$W/other.txt"
# stderr with the test directory taken out of file names.
lg_err() { sed "s|$W/||g; s|$LG/||g" "$TMP/err"; }

# -- removal: exact bytes; the scoped rule applies only to the book it names --
run "$FJ" clean --rules "$LG/rules.json" "$W/青云志.txt"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$LG/expected-scoped.txt"; then
    ok "legado: literal and regex removals, by order, byte for byte (scoped rule applies)"
else
    bad "legado: literal and regex removals, by order, byte for byte (scoped rule applies)" \
        "exit $rc: $(err1)" "$(diff "$LG/expected-scoped.txt" "$TMP/out" | head -n 5)"
fi

run "$FJ" clean --rules "$LG/rules.json" "$W/other.txt"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$LG/expected-other.txt"; then
    ok "legado: a scoped rule skips other books, an excludeScope rule applies to them"
else
    bad "legado: a scoped rule skips other books, an excludeScope rule applies to them" \
        "exit $rc: $(err1)" "$(diff "$LG/expected-other.txt" "$TMP/out" | head -n 5)"
fi

# Standard input has no name: scoped rules do not apply, excluding ones do.
"$FJ" clean --rules "$LG/rules.json" <"$LG/story.txt" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$LG/expected-other.txt"; then
    ok "legado: standard input gets the unscoped rules only"
else
    bad "legado: standard input gets the unscoped rules only" "exit $rc: $(err1)"
fi

# -- what is skipped, and why --------------------------------------------------
run "$FJ" clean --rules "$LG/rules.json" "$W/青云志.txt"
lg_err >"$TMP/lg-err"
want='fanjian: rules.json: Legado rules: 8 removals used (1 only for the books their scope names), 6 skipped: 1 replacement (not a removal), 1 disabled, 1 for titles only, 3 invalid'
if grep -qxF "$want" "$TMP/lg-err"; then
    ok "legado: one summary per rules file counts replacements, disabled, title-only, invalid"
else
    bad "legado: one summary per rules file counts replacements, disabled, title-only, invalid" \
        "$(grep 'Legado rules:' "$TMP/lg-err")"
fi
if grep -qF 'rules.json: rule 12 "坏规则": not compiled: lookbehind assertion is not fixed length at byte 0 of the pattern; skipped' "$TMP/lg-err" &&
    grep -qF 'rules.json: rule 13 "交集": not compiled: class intersection (&&)' "$TMP/lg-err" &&
    grep -qF 'rules.json: rule 14 "类型错": isRegex is not of the type Legado gives it; skipped' "$TMP/lg-err"; then
    ok "legado: a rule that does not compile is skipped, naming it, the error and its offset"
else
    bad "legado: a rule that does not compile is skipped, naming it, the error and its offset" \
        "$(head -n 3 "$TMP/lg-err")"
fi

# -- --report: one line per removal, FILE:LINE:COLUMN, and a summary ------------
run "$FJ" clean --report --rules "$LG/rules.json" "$W/青云志.txt"
lg_err | grep -E '^青云志\.txt:[0-9]+:[0-9]+: |Legado rules removed' >"$TMP/lg-report"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/lg-report" "$LG/expected-report.txt" &&
    cmp -s "$TMP/out" "$LG/expected-scoped.txt"; then
    ok "legado: --report lists each removal as FILE:LINE:COLUMN: text, then the counts"
else
    bad "legado: --report lists each removal as FILE:LINE:COLUMN: text, then the counts" \
        "$(diff "$LG/expected-report.txt" "$TMP/lg-report" | head -n 6)"
fi

# A line the Legado rules drop still counts in the built-in rules' report.
printf '故事一。\n青豆书坊\n故事二。\n天才一秒记住本站地址：www.biquge.cc 最快更新！\n故事三。\n' >"$W/lines.txt"
run "$FJ" clean --report --rules "$LG/rules.json" "$W/lines.txt"
lg_err >"$TMP/lg-err"
if [ "$rc" -eq 0 ] && grep -q '^lines\.txt:2:1: 青豆书坊$' "$TMP/lg-err" &&
    grep -q '^lines\.txt:4:' "$TMP/lg-err" && ! grep -q '^lines\.txt:3:' "$TMP/lg-err" &&
    [ "$(cat "$TMP/out")" = "$(printf '故事一。\n故事二。\n故事三。')" ]; then
    ok "legado: the built-in report numbers lines as the input has them after a Legado drop"
else
    bad "legado: the built-in report numbers lines as the input has them after a Legado drop" \
        "$(grep '^lines' "$TMP/lg-err" | head -n 3)"
fi

# -- end to end with a conversion --------------------------------------------------
run "$FJ" -c s2tw --clean --rules "$LG/rules.json" "$W/青云志.txt"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$LG/expected-s2tw.txt"; then
    ok "legado: -c s2tw --clean --rules legado.json removes, then converts"
else
    bad "legado: -c s2tw --clean --rules legado.json removes, then converts" "exit $rc: $(err1)"
fi

# -- bytes around a removal: CRLF kept, invalid UTF-8 passed with --lossy ----------
printf '故事。青豆书坊\r\n青豆书坊\r\n尾\r\n' >"$W/crlf.txt"
run "$FJ" clean --rules "$LG/rules.json" "$W/crlf.txt"
if [ "$rc" -eq 0 ] && [ "$(od -An -tx1 "$TMP/out" | tr -d ' \n')" = "$(printf '故事。\r\n尾\r\n' | od -An -tx1 | tr -d ' \n')" ]; then
    ok "legado: CRLF lines keep their line endings; a line left empty goes whole"
else
    bad "legado: CRLF lines keep their line endings; a line left empty goes whole" "exit $rc: $(err1)"
fi
printf 'a\377青豆书坊b【青豆书坊 www.qingdou.cc】\376c\n' >"$W/lossy.txt"
run "$FJ" clean --lossy --rules "$LG/rules.json" "$W/lossy.txt"
if [ "$rc" -eq 0 ] && [ "$(od -An -tx1 "$TMP/out" | tr -d ' \n')" = "$(printf 'a\377b\376c\n' | od -An -tx1 | tr -d ' \n')" ]; then
    ok "legado: bytes that are not UTF-8 (--lossy) stay as they are around removals"
else
    bad "legado: bytes that are not UTF-8 (--lossy) stay as they are around removals" "exit $rc: $(err1)"
fi

# A byte order mark stays, even when the first line goes.
printf '\357\273\277青豆书坊\n正文青豆书坊。\n' >"$W/bom.txt"
run "$FJ" clean --rules "$LG/rules.json" "$W/bom.txt"
if [ "$rc" -eq 0 ] && [ "$(od -An -tx1 "$TMP/out" | tr -d ' \n')" = "$(printf '\357\273\277正文。\n' | od -An -tx1 | tr -d ' \n')" ]; then
    ok "legado: a UTF-8 byte order mark is kept when the first line is dropped"
else
    bad "legado: a UTF-8 byte order mark is kept when the first line is dropped" "exit $rc: $(err1)"
fi

# Java spellings PCRE2 reads otherwise: (?U) is not "ungreedy", \p{Punct} is
# ASCII punctuation, \uD83D\uDE00 is one character.
printf '甲【一】乙【二】丙\n故事~~!!\n笑😀了\n第一号\n' >"$W/java.txt"
run "$FJ" clean --rules "$LG/java.json" "$W/java.txt"
check "legado: Java's (?U), \\p{Punct}, \\P{Punct} and surrogate pairs mean what they mean in Java" \
    test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "$(printf '甲丙\n故事\n笑了\n第')"

# -- bounds: a rule that would run away is dropped, the text kept -------------------
# (x+x+)+[yz] on 30000 x's backtracks exponentially; the match limit stops it.
{
    head -c 30000 /dev/zero | tr '\0' x
    printf '\n前青豆书坊后\n'
} >"$W/backtrack.txt"
printf '[{"name":"回溯","pattern":"(x+x+)+[yz]"},{"name":"站名","pattern":"青豆书坊","isRegex":false}]' >"$W/backtrack.json"
run timeout 20 "$FJ" clean --rules "$W/backtrack.json" "$W/backtrack.txt"
lg_err >"$TMP/lg-err"
if [ "$rc" -eq 0 ] && grep -qF 'backtrack.json: rule 1 "回溯": skipped from here on: it passed the match limit (2000000 steps per match) at backtrack.txt line 1' "$TMP/lg-err" &&
    [ "$(head -n 1 "$TMP/out")" = "$(head -n 1 "$W/backtrack.txt")" ] &&
    [ "$(tail -n 1 "$TMP/out")" = "前后" ]; then
    ok "legado: a catastrophic regex passes the match limit: skipped with a message, text kept"
else
    bad "legado: a catastrophic regex passes the match limit: skipped with a message, text kept" \
        "exit $rc (124: it hung): $(head -n 1 "$TMP/lg-err")"
fi

# The rule's timeoutMillisecond is its budget for the whole run.
for _ in $(seq 200); do echo xxxxxxxxxxxxxxxxxx; done >"$W/slow.txt"
printf '[{"name":"慢规则","pattern":"(x+x+)+\\\\d","timeoutMillisecond":1}]' >"$W/slow.json"
run timeout 20 "$FJ" clean --rules "$W/slow.json" "$W/slow.txt"
lg_err >"$TMP/lg-err"
if [ "$rc" -eq 0 ] && grep -qF 'slow.json: rule 1 "慢规则": skipped from here on: it passed its time budget (1 ms for the run)' "$TMP/lg-err" &&
    cmp -s "$TMP/out" "$W/slow.txt" && [ "$(grep -c 'skipped from here on' "$TMP/lg-err")" -eq 1 ]; then
    ok "legado: a rule past its timeoutMillisecond is skipped once, with a message, text kept"
else
    bad "legado: a rule past its timeoutMillisecond is skipped once, with a message, text kept" \
        "exit $rc: $(head -n 1 "$TMP/lg-err")"
fi

# A pattern longer than 4096 bytes is not compiled.
printf '[{"name":"长","pattern":"%s"}]' "$(head -c 5000 /dev/zero | tr '\0' a)" >"$W/long.json"
printf '他推开门，屋里一片寂静。\n' >"$W/plain.txt"
run "$FJ" clean --rules "$W/long.json" "$W/plain.txt"
if [ "$rc" -eq 0 ] && lg_err | grep -qF 'long.json: rule 1 "长": the pattern is longer than 4096 bytes; skipped' &&
    cmp -s "$TMP/out" "$W/plain.txt"; then
    ok "legado: a pattern longer than 4096 bytes is skipped with a message"
else
    bad "legado: a pattern longer than 4096 bytes is skipped with a message" "exit $rc: $(err1)"
fi

# -- bad files: a clear message, nothing written ------------------------------------
printf '[{"pattern": "x"},\n' >"$W/broken.json"
run "$FJ" clean --rules "$W/broken.json" -o "$W/broken.out" "$W/other.txt"
if [ "$rc" -eq 2 ] && lg_err | grep -q '^fanjian: broken.json: not valid Legado rules (JSON): .* at line 2, column' &&
    [ ! -e "$W/broken.out" ]; then
    ok "legado: malformed JSON is refused with its line and column, no output written"
else
    bad "legado: malformed JSON is refused with its line and column, no output written" "exit $rc: $(err1)"
fi

# One object (not an array) is one rule.
printf '{"name":"一条","pattern":"青豆书坊","isRegex":false}' >"$W/one.json"
printf '前青豆书坊后\n' | "$FJ" clean --rules "$W/one.json" >"$TMP/out" 2>"$TMP/err"
rc=$?
check "legado: a single rule object is read as one rule" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "前后"

# -- with a native rules file, and in tree mode ---------------------------------------
# Both kinds of --rules apply: the native phrase drops a line the Legado rules
# left alone.
printf 'phrase 10 故事二\n' >"$W/native.txt"
printf '故事一。青豆书坊\n故事二。\n故事三。\n' >"$W/both.txt"
run "$FJ" clean --rules "$W/native.txt" --rules "$LG/rules.json" "$W/both.txt"
check "legado: a native rules file and a Legado file apply together" \
    test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "$(printf '故事一。\n故事三。')"

# Threads share the rules; each file gets the rules its name scopes in.
mkdir -p "$W/tree/sub"
cp "$LG/story.txt" "$W/tree/青云志.txt"
for n in 1 2 3 4 5; do cp "$LG/story.txt" "$W/tree/sub/book$n.txt"; done
run "$FJ" clean -j 2 --report --rules "$LG/rules.json" -r "$W/tree" -o "$W/tree-out"
lg_tree_ok=1
cmp -s "$W/tree-out/青云志.txt" "$LG/expected-scoped.txt" || lg_tree_ok=0
for n in 1 2 3 4 5; do cmp -s "$W/tree-out/sub/book$n.txt" "$LG/expected-other.txt" || lg_tree_ok=0; done
# Every report line is whole, though threads report at once.
if grep -v '^fanjian: ' "$TMP/err" | grep -qv "^$W/tree/[^:]*:[0-9]*:[0-9]*: "; then lg_tree_ok=0; fi
check "legado: -r tree with -j 2: scope per file, report lines whole" test "$rc" -eq 0 -a "$lg_tree_ok" -eq 1

# -- documents: Legado removals as spans of each block ------------------------------
# A literal rule (青豆书坊) and a regex rule (ＱＤ\p{IsHan}{2}位), neither of
# which the built-in rules remove, cut text inside a paragraph (also next to
# markup); a paragraph they leave with only punctuation goes whole; every
# other byte stays.
printf '<html><body>\n<p>他转身离去。ＱＤ推荐位他又回来了，<b>夜色</b>青豆书坊很深。</p>\n<p>青豆书坊，ＱＤ广告位。</p>\n<p>她笑了。</p>\n</body></html>\n' >"$W/doc.html"
printf '<html><body>\n<p>他转身离去。他又回来了，<b>夜色</b>很深。</p>\n<p>她笑了。</p>\n</body></html>\n' >"$W/doc.expected.html"
run "$FJ" -c none --clean --report --rules "$LG/doc-rules.json" "$W/doc.html"
lg_rep=$(grep -v '^fanjian: ' "$TMP/err")
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$W/doc.expected.html" &&
    [ "$lg_rep" = "$(printf '%s\n' "$W/doc.html:2:10: ＱＤ推荐位" "$W/doc.html:2:30: 青豆书坊" "$W/doc.html:3:4: 青豆书坊，ＱＤ广告位。")" ] &&
    ! grep -q 'plain text only' "$TMP/err"; then
    ok "legado: HTML: literal and regex rules cut inside a paragraph, an emptied paragraph goes whole, --report lists them"
else
    bad "legado: HTML: literal and regex rules cut inside a paragraph, an emptied paragraph goes whole, --report lists them" \
        "exit $rc: $(head -c 400 "$TMP/out") / $(head -c 400 "$TMP/err")"
fi

printf '# 第一章\n\n他转身离去。ＱＤ推荐位他又回来了，*夜色*青豆书坊很深。\n\n青豆书坊，ＱＤ广告位。\n\n她笑了。\n' >"$W/doc.md"
printf '# 第一章\n\n他转身离去。他又回来了，*夜色*很深。\n\n她笑了。\n' >"$W/doc.expected.md"
run "$FJ" -c none --clean --report --rules "$LG/doc-rules.json" "$W/doc.md"
lg_rep=$(grep -v '^fanjian: ' "$TMP/err")
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$W/doc.expected.md" &&
    [ "$lg_rep" = "$(printf '%s\n' "$W/doc.md:3:7: ＱＤ推荐位" "$W/doc.md:3:22: 青豆书坊" "$W/doc.md:5:1: 青豆书坊，ＱＤ广告位。")" ]; then
    ok "legado: Markdown: literal and regex rules cut inside a paragraph, an emptied paragraph goes whole, --report lists them"
else
    bad "legado: Markdown: literal and regex rules cut inside a paragraph, an emptied paragraph goes whole, --report lists them" \
        "exit $rc: $(head -c 400 "$TMP/out") / $(head -c 400 "$TMP/err")"
fi

# A scoped rule applies to a document named in its scope, and only there.
printf '<p>她笑了〔本书专用〕。</p>\n' >"$W/青云志.html"
cp "$W/青云志.html" "$W/别的书.html"
run "$FJ" -c none --clean --rules "$LG/doc-rules.json" "$W/青云志.html"
lg_in=$(cat "$TMP/out")
run "$FJ" -c none --clean --rules "$LG/doc-rules.json" "$W/别的书.html"
check "legado: a document's file name is checked against a rule's scope" \
    test "$lg_in" = '<p>她笑了。</p>' -a "$(cat "$TMP/out")" = '<p>她笑了〔本书专用〕。</p>'

# An EPUB's content documents: the rules, with scopes checked against the
# .epub's name; every other entry and byte stays.
if command -v zip >/dev/null && command -v unzip >/dev/null; then
    E=$W/epub
    epub_skeleton "$E"
    cat >"$E/OEBPS/content.opf" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:12345678-1234-1234-1234-123456789abd</dc:identifier>
    <dc:title>青云志</dc:title>
    <dc:language>zh-CN</dc:language>
    <meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/>
  </manifest>
  <spine><itemref idref="c1"/></spine>
</package>
XML
    cat >"$E/OEBPS/nav.xhtml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="zh-CN" lang="zh-CN">
<head><title>目录</title></head>
<body><nav epub:type="toc"><ol><li><a href="ch1.xhtml">第一章</a></li></ol></nav></body>
</html>
XML
    lg_ch='<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh-CN" lang="zh-CN">
<head><title>第一章</title></head>
<body>
<p>他转身离去。ＱＤ推荐位他又回来了，<em>夜色</em>青豆书坊很深。</p>
<p>青豆书坊，ＱＤ广告位。</p>
<p>她笑了〔本书专用〕。</p>
</body>
</html>'
    printf '%s\n' "$lg_ch" >"$E/OEBPS/ch1.xhtml"
    epub_pack "$E" "$W/青云志.epub"
    run "$FJ" clean --report --rules "$LG/doc-rules.json" "$W/青云志.epub" -o "$W/青云志.clean.epub"
    lg_want='<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh-CN" lang="zh-CN">
<head><title>第一章</title></head>
<body>
<p>他转身离去。他又回来了，<em>夜色</em>很深。</p>
<p>她笑了。</p>
</body>
</html>'
    lg_same=1
    for entry in mimetype META-INF/container.xml OEBPS/content.opf OEBPS/nav.xhtml; do
        cmp -s <(unzip -p "$W/青云志.epub" "$entry") <(unzip -p "$W/青云志.clean.epub" "$entry") || lg_same=0
    done
    lg_rep=$(grep -v '^fanjian: ' "$TMP/err")
    lg_p="$W/青云志.epub!OEBPS/ch1.xhtml"
    if [ "$rc" -eq 0 ] && [ "$lg_same" -eq 1 ] &&
        [ "$(unzip -p "$W/青云志.clean.epub" OEBPS/ch1.xhtml)" = "$lg_want" ] &&
        [ "$lg_rep" = "$(printf '%s\n' "$lg_p:5:10: ＱＤ推荐位" "$lg_p:5:32: 青豆书坊" "$lg_p:6:4: 青豆书坊，ＱＤ广告位。" "$lg_p:7:7: 〔本书专用〕")" ]; then
        ok "legado: EPUB: content documents lose the rules' matches (scope from the .epub's name), other entries unchanged"
    else
        bad "legado: EPUB: content documents lose the rules' matches (scope from the .epub's name), other entries unchanged" \
            "exit $rc same=$lg_same: $(unzip -p "$W/青云志.clean.epub" OEBPS/ch1.xhtml 2>&1 | head -c 400) / $(head -c 600 "$TMP/err")"
    fi
    epubcheck_all "$W/青云志.epub" "$W/青云志.clean.epub"
    case $? in
        0) ok "legado: EPUB: epubcheck passes the book before and after the Legado rules" ;;
        2) skip "legado: EPUB: epubcheck" "epubcheck (and java) not installed" ;;
        *) bad "legado: EPUB: epubcheck passes the book before and after the Legado rules" "$(head -c 600 "$TMP/epubcheck.log")" ;;
    esac
else
    skip "legado: EPUB" "zip and unzip not installed"
fi
