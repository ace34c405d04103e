#!/usr/bin/env bash
# Build the benchmark corpus: >= 50 MB of real Chinese text taken from Debian
# packages (documentation, manual pages, translation catalogs), one
# paragraph/message per line, deduplicated.
#
#   bench/make-corpus.sh CACHE_DIR OUT_FILE
#
# Writes OUT_FILE (all lines, mostly Simplified), OUT_FILE.trad (lines from
# Traditional-locale files only), OUT_FILE.sha256 and OUT_FILE.manifest
# (recipe hash + package versions). Packages are fetched with
# `apt-get download` into CACHE_DIR/debs and read in place: nothing is
# installed. A second run with an intact OUT_FILE and unchanged recipe does
# nothing.
set -euo pipefail
export LC_ALL=C # byte order everywhere, whatever the caller's locale

if [ $# -ne 2 ]; then
    echo "usage: $0 CACHE_DIR OUT_FILE" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
list=$here/corpus-packages.txt
mkdir -p "$1" "$(dirname "$2")"
cache=$(cd "$1" && pwd)
out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
start=$(date +%s)

# The recipe is the package list plus the extraction code: if it changes,
# the cached corpus is stale even though its checksum still matches.
recipe=$(cat "$list" "$here/corpus.py" "$0" | sha256sum | cut -d' ' -f1)

summary() {
    local bytes lines tbytes top
    bytes=$(stat -c %s "$out")
    lines=$(wc -l <"$out")
    tbytes=$(stat -c %s "$out.trad")
    # the five biggest contributors, from the manifest's per-package bytes
    top=$(awk '/^pkg / {print $5 + $6, $2}' "$out.manifest" | sort -rn | head -n 5 | awk '{printf "%s%s", sep, $2; sep = ", "}')
    awk -v b="$bytes" -v l="$lines" -v t="$tbytes" -v n="$(grep -c '^pkg ' "$out.manifest")" \
        -v top="$top" -v s="$1" -v f="$out" 'BEGIN {
        printf "corpus %s: %.1f MB, %d lines (Traditional part: %.1f MB in .trad); from %d Debian packages (largest: %s; see .manifest) [%s]\n",
            f, b / 1e6, l, t / 1e6, n, top, s }'
}

if [ -f "$out" ] && [ -f "$out.trad" ] && [ -f "$out.sha256" ] && [ -f "$out.manifest" ] &&
    grep -qx "recipe $recipe" "$out.manifest" &&
    (cd "$(dirname "$out")" && sha256sum --status -c "$out.sha256"); then
    summary "cached, $(($(date +%s) - start)) s"
    exit 0
fi

if [ ! -x /usr/bin/python3 ]; then
    # Text extraction needs Python's standard library (a fresh minimal
    # Debian may lack it).
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 >/dev/null
fi

mapfile -t pkgs < <(awk '!/^#/ && NF {print $1}' "$list")

# "pkg version arch" of each package's candidate version, from apt's lists.
candidates() {
    apt-cache show --no-all-versions "${pkgs[@]}" 2>/dev/null |
        awk '/^Package:/ {p = $2} /^Version:/ {v = $2} /^Architecture:/ {a = $2}
             /^$/ && p != "" {print p, v, a; p = ""} END {if (p != "") print p, v, a}'
}
cands=$(candidates)
if [ "$(wc -l <<<"$cands")" -lt "${#pkgs[@]}" ]; then
    # Lists missing or old (fresh machine): refresh once.
    apt-get update -qq
    cands=$(candidates)
fi
missing=$(comm -23 <(printf '%s\n' "${pkgs[@]}" | sort -u) <(awk '{print $1}' <<<"$cands" | sort -u))
if [ -n "$missing" ]; then
    # A package gone from the archive shrinks the corpus but should not
    # break the benchmark; the manifest shows what was used.
    echo "make-corpus: warning: not in the apt archive, skipped: $(tr '\n' ' ' <<<"$missing")" >&2
fi

# apt-get download names files pkg_version_arch.deb with ':' as %3a; it skips
# files that are already there and verified.
debs=$cache/debs
mkdir -p "$debs"
have_debs() { find "$debs" -maxdepth 1 -name '*.deb' -printf '%f\n' | sort; }
want=$(awk '{v = $2; gsub(":", "%3a", v); print $1 "_" v "_" $3 ".deb"}' <<<"$cands" | sort)
need=$(comm -23 <(echo "$want") <(have_debs) | sed 's/_.*//')
fetch() {
    # -o APT::Sandbox::User=root: the cache dir is not readable by _apt.
    (cd "$debs" && apt-get -qq -o APT::Sandbox::User=root download "$@")
}
if [ -n "$need" ]; then
    echo "make-corpus: downloading $(wc -l <<<"$need") packages into $debs" >&2
    # shellcheck disable=SC2086 # word splitting of package names is intended
    if ! fetch $need; then
        # A stale list points at a superseded (deleted) version: refresh, retry.
        apt-get update -qq
        cands=$(candidates)
        want=$(awk '{v = $2; gsub(":", "%3a", v); print $1 "_" v "_" $3 ".deb"}' <<<"$cands" | sort)
        need=$(comm -23 <(echo "$want") <(have_debs) | sed 's/_.*//')
        # shellcheck disable=SC2086
        [ -z "$need" ] || fetch $need
    fi
fi
# Old versions left by earlier runs only waste space.
comm -13 <(echo "$want") <(have_debs) |
    while read -r f; do rm -f -- "$debs/$f"; done

# Plan: list order, with the .deb to read for each available package.
plan=$cache/corpus-plan.tsv
awk -v d="$debs" 'NR == FNR {v = $2; gsub(":", "%3a", v); f[$1] = d "/" $1 "_" v "_" $3 ".deb"; next}
     !/^#/ && NF && ($1 in f) {print $1 "\t" $2 "\t" $3 "\t" f[$1]}' <(echo "$cands") "$list" >"$plan"

stats=$cache/corpus-stats.tsv
/usr/bin/python3 "$here/corpus.py" "$plan" "$out" "$out.trad" "$stats"

(cd "$(dirname "$out")" && sha256sum "$(basename "$out")" "$(basename "$out").trad") >"$out.sha256"
{
    echo "# Corpus built by bench/make-corpus.sh from these Debian packages."
    echo "recipe $recipe"
    sed 's/^/sha256 /' "$out.sha256"
    echo "# pkg name version arch simplified-bytes traditional-bytes"
    # join needs both sides sorted on the package name.
    join <(sort <<<"$cands") <(tr '\t' ' ' <"$stats" | sort) | sed 's/^/pkg /'
} >"$out.manifest"

tbytes=$(stat -c %s "$out.trad")
if [ "$tbytes" -lt 20000000 ]; then
    echo "make-corpus: warning: Traditional part is only $tbytes bytes (< 20 MB)" >&2
fi
bytes=$(stat -c %s "$out")
if [ "$bytes" -lt 50000000 ]; then
    echo "make-corpus: warning: corpus is only $bytes bytes (< 50 MB)" >&2
fi
summary "built in $(($(date +%s) - start)) s"
