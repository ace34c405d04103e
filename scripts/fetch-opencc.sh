#!/usr/bin/env bash
# Fetches OpenCC's dictionaries (Apache-2.0) from the npm registry's `opencc`
# package, verifies the published integrity, caches the tarball, and unpacks
# the text dictionaries and configs into DEST. Nothing fetched is committed.
set -euo pipefail

dest=${1:?usage: fetch-opencc.sh DEST}
version=1.4.2
integrity='sha512-fAo8GJy0XhFyw9zIsEHmEVKL+qK8qbw0hcCjqKN5cn2UA7FPOU6b13xpqpSUf8mLNLhBMmIVZu6J+fEjJ2KcyQ=='
cache=${FANJIAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fanjian}
tarball=$cache/opencc-$version.tgz

# The integrity string is base64 of the SHA-512 digest; compare in hex.
expected=$(printf '%s' "${integrity#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
verify() { [ -f "$1" ] && [ "$(sha512sum "$1" | cut -d' ' -f1)" = "$expected" ]; }

mkdir -p "$cache"
if ! verify "$tarball"; then
    command -v npm >/dev/null || { echo "fetch-opencc: npm is needed (apt-get install npm)" >&2; exit 1; }
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    (cd "$work" && npm pack --silent "opencc@$version" >/dev/null)
    if ! verify "$work/opencc-$version.tgz"; then
        echo "fetch-opencc: opencc-$version.tgz does not match its published integrity" >&2
        exit 1
    fi
    mv "$work/opencc-$version.tgz" "$tarball"
fi

rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
tar -xzf "$tarball" -C "$dest.tmp" package/data/dictionary package/data/config package/LICENSE
mv "$dest.tmp/package/data/dictionary" "$dest.tmp/package/data/config" "$dest.tmp/package/LICENSE" "$dest.tmp/"
rm -rf "$dest.tmp/package" "$dest"
mv "$dest.tmp" "$dest"
# How the dictionary image names this source (fjdict --source).
printf 'OpenCC\t%s\tApache-2.0\tdictionaries and configurations\n' "$version" >"$dest/source.tsv"
echo "fetch-opencc: OpenCC $version data in $dest (sha512 verified)"
