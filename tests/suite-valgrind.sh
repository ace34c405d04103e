# The CLI under valgrind (memcheck): no invalid access, no use of
# uninitialised memory, no definite or indirect leak, on each kind of run.
# Plain build only (the sanitizer run checks the same with ASan). Sourced
# by tests/run.sh; uses the files tests/cli-files.sh made in $F.
if [ "$B" != build ]; then
    :
elif ! command -v valgrind >/dev/null; then
    skip "valgrind" "valgrind is not installed"
else
    V=$TMP/valgrind
    mkdir -p "$V/tree/卷一"
    printf '头发干了，这是只有\n天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！\n他说：“你好。。。”\n' >"$V/a.txt"
    cp "$V/a.txt" "$V/tree/卷一/头发.txt"
    cp "$F/page.html" "$V/tree/p.html"
    # vg NAME ARGS...: runs the CLI under memcheck; exit 99 means it found something.
    vg() {
        local name=$1
        shift
        valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
            --suppressions="$ROOT/tests/valgrind.supp" \
            --log-file="$V/log" "$FJ" "$@" >"$V/out" 2>"$V/err" </dev/null
        local st=$?
        if [ "$st" -ne 99 ] && [ ! -s "$V/log" ]; then
            ok "valgrind: $name (exit $st)"
        else
            bad "valgrind: $name" "exit $st" "$(head -c 600 "$V/log")"
        fi
    }
    vg "--compat -c s2twp" --compat -c s2twp "$V/a.txt"
    vg "-c s2tw --clean --report --quotes=tw --punct" -c s2tw --clean --report --quotes=tw --punct "$V/a.txt"
    vg "GB18030 in, Big5 out, --lossy" -c s2tw --to-encoding big5 --lossy "$F/chapter.gb18030.txt"
    vg "invalid UTF-8: the error path" -c s2t "$F/late.txt"
    vg "HTML" -c s2tw "$F/page.html"
    vg "SRT" -c s2tw "$F/sub.srt"
    vg "ASS" -c s2tw "$F/sub.ass"
    vg "Markdown" -c s2tw "$F/doc.md"
    if [ -r "$F/book.epub" ]; then
        vg "EPUB" -c s2tw -o "$V/book.epub" "$F/book.epub"
        vg "EPUB with a zip-slip name (refused)" -c s2tw -o "$V/slip.epub" "$F/slip.epub"
    fi
    vg "detect --json" detect --json "$F/chapter.big5.txt" "$V/a.txt"
    # documents, binary and a broken document (tests/cli-detect.sh made them in $DETECT)
    if [ -n "${DETECT:-}" ] && [ -r "$DETECT/book.epub" ]; then
        vg "detect documents and binary" detect --json "$DETECT/book.epub" "$DETECT/hidden.html" \
            "$DETECT/notes.md" "$DETECT/film.srt" "$DETECT/image.png" "$DETECT/cut.utf16.txt" "$DETECT/broken.xhtml" "$DETECT/fake.epub"
    fi
    vg "tree -r -j 2 --rename" -c s2tw -r "$V/tree" -o "$V/tree.out" -j 2 --rename --no-progress
fi
