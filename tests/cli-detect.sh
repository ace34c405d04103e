# fanjian detect: the encoding it read, binary input, the text inside
# documents. Sourced by tests/run.sh, which provides FJ, TMP, run, ok, bad,
# check, skip, err1, epub_skeleton and epub_pack.

DETECT=$TMP/detect
mkdir -p "$DETECT"

# detect_is NAME FILE EXPECTED-LINE: `fanjian detect FILE` prints exactly that.
detect_is() {
    run "$FJ" detect "$2"
    if [ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = "$3" ]; then
        ok "$1"
    else
        bad "$1" "exit $rc: $(err1)" "got: $(head -c 300 "$TMP/out")" "expected: $3"
    fi
}

# ---- encodings: each text read in its own, and named ------------------------------
printf '%s\n' '這是繁體中文，還有一些 ASCII text.' >"$DETECT/trad.txt"
iconv -f UTF-8 -t UTF-16LE "$DETECT/trad.txt" >"$DETECT/trad.utf16.txt"
detect_is "CLI detect: UTF-16 text without a mark is text, decoded and named" \
    "$DETECT/trad.utf16.txt" "$DETECT/trad.utf16.txt: traditional (UTF-16LE)"
head -c -1 "$DETECT/trad.utf16.txt" >"$DETECT/cut.utf16.txt"
detect_is "CLI detect: UTF-16 text cut short is still text, not binary" \
    "$DETECT/cut.utf16.txt" "$DETECT/cut.utf16.txt: traditional (UTF-16LE)"
printf '%s\n' '这是简体中文，头发干了。' | iconv -f UTF-8 -t GB18030 >"$DETECT/simp.gb.txt"
detect_is "CLI detect: GB18030 text" "$DETECT/simp.gb.txt" "$DETECT/simp.gb.txt: simplified (GB18030)"
printf 'abc \x80 这是一个简单的问题。\n' >"$DETECT/onebad.txt"
detect_is "CLI detect: a UTF-8 text with one bad byte is still text" \
    "$DETECT/onebad.txt" "$DETECT/onebad.txt: simplified (UTF-8)"

# ---- binary: not text, whatever its bytes happen to decode to ----------------------
printf '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00' >"$DETECT/image.png"
printf '中文字中文字' >>"$DETECT/image.png"
head -c 2048 /dev/urandom >>"$DETECT/image.png"
detect_is "CLI detect: PNG bytes are binary, not a script" "$DETECT/image.png" "$DETECT/image.png: binary"
printf '\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x3e\x00头发这个问题\x00\x00' >"$DETECT/prog.elf"
detect_is "CLI detect: ELF bytes are binary" "$DETECT/prog.elf" "$DETECT/prog.elf: binary"
if [ -r /bin/ls ]; then
    detect_is "CLI detect: /bin/ls is binary (was mixed)" /bin/ls "/bin/ls: binary"
fi
head -c 4096 /dev/urandom | tr '\000' '\001' >"$DETECT/noise.bin"
detect_is "CLI detect: random bytes, even without a NUL, are binary" "$DETECT/noise.bin" "$DETECT/noise.bin: binary"
run "$FJ" detect --json "$DETECT/image.png"
check "CLI detect --json: binary has no encoding" grep -q '"format":"text","encoding":null,"script":"binary",' "$TMP/out"
run "$FJ" detect <"$DETECT/image.png"
check "CLI detect: binary on standard input" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = binary

# ---- documents: the text a reader sees, not the markup ----------------------------
printf '%s\n' '<!DOCTYPE html>' '<html lang="en"><head><title>Page</title></head>' \
    '<body><p class="x">这是简体中文，头发干了。</p><p>我们说这里的风景很美丽。</p></body></html>' >"$DETECT/page.html"
detect_is "CLI detect: HTML, ASCII markup and Simplified text" "$DETECT/page.html" "$DETECT/page.html: simplified (HTML, UTF-8)"
# Traditional only where no reader sees it: a comment, a script, attributes.
printf '%s\n' '<html><head><script>var 說明 = "這個問題還沒有解決";</script></head>' \
    '<body><!-- 這裡還有繁體的說明 --><p data-note="這個問題" class="繁體">这是简体中文，头发干了。</p></body></html>' >"$DETECT/hidden.html"
detect_is "CLI detect: HTML labelled by its text, not its script or comments (was mixed)" \
    "$DETECT/hidden.html" "$DETECT/hidden.html: simplified (HTML, UTF-8)"
printf '%s\n' '这是简体中文，头发干了。' '' '```' '說明這個問題還沒有解決，還沒有。' '```' >"$DETECT/notes.md"
detect_is "CLI detect: Markdown, code blocks left out" "$DETECT/notes.md" "$DETECT/notes.md: simplified (MARKDOWN, UTF-8)"
printf '1\n00:00:01,000 --> 00:00:02,000\n這是繁體字幕。\n\n2\n00:00:03,000 --> 00:00:04,000\n還有一個問題。\n' >"$DETECT/film.srt"
detect_is "CLI detect: SRT subtitles" "$DETECT/film.srt" "$DETECT/film.srt: traditional (SRT, UTF-8)"
printf '%s\n' '<html><body><p>这是简体中文，头发干了。</p></body></html>' | iconv -f UTF-8 -t GB18030 >"$DETECT/page.gb.html"
detect_is "CLI detect: an HTML page in GB18030" "$DETECT/page.gb.html" "$DETECT/page.gb.html: simplified (HTML, GB18030)"
run "$FJ" detect --format html <"$DETECT/hidden.html"
check "CLI detect --format: standard input read as HTML" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "simplified (HTML, UTF-8)"
run "$FJ" detect --format nonsense "$DETECT/hidden.html"
check "CLI detect --format with an unknown format" test "$rc" -eq 2 -a -s "$TMP/err" -a ! -s "$TMP/out"
cp "$DETECT/image.png" "$DETECT/image.html"
detect_is "CLI detect: binary named .html is binary" "$DETECT/image.html" "$DETECT/image.html: binary"
printf '<p>这是</p><p>未完' >"$DETECT/broken.xhtml"
run "$FJ" detect "$DETECT/broken.xhtml" "$DETECT/page.html"
if [ "$rc" -ne 0 ] && grep -q broken.xhtml "$TMP/err" && [ "$(cat "$TMP/out")" = "$DETECT/page.html: simplified (HTML, UTF-8)" ]; then
    ok "CLI detect: a malformed XHTML file fails with a message, the others are reported"
else
    bad "CLI detect: a malformed XHTML file fails with a message, the others are reported" "exit $rc: $(err1)" "$(cat "$TMP/out")"
fi

# An EPUB of Traditional chapters: its compressed XML read as bytes was "both".
if command -v zip >/dev/null; then
    E=$DETECT/book
    epub_skeleton "$E"
    cat >"$E/OEBPS/content.opf" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:12345678-1234-1234-1234-123456789abc</dc:identifier>
    <dc:title>頭髮乾了</dc:title>
    <dc:language>zh-TW</dc:language>
    <meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="ch2.xhtml" media-type="application/xhtml+xml"/>
  </manifest>
  <spine><itemref idref="c1"/><itemref idref="c2"/></spine>
</package>
XML
    for n in 1 2; do
        {
            printf '%s\n' '<?xml version="1.0" encoding="UTF-8"?>' \
                '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh-TW"><head><title>第'"$n"'章</title></head><body>'
            for _ in $(seq 1 20); do
                printf '%s\n' '<p>這是只有一個人的世界。她的頭髮乾了，他推開窗戶，看見遠處的山頭。</p>'
            done
            printf '%s\n' '</body></html>'
        } >"$E/OEBPS/ch$n.xhtml"
    done
    epub_pack "$E" "$DETECT/book.epub"
    detect_is "CLI detect: an EPUB of Traditional chapters is traditional" "$DETECT/book.epub" "$DETECT/book.epub: traditional (EPUB, UTF-8)"
    run "$FJ" detect --json "$DETECT/book.epub"
    check "CLI detect --json: an EPUB's format, encoding and label" \
        grep -q '"format":"epub","encoding":"UTF-8","script":"traditional",.*"spans":null}$' "$TMP/out"
    printf 'not a zip' >"$DETECT/fake.epub"
    run "$FJ" detect "$DETECT/fake.epub"
    check "CLI detect: a file named .epub that is not one fails with a message" \
        test "$rc" -ne 0 -a -s "$TMP/err" -a ! -s "$TMP/out"
else
    skip "CLI detect: EPUB" "zip not installed"
fi
