#!/usr/bin/env bash
# Fetches Debian's rime-essay package (a word list with counts, LGPL-3.0),
# verified and cached by fetch-deb.sh, and extracts essay.txt to DEST. The
# context model of the default mode is built from it.
set -euo pipefail
dest=${1:?usage: fetch-essay.sh DEST_FILE}
exec "$(dirname "$0")/fetch-deb.sh" \
    --source "$dest.source" LGPL-3.0 "word list with counts: the default mode's context model" \
    rime-essay 0.0~git20230204.e0519d0-1 \
    a88723154a076dd746de3e7c48738179cde9cf1b3480f12b6781c4e1afa9b015 \
    usr/share/rime-data/essay.txt "$dest"
