#!/usr/bin/env bash
# Tree mode on many files: one worker thread against one per core.
#
#   bench/batch.sh FANJIAN CORPUS WORKDIR [FILES]
#
# Splits CORPUS at line boundaries into FILES (default 2000) chapter-sized
# files, then times `fanjian -c s2tw -r DIR -o OUT` with -j 1 and with -j N
# (N = online cores), RUNS times each (default 5, in turn), and prints a Markdown
# section with the median wall times and their ratio. The outputs of the
# two runs are compared file by file.
set -euo pipefail
export LC_ALL=C
fj=$1 corpus=$2 work=$3 files=${4:-2000}
RUNS=${RUNS:-5}
cores=$(nproc)
tree=$work/batch-in
if [ ! -f "$work/.batch-done-$files" ] || [ "$work/.batch-done-$files" -ot "$corpus" ]; then
    rm -rf "$tree"
    mkdir -p "$tree"
    # Chapters in volumes of 100, as downloaded novels come.
    split -n "l/$files" -d -a 5 --additional-suffix=.txt "$corpus" "$tree/ch"
    for f in "$tree"/ch*.txt; do
        n=${f##*/ch}
        n=$((10#${n%.txt}))
        v=$(printf 'vol%03d' $((n / 100)))
        mkdir -p "$tree/$v"
        mv "$f" "$tree/$v/"
    done
    touch "$work/.batch-done-$files"
fi
bytes=$(du -cb "$tree"/vol*/ | tail -n 1 | cut -f1)
count=$(find "$tree" -name '*.txt' | wc -l)

# one_run WHERE J: wall seconds of one run with -j J, tree in WHERE
one_run() {
    local where=$1 j=$2
    rm -rf "$where/out-$j"
    sync
    local t0=$EPOCHREALTIME
    "$fj" -c s2tw -r "$where/in" -o "$where/out-$j" -j "$j" --no-progress 2>"$where/log-$j"
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.4f\n", b - a}'
}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "## Tree mode: $count files (issue 5)"
echo
echo "\`fanjian -c s2tw -r DIR -o OUT -j J --no-progress\` on the corpus split at line boundaries into $count files in volumes of 100 ($(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1e6}') MB, $(awk -v b="$bytes" -v n="$count" 'BEGIN {printf "%.0f", b / n / 1e3}') kB per file), output to a fresh directory after \`sync\`; median wall time of $RUNS runs. In memory (tmpfs), the figure is fanjian's own; on this VM's disk, creating 2,000 files and the kernel's writeback of the previous run weigh as much as the conversion and vary from run to run."
echo
echo "| tree on | threads | wall s | MB/s | speed-up | outputs identical |"
echo "|---|---|---|---|---|---|"
speedup=
for place in memory disk; do
    if [ "$place" = memory ]; then
        [ -d /dev/shm ] && [ -w /dev/shm ] || continue
        where=$(mktemp -d /dev/shm/fanjian-batch.XXXXXX)
    else
        where=$(mktemp -d "$work/batch-disk.XXXXXX")
    fi
    cp -r "$tree" "$where/in"
    # One thread and all cores in turn, so that both meet the same
    # machine: this VM's speed drifts by a fifth over minutes.
    : >"$where/times-1"
    : >"$where/times-n"
    for ((i = 0; i < RUNS; i++)); do
        one_run "$where" 1 >>"$where/times-1"
        one_run "$where" "$cores" >>"$where/times-n"
    done
    t1=$(median <"$where/times-1")
    tn=$(median <"$where/times-n")
    same=yes
    diff -r -q "$where/out-1" "$where/out-$cores" >/dev/null || same=no
    x=$(awk -v t1="$t1" -v tn="$tn" 'BEGIN {printf "%.2f", t1 / tn}')
    [ -n "$speedup" ] || speedup=$x
    awk -v t1="$t1" -v tn="$tn" -v n="$cores" -v b="$bytes" -v p="$place" -v x="$x" -v same="$same" 'BEGIN {
        printf "| %s | 1 | %.3f | %.1f | 1.00x | |\n", p, t1, b / 1e6 / t1
        printf "| %s | %d | %.3f | %.1f | %sx | %s |\n", p, n, tn, b / 1e6 / tn, x, same
    }'
    summary1=$(tail -n 1 "$where/log-1")
    summaryn=$(tail -n 1 "$where/log-$cores")
    rm -rf "$where"
done
echo
echo "Last summary lines: \`$summary1\` / \`$summaryn\`"
echo "BATCH_SPEEDUP $speedup" >&2
