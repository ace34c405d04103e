# The command-line habits of OpenCC users (issue 21, item 3): s2t by
# default, --noflush and --path, each line written as it comes in, options
# given twice or that do not apply, the subcommands' own help, hints for a
# directory without -r and --in-place without files, --to-encoding same.
# Sourced by tests/run.sh, which provides FJ, TMP, run, ok, bad, check,
# skip, err1.

H=$TMP/habits
mkdir -p "$H"
printf '头发干了\n' >"$H/s.txt"
printf '頭髮乾了\n' >"$H/s.exp"

# ---- 1. each line out as it comes in ----------------------------------------------

# flush_probe MODE ENCODING ARGS...: fanjian gets 头发, then 干了 only once
# 頭髮 has come out (MODE pipe: its output is a pipe; tty: a terminal;
# ENCODING: its output's). The 30 s bound is the failure case of output
# held back until the end of input, not a measure of speed. Prints
# "first|rest" as read.
flush_probe() {
    python3 - "$FJ" "$@" <<'PY'
import os, select, subprocess, sys

fj, mode, encoding, *args = sys.argv[1:]
first_in, second_in = "头发\n", "干了\n"
if mode == "tty":
    master, slave = os.openpty()
    p = subprocess.Popen([fj, *args], stdin=subprocess.PIPE, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    out_fd = master
else:
    p = subprocess.Popen([fj, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    out_fd = p.stdout.fileno()
p.stdin.write(first_in.encode())
p.stdin.flush()

def read_line(fd, timeout):
    got = b""
    while not got.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return None
        try:
            chunk = os.read(fd, 1)
        except OSError:  # a terminal whose writer is gone
            chunk = b""
        if not chunk:
            break
        got += chunk
    return got

first = read_line(out_fd, 30)
# Only now is the second line sent.
p.stdin.write(second_in.encode())
p.stdin.close()
rest = b""
while True:
    line = read_line(out_fd, 30)
    if not line:
        break
    rest += line
p.wait()
clean = lambda b: b.replace(b"\r", b"").decode(encoding, errors="replace").strip() if b is not None else "(nothing)"
print(clean(first) + "|" + clean(rest))
PY
}

if command -v python3 >/dev/null; then
    got=$(flush_probe pipe utf-8)
    check "habits: (头发; then 干了) | fanjian: the first line comes out before the second is sent (pipe)" \
        test "$got" = "頭髮|乾了"
    got=$(flush_probe tty utf-8)
    check "habits: the same with the output on a terminal" test "$got" = "頭髮|乾了"
    got=$(flush_probe pipe big5 -c s2twp --to-encoding big5)
    check "habits: line by line through the typography stage and --to-encoding" test "$got" = "頭髮|乾了"
    got=$(flush_probe pipe utf-8 --clean)
    check "habits: line by line through --clean" test "$got" = "頭髮|乾了"
    # A first line of ASCII cannot settle the encoding: it goes on, and the
    # encoding is decided on what follows.
    got=$(python3 - "$FJ" <<'PY'
import os, select, subprocess, sys
p = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
p.stdin.write(b"log: start\n"); p.stdin.flush()
ready, _, _ = select.select([p.stdout], [], [], 30)
first = p.stdout.readline().decode().strip() if ready else "(nothing)"
p.stdin.write("头发干了\n".encode("gbk")); p.stdin.close()
print(first + "|" + p.stdout.read().decode(errors="replace").strip()); p.wait()
PY
)
    check "habits: an ASCII line comes out at once; GBK after it is still detected and decoded" \
        test "$got" = "log: start|頭髮乾了"
else
    skip "habits: line by line through a pipe" "python3 not installed"
fi
# Whatever the pieces, the output is the whole input's conversion.
if [ -r "$SHARED_COMPAT/input.txt" ]; then
    head -c 200000 "$SHARED_COMPAT/input.txt" >"$H/part.txt"
    "$FJ" -c s2twp "$H/part.txt" >"$H/whole.out" 2>/dev/null
    for flush in "" --noflush; do
        # Small writes with pauses between some of them: reads end early.
        { head -c 70001 "$H/part.txt"; sleep 0.2; tail -c +70002 "$H/part.txt" | dd bs=4093 status=none; } |
            "$FJ" -c s2twp $flush >"$H/piped.out" 2>"$H/piped.err"
        check "habits: a pipe that pauses converts like the file ${flush:-(line flushing)}" \
            cmp -s "$H/whole.out" "$H/piped.out"
    done
fi

# An input that ends inside a character: its lines before are out already,
# and the end is still an error.
{ printf '头发\n'; sleep 0.2; printf '\xe5\xa4'; } | "$FJ" >"$TMP/out" 2>"$TMP/err"
rc=$?
check "habits: a cut character at the end of a pipe: the lines before, then the error" \
    test "$rc" -ne 0 -a "$(cat "$TMP/out")" = 頭髮 -a "$(grep -c 'ends inside a' "$TMP/err")" -eq 1

# ---- 2. no -c, --noflush, --path ---------------------------------------------------------

run "$FJ" "$H/s.txt"
check "habits: no -c converts with s2t" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = 頭髮乾了 -a ! -s "$TMP/err"
run "$FJ" <"$H/s.txt"
check "habits: no -c, standard input: s2t" cmp -s "$TMP/out" "$H/s.exp"
run "$FJ" --compat "$H/s.txt"
check "habits: no -c with --compat is OpenCC's s2t" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = 頭髮幹了
run "$FJ" -c none "$H/s.txt"
check "habits: -c none still only re-encodes" cmp -s "$TMP/out" "$H/s.txt"
run "$FJ" --help
check "habits: --help says s2t is the default and how to only re-encode" \
    grep -q 'the default is s2t' "$TMP/out"
grep -q 'or none (only re-encode)' "$TMP/out" || bad "habits: --help names -c none"

for form in "--noflush" "--noflush 1" "--noflush=true" "--noflush false" "--noflush=0"; do
    run "$FJ" $form "$H/s.txt"
    check "habits: $form is accepted" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = 頭髮乾了
done
run "$FJ" --noflush <"$H/s.txt"
check "habits: --noflush through standard input" cmp -s "$TMP/out" "$H/s.exp"
run "$FJ" --noflush=maybe "$H/s.txt"
check "habits: --noflush=maybe is refused" test "$rc" -eq 2 -a ! -s "$TMP/out"

# A config of one's own in one --path DIR, its dictionary in another: both
# found, as OpenCC finds them (configs: here, then each DIR; dictionaries:
# the config's DIR, then each DIR).
mkdir -p "$H/configs" "$H/dicts"
printf '%s\n' '{"name": "mine", "conversion_chain": [{"dict": {"type": "text", "file": "mine.txt"}}]}' \
    >"$H/configs/mine.json"
printf '头发\t頭髮(mine)\n' >"$H/dicts/mine.txt"
run "$FJ" -c mine.json "$H/s.txt"
check "habits: -c mine.json is not found here" test "$rc" -eq 2 -a ! -s "$TMP/out"
run "$FJ" --path "$H/dicts" --path "$H/configs" -c mine.json "$H/s.txt"
check "habits: --path DIR: the config and its dictionary are found in the DIRs" \
    test "$rc" -eq 0 -a "$(cat "$TMP/out")" = '頭髮(mine)干了'
run "$FJ" --path="$H/configs" -c mine.json "$H/s.txt"
check "habits: --path: a dictionary in no DIR is an error naming it" \
    test "$rc" -ne 0 -a "$(grep -c 'mine.txt' "$TMP/err")" -ge 1
run "$FJ" --path "$H/configs" --path "$H/nonesuch" -c s2t "$H/s.txt"
check "habits: --path with a stock profile: built in; a missing DIR is a warning" \
    test "$rc" -eq 0 -a "$(cat "$TMP/out")" = 頭髮乾了 -a "$(grep -c 'warning: --path' "$TMP/err")" -eq 1

# ---- 3. given twice, or not applicable ------------------------------------------------

run "$FJ" -c s2t -c s2tw "$H/s.txt"
if [ "$rc" -eq 2 ] && [ ! -s "$TMP/out" ] && grep -q -- '-c given twice (s2t, then s2tw)' "$TMP/err"; then
    ok "habits: -c given twice is an error naming both"
else
    bad "habits: -c given twice is an error naming both" "exit $rc: $(err1)"
fi
run "$FJ" --config=s2t -c s2t "$H/s.txt"
check "habits: the same -c twice is one" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = 頭髮乾了
run "$FJ" -o "$H/o1.txt" -o "$H/o2.txt" "$H/s.txt"
check "habits: -o given twice is an error, nothing written" \
    test "$rc" -eq 2 -a ! -e "$H/o1.txt" -a ! -e "$H/o2.txt"
run "$FJ" --to-encoding gbk --to-encoding big5 "$H/s.txt"
check "habits: --to-encoding given twice is an error" test "$rc" -eq 2 -a ! -s "$TMP/out"

printf 'not read' >"$H/book.epub"
run "$FJ" --to-encoding gbk "$H/book.epub" -o "$H/book.out.epub"
if [ "$rc" -eq 2 ] && [ ! -e "$H/book.out.epub" ] && grep -q 'does not apply to EPUB' "$TMP/err"; then
    ok "habits: --to-encoding with an EPUB is an error"
else
    bad "habits: --to-encoding with an EPUB is an error" "exit $rc: $(err1)"
fi
printf '頭發\n' >"$H/t.txt"
run "$FJ" --compat --repair=thorough -c t2tw "$H/t.txt"
if [ "$rc" -eq 2 ] && [ ! -s "$TMP/out" ] && grep -q -- '--repair does not apply with --compat' "$TMP/err"; then
    ok "habits: --repair with --compat is an error"
else
    bad "habits: --repair with --compat is an error" "exit $rc: $(err1)"
fi
run "$FJ" --compat -c t2tw "$H/t.txt"
check "habits: --compat with a repairing profile, no --repair: fine" test "$rc" -eq 0 -a ! -s "$TMP/err"
run "$FJ" -c none --quotes=tw "$H/s.txt"
check "habits: --quotes with -c none is an error" test "$rc" -eq 2 -a ! -s "$TMP/out"
run "$FJ" clean --punct "$H/s.txt"
check "habits: --punct with fanjian clean is an error" test "$rc" -eq 2 -a ! -s "$TMP/out"
run "$FJ" --repair=careful -c s2t "$H/s.txt"
check "habits: --repair with a profile that does not repair: converted, with a warning" \
    test "$rc" -eq 0 -a "$(cat "$TMP/out")" = 頭髮乾了 -a "$(grep -c 'warning: --repair' "$TMP/err")" -eq 1
run "$FJ" -j 2 --progress --fsync "$H/s.txt"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$H/s.exp" && ! grep -q 'warning: -j' "$TMP/err" &&
    grep -q 'warning: --progress' "$TMP/err" && grep -q 'warning: --fsync' "$TMP/err"; then
    ok "habits: -j on one file (threads on its pieces), --progress and --fsync without a tree or file: converted, warnings for the last two"
else
    bad "habits: -j on one file (threads on its pieces), --progress and --fsync without a tree or file: converted, warnings for the last two" "exit $rc: $(tr '\n' '|' <"$TMP/err")"
fi
# -j on one input: the same bytes as one thread, for a text of many pieces.
awk 'BEGIN { for (i = 0; i < 40000; i++) printf "第%d行：我的头发干了，皇后理发以后发现了一只钟。\n", i }' >"$H/many.txt"
"$FJ" -c s2tw -j 1 "$H/many.txt" -o "$H/many.1" 2>/dev/null
run "$FJ" -c s2tw -j 2 "$H/many.txt" -o "$H/many.2"
check "habits: -j 2 on one 2.6 MB file: byte-identical to -j 1" test "$rc" -eq 0 -a -s "$H/many.1" -a ! -s "$TMP/err"
cmp -s "$H/many.1" "$H/many.2" || bad "habits: -j 2 on one file differs from -j 1" "$(cmp "$H/many.1" "$H/many.2" 2>&1)"
run "$FJ" --compat -c s2t -j 3 <"$H/many.txt"
check "habits: -j 3 --compat through a pipe: byte-identical" cmp -s "$TMP/out" <("$FJ" --compat -c s2t -j 1 <"$H/many.txt")
run "$FJ" --to tw -j 2 "$H/s.txt"
check "habits: -j 2 with --to (depends on the text before): one thread, a warning" \
    test "$rc" -eq 0 -a "$(grep -c 'warning: -j' "$TMP/err")" -eq 1
run "$FJ" -c s2t --fsync -o "$H/synced.txt" "$H/s.txt"
check "habits: --fsync with -o: no warning" test "$rc" -eq 0 -a ! -s "$TMP/err"
if command -v zip >/dev/null; then
    E=$H/epub
    epub_skeleton "$E"
    cat >"$E/OEBPS/content.opf" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:12345678-1234-1234-1234-123456789abc</dc:identifier>
    <dc:title>头发</dc:title><dc:language>zh-CN</dc:language>
  </metadata>
  <manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest>
  <spine><itemref idref="c"/></spine>
</package>
XML
    printf '%s\n' '<?xml version="1.0" encoding="UTF-8"?>' \
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>头发</title></head><body><p>头发干了</p></body></html>' \
        >"$E/OEBPS/c.xhtml"
    mkdir -p "$H/mixed"
    epub_pack "$E" "$H/mixed/book.epub"
    cp "$H/s.txt" "$H/mixed/s.txt"
    run "$FJ" -r "$H/mixed" -o "$H/mixed.out" --to-encoding gbk
    if [ "$rc" -eq 0 ] && grep -q 'warning: --to-encoding GB18030 does not apply to EPUB: 1 EPUB stays UTF-8' "$TMP/err" &&
        [ "$(iconv -f gbk -t utf-8 <"$H/mixed.out/s.txt")" = 頭髮乾了 ] &&
        unzip -p "$H/mixed.out/book.epub" OEBPS/c.xhtml | grep -q '<p>頭髮乾了</p>'; then
        ok "habits: -r --to-encoding with an EPUB in the tree: the warning, the rest in GBK"
    else
        bad "habits: -r --to-encoding with an EPUB in the tree: the warning, the rest in GBK" "exit $rc: $(tr '\n' '|' <"$TMP/err")"
    fi
    cp "$H/mixed/book.epub" "$H/mixed/s.txt" "$H"/
    run "$FJ" --in-place --to-encoding big5 "$H/book.epub" "$H/s.txt"
    if [ "$rc" -eq 0 ] && grep -q 'warning: --to-encoding BIG5 does not apply to EPUB: 1 EPUB stays UTF-8' "$TMP/err" &&
        [ "$(iconv -f big5 -t utf-8 <"$H/s.txt")" = 頭髮乾了 ]; then
        ok "habits: --in-place --to-encoding with an EPUB among the files: the warning"
    else
        bad "habits: --in-place --to-encoding with an EPUB among the files: the warning" "exit $rc: $(tr '\n' '|' <"$TMP/err")"
    fi
    cp "$H/mixed/s.txt" "$H/s.txt"
else
    skip "habits: -r --to-encoding with an EPUB in the tree" "zip not installed"
fi

# ---- 4. help, hints ------------------------------------------------------------------

"$FJ" --help >"$H/help.main" 2>/dev/null
for sub in clean detect; do
    run "$FJ" "$sub" --help
    if [ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ] && grep -q "^usage: fanjian $sub " "$TMP/out" &&
        ! cmp -s "$TMP/out" "$H/help.main"; then
        ok "habits: fanjian $sub --help prints its own help"
    else
        bad "habits: fanjian $sub --help prints its own help" "exit $rc: $(head -n 1 "$TMP/out")"
    fi
done
run "$FJ" clean --help
grep -q -- '--rules FILE' "$TMP/out" || bad "habits: clean --help names --rules"
run "$FJ" detect --help
grep -q -- '--json' "$TMP/out" || bad "habits: detect --help names --json"

mkdir -p "$H/dir"
cp "$H/s.txt" "$H/dir/a.txt"
run "$FJ" "$H/dir"
if [ "$rc" -ne 0 ] && [ ! -s "$TMP/out" ] && grep -q "dir is a directory: to convert a tree, use -r " "$TMP/err"; then
    ok "habits: a directory without -r gets the hint"
else
    bad "habits: a directory without -r gets the hint" "exit $rc: $(err1)"
fi
run "$FJ" --in-place "$H/dir"
check "habits: --in-place DIR gets the hint" grep -q -- "use -r .*--in-place" "$TMP/err"
run "$FJ" --in-place
if [ "$rc" -eq 2 ] && grep -q -- '--in-place needs the FILEs to replace' "$TMP/err"; then
    ok "habits: --in-place with no files names what is missing"
else
    bad "habits: --in-place with no files names what is missing" "exit $rc: $(err1)"
fi
run "$FJ" --in-place -o "$H/x.txt" "$H/s.txt"
check "habits: --in-place with -o says to drop -o" grep -q 'give no -o' "$TMP/err"

# ---- 5. --to-encoding same -------------------------------------------------------------

T=$H/same
mkdir -p "$T/in/sub"
printf '头发干了。这是简体中文的文本，鼠标和打印机。\n' >"$T/in/u.txt"
iconv -f utf-8 -t gbk <"$T/in/u.txt" >"$T/in/sub/g.txt"
printf '頭髮乾了。這是簡體中文的文本，鼠標和打印機。\n' >"$T/exp.txt"
run "$FJ" -r "$T/in" -o "$T/out" --to-encoding same
if [ "$rc" -eq 0 ] && cmp -s "$T/out/u.txt" "$T/exp.txt" &&
    iconv -f gbk -t utf-8 <"$T/out/sub/g.txt" 2>/dev/null | cmp -s - "$T/exp.txt"; then
    ok "habits: -r --to-encoding same: the GBK file stays GBK, the UTF-8 one UTF-8"
else
    bad "habits: -r --to-encoding same: the GBK file stays GBK, the UTF-8 one UTF-8" "exit $rc: $(err1)"
fi
run "$FJ" detect "$T/out/u.txt" "$T/out/sub/g.txt"
check "habits: detect reads the outputs in their inputs' encodings" \
    test "$(sed 's/.*(\(.*\))$/\1/' "$TMP/out" | tr '\n' ' ')" = "UTF-8 GB18030 "
run "$FJ" --to-encoding same "$T/in/sub/g.txt"
check "habits: --to-encoding same with one FILE" test "$(iconv -f gbk -t utf-8 <"$TMP/out" 2>/dev/null)" = "$(cat "$T/exp.txt")"
run "$FJ" --to-encoding same <"$T/in/sub/g.txt"
check "habits: --to-encoding same with standard input from a file" \
    test "$(iconv -f gbk -t utf-8 <"$TMP/out" 2>/dev/null)" = "$(cat "$T/exp.txt")"
cp -r "$T/in" "$T/ip"
run "$FJ" --in-place --to-encoding same "$T/ip/u.txt" "$T/ip/sub/g.txt"
check "habits: --in-place --to-encoding same" \
    test "$rc" -eq 0 -a "$(iconv -f gbk -t utf-8 <"$T/ip/sub/g.txt" 2>/dev/null)" = "$(cat "$T/exp.txt")" -a "$(cat "$T/ip/u.txt")" = "$(cat "$T/exp.txt")"
cat "$T/in/sub/g.txt" | "$FJ" --to-encoding same >"$TMP/out" 2>"$TMP/err"
rc=$?
check "habits: --to-encoding same from a pipe: an error that says what to give" \
    test "$rc" -ne 0 -a ! -s "$TMP/out" -a "$(grep -c 'give --to-encoding ENC' "$TMP/err")" -eq 1
run "$FJ" --to-encoding same "$T/in/u.txt" "$T/in/sub/g.txt"
check "habits: --to-encoding same with two text inputs into one output is an error" test "$rc" -eq 2 -a ! -s "$TMP/out"
printf '<html><head><meta charset="gbk"></head><body><p>头发干了</p></body></html>\n' |
    iconv -f utf-8 -t gbk >"$T/g.html"
run "$FJ" --to-encoding same "$T/g.html"
if [ "$rc" -eq 0 ] && iconv -f gbk -t utf-8 <"$TMP/out" | grep -q '<meta charset="gbk"></head><body><p>頭髮乾了</p>'; then
    ok "habits: --to-encoding same with a GBK HTML file: GBK, its declaration kept"
else
    bad "habits: --to-encoding same with a GBK HTML file: GBK, its declaration kept" "exit $rc: $(err1)"
fi
