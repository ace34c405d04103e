# The dictionary image as a file: what `--dict` refuses, and how fjdict
# replaces an image. Sourced by tests/run.sh, which provides FJ, TMP, run, ok,
# bad, check, skip, err1.

D=$TMP/dict
mkdir -p "$D"
FJDICT=$B/fjdict

# A small image (OpenCC's configs, each dictionary cut to 60 lines, plus 头
# and 发): compiles in a fraction of a second.
mkdir -p "$D/data/dictionary"
cp -r "$FANJIAN_OPENCC_DATA/config" "$D/data/"
for f in "$FANJIAN_OPENCC_DATA"/dictionary/*.txt; do
    head -n 60 "$f" >"$D/data/dictionary/$(basename "$f")"
done
printf '头\t頭\n发\t髮 發\n' >>"$D/data/dictionary/STCharacters.txt"
MINI=$D/mini.fjd
"$FJDICT" --compile "$D/data" -o "$MINI" >"$D/compile.log" 2>&1 ||
    bad "dict: fjdict compiles the small image" "$(tail -n 1 "$D/compile.log")"

# -- what --dict refuses ----------------------------------------------------------
# Each refusal is quick and names the problem; none waits, reads the whole
# file or crashes.

mkfifo "$D/fifo"
run timeout 5 "$FJ" --dict "$D/fifo" --compat -c s2t /dev/null
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q 'FIFO, not a regular file' "$TMP/err"; then
    ok "dict: --dict FIFO is refused at once, naming the file type"
else
    bad "dict: --dict FIFO is refused at once, naming the file type" "exit $rc (124: it waited): $(err1)"
fi

run timeout 5 "$FJ" --dict "$D" --compat -c s2t /dev/null
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q 'directory, not a regular file' "$TMP/err"; then
    ok "dict: --dict DIRECTORY is refused, naming the file type"
else
    bad "dict: --dict DIRECTORY is refused, naming the file type" "exit $rc: $(err1)"
fi

# 2 GiB that is not an image, with 1 GiB of address space: the header is
# enough to refuse it (mapping it whole would fail, reading it would be slow).
# (AddressSanitizer reserves terabytes of address space: no limit there.)
truncate -s 2G "$D/big"
limit_as=1048576
if grep -qa __asan_init "$FJ"; then limit_as=unlimited; fi
run timeout 20 bash -c 'ulimit -v "$1" && shift && exec "$@"' - "$limit_as" \
    "$FJ" --dict "$D/big" --compat -c s2t /dev/null
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q 'not a fanjian dictionary (bad magic)' "$TMP/err"; then
    ok "dict: a 2 GiB file that is not an image is refused from its header"
else
    bad "dict: a 2 GiB file that is not an image is refused from its header" "exit $rc: $(err1)"
fi
rm -f "$D/big"

# A real image with its end cut off, and one with bytes added: the message
# gives both sizes.
head -c 100000 "$FANJIAN_DICT" >"$D/truncated.fjd"
want="the file has 100000 (truncated)"
run timeout 20 "$FJ" --dict "$D/truncated.fjd" --compat -c s2t /dev/null
if [ "$rc" -eq 1 ] && grep -qF "$want" "$TMP/err"; then
    ok "dict: a truncated image is refused: $want"
else
    bad "dict: a truncated image is refused: $want" "exit $rc: $(err1)"
fi
{ cat "$MINI"; printf 'x'; } >"$D/longer.fjd"
run timeout 20 "$FJ" --dict "$D/longer.fjd" --compat -c s2t /dev/null
if [ "$rc" -eq 1 ] && grep -q 'extra bytes' "$TMP/err"; then
    ok "dict: an image with bytes added is refused"
else
    bad "dict: an image with bytes added is refused" "exit $rc: $(err1)"
fi

# -- fjdict replaces images, never rewrites them in place -------------------------

# A conversion that mapped the image before fjdict rebuilds it finishes with
# the old image intact: the rebuilt one is a new file (inode) renamed over it.
cp "$MINI" "$D/live.fjd"
old_inode=$(stat -c %i "$D/live.fjd")
mkfifo "$D/feed"
"$FJ" --dict "$D/live.fjd" --compat -c s2t <"$D/feed" >"$D/live.out" 2>"$D/live.err" &
live_pid=$!
exec 7>"$D/feed"
printf '头发\n' >&7
mapped=0
for _ in $(seq 100); do
    if grep -q "live.fjd" "/proc/$live_pid/maps" 2>/dev/null; then mapped=1; break; fi
    sleep 0.1
done
"$FJDICT" --compile "$D/data" -o "$D/live.fjd" >"$D/rebuild.log" 2>&1
rebuilt=$?
new_inode=$(stat -c %i "$D/live.fjd")
mapped_inode=$(awk '/live.fjd/ { print $5; exit }' "/proc/$live_pid/maps" 2>/dev/null)
printf '头发\n' >&7
exec 7>&-
wait "$live_pid"
live_rc=$?
if [ "$mapped" -eq 1 ] && [ "$rebuilt" -eq 0 ] && [ "$new_inode" != "$old_inode" ] &&
    [ "$mapped_inode" = "$old_inode" ] && [ "$live_rc" -eq 0 ] &&
    [ "$(cat "$D/live.out")" = "$(printf '頭髮\n頭髮')" ] && cmp -s "$D/live.fjd" "$MINI"; then
    ok "dict: fjdict rebuilds an image in use as a new inode; the running conversion finishes"
else
    bad "dict: fjdict rebuilds an image in use as a new inode; the running conversion finishes" \
        "mapped $mapped, fjdict exit $rebuilt, inode $old_inode -> $new_inode (mapped: $mapped_inode)," \
        "conversion exit $live_rc: $(head -c 100 "$D/live.out") $(head -n 1 "$D/live.err")"
fi

# The temporary has a short name: an image name near NAME_MAX (255) works.
long=$(printf 'n%.0s' $(seq 245)).fjd
run "$FJDICT" --compile "$D/data" -o "$D/$long"
if [ "$rc" -eq 0 ] && cmp -s "$D/$long" "$MINI" && [ -z "$(find "$D" -name '*.tmp*')" ]; then
    ok "dict: fjdict writes an image whose name is 249 bytes long, no temporary left"
else
    bad "dict: fjdict writes an image whose name is 249 bytes long, no temporary left" "exit $rc: $(err1)"
fi
rm -f "$D/$long"

# --decompile replaces its text files the same way.
mkdir -p "$D/src"
"$FJDICT" --decompile "$MINI" "$D/src" >/dev/null 2>&1
txt_inode=$(stat -c %i "$D/src/STCharacters.txt")
run "$FJDICT" --decompile "$MINI" "$D/src"
if [ "$rc" -eq 0 ] && [ "$(stat -c %i "$D/src/STCharacters.txt")" != "$txt_inode" ] &&
    grep -q "$(printf '^发\t髮 發$')" "$D/src/STCharacters.txt"; then
    ok "dict: fjdict --decompile replaces its files (new inode), whole"
else
    bad "dict: fjdict --decompile replaces its files (new inode), whole" "exit $rc: $(err1)"
fi
