#!/usr/bin/env bash
# Throughput and memory of fanjian against OpenCC's CLI on the same corpus.
#
#   bench/run.sh FANJIAN_BIN CORPUS
#   bench/run.sh FANJIAN_BIN   # builds/reuses $BENCH_CACHE/corpus.txt first
#
# For each profile: FANJIAN_BIN -c PROFILE -i CORPUS -o OUT and
# opencc -c PROFILE.json -i CORPUS -o OUT, both writing real files next to
# the corpus (deleted afterwards). Prints a Markdown report on stdout.
# Knobs (environment):
#   FANJIAN_RUNS  timed runs per profile for fanjian, median reported (3)
#   OPENCC_RUNS   same for OpenCC, which is slow (1)
#   OPEN_RUNS     runs of the one-line "open time" test (20)
#   PROFILES      profiles to run ("s2t t2s s2tw s2twp")
#   PIN_CPU       core to pin both tools to with taskset; empty: no pinning (0)
#   BENCH_CACHE   cache dir for the one-argument form (build/bench-cache)
#   TRAD_CORPUS   input of the profiles that read Traditional text (t2s, tw2s,
#                 hk2s, t2tw, ...): default CORPUS.trad if it exists, else CORPUS
#   BENCH_RESULTS if set, a file to append machine-readable results to (for
#                 bench/report.sh), one line per profile:
#                   cli PROFILE INPUT_BYTES FANJIAN_MBPS FANJIAN_RSS_KB OPENCC_MBPS OPENCC_RSS_KB IDENTICAL
#                 and one for the open time: open FANJIAN_MS OPENCC_MS
set -euo pipefail
export LC_ALL=C

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 FANJIAN_BIN [CORPUS]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 1 ]; then
    # No corpus given (plain `make bench`): build or reuse the cached one.
    cache=${BENCH_CACHE:-$here/../build/bench-cache}
    "$here/make-corpus.sh" "$cache" "$cache/corpus.txt" >&2
    set -- "$1" "$cache/corpus.txt"
fi
fanjian=$1
corpus=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
FANJIAN_RUNS=${FANJIAN_RUNS:-3}
OPENCC_RUNS=${OPENCC_RUNS:-1}
OPEN_RUNS=${OPEN_RUNS:-20}
PROFILES=${PROFILES:-s2t t2s s2tw s2twp}
PIN_CPU=${PIN_CPU-0}

case $fanjian in */*) fanjian=$(cd "$(dirname "$fanjian")" && pwd)/$(basename "$fanjian") ;; esac
if ! command -v "$fanjian" >/dev/null; then
    echo "run.sh: $1: not found or not executable" >&2
    exit 1
fi
[ -r "$corpus" ] || { echo "run.sh: $2: no such corpus" >&2; exit 1; }
trad=${TRAD_CORPUS:-$corpus.trad}
[ -r "$trad" ] || trad=$corpus
trad=$(cd "$(dirname "$trad")" && pwd)/$(basename "$trad")
# input_of PROFILE: Simplified-source profiles read the whole (mostly
# Simplified) corpus, Traditional-source ones its Traditional part.
input_of() { case $1 in t2* | tw2* | hk2*) echo "$trad" ;; *) echo "$corpus" ;; esac; }

# Tools from Debian: OpenCC 1.1.6 (package opencc) and GNU time for peak RSS.
need=()
command -v opencc >/dev/null || need+=(opencc)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi
opencc_version=$(dpkg-query -W -f '${Version}' opencc 2>/dev/null || echo unknown)

pin=()
if [ -n "$PIN_CPU" ] && command -v taskset >/dev/null; then
    # Both tools are single-threaded; one fixed core removes migration noise.
    pin=(taskset -c "$PIN_CPU")
fi

# Scratch files live next to the corpus (the cache dir), not in /dev/null:
# writing the output is part of the work being measured.
work=$(mktemp -d "$(dirname "$corpus")/bench-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
# OpenCC looks for -c FILE in the current directory first: keep it empty.
cd "$work"

# timed OUT_PREFIX CMD...: runs CMD under GNU time; appends "seconds rss_kb"
# to OUT_PREFIX.times. Wall time comes from bash's microsecond clock.
timed() {
    local prefix=$1 t0 t1 rc=0
    shift
    # Flush earlier runs' dirty pages first, so that writeback of one run's
    # output does not slow the next.
    sync
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$prefix.rss" "$@" 2>"$prefix.err" || rc=$?
    t1=$EPOCHREALTIME
    if [ $rc -ne 0 ]; then
        echo "run.sh: command failed (exit $rc): $*" >&2
        sed 's/^/  /' "$prefix.err" >&2
        exit 1
    fi
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f", b - a}') $(tail -n 1 "$prefix.rss")" >>"$prefix.times"
}

# median of column 1 (seconds) and max of column 2 (KB) of a .times file
median_s() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
max_kb() { sort -k2,2g "$1" | tail -n 1 | awk '{print $2}'; }

cat "$corpus" "$trad" >/dev/null # page cache: every run reads its input from RAM
describe() { echo "\`$1\`, $(stat -c %s "$1") bytes ($(awk -v b="$(stat -c %s "$1")" 'BEGIN {printf "%.1f", b / 1e6}') MB), $(wc -l <"$1") lines"; }

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
echo "## fanjian vs OpenCC $opencc_version"
echo
echo "- CPU: ${cpu:-unknown} ($(nproc) cores online)${pin:+; both tools pinned with \`${pin[*]}\`}"
echo "- corpus: $(describe "$corpus")"
[ "$trad" = "$corpus" ] || echo "- Traditional part (input of t2s-like profiles): $(describe "$trad")"
echo "- runs: fanjian median of $FANJIAN_RUNS, OpenCC median of $OPENCC_RUNS; MB/s = input bytes / 1e6 / wall seconds"
echo "- commands:"
for p in $PROFILES; do
    echo "  - \`${pin[*]:+${pin[*]} }$fanjian --compat -j 1 -c $p -i $(input_of "$p") -o OUT\`"
    echo "  - \`${pin[*]:+${pin[*]} }opencc -c $p.json -i $(input_of "$p") -o OUT\`"
done
echo

rows=()
replace_rows=()
for p in $PROFILES; do
    in=$(input_of "$p")
    bytes=$(stat -c %s "$in")
    echo "run.sh: $p: fanjian x$FANJIAN_RUNS, OpenCC x$OPENCC_RUNS" >&2
    # Every run writes a new file, as a first run does: the previous run's
    # output goes first, untimed. (Replacing an existing file costs fanjian's
    # atomic rename more: ext4 then starts writing the new data back at once.
    # Table 1b measures that case.)
    for ((i = 0; i < FANJIAN_RUNS; i++)); do
        rm -f "$work/f-$p.out"
        timed "$work/f-$p" "${pin[@]}" "$fanjian" --compat -j 1 -c "$p" -i "$in" -o "$work/f-$p.out"
    done
    for ((i = 0; i < OPENCC_RUNS; i++)); do
        rm -f "$work/o-$p.out"
        timed "$work/o-$p" "${pin[@]}" opencc -c "$p.json" -i "$in" -o "$work/o-$p.out"
    done
    # The same command onto the output it just wrote (fanjian only).
    for ((i = 0; i < FANJIAN_RUNS; i++)); do
        timed "$work/r-$p" "${pin[@]}" "$fanjian" --compat -j 1 -c "$p" -i "$in" -o "$work/f-$p.out"
    done
    fs=$(median_s "$work/f-$p.times")
    os=$(median_s "$work/o-$p.times")
    # Drop-in check: byte-identical output, else how many lines differ
    # (both tools keep line structure, so lines pair up).
    if cmp -s "$work/f-$p.out" "$work/o-$p.out"; then
        same=yes
    else
        same=$(awk -v other="$work/o-$p.out" '{ if ((getline l <other) <= 0 || l != $0) { n++; if (!first) first = NR } }
            END { printf "no: %d of %d lines differ (first: line %d)", n, NR, first }' "$work/f-$p.out")
    fi
    if [ -n "${BENCH_RESULTS:-}" ]; then
        awk -v p="$p" -v b="$bytes" -v fs="$fs" -v os="$os" -v fk="$(max_kb "$work/f-$p.times")" \
            -v ok="$(max_kb "$work/o-$p.times")" -v same="${same%%:*}" 'BEGIN {
            printf "cli %s %d %.3f %d %.3f %d %s\n", p, b, b / 1e6 / fs, fk, b / 1e6 / os, ok, same }' >>"$BENCH_RESULTS"
    fi
    rows+=("$(awk -v p="$p" -v src="$([ "$in" = "$corpus" ] && echo corpus || echo Traditional part)" -v b="$bytes" -v fs="$fs" -v os="$os" -v fk="$(max_kb "$work/f-$p.times")" \
        -v ok="$(max_kb "$work/o-$p.times")" -v same="$same" 'BEGIN {
        printf "| %s | %s, %.1f MB | %.1f | %.1f | %.1f | %.1f | %.1fx | %s |", p, src, b / 1e6, b / 1e6 / fs, fk / 1024,
            b / 1e6 / os, ok / 1024, os / fs, same }')")
    replace_rows+=("$(awk -v p="$p" -v b="$bytes" -v rs="$(median_s "$work/r-$p.times")" -v fs="$fs" -v os="$os" 'BEGIN {
        printf "| %s | %.1f | %.1f | %.1fx |", p, b / 1e6 / rs, b / 1e6 / fs, os / rs }')")
    rm -f "$work/f-$p.out" "$work/o-$p.out"
done

echo "| profile | input | fanjian MB/s | fanjian peak RSS MB | OpenCC $opencc_version MB/s | OpenCC peak RSS MB | speed ratio (CLI vs CLI) | output identical to OpenCC |"
echo "|---|---|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
echo
echo "fanjian's \`-o\` replaces OUT atomically (temporary file, then rename); like OpenCC it does not fsync unless asked (\`--fsync\`)."
echo "Each run above writes a new file (the previous run's output is removed first, untimed), as OpenCC's run does."
echo
echo "### 1b. Onto an existing output"
echo
echo "The same fanjian command run again onto the output it just wrote (median of $FANJIAN_RUNS): the rename then replaces a file whose data is on disk, and ext4 starts writing the new data back at once (its replace-by-rename safeguard). OpenCC writes in place and is not run this way."
echo
echo "| profile | fanjian MB/s onto an existing file | onto a new file (table 1) | ratio to OpenCC's CLI |"
echo "|---|---:|---:|---:|"
printf '%s\n' "${replace_rows[@]}"
echo

# Open time: whole-process wall time on a one-line input, dominated by
# loading the dictionaries.
printf '%s\n' '简体中文转换为繁体中文的启动时间测试。' >"$work/one.txt"
echo "run.sh: open time, $OPEN_RUNS whole-process runs of each tool" >&2
for ((i = 0; i < OPEN_RUNS; i++)); do
    timed "$work/open-f" "${pin[@]}" "$fanjian" --compat -c s2t -i "$work/one.txt" -o "$work/one-f.out"
    timed "$work/open-o" "${pin[@]}" opencc -c s2t.json -i "$work/one.txt" -o "$work/one-o.out"
done
awk -v f="$(median_s "$work/open-f.times")" -v o="$(median_s "$work/open-o.times")" -v n="$OPEN_RUNS" 'BEGIN {
    printf "Open time (s2t, one-line input, median of %d whole-process runs): fanjian %.1f ms, OpenCC %.1f ms\n",
        n, f * 1000, o * 1000 }'
if [ -n "${BENCH_RESULTS:-}" ]; then
    echo "open $(median_s "$work/open-f.times") $(median_s "$work/open-o.times")" |
        awk '{printf "open %.3f %.3f\n", $2 * 1000, $3 * 1000}' >>"$BENCH_RESULTS"
fi
