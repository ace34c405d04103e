#!/usr/bin/env bash
# The whole `make bench` report: one Markdown document on stdout, also saved
# to REPORT_MD.
#
#   bench/report.sh FANJIAN_BIN THROUGHPUT_BIN DICT REPORT_MD
#
# Sections: the CLI table from run.sh (fanjian CLI vs OpenCC CLI), the
# library's in-memory throughput (bench/throughput.c) next to OpenCC's CLI
# figures from the same run, open time, peak memory on a >= 1 GiB file, and
# tree mode on 2,000 files with one thread and with one per core (batch.sh),
# and the HTTP service under wrk (serve.sh).
# Progress goes to stderr.
# Knobs (environment), besides run.sh's (FANJIAN_RUNS, OPENCC_RUNS,
# OPEN_RUNS, PROFILES, PIN_CPU, BENCH_CACHE):
#   LIB_RUNS    timed in-memory passes per profile, median reported (5)
#   PHRASE_ROUNDS  rounds of table 2c's four converters, run in turn (3)
#   BIG_BYTES   minimum size of the big file (1073741824 = 1 GiB)
#   BIG_RUNS    runs of each big-file command, median reported (3)
#   BENCH_CMD   how this was invoked, for the report's first line
set -euo pipefail
export LC_ALL=C

if [ $# -ne 4 ]; then
    echo "usage: $0 FANJIAN_BIN THROUGHPUT_BIN DICT REPORT_MD" >&2
    exit 2
fi
start=$EPOCHREALTIME
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
fanjian_src=$(abs "$1")
tp_src=$(abs "$2")
dict_src=$(abs "$3")
report=$(abs "$4")
cache=$(mkdir -p "${BENCH_CACHE:-$root/build/bench-cache}" && cd "${BENCH_CACHE:-$root/build/bench-cache}" && pwd)
export BENCH_CACHE=$cache
LIB_RUNS=${LIB_RUNS:-5}
PHRASE_ROUNDS=${PHRASE_ROUNDS:-3}
OPEN_RUNS=${OPEN_RUNS:-20}
BIG_BYTES=${BIG_BYTES:-1073741824}
BIG_RUNS=${BIG_RUNS:-3}
PROFILES=${PROFILES:-s2t t2s s2tw s2twp}
DEFAULT_PROFILES=${DEFAULT_PROFILES:-s2t s2tw t2s t2tw}
PIN_CPU=${PIN_CPU-0}
export OPEN_RUNS PROFILES PIN_CPU
progress() { echo "bench: $*" >&2; }

pin=()
other=()
if [ -n "$PIN_CPU" ] && command -v taskset >/dev/null; then
    pin=(taskset -c "$PIN_CPU")
    # The pipe test's `cat` gets the other core, so it does not compete
    # with fanjian for the pinned one.
    if [ "$(nproc)" -gt 1 ]; then other=(taskset -c "$((PIN_CPU == 0 ? 1 : 0))"); fi
fi

work=$(mktemp -d "$cache/report.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Snapshot the binaries and the dictionary: other people rebuild build/ while
# a benchmark runs, and every number here must come from the same build.
# The CLI finds fanjian.fjd next to itself.
mkdir "$work/bin"
cp "$fanjian_src" "$work/bin/fanjian"
cp "$dict_src" "$work/bin/fanjian.fjd"
cp "$tp_src" "$work/bin/throughput"
fanjian=$work/bin/fanjian
dict=$work/bin/fanjian.fjd
tp=$work/bin/throughput

progress "corpus"
"$here/make-corpus.sh" "$cache" "$cache/corpus.txt" >&2
corpus=$cache/corpus.txt
trad=$corpus.trad
input_of() { case $1 in t2* | tw2* | hk2*) echo "$trad" ;; *) echo "$corpus" ;; esac; }
mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1e6}'; }

out=$work/report.md
exec 3>"$out"
# r LINE...: one line of the report
r() { printf '%s\n' "$@" >&3; }

# ---- 5. header ------------------------------------------------------------
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
changed=$(git -C "$root" status --porcelain 2>/dev/null | awk 'NR <= 8 {print $2}' | paste -sd ' ' -)
if [ "$commit" = unknown ]; then
    tree="not a git checkout"
elif [ -n "$changed" ]; then
    tree="tree **dirty** (uncommitted: $changed)"
else
    tree="tree clean"
fi
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
load_start=$(cut -d' ' -f1 /proc/loadavg)
r "# fanjian benchmark"
r ""
r "\`${BENCH_CMD:-bench/report.sh $*}\` — $(date -u '+%Y-%m-%d %H:%M UTC') — ${cpu:-unknown CPU}, $(nproc) cores online — commit $commit, $tree"
r ""
r "Every tool runs single-threaded (fanjian with \`-j 1\`: by default a large file gets one thread per core, table 4b) and pinned to one core${pin:+ (\`${pin[*]}\`)}. MB/s = input bytes / 1e6 / wall seconds; RSS in MB = KiB / 1024."
r ""

# ---- 1. CLI vs CLI (run.sh) -------------------------------------------------
progress "CLI table: fanjian CLI vs OpenCC CLI (OpenCC takes ~30 s)"
results=$work/results.txt
: >"$results"
BENCH_RESULTS=$results "$here/run.sh" "$fanjian" "$corpus" >"$work/cli.md"
sed 's/^## /## 1. CLI: /' "$work/cli.md" >&3
r ""
if grep -q ' no$' "$results"; then
    # Not a bug in itself: the reference is a different OpenCC.
    r "Why outputs differ: fanjian reproduces OpenCC **1.4.2** (its dictionaries, normalization and regional phrase tables); Debian's \`opencc\` is 1.1.6, with older data. Byte-identity with 1.4.2 is what \`make check\` tests. OpenCC 1.1.6 is here as the speed baseline."
    r ""
fi
# field NAME PROFILE COLUMN: a number from run.sh's results
cli_field() { awk -v p="$1" -v c="$2" '$1 == "cli" && $2 == p {print $c}' "$results"; }

# ---- 2. library, in memory --------------------------------------------------
r "## 2. Library in memory vs OpenCC's CLI"
r ""
r "\`throughput --tsv DICT PROFILE INPUT $LIB_RUNS\` (bench/throughput.c, linked with libfanjian.a): the input is read into memory once, then \`fj_convert\` runs one untimed warm-up pass and $LIB_RUNS timed passes into a preallocated buffer; **median of $LIB_RUNS** (best in brackets). No file I/O, so this is the engine alone."
r ""
r "The ratio column divides this **library-in-memory** figure by **OpenCC's CLI** (file to file, from table 1, same run): it is not a CLI-vs-CLI ratio (that is table 1)."
r ""
r "| profile | input | library MB/s, median (best) | fanjian CLI MB/s (table 1) | OpenCC CLI MB/s (table 1) | library in memory ÷ OpenCC CLI | library output = CLI output |"
r "|---|---|---:|---:|---:|---:|---|"
for p in $PROFILES; do
    in=$(input_of "$p")
    progress "library: $p, warm-up + $LIB_RUNS passes"
    line=$("${pin[@]}" "$tp" --tsv "$dict" "$p" "$in" "$LIB_RUNS" "$work/lib.out")
    # The library must convert exactly like the CLI, or its speed means nothing.
    "${pin[@]}" "$fanjian" --compat -j 1 -c "$p" -i "$in" -o "$work/cli.out"
    same=$(cmp -s "$work/lib.out" "$work/cli.out" && echo yes || echo "**no**")
    rm -f "$work/lib.out" "$work/cli.out"
    read -r _ bytes _ best med _ <<<"$line"
    awk -v p="$p" -v src="$([ "$in" = "$corpus" ] && echo corpus || echo Traditional part)" -v b="$bytes" \
        -v best="$best" -v med="$med" -v fc="$(cli_field "$p" 4)" -v oc="$(cli_field "$p" 6)" -v same="$same" 'BEGIN {
        lib = b / 1e6 / med
        printf "| %s | %s, %.1f MB | %.1f (%.1f) | %.1f | %.1f | %.1fx | %s |\n",
            p, src, b / 1e6, lib, b / 1e6 / best, fc, oc, lib / oc, same }' >&3
    echo "$p $(awk -v b="$bytes" -v m="$med" 'BEGIN {printf "%.3f", b / 1e6 / m}')" >>"$work/lib.txt"
done
r ""
# The floor: the loop inside every per-character converter, alone.
progress "library: the per-character floor, warm-up + $LIB_RUNS passes"
read -r _ fbytes _ fbest fmed _ < <("${pin[@]}" "$tp" --floor --tsv "$dict" s2t "$corpus" "$LIB_RUNS")
floor_s2t=$(awk -v b="$fbytes" -v m="$fmed" 'BEGIN {printf "%.3f", b / 1e6 / m}')
r "For scale, the floor of any converter that decodes UTF-8 and looks each character up, on the same corpus, pinned the same way: \`throughput --floor --tsv DICT s2t INPUT $LIB_RUNS\` (one table load per character, ASCII eight bytes at a time, no phrases, no normalization; its output is s2t character by character, so it is no conversion) runs at **$(printf '%.1f' "$floor_s2t") MB/s** (best $(awk -v b="$fbytes" -v m="$fbest" 'BEGIN {printf "%.1f", b / 1e6 / m}')), and s2t above at $(awk -v a="$(awk '$1 == "s2t" {print $2}' "$work/lib.txt")" -v b="$floor_s2t" 'BEGIN {printf "%.0f", 100 * a / b}') % of it."
r ""

# ---- 2b. default mode (context model), library --------------------------------
r "## 2b. Default mode (context model), library in memory"
r ""
r "\`throughput --default --tsv DICT PROFILE INPUT $LIB_RUNS\`: as table 2, with the converter opened in the default mode (forms chosen from context). Same input, same method; the compatible figure is table 2's."
r ""
r "| profile | input | default mode MB/s, median (best) | compatible mode MB/s (table 2) | library output = CLI output |"
r "|---|---|---:|---:|---|"
for p in $DEFAULT_PROFILES; do
    in=$(input_of "$p")
    progress "library, default mode: $p, warm-up + $LIB_RUNS passes"
    line=$("${pin[@]}" "$tp" --default --tsv "$dict" "$p" "$in" "$LIB_RUNS" "$work/lib.out")
    "${pin[@]}" "$fanjian" -j 1 -c "$p" -i "$in" -o "$work/cli.out"
    same=$(cmp -s "$work/lib.out" "$work/cli.out" && echo yes || echo "**no**")
    rm -f "$work/lib.out" "$work/cli.out"
    read -r _ bytes _ best med _ <<<"$line"
    compat=$(awk -v p="$p" '$1 == p {printf "%.1f", $2}' "$work/lib.txt")
    awk -v p="$p" -v src="$([ "$in" = "$corpus" ] && echo corpus || echo Traditional part)" -v b="$bytes" \
        -v best="$best" -v med="$med" -v compat="${compat:-—}" -v same="$same" 'BEGIN {
        printf "| %s | %s, %.1f MB | %.1f (%.1f) | %s | %s |\n",
            p, src, b / 1e6, b / 1e6 / med, b / 1e6 / best, compat, same }' >&3
    echo "$p $(awk -v b="$bytes" -v m="$med" 'BEGIN {printf "%.3f", b / 1e6 / m}')" >>"$work/default.txt"
done
r ""

# ---- 2c. user phrases ----------------------------------------------------------
# Two lists of 1,000 entries from the corpus itself, each word mapped to
# itself reversed: "frequent", two- and three-character words taken at
# every 97th Han run (so common words are in it and match often), and
# "rare", three-character words seen at most twice in the corpus.
phr=$work/user-frequent.phrases
rare=$work/user-rare.phrases
python3 - "$corpus" "$phr" "$rare" <<'PY'
import collections, re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
seen, freq = set(), []
for i, m in enumerate(re.finditer(r"[\u4e00-\u9fff]{2,3}", text)):
    w = m.group(0)
    if i % 97 == 0 and w not in seen:
        seen.add(w)
        freq.append(w)
    if len(freq) == 1000:
        break
counts = collections.Counter(m.group(0) for m in re.finditer(r"[\u4e00-\u9fff]{3}", text))
rare = [w for w, n in counts.items() if n <= 2][:1000]
for path, words in ((sys.argv[2], freq), (sys.argv[3], rare)):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join("%s\t%s\n" % (w, w[::-1]) for w in words))
PY
r "## 2c. User phrases (\`--phrases\`), library in memory"
r ""
r "\`throughput [--default] [--phrases FILE] --tsv DICT s2t INPUT $LIB_RUNS\`: as tables 2 and 2b, with the converter from \`fj_converter_open_options\`. **none**: \`fj_converter_open\`; **empty**: the options with an empty phrase array (\`--phrases -\`); **frequent**: $(wc -l <"$phr") two- and three-character words of the corpus taken at every 97th Han run, so common words are among them and match often; **rare**: $(wc -l <"$rare") three-character words seen at most twice. Each maps a word to itself reversed. The four run in turn, $PHRASE_ROUNDS rounds, so that other work on the machine weighs on all of them alike: each figure is the median over the rounds of each run's median of $LIB_RUNS passes."
r ""
r "| mode | none MB/s | empty MB/s | frequent MB/s | rare MB/s | library output = CLI \`--phrases\` output (frequent, rare) |"
r "|---|---:|---:|---:|---:|---|"
# median of the numbers on stdin
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for mode in compat default; do
    # Not flag=$([ ... ] && echo ...): under set -e its failing test ends the script.
    flag=
    if [ "$mode" = default ]; then flag=--default; fi
    names=(none empty frequent rare)
    files=("" - "$phr" "$rare")
    for ((round = 1; round <= PHRASE_ROUNDS; round++)); do
        for i in 0 1 2 3; do
            ph=${files[$i]}
            progress "user phrases: s2t $mode, ${names[$i]}, round $round/$PHRASE_ROUNDS"
            lib_out=/dev/null # the first round's output is compared with the CLI's
            if [ "$round" = 1 ]; then lib_out=$work/lib-${names[$i]}.out; fi
            line=$("${pin[@]}" "$tp" $flag ${ph:+--phrases "$ph"} --tsv "$dict" s2t "$corpus" "$LIB_RUNS" "$lib_out")
            read -r _ bytes _ _ med _ <<<"$line"
            awk -v b="$bytes" -v m="$med" 'BEGIN {printf "%.3f\n", b / 1e6 / m}' >>"$work/phrases-$mode-${names[$i]}.txt"
        done
    done
    row=()
    for i in 0 1 2 3; do
        row+=("$(median <"$work/phrases-$mode-${names[$i]}.txt" | awk '{printf "%.1f", $1}')")
    done
    flag_cli=
    if [ "$mode" = compat ]; then flag_cli=--compat; fi
    same=()
    for i in 2 3; do
        "${pin[@]}" "$fanjian" $flag_cli -j 1 -c s2t --phrases "${files[$i]}" -i "$corpus" -o "$work/cli.out"
        same+=("$(cmp -s "$work/lib-${names[$i]}.out" "$work/cli.out" && echo yes || echo "**no**")")
    done
    rm -f "$work"/lib-*.out "$work/cli.out"
    r "| $mode | ${row[0]} | ${row[1]} | ${row[2]} | ${row[3]} | ${same[0]}, ${same[1]} |"
done
r ""
r "CLI: \`fanjian [--compat] -j 1 -c s2t --phrases FILE -i INPUT -o OUT\`. None and empty are the same converter: without entries (and without \`--markup\`) no overlay is made."
r ""

# ---- 3. open time -------------------------------------------------------------
progress "open time: library, $OPEN_RUNS open/close cycles"
open_line=$("${pin[@]}" "$tp" --open-only "$dict" s2t "$OPEN_RUNS")
read -r _ _ _ open_ms _ <<<"$open_line"
read -r _ proc_f proc_o < <(grep '^open ' "$results")
# The whole-process figures include starting /usr/bin/time and taskset, as
# run.sh measures them; the same wrapper around /bin/true shows that share.
for ((i = 0; i < OPEN_RUNS; i++)); do
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o /dev/null "${pin[@]}" /bin/true
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.6f\n", (b - a) * 1000}' >>"$work/true.ms"
done
proc_0=$(sort -g "$work/true.ms" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
# The process alone, exec to exit, started by posix_spawn with nothing
# around it (the rows above include bash forking /usr/bin/time).
SPAWN_RUNS=$((OPEN_RUNS * 5))
printf '汉字\n' >"$work/one.txt"
spawn_ms() { "${pin[@]}" "$tp" --spawn "$SPAWN_RUNS" "$@" | awk '{print $3}'; }
progress "process start: $SPAWN_RUNS spawns of each command"
spawn_true=$(spawn_ms /bin/true)
spawn_file=$(spawn_ms "$fanjian" --compat -c s2t -i "$work/one.txt" -o "$work/one.out")
spawn_stdout=$(spawn_ms "$fanjian" --compat -c s2t -i "$work/one.txt")
spawn_default=$(spawn_ms "$fanjian" -c s2t -i "$work/one.txt")
rm -f "$work/one.txt" "$work/one.out"
r "## 3. Open time (s2t)"
r ""
r "| what | fanjian | OpenCC |"
r "|---|---:|---:|"
r "| library: \`fj_dict_open\` + \`fj_converter_open\`, median of $OPEN_RUNS open/close cycles in one process | $(printf '%.3f' "$open_ms") ms | — |"
r "| whole process on a one-line input (exec, open, convert, write the output file, exit), median of $OPEN_RUNS, from table 1's run | $(printf '%.1f' "$proc_f") ms | $(printf '%.1f' "$proc_o") ms |"
r "| the same harness (\`/usr/bin/time${pin[*]:+ ${pin[*]}}\`) around \`/bin/true\`: part of the row above, not the tool's | $(printf '%.1f' "$proc_0") ms | $(printf '%.1f' "$proc_0") ms |"
r ""
r "Process start, exec to exit, with no harness (\`throughput --spawn $SPAWN_RUNS PROGRAM ...\`: posix_spawn, output to /dev/null, waitpid; median):"
r ""
r "| process | ms |"
r "|---|---:|"
r "| \`fanjian --compat -c s2t -i ONE-LINE -o OUT\` | $(printf '%.2f' "$spawn_file") |"
r "| \`fanjian --compat -c s2t -i ONE-LINE\` (to standard output) | $(printf '%.2f' "$spawn_stdout") |"
r "| \`fanjian -c s2t -i ONE-LINE\` (default mode) | $(printf '%.2f' "$spawn_default") |"
r "| \`/bin/true\`, for scale | $(printf '%.2f' "$spawn_true") |"
r ""
r "Library detail: \`$open_line\`"
r ""

# ---- 4. a 1 GiB file ----------------------------------------------------------
# BIG is the corpus repeated (real text, but not 1 GiB of distinct text);
# kept in the cache and rebuilt only when the corpus changes.
csize=$(stat -c %s "$corpus")
copies=$(((BIG_BYTES + csize - 1) / csize))
big=$cache/corpus-x$copies.txt
if [ -f "$big" ] && [ "$big" -nt "$corpus" ] && [ "$(stat -c %s "$big")" -eq $((copies * csize)) ]; then
    progress "big file: reusing $big"
else
    progress "big file: writing $big ($copies copies of the corpus)"
    rm -f "$cache"/corpus-x*.txt
    for ((i = 0; i < copies; i++)); do cat "$corpus"; done >"$big.tmp"
    mv "$big.tmp" "$big"
fi
bsize=$(stat -c %s "$big")
cat "$big" >/dev/null # page cache: measure conversion, not the disk
# Kernel time for the same 1 GiB varies run to run on this VM (0.7 to 3 s
# of sys seen with identical commands), so take the median of BIG_RUNS.
# Each run's output replaces the previous one; the last two are compared.
# The three commands take turns, so that other work on the machine weighs
# on each alike; the pipes with and without line flushing (issue 21) differ
# only in what a read that would wait does.
for ((i = 1; i <= BIG_RUNS; i++)); do
    progress "big file: fanjian -c s2t -j 1 -i BIG -o OUT ($i/$BIG_RUNS)"
    sync # as in run.sh: no run pays for the writeback of another's output
    # -j 1: one thread (a regular file this large gets one per core by default: table 4b).
    /usr/bin/time -a -f '%e %M %U %S' -o "$work/big-file.time" "${pin[@]}" "$fanjian" -c s2t -j 1 -i "$big" -o "$work/big-file.out"
    progress "big file: cat BIG | fanjian -c s2t > OUT ($i/$BIG_RUNS)"
    sync
    "${other[@]}" cat "$big" | /usr/bin/time -a -f '%e %M %U %S' -o "$work/big-pipe.time" "${pin[@]}" "$fanjian" -c s2t >"$work/big-pipe.out"
    progress "big file: cat BIG | fanjian -c s2t --noflush > OUT ($i/$BIG_RUNS)"
    sync
    "${other[@]}" cat "$big" | /usr/bin/time -a -f '%e %M %U %S' -o "$work/big-noflush.time" "${pin[@]}" "$fanjian" -c s2t --noflush >"$work/big-noflush.out"
done
osize=$(stat -c %s "$work/big-file.out")
same=$(cmp -s "$work/big-file.out" "$work/big-pipe.out" && cmp -s "$work/big-file.out" "$work/big-noflush.out" && echo yes || echo "**no**")
rm -f "$work/big-file.out" "$work/big-pipe.out" "$work/big-noflush.out"
# med FILE COLUMN: median of one column of a .time file
med() { sort -g -k"$2,$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
big_row() { # LABEL TIMEFILE
    awk -v l="$1" -v b="$bsize" -v e="$(med "$2" 1)" -v u="$(med "$2" 3)" -v s="$(med "$2" 4)" \
        -v m="$(sort -g -k2,2 "$2" | tail -n 1 | cut -d' ' -f2)" 'BEGIN {
        printf "| %s | %.2f | %.1f | %.2f | %.2f | %.1f |\n", l, e, b / 1e6 / e, u, s, m / 1024 }'
}
r "## 4. Peak memory on a $(mb "$bsize") MB file"
r ""
r "Input: \`$big\`, the corpus repeated $copies times ($bsize bytes; real text, but repeated, not $copies times as much distinct text), in the page cache. Output: $osize bytes to a file in the cache dir, deleted afterwards; the pipes' outputs are identical to the file's: $same. The pipe writes what has arrived whenever a read would wait (line by line when the input pauses); \`--noflush\` fills whole chunks first: their difference is what that costs. \`/usr/bin/time -f '%e %M %U %S'\` (10 ms resolution); the three commands take turns, $BIG_RUNS rounds; times are medians, RSS the maximum. MB/s here includes reading and writing the whole file through the kernel: user time is the conversion, sys time the I/O, which varies on this VM."
r ""
r "| command | wall s | MB/s | user s | sys s | peak RSS MB |"
r "|---|---:|---:|---:|---:|---:|"
big_row "\`${pin[*]:+${pin[*]} }fanjian -c s2t -j 1 -i BIG -o OUT\`" "$work/big-file.time" >&3
big_row "\`${other[*]:+${other[*]} }cat BIG \\| ${pin[*]:+${pin[*]} }fanjian -c s2t > OUT\`" "$work/big-pipe.time" >&3
big_row "\`${other[*]:+${other[*]} }cat BIG \\| ${pin[*]:+${pin[*]} }fanjian -c s2t --noflush > OUT\`" "$work/big-noflush.time" >&3
r ""
r "Disk: the big file stays in \`$cache\` ($(mb "$bsize") MB, next to the corpus and the downloaded packages; \`rm $big\` reclaims it, the next run rebuilds it). While the runs last, up to $(mb "$((3 * osize))") MB of output (the file and the two pipes) also exist."
r ""

# ---- 4b. one text on every core (issue 22) -------------------------------------
# The corpus cut to J_BYTES (54 MB, whole lines), converted with -j 1 and
# -j 2, not pinned; the commands take turns, J_RUNS rounds, medians.
J_BYTES=${J_BYTES:-54000000}
J_RUNS=${J_RUNS:-5}
jfile=$cache/corpus-$J_BYTES.txt
if ! [ -f "$jfile" ] || ! [ "$jfile" -nt "$corpus" ]; then
    head -c "$J_BYTES" "$big" | sed '$d' >"$jfile.tmp" && mv "$jfile.tmp" "$jfile"
fi
jsize=$(stat -c %s "$jfile")
cat "$jfile" >/dev/null
j_profiles=("-c s2t" "-c s2tw" "-c s2twp" "-c s2twp --quotes keep" "--compat -c s2t")
for ((i = 1; i <= J_RUNS; i++)); do
    for k in "${!j_profiles[@]}"; do
        for j in 1 2; do
            progress "one text on every core: fanjian ${j_profiles[$k]} -j $j ($i/$J_RUNS)"
            # A new file each time, as in table 1: a rename onto the last
            # round's output would start ext4's writeback of it (table 1b).
            rm -f "$work/j$k-$j.out"
            # shellcheck disable=SC2086 # the options are words
            /usr/bin/time -a -f '%e %M %U %S' -o "$work/j$k-$j.time" "$fanjian" ${j_profiles[$k]} -j "$j" -i "$jfile" -o "$work/j$k-$j.out"
        done
    done
done
r "## 4b. One text on every core (\`-j\` on one input)"
r ""
r "Input: \`$jfile\` ($jsize bytes, the corpus's first whole lines), in the page cache; output to a new file each time (the previous round's removed first, untimed, as in table 1). Not pinned; \`/usr/bin/time -f '%e %M %U %S'\`, the commands in turn, $J_RUNS rounds, medians. Identical: the \`-j 2\` output compared with \`-j 1\`'s by \`cmp\`. Typography (s2twp's quotation marks) runs after the threads, on one."
r ""
r "| command | -j 1 s | -j 2 s | -j 1 MB/s | -j 2 MB/s | speed-up | -j 2 peak RSS MB | identical |"
r "|---|---:|---:|---:|---:|---:|---:|---|"
j_best=0
for k in "${!j_profiles[@]}"; do
    same=$(cmp -s "$work/j$k-1.out" "$work/j$k-2.out" && echo yes || echo "**no**")
    e1=$(med "$work/j$k-1.time" 1)
    e2=$(med "$work/j$k-2.time" 1)
    m2=$(sort -g -k2,2 "$work/j$k-2.time" | tail -n 1 | cut -d' ' -f2)
    x=$(awk -v a="$e1" -v b="$e2" 'BEGIN {print a / b}')
    [ "$k" -eq 0 ] && j_best=$x
    awk -v l="fanjian ${j_profiles[$k]} -j N -i FILE -o OUT" -v a="$e1" -v b="$e2" -v s="$jsize" -v m="$m2" -v same="$same" 'BEGIN {
        printf "| `%s` | %.2f | %.2f | %.1f | %.1f | %.2fx | %.1f | %s |\n", l, a, b, s / 1e6 / a, s / 1e6 / b, a / b, m / 1024, same }' >&3
    rm -f "$work/j$k-1.out" "$work/j$k-2.out"
done
r ""

# ---- the JavaScript package and Dask (issue 22) ---------------------------------
r "## 4c. The JavaScript package next to opencc-js 1.4.2 (\`make bench-js\`)"
r ""
if command -v node >/dev/null && command -v emcc >/dev/null; then
    progress "JavaScript: make bench-js"
    if (cd "$root" && make -s --no-print-directory bench-js) >"$work/js.md" 2>"$work/js.err"; then
        sed -n '/^Node /,$p' "$work/js.md" >&3
    else
        r "**make bench-js failed:** $(tail -n 3 "$work/js.err" | tr '\n' ' ')"
    fi
else
    r "Not run: node or emscripten (for \`make js\`) is missing."
fi
r ""
r "## 4d. fanjian.dask at 1 and 2 workers (\`make bench-dask\`)"
r ""
progress "Dask: make bench-dask"
if (cd "$root" && make -s --no-print-directory bench-dask) >"$work/dask.md" 2>"$work/dask.err"; then
    sed -n '/^fanjian\.dask/,$p' "$work/dask.md" >&3 # without the build's lines
else
    r "Not run or failed (needs python3-dask and python3-distributed): $(tail -n 2 "$work/dask.err" | tr '\n' ' ')"
fi
r ""

# ---- the HTTP service (issue 6) ---------------------------------------------
progress "HTTP service: wrk, 64 connections, ${SERVE_SECONDS:-30} s"
"$here/serve.sh" "$fanjian" "$dict" >"$work/serve.md" 2>"$work/serve.err" || serve_failed=1
cat "$work/serve.md" >&3
if [ -n "${serve_failed:-}" ]; then
    r "" "**bench/serve.sh reported wrong or failed answers:** $(tail -n 3 "$work/serve.err" | tr '\n' ' ')"
fi
r ""

# ---- tree mode (issue 5) ----------------------------------------------------
progress "tree mode: 2000 files, one thread and one per core"
"$here/batch.sh" "$fanjian" "$corpus" "$cache" 2000 >"$work/batch.md" 2>"$work/batch.err" ||
    { cat "$work/batch.err" >&2; exit 1; }
cat "$work/batch.md" >&3
r ""
batch_x=$(sed -n 's/^BATCH_SPEEDUP //p' "$work/batch.err")

# ---- the issue's targets ---------------------------------------------------
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN {ok = op == "<" ? v < t : op == "<=" ? v <= t : v >= t; print ok ? "yes" : "**no**"}'; }
lib_s2t=$(awk '$1 == "s2t" {print $2}' "$work/lib.txt")
cli_s2t=$(cli_field s2t 4)
oc_s2t=$(cli_field s2t 6)
rss_file=$(sort -g -k2,2 "$work/big-file.time" | tail -n 1 | awk '{printf "%.1f", $2 / 1024}')
rss_pipe=$(sort -g -k2,2 "$work/big-pipe.time" | tail -n 1 | awk '{printf "%.1f", $2 / 1024}')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }
f1() { printf '%.1f' "$1"; }
if [ -n "$lib_s2t" ] && [ -n "$cli_s2t" ]; then
    cli_x=$(ratio "$cli_s2t" "$oc_s2t")
    lib_x=$(ratio "$lib_s2t" "$oc_s2t")
    r "## Targets (from the issue)"
    r ""
    r "| target | measured | met |"
    r "|---|---|---|"
    r "| s2t ≥ 300 MB/s, one thread | CLI $(f1 "$cli_s2t") MB/s; library in memory $(f1 "$lib_s2t") MB/s | CLI $(verdict "$cli_s2t" 300 '>='); library $(verdict "$lib_s2t" 300 '>=') |"
    r "| s2t ≥ 40x OpenCC 1.1.6's CLI, same run | CLI vs CLI $(f1 "$cli_x")x; library in memory vs OpenCC CLI $(f1 "$lib_x")x | CLI $(verdict "$cli_x" 40 '>='); library $(verdict "$lib_x" 40 '>=') |"
    r "| opening a profile < 5 ms | library $(printf '%.3f' "$open_ms") ms; whole process $(printf '%.1f' "$proc_f") ms, of which $(printf '%.1f' "$proc_0") ms is the timing harness | library $(verdict "$open_ms" 5 '<'); process $(verdict "$proc_f" 5 '<') |"
    r "| peak memory < 32 MB converting a 1 GB file | $(mb "$bsize") MB file: \`-o\` $rss_file MB, pipe $rss_pipe MB | \`-o\` $(verdict "$rss_file" 32 '<'); pipe $(verdict "$rss_pipe" 32 '<') |"
    for p in s2t s2tw; do
        d=$(awk -v p="$p" '$1 == p {print $2}' "$work/default.txt")
        [ -n "$d" ] && r "| default mode $p ≥ 150 MB/s, one thread (issue 3) | library in memory $(f1 "$d") MB/s | $(verdict "$d" 150 '>=') |"
    done
    [ -n "$batch_x" ] && r "| 2,000 files with both cores ≥ 1.7x one thread (issue 5) | $(printf '%.2f' "$batch_x")x | $(verdict "$batch_x" 1.7 '>=') |"
    r "| \`-j 2\` on one $(mb "$jsize") MB file ≥ 1.8x \`-j 1\`, s2t (issue 22) | $(printf '%.2f' "$j_best")x | $(verdict "$j_best" 1.8 '>=') |"
    r "| s2t \`--compat\` ≥ 1000 MB/s in the library, ≥ 800 MB/s CLI to CLI (issue 22) | library $(f1 "$lib_s2t") MB/s (the per-character floor, table 2: $(f1 "$floor_s2t")); CLI $(f1 "$cli_s2t") MB/s | library $(verdict "$lib_s2t" 1000 '>='); CLI $(verdict "$cli_s2t" 800 '>=') |"
    for p in s2t s2tw; do
        d=$(awk -v p="$p" '$1 == p {print $2}' "$work/default.txt")
        [ -n "$d" ] && r "| default mode $p ≥ 300 MB/s (issue 22) | library in memory $(f1 "$d") MB/s | $(verdict "$d" 300 '>=') |"
    done
    twp=$(awk '$1 == "s2twp" {print $2}' "$work/lib.txt")
    [ -n "$twp" ] && r "| s2twp ≥ 200 MB/s (issue 22) | \`--compat\`, library in memory $(f1 "$twp") MB/s | $(verdict "$twp" 200 '>=') |"
    r "| process start ≤ 3 ms (issue 22) | \`--compat\` $(printf '%.2f' "$spawn_file") ms, default mode $(printf '%.2f' "$spawn_default") ms (table 3, posix_spawn; \`/bin/true\` $(printf '%.2f' "$spawn_true")) | \`--compat\` $(verdict "$spawn_file" 3 '<='); default $(verdict "$spawn_default" 3 '<=') |"
    r ""
fi
# Another job on this 2-core machine can share the pinned core or the
# caches; the load average flags a run to repeat.
r "Benchmark run time (after the build): $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.0f", b - a}') s. Load average (1 min) at start $load_start, at end $(cut -d' ' -f1 /proc/loadavg); this run itself keeps about one core busy, so much more than 1 means something else was running and the numbers may be low."
exec 3>&-

# Replace the saved report only once it is complete.
mkdir -p "$(dirname "$report")"
cp "$out" "$report.tmp"
mv "$report.tmp" "$report"
cat "$report"
progress "report saved to $report"
