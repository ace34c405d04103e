#!/usr/bin/env bash
# Installs the pinned playwright-core (tests/browser/package.json and its
# package-lock.json, whose sha512 npm checks) into a cache directory outside
# the repository, once, and prints that directory: its node_modules holds
# playwright-core. No browser is downloaded: the tests drive the system's
# Chromium.
#
#   scripts/fetch-playwright.sh            -> e.g. ~/.cache/fanjian/playwright-core-1.61.1
#
# FANJIAN_CACHE: the cache directory (default: ~/.cache/fanjian).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
spec=$root/tests/browser
version=$(sed -n 's/.*"playwright-core": *"\([^"]*\)".*/\1/p' "$spec/package.json" | head -n 1)
if [ -z "$version" ]; then
    echo "fetch-playwright: no playwright-core version in $spec/package.json" >&2
    exit 1
fi
cache=${FANJIAN_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/fanjian}
dir=$cache/playwright-core-$version
# The stamp is the lock file the installation was made from.
if [ -f "$dir/.installed" ] && cmp -s "$dir/.installed" "$spec/package-lock.json" &&
    [ -f "$dir/node_modules/playwright-core/package.json" ]; then
    echo "$dir"
    exit 0
fi
command -v npm >/dev/null || { echo "fetch-playwright: npm is not installed" >&2; exit 1; }
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.playwright-core.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "$spec/package.json" "$spec/package-lock.json" "$tmp/"
# npm ci installs exactly the lock file's versions and checks their integrity.
if ! (cd "$tmp" && timeout 300 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2); then
    echo "fetch-playwright: npm could not install playwright-core@$version" >&2
    exit 1
fi
cp "$spec/package-lock.json" "$tmp/.installed"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$dir"
