#!/usr/bin/env bash
# Fetches the regional word data of the default mode's Taiwan and Hong Kong
# models (verified and cached by fetch-deb.sh) into DEST_DIR:
#   chewing/dictionary.dat, chewing/index_tree.dat  libchewing3-data (LGPL-2.1):
#       libchewing 0.5's phrase table with Taiwan frequencies (tools/chewing.c)
#   essay-cantonese.txt  rime-data-jyut6ping3 (CC-BY-4.0): Hong Kong word counts
set -euo pipefail
dest=${1:?usage: fetch-region.sh DEST_DIR}
fetch=$(dirname "$0")/fetch-deb.sh
"$fetch" --source "$dest/chewing.source" LGPL-2.1 "Taiwan's word frequencies" \
    libchewing3-data 0.5.1-5 \
    d7c3e3b3d54d986234548e9cd2807b29e253119e33944a07917bb7db8a7bf1f6 \
    usr/share/libchewing/dictionary.dat "$dest/chewing/dictionary.dat" \
    usr/share/libchewing/index_tree.dat "$dest/chewing/index_tree.dat"
# The package is built per architecture, its word list is the same in each:
# the amd64 build is the one pinned.
"$fetch" --source "$dest/cantonese.source" CC-BY-4.0 "Hong Kong's word counts" \
    rime-data-jyut6ping3:amd64 0.0~git20230209.e0295fa-2~deb12u1 \
    e7d0bbe46765428c731094d7d4f5882755eb0f6732cb08147c6fc89381353e97 \
    usr/share/rime-data/essay-cantonese.txt "$dest/essay-cantonese.txt"
