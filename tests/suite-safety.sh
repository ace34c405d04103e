# fanjian CLI file safety (issue 16): nothing is overwritten that was not
# asked for, special files are written through rather than replaced, trees
# are never left through symbolic links, ownership survives --in-place,
# temporaries never outlive the run, and hostile names cannot reach the
# terminal. Sourced by tests/run.sh, which provides FJ, TMP, run, ok, bad,
# check, skip, err1.

S=$TMP/safety
mkdir -p "$S"
SWAP_PRELOAD=$FANJIAN_BUILD/tests/swap-preload.so
# The shim is loaded before a sanitized fanjian's runtime, which is fine.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# A directory's entries with their kinds and contents, to compare before and after.
snapshot() {
    (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r f; do
        if [ -L "$f" ]; then printf '%s -> %s\n' "$f" "$(readlink "$f")"
        elif [ -f "$f" ]; then printf '%s = %s\n' "$f" "$(md5sum <"$f")"
        else printf '%s %s\n' "$f" "$(stat -c %F "$f")"; fi
    done)
}

# ---- 1. --rename never overwrites -------------------------------------------------

R=$S/rename
mkdir -p "$R/t/头发" "$R/t/頭髮"
echo A >"$R/t/头发.bin"
echo PRECIOUS >"$R/t/頭髮.bin"
echo inner-A >"$R/t/头发/a.bin"
echo inner-PRECIOUS >"$R/t/頭髮/a.bin"
run "$FJ" -c s2t -r "$R/t" --in-place --rename --no-progress
if [ "$rc" -eq 1 ] && [ "$(cat "$R/t/头发.bin")" = A ] && [ "$(cat "$R/t/頭髮.bin")" = PRECIOUS ] &&
    [ "$(cat "$R/t/头发/a.bin")" = inner-A ] && [ "$(cat "$R/t/頭髮/a.bin")" = inner-PRECIOUS ] &&
    grep -q '头发\.bin.*頭髮\.bin' "$TMP/err" && grep -q '头发/a\.bin.*頭髮/a\.bin' "$TMP/err"; then
    ok "safety: -r --in-place --rename: a name clash (file, merged directory) keeps both files, exit 1"
else
    bad "safety: -r --in-place --rename: a name clash (file, merged directory) keeps both files, exit 1" \
        "exit $rc: $(tr '\n' '|' <"$TMP/err")" "$(snapshot "$R/t" | tr '\n' '|')"
fi

# A converted file whose new name is taken by something the listing skips (a
# symbolic link): refused by the rename itself, not by an earlier look.
mkdir -p "$R/l"
printf '头发\n' >"$R/l/头发.txt"
ln -s elsewhere "$R/l/頭髮.txt"
run "$FJ" -c s2t -r "$R/l" --in-place --rename --no-progress
if [ "$rc" -eq 1 ] && [ "$(readlink "$R/l/頭髮.txt")" = elsewhere ] &&
    [ "$(cat "$R/l/头发.txt")" = 头发 ] && grep -q '頭髮\.txt' "$TMP/err"; then
    ok "safety: -r --in-place --rename: a converted file never replaces what holds its new name"
else
    bad "safety: -r --in-place --rename: a converted file never replaces what holds its new name" \
        "exit $rc: $(err1)" "$(snapshot "$R/l" | tr '\n' '|')"
fi
mkdir -p "$R/one"
printf '头发\n' >"$R/one/头发.txt"
ln -s nowhere "$R/one/頭髮.txt"
run "$FJ" -c s2t --in-place --rename "$R/one/头发.txt"
if [ "$rc" -eq 1 ] && [ "$(readlink "$R/one/頭髮.txt")" = nowhere ] &&
    [ "$(cat "$R/one/头发.txt")" = 头发 ] && [ ! -e "$R/one/nowhere" ] && grep -q '頭髮\.txt' "$TMP/err"; then
    ok "safety: --in-place --rename FILE: a taken new name (even a dangling link) keeps both"
else
    bad "safety: --in-place --rename FILE: a taken new name (even a dangling link) keeps both" \
        "exit $rc: $(err1)" "$(snapshot "$R/one" | tr '\n' '|')"
fi

# ---- 2. special targets: written through, never replaced ---------------------------------

P=$S/special
mkdir -p "$P"
printf '头发\n' >"$P/in.txt"
printf '頭髮\n' >"$P/expected"
mkfifo "$P/fifo"
timeout 20 cat "$P/fifo" >"$P/from-fifo" &
reader=$!
run timeout 20 "$FJ" -c s2t -o "$P/fifo" "$P/in.txt"
wait "$reader"
if [ "$rc" -eq 0 ] && cmp -s "$P/from-fifo" "$P/expected" && [ -p "$P/fifo" ]; then
    ok "safety: -o FIFO: the reader gets the conversion, the FIFO stays a FIFO"
else
    bad "safety: -o FIFO: the reader gets the conversion, the FIFO stays a FIFO" "exit $rc: $(err1)"
fi
for stream in /dev/fd/1 /proc/self/fd/1; do
    run "$FJ" -c s2t -o "$stream" "$P/in.txt"
    check "safety: -o $stream writes to standard output" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = 頭髮
done
# /dev/stdout in a private mount namespace, on a /dev of our own: a build
# that replaced it must not replace the real one.
if unshare -m --propagation private true 2>/dev/null; then
    run unshare -m --propagation private sh -c '
        mount -t tmpfs none /dev && ln -s /proc/self/fd/1 /dev/stdout &&
        ln -s /proc/self/fd/2 /dev/stderr && "$1" -c s2t -o /dev/stdout "$2" &&
        test -L /dev/stdout && test "$(ls -A /dev | wc -l)" -eq 2' sh "$FJ" "$P/in.txt"
    check "safety: -o /dev/stdout writes to standard output, the link stays" \
        test "$rc" -eq 0 -a "$(cat "$TMP/out")" = 頭髮
    # A character device, made on a tmpfs of our own (never the real /dev).
    mkdir -p "$P/dev"
    run unshare -m --propagation private sh -c '
        mount -t tmpfs none "$1" && mknod "$1/null" c 1 3 && "$2" -c s2t -o "$1/null" "$3" &&
        test -c "$1/null" && test "$(ls -A "$1")" = null' sh "$P/dev" "$FJ" "$P/in.txt"
    if [ "$rc" -eq 0 ]; then
        ok "safety: -o onto a character device writes to it, the device stays"
    elif grep -qi "permission\|not permitted" "$TMP/err"; then
        skip "safety: -o onto a character device" "mknod or mount not permitted here: $(err1)"
    else
        bad "safety: -o onto a character device writes to it, the device stays" "exit $rc: $(err1)"
    fi
else
    skip "safety: -o /dev/stdout" "unshare -m is not permitted here"
    skip "safety: -o onto a character device" "unshare -m is not permitted here"
fi
mkdir -p "$P/real"
printf 'old\n' >"$P/real/target.txt"
ln -s real/target.txt "$P/link.txt"
run "$FJ" -c s2t -o "$P/link.txt" "$P/in.txt"
if [ "$rc" -eq 0 ] && [ "$(readlink "$P/link.txt")" = real/target.txt ] &&
    cmp -s "$P/real/target.txt" "$P/expected" && [ "$(ls -A "$P/real")" = target.txt ]; then
    ok "safety: -o onto a symbolic link replaces its target, the link stays"
else
    bad "safety: -o onto a symbolic link replaces its target, the link stays" "exit $rc: $(err1)"
fi
printf '头发\n' >"$P/real/in-place.txt"
ln -s real/in-place.txt "$P/in-place-link.txt"
run "$FJ" -c s2t --in-place "$P/in-place-link.txt"
if [ "$rc" -eq 0 ] && [ -L "$P/in-place-link.txt" ] && cmp -s "$P/real/in-place.txt" "$P/expected"; then
    ok "safety: --in-place on a symbolic link converts its target, the link stays"
else
    bad "safety: --in-place on a symbolic link converts its target, the link stays" "exit $rc: $(err1)"
fi
mkfifo "$P/in-fifo"
run timeout 20 "$FJ" -c s2t --in-place "$P/in-fifo"
if [ "$rc" -eq 1 ] && [ -p "$P/in-fifo" ] && grep -q "in-fifo.*not a regular file" "$TMP/err"; then
    ok "safety: --in-place on a FIFO is refused with a message, the FIFO stays"
else
    bad "safety: --in-place on a FIFO is refused with a message, the FIFO stays" "exit $rc: $(err1)"
fi

# ---- 3. -r and files swapped for links mid-run ---------------------------------------

W=$S/swap
mkdir -p "$W/in" "$W/secret"
printf 'SECRET-ONLY-ROOT-MAY-READ 头发\n' >"$W/secret/key.txt"
printf '头发一\n' >"$W/in/a.txt"
printf '头发二\n' >"$W/in/b.txt"
if [ -r "$SWAP_PRELOAD" ]; then
    run env LD_PRELOAD="$SWAP_PRELOAD" FANJIAN_SWAP_NAME=a.txt FANJIAN_SWAP_TARGET="$W/secret/key.txt" \
        "$FJ" -c s2t -r "$W/in" -o "$W/out" --no-progress -j 1
    if [ "$rc" -eq 1 ] && [ -L "$W/in/a.txt" ] && ! grep -rq SECRET "$W/out" &&
        [ "$(cat "$W/out/b.txt")" = 頭髮二 ] && grep -q "a\.txt.*symbolic link" "$TMP/err"; then
        ok "safety: -r: a file swapped for a link after listing is skipped (exit 1), not followed"
    else
        bad "safety: -r: a file swapped for a link after listing is skipped (exit 1), not followed" \
            "exit $rc: $(tr '\n' '|' <"$TMP/err")" "$(grep -rl SECRET "$W/out" 2>/dev/null)"
    fi
    rm -f "$W/in/a.txt"
    printf '头发一\n' >"$W/in/a.txt"
    run env LD_PRELOAD="$SWAP_PRELOAD" FANJIAN_SWAP_NAME=a.txt FANJIAN_SWAP_TARGET="$W/secret/key.txt" \
        "$FJ" -c s2t -r "$W/in" --in-place --no-progress -j 1
    if [ "$rc" -eq 1 ] && [ "$(cat "$W/secret/key.txt")" = 'SECRET-ONLY-ROOT-MAY-READ 头发' ] &&
        [ -L "$W/in/a.txt" ] && [ "$(cat "$W/in/b.txt")" = 頭髮二 ]; then
        ok "safety: -r --in-place: a file swapped for a link is skipped, its target untouched"
    else
        bad "safety: -r --in-place: a file swapped for a link is skipped, its target untouched" \
            "exit $rc: $(err1)"
    fi
else
    skip "safety: -r with a file swapped for a link" "$SWAP_PRELOAD not built (make $SWAP_PRELOAD)"
fi
# An output tree whose subdirectory is a link out of it: not written through.
mkdir -p "$W/in2/sub" "$W/out2" "$W/outside"
printf '头发\n' >"$W/in2/sub/x.txt"
ln -s "$W/outside" "$W/out2/sub"
run "$FJ" -c s2t -r "$W/in2" -o "$W/out2" --no-progress
if [ "$rc" -ne 0 ] && [ -z "$(ls -A "$W/outside")" ] && [ -L "$W/out2/sub" ] &&
    grep -q "sub.*symbolic link" "$TMP/err"; then
    ok "safety: -r -o: a symbolic link in the output tree is not written through"
else
    bad "safety: -r -o: a symbolic link in the output tree is not written through" \
        "exit $rc: $(err1)" "outside: $(ls -A "$W/outside")"
fi

# ---- 4. --in-place keeps owner, group, mode, attributes and ACLs ------------------------

O=$S/owner
mkdir -p "$O/tree"
printf '头发\n' >"$O/one.txt"
printf '头发\n' >"$O/tree/two.txt"
if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null && getent group nogroup >/dev/null; then
    chown nobody:nogroup "$O/one.txt" "$O/tree/two.txt"
    chmod 640 "$O/one.txt" "$O/tree/two.txt"
    run "$FJ" -c s2t --in-place "$O/one.txt"
    a=$(stat -c %U:%G:%a "$O/one.txt")
    run "$FJ" -c s2t -r "$O/tree" --in-place --no-progress
    b=$(stat -c %U:%G:%a "$O/tree/two.txt")
    if [ "$a" = nobody:nogroup:640 ] && [ "$b" = nobody:nogroup:640 ] &&
        [ "$(cat "$O/one.txt" "$O/tree/two.txt")" = "$(printf '頭髮\n頭髮')" ]; then
        ok "safety: --in-place and -r --in-place keep owner, group and mode"
    else
        bad "safety: --in-place and -r --in-place keep owner, group and mode" "$a, $b"
    fi
else
    skip "safety: --in-place keeps owner and group" "needs root and the nobody user, nogroup group"
fi
# Extended attributes, written and read with Python (no extra tools needed).
# A POSIX ACL is the system.posix_acl_access attribute: version 2, then
# (tag, permissions, id) entries: owner rw-, user nobody r--, group r--,
# mask r--, other ---.
xattr_py='
import os, struct, sys
op, path = sys.argv[1], sys.argv[2]
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in
      [(1, 6, 0xFFFFFFFF), (2, 4, 65534), (4, 4, 0xFFFFFFFF), (0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)])
if op == "set-user":
    os.setxattr(path, "user.fanjian.test", b"kept")
elif op == "get-user":
    print(os.getxattr(path, "user.fanjian.test").decode())
elif op == "set-acl":
    os.setxattr(path, "system.posix_acl_access", acl)
elif op == "get-acl":
    print("same" if os.getxattr(path, "system.posix_acl_access") == acl else "different")
'
xattr_dir=
for d in "$O" "$FANJIAN_BUILD"; do
    printf x >"$d/xattr-probe" 2>/dev/null || continue
    if python3 -c "$xattr_py" set-user "$d/xattr-probe" 2>/dev/null; then xattr_dir=$d; fi
    rm -f "$d/xattr-probe"
    [ -n "$xattr_dir" ] && break
done
if [ -n "$xattr_dir" ]; then
    X=$xattr_dir/fanjian-xattr-$$.txt
    printf '头发\n' >"$X"
    python3 -c "$xattr_py" set-user "$X"
    run "$FJ" -c s2t --in-place "$X"
    got=$(python3 -c "$xattr_py" get-user "$X" 2>&1)
    check "safety: --in-place keeps a user.* extended attribute" test "$rc" -eq 0 -a "$got" = kept -a "$(cat "$X")" = 頭髮
    printf '头发\n' >"$X"
    if python3 -c "$xattr_py" set-acl "$X" 2>/dev/null; then
        mode_before=$(stat -c %a "$X")
        run "$FJ" -c s2t --in-place "$X"
        got=$(python3 -c "$xattr_py" get-acl "$X" 2>&1)
        check "safety: --in-place keeps a POSIX ACL (and the mode it implies)" \
            test "$rc" -eq 0 -a "$got" = same -a "$(stat -c %a "$X")" = "$mode_before"
    else
        skip "safety: --in-place keeps a POSIX ACL" "the file system refuses ACLs"
    fi
    rm -f "$X"
else
    skip "safety: --in-place keeps extended attributes" "neither $O nor $FANJIAN_BUILD accepts user.* attributes"
    skip "safety: --in-place keeps a POSIX ACL" "no file system here accepts extended attributes"
fi

# ---- 5. long names ---------------------------------------------------------------------

L=$S/long
mkdir -p "$L/tree"
long=$(printf '头%.0s' $(seq 1 83)).txt # 83 * 3 + 4 = 253 bytes, under the 255-byte limit
printf '头发\n' >"$L/in.txt"
run "$FJ" -c s2t -o "$L/$long" "$L/in.txt"
check "safety: -o a 253-byte name" test "$rc" -eq 0 -a "$(cat "$L/$long" 2>/dev/null)" = 頭髮
printf '头发\n' >"$L/tree/$long"
run "$FJ" -c s2t --in-place "$L/tree/$long"
check "safety: --in-place on a 253-byte name" test "$rc" -eq 0 -a "$(cat "$L/tree/$long")" = 頭髮
printf '头发\n' >"$L/tree/$long"
run "$FJ" -c s2t -r "$L/tree" -o "$L/out" --no-progress
check "safety: -r -o with a 253-byte name" test "$rc" -eq 0 -a "$(cat "$L/out/$long" 2>/dev/null)" = 頭髮

# ---- 6. no temporary outlives the run, whatever the signal --------------------------------

G=$S/signals
mkdir -p "$G"
for _ in $(seq 1 2000); do printf '头发干了，这是只有一个人的世界。\n'; done >"$G/big.txt"
# held_run SIGNAL [named]: a conversion reading a FIFO whose writer stays,
# so that it has its output open; then the signal. Afterwards the output
# directory holds what it held before: out.txt, unchanged. With "named",
# the file system is made to refuse unnamed files (the shim), so the output
# is a named temporary that the signal handler must remove.
held_run() {
    local sig=$1 how=${2:-} dir=$G/$1${2:-} pid writer i
    local -a env=()
    if [ "$how" = named ]; then env=(env LD_PRELOAD="$SWAP_PRELOAD" FANJIAN_NO_TMPFILE=1); fi
    rm -rf "$dir"
    mkdir -p "$dir/out"
    printf 'OLD\n' >"$dir/out/out.txt"
    mkfifo "$dir/fifo"
    (exec 3>"$dir/fifo"; printf '头发\n' >&3; sleep 30) &
    writer=$!
    "${env[@]}" "$FJ" -c s2t -o "$dir/out/out.txt" <"$dir/fifo" 2>/dev/null &
    pid=$!
    # Until it has its output open (bounded: at most 10 s).
    for i in $(seq 1 100); do
        ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "$dir/out" && break
        sleep 0.1
    done
    kill -s "$sig" "$pid" 2>/dev/null
    for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -s KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    kill "$writer" 2>/dev/null
    wait "$writer" 2>/dev/null
    local left
    left=$(ls -A "$dir/out" | tr '\n' ' ')
    local what="safety: SIG$sig during -o${how:+ (named temporary)}: no temporary left, the old output unchanged"
    if [ "$left" = "out.txt " ] && [ "$(cat "$dir/out/out.txt")" = OLD ]; then
        ok "$what"
    else
        bad "$what" "left: $left"
    fi
}
# (Its stderr hidden: the shell announces how each run died.)
for sig in USR1 ALRM KILL; do held_run "$sig" 2>/dev/null; done
if [ -r "$SWAP_PRELOAD" ]; then
    # SIGKILL cannot be caught: only unnamed files survive it. (Not SIGINT or
    # SIGQUIT: the shell starts background jobs with those ignored, and
    # fanjian leaves an ignored signal ignored.)
    for sig in USR1 ALRM TERM HUP PIPE; do held_run "$sig" named 2>/dev/null; done
else
    skip "safety: signals with a named temporary" "$SWAP_PRELOAD not built"
fi
mkdir -p "$G/xfsz"
printf 'OLD\n' >"$G/xfsz/out.txt"
# In the background, so that the shell does not announce the signal.
{
    (ulimit -f 8; exec "$FJ" -c s2t -o "$G/xfsz/out.txt" "$G/big.txt") &
    wait $!
} 2>/dev/null
xfsz_rc=$?
left=$(ls -A "$G/xfsz" | tr '\n' ' ')
if [ "$xfsz_rc" -ne 0 ] && [ "$left" = "out.txt " ] && [ "$(cat "$G/xfsz/out.txt")" = OLD ]; then
    ok "safety: SIGXFSZ (ulimit -f) during -o: no temporary left, the old output unchanged"
else
    bad "safety: SIGXFSZ (ulimit -f) during -o: no temporary left, the old output unchanged" \
        "exit $xfsz_rc, left: $left"
fi
if [ -r "$SWAP_PRELOAD" ]; then
    {
        (ulimit -f 8; exec env LD_PRELOAD="$SWAP_PRELOAD" FANJIAN_NO_TMPFILE=1 \
            "$FJ" -c s2t -o "$G/xfsz/out.txt" "$G/big.txt") &
        wait $!
    } 2>/dev/null
    xfsz_rc=$?
    left=$(ls -A "$G/xfsz" | tr '\n' ' ')
    check "safety: SIGXFSZ during -o (named temporary): no temporary left, the old output unchanged" \
        test "$xfsz_rc" -ne 0 -a "$left" = "out.txt " -a "$(cat "$G/xfsz/out.txt")" = OLD
fi

# ---- 7. an output directory inside the input tree ----------------------------------------

N=$S/nested
mkdir -p "$N/tree/sub"
printf '头发\n' >"$N/tree/a.txt"
ln -s "$N/tree/sub" "$N/into-tree"
before=$(snapshot "$N/tree")
wrong=
for out in "$N/tree/out" "$N/tree/sub/deeper/out" "$N/into-tree/out" "$N/tree/sub/../out2"; do
    run "$FJ" -c s2t -r "$N/tree" -o "$out" --no-progress
    if [ "$rc" -ne 2 ] || ! grep -q "inside the input tree" "$TMP/err" || [ "$(snapshot "$N/tree")" != "$before" ]; then
        wrong="$wrong ${out#"$N"/}"
    fi
done
check "safety: -r -o OUTDIR inside DIR (also via a link or ..) is refused, exit 2, nothing written${wrong:+ (wrong:$wrong)}" \
    test -z "$wrong"
run "$FJ" -c s2t -r "$N/tree/sub" -o "$N/tree/out3" --no-progress
check "safety: -r -o OUTDIR beside DIR (under the same parent) is accepted" test "$rc" -eq 0 -a -d "$N/tree/out3"
# The input tree inside the output directory: out/in/in/a.txt would be written over out/in/a.txt.
mkdir -p "$N/outer/in/in"
printf '头发\n' >"$N/outer/in/a.txt"
printf '干了\n' >"$N/outer/in/in/a.txt"
before=$(snapshot "$N/outer")
run "$FJ" -c s2t -r "$N/outer/in" -o "$N/outer" --no-progress
check "safety: -r DIR -o OUTDIR holding DIR is refused, exit 2, no input replaced" \
    test "$rc" -eq 2 -a "$(snapshot "$N/outer")" = "$before"

# ---- 9. hostile names in messages ---------------------------------------------------------

# formats/display.c on its own: each kind of escape, and truncation.
run_cmocka "$FANJIAN_BUILD/tests/display"

E=$S/escape
mkdir -p "$E/tree"
evil=$'red\033[31m\nline\xe2\x80\xaeevil\xff.epub'
printf 'not a zip' >"$E/tree/$evil"
run "$FJ" -c s2t "$E/missing-$evil"
lines=$(wc -l <"$TMP/err")
if [ "$rc" -ne 0 ] && ! grep -q $'\033' "$TMP/err" && [ "$lines" -eq 1 ] &&
    grep -qF 'red\x1b[31m\nline\u202eevil\xff.epub' "$TMP/err"; then
    ok "safety: a control character, bidi control or bad byte in a name is escaped in messages"
else
    bad "safety: a control character, bidi control or bad byte in a name is escaped in messages" \
        "$(od -c "$TMP/err" | head -n 4)"
fi
run "$FJ" -c s2t -r "$E/tree" -o "$E/out" --no-progress
lines=$(wc -l <"$TMP/err")
check "safety: -r messages escape hostile names (no ESC, one line per message)" \
    test "$rc" -eq 1 -a "$lines" -eq 2 -a "$(grep -c $'\033' "$TMP/err")" -eq 0

# clean --report quotes what it removes: control characters are escaped too.
printf '天才一秒记住本站地址：www.example-book.net，最快更新\033[31m无弹窗！\n正文。\n' >"$E/report.txt"
run "$FJ" clean --report "$E/report.txt"
if [ "$rc" -eq 0 ] && ! grep -q $'\033' "$TMP/err" && grep -qF '最快更新\x1b[31m无弹窗！' "$TMP/err" &&
    [ "$(cat "$TMP/out")" = "正文。" ]; then
    ok "safety: clean --report escapes control characters in the lines it quotes"
else
    bad "safety: clean --report escapes control characters in the lines it quotes" "$(od -c "$TMP/err" | head -n 3)"
fi
