#!/usr/bin/env bash
# make accuracy: fetch the gold packages (bench/accuracy-sets.txt), then run
# bench/accuracy.py, which builds the gold sets, converts, scores and prints
# the Markdown report.
#
#   bench/accuracy.sh FANJIAN_BIN SET BUILD_DIR OPENCC_DATA_DIR
#
# SET is report (default of make accuracy) or tune. Packages are fetched with
# `apt-get download` into $BENCH_CACHE/debs (default BUILD_DIR/bench-cache,
# shared with make bench), checked against the SHA256 in apt's signed package
# lists, and read in place: nothing is installed. OpenCC 1.1.6 (Debian package
# opencc) is installed if missing, as bench/run.sh does.
set -euo pipefail
export LC_ALL=C

if [ $# -ne 4 ]; then
    echo "usage: $0 FANJIAN_BIN SET BUILD_DIR OPENCC_DATA_DIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
fanjian=$1 set=$2 build=$3 data=$4
case $set in report | tune) ;; *) echo "accuracy: SET must be report or tune, not '$set'" >&2; exit 2 ;; esac
list=$here/accuracy-sets.txt
mkdir -p "$build"
cache=${BENCH_CACHE:-$build/bench-cache}
debs=$cache/debs
mkdir -p "$debs"
debs=$(cd "$debs" && pwd)

# Tools from Debian: python3 (standard library only) and OpenCC 1.1.6.
tools=()
[ -x /usr/bin/python3 ] || tools+=(python3)
command -v opencc >/dev/null || tools+=(opencc)
if [ ${#tools[@]} -gt 0 ]; then
    apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null; }
fi

mapfile -t pkgs < <(awk '!/^#/ && NF {print $2}' "$list" | sort -u)

# "pkg version arch sha256" of each package's candidate version.
candidates() {
    apt-cache show --no-all-versions "${pkgs[@]}" 2>/dev/null |
        awk '/^Package:/ {p = $2} /^Version:/ {v = $2} /^Architecture:/ {a = $2} /^SHA256:/ {s = $2}
             /^$/ && p != "" {print p, v, a, s; p = ""} END {if (p != "") print p, v, a, s}'
}
cands=$(candidates)
if [ "$(grep -c . <<<"$cands")" -lt "${#pkgs[@]}" ]; then
    apt-get update -qq # lists missing or old (fresh machine): refresh once
    cands=$(candidates)
fi
missing=$(comm -23 <(printf '%s\n' "${pkgs[@]}") <(awk '{print $1}' <<<"$cands" | sort -u))
if [ -n "$missing" ]; then
    # The report lists the packages it used; a package gone from the archive
    # shrinks the gold sets but does not stop the run.
    echo "accuracy: warning: not in the apt archive, skipped: $(tr '\n' ' ' <<<"$missing")" >&2
fi

debname() { awk '{v = $2; gsub(":", "%3a", v); print $1 "_" v "_" $3 ".deb"}'; }
fetch() {
    # -o APT::Sandbox::User=root: the cache dir is not readable by _apt.
    (cd "$debs" && apt-get -qq -o APT::Sandbox::User=root download "$@")
}
need=$(debname <<<"$cands" | while read -r f; do [ -f "$debs/$f" ] || echo "${f%%_*}"; done)
if [ -n "$need" ]; then
    echo "accuracy: downloading $(wc -l <<<"$need") packages into $debs" >&2
    # shellcheck disable=SC2086 # word splitting of package names is intended
    if ! fetch $need; then
        # A stale list points at a superseded (deleted) version: refresh, retry.
        apt-get update -qq
        cands=$(candidates)
        need=$(debname <<<"$cands" | while read -r f; do [ -f "$debs/$f" ] || echo "${f%%_*}"; done)
        # shellcheck disable=SC2086
        [ -z "$need" ] || fetch $need
    fi
fi

# Every .deb read must match the SHA256 of apt's (signed) package lists;
# a damaged cached file is fetched again once.
mismatched() {
    paste -d' ' <(awk '{print $4}' <<<"$cands") <(debname <<<"$cands" | sed "s|^| $debs/|") |
        { sha256sum -c - 2>/dev/null || true; } | awk '!/: OK$/ {sub(/: FAILED.*$/, ""); print}'
}
bad=$(mismatched)
if [ -n "$bad" ]; then
    echo "accuracy: checksum mismatch, fetching again: $(xargs -n1 basename <<<"$bad" | tr '\n' ' ')" >&2
    xargs rm -f -- <<<"$bad"
    # shellcheck disable=SC2046 # one word per package name
    fetch $(xargs -n1 basename <<<"$bad" | sed 's/_.*//')
    bad=$(mismatched)
    if [ -n "$bad" ]; then
        echo "accuracy: these do not match the checksums of apt's lists: $bad" >&2
        exit 1
    fi
fi
# Older versions of these packages left by earlier runs only waste space.
want=$(debname <<<"$cands")
for p in "${pkgs[@]}"; do
    for f in "$debs/${p}"_*.deb; do
        if [ -e "$f" ] && ! grep -qxF "$(basename "$f")" <<<"$want"; then rm -f -- "$f"; fi
    done
done

plan=$build/accuracy/plan.tsv
mkdir -p "$build/accuracy"
debname <<<"$cands" | paste <(awk '{print $1 "\t" $2}' <<<"$cands") - |
    awk -v d="$debs" -F'\t' '{print $1 "\t" $2 "\t" d "/" $3}' >"$plan"

exec /usr/bin/python3 -B "$here/accuracy.py" --fanjian "$fanjian" --set "$set" --plan "$plan" \
    --data "$data" --out "$build/accuracy" --report "$build/accuracy-report.md" \
    --cmd "${ACC_CMD:-bench/accuracy.sh $*}"
