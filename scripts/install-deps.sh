#!/usr/bin/env bash
# Installs what building and testing fanjian needs on Debian 12.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(build-essential pkg-config libjansson-dev libcmocka-dev ca-certificates
      libuchardet-dev libzip-dev libexpat1-dev zip unzip epubcheck
      libmicrohttpd-dev libpcre2-dev wrk chromium python3-dev python3-venv curl clang libclang-rt-14-dev groff-base man-db valgrind
      abigail-tools python3-dask python3-distributed libmarisa-dev opencc emscripten)
command -v npm >/dev/null || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    as_root=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "install-deps: run as root to install: ${missing[*]}" >&2; exit 1; }
        as_root=(sudo)
    fi
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: ready"
