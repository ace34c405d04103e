# fanjian CLI tests: encodings, document formats, trees. Sourced by
# tests/run.sh, which provides FJ, TMP, run, ok, bad, check, skip, err1.

F=$TMP/files
mkdir -p "$F"

# ---- encodings ------------------------------------------------------------------

# A chapter of our own, with characters GB18030 writes in four bytes (é, €, 😀).
cat >"$F/chapter.txt" <<'TEXT'
第一章 回到那里

这是只有一个人的世界。清晨的雾气还没有散去，他推开窗户，看见远处的山头上覆盖着一层薄薄的雪。
头发干了以后，他把那本旧书放回书架，又把桌上的茶杯洗干净。邻居家的孩子在院子里跑来跑去，笑声传得很远。
“我们什么时候出发？”她问。他想了想，说：“等太阳出来再走吧，路上还有很多事情要准备。”
村口的老人说，三十年前这里发生过一场大火，烧掉了半个村子。后来大家一起重建了房屋，种下了新的树。
他在笔记本上写下：今天的天气很好，适合出门。咖啡馆的招牌上写着 Café，价格是 5€，门口贴着一张笑脸 😀。
TEXT
"$FJ" -c s2tw "$F/chapter.txt" >"$F/chapter.s2tw" 2>/dev/null
iconv -f UTF-8 -t GB18030 "$F/chapter.txt" >"$F/chapter.gb18030.txt"
# Big5 cannot hold the four-byte characters: its copy is the Traditional text without them.
grep -v Café "$F/chapter.s2tw" >"$F/chapter.tw.txt"
iconv -f UTF-8 -t BIG5 "$F/chapter.tw.txt" >"$F/chapter.big5.txt"
{ printf '\xff\xfe'; iconv -f UTF-8 -t UTF-16LE "$F/chapter.txt"; } >"$F/chapter.utf16.txt"

run "$FJ" -c s2tw "$F/chapter.gb18030.txt"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$F/chapter.s2tw"; then
    ok "CLI GB18030 input, no flag: same UTF-8 output as the UTF-8 copy"
else
    bad "CLI GB18030 input, no flag: same UTF-8 output as the UTF-8 copy" "exit $rc: $(err1)"
fi
"$FJ" -c t2s "$F/chapter.tw.txt" >"$F/chapter.tw.t2s" 2>/dev/null
run "$FJ" -c t2s "$F/chapter.big5.txt"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$F/chapter.tw.t2s"; then
    ok "CLI Big5 input, no flag: same UTF-8 output as the UTF-8 copy"
else
    bad "CLI Big5 input, no flag: same UTF-8 output as the UTF-8 copy" "exit $rc: $(err1)"
fi
run "$FJ" -c s2tw "$F/chapter.utf16.txt"
if [ "$rc" -eq 0 ] && [ "$(tail -c +4 "$TMP/out" | head -c 20)" = "$(head -c 20 "$F/chapter.s2tw")" ] &&
    cmp -s <(tail -c +4 "$TMP/out") "$F/chapter.s2tw"; then
    ok "CLI UTF-16LE input with BOM: decoded (BOM kept as U+FEFF)"
else
    bad "CLI UTF-16LE input with BOM: decoded (BOM kept as U+FEFF)" "exit $rc: $(err1)"
fi
# GB18030 -> UTF-8 -> GB18030 is byte-identical.
"$FJ" -c none "$F/chapter.gb18030.txt" >"$F/rt.utf8" 2>/dev/null
run "$FJ" -c none --to-encoding gb18030 "$F/rt.utf8"
if [ "$rc" -eq 0 ] && cmp -s "$F/rt.utf8" "$F/chapter.txt" && cmp -s "$TMP/out" "$F/chapter.gb18030.txt"; then
    ok "CLI GB18030 -> UTF-8 -> GB18030 round trip is byte-identical"
else
    bad "CLI GB18030 -> UTF-8 -> GB18030 round trip is byte-identical" "exit $rc: $(err1)"
fi
run "$FJ" -c s2tw --to-encoding big5 "$F/chapter.tw.txt"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$F/chapter.big5.txt"; then
    ok "CLI --to-encoding big5"
else
    bad "CLI --to-encoding big5" "exit $rc: $(err1)"
fi
# A Simplified-only character has no Big5 form: an error naming it, or '?' with --lossy.
printf '头发\n' >"$F/simp.txt"
run "$FJ" -c none --to-encoding big5 -o "$F/simp.big5" "$F/simp.txt"
if [ "$rc" -ne 0 ] && grep -q "U+5934" "$TMP/err" && [ ! -e "$F/simp.big5" ]; then
    ok "CLI --to-encoding: an unencodable character is an error naming it"
else
    bad "CLI --to-encoding: an unencodable character is an error naming it" "exit $rc: $(err1)"
fi
run "$FJ" -c none --to-encoding big5 --lossy "$F/simp.txt"
check "CLI --to-encoding --lossy writes '?'" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = '??' -a -s "$TMP/err"
# A damaged GB18030 file: an error naming the file and the byte; nothing written.
# (第一章 and a space are 7 bytes in GB18030.)
{ head -c 7 "$F/chapter.gb18030.txt"; printf '\x81\x20'; tail -c +8 "$F/chapter.gb18030.txt"; } >"$F/damaged.txt"
run "$FJ" -c s2tw -o "$F/damaged.out" "$F/damaged.txt"
if [ "$rc" -ne 0 ] && grep -q "damaged.txt" "$TMP/err" && grep -qw "byte 7" "$TMP/err" && [ ! -e "$F/damaged.out" ]; then
    ok "CLI undecodable input: error names the file and byte offset, no output"
else
    bad "CLI undecodable input: error names the file and byte offset, no output" "exit $rc: $(err1)"
fi
run "$FJ" -c s2tw --from-encoding gb18030 --lossy "$F/damaged.txt"
if [ "$rc" -eq 0 ] && grep -q $'\xef\xbf\xbd' "$TMP/out" && grep -q "U+FFFD" "$TMP/err"; then
    ok "CLI --lossy: undecodable bytes become U+FFFD, with a warning"
else
    bad "CLI --lossy: undecodable bytes become U+FFFD, with a warning" "exit $rc: $(err1)"
fi
# UTF-8 damaged past the detection sample: checked as it streams, at every
# alignment, for each kind of bad sequence; --lossy passes the bytes through.
for _ in $(seq 1 60); do cat "$F/chapter.txt"; done >"$F/long.txt"
long_len=$(stat -c %s "$F/long.txt")
wrong=
for seq in '\x80' '\xe5\xa4a' '\xc0\xaf' '\xed\xa0\x80' '\xf4\x90\x80\x80' '\xe5'; do
    for k in $(seq 0 17); do
        { cat "$F/long.txt"; head -c "$k" /dev/zero | tr '\0' a; printf "$seq"; printf '头发干了\n'; } >"$F/late.txt"
        "$FJ" -c s2tw "$F/late.txt" >/dev/null 2>"$F/late.err"
        st=$?
        if [ "$st" -ne 1 ] || ! grep -qw "byte $((long_len + k))" "$F/late.err"; then
            wrong="$wrong $seq@$k"
        fi
    done
done
check "CLI invalid UTF-8 past the sample: an error at the exact byte${wrong:+ (wrong:$wrong)}" test -z "$wrong"
{ cat "$F/long.txt"; printf 'x\x80头发干了\n'; } >"$F/late.txt"
{ cat "$F/long.txt"; printf 'x\x80頭髮乾了\n'; } >"$F/late.exp"
run "$FJ" -c s2tw --lossy "$F/late.txt"
if [ "$rc" -eq 0 ] && cmp -s <(tail -c 14 "$TMP/out") <(tail -c 14 "$F/late.exp"); then
    ok "CLI --lossy on UTF-8: invalid bytes pass through unchanged"
else
    bad "CLI --lossy on UTF-8: invalid bytes pass through unchanged" "exit $rc: $(err1)"
fi
run "$FJ" -c s2tw --from-encoding no-such-encoding "$F/chapter.txt"
check "CLI --from-encoding with an unknown name" test "$rc" -eq 2 -a -s "$TMP/err"
run "$FJ" detect "$F/chapter.big5.txt"
check "CLI detect decodes Big5 first and names it" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "$F/chapter.big5.txt: traditional (BIG5)"

# ---- documents -------------------------------------------------------------------

cat >"$F/page.html" <<'HTML'
<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>头发干了</title>
<style>p::before { content: "头发"; }</style></head>
<body><p title="头发" class="头发">头发干了&amp;这是只有</p><img src="头发.png" alt="头发">
<script>var s = "头发干了";</script><!-- 头发 --><code>头发</code></body></html>
HTML
cat >"$F/page.exp" <<'HTML'
<!DOCTYPE html>
<html lang="zh-TW"><head><meta charset="utf-8"><title>頭髮乾了</title>
<style>p::before { content: "头发"; }</style></head>
<body><p title="頭髮" class="头发">頭髮乾了&amp;這是只有</p><img src="头发.png" alt="頭髮">
<script>var s = "头发干了";</script><!-- 头发 --><code>头发</code></body></html>
HTML
run "$FJ" -c s2tw "$F/page.html"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$F/page.exp"; then
    ok "CLI HTML: text, title and alt converted; markup, script, style, comments, code kept"
else
    bad "CLI HTML: text, title and alt converted; markup, script, style, comments, code kept" \
        "exit $rc: $(err1)" "$(diff "$TMP/out" "$F/page.exp" | head -n 6)"
fi
iconv -f UTF-8 -t GB18030 "$F/page.html" | sed 's/charset="utf-8"/charset="gbk"/' >"$F/page-gbk.html"
run "$FJ" -c s2tw "$F/page-gbk.html"
if [ "$rc" -eq 0 ] && grep -q 'charset="UTF-8"' "$TMP/out" && grep -q '頭髮乾了&amp;這是只有' "$TMP/out"; then
    ok "CLI HTML in GBK: decoded, converted, charset declared as written"
else
    bad "CLI HTML in GBK: decoded, converted, charset declared as written" "exit $rc: $(err1)"
fi

printf '1\r\n00:00:01,000 --> 00:00:02,500\r\n<i>头发干了</i>\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\n{\\an8}这是只有\r\n' >"$F/sub.srt"
printf '1\r\n00:00:01,000 --> 00:00:02,500\r\n<i>頭髮乾了</i>\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\n{\\an8}這是只有\r\n' >"$F/sub.exp"
run "$FJ" -c s2tw "$F/sub.srt"
check "CLI SRT: dialogue converted, numbers, timing and tags kept" cmp -s "$TMP/out" "$F/sub.exp"

cat >"$F/sub.ass" <<'ASS'
[Script Info]
Title: 头发
ScriptType: v4.00+

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: 头发,微软雅黑,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,2,2,10,10,10,1

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
Dialogue: 0,0:00:01.00,0:00:02.00,头发,发言人,0,0,0,,{\fs20}头发干了，这是只有\N一个人
Comment: 0,0:00:01.00,0:00:02.00,头发,,0,0,0,,头发干了
ASS
sed -e 's/^Dialogue: 0,0:00:01.00,0:00:02.00,头发,发言人,0,0,0,,{\\fs20}头发干了，这是只有\\N一个人$/Dialogue: 0,0:00:01.00,0:00:02.00,头发,发言人,0,0,0,,{\\fs20}頭髮乾了，這是只有\\N一個人/' \
    -e 's/^Title: 头发$/Title: 頭髮/' "$F/sub.ass" >"$F/sub.ass.exp"
run "$FJ" -c s2tw "$F/sub.ass"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$F/sub.ass.exp" && ! cmp -s "$F/sub.ass" "$F/sub.ass.exp"; then
    ok "CLI ASS: only Dialogue text and the script's Title converted"
else
    bad "CLI ASS: only Dialogue text and the script's Title converted" "exit $rc: $(err1)" "$(diff "$TMP/out" "$F/sub.ass.exp" | head -n 4)"
fi

printf '# 头发\n\n头发干了 `头发` [头发](头发.md)\n\n```\n头发\n```\n' >"$F/doc.md"
printf '# 頭髮\n\n頭髮乾了 `头发` [頭髮](头发.md)\n\n```\n头发\n```\n' >"$F/doc.exp"
run "$FJ" -c s2tw "$F/doc.md"
check "CLI Markdown: code spans, code blocks and link destinations kept" cmp -s "$TMP/out" "$F/doc.exp"
run "$FJ" -c s2tw --format text "$F/doc.md"
check "CLI --format text overrides the extension" test "$(head -n 1 "$TMP/out")" = '# 頭髮' -a "$(tail -n 2 "$TMP/out" | head -n 1)" = '頭髮'
run "$FJ" -c s2tw "$F/doc.md" "$F/page.html"
check "CLI several documents at once are refused" test "$rc" -eq 2 -a -s "$TMP/err"

# An EPUB put together with zip: mimetype first and stored, as the format wants.
if command -v zip >/dev/null && command -v unzip >/dev/null; then
    E=$F/book
    epub_skeleton "$E"
    cat >"$E/OEBPS/content.opf" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:12345678-1234-1234-1234-123456789abc</dc:identifier>
    <dc:title>头发干了</dc:title>
    <dc:creator>张三</dc:creator>
    <dc:language>zh-CN</dc:language>
    <meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml" properties="scripted"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
  </manifest>
  <spine toc="ncx"><itemref idref="c1"/></spine>
</package>
XML
    cat >"$E/OEBPS/nav.xhtml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="zh-CN" lang="zh-CN">
<head><title>目录</title></head>
<body><nav epub:type="toc"><ol><li><a href="ch1.xhtml">第一章 头发</a></li></ol></nav></body>
</html>
XML
    cat >"$E/OEBPS/ch1.xhtml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh-CN" lang="zh-CN">
<head><title>第一章</title><link rel="stylesheet" href="style.css"/></head>
<body><h1 class="头发">第一章 头发</h1><p>头发干了，这是只有一个人的世界。</p>
<script>var x = "头发";</script></body>
</html>
XML
    cat >"$E/OEBPS/toc.ncx" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
<head><meta name="dtb:uid" content="urn:uuid:12345678-1234-1234-1234-123456789abc"/></head>
<docTitle><text>头发干了</text></docTitle>
<navMap><navPoint id="p1" playOrder="1"><navLabel><text>第一章 头发</text></navLabel><content src="ch1.xhtml"/></navPoint></navMap>
</ncx>
XML
    printf 'h1 { font-family: "头发"; }\n' >"$E/OEBPS/style.css"
    epub_pack "$E" "$F/book.epub"
    run "$FJ" -c s2tw "$F/book.epub" -o "$F/book.tw.epub"
    first=$(unzip -Z1 "$F/book.tw.epub" 2>/dev/null | head -n 1)
    method=$(unzip -Zv "$F/book.tw.epub" mimetype 2>/dev/null | sed -n 's/^ *compression method: *//p')
    if [ "$rc" -eq 0 ] && [ "$first" = mimetype ] && [ "$method" = none\ \(stored\) ] &&
        [ "$(unzip -p "$F/book.tw.epub" mimetype)" = application/epub+zip ]; then
        ok "CLI EPUB: mimetype first and stored"
    else
        bad "CLI EPUB: mimetype first and stored" "exit $rc: $(err1); first=$first method=$method"
    fi
    ch=$(unzip -p "$F/book.tw.epub" OEBPS/ch1.xhtml 2>/dev/null)
    if [[ $ch == *'<p>頭髮乾了，這是只有一個人的世界。</p>'* && $ch == *'class="头发"'* &&
        $ch == *'var x = "头发";'* && $ch == *'xml:lang="zh-TW" lang="zh-TW"'* ]]; then
        ok "CLI EPUB: chapter text and lang converted, markup and script kept"
    else
        bad "CLI EPUB: chapter text and lang converted, markup and script kept" "$ch"
    fi
    opf=$(unzip -p "$F/book.tw.epub" OEBPS/content.opf 2>/dev/null)
    ncx=$(unzip -p "$F/book.tw.epub" OEBPS/toc.ncx 2>/dev/null)
    nav=$(unzip -p "$F/book.tw.epub" OEBPS/nav.xhtml 2>/dev/null)
    if [[ $opf == *'<dc:title>頭髮乾了</dc:title>'* && $opf == *'<dc:creator>張三</dc:creator>'* &&
        $opf == *'<dc:language>zh-TW</dc:language>'* && $ncx == *'<text>第一章 頭髮</text>'* &&
        $nav == *'第一章 頭髮</a>'* ]]; then
        ok "CLI EPUB: metadata, NCX and navigation converted"
    else
        bad "CLI EPUB: metadata, NCX and navigation converted" "$opf" "$ncx"
    fi
    if cmp -s <(unzip -p "$F/book.epub" OEBPS/style.css) <(unzip -p "$F/book.tw.epub" OEBPS/style.css) &&
        cmp -s <(unzip -p "$F/book.epub" META-INF/container.xml) <(unzip -p "$F/book.tw.epub" META-INF/container.xml) &&
        [ "$(unzip -Z1 "$F/book.epub")" = "$(unzip -Z1 "$F/book.tw.epub")" ]; then
        ok "CLI EPUB: other entries byte-identical, same entries in the same order"
    else
        bad "CLI EPUB: other entries byte-identical, same entries in the same order"
    fi
    # epubcheck (Debian's, a Java program) judges both books.
    epubcheck_all "$F/book.epub" "$F/book.tw.epub"
    case $? in
        0) ok "CLI EPUB: epubcheck passes the input and the converted book" ;;
        2) skip "CLI EPUB: epubcheck" "epubcheck (and java) not installed" ;;
        *) bad "CLI EPUB: epubcheck passes the input and the converted book" "$(head -c 600 "$TMP/epubcheck.log")" ;;
    esac
    # Unsafe names are refused before anything is written.
    cp "$F/book.epub" "$F/slip.epub"
    printf '@ OEBPS/style.css\n@=../evil.css\n@ (comment above this line)\n' >"$F/rename.txt"
    if command -v zipnote >/dev/null && zipnote -w "$F/slip.epub" <"$F/rename.txt" 2>/dev/null &&
        unzip -Z1 "$F/slip.epub" | grep -q '^\.\./evil.css$'; then
        run "$FJ" -c s2tw "$F/slip.epub" -o "$F/slip.out.epub"
        if [ "$rc" -ne 0 ] && grep -q "evil.css" "$TMP/err" && [ ! -e "$F/slip.out.epub" ] && [ ! -e "$F/evil.css" ]; then
            ok "CLI EPUB: a zip-slip name is refused, nothing written"
        else
            bad "CLI EPUB: a zip-slip name is refused, nothing written" "exit $rc: $(err1)"
        fi
    else
        skip "CLI EPUB: a zip-slip name is refused" "zipnote could not rename an entry"
    fi
    printf 'not a zip' >"$F/fake.epub"
    run "$FJ" -c s2tw "$F/fake.epub" -o "$F/fake.out.epub"
    check "CLI EPUB: not a zip is an error, nothing written" test "$rc" -ne 0 -a -s "$TMP/err" -a ! -e "$F/fake.out.epub"
else
    skip "CLI EPUB" "zip and unzip are not installed"
fi

# ---- trees ---------------------------------------------------------------------

T=$F/tree
mkdir -p "$T/卷一/sub" "$T/empty"
for i in 1 2 3; do printf '第%s章 头发干了\n这是只有一个人的世界。\n' "$i" >"$T/卷一/第${i}章.txt"; done
cp "$F/chapter.gb18030.txt" "$T/卷一/sub/头发.txt"
cp "$F/page.html" "$T/page.html"
printf '\x89PNG\r\n\x1a\n\x00头发' >"$T/cover.png"
printf 'not a zip' >"$T/bad.epub"
chmod 640 "$T/卷一/第2章.txt"
run "$FJ" -c s2tw -r "$T" -o "$F/tree.out" --no-progress
if [ "$rc" -eq 1 ] && grep -q "bad.epub" "$TMP/err" && [ ! -e "$F/tree.out/bad.epub" ] &&
    grep -q "5 files converted, 1 copied unchanged, 1 failed" "$TMP/err"; then
    ok "CLI -r: a bad file is reported and skipped, the rest done, exit 1, summary line"
else
    bad "CLI -r: a bad file is reported and skipped, the rest done, exit 1, summary line" "exit $rc: $(tr '\n' '|' <"$TMP/err")"
fi
if [ "$(cat "$F/tree.out/卷一/第1章.txt")" = "$(printf '第1章 頭髮乾了\n這是只有一個人的世界。')" ] &&
    cmp -s "$F/tree.out/卷一/sub/头发.txt" "$F/chapter.s2tw" && cmp -s "$F/tree.out/page.html" "$F/page.exp" &&
    cmp -s "$F/tree.out/cover.png" "$T/cover.png" && [ -d "$F/tree.out/empty" ] &&
    [ "$(stat -c %a "$F/tree.out/卷一/第2章.txt")" = 640 ]; then
    ok "CLI -r -o: text (any encoding) and HTML converted, others copied, modes kept"
else
    bad "CLI -r -o: text (any encoding) and HTML converted, others copied, modes kept"
fi
run "$FJ" -c s2tw -r "$T" -o "$F/tree.renamed" --rename --no-progress -j 1
if [ -f "$F/tree.renamed/卷一/sub/頭髮.txt" ] && [ -f "$F/tree.renamed/卷一/第3章.txt" ]; then
    ok "CLI -r --rename converts file names"
else
    bad "CLI -r --rename converts file names" "$(cd "$F/tree.renamed" 2>/dev/null && find . | tr '\n' ' ')"
fi
run "$FJ" -c s2tw -r "$T" -o "$F/tree.progress" --progress
check "CLI -r --progress draws files, MB/s and ETA on stderr" grep -q "files .*MB/s.*ETA" "$TMP/err"
# An output directory inside the tree would be converted again by a later
# run: refused before anything is written (tests/suite-safety.sh has more).
run "$FJ" -c s2tw -r "$T" -o "$T/out-inside" --no-progress
check "CLI -r with OUTDIR inside DIR is refused, nothing written" \
    test "$rc" -eq 2 -a ! -e "$T/out-inside" -a -s "$TMP/err"
rm -rf "$T/out-inside"
cp -r "$T" "$F/inplace"
rm "$F/inplace/bad.epub"
run "$FJ" -c s2tw -r "$F/inplace" --in-place --rename --no-progress
if [ "$rc" -eq 0 ] && [ -f "$F/inplace/卷一/sub/頭髮.txt" ] && [ ! -e "$F/inplace/卷一/sub/头发.txt" ] &&
    cmp -s "$F/inplace/卷一/sub/頭髮.txt" "$F/chapter.s2tw" && cmp -s "$F/inplace/cover.png" "$T/cover.png" &&
    [ "$(stat -c %a "$F/inplace/卷一/第2章.txt")" = 640 ] &&
    [ -z "$(find "$F/inplace" -name '*.fanjian-*')" ]; then
    ok "CLI -r --in-place --rename: replaced, renamed, modes kept, no temporaries"
else
    bad "CLI -r --in-place --rename: replaced, renamed, modes kept, no temporaries" "exit $rc: $(err1)"
fi
printf '头发\n' >"$F/one.txt"
printf '头发\n' >"$F/two.txt"
run "$FJ" -c s2tw --in-place "$F/one.txt" "$F/two.txt"
check "CLI --in-place FILE FILE" test "$rc" -eq 0 -a "$(cat "$F/one.txt" "$F/two.txt")" = "$(printf '頭髮\n頭髮')"
run "$FJ" -c s2tw -r "$T"
check "CLI -r without -o or --in-place is refused" test "$rc" -eq 2 -a -s "$TMP/err"

# Interrupted: every output is either absent or complete, and no temporary
# is left. (If the run ends before the signal, the check still holds.)
K=$F/kill
mkdir -p "$K/in"
for _ in $(seq 1 300); do cat "$F/chapter.txt"; done >"$K/in/c1.txt"
for i in $(seq 2 200); do cp "$K/in/c1.txt" "$K/in/c$i.txt"; done
"$FJ" -c s2tw "$K/in/c1.txt" >"$K/expected" 2>/dev/null
for sig in TERM KILL; do
    rm -rf "$K/out"
    "$FJ" -c s2tw -r "$K/in" -o "$K/out" -j 2 --no-progress 2>/dev/null &
    pid=$!
    sleep 0.1
    kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    complete=0 broken=0
    for f in "$K"/out/c*.txt; do
        [ -e "$f" ] || continue
        if cmp -s "$f" "$K/expected"; then complete=$((complete + 1)); else broken=$((broken + 1)); fi
    done
    temps=$(find "$K/out" -name '.*.fanjian-*' 2>/dev/null | wc -l)
    if [ "$broken" -eq 0 ] && { [ "$sig" = KILL ] || [ "$temps" -eq 0 ]; }; then
        ok "CLI -r killed by SIG$sig half-way: $complete files complete, none truncated, $temps temporaries"
    else
        bad "CLI -r killed by SIG$sig half-way" "$broken truncated, $temps temporaries"
    fi
done

# ---- hostile and changing files ----------------------------------------------------

# Deep nesting: handled or refused with a message, never a crash.
H=$F/hostile
mkdir -p "$H"
awk 'BEGIN { printf "<?xml version=\"1.0\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><body>";
             for (i = 0; i < 100000; i++) printf "<div>"; printf "头发";
             for (i = 0; i < 100000; i++) printf "</div>"; print "</body></html>" }' >"$H/deep.xhtml"
run "$FJ" -c s2tw "$H/deep.xhtml"
check "CLI deeply nested XHTML (100,000 levels): converted, no crash" \
    test "$rc" -eq 0 -a "$(grep -c '頭髮' "$TMP/out")" -eq 1
sed 's/^<?xml version="1.0"?>//' "$H/deep.xhtml" | awk '{ gsub("</div>", ""); print }' >"$H/deep.html"
run "$FJ" -c s2tw "$H/deep.html"
check "CLI deeply nested, unclosed HTML: converted, no crash" test "$rc" -eq 0 -a "$(grep -c '頭髮' "$TMP/out")" -eq 1
printf '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "头发头发头发头发"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]><html xmlns="http://www.w3.org/1999/xhtml"><body><p>&h;</p></body></html>' >"$H/laughs.xhtml"
run "$FJ" -c s2tw -o "$H/laughs.out" "$H/laughs.xhtml"
check "CLI billion laughs in XHTML: refused with a message, nothing written" \
    test "$rc" -ne 0 -a -s "$TMP/err" -a ! -e "$H/laughs.out"
# Input and output the same file: the output replaces it whole.
cp "$F/chapter.txt" "$H/same.txt"
run "$FJ" -c s2tw -o "$H/same.txt" "$H/same.txt"
check "CLI -o onto its own input gives the full conversion" cmp -s "$H/same.txt" "$F/chapter.s2tw"
# A file cut short and grown while it is read: no crash, no temporary left.
for _ in $(seq 1 3000); do cat "$F/chapter.txt"; done >"$H/moving.txt"
( sleep 0.05; : >"$H/moving.txt"; for _ in $(seq 1 200); do cat "$F/chapter.txt"; done >>"$H/moving.txt" ) &
mover=$!
run "$FJ" -c s2tw -o "$H/moving.out" "$H/moving.txt"
wait "$mover"
if [ "$rc" -lt 2 ] && [ -z "$(find "$H" -name '.*.fanjian-*')" ]; then
    ok "CLI a file changing while it is read: exit $rc, no crash, no temporary"
else
    bad "CLI a file changing while it is read" "exit $rc: $(err1)"
fi
