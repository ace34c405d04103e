#!/usr/bin/env bash
# Fetches one pinned Debian package, verifies its sha256, caches it, and
# extracts files of it. The build's third-party data comes this way; nothing
# fetched is committed.
#   fetch-deb.sh [--source FILE LICENCE ROLE] PACKAGE[:ARCH] VERSION SHA256 PATH_IN_PACKAGE DEST [PATH DEST ...]
# --source: also writes FILE, the line "PACKAGE<TAB>VERSION<TAB>LICENCE<TAB>ROLE"
# by which the dictionary image names its sources (fjdict --source).
set -euo pipefail
source_file=
if [ "${1:-}" = --source ]; then
    source_file=${2:?} source_license=${3:?} source_role=${4:?}
    shift 4
fi

spec=${1:?usage: fetch-deb.sh PACKAGE[:ARCH] VERSION SHA256 PATH_IN_PACKAGE DEST [PATH DEST ...]}
version=${2:?} sha256=${3:?}
shift 3
[ $# -ge 2 ] && [ $(($# % 2)) -eq 0 ] || { echo "fetch-deb: PATH_IN_PACKAGE DEST pairs expected" >&2; exit 2; }
package=${spec%%:*} arch=all
[ "$spec" = "$package" ] || arch=${spec#*:}
cache=${FANJIAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fanjian}
deb=$cache/${package}_${version//:/%3a}_${arch}.deb
verify() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$sha256" ]; }

mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
download() { # into $work; apt-get download needs no root
    (cd "$work" && apt-get download -q "$spec=$version" 2>&1 |
        grep -v '^W: Download is performed unsandboxed' >&2) || true
    ls "$work"/"${package}"_*.deb 2>/dev/null | head -n 1 || true
}
if ! verify "$deb"; then
    got=$(download)
    if [ -z "$got" ]; then
        # A fresh machine may have no package lists yet.
        as_root=()
        [ "$(id -u)" -eq 0 ] || as_root=(sudo)
        "${as_root[@]}" apt-get update -qq >&2 || true
        got=$(download)
    fi
    if [ -z "$got" ]; then
        echo "fetch-deb: could not download $spec=$version" >&2
        exit 1
    fi
    if ! verify "$got"; then
        echo "fetch-deb: $(basename "$got") does not match its pinned sha256" >&2
        exit 1
    fi
    mv "$got" "$deb"
fi

mkdir -p "$work/x"
dpkg-deb -x "$deb" "$work/x"
while [ $# -gt 0 ]; do
    inner=$1 dest=$2
    shift 2
    if [ ! -f "$work/x/$inner" ]; then
        echo "fetch-deb: $package $version has no $inner" >&2
        exit 1
    fi
    mkdir -p "$(dirname "$dest")"
    # Dated now, not as packaged, so make sees it as newer than its recipe.
    touch "$work/x/$inner"
    mv "$work/x/$inner" "$dest.tmp.$$"
    mv "$dest.tmp.$$" "$dest"
    echo "fetch-deb: $package $version: $inner -> $dest (sha256 verified)"
done
if [ -n "$source_file" ]; then
    mkdir -p "$(dirname "$source_file")"
    printf '%s\t%s\t%s\t%s\n' "$package" "$version" "$source_license" "$source_role" \
        >"$source_file.tmp.$$"
    mv "$source_file.tmp.$$" "$source_file"
fi
