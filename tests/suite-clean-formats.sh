# fanjian --clean in documents (issue 17): HTML and EPUB end to end through
# the CLI. Paragraph elements that are wholly boilerplate go as elements,
# <br> lines with their <br>; story bytes, code, scripts, attributes and
# comments stay; the EPUB stays valid and its other entries byte-identical.
# Sourced by tests/run.sh, which provides FJ, TMP, run, ok, bad, check, skip,
# err1.

CF=$TMP/clean-formats
mkdir -p "$CF"
NOTICE='天才一秒记住本站地址：www.biquge.cc 最快更新！'

# The start tags of an HTML document in order (Python's tag-soup parser, a
# second opinion on what the document is).
html_tags() {
    python3 -c '
import sys, html.parser
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs): print(tag)
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read()); p.close()' "$1"
}

# ---- HTML -------------------------------------------------------------------------

cat >"$CF/page.html" <<HTML
<!DOCTYPE html>
<html><head><title>第一章</title><script>var s = "$NOTICE";</script></head>
<body>
<h1>第一章 头发</h1>
<p>他转身离去。</p>
  <p>$NOTICE</p>
<p title="$NOTICE">众人面面相觑。</p>
<div id="content">第一行<br>
本章未完，请点击下一页继续阅读<br>
第三行</div>
<pre>$NOTICE</pre>
<p><code>$NOTICE</code></p>
<!-- $NOTICE -->
<p>头发干了。<a href="next.html">下一章</a></p>
</body></html>
HTML
cat >"$CF/page.exp" <<HTML
<!DOCTYPE html>
<html><head><title>第一章</title><script>var s = "$NOTICE";</script></head>
<body>
<h1>第一章 头发</h1>
<p>他转身离去。</p>
<p title="$NOTICE">众人面面相觑。</p>
<div id="content">第一行<br>
第三行</div>
<pre>$NOTICE</pre>
<p><code>$NOTICE</code></p>
<!-- $NOTICE -->
<p>头发干了。<a href="next.html">下一章</a></p>
</body></html>
HTML
run "$FJ" clean "$CF/page.html"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$CF/page.exp"; then
    ok "clean HTML: a boilerplate <p> and a <br> line go; story, pre, code, script, attributes, comments stay"
else
    bad "clean HTML: a boilerplate <p> and a <br> line go; story, pre, code, script, attributes, comments stay" \
        "exit $rc: $(err1)" "$(diff "$CF/page.exp" "$TMP/out" | head -n 20)"
fi
cp "$TMP/out" "$CF/page.out.html"
if command -v python3 >/dev/null; then
    html_tags "$CF/page.html" >"$CF/tags.in"
    html_tags "$CF/page.out.html" >"$CF/tags.out"
    # The input's tags minus the removed <p> (the 3rd) and <br> (the 1st).
    awk '$0 == "p" && ++np == 2 { next } $0 == "br" && ++nb == 1 { next } { print }' \
        "$CF/tags.in" >"$CF/tags.exp"
    if cmp -s "$CF/tags.exp" "$CF/tags.out"; then
        ok "clean HTML: the output parses to the same elements minus the removed ones"
    else
        bad "clean HTML: the output parses to the same elements minus the removed ones" \
            "$(diff "$CF/tags.exp" "$CF/tags.out")"
    fi
else
    skip "clean HTML: re-parse" "python3 not installed"
fi

run "$FJ" clean --report "$CF/page.html"
grep -v '^fanjian: ' "$TMP/err" >"$CF/report"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$CF/page.exp" &&
    [ "$(sed -n 1p "$CF/report")" = "$CF/page.html:6:6: $NOTICE" ] &&
    [ "$(sed -n 2p "$CF/report")" = "$CF/page.html:9:1: 本章未完，请点击下一页继续阅读" ] &&
    [ "$(wc -l <"$CF/report")" -eq 2 ] &&
    grep -qx "fanjian: $CF/page.html: removed 2 spans (2 whole blocks), 45 characters" "$TMP/err"; then
    ok "clean --report HTML: FILE:LINE:COLUMN: text for each removal, then the counts"
else
    bad "clean --report HTML: FILE:LINE:COLUMN: text for each removal, then the counts" \
        "exit $rc" "$(cat "$TMP/err")"
fi

run "$FJ" -c s2tw --clean "$CF/page.html"
if [ "$rc" -eq 0 ] && grep -q '^<p>他轉身離去。</p>$' "$TMP/out" &&
    ! grep -q '本章未完' "$TMP/out" && ! grep -q '^  <p>' "$TMP/out"; then
    ok "--clean with a profile: HTML cleaned, then converted"
else
    bad "--clean with a profile: HTML cleaned, then converted" "exit $rc: $(err1)"
fi

# A notice inside a story paragraph: only the notice goes (span-level
# fj_clean_find; skipped while it finds no partial span there).
printf '<p>他转身离去。%s众人面面相觑。</p>\n' "$NOTICE" >"$CF/partial.html"
run "$FJ" clean "$CF/partial.html"
if [ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = '<p>他转身离去。众人面面相觑。</p>' ]; then
    ok "clean HTML: a notice inside a paragraph goes, the story stays byte for byte"
elif [ "$rc" -eq 0 ] && { [ ! -s "$TMP/out" ] || cmp -s "$TMP/out" "$CF/partial.html"; }; then
    skip "clean HTML: a notice inside a paragraph" "fj_clean_find finds no partial span in the canonical sentence (the stand-in)"
else
    bad "clean HTML: a notice inside a paragraph goes, the story stays byte for byte" \
        "exit $rc: $(err1)" "$(cat "$TMP/out")"
fi

# ---- Markdown and subtitles -------------------------------------------------------

printf '# 第一章\n\n他转身离去。\n\n%s\n\n- 甲\n- %s\n\n```\n%s\n```\n\n众人面面相觑。\n' \
    "$NOTICE" "$NOTICE" "$NOTICE" >"$CF/doc.md"
printf '# 第一章\n\n他转身离去。\n\n- 甲\n\n```\n%s\n```\n\n众人面面相觑。\n' "$NOTICE" >"$CF/doc.exp"
run "$FJ" clean "$CF/doc.md"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$CF/doc.exp"; then
    ok "clean Markdown: a boilerplate paragraph and list item go, code blocks stay"
else
    bad "clean Markdown: a boilerplate paragraph and list item go, code blocks stay" \
        "exit $rc: $(err1)" "$(diff "$CF/doc.exp" "$TMP/out")"
fi
printf '1\n00:00:01,000 --> 00:00:02,000\n他转身离去。\n\n2\n00:00:03,000 --> 00:00:04,000\n%s\n\n3\n00:00:05,000 --> 00:00:06,000\n众人面面相觑。\n' \
    "$NOTICE" >"$CF/sub.srt"
printf '1\n00:00:01,000 --> 00:00:02,000\n他轉身離去。\n\n3\n00:00:05,000 --> 00:00:06,000\n衆人面面相覷。\n' >"$CF/sub.exp"
run "$FJ" -c s2t --clean "$CF/sub.srt"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$CF/sub.exp"; then
    ok "--clean SRT: a boilerplate cue goes whole, the others keep their numbers"
else
    bad "--clean SRT: a boilerplate cue goes whole, the others keep their numbers" \
        "exit $rc: $(err1)" "$(diff "$CF/sub.exp" "$TMP/out")"
fi

# ---- EPUB -------------------------------------------------------------------------

if command -v zip >/dev/null && command -v unzip >/dev/null; then
    E=$CF/book
    epub_skeleton "$E"
    cat >"$E/OEBPS/content.opf" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:12345678-1234-1234-1234-123456789abc</dc:identifier>
    <dc:title>头发干了</dc:title>
    <dc:description>$NOTICE</dc:description>
    <dc:language>zh-CN</dc:language>
    <meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
  </manifest>
  <spine toc="ncx"><itemref idref="c1"/></spine>
</package>
XML
    cat >"$E/OEBPS/nav.xhtml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="zh-CN" lang="zh-CN">
<head><title>目录</title></head>
<body><nav epub:type="toc"><ol><li><a href="ch1.xhtml">第一章 头发</a></li></ol></nav>
<p>$NOTICE</p></body>
</html>
XML
    cat >"$E/OEBPS/ch1.xhtml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh-CN" lang="zh-CN">
<head><title>第一章</title><link rel="stylesheet" href="style.css"/></head>
<body>
<h1>第一章 头发</h1>
<p>头发干了，这是只有一个人的世界。</p>
<p class="ad">$NOTICE</p>
<p>他转身离去。$NOTICE众人面面相觑。</p>
<p>雨&amp;雪，<em>都停了</em>。</p>
<pre>$NOTICE</pre>
</body>
</html>
XML
    cat >"$E/OEBPS/toc.ncx" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
<head><meta name="dtb:uid" content="urn:uuid:12345678-1234-1234-1234-123456789abc"/></head>
<docTitle><text>$NOTICE</text></docTitle>
<navMap><navPoint id="p1" playOrder="1"><navLabel><text>第一章 头发</text></navLabel><content src="ch1.xhtml"/></navPoint></navMap>
</ncx>
XML
    printf 'h1 { font-family: "头发"; }\n' >"$E/OEBPS/style.css"
    epub_pack "$E" "$CF/book.epub"
    run "$FJ" clean "$CF/book.epub" -o "$CF/book.clean.epub"
    ch=$(unzip -p "$CF/book.clean.epub" OEBPS/ch1.xhtml 2>/dev/null)
    if [ "$rc" -eq 0 ] && [[ $ch != *'class="ad"'* && $ch == *'<p>头发干了，这是只有一个人的世界。</p>
<p'* && $ch == *"<pre>$NOTICE</pre>"* && $ch == *'<p>雨&amp;雪，<em>都停了</em>。</p>'* ]]; then
        ok "clean EPUB: a boilerplate <p> goes as an element, story paragraphs and <pre> stay byte for byte"
    else
        bad "clean EPUB: a boilerplate <p> goes as an element, story paragraphs and <pre> stay byte for byte" \
            "exit $rc: $(err1)" "$ch"
    fi
    if [[ $ch == *'<p>他转身离去。众人面面相觑。</p>'* ]]; then
        ok "clean EPUB: a notice inside a paragraph goes, the story stays"
    elif [ "$rc" -eq 0 ] && [[ $ch == *"<p>他转身离去。$NOTICE众人面面相觑。</p>"* || $ch != *'他转身离去'* ]]; then
        skip "clean EPUB: a notice inside a paragraph" "fj_clean_find finds no partial span in the canonical sentence (the stand-in)"
    else
        bad "clean EPUB: a notice inside a paragraph goes, the story stays" "$ch"
    fi
    # The checks below hold only of a book that was cleaned.
    cleaned=0
    [ "$rc" -eq 0 ] && [[ -n $ch && $ch != *'class="ad"'* ]] && cleaned=1
    same=1
    for entry in mimetype META-INF/container.xml OEBPS/content.opf OEBPS/nav.xhtml OEBPS/toc.ncx OEBPS/style.css; do
        cmp -s <(unzip -p "$CF/book.epub" "$entry") <(unzip -p "$CF/book.clean.epub" "$entry") || same=0
    done
    if [ "$cleaned" -eq 1 ] && [ "$same" -eq 1 ] &&
        [ "$(unzip -Z1 "$CF/book.epub")" = "$(unzip -Z1 "$CF/book.clean.epub")" ]; then
        ok "clean EPUB: navigation, NCX, OPF and other entries byte-identical, same order"
    else
        bad "clean EPUB: navigation, NCX, OPF and other entries byte-identical, same order" "exit $rc"
    fi
    if command -v python3 >/dev/null; then
        if [ "$cleaned" -eq 1 ] && unzip -p "$CF/book.clean.epub" OEBPS/ch1.xhtml >"$CF/ch1.out.xhtml" &&
            python3 -c 'import sys, xml.parsers.expat as e; e.ParserCreate().Parse(open(sys.argv[1], "rb").read(), True)' "$CF/ch1.out.xhtml"; then
            ok "clean EPUB: the cleaned chapter is well-formed (expat)"
        else
            bad "clean EPUB: the cleaned chapter is well-formed (expat)"
        fi
    fi
    run "$FJ" clean --report "$CF/book.epub" -o "$CF/book.report.epub"
    if [ "$rc" -eq 0 ] && grep -qx "$CF/book.epub!OEBPS/ch1.xhtml:7:15: $NOTICE" "$TMP/err" &&
        grep -q "^fanjian: $CF/book.epub: removed [0-9]* spans" "$TMP/err"; then
        ok "clean --report EPUB: BOOK!ENTRY:LINE:COLUMN: text, then the counts"
    else
        bad "clean --report EPUB: BOOK!ENTRY:LINE:COLUMN: text, then the counts" "exit $rc" "$(cat "$TMP/err")"
    fi
    run "$FJ" -c s2tw --clean "$CF/book.epub" -o "$CF/book.tw.epub"
    ch=$(unzip -p "$CF/book.tw.epub" OEBPS/ch1.xhtml 2>/dev/null)
    if [ "$rc" -eq 0 ] && [[ $ch != *'class="ad"'* && $ch == *'<p>頭髮乾了，這是只有一個人的世界。</p>'* ]]; then
        ok "--clean with a profile: EPUB cleaned, then converted"
    else
        bad "--clean with a profile: EPUB cleaned, then converted" "exit $rc: $(err1)"
    fi
    epubcheck_all "$CF/book.epub" "$CF/book.clean.epub"
    case $? in
        0) check "clean EPUB: epubcheck passes the book before and after --clean" test "$cleaned" -eq 1 ;;
        2) skip "clean EPUB: epubcheck" "epubcheck (and java) not installed" ;;
        *) bad "clean EPUB: epubcheck passes the book before and after --clean" "$(head -c 600 "$TMP/epubcheck.log")" ;;
    esac
else
    skip "clean EPUB" "zip and unzip not installed"
fi
