# shellcheck shell=bash disable=SC1112 # “” and 「」 here are test data
# `fanjian serve`: the JSON API through curl, then the web page in headless
# Chromium (tests/browser/page.mjs). Sourced by tests/run.sh, whose helpers
# (ok bad check skip run err1) and variables (FJ TMP B ROOT) it uses.
# Servers listen on 127.0.0.1 port 0 (a free port) and are stopped by
# signal; under AddressSanitizer a leak at exit fails the stop check.

SV_CURL=(curl -sS --max-time 120)
# The Content-Type sv_req sends (POSTs to /v1 must say application/json).
sv_type=application/json

# sv_start NAME ARGS...: starts a server; sets sv_pid and sv_url. The
# sanitizer build takes a moment to start: up to 60 s. With SV_NOFILE set,
# under that descriptor limit (ulimit -n).
sv_start() {
    local name=$1 i addr=
    shift
    if [ -n "${SV_NOFILE:-}" ]; then
        (ulimit -n "$SV_NOFILE" && exec "$FJ" serve --listen 127.0.0.1:0 "$@") 2>"$TMP/serve-$name.err" &
    else
        "$FJ" serve --listen 127.0.0.1:0 "$@" 2>"$TMP/serve-$name.err" &
    fi
    sv_pid=$!
    for i in $(seq 1 600); do
        addr=$(sed -n 's|^fanjian: serving on http://\(.*\)/$|\1|p' "$TMP/serve-$name.err" 2>/dev/null)
        [ -n "$addr" ] && break
        kill -0 "$sv_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$addr" ]; then
        kill -KILL "$sv_pid" 2>/dev/null
        wait "$sv_pid" 2>/dev/null
        bad "serve $name: starts and prints its address" "$(head -n 3 "$TMP/serve-$name.err")"
        return 1
    fi
    sv_url=http://$addr
    ok "serve $name: starts and prints its address"
}

# sv_stop NAME PID SIGNAL: stops a server, which must exit 0 with nothing
# from a sanitizer on stderr.
sv_stop() {
    local name=$1 pid=$2 sig=$3 i rc
    kill -"$sig" "$pid" 2>/dev/null
    for i in $(seq 1 600); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    if [ "$rc" -eq 0 ] && ! grep -Eq 'Sanitizer|runtime error' "$TMP/serve-$name.err"; then
        ok "serve $name: SIG$sig stops it, exit 0, no leak"
    else
        bad "serve $name: SIG$sig stops it, exit 0, no leak" "exit $rc" \
            "$(grep -E -m 3 'Sanitizer|runtime error|SUMMARY' "$TMP/serve-$name.err")"
    fi
}

# sv_req PATH CURL_ARGS...: the answer's body in $TMP/sv.body, its headers
# in $TMP/sv.head, its status in $code.
sv_req() {
    local path=$1
    shift
    code=$("${SV_CURL[@]}" -H "Content-Type: $sv_type" -D "$TMP/sv.head" -o "$TMP/sv.body" -w '%{http_code}' "$@" "$sv_url$path" 2>"$TMP/sv.curl") || code=000
}

# sv_jstr TEXT: TEXT as a JSON string, escaped as the server escapes: \" \\
# \n \r \t, other control characters as \u00XX, everything else as it is.
sv_jstr() {
    local s=$1 i c
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\n'/\\n}
    s=${s//$'\r'/\\r}
    s=${s//$'\t'/\\t}
    if [[ $s == *[$'\x01'-$'\x1f']* ]]; then
        for i in $(seq 1 31); do
            printf -v c '%b' "\\x$(printf %02x "$i")"
            s=${s//"$c"/$(printf '\\u%04x' "$i")}
        done
    fi
    printf '"%s"' "$s"
}

# sv_convert NAME TEXT PROFILE EXTRA_MEMBERS EXPECTED: one /v1/convert
# check; EXTRA_MEMBERS is JSON to add to the object (",\"compat\":true").
sv_convert() {
    local name=$1 want
    want="{\"text\":$(sv_jstr "$5"),\"profile\":"
    sv_req /v1/convert --data-binary "{\"text\":$(sv_jstr "$2"),\"profile\":\"$3\"$4}"
    if [ "$code" = 200 ] && [[ $(cat "$TMP/sv.body") == "$want"* ]]; then
        ok "serve convert: $name"
    else
        bad "serve convert: $name" "status $code, expected: $want" "got: $(head -c 300 "$TMP/sv.body")"
    fi
}

# sv_status NAME STATUS PATH CURL_ARGS...: the answer has that status and a
# JSON {"error": "..."} body.
sv_status() {
    local name=$1 want=$2
    shift 2
    sv_req "$@"
    if [ "$code" = "$want" ] && grep -q '^{"error":"..*"}$' "$TMP/sv.body" &&
        grep -qi '^content-type: application/json; charset=utf-8' "$TMP/sv.head"; then
        ok "serve $want: $name"
    else
        bad "serve $want: $name" "status $code: $(head -c 300 "$TMP/sv.body")"
    fi
}

if ! command -v curl >/dev/null || ! command -v python3 >/dev/null; then
    bad "serve: curl and python3 are needed (scripts/install-deps.sh)"
elif [ ! -x "$FJ" ]; then
    bad "serve: $FJ not built"
else
    # The JavaScript package (make js) for the page's offline mode: this
    # build's, else the plain build's (the sanitizer run has none of its own).
    sv_js_dir=
    for d in "$B/js/pkg" build/js/pkg; do
        if [ -r "$d/browser.mjs" ]; then sv_js_dir=$d; break; fi
    done
    sv_js=()
    if [ -n "$sv_js_dir" ]; then sv_js=(--js "$sv_js_dir"); fi
fi
if ! command -v curl >/dev/null || ! command -v python3 >/dev/null || [ ! -x "$FJ" ]; then
    :
elif sv_start main "${sv_js[@]}"; then
    main_pid=$sv_pid

    # -- the JavaScript package under /js/ ------------------------------------------
    if [ -n "$sv_js_dir" ]; then
        sv_req /js/fanjian.fjd
        etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *\([^\r]*\).*/\1/p' "$TMP/sv.head")
        if [ "$code" = 200 ] && cmp -s "$TMP/sv.body" "$sv_js_dir/fanjian.fjd" && [ -n "$etag" ] &&
            grep -qi '^content-type: application/octet-stream' "$TMP/sv.head"; then
            ok "serve GET /js/fanjian.fjd: the package's image, with an ETag"
        else
            bad "serve GET /js/fanjian.fjd: the package's image, with an ETag" "status $code, ETag '$etag'"
        fi
        code=$("${SV_CURL[@]}" -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$sv_url/js/fanjian.fjd" 2>/dev/null)
        check "serve GET /js/fanjian.fjd again with its ETag: 304 ($code)" test "$code" = 304
        sv_req /js/fanjian.wasm
        check "serve GET /js/fanjian.wasm: application/wasm" grep -qi '^content-type: application/wasm' "$TMP/sv.head"
        sv_req /js/browser.mjs
        check "serve GET /js/browser.mjs: a JavaScript module" \
            grep -qi '^content-type: text/javascript; charset=utf-8' "$TMP/sv.head"
        sv_status "GET /js/ of a file the package does not serve" 404 /js/index.js
        sv_req /
        check "serve GET /: the page may load the package's modules and WebAssembly" \
            grep -qi "^content-security-policy:.*script-src 'unsafe-inline' 'self' 'wasm-unsafe-eval'" "$TMP/sv.head"
    else
        skip "serve /js/" "no JavaScript package built (make js needs emscripten)"
    fi

    # -- fixed answers ------------------------------------------------------------
    sv_req /healthz
    if [ "$code" = 200 ] && [ "$(tr -d '\n' <"$TMP/sv.body")" = '{"ok":true}' ] &&
        grep -qi '^content-type: application/json; charset=utf-8' "$TMP/sv.head"; then
        ok "serve GET /healthz"
    else
        bad "serve GET /healthz" "status $code: $(head -c 200 "$TMP/sv.body")"
    fi

    sv_req /v1/profiles
    want=$("$FJ" --list | sed 's/.*/"&"/' | paste -sd, -)
    targets='"tw","twp","hk","hkp","hant","cn","hans"'
    if [ "$code" = 200 ] &&
        [ "$(tr -d '\n' <"$TMP/sv.body")" = "{\"profiles\":[$want],\"targets\":[$targets]}" ] &&
        [ "$("$FJ" --list | wc -l)" -eq 16 ]; then
        ok "serve GET /v1/profiles lists the CLI's 16 profiles and the targets"
    else
        bad "serve GET /v1/profiles lists the CLI's 16 profiles" "status $code: $(head -c 300 "$TMP/sv.body")"
    fi

    sv_req /
    if [ "$code" = 200 ] && grep -qi '^content-type: text/html; charset=utf-8' "$TMP/sv.head" &&
        grep -q 'id="input"' "$TMP/sv.body" && grep -q 'id="output"' "$TMP/sv.body" &&
        grep -qi '^content-security-policy: default-src .none.' "$TMP/sv.head"; then
        ok "serve GET / is the page"
    else
        bad "serve GET / is the page" "status $code, $(wc -c <"$TMP/sv.body") bytes"
    fi
    # Offline: nothing is loaded from elsewhere.
    if ! grep -Eiq '(src|href|url)[=(] *["'\'']?(https?:)?//' "$TMP/sv.body" &&
        ! grep -Eiq '<link|@import' "$TMP/sv.body"; then
        ok "serve page loads nothing from elsewhere"
    else
        bad "serve page loads nothing from elsewhere" \
            "$(grep -Eio '((src|href|url)[=(] *["'\'']?(https?:)?//[^"'\'' ]*|<link[^>]*|@import[^;]*)' "$TMP/sv.body" | head -n 3)"
    fi
    sv_req / -I
    check "serve HEAD / answers 200" test "$code" = 200

    # -- conversion -----------------------------------------------------------------
    sv_convert "s2tw 头发干了 (default mode)" '头发干了' s2tw '' '頭髮乾了'
    sv_convert "s2tw 头发干了 with compat" '头发干了' s2tw ',"compat":true' '頭髮幹了'
    sv_convert "profile given as s2tw.json" '头发干了' s2tw.json '' '頭髮乾了'
    sv_req /v1/convert --data-binary '{"text":"头发","profile":"s2tw"}'
    if [ "$code" = 200 ] && grep -Eq '^\{"text":"頭髮","profile":"s2tw","ms":[0-9]+(\.[0-9]+)?\}$' "$TMP/sv.body" &&
        grep -qi '^content-type: application/json; charset=utf-8' "$TMP/sv.head"; then
        ok "serve convert: answers text, profile and ms as JSON"
    else
        bad "serve convert: answers text, profile and ms as JSON" "$(head -c 200 "$TMP/sv.body")"
    fi
    q='他说：“你好，‘朋友’。”'
    sv_convert "s2tw keeps quotation marks" "$q" s2tw '' '他說：“你好，‘朋友’。”'
    sv_convert "s2tw quotes tw" "$q" s2tw ',"quotes":"tw"' '他說：「你好，『朋友』。」'
    sv_convert "s2twp writes 「」 by default" "$q" s2twp '' '他說：「你好，『朋友』。」'
    sv_convert "s2twp quotes keep" "$q" s2twp ',"quotes":"keep"' "$(printf '%s' "$q" | "$FJ" -c s2twp --quotes=keep)"
    sv_convert "compat keeps quotation marks" "$q" s2twp ',"compat":true' "$(printf '%s' "$q" | "$FJ" --compat -c s2twp)"
    sv_convert "tw2s quotes cn" '他說：「你好」' tw2s ',"quotes":"cn"' '他说：“你好”'
    sv_convert "punct" '等等。。。' s2t ',"punct":true' '等等……'
    sv_convert "t2tw repair auto (default) keeps 老板 in a short text" '老板說她仿佛懂了' t2tw '' '老板說她仿佛懂了'
    sv_convert "t2tw repair auto" '老板說她仿佛懂了' t2tw ',"repair":"auto"' '老板說她仿佛懂了'
    sv_convert "t2tw repair off: as --compat" '衹是老板' t2tw ',"repair":"off"' '衹是老板'
    sv_convert "t2tw repair thorough" '老板說她仿佛懂了' t2tw ',"repair":"thorough"' '老闆說她彷彿懂了'
    sv_convert "t2tw repair careful" '老板說她仿佛懂了' t2tw ',"repair":"careful"' '老板說她仿佛懂了'
    story=$(printf '%s\n' '头发干了' '天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！' '他说')
    sv_convert "clean drops a boilerplate line" "$story" s2t ',"clean":true' "$(printf '頭髮乾了\n他說')"
    sv_convert "without clean every line stays" "$story" s2t ',"clean":false' "$(printf '%s' "$story" | "$FJ" -c s2t)"
    sv_convert "escapes and control characters" $'a"b\\c\t\r\x01头' s2t '' $'a"b\\c\t\r\x01頭'
    # NUL is text like any other.
    sv_req /v1/convert --data-binary '{"text":"a\u0000头发","profile":"s2t"}'
    check "serve convert: NUL passes through" grep -q '^{"text":"a\\u0000頭髮",' "$TMP/sv.body"

    # -- detection --------------------------------------------------------------------
    sv_req /v1/detect --data-binary '{"text":"这里有简体，這裡有繁體，兩者混在一起了。"}'
    check "serve detect: mixed text, counts and spans" test "$code $(cat "$TMP/sv.body")" = \
        '200 {"script":"mixed","confidence":0.875,"han":17,"simplified":3,"traditional":4,"damage":null,"spans":[{"offset":0,"length":18,"script":"simplified"}]}'
    sv_req /v1/detect --data-binary '{"text":"這是繁體中文。"}'
    check "serve detect: traditional" grep -q '^{"script":"traditional",' "$TMP/sv.body"
    # Not text: the library's binary label, as `fanjian detect` gives it.
    sv_req /v1/detect --data-binary '{"text":"\u0089PNG\r\n\u001a\n\u0000\u0000\u0000\rIHDR中文"}'
    check "serve detect: a NUL makes binary" test "$code $(cat "$TMP/sv.body")" = \
        '200 {"script":"binary","confidence":1.000,"han":0,"simplified":0,"traditional":0,"damage":null,"spans":[]}'
    sv_req /v1/detect --data-binary '{"text":"\u0001\u0002发\u0003\u0004\u0001\u0002发\u0003\u0004\u0001\u0002发\u0003\u0004"}'
    check "serve detect: control characters make binary" grep -q '^{"script":"binary",' "$TMP/sv.body"
    # Damage: our dev sentences converted character by character (頭發, 沖鋒).
    if [ -r "$FANJIAN_OPENCC_DATA/dictionary/STCharacters.txt" ]; then
        head -n 80 "$ROOT/bench/fiction/dev.tsv" |
            python3 "$ROOT/tests/repair-damage.py" damage "$FANJIAN_OPENCC_DATA" |
            python3 -c 'import json, sys; print(json.dumps({"text": sys.stdin.read()}))' >"$TMP/sv.damaged"
        sv_req /v1/detect --data-binary @"$TMP/sv.damaged"
        check "serve detect: damage of a text converted character by character" \
            grep -q '"damage":0\.[5-9][0-9],' "$TMP/sv.body"
    fi

    # -- files: POST /v1/file, each format, equal to the CLI -------------------------------
    SVF=$TMP/sv.files
    mkdir -p "$SVF"
    python3 - "$SVF" <<'PY'
import sys
d = sys.argv[1]
open(d + "/头发.txt", "wb").write("第一章 头发\n她的头发干了。\n“我们走吧。”\n".encode("gbk"))
open(d + "/big5.txt", "wb").write("頭髮乾了，這裡是臺灣。\n".encode("big5"))
open(d + "/a.srt", "wb").write("1\n00:00:01,000 --> 00:00:02,000\n<i>头发</i>干了\n\n2\n00:00:03,000 --> 00:00:04,000\n他说\n".encode())
open(d + "/a.ass", "wb").write(("[Script Info]\nTitle: 头发\nScriptType: v4.00+\n\n[Events]\n"
    "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\an8}头发干了\n").encode())
open(d + "/a.html", "wb").write('<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>头发</title></head>'
    '<body><p class="头发" title="头发">头发干了</p><script>var x="头发";</script></body></html>\n'.encode())
PY
    E=$SVF/book
    epub_skeleton "$E"
    cat >"$E/OEBPS/content.opf" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:12345678-1234-1234-1234-123456789abc</dc:identifier>
    <dc:title>头发干了</dc:title>
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
<body><nav epub:type="toc"><ol><li><a href="ch1.xhtml">第一章 头发</a></li></ol></nav></body>
</html>
XML
    cat >"$E/OEBPS/ch1.xhtml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh-CN" lang="zh-CN">
<head><title>第一章</title></head>
<body><h1>第一章 头发</h1><p>头发干了，这是只有一个人的世界。</p></body>
</html>
XML
    sv_epub=
    if command -v zip >/dev/null; then
        epub_pack "$E" "$SVF/青云志.epub"
        sv_epub=$SVF/青云志.epub
    fi
    # sv_file QUERY FILE: POSTs FILE to /v1/file?QUERY as application/octet-stream.
    sv_file() {
        local query=$1 file=$2
        shift 2
        sv_type=application/octet-stream sv_req "/v1/file?$query" --data-binary @"$file" "$@"
    }
    # sv_file_check NAME QUERY FILE NAME_WANTED CLI_ARGS...: the answer is the
    # CLI's output for FILE, byte for byte, named NAME_WANTED.
    sv_file_check() {
        local name=$1 query=$2 file=$3 want_name=$4 disp
        shift 4
        sv_file "$query" "$file"
        "$FJ" "$@" "$file" -o "$TMP/sv.file.cli" 2>"$TMP/sv.file.err"
        disp=$(sed -n "s/^[Cc]ontent-[Dd]isposition: attachment; .*filename\*=UTF-8''\([^;]*\).$/\1/p" "$TMP/sv.head")
        disp=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.unquote(sys.argv[1]))' "$disp")
        if [ "$code" = 200 ] && [ -s "$TMP/sv.file.cli" ] && cmp -s "$TMP/sv.body" "$TMP/sv.file.cli" &&
            [ "$disp" = "$want_name" ]; then
            ok "serve file: $name"
        else
            bad "serve file: $name" "status $code, named '$disp' (want '$want_name')" \
                "$(head -c 300 "$TMP/sv.body")" "$(cmp "$TMP/sv.body" "$TMP/sv.file.cli" 2>&1 | head -n 1)"
        fi
    }
    sv_file_check "GBK text, s2tw: the CLI's bytes, named as --rename names it" \
        "name=$(printf %s 头发.txt | od -An -tx1 | tr -d ' \n' | sed 's/../%&/g')&profile=s2tw" \
        "$SVF/头发.txt" 頭髮.txt -c s2tw
    check "serve file: the GBK text's encoding is told (X-Fanjian-Encoding: GB18030)" \
        grep -qi '^x-fanjian-encoding: GB18030' "$TMP/sv.head"
    check "serve file: a text is answered as text/plain, an attachment" \
        grep -qi '^content-type: text/plain; charset=utf-8' "$TMP/sv.head"
    # curl -OJ takes filename=, which carries the name in UTF-8 too (README's example).
    mkdir -p "$SVF/oj"
    (cd "$SVF/oj" && "${SV_CURL[@]}" -OJ -H 'Content-Type: application/octet-stream' \
        --data-binary @"$SVF/头发.txt" "$sv_url/v1/file?name=%E5%A4%B4%E5%8F%91.txt&profile=s2tw" 2>/dev/null)
    check "serve file: curl -OJ writes 頭髮.txt, the CLI's bytes" cmp -s "$SVF/oj/頭髮.txt" "$TMP/sv.body"
    sv_file_check "Big5 text, t2s" "name=big5.txt&profile=t2s" "$SVF/big5.txt" big5.txt -c t2s
    check "serve file: the Big5 text's encoding is told" grep -qi '^x-fanjian-encoding: BIG5' "$TMP/sv.head"
    sv_file_check "SRT, to tw" "name=a.srt&to=tw" "$SVF/a.srt" a.srt --to tw
    check "serve file: X-Fanjian-Format: srt" grep -qi '^x-fanjian-format: srt' "$TMP/sv.head"
    sv_file_check "ASS, s2hk" "name=a.ass&profile=s2hk" "$SVF/a.ass" a.ass -c s2hk
    sv_file_check "HTML, s2twp with quotes cn" "name=a.html&profile=s2twp&quotes=cn" "$SVF/a.html" a.html \
        -c s2twp --quotes=cn
    check "serve file: an HTML answer runs nothing (CSP sandbox)" \
        grep -qi "^content-security-policy: default-src 'none'; sandbox" "$TMP/sv.head"
    sv_file_check "text given \"format\": html" "name=a.txt&format=html&profile=s2t" "$SVF/a.html" a.txt \
        -c s2t --format html
    printf '%s\n' '头发干了' '天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！' '他说' >"$SVF/story.txt"
    sv_file_check "text with clean=true, as --clean" "name=story.txt&profile=s2t&clean=true" \
        "$SVF/story.txt" story.txt -c s2t --clean
    check "serve file: clean=true dropped the boilerplate line" test "$(wc -l <"$TMP/sv.body")" -eq 2
    sv_file_check "text given from_encoding" "name=big5.txt&profile=t2s&from_encoding=big5" \
        "$SVF/big5.txt" big5.txt -c t2s --from-encoding big5
    if [ -n "$sv_epub" ]; then
        sv_file_check "EPUB, s2tw: the CLI's bytes" \
            "name=$(printf %s 青云志.epub | od -An -tx1 | tr -d ' \n' | sed 's/../%&/g')&profile=s2tw" \
            "$sv_epub" 青雲志.epub -c s2tw
        check "serve file: an EPUB is application/epub+zip" \
            grep -qi '^content-type: application/epub+zip' "$TMP/sv.head"
        if python3 - "$TMP/sv.body" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
assert z.namelist()[0] == "mimetype"
ch = z.read("OEBPS/ch1.xhtml").decode()
assert "<p>頭髮乾了，這是只有一個人的世界。</p>" in ch, ch
PY
        then
            ok "serve file: the EPUB is a valid zip whose chapter is converted"
        else
            bad "serve file: the EPUB is a valid zip whose chapter is converted"
        fi
        # Malformed: cut in half, and not a zip at all.
        head -c "$(($(wc -c <"$sv_epub") / 2))" "$sv_epub" >"$SVF/cut.epub"
        sv_type=application/octet-stream sv_status "a truncated EPUB" 422 "/v1/file?name=cut.epub&profile=s2t" \
            --data-binary @"$SVF/cut.epub"
        check "serve 422: a truncated EPUB is named and called not an EPUB" grep -q 'cut.epub: not an EPUB' "$TMP/sv.body"
        sv_type=application/octet-stream sv_status "from_encoding with an EPUB" 400 \
            "/v1/file?name=b.epub&profile=s2t&from_encoding=gbk" --data-binary @"$sv_epub"
    else
        skip "serve file: EPUB" "zip is not installed"
    fi
    printf 'PK\003\004 not really a zip' >"$SVF/bad.epub"
    sv_type=application/octet-stream sv_status "a malformed EPUB" 422 "/v1/file?name=bad.epub&profile=s2t" \
        --data-binary @"$SVF/bad.epub"
    check "serve 422: a malformed EPUB says so" grep -q 'bad.epub: not an EPUB' "$TMP/sv.body"
    sv_type=application/octet-stream sv_status "GBK given as from_encoding utf-8" 422 \
        "/v1/file?name=x.txt&profile=s2t&from_encoding=utf-8" --data-binary @"$SVF/头发.txt"
    sv_type=application/octet-stream sv_status "a file without name" 400 "/v1/file?profile=s2t" \
        --data-binary @"$SVF/a.srt"
    sv_type=application/octet-stream sv_status "a name that is a path" 400 "/v1/file?name=..%2Fa.srt&profile=s2t" \
        --data-binary @"$SVF/a.srt"
    sv_type=application/octet-stream sv_status "an unknown format" 400 "/v1/file?name=a.srt&format=doc&profile=s2t" \
        --data-binary @"$SVF/a.srt"
    sv_type=application/octet-stream sv_status "a file with an unknown profile" 400 "/v1/file?name=a.srt&profile=nonesuch" \
        --data-binary @"$SVF/a.srt"
    sv_type=application/octet-stream sv_status "a file with clean=yes" 400 "/v1/file?name=a.srt&profile=s2t&clean=yes" \
        --data-binary @"$SVF/a.srt"
    sv_type=application/octet-stream sv_status "an unknown from_encoding" 400 \
        "/v1/file?name=a.srt&profile=s2t&from_encoding=klingon" --data-binary @"$SVF/a.srt"
    sv_status "a file sent as JSON" 415 "/v1/file?name=a.srt&profile=s2t" --data-binary @"$SVF/a.srt"
    sv_type=text/plain sv_status "a file sent as text/plain" 415 "/v1/file?name=a.srt&profile=s2t" \
        --data-binary @"$SVF/a.srt"
    sv_status "GET /v1/file" 405 "/v1/file"
    sv_file "name=a.srt&profile=s2t&clean=true&punct=false&compat=false" "$SVF/a.srt"
    check "serve file: booleans as query parameters (clean=true)" test "$code" = 200

    # -- errors -------------------------------------------------------------------------
    sv_status "malformed JSON" 400 /v1/convert --data-binary '{"text": "头发'
    sv_status "a body that is not an object" 400 /v1/convert --data-binary '["头发"]'
    sv_status "an empty body" 400 /v1/convert --data-binary ''
    sv_status "missing text" 400 /v1/convert --data-binary '{"profile":"s2t"}'
    sv_status "text not a string" 400 /v1/convert --data-binary '{"text":12,"profile":"s2t"}'
    sv_status "missing profile" 400 /v1/convert --data-binary '{"text":"头发"}'
    sv_status "unknown profile" 400 /v1/convert --data-binary '{"text":"头发","profile":"nonesuch"}'
    check "serve 400: unknown profile is named" grep -q nonesuch "$TMP/sv.body"
    sv_status "bad quotes value" 400 /v1/convert --data-binary '{"text":"头发","profile":"s2t","quotes":"fancy"}'
    sv_status "clean not a boolean" 400 /v1/convert --data-binary '{"text":"头发","profile":"s2t","clean":"yes"}'
    sv_status "bad repair value" 400 /v1/convert --data-binary '{"text":"头发","profile":"t2tw","repair":"eager"}'
    printf '{"text":"\xe5\xa4\xb4\xff","profile":"s2t"}' >"$TMP/sv.bad"
    sv_status "text that is not UTF-8" 400 /v1/convert --data-binary @"$TMP/sv.bad"
    sv_status "detect without text" 400 /v1/detect --data-binary '{}'
    sv_status "unknown path" 404 /nonesuch
    sv_status "unknown API path" 404 /v1/nonesuch --data-binary '{}'
    sv_status "GET /v1/convert" 405 /v1/convert
    check "serve 405: Allow: POST" grep -qi '^allow: POST' "$TMP/sv.head"
    sv_status "POST /healthz" 405 /healthz --data-binary '{}'
    check "serve 405: Allow: GET, HEAD" grep -qi '^allow: GET, HEAD' "$TMP/sv.head"
    sv_status "DELETE /v1/profiles" 405 /v1/profiles -X DELETE

    # -- who may ask: Host (DNS rebinding), Content-Type, CORS -------------------------------
    port=${sv_url##*:}
    sv_status "a foreign Host" 403 /healthz -H 'Host: attacker.example'
    sv_status "a foreign Host with a port, POST" 403 /v1/convert -H "Host: attacker.example:$port" \
        --data-binary '{"text":"头发","profile":"s2t"}'
    sv_status "a Host that only begins like loopback" 403 /healthz -H 'Host: 127.0.0.1.attacker.example'
    hosts_ok=0
    for h in "127.0.0.1:$port" "localhost:$port" localhost "app.localhost:$port" "[::1]:$port" 127.1.2.3; do
        sv_req /v1/convert -H "Host: $h" --data-binary '{"text":"头发","profile":"s2t"}'
        if [ "$code" = 200 ] && grep -q '^{"text":"頭髮",' "$TMP/sv.body"; then
            hosts_ok=$((hosts_ok + 1))
        else
            bad "serve loopback Host $h is answered" "status $code: $(head -c 200 "$TMP/sv.body")"
        fi
    done
    check "serve loopback Hosts (127.0.0.1:PORT, localhost, *.localhost, [::1]) are answered" test "$hosts_ok" -eq 6
    sv_type=text/plain
    sv_status "a text/plain POST" 415 /v1/convert --data-binary '{"text":"头发","profile":"s2t"}'
    sv_type=application/x-www-form-urlencoded
    sv_status "a form POST" 415 /v1/detect --data-binary '{"text":"头发"}'
    sv_type=application/jsonp
    sv_status "application/jsonp is not JSON" 415 /v1/convert --data-binary '{"text":"头发","profile":"s2t"}'
    sv_type='Application/JSON; charset=UTF-8'
    sv_req /v1/convert --data-binary '{"text":"头发","profile":"s2t"}'
    check "serve Content-Type with parameters, any case, is JSON" grep -q '^{"text":"頭髮",' "$TMP/sv.body"
    sv_type=application/json
    code=$("${SV_CURL[@]}" -o "$TMP/sv.body" -w '%{http_code}' -H 'Content-Type:' \
        --data-binary '{"text":"头发","profile":"s2t"}' "$sv_url/v1/convert" 2>/dev/null) || code=000
    check "serve POST without Content-Type gets 415" test "$code" = 415
    sv_req /v1/convert -H 'Origin: https://attacker.example' --data-binary '{"text":"头发","profile":"s2t"}'
    if [ "$code" = 200 ] && ! grep -qi '^access-control-' "$TMP/sv.head"; then
        ok "serve no Access-Control-Allow-Origin without --cors"
    else
        bad "serve no Access-Control-Allow-Origin without --cors" "status $code" "$(grep -i '^access-control' "$TMP/sv.head")"
    fi
    sv_status "a preflight without --cors" 405 /v1/convert -X OPTIONS -H 'Origin: https://attacker.example' \
        -H 'Access-Control-Request-Method: POST'
    if grep -qi '^access-control-' "$TMP/sv.head"; then
        bad "serve no --cors: the preflight allows no origin" "$(grep -i '^access-control' "$TMP/sv.head")"
    else
        ok "serve no --cors: the preflight allows no origin"
    fi
    if grep -qi 'warning' "$TMP/serve-main.err"; then
        bad "serve on 127.0.0.1 prints no warning" "$(grep -i warning "$TMP/serve-main.err")"
    else
        ok "serve on 127.0.0.1 prints no warning"
    fi
    sv_req /healthz
    check "serve still answers after the errors" test "$code" = 200

    # -- a large text: the same as the CLI -------------------------------------------------
    awk 'BEGIN { for (i = 0; i < 50000; i++)
        printf "第%d行：这是只有一个人的世界，头发干了，“我们去打印机那里取文件。”\n", i }' >"$TMP/sv.big"
    "$FJ" -c s2twp "$TMP/sv.big" >"$TMP/sv.big.cli"
    # The body and the text out of the answers, by Python's JSON module.
    python3 -c 'import json, sys
json.dump({"text": open(sys.argv[1], encoding="utf-8").read(), "profile": "s2twp"},
          open(sys.argv[2], "w", encoding="utf-8"), ensure_ascii=False)' "$TMP/sv.big" "$TMP/sv.big.req"
    sv_req /v1/convert --data-binary @"$TMP/sv.big.req"
    mv "$TMP/sv.body" "$TMP/sv.big.ans1"
    code1=$code
    # The same body sent chunked (no Content-Length).
    sv_req /v1/convert -H 'Transfer-Encoding: chunked' --data-binary @"$TMP/sv.big.req"
    mv "$TMP/sv.body" "$TMP/sv.big.ans2"
    python3 -c 'import json, sys
for a, o in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):
    try:
        t = json.load(open(a, "rb"))["text"]
    except Exception:
        t = ""
    open(o, "w", encoding="utf-8", newline="").write(t)' \
        "$TMP/sv.big.ans1" "$TMP/sv.big.srv1" "$TMP/sv.big.ans2" "$TMP/sv.big.srv2"
    if [ "$code1" = 200 ] && [ "$(wc -c <"$TMP/sv.big")" -gt 5000000 ] && cmp -s "$TMP/sv.big.srv1" "$TMP/sv.big.cli"; then
        ok "serve convert: 5 MB equals the CLI's output"
    else
        bad "serve convert: 5 MB equals the CLI's output" "status $code1; $(cmp "$TMP/sv.big.srv1" "$TMP/sv.big.cli" 2>&1 | head -n 1)"
    fi
    if [ "$code" = 200 ] && cmp -s "$TMP/sv.big.srv2" "$TMP/sv.big.cli"; then
        ok "serve convert: 5 MB sent chunked"
    else
        bad "serve convert: 5 MB sent chunked" "status $code; $(cmp "$TMP/sv.big.srv2" "$TMP/sv.big.cli" 2>&1 | head -n 1)"
    fi
    rm -f "$TMP"/sv.big*

    # -- 32 requests at once ----------------------------------------------------------------
    profs=(s2t s2tw s2twp s2hk)
    pids=()
    for i in $(seq 1 32); do
        printf -v text '第%d封信：她的头发干了，众将干了这碗酒，这是只有%d个人的世界。\n' "$i" "$i"
        printf '%s' "{\"text\":$(sv_jstr "$text"),\"profile\":\"${profs[i % 4]}\"}" >"$TMP/sv.c$i.req"
        out=$(printf '%s' "$text" | "$FJ" -c "${profs[i % 4]}"; echo .)
        printf '%s' "{\"text\":$(sv_jstr "${out%.}"),\"profile\":\"${profs[i % 4]}\"," >"$TMP/sv.c$i.want"
    done
    for i in $(seq 1 32); do
        "${SV_CURL[@]}" -H 'Content-Type: application/json' -o "$TMP/sv.c$i.body" --data-binary @"$TMP/sv.c$i.req" "$sv_url/v1/convert" 2>/dev/null &
        pids+=($!)
    done
    wait "${pids[@]}"
    wrong=0
    for i in $(seq 1 32); do
        [[ $(cat "$TMP/sv.c$i.body" 2>/dev/null) == "$(cat "$TMP/sv.c$i.want")"* ]] || wrong=$((wrong + 1))
    done
    check "serve 32 concurrent requests all correct ($wrong wrong)" test "$wrong" -eq 0

    # -- the default-mode case file: the server answers as the CLI does ---------------------
    lineno=0
    while IFS= read -r line || [ -n "$line" ]; do
        lineno=$((lineno + 1))
        case $line in '' | '#'*) continue ;; esac
        prof=${line%%$'\t'*}
        rest=${line#*$'\t'}
        printf '%b' "${rest%%$'\t'*}" >"$TMP/sv.case"
        # $(...) drops final newlines: keep them with a sentinel.
        input=$(cat "$TMP/sv.case"; echo .)
        expected=$("$FJ" -c "$prof" "$TMP/sv.case" 2>/dev/null; echo .)
        sv_convert "default.tsv:$lineno $prof equals the CLI" "${input%.}" "$prof" '' "${expected%.}"
    done <"$ROOT/tests/cases/default.tsv"
    # -- the page, in headless Chromium ---------------------------------------------------------
    chromium_bin=${CHROMIUM:-/usr/bin/chromium}
    if ! command -v node >/dev/null; then
        skip "serve page in Chromium" "node is not installed"
    elif [ ! -x "$chromium_bin" ]; then
        skip "serve page in Chromium" "$chromium_bin is not installed"
    elif ! pw_dir=$("$ROOT/scripts/fetch-playwright.sh" 2>"$TMP/sv.fetch"); then
        skip "serve page in Chromium" "npm could not fetch playwright-core: $(tail -n 1 "$TMP/sv.fetch")"
    else
        python3 - "$TMP/sv.browser.json" "$sv_url/" "$chromium_bin" "$FJ" "$SVF" "$sv_epub" "$sv_js_dir" <<'PY'
import base64, json, subprocess, sys, zipfile
out, url, chromium, fj, files, epub, js_dir = sys.argv[1:8]
def cli(text, profile, *opts):
    which = ["--to", profile[3:]] if profile.startswith("to:") else ["-c", profile]
    r = subprocess.run([fj, *opts, *which], input=text.encode(), capture_output=True, check=True)
    return r.stdout.decode()
story = "头发干了\n天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！\n他说"
cases = [
    # marks: the changed characters the page must highlight, in order
    {"name": "s2tw 头发干了", "input": "头发干了", "profile": "s2tw", "marks": "頭髮乾"},
    {"name": "astral characters (t2s 絺 -> U+2B128)", "input": "是刈是濩，為絺為綌。", "profile": "t2s",
     "marks": "为\U0002B128为绤"},
    {"name": "clean drops a line (lengths differ)", "input": story, "profile": "s2t", "clean": True,
     "marks": "頭髮乾說"},
    # the first choice of the page: any input to Taiwan's standard
    {"name": "to:tw, Simplified and damaged Traditional clauses", "input": "头发干了，他衹好廻家。",
     "profile": "to:tw", "marks": "頭髮乾只回"},
]
# Too long for one character table: compared line by line.
lines = ["头发干了，第%d行。\n" % i for i in range(1500)]
lines.insert(700, "天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！\n")
cases.append({"name": "1,500 lines with one dropped (line by line)", "input": "".join(lines),
              "profile": "s2t", "clean": True, "marks": "頭髮乾" * 1500})
for c in cases:
    c["expected"] = cli(c["input"], c["profile"], *(["--clean"] if c.get("clean") else []))
text = "第一章 头发\n她的头发干了。\n"
b64 = lambda b: base64.b64encode(b).decode()
def cli_file(path, profile):
    # The CLI's output for a file, as bytes.
    dest = files + "/cli-out"
    subprocess.run([fj, "-c", profile, path, "-o", dest], check=True)
    return open(dest, "rb").read()
gbk = files + "/头发.txt"
uploads = [{"name": "头发.txt", "bytes": b64(open(gbk, "rb").read()), "profile": "s2tw",
            "text": open(gbk, "rb").read().decode("gbk"), "expected": b64(cli_file(gbk, "s2tw")),
            "expected_name": cli("头发.txt", "s2tw")}]
if epub:
    converted = cli_file(epub, "s2tw")
    open(files + "/cli-out.epub", "wb").write(converted)
    chapter = zipfile.ZipFile(files + "/cli-out.epub").read("OEBPS/ch1.xhtml").decode()
    assert "頭髮乾了" in chapter
    uploads.append({"name": "青云志.epub", "bytes": b64(open(epub, "rb").read()), "profile": "s2tw",
                    "expected": b64(converted), "expected_name": cli("青云志.epub", "s2tw"),
                    "chapter": {"entry": "OEBPS/ch1.xhtml", "text": chapter}})
name = "第一章 头发.txt"
ins_text = "皇后理发以后，发现头发干了。\n他买了一只表，面对着窗户。"
ins_run = subprocess.run([fj, "--inspect", "-c", "s2t"], input=ins_text.encode(), capture_output=True, check=True)
inspect = {"input": ins_text, "profile": "s2t", "expected": cli(ins_text, "s2t"),
           "choices": [json.loads(l) for l in ins_run.stdout.decode().splitlines()]}
assert len(inspect["choices"]) >= 3, inspect
# In the browser (the package from /js/), with the page's options and one's
# own words: the CLI's output with the same options.
offline = []
if js_dir:
    open(files + "/my-phrases.tsv", "w").write("头发\t頭毛\n")
    open(files + "/my-protect.txt", "w").write("张三丰\n")
    mine = ["--phrases", files + "/my-phrases.tsv", "--protect", files + "/my-protect.txt", "--markup"]
    for what, text, profile, page_opts, cli_opts in [
        ("s2twp", "我的头发干了，鼠标在桌上。", "s2twp", {}, []),
        ("to:tw from damaged Traditional", "头发干了，他衹好廻家。", "to:tw", {}, []),
        ("s2t compat", "头发干了，干部们在干活。", "s2t", {"compat": True}, ["--compat"]),
        ("s2tw with clean, punct and 「」", story + ':"好,走吧..."\n', "s2tw",
         {"clean": True, "punct": True, "quotes": "tw"}, ["--clean", "--punct", "--quotes", "tw"]),
        ("t2tw thorough", "老板說他衹是個儅兵的，頭發乾了。", "t2tw", {"thorough": True}, ["--repair", "thorough"]),
        ("s2hk with my own words", "张三丰的头发，-{干}-了。", "s2hk",
         {"phrases": "头发=頭毛", "protect": "张三丰", "markup": True}, mine),
    ]:
        offline.append({"name": what, "input": text, "profile": profile, "options": page_opts,
                        "expected": cli(text, profile, *cli_opts)})
json.dump({"url": url, "chromium": chromium, "cases": cases, "offline": offline,
           "file": {"name": name, "text": text, "profile": "s2tw",
                    "expected": cli(text, "s2tw"), "expected_name": cli(name, "s2tw")},
           "uploads": uploads,
           "bad_upload": {"name": "bad.epub", "bytes": b64(b"PK\x03\x04 not really a zip"),
                          "error": "bad.epub: not an EPUB"},
           "diff": {"input": "头发干了", "profile": "s2tw", "del": ["头发干"], "ins": ["頭髮乾"]},
           "inspect": inspect,
           "hint": {"traditional": "這裡是臺灣，她的頭髮乾了，我們說話的時候天氣很熱。",
                    "simplified": "这里是台湾，她的头发干了，我们说话的时候天气很热。"}},
          open(out, "w", encoding="utf-8"), ensure_ascii=False)
PY
        node "$ROOT/tests/browser/page.mjs" "$pw_dir" "$TMP/sv.browser.json" >"$TMP/sv.browser.out" 2>"$TMP/sv.browser.err"
        brc=$?
        nfail=0
        while IFS= read -r line; do
            case $line in
            "ok "*) ok "serve page: ${line#ok }" ;;
            "not ok "*) bad "serve page: ${line#not ok }"; nfail=$((nfail + 1)) ;;
            esac
        done <"$TMP/sv.browser.out"
        if [ "$brc" -ne 0 ] && [ "$nfail" -eq 0 ]; then
            bad "serve page: the browser test exited with status $brc" "$(head -n 5 "$TMP/sv.browser.err")"
        fi
    fi

    sv_stop main "$main_pid" TERM
fi

# -- --js naming a directory without the package: refused at start -------------------------
if [ -x "$FJ" ]; then
    "$FJ" serve --listen 127.0.0.1:0 --js "$TMP/no-such-package" >/dev/null 2>"$TMP/sv.js.err"
    rc=$?
    if [ "$rc" -ne 0 ] && grep -q 'no-such-package/browser.mjs' "$TMP/sv.js.err"; then
        ok "serve --js without the package there: refused, naming the file"
    else
        bad "serve --js without the package there: refused, naming the file" "exit $rc: $(head -c 300 "$TMP/sv.js.err")"
    fi
fi

# -- body limits: a second server with --max-body 1000 -------------------------------------
if [ -x "$FJ" ] && command -v curl >/dev/null && command -v python3 >/dev/null &&
    sv_start max-body --max-body 1000 --max-file 2000 --threads 2; then
    small_pid=$sv_pid
    head -c 3000 /dev/zero | tr '\0' x >"$TMP/sv.pad"
    printf '{"text":"%s","profile":"s2t"}' "$(cat "$TMP/sv.pad")" >"$TMP/sv.large"
    sv_status "body over --max-body (Content-Length)" 413 /v1/convert --data-binary @"$TMP/sv.large"
    sv_status "body over --max-body (chunked)" 413 /v1/convert -H 'Transfer-Encoding: chunked' \
        --data-binary @"$TMP/sv.large"
    sv_status "detect body over --max-body" 413 /v1/detect --data-binary @"$TMP/sv.large"
    head -c 900 "$TMP/sv.pad" >"$TMP/sv.pad900"
    sv_convert "a body just under --max-body" "$(cat "$TMP/sv.pad900")" s2t '' "$(cat "$TMP/sv.pad900")"
    sv_req /v1/convert -H 'Transfer-Encoding: chunked' --data-binary '{"text":"头发","profile":"s2t"}'
    check "serve small chunked body under --max-body" grep -q '^{"text":"頭髮",' "$TMP/sv.body"
    # A file has its own limit, --max-file.
    head -c 1500 "$TMP/sv.pad" >"$TMP/sv.pad1500"
    sv_type=application/octet-stream sv_req "/v1/file?name=x.txt&profile=s2t" --data-binary @"$TMP/sv.pad1500"
    check "serve file: a file over --max-body but under --max-file is converted" \
        cmp -s "$TMP/sv.body" "$TMP/sv.pad1500"
    sv_type=application/octet-stream sv_status "a file over --max-file (Content-Length)" 413 \
        "/v1/file?name=x.txt&profile=s2t" --data-binary @"$TMP/sv.pad"
    check "serve 413: the file's limit is named" grep -q 'larger than 2000 bytes (--max-file)' "$TMP/sv.body"
    sv_type=application/octet-stream sv_status "a file over --max-file (chunked)" 413 \
        "/v1/file?name=x.epub&profile=s2t" -H 'Transfer-Encoding: chunked' --data-binary @"$TMP/sv.pad"
    sv_req /healthz
    check "serve max-body: answers after the files over the limit" test "$code" = 200
    sv_stop max-body "$small_pid" INT
fi

# -- a server that holds: misbehaving clients (tests/serve-clients.py) ------------------------
SV_CLIENTS=$ROOT/tests/serve-clients.py
# sv_clients OUT ARGS...: starts the helper in the background with room
# for its sockets; sets cl_pid.
sv_clients() {
    local out=$1
    shift
    (ulimit -n 4096 2>/dev/null; exec timeout 60 python3 "$SV_CLIENTS" "$@") >"$out" 2>&1 &
    cl_pid=$!
}
# sv_ready OUT: waits (up to 30 s) for the helper's "ready".
sv_ready() {
    local i
    for i in $(seq 1 300); do
        grep -q '^ready' "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
# sv_count OUT KEY: a number from the helper's last line (answered=, status503=...).
sv_count() { sed -n "s/.*\\b$2=\\([0-9]*\\).*/\\1/p" "$1" | tail -n 1; }
sv_rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
sv_fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# sv_quick NAME CURL_ARGS... URL: a GET /healthz that must answer 200 within 3 s.
sv_quick() {
    local name=$1 c
    shift
    c=$(curl -sS --max-time 3 -o "$TMP/sv.quick" -w '%{http_code}' "$@" 2>/dev/null) || c=000
    if [ "$c" = 200 ] && grep -q '"ok":true' "$TMP/sv.quick"; then
        ok "serve $name"
    else
        bad "serve $name" "status $c"
    fi
}

if [ -x "$FJ" ] && command -v curl >/dev/null && command -v python3 >/dev/null; then
    # -- CORS only for --cors's origin --------------------------------------------------------
    if sv_start cors --cors https://app.example --threads 2; then
        cors_pid=$sv_pid
        sv_req /v1/convert -H 'Origin: https://app.example' --data-binary '{"text":"头发","profile":"s2t"}'
        if [ "$code" = 200 ] && grep -qi '^access-control-allow-origin: https://app.example.$' "$TMP/sv.head" &&
            [ "$(grep -ci '^access-control-allow-origin:' "$TMP/sv.head")" -eq 1 ]; then
            ok "serve --cors: Access-Control-Allow-Origin is the origin given"
        else
            bad "serve --cors: Access-Control-Allow-Origin is the origin given" "status $code" \
                "$(grep -i '^access-control' "$TMP/sv.head")"
        fi
        sv_req /v1/convert -X OPTIONS -H 'Origin: https://app.example' \
            -H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: content-type'
        if [ "$code" = 204 ] && grep -qi '^access-control-allow-origin: https://app.example.$' "$TMP/sv.head" &&
            grep -qi '^access-control-allow-headers: .*content-type' "$TMP/sv.head" &&
            grep -qi '^access-control-allow-methods: .*POST' "$TMP/sv.head"; then
            ok "serve --cors: the preflight from that origin is allowed"
        else
            bad "serve --cors: the preflight from that origin is allowed" "status $code" \
                "$(grep -i '^access-control' "$TMP/sv.head")"
        fi
        sv_status "--cors: a preflight from another origin" 403 /v1/convert -X OPTIONS \
            -H 'Origin: https://attacker.example' -H 'Access-Control-Request-Method: POST'
        sv_type=text/plain
        sv_status "--cors: a text/plain POST is still refused" 415 /v1/convert \
            -H 'Origin: https://app.example' --data-binary '{"text":"头发","profile":"s2t"}'
        sv_type=application/json
        sv_stop cors "$cors_pid" TERM
    fi

    # -- memory: 150 bodies of 1 MiB stalled half-way, --max-memory 16M -------------------------
    if sv_start memory --max-memory 16M --max-per-address 1000 --threads 2; then
        mem_pid=$sv_pid
        sv_port=${sv_url##*:}
        sv_quick "memory: answers before" "$sv_url/healthz"
        rss0=$(sv_rss "$mem_pid")
        sv_clients "$TMP/sv.stall" stall 127.0.0.1 "$sv_port" 150 1048576 524288 4
        if sv_ready "$TMP/sv.stall"; then
            rss1=$(sv_rss "$mem_pid")
            sv_quick "memory: /healthz answers while 150 bodies stall" "$sv_url/healthz"
            # 16 MiB of bodies may be held; 24 MiB more for everything else.
            if [ -n "$rss0" ] && [ -n "$rss1" ] && [ $((rss1 - rss0)) -lt $((40 << 10)) ]; then
                ok "serve memory: RSS bounded by --max-memory ($rss0 kB -> $rss1 kB)"
            else
                bad "serve memory: RSS bounded by --max-memory" "$rss0 kB -> $rss1 kB"
            fi
        else
            bad "serve memory: the stalled clients start" "$(head -n 3 "$TMP/sv.stall")"
        fi
        wait "$cl_pid"
        n503=$(sv_count "$TMP/sv.stall" status503)
        nclosed=$(sv_count "$TMP/sv.stall" closed)
        nopen=$(sv_count "$TMP/sv.stall" open)
        # A 503 sent while the client still sends can be lost to the reset
        # that closing on unread data makes: closed counts too.
        if [ "${n503:-0}" -ge 1 ] && [ $((${n503:-0} + ${nclosed:-0})) -ge 130 ] &&
            [ "${nopen:-999}" -le 16 ]; then
            ok "serve memory: bodies past the budget get 503 or are closed ($n503 503s, $nclosed closed, $nopen held)"
        else
            bad "serve memory: bodies past the budget get 503" "$(tail -n 1 "$TMP/sv.stall")"
        fi
        # The budget comes back once the stalled connections are gone.
        head -c 900000 /dev/zero | tr '\0' x >"$TMP/sv.pad"
        printf '{"text":"%s","profile":"s2t"}' "$(cat "$TMP/sv.pad")" >"$TMP/sv.900k"
        got=0
        for i in $(seq 1 16); do
            for _ in $(seq 1 20); do
                sv_req /v1/convert --data-binary @"$TMP/sv.900k"
                [ "$code" = 200 ] && break
                sleep 0.2
            done
            [ "$code" = 200 ] && got=$((got + 1))
        done
        check "serve memory: released afterwards (16 bodies of 900 kB answered, $got)" test "$got" -eq 16
        sv_stop memory "$mem_pid" TERM
    fi
    # 503 is JSON with Retry-After: a budget smaller than the body.
    if sv_start busy --max-memory 2000 --max-body 2000 --threads 2; then
        busy_pid=$sv_pid
        sv_port=${sv_url##*:}
        sv_clients "$TMP/sv.busy" stall 127.0.0.1 "$sv_port" 1 1500 10 3
        sv_ready "$TMP/sv.busy"
        sleep 0.3
        printf '{"text":"%s","profile":"s2t"}' "$(head -c 900 "$TMP/sv.pad")" >"$TMP/sv.900"
        sv_status "a body past --max-memory" 503 /v1/convert --data-binary @"$TMP/sv.900"
        check "serve 503: Retry-After" grep -qi '^retry-after: [0-9]' "$TMP/sv.head"
        sv_status "a chunked body past --max-memory" 503 /v1/convert -H 'Transfer-Encoding: chunked' \
            --data-binary @"$TMP/sv.900"
        wait "$cl_pid"
        sv_stop busy "$busy_pid" TERM
    fi
    rm -f "$TMP"/sv.pad "$TMP"/sv.900k "$TMP"/sv.900

    # -- 100 clients sending their headers a byte a second, --header-timeout 2 ------------------
    if sv_start trickle --header-timeout 2 --body-timeout 2 --max-per-address 1000 --threads 2; then
        tr_pid=$sv_pid
        sv_port=${sv_url##*:}
        t0=$(now)
        sv_clients "$TMP/sv.trickle" trickle 127.0.0.1 "$sv_port" 100 5
        sv_ready "$TMP/sv.trickle"
        sleep 1
        sv_quick "trickle: /healthz answers during the trickle" "$sv_url/healthz"
        sv_req /v1/convert --data-binary '{"text":"头发","profile":"s2t"}'
        check "serve trickle: a conversion answers during the trickle" grep -q '^{"text":"頭髮",' "$TMP/sv.body"
        wait "$cl_pid"
        nclosed=$(sv_count "$TMP/sv.trickle" closed)
        check "serve trickle: all 100 closed by the header deadline within 5 s ($nclosed, $(elapsed "$t0") s)" \
            test "${nclosed:-0}" -eq 100
        # A body that stops half-way: the body deadline.
        sv_clients "$TMP/sv.slowbody" stall 127.0.0.1 "$sv_port" 10 1000 500 5
        wait "$cl_pid"
        nclosed=$(sv_count "$TMP/sv.slowbody" closed)
        check "serve --body-timeout 2: 10 bodies stalled half-way closed within 5 s ($nclosed)" \
            test "${nclosed:-0}" -eq 10
        sv_stop trickle "$tr_pid" TERM
    fi

    # -- the descriptor limit: ulimit -n 128 and 150 stalled clients -----------------------------
    # sv_term_time NAME PID: SIGTERM, then the seconds until it exits (up to 30 s); in $took.
    sv_term_time() {
        local t0 i
        t0=$(now)
        kill -TERM "$2" 2>/dev/null
        for i in $(seq 1 300); do
            kill -0 "$2" 2>/dev/null || break
            sleep 0.05
        done
        took=$(elapsed "$t0")
        kill -0 "$2" 2>/dev/null && kill -KILL "$2" 2>/dev/null
        wait "$2"
        term_rc=$?
    }
    for variant in per-address overall; do
        if [ "$variant" = per-address ]; then
            extra=(--threads 2)
        else
            extra=(--threads 2 --max-per-address 1000 --max-memory 1G)
        fi
        if SV_NOFILE=128 sv_start "fds-$variant" "${extra[@]}"; then
            fd_pid=$sv_pid
            sv_port=${sv_url##*:}
            sv_clients "$TMP/sv.fds" stall 127.0.0.1 "$sv_port" 150 1048576 524288 10
            sv_ready "$TMP/sv.fds"
            sleep 1
            nfds=$(sv_fds "$fd_pid")
            check "serve ulimit -n 128, 150 stalled ($variant limit): descriptors stay below the limit ($nfds)" \
                test "$nfds" -lt 125
            if [ "$variant" = per-address ]; then
                # Another address (the loopback network is all ours) still gets in.
                sv_quick "ulimit -n 128: /healthz from 127.0.0.2 answers while 127.0.0.1 stalls" \
                    --interface 127.0.0.2 "$sv_url/healthz"
            fi
            sv_term_time "fds-$variant" "$fd_pid"
            if [ "$term_rc" -eq 0 ] && awk -v t="$took" 'BEGIN { exit !(t < 2.5) }'; then
                ok "serve ulimit -n 128, 150 stalled ($variant limit): SIGTERM stops it in $took s"
            else
                bad "serve ulimit -n 128, 150 stalled ($variant limit): SIGTERM stops it within 2 s" \
                    "exit $term_rc after $took s"
            fi
            if grep -Eq 'Sanitizer|runtime error' "$TMP/serve-fds-$variant.err"; then
                bad "serve fds-$variant: no sanitizer report" "$(grep -E -m 3 'Sanitizer|runtime error|SUMMARY' "$TMP/serve-fds-$variant.err")"
            fi
            wait "$cl_pid"
        fi
    done

    # -- a non-loopback address is announced as open ----------------------------------------------
    if sv_start open --listen 0.0.0.0:0 --threads 1; then
        open_pid=$sv_pid
        if grep -q 'warning: 0.0.0.0:[0-9]* is not a loopback address' "$TMP/serve-open.err" &&
            grep -q 'no authentication' "$TMP/serve-open.err" && grep -q 'Host check' "$TMP/serve-open.err"; then
            ok "serve --listen 0.0.0.0 warns what it exposes"
        else
            bad "serve --listen 0.0.0.0 warns what it exposes" "$(head -n 3 "$TMP/serve-open.err")"
        fi
        sv_url=http://127.0.0.1:${sv_url##*:}
        sv_req /healthz -H 'Host: files.example.org'
        check "serve --listen 0.0.0.0: any Host is answered" test "$code" = 200
        sv_stop open "$open_pid" TERM
    fi
fi

run "$FJ" serve --max-body lots
check "serve --max-body with a bad size" test "$rc" -ne 0 -a -s "$TMP/err"
for bad_opt in "--max-memory lots" "--header-timeout 0" "--body-timeout x" "--max-per-address -1" \
    "--cors https://a.example,https://b.example" "--max-body 32M --max-memory 16M" \
    "--max-file 0" "--max-file 32M --max-memory 16M"; do
    # shellcheck disable=SC2086 # the option and its value
    run "$FJ" serve $bad_opt
    check "serve $bad_opt is refused with a message" test "$rc" -eq 2 -a -s "$TMP/err"
done
run "$FJ" serve --no-such-option
check "serve unknown option" test "$rc" -ne 0 -a -s "$TMP/err"
run "$FJ" serve --dict "$TMP/nonexistent.fjd" --listen 127.0.0.1:0
if [ "$rc" -ne 0 ] && grep -q nonexistent.fjd "$TMP/err"; then
    ok "serve --dict missing image names it"
else
    bad "serve --dict missing image names it" "exit $rc: $(err1)"
fi
run "$FJ" serve --listen 127.0.0.1:99999
check "serve --listen with a bad port" test "$rc" -ne 0 -a -s "$TMP/err"

# -- "clean": true removes notices span by span: the clean case files through the API ------
if [ -x "$FJ" ] && command -v curl >/dev/null && command -v python3 >/dev/null &&
    sv_start clean-cases --threads 2; then
    clean_pid=$sv_pid
    # Each case's expected line (cleaned; "" when dropped, the input when kept),
    # then converted with s2t by the CLI, is what the API answers.
    if python3 - "$sv_url" "$FJ" "$ROOT/tests/cases/clean-spans.tsv" "$ROOT/tests/cases/clean.tsv" \
        >"$TMP/serve-clean.out" 2>&1 <<'PY'
import json, subprocess, sys, urllib.request
url, fj, files = sys.argv[1], sys.argv[2], sys.argv[3:]
cases = []
for path in files:
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        cols = line.rstrip("\n").split("\t")
        if line.startswith("#") or len(cols) != 3 or cols[0] not in ("clean", "cleaned"):
            continue
        inp = cols[1]
        if "\\" in inp:
            continue  # escapes: the byte-level cases stay with the library and CLI tests
        want = cols[2] if cols[0] == "cleaned" else "" if cols[2] == "drop" else inp
        cases.append(("%s:%d" % (path.rsplit("/", 1)[-1], n), inp, want, cols[2] == "drop"))
conv = subprocess.run([fj, "-c", "s2t"], input="".join(c[2] + "\n" for c in cases).encode(),
                      capture_output=True, check=True).stdout.decode().split("\n")
bad = []
for (name, inp, _, dropped), want in zip(cases, conv):
    body = json.dumps({"text": inp + "\n", "profile": "s2t", "clean": True}).encode()
    req = urllib.request.Request(url + "/v1/convert", body, {"Content-Type": "application/json"})
    got = json.load(urllib.request.urlopen(req, timeout=30))["text"]
    if got != ("" if dropped else want + "\n"):
        bad.append("%s: got %r, expected %r" % (name, got[:80], want[:80]))
print("%d cases, %d differ" % (len(cases), len(bad)))
for b in bad[:5]:
    print(b)
sys.exit(1 if bad or len(cases) < 80 else 0)
PY
    then
        ok "serve convert \"clean\": true: the clean case files, span by span ($(head -n 1 "$TMP/serve-clean.out"))"
    else
        bad "serve convert \"clean\": true: the clean case files, span by span" "$(tr '\n' '|' <"$TMP/serve-clean.out" | head -c 600)"
    fi
    sv_stop clean-cases "$clean_pid" TERM
fi

# -- "to": target-only conversion, the case file through the API -----------------------
if [ -x "$FJ" ] && command -v curl >/dev/null && command -v python3 >/dev/null &&
    sv_start to-cases --threads 2; then
    to_pid=$sv_pid
    if python3 - "$sv_url" "$ROOT/tests/cases/to.tsv" >"$TMP/serve-to.out" 2>&1 <<'PY'
import json, sys, urllib.error, urllib.request
url, path = sys.argv[1], sys.argv[2]
def post(obj):
    req = urllib.request.Request(url + "/v1/convert", json.dumps(obj).encode(),
                                 {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
bad, n = [], 0
for k, line in enumerate(open(path, encoding="utf-8"), 1):
    cols = line.rstrip("\n").split("\t")
    if line.startswith("#") or len(cols) != 3 or not cols[0].startswith("to:"):
        continue
    n += 1
    code, got = post({"text": cols[1], "to": cols[0][3:]})
    if code != 200 or got["text"] != cols[2] or got["profile"] != cols[0]:
        bad.append("to.tsv:%d: %s %r, expected %r" % (k, code, got, cols[2]))
targets = json.load(urllib.request.urlopen(url + "/v1/profiles", timeout=30))["targets"]
if targets != ["tw", "twp", "hk", "hkp", "hant", "cn", "hans"]:
    bad.append("targets: %r" % targets)
for obj, want in (({"text": "x", "to": "xx"}, 400), ({"text": "x", "to": "tw", "profile": "s2t"}, 400),
                  ({"text": "x", "to": "tw", "compat": True}, 400)):
    code, _ = post(obj)
    if code != want:
        bad.append("%r: status %d, expected %d" % (obj, code, want))
print("%d cases, %d differ" % (n, len(bad)))
for b in bad[:5]:
    print(b)
sys.exit(1 if bad or n < 10 else 0)
PY
    then
        ok "serve convert \"to\": the target case file, /v1/profiles' targets, refusals ($(head -n 1 "$TMP/serve-to.out"))"
    else
        bad "serve convert \"to\": the target case file" "$(tr '\n' '|' <"$TMP/serve-to.out" | head -c 600)"
    fi
    sv_stop to-cases "$to_pid" TERM
fi
