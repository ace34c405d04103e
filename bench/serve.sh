#!/usr/bin/env bash
# Load on `fanjian serve`: wrk POSTs a ~2 KB Simplified excerpt to
# /v1/convert (s2tw, default mode) over 64 connections, bench/serve.lua
# checks every answer against the CLI's conversion, and the server's RSS is
# sampled each second. Prints one Markdown section on stdout (progress on
# stderr); exits 1 when an answer was wrong or not 2xx.
#
# A long run is a soak: is anything leaking under load? It samples the
# server's open file descriptors each second too, and reports them beside
# RSS, with both each minute.
#
#   bench/serve.sh SERVER_BIN [DICT]
#
# SERVER_BIN is the fanjian CLI; DICT defaults to fanjian.fjd beside it.
# The excerpt comes from $BENCH_CACHE/corpus.txt (bench/make-corpus.sh;
# default build/bench-cache) when it exists, else from a text below.
# Knobs (environment):
#   SERVE_SECONDS      length of the run (30)
#   SERVE_CONNECTIONS  wrk's connections (64)
#   SERVE_THREADS      server worker threads (default: the server's, one per core)
#   SERVE_SOAK         1: soak report (fds, each minute); default 1 when
#                      SERVE_SECONDS is 300 or more
set -euo pipefail
export LC_ALL=C

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 SERVER_BIN [DICT]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
seconds=${SERVE_SECONDS:-30}
conns=${SERVE_CONNECTIONS:-64}
soak=${SERVE_SOAK:-$([ "$seconds" -ge 300 ] && echo 1 || echo 0)}
progress() { echo "bench serve: $*" >&2; }
for tool in wrk curl python3; do
    command -v "$tool" >/dev/null || { echo "bench serve: $tool is not installed (scripts/install-deps.sh)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/fanjian-serve-bench.XXXXXX")
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Snapshot the binary and the dictionary: build/ may be rebuilt meanwhile.
mkdir "$work/bin"
cp "$1" "$work/bin/fanjian"
cp "${2:-$(dirname "$1")/fanjian.fjd}" "$work/bin/fanjian.fjd"
bin=$work/bin/fanjian

# ---- the text: whole lines, about 2 KB -----------------------------------------
corpus=${BENCH_CACHE:-$root/build/bench-cache}/corpus.txt
if [ -r "$corpus" ]; then
    # From line 20,000 on: past the first packages' short UI strings.
    awk 'NR >= 20000 && length($0) > 30 { print; n += length($0) + 1; if (n >= 2048) exit }' "$corpus" >"$work/text.txt"
    source_note="the first lines from line 20,000 of \`corpus.txt\` (bench/make-corpus.sh) longer than 30 bytes"
else
    cat >"$work/text.txt" <<'EOF'
第一章 雨夜
那天晚上的雨下得很大，街上只有几盏路灯还亮着。林远把伞收起来，站在书店门口抖了抖衣服上的水，头发干了又湿，湿了又干，他早就不在乎了。
书店里面很安静，老板正坐在柜台后面打印一份长长的清单，打印机吱吱地响着，纸一张一张地吐出来。见他进来，老板抬起头笑了笑：“这么晚还来？”
“我来取上个月订的那套书。”林远说，“听说已经到了。”
老板点点头，转身走进后面的仓库。过了一会儿，他抱着一个旧纸箱出来，箱子上落满了灰。里面是十二本线装的地方志，每一本的封面都用毛笔写着书名和年份。
林远小心地翻开第一本，纸张发黄，却一点也没有破损。他一页一页地看下去，发现其中夹着一封没有寄出的信，信封上的邮票已经褪了色。
“这封信是谁的？”他问。
老板摇摇头：“我收这批书的时候就在里面了。卖书的人说，是他祖父留下来的，别的什么也不知道。”
林远犹豫了一下，把信放回原处。他付了钱，把纸箱抱在怀里，重新走进雨里。回家的路上，他一直在想，那封信里写的会是什么，写信的人后来又去了哪里。
第二天早上，雨停了。林远泡了一杯茶，坐在窗前，终于决定打开那封信。
信纸只有薄薄的两页，字迹却很工整。写信的人说，他要去南方的一个小镇教书，那里没有电灯，也没有像样的学校，只有一间借来的祠堂和二十几个孩子。他请收信的人不要担心，等到秋天收完了庄稼，他就回来。
林远读完，把信纸叠好，放回信封里。他打开电脑，查了查那个小镇的名字，发现它如今已经是一座热闹的县城了，县里最老的那所中学，正是在一间祠堂里办起来的。
EOF
    source_note="a text of our own in \`bench/serve.sh\` (no \`corpus.txt\` in the bench cache)"
fi
text_bytes=$(wc -c <"$work/text.txt")
text_chars=$(python3 -c 'import sys; print(len(open(sys.argv[1], encoding="utf-8").read()))' "$work/text.txt")

# The request, and the beginning every answer must have: the CLI's conversion.
"$bin" -c s2tw "$work/text.txt" >"$work/expected.txt"
python3 - "$work/text.txt" "$work/expected.txt" "$work/body.json" "$work/expect.json" <<'PY'
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
want = open(sys.argv[2], encoding="utf-8").read()
open(sys.argv[3], "w", encoding="utf-8").write(json.dumps({"text": text, "profile": "s2tw"}, ensure_ascii=False))
# The server escapes as json.dumps does (for text without \b or \f, which it writes as \u00XX).
open(sys.argv[4], "w", encoding="utf-8").write(
    '{"text":' + json.dumps(want, ensure_ascii=False) + ',"profile":"s2tw",')
PY

# ---- the server ---------------------------------------------------------------
threads_opt=()
if [ -n "${SERVE_THREADS:-}" ]; then threads_opt=(--threads "$SERVE_THREADS"); fi
"$bin" serve --listen 127.0.0.1:0 "${threads_opt[@]}" 2>"$work/server.err" &
server_pid=$!
addr=
for _ in $(seq 1 300); do
    addr=$(sed -n 's|^fanjian: serving on http://\(.*\)/$|\1|p' "$work/server.err" 2>/dev/null)
    [ -n "$addr" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$addr" ]; then
    echo "bench serve: the server did not start: $(head -n 3 "$work/server.err")" >&2
    exit 1
fi
url=http://$addr/v1/convert
# One request by hand first: the same check as the Lua script's.
curl -sS -H 'Content-Type: application/json' --data-binary @"$work/body.json" "$url" >"$work/first.json"
if [ "$(head -c "$(wc -c <"$work/expect.json")" "$work/first.json")" != "$(cat "$work/expect.json")" ]; then
    echo "bench serve: the server's answer differs from the CLI's: $(head -c 300 "$work/first.json")" >&2
    exit 1
fi
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status"; }
# Open file descriptors: listening socket, connections, the threads' epoll
# and wake-up descriptors, the standard three.
fds() {
    local f=(/proc/"$server_pid"/fd/*)
    echo "${#f[@]}"
}
rss_idle=$(rss)
fds_idle=$(fds)

# ---- the load, with the server's RSS (and in a soak its fds) each second -------------
progress "wrk -t2 -c$conns -d${seconds}s on $url ($text_bytes-byte body)"
SERVE_BODY=$work/body.json SERVE_EXPECT=$work/expect.json \
    wrk -t2 -c"$conns" -d"${seconds}s" --latency -s "$here/serve.lua" "$url" >"$work/wrk.out" 2>&1 &
wrk_pid=$!
load_start=$(cut -d' ' -f1 /proc/loadavg)
: >"$work/rss.log"
t=0
while kill -0 "$wrk_pid" 2>/dev/null; do
    if [ "$soak" = 1 ]; then
        echo "$t $(rss) $(fds)" >>"$work/rss.log"
    else
        echo "$t $(rss)" >>"$work/rss.log"
    fi
    sleep 1
    t=$((t + 1))
done
wait "$wrk_pid" || { echo "bench serve: wrk failed: $(tail -n 5 "$work/wrk.out")" >&2; exit 1; }
# In a soak, "after load" is 2 s on: time for the server to see wrk's
# connections close, so that they do not count as kept.
if [ "$soak" = 1 ]; then sleep 2; fi
rss_final=$(rss)
fds_final=$(fds)
load_end=$(cut -d' ' -f1 /proc/loadavg)

# ---- the report -----------------------------------------------------------------
val() { sed -n "s/^fjbench $1 //p" "$work/wrk.out" | head -n 1; }
requests=$(val requests)
duration_us=$(val duration_us)
mismatches=$(val mismatches)
non2xx=$(val non2xx)
socket_errors=$(val socket_errors)
if [ -z "$requests" ] || [ -z "$mismatches" ]; then
    echo "bench serve: no summary from wrk:" >&2
    cat "$work/wrk.out" >&2
    exit 1
fi
ms() { awk -v us="$1" 'BEGIN { printf "%.2f ms", us / 1000 }'; }
mib() { awk -v kb="$1" 'BEGIN { printf "%.1f MiB", kb / 1024 }'; }
rss_at() { awk -v t="$1" '$1 == t { print $2; exit }' "$work/rss.log"; }
rss_start=$(rss_at 0)
rss_5=$(rss_at 5)
rss_end=$(tail -n 1 "$work/rss.log" | awk '{ print $2 }')
rss_peak=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }' "$work/rss.log")
server_threads=${SERVE_THREADS:-$(nproc) (one per core)}
if [ "$soak" = 1 ]; then
    fds_start=$(awk '$1 == 0 { print $3; exit }' "$work/rss.log")
    fds_5=$(awk '$1 == 5 { print $3; exit }' "$work/rss.log")
    fds_end=$(tail -n 1 "$work/rss.log" | awk '{ print $3 }')
    fds_peak=$(awk 'BEGIN { m = 0 } $3 > m { m = $3 } END { print m }' "$work/rss.log")
fi

echo "## HTTP service (\`fanjian serve\`)"
echo
echo "\`wrk -t2 -c$conns -d${seconds}s --latency -s bench/serve.lua\` POSTs one JSON body to"
echo "\`/v1/convert\` (s2tw, default mode): $text_bytes bytes ($text_chars characters) of Simplified text,"
echo "$source_note. Every answer is checked against the CLI's conversion of the same text."
echo "Server threads: $server_threads; wrk runs on the same $(nproc)-core machine. Load average"
echo "$load_start at the start and $load_end at the end; the run itself adds about 3 (wrk's threads"
echo "and the server's), and more than that is other work sharing the machine."
echo
echo "| requests/s | p50 latency | p99 latency | max latency | requests | mismatches | non-2xx | socket errors |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' \
    "$(awk -v n="$requests" -v us="$duration_us" 'BEGIN { printf "%.0f", n / (us / 1e6) }')" \
    "$(ms "$(val p50_us)")" "$(ms "$(val p99_us)")" "$(ms "$(val max_us)")" \
    "$requests" "$mismatches" "$non2xx" "$socket_errors"
echo
if [ "$soak" = 1 ]; then
    echo "| server | idle | start of load | after 5 s | end of load | max during load | after load |"
else
    echo "| server RSS | idle | start of load | after 5 s | end of load | peak during load | after load |"
fi
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
printf '| VmRSS | %s | %s | %s | %s | %s | %s |\n' "$(mib "$rss_idle")" "$(mib "$rss_start")" \
    "$(mib "${rss_5:-0}")" "$(mib "$rss_end")" "$(mib "$rss_peak")" "$(mib "$rss_final")"
if [ "$soak" = 1 ]; then
    printf '| open fds | %s | %s | %s | %s | %s | %s |\n' "$fds_idle" "$fds_start" "${fds_5:-?}" \
        "$fds_end" "$fds_peak" "$fds_final"
    col() { awk -v t="$1" -v c="$2" '$1 == t { print $c; exit }' "$work/rss.log"; }
    last=$(tail -n 1 "$work/rss.log" | awk '{ print $1 }')
    echo
    echo "Soak: the server's VmRSS and open file descriptors each minute of the load (sampled"
    echo "each second). During load the descriptors include wrk's $conns connections; idle and"
    echo "after load (2 s after wrk exits) wrk has none open."
    echo
    echo "| time | VmRSS | open fds |"
    echo "| ---: | ---: | ---: |"
    for t in $(seq 0 60 "$last") $([ $((last % 60)) != 0 ] && echo "$last"); do
        printf '| %d s | %s | %s |\n' "$t" "$(mib "$(col "$t" 2)")" "$(col "$t" 3)"
    done
    # Past warm-up (5 s) to the end: what a leak would add.
    rss_min=$(awk '$1 >= 5 && (m == "" || $2 < m) { m = $2 } END { print m + 0 }' "$work/rss.log")
    echo
    printf 'From 5 s to the end of load VmRSS went from %s to %s (lowest %s, highest %s);\n' \
        "$(mib "${rss_5:-0}")" "$(mib "$rss_end")" "$(mib "$rss_min")" "$(mib "$rss_peak")"
    printf 'open fds were %s idle, between %s and %s during load, and %s after load.\n' \
        "$fds_idle" "$(awk '(m == "" || $3 < m) { m = $3 } END { print m }' "$work/rss.log")" \
        "$fds_peak" "$fds_final"
fi
first_bad=$(val first_bad)
if [ -n "$first_bad" ]; then
    echo
    echo "First wrong answer: \`$first_bad\`"
fi
if [ "$mismatches" != 0 ] || [ "$non2xx" != 0 ]; then
    exit 1
fi
