#!/usr/bin/env bash
# Fetches the regional word data of the default mode's Taiwan and Hong Kong
# models, verifies and caches the Debian packages, and extracts into DEST_DIR:
#   chewing/dictionary.dat, chewing/index_tree.dat  libchewing3-data (LGPL-2.1):
#       libchewing 0.5's phrase table with Taiwan frequencies (tools/chewing.c)
#   essay-cantonese.txt  rime-data-jyut6ping3 (CC-BY-4.0): Hong Kong word counts
# Nothing fetched is committed.
set -euo pipefail

dest=${1:?usage: fetch-region.sh DEST_DIR}
cache=${FANJIAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fanjian}
mkdir -p "$cache" "$dest"

# fetch PACKAGE[:ARCH] VERSION SHA256: prints the verified .deb in the cache.
fetch() {
    local spec=$1 version=$2 sha256=$3 package=${1%%:*} arch=all
    [ "$spec" = "$package" ] || arch=${spec#*:}
    local deb=$cache/${package}_${version}_${arch}.deb
    verify() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$sha256" ]; }
    if ! verify "$deb"; then
        local work got
        work=$(mktemp -d)
        download() { # into $work; apt-get download needs no root
            (cd "$work" && apt-get download -q "$spec=$version" 2>&1 |
                grep -v '^W: Download is performed unsandboxed' >&2) || true
            ls "$work"/${package}_*.deb 2>/dev/null | head -n 1 || true
        }
        got=$(download)
        if [ -z "$got" ]; then
            # A fresh machine may have no package lists yet.
            local as_root=()
            [ "$(id -u)" -eq 0 ] || as_root=(sudo)
            "${as_root[@]}" apt-get update -qq >&2 || true
            got=$(download)
        fi
        if [ -z "$got" ]; then
            echo "fetch-region: could not download $spec=$version" >&2
            rm -rf "$work"
            exit 1
        fi
        if ! verify "$got"; then
            echo "fetch-region: $(basename "$got") does not match its pinned sha256" >&2
            rm -rf "$work"
            exit 1
        fi
        mv "$got" "$deb"
        rm -rf "$work"
    fi
    echo "$deb"
}

chewing=$(fetch libchewing3-data 0.5.1-5 \
    d7c3e3b3d54d986234548e9cd2807b29e253119e33944a07917bb7db8a7bf1f6)
# The package is built per architecture, its word list is the same in each:
# the amd64 build is the one pinned.
jyut=$(fetch rime-data-jyut6ping3:amd64 0.0~git20230209.e0295fa-2~deb12u1 \
    e7d0bbe46765428c731094d7d4f5882755eb0f6732cb08147c6fc89381353e97)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$chewing" "$work"
dpkg-deb -x "$jyut" "$work"
mkdir -p "$dest/chewing"
# Dated now, not as packaged, so make sees them as newer than this script.
for f in dictionary.dat index_tree.dat; do
    touch "$work/usr/share/libchewing/$f"
    mv "$work/usr/share/libchewing/$f" "$dest/chewing/$f"
done
touch "$work/usr/share/rime-data/essay-cantonese.txt"
mv "$work/usr/share/rime-data/essay-cantonese.txt" "$dest/essay-cantonese.txt"
echo "fetch-region: libchewing3-data and rime-data-jyut6ping3 in $dest (sha256 verified)"
