#!/usr/bin/env bash
# Scale: memory stays flat however large the input (issue 7).
#
#   bench/scale.sh FANJIAN CORPUS [GB]
#
# 1. GB (default 5) gigabytes of real text (the corpus, repeated) through a
#    pipe: `cat ... | fanjian -c s2t | wc -c`, in the default mode and in
#    --compat; peak RSS from /usr/bin/time, and the RSS sampled every
#    second, to show it does not grow.
# 2. One line of 1 GB: the corpus repeated with its newlines removed.
# Prints a Markdown section. Nothing is written to disk.
set -euo pipefail
export LC_ALL=C
fj=$1 corpus=$2 gb=${3:-5}
csize=$(stat -c %s "$corpus")
copies=$(( (gb * 1000000000 + csize - 1) / csize ))
line_copies=$(( (1000000000 + csize - 1) / csize ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME MODE COPIES FILTER: streams COPIES copies of the corpus through
# FILTER (cat or tr -d '\n') into fanjian; samples its RSS every second.
run() {
    local name=$1 mode=$2 n=$3 filter=$4
    local t0=$EPOCHREALTIME
    rm -f "$work/time.pid"
    { for ((i = 0; i < n; i++)); do cat "$corpus"; done | $filter |
        sh -c 'echo $$ >"$0"; exec "$@"' "$work/time.pid" \
            /usr/bin/time -f '%M' -o "$work/$name.peak" "$fj" $mode -c s2t | wc -c >"$work/$name.bytes"; } &
    local pid=$!
    : >"$work/$name.rss"
    sleep 1
    # fanjian is the child of /usr/bin/time, whose pid the wrapper wrote.
    local fj_pid
    fj_pid=$(pgrep -P "$(cat "$work/time.pid")" || true)
    while [ -n "$fj_pid" ] && kill -0 "$fj_pid" 2>/dev/null; do
        awk '/^VmRSS/ {print $2}' "/proc/$fj_pid/status" >>"$work/$name.rss" 2>/dev/null || true
        sleep 1
    done
    wait "$pid"
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}' >"$work/$name.secs"
}
row() {
    local name=$1 what=$2 in=$3
    local peak secs first last n
    peak=$(awk '{printf "%.1f", $1 / 1024}' "$work/$name.peak")
    secs=$(cat "$work/$name.secs")
    n=$(wc -l <"$work/$name.rss")
    first=$(sort -n "$work/$name.rss" | head -n 1 | awk '{printf "%.1f", $1 / 1024}')
    last=$(sort -n "$work/$name.rss" | tail -n 1 | awk '{printf "%.1f", $1 / 1024}')
    printf '| %s | %s | %s | %s | %s s | %s MB | %s–%s MB (%s samples) |\n' "$what" \
        "$(awk -v b="$in" 'BEGIN {printf "%.2f GB", b / 1e9}')" \
        "$(awk -v b="$(cat "$work/$name.bytes")" 'BEGIN {printf "%.2f GB", b / 1e9}')" \
        "$(awk -v b="$in" -v s="$secs" 'BEGIN {printf "%.0f MB/s", b / 1e6 / s}')" "$secs" "$peak" "$first" "$last" "$n"
}
run big-default "" "$copies" cat
run big-compat --compat "$copies" cat
run line-default "" "$line_copies" "tr -d \\n"
echo "## Scale: memory stays flat (issue 7)"
echo
echo "\`bench/scale.sh $fj $corpus $gb\`: the corpus ($(awk -v b="$csize" 'BEGIN {printf "%.1f MB", b / 1e6}'), real text) repeated and piped through \`fanjian -c s2t\` into \`wc -c\`, nothing on disk. Peak RSS from \`/usr/bin/time -f %M\`; RSS sampled once a second (lowest and highest sample shown)."
echo
echo "| input | in | out | speed | time | peak RSS | RSS during the run |"
echo "|---|---|---|---|---|---|---|"
row big-default "$copies copies, default mode" $((copies * csize))
row big-compat "$copies copies, --compat" $((copies * csize))
nl=$(tr -cd '\n' <"$corpus" | wc -c)
row line-default "one line ($line_copies copies without newlines), default mode" $((line_copies * (csize - nl)))
