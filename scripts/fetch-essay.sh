#!/usr/bin/env bash
# Fetches Debian's rime-essay package (a word list with counts, LGPL-3.0),
# verifies it, caches it, and extracts essay.txt to DEST. The context model
# of the default mode is built from it. Nothing fetched is committed.
set -euo pipefail

dest=${1:?usage: fetch-essay.sh DEST_FILE}
package=rime-essay
version=0.0~git20230204.e0519d0-1
sha256=a88723154a076dd746de3e7c48738179cde9cf1b3480f12b6781c4e1afa9b015
cache=${FANJIAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fanjian}
deb=$cache/${package}_${version}_all.deb

verify() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$sha256" ]; }

mkdir -p "$cache"
download() { # into the current directory; apt-get download needs no root
    apt-get download -q "$package=$version" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true
    ls ./${package}_*.deb 2>/dev/null | head -n 1 || true
}
if ! verify "$deb"; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    got=$(cd "$work" && download)
    if [ -z "$got" ]; then
        # A fresh machine may have no package lists yet.
        as_root=()
        [ "$(id -u)" -eq 0 ] || as_root=(sudo)
        "${as_root[@]}" apt-get update -qq || true
        got=$(cd "$work" && download)
    fi
    if [ -z "$got" ]; then
        echo "fetch-essay: could not download $package=$version" >&2
        exit 1
    fi
    got=$work/${got#./}
    if ! verify "$got"; then
        echo "fetch-essay: $(basename "$got") does not match its pinned sha256" >&2
        exit 1
    fi
    mv "$got" "$deb"
    rm -rf "$work"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work"
mkdir -p "$(dirname "$dest")"
# Dated now, not as packaged, so make sees it as newer than this script.
touch "$work/usr/share/rime-data/essay.txt"
mv "$work/usr/share/rime-data/essay.txt" "$dest.tmp.$$"
mv "$dest.tmp.$$" "$dest"
echo "fetch-essay: $package $version: $(wc -l <"$dest") words in $dest (sha256 verified)"
