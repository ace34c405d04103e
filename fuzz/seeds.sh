#!/usr/bin/env bash
# Writes the fuzz targets' seed corpora, made from the project's own test
# material, and the small dictionary image the image target mutates.
#
#   fuzz/seeds.sh OUT_DIR FJDICT OPENCC_DATA ESSAY
#
# OUT_DIR/<target>/ holds each target's seeds; OUT_DIR/mini.fjd the image.
set -euo pipefail
export LC_ALL=C
out=$1 fjdict=$2 data=$3 essay=$4
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out/seeds.tmp"
mkdir -p "$out/seeds.tmp"
s=$out/seeds.tmp
for t in convert stream image encoding markup epub api; do mkdir -p "$s/$t"; done

# A small image: OpenCC's configs with each dictionary cut to 60 lines, a
# 3,000-word essay and our curated tables, so every section is present.
mini=$out/mini-data
rm -rf "$mini"
mkdir -p "$mini/dictionary"
cp -r "$data/config" "$mini/"
for f in "$data"/dictionary/*.txt; do head -n 60 "$f" >"$mini/dictionary/$(basename "$f")"; done
head -n 3000 "$essay" >"$out/mini-essay.txt"
"$fjdict" --compile "$mini" -o "$out/mini.fjd" --essay "$out/mini-essay.txt" \
    --curated "$root/data/context" --skip-misfits >"$out/mini.log" 2>&1 || { cat "$out/mini.log" >&2; exit 1; }

# Conversion seeds: every case line of tests/cases, with a profile and a
# mode byte (and 8 chunk-seed bytes for the stream target).
n=0
for f in "$root"/tests/cases/*.tsv; do
    while IFS=$'\t' read -r _ input _; do
        case $input in '' | '#'*) continue ;; esac
        n=$((n + 1))
        p=$((n % 16))
        printf "\\x$(printf %02x $p)\\x$(printf %02x $((n % 2)))%b" "$input" >"$s/convert/case$n"
        printf "\\x$(printf %02x $p)\\x$(printf %02x $((n % 2)))\\x5a\\x11\\x93\\x07\\xc4\\x2e\\x81\\x3f%b" "$input" >"$s/stream/case$n"
    done < <(grep -v '^#' "$f")
done
# The user-entry cases as stream seeds in the stream target's third mode
# (its own phrases, protected terms and -{…}-).
for f in "$root"/tests/cases/user/*.tsv; do
    while IFS=$'\t' read -r _ input _; do
        case $input in '' | '#'*) continue ;; esac
        n=$((n + 1))
        printf "\\x$(printf %02x $((n % 16)))\\x02\\x5a\\x11\\x93\\x07\\xc4\\x2e\\x81\\x3f%b" "$input" >"$s/stream/case$n"
    done < <(grep -v '^#' "$f")
done

# Image seeds: no change, one byte with the checksums fixed, a cut; the
# same byte checked by fj_dict_verify first, and one left to the chunk sums.
printf '\x00' >"$s/image/none"
printf '\x01\x40\x00\x00\x00\x01' >"$s/image/header-byte"
printf '\x01\x00\x10\x00\x00\x80' >"$s/image/body-byte"
printf '\x03\x00\x04\x00\x00\x00' >"$s/image/cut"
printf '\x81\x00\x10\x00\x00\x80' >"$s/image/body-byte-verified"
printf '\x80\x00\x10\x00\x00\x80' >"$s/image/body-byte-unsealed"

# Encoding seeds: one text of our own in each encoding.
text='第一章 回到那里。这是只有一个人的世界，头发干了以后，他把那本旧书放回书架。“我们什么时候出发？”她问。'
trad='第一章 回到那裡。這是只有一個人的世界，頭髮乾了以後，他把那本舊書放回書架。「我們什麼時候出發？」她問。'
i=0
for e in UTF-8 GB18030 UTF-16LE UTF-16BE; do
    printf "\\x$(printf %02x $i)\\x00\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08" >"$s/encoding/$e"
    printf '%s' "$text" | iconv -f UTF-8 -t "$e" >>"$s/encoding/$e"
    i=$((i + 1))
done
printf '\x00\x01\x01\x02\x03\x04\x05\x06\x07\x08' >"$s/encoding/big5"
printf '%s' "$trad" | iconv -f UTF-8 -t BIG5 >>"$s/encoding/big5"

# Markup seeds: a small document of each kind.
w() { printf "\\x$(printf %02x "$1")" >"$s/markup/$2"; cat >>"$s/markup/$2"; }
w 0 html <<'X'
<!DOCTYPE html><html lang="zh-CN"><head><meta charset="gbk"><title>头发</title><style>p{}</style></head>
<body><p title="头发">头发干了&amp;<b>这是</b></p><img alt="图"><script>var a="<p>";</script><!-- x --><pre>代码</pre></body></html>
X
w 1 srt <<'X'
1
00:00:01,000 --> 00:00:02,000
<i>头发干了</i>

2
00:00:03,000 --> 00:00:04,000 X1:10
{\an8}这是只有
X
w 2 ass <<'X'
[Script Info]
Title: 头发
[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\fs20}头发干了，这是\N只有
Comment: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,头发
X
w 3 vtt <<'X'
WEBVTT

NOTE 头发

1
00:00:01.000 --> 00:00:02.000 align:start
<v 张三>头发干了</v>
X
w 4 md <<'X'
# 头发

头发干了 `代码` [链接](头发.md "标题") <https://example.org/头发>

```
代码块
```
X
w 5 xhtml <<'X'
<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh-CN"><head><title>头发</title></head>
<body><p title="头发">头发干了&#x4E00;<![CDATA[ 这是 ]]></p><script>var a = "头发";</script></body></html>
X
w 6 opf <<'X'
<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:title>头发</dc:title><dc:language>zh-CN</dc:language></metadata></package>
X
w 7 ncx <<'X'
<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><docTitle><text>头发</text></docTitle></ncx>
X

# API seeds: a route byte (0 /v1/convert, 1 /v1/detect), then a body.
a() { printf "\\x$(printf %02x "$1")" >"$s/api/$2"; cat >>"$s/api/$2"; }
a 0 convert <<'X'
{"text":"这是只有一个人的世界，头发干了。","profile":"s2tw"}
X
a 0 convert-compat <<'X'
{"text":"头发干了，我们去打印机那里。","profile":"s2twp.json","compat":true}
X
a 0 convert-quotes-punct <<'X'
{"text":"他说:\"我们走吧!\"。。。然后...","profile":"s2t","quotes":"tw","punct":true}
X
a 0 convert-clean <<'X'
{"text":"第一章\n天才一秒记住本站地址：www.example.com\n头发干了。\n（本章完）\n","profile":"s2hk","clean":true,"quotes":"cn"}
X
a 0 convert-nulls <<'X'
{"text":"「頭髮乾了」\r\n\t什麼","profile":"tw2sp","quotes":"keep","clean":null,"compat":false,"punct":null}
X
a 1 detect <<'X'
{"text":"这是简体，這是繁體，中文"}
X
# More than 32 spans: the detection is asked again with room for all.
{ printf '\x01{"text":"'
  for _ in $(seq 40); do printf '这是一个简体的句子，还有头发和说话。這是繁體。'; done
  printf '"}'; } >"$s/api/detect-spans"
printf '\x00{"text":"a","profile":' >"$s/api/malformed"
printf '\x00{"text":12,"profile":["s2t"]}' >"$s/api/wrong-types"
printf '\x00{"text":"a","profile":"s2t","compat":"yes","quotes":5}' >"$s/api/wrong-options"
printf '\x00{"text":"a","profile":"zz9.json"}' >"$s/api/unknown-profile"
printf '\x00{"text":"a","profile":"s2tw\\u0000x"}' >"$s/api/profile-nul"
printf '\x00{"text":"a","profile":"s2tw","quotes":"tw\\u0000"}' >"$s/api/quotes-nul"
printf '\x00{"text":"头\\u0000发\\u0001\\u001f\\\\\\"","profile":"s2t"}' >"$s/api/text-nul"
printf '\x01{"text":"\\u0000头发\\u0000"}' >"$s/api/detect-nul"
printf '\x01["text"]' >"$s/api/not-object"
printf '\x01' >"$s/api/empty"
printf '\x00{"text":"\xe5\xa4\xb4\xff\xc0\x80","profile":"s2t"}' >"$s/api/bad-utf8"
printf '\x00{"text":"\\ud800\\udc00\\ud800","profile":"s2t"}' >"$s/api/surrogate"
printf '\x00{"text":"a","profile":"s2t","n":1e400,"m":123456789012345678901234567890}' >"$s/api/huge-numbers"
printf '\x01{"text":"a","text":7}' >"$s/api/duplicate"
deep() { printf "\\x$(printf %02x "$1")"'{"text":"头发","profile":"s2t","d":'
         printf '[%.0s' $(seq "$2"); printf '1'; printf ']%.0s' $(seq "$2"); printf '}'; }
deep 0 500 >"$s/api/deep"
deep 1 5000 >"$s/api/too-deep"

# An EPUB seed, put together with zip as the format wants.
b=$out/book
rm -rf "$b"
mkdir -p "$b/META-INF" "$b/OEBPS"
printf 'application/epub+zip' >"$b/mimetype"
cat >"$b/META-INF/container.xml" <<'X'
<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>
X
cat >"$b/OEBPS/content.opf" <<'X'
<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">x</dc:identifier><dc:title>头发</dc:title><dc:language>zh-CN</dc:language></metadata><manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/><item id="n" href="toc.ncx" media-type="application/x-dtbncx+xml"/><item id="s" href="s.css" media-type="text/css"/></manifest><spine toc="n"><itemref idref="c"/></spine></package>
X
cat >"$b/OEBPS/c.xhtml" <<'X'
<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh-CN"><head><title>一</title></head><body><p>头发干了</p></body></html>
X
cat >"$b/OEBPS/toc.ncx" <<'X'
<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><docTitle><text>头发</text></docTitle><navMap><navPoint id="a"><navLabel><text>一</text></navLabel><content src="c.xhtml"/></navPoint></navMap></ncx>
X
printf 'p{}' >"$b/OEBPS/s.css"
if command -v zip >/dev/null; then
    (cd "$b" && rm -f "$s/epub/book.epub" && zip -q -X0 "$s/epub/book.epub" mimetype &&
        zip -q -X9r "$s/epub/book.epub" META-INF OEBPS)
    (cd "$b" && zip -q -X0 "$s/epub/stored.epub" mimetype META-INF/container.xml OEBPS/*)
fi
printf 'PK\x03\x04' >"$s/epub/header-only"

rm -rf "$out/seeds"
mv "$s" "$out/seeds"
echo "fuzz/seeds.sh: seeds in $out/seeds ($(find "$out/seeds" -type f | wc -l) files), image $out/mini.fjd"
