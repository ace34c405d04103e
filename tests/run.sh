#!/usr/bin/env bash
# fanjian test driver: the cmocka programs, then the command-line tool.
#
#   FANJIAN_BUILD=build tests/run.sh       (what `make check-plain` runs)
#
# Every check counts as one test: each cmocka test individually (from the
# programs' summaries) and each shell check below. The last line is the only
# summary: "N passed, M failed" (", K skipped" when some were skipped); the
# exit status is non-zero when anything failed.
#
# Environment (all optional):
#   FANJIAN_BUILD        build directory (default: build)
#   FANJIAN_DICT         dictionary image (default: $FANJIAN_BUILD/fanjian.fjd)
#   FANJIAN_OPENCC_DATA  OpenCC text data (default: $FANJIAN_BUILD/opencc-data,
#                        else build/opencc-data)
#   FANJIAN_SHARED       shared material (default: ../shared beside the repository);
#                        tests that need it are skipped when it is absent
#   FANJIAN_TEST_QUICK   1: smaller randomized loops (default: 1 when the test
#                        programs are built with AddressSanitizer, else 0)
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

B=${FANJIAN_BUILD:-build}
export FANJIAN_BUILD=$B
export FANJIAN_DICT=${FANJIAN_DICT:-$B/fanjian.fjd}
if [ -z "${FANJIAN_OPENCC_DATA:-}" ]; then
    if [ -d "$B/opencc-data/dictionary" ]; then
        FANJIAN_OPENCC_DATA=$B/opencc-data
    else
        FANJIAN_OPENCC_DATA=build/opencc-data
    fi
fi
export FANJIAN_OPENCC_DATA
export FANJIAN_SHARED=${FANJIAN_SHARED:-$ROOT/../shared}
export FANJIAN_CASES=${FANJIAN_CASES:-$ROOT/tests/cases}
if [ -z "${FANJIAN_TEST_QUICK:-}" ]; then
    FANJIAN_TEST_QUICK=0
    if grep -qa __asan_init "$B/tests/unit" 2>/dev/null; then
        FANJIAN_TEST_QUICK=1
    fi
fi
export FANJIAN_TEST_QUICK

FJ=$B/fanjian
SHARED_COMPAT=$FANJIAN_SHARED/opencc/compat
# The profiles, as the library lists them (the image's; "CLI --list" below
# checks it against data/profiles.tsv and that there are 16).
PROFILES=$("$FJ" --list 2>/dev/null)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fanjian-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

pass=0
fail=0
skipped=0
ok() { pass=$((pass + 1)); printf 'PASS  %s\n' "$1"; }
bad() {
    fail=$((fail + 1))
    printf 'FAIL  %s\n' "$1"
    if [ $# -gt 1 ]; then printf '      %s\n' "${@:2}"; fi
}
skip() { skipped=$((skipped + 1)); printf 'SKIP  %s: %s\n' "$1" "$2"; }
# check NAME COMMAND...: passes when the command succeeds.
check() {
    local name=$1
    shift
    if "$@"; then ok "$name"; else bad "$name"; fi
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# run CMD...: runs with stdout, stderr and status in $TMP/out, $TMP/err, $rc.
rc=0
run() {
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}
# The first line of stderr, for messages.
err1() { head -n 1 "$TMP/err"; }

# ---- EPUBs the tests put together -------------------------------------------------
# epub_skeleton DIR: the mimetype and a container naming OEBPS/content.opf.
epub_skeleton() {
    mkdir -p "$1/META-INF" "$1/OEBPS"
    printf 'application/epub+zip' >"$1/mimetype"
    cat >"$1/META-INF/container.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
XML
}
# epub_pack DIR BOOK (an absolute path): mimetype first and stored, as the format wants.
epub_pack() {
    rm -f "$2"
    (cd "$1" && zip -q -X0 "$2" mimetype && zip -q -X9r "$2" META-INF OEBPS)
}
# epubcheck_all BOOK...: 0 when Debian's epubcheck passes every book, 1 when
# it fails one (its words in $TMP/epubcheck.log), 2 when it is not installed.
# It reads ASCII-named copies: without a UTF-8 locale Java cannot open 青云志.epub.
epubcheck_all() {
    local jar=/usr/share/java/epubcheck.jar book status=0 n=0
    command -v java >/dev/null && [ -r "$jar" ] || return 2
    : >"$TMP/epubcheck.log"
    for book in "$@"; do
        n=$((n + 1))
        cp "$book" "$TMP/epubcheck-$n.epub" || return 1
        if ! java -jar "$jar" -q "$TMP/epubcheck-$n.epub" >>"$TMP/epubcheck.log" 2>&1; then
            echo "($book fails)" >>"$TMP/epubcheck.log"
            status=1
        fi
        rm -f "$TMP/epubcheck-$n.epub"
    done
    return "$status"
}

# ---- cmocka programs ------------------------------------------------------------

run_cmocka() {
    local bin=$1 name
    name=$(basename "$bin")
    if [ ! -x "$bin" ]; then
        bad "$name: $bin not built"
        return
    fi
    local start log=$TMP/$name.log
    start=$(now)
    echo "== $name (FANJIAN_TEST_QUICK=$FANJIAN_TEST_QUICK)"
    "$bin" >"$log" 2>&1
    local status=$?
    cat "$log"
    local p f s
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\..*/\1/p' "$log" | awk '{ n += $1 } END { print n + 0 }')
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:.*/\1/p' "$log" | awk '{ n += $1 } END { print n + 0 }')
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:.*/\1/p' "$log" | awk '{ n += $1 } END { print n + 0 }')
    pass=$((pass + p))
    fail=$((fail + f))
    skipped=$((skipped + s))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        # Crashed, killed by a sanitizer, or its setup failed: count it once.
        bad "$name exited with status $status without reporting a failed test"
    fi
    echo "== $name: $p passed, $f failed, $s skipped in $(elapsed "$start") s"
}

T0=$(now)
run_cmocka "$B/tests/unit"
run_cmocka "$B/tests/pipeline"
run_cmocka "$B/tests/user"
run_cmocka "$B/tests/inspect"
run_cmocka "$B/tests/parallel"
run_cmocka "$B/tests/cases"
run_cmocka "$B/tests/text"
run_cmocka "$B/tests/encoding"
run_cmocka "$B/tests/markup"
run_cmocka "$B/tests/epub"

# ---- command-line tool ------------------------------------------------------------

echo "== command-line tool"
if [ ! -x "$FJ" ]; then
    bad "CLI: $FJ not built"
else
    CLI_START=$(now)

    # -- the case files, through the CLI ------------------------------------------
    # Fields use the escapes \t \n \r \\ \xHH, which printf %b understands.
    # A file whose first line is "# mode: default" holds default-mode cases,
    # "# mode: thorough" cases of --repair=thorough; the others hold
    # OpenCC-compatible ones; "# cli: OPTIONS" adds CLI
    # options. The pseudo-profiles "detect"
    # (expected: the label `fanjian detect` prints, before its encoding) and "clean" (expected:
    # drop or keep, by `fanjian clean`) test those commands instead.
    # cli_cases FILE LABEL
    cli_cases() {
        local f=$1 label=$2 mode=--compat lineno=0 line tabs prof rest input expected name
        case "$(head -n 1 "$f")" in
            "# mode: default") mode= ;;
            "# mode: thorough") mode=--repair=thorough ;;
        esac
        # "# cli: OPTIONS" in a file: the CLI runs its cases with OPTIONS too.
        local cli_opts
        cli_opts=$(sed -n 's/^# cli: //p' "$f" | head -n 1)
        while IFS= read -r line || [ -n "$line" ]; do
            lineno=$((lineno + 1))
            case $line in '' | '#'*) continue ;; esac
            tabs=${line//[^$'\t']/}
            if [ "${#tabs}" -ne 2 ]; then
                bad "CLI $label:$lineno" "want exactly three tab-separated fields"
                continue
            fi
            prof=${line%%$'\t'*}
            rest=${line#*$'\t'}
            input=${rest%%$'\t'*}
            expected=${rest#*$'\t'}
            name="CLI $label:$lineno $prof"
            printf '%b' "$input" >"$TMP/case.in"
            case $prof in
            detect)
                # the label; the encoding after it is checked in cli-files.sh
                printf '%s\n' "$expected" >"$TMP/case.exp"
                run "$FJ" detect <"$TMP/case.in"
                sed -i 's/ ([^()]*)$//' "$TMP/out" ;;
            repair)
                # damaged Traditional text: t2tw's default mode repairs it
                printf '%b' "$expected" >"$TMP/case.exp"
                run "$FJ" -c t2tw "$TMP/case.in" </dev/null ;;
            to:*)
                # target-only conversion (tests/cases/to.tsv)
                printf '%b' "$expected" >"$TMP/case.exp"
                run "$FJ" --to "${prof#to:}" "$TMP/case.in" </dev/null ;;
            clean)
                case $expected in
                drop) : >"$TMP/case.exp" ;;
                keep) cp "$TMP/case.in" "$TMP/case.exp" ;;
                *) bad "$name" "expected drop or keep, not $expected"; continue ;;
                esac
                run "$FJ" clean "$TMP/case.in" </dev/null ;;
            cleaned)
                # the exact line that remains (tests/cases/clean-spans.tsv)
                printf '%b' "$expected" >"$TMP/case.exp"
                run "$FJ" clean "$TMP/case.in" </dev/null ;;
            *)
                printf '%b' "$expected" >"$TMP/case.exp"
                run "$FJ" $mode $cli_opts -c "$prof" "$TMP/case.in" </dev/null ;;
            esac
            if [ "$rc" -ne 0 ]; then
                bad "$name" "exit status $rc: $(err1)"
            elif ! cmp -s "$TMP/out" "$TMP/case.exp"; then
                bad "$name" "expected: $(od -An -c "$TMP/case.exp" | tr -s ' ' | head -c 300)" \
                    "got:      $(od -An -c "$TMP/out" | tr -s ' ' | head -c 300)"
            else
                ok "$name"
            fi
        done <"$f"
    }
    for f in "$FANJIAN_CASES"/*.tsv; do
        [ -e "$f" ] || { bad "CLI cases: no .tsv files in $FANJIAN_CASES"; break; }
        cli_cases "$f" "$(basename "$f")"
    done
    # The shared detection, clean-up and repair cases (tests/cases.c runs them
    # through the library).
    for f in detect.tsv clean.tsv repair.tsv; do
        if [ -r "$FANJIAN_SHARED/cases/$f" ]; then
            cli_cases "$FANJIAN_SHARED/cases/$f" "shared/cases/$f"
        else
            skip "CLI shared/cases/$f" "$FANJIAN_SHARED/cases/$f not found (no ../shared)"
        fi
    done

    # -- OpenCC 1.4.2's output on the compat input ---------------------------------
    if [ -r "$SHARED_COMPAT/input.txt" ]; then
        for p in $PROFILES; do
            rm -f "$TMP/compat.out"
            run "$FJ" --compat -c "$p" -i "$SHARED_COMPAT/input.txt" -o "$TMP/compat.out"
            if [ "$rc" -eq 0 ] && [ ! -s "$TMP/out" ] && cmp -s "$TMP/compat.out" "$SHARED_COMPAT/$p.txt"; then
                ok "CLI compat $p (-i/-o)"
            else
                bad "CLI compat $p (-i/-o)" "exit $rc; $(cmp "$TMP/compat.out" "$SHARED_COMPAT/$p.txt" 2>&1 | head -n 1)"
            fi
            "$FJ" --compat -c "$p" <"$SHARED_COMPAT/input.txt" >"$TMP/compat.out" 2>"$TMP/err"
            rc=$?
            if [ "$rc" -eq 0 ] && cmp -s "$TMP/compat.out" "$SHARED_COMPAT/$p.txt"; then
                ok "CLI compat $p (stdin/stdout)"
            else
                bad "CLI compat $p (stdin/stdout)" "exit $rc; $(cmp "$TMP/compat.out" "$SHARED_COMPAT/$p.txt" 2>&1 | head -n 1)"
            fi
        done
    else
        for p in $PROFILES; do
            skip "CLI compat $p (-i/-o)" "$SHARED_COMPAT/input.txt not found (no ../shared)"
            skip "CLI compat $p (stdin/stdout)" "$SHARED_COMPAT/input.txt not found (no ../shared)"
        done
    fi

    # -- options and behaviour ------------------------------------------------------
    printf '%s\n' '这是只有一个人的世界，头发干了，鼠标和打印机。' >"$TMP/good.txt"
    # OpenCC's maximum matching makes the classic mistakes (隻有, 幹了); the
    # default mode does not.
    printf '%s\n' '這是隻有一個人的世界，頭髮幹了，鼠標和打印機。' >"$TMP/good.compat"
    printf '%s\n' '這是只有一個人的世界，頭髮乾了，鼠標和打印機。' >"$TMP/good.s2t"

    run "$FJ" --compat -c s2t "$TMP/good.txt"
    check "CLI --compat -c s2t FILE" cmp -s "$TMP/out" "$TMP/good.compat"

    run "$FJ" -c s2t "$TMP/good.txt"
    check "CLI -c s2t FILE (default mode)" cmp -s "$TMP/out" "$TMP/good.s2t"

    # Start-up: a plain conversion loads none of the libraries that only
    # some inputs need (formats/dynload.h); each would cost every run time.
    LD_DEBUG=files "$FJ" -c s2t "$TMP/good.txt" 2>"$TMP/ld.txt" >/dev/null
    check "CLI plain conversion loads no expat, PCRE2, libzip, uchardet, libmicrohttpd, libmarisa" \
        sh -c "grep -q 'file=libjansson' '$TMP/ld.txt' &&
               ! grep -Eq 'file=lib(expat|pcre2|zip|uchardet|microhttpd|marisa|fanjian-marisa)' '$TMP/ld.txt'"
    run "$FJ" -c s2t.json "$TMP/good.txt"
    check "CLI -c s2t.json accepted" cmp -s "$TMP/out" "$TMP/good.s2t"

    run "$FJ" -c "$FANJIAN_OPENCC_DATA/config/s2t.json" "$TMP/good.txt"
    check "CLI -c DIR/s2t.json accepted" cmp -s "$TMP/out" "$TMP/good.s2t"
    run "$FJ" -c s2t --fsync -o "$TMP/synced.txt" "$TMP/good.txt"
    check "CLI --fsync -o writes the same output" cmp -s "$TMP/synced.txt" "$TMP/good.s2t"

    run "$FJ" --config=s2t --input="$TMP/good.txt"
    check "CLI --config=P --input=F" cmp -s "$TMP/out" "$TMP/good.s2t"

    run "$FJ" -c s2t - <"$TMP/good.txt"
    check "CLI '-' reads standard input" cmp -s "$TMP/out" "$TMP/good.s2t"

    # The dictionary next to the program is found without FANJIAN_DICT.
    if [ -r "$B/fanjian.fjd" ]; then
        (unset FANJIAN_DICT; "$FJ" -c s2t "$TMP/good.txt" >"$TMP/out" 2>"$TMP/err")
        rc=$?
        check "CLI finds the dictionary beside the program" \
            test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "$(cat "$TMP/good.s2t")"
    fi

    run "$FJ" --list
    # The library's table, the one list: its first column.
    awk -F '\t' '!/^#/ && NF { print $1 }' data/profiles.tsv | sort >"$TMP/profiles.exp"
    sort "$TMP/out" >"$TMP/profiles.got"
    if [ "$rc" -eq 0 ] && [ "$(wc -l <"$TMP/out")" -eq 16 ] && cmp -s "$TMP/profiles.got" "$TMP/profiles.exp"; then
        ok "CLI --list prints the 16 profiles"
    else
        bad "CLI --list prints the 16 profiles" "exit $rc, $(wc -l <"$TMP/out") lines: $(tr '\n' ' ' <"$TMP/out")" "stderr: $(err1)"
    fi

    run "$FJ" --version
    if [ "$rc" -eq 0 ] && grep -Eq '^fanjian [0-9]+\.[0-9]+\.[0-9]+' "$TMP/out" && [ "$(wc -l <"$TMP/out")" -eq 1 ]; then
        ok "CLI --version"
    else
        bad "CLI --version" "exit $rc: $(head -c 200 "$TMP/out")" "stderr: $(err1)"
    fi

    run "$FJ" --help
    if [ "$rc" -eq 0 ] && grep -q 'usage:' "$TMP/out"; then ok "CLI --help"; else bad "CLI --help" "exit $rc, stderr: $(err1)"; fi

    # Unknown profile: non-zero, one line on stderr, nothing on stdout.
    run "$FJ" -c nonesuch "$TMP/good.txt"
    if [ "$rc" -ne 0 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q nonesuch "$TMP/err"; then
        ok "CLI unknown profile"
    else
        bad "CLI unknown profile" "exit $rc, stdout $(wc -c <"$TMP/out") bytes, stderr: $(tr '\n' '|' <"$TMP/err")"
    fi

    # No profile: s2t, as OpenCC (issue 21; before, an error). -c none only re-encodes.
    run "$FJ" "$TMP/good.txt"
    if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$TMP/good.s2t" && [ ! -s "$TMP/err" ]; then ok "CLI no profile given: s2t"; else bad "CLI no profile given: s2t" "exit $rc: $(err1)"; fi

    run "$FJ" -c s2t --no-such-option "$TMP/good.txt"
    if [ "$rc" -ne 0 ] && [ ! -s "$TMP/out" ] && grep -q -- --no-such-option "$TMP/err"; then
        ok "CLI unknown option"
    else
        bad "CLI unknown option" "exit $rc: $(err1)"
    fi

    run "$FJ" -c
    if [ "$rc" -ne 0 ] && [ -s "$TMP/err" ]; then ok "CLI -c without a value"; else bad "CLI -c without a value" "exit $rc"; fi

    # Missing input: non-zero, names the file; -o not created.
    rm -f "$TMP/new.out"
    run "$FJ" -c s2t -o "$TMP/new.out" "$TMP/missing.txt"
    if [ "$rc" -ne 0 ] && grep -q "missing.txt" "$TMP/err" && [ ! -e "$TMP/new.out" ]; then
        ok "CLI missing input file: message, -o not created"
    else
        bad "CLI missing input file: message, -o not created" "exit $rc, stderr: $(err1), output exists: $([ -e "$TMP/new.out" ] && echo yes || echo no)"
    fi
    run "$FJ" -c s2t -i "$TMP/missing.txt"
    if [ "$rc" -ne 0 ] && grep -q "missing.txt" "$TMP/err" && [ ! -s "$TMP/out" ]; then
        ok "CLI missing -i file"
    else
        bad "CLI missing -i file" "exit $rc, stderr: $(err1)"
    fi

    # -o onto an existing file, failing half-way (second input missing): the
    # old content stays, and no temporary file is left beside it.
    mkdir -p "$TMP/outdir"
    printf 'old content\n' >"$TMP/outdir/out.txt"
    run "$FJ" -c s2t -o "$TMP/outdir/out.txt" "$TMP/good.txt" "$TMP/missing.txt"
    if [ "$rc" -ne 0 ] && [ "$(cat "$TMP/outdir/out.txt")" = "old content" ] && grep -q missing.txt "$TMP/err"; then
        ok "CLI failed run leaves an existing -o file untouched"
    else
        bad "CLI failed run leaves an existing -o file untouched" "exit $rc, file now: $(head -c 100 "$TMP/outdir/out.txt")"
    fi
    leftovers=$(find "$TMP/outdir" -type f ! -name out.txt | wc -l)
    check "CLI failed run leaves no temporary file" test "$leftovers" -eq 0

    # A successful -o replaces the file and keeps its permissions.
    chmod 600 "$TMP/outdir/out.txt"
    run "$FJ" -c s2t -o "$TMP/outdir/out.txt" "$TMP/good.txt"
    if [ "$rc" -eq 0 ] && cmp -s "$TMP/outdir/out.txt" "$TMP/good.s2t" && [ ! -s "$TMP/out" ]; then
        ok "CLI -o replaces an existing file"
    else
        bad "CLI -o replaces an existing file" "exit $rc: $(err1)"
    fi
    check "CLI -o keeps the file's permissions" test "$(stat -c %a "$TMP/outdir/out.txt")" = 600
    leftovers=$(find "$TMP/outdir" -type f ! -name out.txt | wc -l)
    check "CLI -o leaves no temporary file" test "$leftovers" -eq 0

    # Unwritable output location.
    run "$FJ" -c s2t -o "$TMP/no/such/dir/out.txt" "$TMP/good.txt"
    if [ "$rc" -ne 0 ] && grep -q "out.txt" "$TMP/err"; then
        ok "CLI -o into a missing directory"
    else
        bad "CLI -o into a missing directory" "exit $rc, stderr: $(err1)"
    fi
    run "$FJ" -c s2t -o "$TMP/good.txt/out.txt" "$TMP/good.txt"
    if [ "$rc" -ne 0 ] && [ -s "$TMP/err" ]; then
        ok "CLI -o under a regular file"
    else
        bad "CLI -o under a regular file" "exit $rc"
    fi
    mkdir -p "$TMP/ro"
    chmod 555 "$TMP/ro"
    if [ "$(id -u)" -eq 0 ] || touch "$TMP/ro/probe" 2>/dev/null; then
        # Root ignores permissions; a directory that cannot exist fails for anyone.
        printf 'x' >"$TMP/notadir"
        run "$FJ" -c s2t -o "$TMP/notadir/out.txt" "$TMP/good.txt"
        if [ "$rc" -ne 0 ] && grep -q "out.txt" "$TMP/err" && [ "$(cat "$TMP/notadir")" = x ]; then
            ok "CLI -o into a path that cannot be created"
        else
            bad "CLI -o into a path that cannot be created" "exit $rc, stderr: $(err1)"
        fi
    else
        run "$FJ" -c s2t -o "$TMP/ro/out.txt" "$TMP/good.txt"
        if [ "$rc" -ne 0 ] && grep -q "out.txt" "$TMP/err" && [ ! -e "$TMP/ro/out.txt" ]; then
            ok "CLI -o into a read-only directory"
        else
            bad "CLI -o into a read-only directory" "exit $rc, stderr: $(err1)"
        fi
    fi
    chmod 755 "$TMP/ro"

    # Output that cannot be written.
    if [ -w /dev/full ]; then
        "$FJ" -c s2t "$TMP/good.txt" >/dev/full 2>"$TMP/err"
        rc=$?
        if [ "$rc" -ne 0 ] && [ -s "$TMP/err" ]; then
            ok "CLI write error on /dev/full"
        else
            bad "CLI write error on /dev/full" "exit $rc, stderr: $(err1)"
        fi
        # Large enough to fill the internal buffers several times.
        for _ in $(seq 1 2000); do cat "$TMP/good.txt"; done >"$TMP/big.txt"
        "$FJ" -c s2twp "$TMP/big.txt" >/dev/full 2>"$TMP/err"
        rc=$?
        if [ "$rc" -ne 0 ] && [ -s "$TMP/err" ]; then
            ok "CLI write error on /dev/full (large input)"
        else
            bad "CLI write error on /dev/full (large input)" "exit $rc"
        fi
    else
        skip "CLI write error on /dev/full" "/dev/full not available"
        skip "CLI write error on /dev/full (large input)" "/dev/full not available"
    fi

    # Dictionaries: damaged, truncated, missing.
    if [ -r "$FANJIAN_DICT" ]; then
        cp "$FANJIAN_DICT" "$TMP/damaged.fjd"
        size=$(stat -c %s "$TMP/damaged.fjd")
        printf '\x55' | dd of="$TMP/damaged.fjd" bs=1 seek=$((size / 2)) conv=notrunc status=none
        if cmp -s "$TMP/damaged.fjd" "$FANJIAN_DICT"; then
            printf '\xAA' | dd of="$TMP/damaged.fjd" bs=1 seek=$((size / 2)) conv=notrunc status=none
        fi
        run "$FJ" --dict "$TMP/damaged.fjd" -c s2t "$TMP/good.txt"
        if [ "$rc" -ne 0 ] && [ ! -s "$TMP/out" ] && [ -s "$TMP/err" ]; then
            ok "CLI --dict damaged image"
        else
            bad "CLI --dict damaged image" "exit $rc, stderr: $(err1)"
        fi
        head -c 1000 "$FANJIAN_DICT" >"$TMP/short.fjd"
        run "$FJ" --dict "$TMP/short.fjd" -c s2t "$TMP/good.txt"
        if [ "$rc" -ne 0 ] && [ ! -s "$TMP/out" ] && [ -s "$TMP/err" ]; then
            ok "CLI --dict truncated image"
        else
            bad "CLI --dict truncated image" "exit $rc"
        fi
        FANJIAN_DICT=$TMP/damaged.fjd "$FJ" -c s2t "$TMP/good.txt" >"$TMP/out" 2>"$TMP/err"
        rc=$?
        if [ "$rc" -ne 0 ] && [ ! -s "$TMP/out" ] && [ -s "$TMP/err" ]; then
            ok "CLI FANJIAN_DICT damaged image"
        else
            bad "CLI FANJIAN_DICT damaged image" "exit $rc"
        fi
    fi
    run "$FJ" --dict "$TMP/nonexistent.fjd" -c s2t "$TMP/good.txt"
    if [ "$rc" -ne 0 ] && grep -q nonexistent.fjd "$TMP/err"; then
        ok "CLI --dict missing image names it"
    else
        bad "CLI --dict missing image names it" "exit $rc, stderr: $(err1)"
    fi

    # Several inputs are one text: a phrase split across two files still
    # converts as a phrase (头|发 -> 頭髮, not 頭發).
    printf '%s' '我的头' >"$TMP/part1.txt"
    printf '%s\n' '发干了' >"$TMP/part2.txt"
    run "$FJ" --compat -c s2t "$TMP/part1.txt" "$TMP/part2.txt"
    check "CLI FILE FILE concatenates (phrase across files)" test "$(cat "$TMP/out")" = '我的頭髮幹了'
    run "$FJ" -c s2t "$TMP/part1.txt" "$TMP/part2.txt"
    check "CLI FILE FILE concatenates (default mode)" test "$(cat "$TMP/out")" = '我的頭髮乾了'
    run "$FJ" --compat -c s2t -i "$TMP/part1.txt" "$TMP/part2.txt"
    check "CLI -i FILE plus FILE concatenates" test "$(cat "$TMP/out")" = '我的頭髮幹了'
    run "$FJ" -c s2t "$TMP/good.txt" "$TMP/good.txt" "$TMP/good.txt"
    cat "$TMP/good.s2t" "$TMP/good.s2t" "$TMP/good.s2t" >"$TMP/three.exp"
    check "CLI three FILEs" cmp -s "$TMP/out" "$TMP/three.exp"
    # An empty file converts to nothing.
    : >"$TMP/empty.txt"
    run "$FJ" -c s2t "$TMP/empty.txt"
    check "CLI empty input" test "$rc" -eq 0 -a ! -s "$TMP/out"

    # Streaming through a pipe in small writes gives the same output.
    if [ -r "$SHARED_COMPAT/input.txt" ]; then
        # Whole lines: cut inside a character, both sides were only the same error.
        head -c 40000 "$SHARED_COMPAT/input.txt" | sed '$d' >"$TMP/part.txt"
        for m in --compat ""; do
            "$FJ" $m -c s2twp "$TMP/part.txt" >"$TMP/whole.out" 2>/dev/null
            dd if="$TMP/part.txt" bs=7 status=none | "$FJ" $m -c s2twp >"$TMP/piped.out" 2>/dev/null
            check "CLI pipe input equals file input ${m:-(default mode)}" cmp -s "$TMP/whole.out" "$TMP/piped.out"
        done
    fi

    # -- typography: --quotes and --punct ------------------------------------------------
    printf '%s\n' '他说：“你好，‘朋友’。”等等。。。' >"$TMP/quotes.txt"
    run "$FJ" -c s2twp "$TMP/quotes.txt"
    check "CLI s2twp writes Taiwan quotation marks by default" \
        test "$(cat "$TMP/out")" = '他說：「你好，『朋友』。」等等。。。'
    run "$FJ" -c s2tw "$TMP/quotes.txt"
    check "CLI s2tw keeps quotation marks" test "$(cat "$TMP/out")" = '他說：“你好，‘朋友’。”等等。。。'
    run "$FJ" -c s2tw --quotes=tw --punct "$TMP/quotes.txt"
    check "CLI --quotes=tw --punct" test "$(cat "$TMP/out")" = '他說：「你好，『朋友』。」等等……'
    run "$FJ" -c s2twp --quotes=keep "$TMP/quotes.txt"
    check "CLI --quotes=keep overrides s2twp" test "$(cat "$TMP/out")" = '他說：“你好，‘朋友’。”等等。。。'
    run "$FJ" --compat -c s2twp "$TMP/quotes.txt"
    check "CLI --compat keeps quotation marks" test "$(cat "$TMP/out")" = '他說：“你好，‘朋友’。”等等。。。'
    printf '%s\n' '他說：「你好」' >"$TMP/quotes-tw.txt"
    run "$FJ" -c tw2sp "$TMP/quotes-tw.txt"
    check "CLI tw2sp writes mainland quotation marks" test "$(cat "$TMP/out")" = '他说：“你好”'
    run "$FJ" -c s2tw --quotes=fancy "$TMP/quotes.txt"
    check "CLI --quotes with a bad style" test "$rc" -ne 0 -a -s "$TMP/err"

    # -- fanjian detect ---------------------------------------------------------------
    printf '%s\n' '这是简体中文。' >"$TMP/simp.txt"
    printf '%s\n' '這是繁體中文。' >"$TMP/trad.txt"
    printf '%s' '这里有简体，這裡有繁體，兩者混在一起了。' >"$TMP/mixed.txt"
    run "$FJ" detect "$TMP/simp.txt" "$TMP/trad.txt"
    printf '%s\n' "$TMP/simp.txt: simplified (UTF-8)" "$TMP/trad.txt: traditional (UTF-8)" >"$TMP/detect.exp"
    check "CLI detect FILE FILE: label and encoding" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "$(cat "$TMP/detect.exp")"
    run "$FJ" detect <"$TMP/trad.txt"
    check "CLI detect on standard input prints the label and encoding alone" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "traditional (UTF-8)"
    run "$FJ" detect "$TMP/simp.txt" "$TMP/missing.txt" "$TMP/trad.txt"
    if [ "$rc" -ne 0 ] && grep -q missing.txt "$TMP/err" && cmp -s "$TMP/out" "$TMP/detect.exp"; then
        ok "CLI detect: an unreadable file fails, the others are reported"
    else
        bad "CLI detect: an unreadable file fails, the others are reported" "exit $rc: $(err1)" "$(cat "$TMP/out")"
    fi
    run "$FJ" detect --json "$TMP/mixed.txt"
    exp_json="{\"file\":\"$TMP/mixed.txt\",\"format\":\"text\",\"encoding\":\"UTF-8\",\"script\":\"mixed\",\"confidence\":0.875,\"han\":17,\"simplified\":3,\"traditional\":4,\"damage\":null,\"spans\":[{\"offset\":0,\"length\":18,\"script\":\"simplified\"}]}"
    check "CLI detect --json: format, encoding, label, confidence, counts, damage, spans" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "$exp_json"
    printf 'x' >"$TMP/a\"b.txt"
    run "$FJ" detect --json - "$TMP/a\"b.txt" <"$TMP/simp.txt"
    if [ "$rc" -eq 0 ] && [ "$(wc -l <"$TMP/out")" -eq 2 ] && grep -q '^{"file":"-","format":"text","encoding":"UTF-8","script":"simplified"' "$TMP/out" &&
        grep -Fq 'a\"b.txt","format":"text","encoding":"UTF-8","script":"none","confidence":1.000,"han":0,"simplified":0,"traditional":0,"damage":null,"spans":[]}' "$TMP/out"; then
        ok "CLI detect --json: one object per input, names escaped"
    else
        bad "CLI detect --json: one object per input, names escaped" "exit $rc: $(cat "$TMP/out")"
    fi
    run "$FJ" detect --no-such-option
    check "CLI detect: unknown option" test "$rc" -ne 0 -a -s "$TMP/err"

    # -- fanjian clean and --clean ---------------------------------------------------------
    printf 'a\r\n（本章完）\r\n  \r\n本章未完，请点击下一页继续阅读\r\nlast' >"$TMP/crlf.txt"
    run "$FJ" clean "$TMP/crlf.txt"
    check "CLI clean keeps CRLF and a missing final newline" test "$rc" -eq 0 -a "$(od -An -c "$TMP/out" | tr -d ' \n')" = 'a\r\n\r\nlast'
    run "$FJ" clean --report "$TMP/crlf.txt"
    printf '%s\n' "$TMP/crlf.txt:2:1: （本章完）" "$TMP/crlf.txt:4:1: 本章未完，请点击下一页继续阅读" \
        "fanjian: $TMP/crlf.txt: removed 2 spans (2 whole lines), 20 characters" >"$TMP/report.exp"
    if [ "$rc" -eq 0 ] && cmp -s "$TMP/err" "$TMP/report.exp"; then
        ok "CLI clean --report lists FILE:LINE:COLUMN: text on stderr, then a summary"
    else
        bad "CLI clean --report lists FILE:LINE:COLUMN: text on stderr, then a summary" "exit $rc: $(tr '\n' '|' <"$TMP/err")"
    fi
    # A notice inside a paragraph: only it goes, the story stays byte for byte.
    printf '他转身离去。天才一秒记住本站地址：www.biquge.cc 最快更新！众人面面相觑。\n' >"$TMP/inside.txt"
    run "$FJ" clean --report <"$TMP/inside.txt"
    printf '%s\n' 'standard input:1:7: 天才一秒记住本站地址：www.biquge.cc 最快更新！' \
        'fanjian: standard input: removed 1 spans (0 whole lines), 30 characters' >"$TMP/report.exp"
    if [ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = '他转身离去。众人面面相觑。' ] && cmp -s "$TMP/err" "$TMP/report.exp"; then
        ok "CLI clean removes a notice inside a paragraph and keeps the story"
    else
        bad "CLI clean removes a notice inside a paragraph and keeps the story" "exit $rc: $(cat "$TMP/out") | $(tr '\n' '|' <"$TMP/err")"
    fi
    run "$FJ" -c s2t --clean --report "$TMP/inside.txt"
    if [ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = '他轉身離去。衆人面面相覷。' ] && grep -q ':1:7: 天才一秒记住' "$TMP/err" &&
        grep -q 'removed 1 spans (0 whole lines), 30 characters$' "$TMP/err"; then
        ok "CLI -c s2t --clean --report: the span goes, then the rest is converted"
    else
        bad "CLI -c s2t --clean --report: the span goes, then the rest is converted" "exit $rc: $(cat "$TMP/out") | $(tr '\n' '|' <"$TMP/err")"
    fi
    run "$FJ" clean --report - "$TMP/crlf.txt" <"$TMP/crlf.txt"
    if [ "$rc" -eq 0 ] && [ "$(grep -c ':2:1: ' "$TMP/err")" -eq 2 ] && grep -q '^standard input:4:1: ' "$TMP/err" &&
        [ "$(grep -c ': removed 2 spans' "$TMP/err")" -eq 2 ]; then
        ok "CLI clean numbers each file's lines from 1"
    else
        bad "CLI clean numbers each file's lines from 1" "$(tr '\n' '|' <"$TMP/err")"
    fi
    printf '%s\n' '头发干了' '天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！' '他说' >"$TMP/story.txt"
    run "$FJ" -c s2t --clean "$TMP/story.txt"
    check "CLI -c s2t --clean drops, then converts" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "$(printf '頭髮乾了\n他說')"
    run "$FJ" -c s2t --report "$TMP/story.txt"
    check "CLI -c s2t --report implies --clean" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = "$(printf '頭髮乾了\n他說')" -a "$(wc -l <"$TMP/err")" -eq 2
    run "$FJ" -c s2t "$TMP/story.txt"
    check "CLI conversion without --clean keeps every line" test "$(wc -l <"$TMP/out")" -eq 3
    run "$FJ" clean -o "$TMP/clean.out" "$TMP/story.txt"
    check "CLI clean -o" test "$rc" -eq 0 -a "$(cat "$TMP/clean.out")" = "$(printf '头发干了\n他说')"
    # A sentence far longer than any notice (maxchars) is passed through, in pieces.
    awk 'BEGIN { for (i = 0; i < 200000; i++) printf "天才一秒记住本站地址：www.fakebook.cc，"; }' >"$TMP/long.txt"
    run "$FJ" clean "$TMP/long.txt"
    check "CLI clean passes a 7 MB line through" cmp -s "$TMP/out" "$TMP/long.txt"
    # --rules adds rules, in either script.
    printf '%s\n' '# ours' 'phrase 10 夜空中最亮' 'marker 广告' >"$TMP/rules.txt"
    printf '%s\n' '夜空中最亮的星' '【廣告】' '他说' >"$TMP/custom.txt"
    run "$FJ" clean "$TMP/custom.txt"
    check "CLI clean without --rules keeps lines the defaults do not know" test "$(wc -l <"$TMP/out")" -eq 3
    run "$FJ" clean --rules "$TMP/rules.txt" "$TMP/custom.txt"
    check "CLI clean --rules FILE" test "$rc" -eq 0 -a "$(cat "$TMP/out")" = '他说'
    printf '%s\n' 'threshold 10' 'phrase ten 收藏' >"$TMP/badrules.txt"
    run "$FJ" clean --rules "$TMP/badrules.txt" "$TMP/custom.txt"
    if [ "$rc" -ne 0 ] && [ ! -s "$TMP/out" ] && grep -q "badrules.txt:2:" "$TMP/err"; then
        ok "CLI clean --rules: a bad rules file names its line"
    else
        bad "CLI clean --rules: a bad rules file names its line" "exit $rc: $(err1)"
    fi
    run "$FJ" clean --rules "$TMP/missing.txt" "$TMP/custom.txt"
    if [ "$rc" -ne 0 ] && grep -q "missing.txt" "$TMP/err"; then ok "CLI clean --rules: missing file"; else bad "CLI clean --rules: missing file" "exit $rc: $(err1)"; fi
    run "$FJ" clean "$TMP/missing.txt"
    if [ "$rc" -ne 0 ] && grep -q "missing.txt" "$TMP/err"; then ok "CLI clean: missing input"; else bad "CLI clean: missing input" "exit $rc"; fi
    if [ -w /dev/full ]; then
        "$FJ" clean "$TMP/story.txt" >/dev/full 2>"$TMP/err"
        rc=$?
        check "CLI clean: write error on /dev/full" test "$rc" -ne 0 -a -s "$TMP/err"
    fi

    # -- encodings, document formats, trees (tests/cli-files.sh) ---------------------------
    # shellcheck source=tests/cli-files.sh
    . "$ROOT/tests/cli-files.sh"
    # -- fanjian detect: encodings, binary, documents (tests/cli-detect.sh) -----------------
    # shellcheck source=tests/cli-detect.sh
    . "$ROOT/tests/cli-detect.sh"

    echo "== command-line tool: done in $(elapsed "$CLI_START") s"
fi

# ---- the parts beyond the CLI: tests/suite-*.sh (server, Python, install) -------
for suite in "$ROOT"/tests/suite-*.sh; do
    [ -e "$suite" ] || continue
    echo "== $(basename "$suite" .sh)"
    # shellcheck source=/dev/null
    . "$suite"
done

echo "== total time $(elapsed "$T0") s"
summary="$pass passed, $fail failed"
if [ "$skipped" -gt 0 ]; then summary="$summary, $skipped skipped"; fi
echo "$summary"
# For `make check`, which adds up the plain and the sanitizer runs.
echo "$pass $fail $skipped" >"$FANJIAN_BUILD/test-counts"
[ "$fail" -eq 0 ]
