#!/usr/bin/env bash
# Fetches one pinned Debian package, verifies its sha256, caches it, and
# extracts one file of it to DEST. The build's third-party data comes this
# way; nothing fetched is committed.
#   fetch-deb.sh PACKAGE VERSION SHA256 PATH_IN_PACKAGE DEST
set -euo pipefail

package=${1:?usage: fetch-deb.sh PACKAGE VERSION SHA256 PATH_IN_PACKAGE DEST}
version=${2:?} sha256=${3:?} inner=${4:?} dest=${5:?}
cache=${FANJIAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fanjian}
arch=$(dpkg --print-architecture)
verify() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$sha256" ]; }
# The cached file is named by version only: one pinned version per package.
deb=$cache/${package}_${version//:/%3a}.deb

mkdir -p "$cache"
download() { # into the current directory; apt-get download needs no root
    apt-get download -q "$package=$version" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true
    ls ./"${package}"_*.deb 2>/dev/null | head -n 1 || true
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
        echo "fetch-deb: could not download $package=$version ($arch)" >&2
        exit 1
    fi
    got=$work/${got#./}
    if ! verify "$got"; then
        echo "fetch-deb: $(basename "$got") does not match its pinned sha256" >&2
        exit 1
    fi
    mv "$got" "$deb"
    rm -rf "$work"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work"
if [ ! -f "$work/$inner" ]; then
    echo "fetch-deb: $package $version has no $inner" >&2
    exit 1
fi
mkdir -p "$(dirname "$dest")"
# Dated now, not as packaged, so make sees it as newer than its recipe.
touch "$work/$inner"
mv "$work/$inner" "$dest.tmp.$$"
mv "$dest.tmp.$$" "$dest"
echo "fetch-deb: $package $version: $inner -> $dest (sha256 verified)"
