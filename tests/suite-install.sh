# shellcheck shell=bash
# shellcheck disable=SC2154 # rc is set by run.sh's run()
# The shared library, the OpenCC-compatible C API, `make install` and the
# manual pages. Sourced by tests/run.sh near its end, which provides ok, bad,
# check, skip, run, err1 and FJ, TMP, B, ROOT, FANJIAN_DICT, FANJIAN_SHARED,
# FANJIAN_CASES. Every name defined here starts with inst_ / INST_.
#
# Nothing here builds the project: `make check` has built the libraries and
# test programs (mk/install.mk's CHECK_DEPS). `make install` runs with `-o`
# for every file it copies, so it only copies, in either build (plain or
# sanitizer), and never recurses into anything else. The programs compiled
# against the staged install get the build's own compiler and sanitizer flags
# ($B/tests/install-flags).

INST_DIR=$TMP/install
rm -rf "$INST_DIR"
mkdir -p "$INST_DIR"
INST_VERSION=$(sed -n 's/^#define FJ_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/include/fanjian.h")
INST_SO=$B/libfanjian.so.$INST_VERSION
INST_SHIM=$B/compat/libopencc.so.1.1
INST_CONSUMER=$B/tests/opencc_consumer
# The profiles, as the library lists them (run.sh's "CLI --list" checks them).
INST_PROFILES=$("$FJ" --list 2>/dev/null)

TEST_CC=cc
TEST_SAN=
if [ -r "$B/tests/install-flags" ]; then
    # shellcheck source=/dev/null
    . "$B/tests/install-flags"
elif grep -qa __asan_init "$FJ" 2>/dev/null; then
    TEST_SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
fi
# Word-split on purpose: these are compiler flags.
# shellcheck disable=SC2206
INST_CC=($TEST_CC $TEST_SAN)

# inst_cc NAME OUTPUT ARGS...: compiles, or reports a failure under NAME.
inst_cc() {
    local name=$1 out=$2
    shift 2
    if "${INST_CC[@]}" -o "$out" "$@" >"$TMP/inst-cc.log" 2>&1; then
        return 0
    fi
    bad "$name" "compiling failed: $(head -n 3 "$TMP/inst-cc.log" | tr '\n' ' ')"
    return 1
}

# ---- the shared libraries ---------------------------------------------------------

if [ ! -e "$INST_SO" ]; then
    bad "libfanjian.so: $INST_SO not built"
else
    # The public functions: every fj_ name that fanjian.h declares.
    cc -E -P -x c "$ROOT/include/fanjian.h" | grep -oE '\bfj_[a-z0-9_]+ *\(' | tr -d ' (' |
        sort -u >"$INST_DIR/header.txt"
    nm -D --defined-only "$INST_SO" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
        sort -u >"$INST_DIR/exports.txt"
    if [ -s "$INST_DIR/header.txt" ] && cmp -s "$INST_DIR/header.txt" "$INST_DIR/exports.txt"; then
        ok "libfanjian.so exports exactly fanjian.h's $(wc -l <"$INST_DIR/header.txt") functions"
    else
        bad "libfanjian.so exports exactly fanjian.h's functions" \
            "$(diff "$INST_DIR/header.txt" "$INST_DIR/exports.txt" | grep '^[<>]' | tr '\n' ' ' | head -c 400)"
    fi
    inst_unversioned=$(nm -D --defined-only "$INST_SO" | awk '$2 != "A" && $3 !~ /@@FANJIAN_0$/' | wc -l)
    check "libfanjian.so: every export has the version FANJIAN_0" test "$inst_unversioned" -eq 0
    check "libfanjian.so: soname libfanjian.so.0" \
        sh -c "readelf -d '$INST_SO' | grep -q 'SONAME.*\[libfanjian\.so\.0\]'"
    check "libfanjian.so.0 and libfanjian.so link to libfanjian.so.$INST_VERSION" \
        test "$(readlink "$B/libfanjian.so.0")" = "libfanjian.so.$INST_VERSION" \
        -a "$(readlink -f "$B/libfanjian.so")" = "$(readlink -f "$INST_SO")"
fi

if [ ! -e "$INST_SHIM" ]; then
    bad "libopencc: $INST_SHIM not built"
else
    nm -D --defined-only "$INST_SHIM" | awk '$2 != "A" { print $3 }' | sort >"$INST_DIR/shim.txt"
    printf '%s\n' opencc_close opencc_convert_utf8 opencc_convert_utf8_free \
        opencc_convert_utf8_to_buffer opencc_error opencc_open >"$INST_DIR/shim.exp"
    check "libopencc.so.1.1 exports exactly OpenCC's six C functions" \
        cmp -s "$INST_DIR/shim.txt" "$INST_DIR/shim.exp"
    check "libopencc.so.1.1: soname libopencc.so.1.1, no dependency on libfanjian.so" \
        sh -c "readelf -d '$INST_SHIM' | grep -q 'SONAME.*\[libopencc\.so\.1\.1\]' &&
               ! readelf -d '$INST_SHIM' | grep -q 'NEEDED.*libfanjian'"
fi

# ---- the header from C99 and from C++ ---------------------------------------------------
# tests/header_consumer.c, compiled both ways with -pedantic -Werror and
# linked with the build's libfanjian.a, converts with the build's image.

for inst_lang in c99 c++11; do
    if [ "$inst_lang" = c99 ]; then
        inst_comp=$TEST_CC inst_x=(-x c -std=c99)
    else
        inst_comp=c++ inst_x=(-x c++ -std=c++11)
    fi
    if ! command -v "$inst_comp" >/dev/null; then
        skip "fanjian.h as $inst_lang" "no $inst_comp"
        continue
    fi
    # shellcheck disable=SC2086 # TEST_SAN: compiler flags
    if "$inst_comp" $TEST_SAN "${inst_x[@]}" -pedantic -Wall -Wextra -Werror -I"$ROOT/include" \
        -o "$INST_DIR/header-$inst_lang" "$ROOT/tests/header_consumer.c" -x none "$B/libfanjian.a" \
        -lm >"$TMP/inst-cc.log" 2>&1; then
        "$INST_DIR/header-$inst_lang" "$B/fanjian.fjd" >"$TMP/out" 2>"$TMP/err"
        inst_rc=$?
        check "fanjian.h as $inst_lang (-pedantic -Werror): links and converts 头发干了" \
            test "$inst_rc" -eq 0 -a "$(cat "$TMP/out")" = "$INST_VERSION $(printf '%06x' \
            "$(sed -n 's/^#define FJ_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
                "$ROOT/include/fanjian.h" | awk '{n = n * 256 + $1} END {print n}')") 頭髮乾了"
    else
        bad "fanjian.h as $inst_lang (-pedantic -Werror)" \
            "compiling failed: $(head -n 3 "$TMP/inst-cc.log" | tr '\n' ' ')"
    fi
done

# ---- the OpenCC API: a program written to OpenCC's opencc.h ---------------------------
# Its output on every OpenCC-compatible case must equal `fanjian --compat`'s.
# The configuration is spelt three ways in turn: NAME.json, NAME, and a path.

inst_config() {
    case $(($1 % 3)) in
    0) printf '%s.json' "$2" ;;
    1) printf '%s' "$2" ;;
    2) printf '/usr/share/opencc/%s.json' "$2" ;;
    esac
}

if [ ! -x "$INST_CONSUMER" ]; then
    bad "OpenCC consumer: $INST_CONSUMER not built"
else
    inst_n=0
    for inst_file in "$FANJIAN_CASES"/*.tsv; do
        [ -e "$inst_file" ] || continue
        [ "$(head -n 1 "$inst_file")" = "# mode: default" ] && continue
        inst_label=$(basename "$inst_file")
        inst_opts=$(sed -n 's/^# cli: //p' "$inst_file" | head -n 1)
        inst_lineno=0
        while IFS= read -r inst_line || [ -n "$inst_line" ]; do
            inst_lineno=$((inst_lineno + 1))
            case $inst_line in '' | '#'*) continue ;; esac
            inst_prof=${inst_line%%$'\t'*}
            case $inst_prof in detect | clean | cleaned | repair) continue ;; esac
            inst_rest=${inst_line#*$'\t'}
            inst_input=${inst_rest%%$'\t'*}
            inst_n=$((inst_n + 1))
            inst_name="OpenCC consumer = CLI --compat: $inst_label:$inst_lineno $inst_prof"
            printf '%b' "$inst_input" >"$INST_DIR/case.in"
            # OpenCC converts up to the first NUL; so does the shim. The CLI
            # gets the same bytes (such cases are one line).
            cp "$INST_DIR/case.in" "$INST_DIR/case.cli"
            if [ "$(tr -d '\000' <"$INST_DIR/case.in" | wc -c)" -ne "$(wc -c <"$INST_DIR/case.in")" ]; then
                printf '%s' "$(tr '\000' '\n' <"$INST_DIR/case.in" | head -n 1)" >"$INST_DIR/case.cli"
            fi
            # shellcheck disable=SC2086 # options are meant to be split
            "$FJ" --compat $inst_opts -c "$inst_prof" "$INST_DIR/case.cli" </dev/null \
                >"$INST_DIR/case.exp" 2>"$TMP/err"
            inst_rc=$?
            run "$INST_CONSUMER" "$(inst_config "$inst_n" "$inst_prof")" "$INST_DIR/case.in"
            if [ "$inst_rc" -ne 0 ]; then
                bad "$inst_name" "the CLI failed ($inst_rc): $(err1)"
            elif [ "$rc" -ne 0 ]; then
                bad "$inst_name" "exit status $rc: $(err1)"
            elif ! cmp -s "$TMP/out" "$INST_DIR/case.exp"; then
                bad "$inst_name" "expected: $(od -An -c "$INST_DIR/case.exp" | tr -s ' ' | head -c 300)" \
                    "got:      $(od -An -c "$TMP/out" | tr -s ' ' | head -c 300)"
            else
                ok "$inst_name"
            fi
        done <"$inst_file"
    done
    [ "$inst_n" -gt 0 ] || bad "OpenCC consumer: no OpenCC-compatible cases in $FANJIAN_CASES"

    # OpenCC 1.4.2's own output on 2,602 lines of real text, every profile.
    INST_COMPAT=$FANJIAN_SHARED/opencc/compat
    inst_i=0
    for inst_p in $INST_PROFILES; do
        inst_i=$((inst_i + 1))
        inst_name="OpenCC consumer: shared compat input, $inst_p, equals OpenCC 1.4.2 and the CLI"
        if [ ! -r "$INST_COMPAT/input.txt" ]; then
            skip "$inst_name" "$INST_COMPAT/input.txt not found (no ../shared)"
            continue
        fi
        "$FJ" --compat -c "$inst_p" "$INST_COMPAT/input.txt" >"$INST_DIR/compat.cli" 2>/dev/null
        run "$INST_CONSUMER" "$(inst_config "$inst_i" "$inst_p")" "$INST_COMPAT/input.txt"
        if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$INST_COMPAT/$inst_p.txt" &&
            cmp -s "$TMP/out" "$INST_DIR/compat.cli"; then
            ok "$inst_name"
        else
            bad "$inst_name" "exit $rc: $(err1)" "$(cmp "$TMP/out" "$INST_COMPAT/$inst_p.txt" 2>&1 | head -n 1)"
        fi
    done

    # Configuration errors, through OpenCC's API.
    run "$INST_CONSUMER" nonesuch.json /dev/null
    if [ "$rc" -ne 0 ] && grep -q 'opencc_open: .*nonesuch\.json' "$TMP/err" && [ ! -s "$TMP/out" ]; then
        ok "OpenCC consumer: an unknown configuration fails with opencc_error()'s message"
    else
        bad "OpenCC consumer: an unknown configuration fails with opencc_error()'s message" \
            "exit $rc: $(err1)"
    fi
    printf '头发干了\n' | "$INST_CONSUMER" - >"$TMP/out" 2>"$TMP/err"
    check "OpenCC consumer: opencc_open(NULL) is s2t.json" test "$(cat "$TMP/out")" = '頭髮幹了'
    (unset FANJIAN_DICT; printf '头发\n' | "$INST_CONSUMER" s2t.json >"$TMP/out" 2>"$TMP/err")
    check "OpenCC consumer: the build tree's libopencc finds $B/fanjian.fjd by itself" \
        test "$(cat "$TMP/out")" = '頭髮'
fi

if [ -x "$B/tests/opencc_errors" ]; then
    "$B/tests/opencc_errors" >"$INST_DIR/errors.out" 2>"$TMP/err"
    inst_rc=$?
    while IFS= read -r inst_line; do
        case $inst_line in
        'PASS '*) ok "libopencc: ${inst_line#PASS }" ;;
        'FAIL '*) bad "libopencc: ${inst_line#FAIL }" ;;
        esac
    done <"$INST_DIR/errors.out"
    if [ "$inst_rc" -ne 0 ] && ! grep -q '^FAIL ' "$INST_DIR/errors.out"; then
        bad "libopencc: opencc_errors exited with $inst_rc without a failed check" "$(err1)"
    fi
else
    bad "libopencc: $B/tests/opencc_errors not built"
fi

# ---- make install DESTDIR=... PREFIX=/usr --------------------------------------------

INST_STAGE=$INST_DIR/root
INST_USR=$INST_STAGE/usr
# shellcheck disable=SC2207 # file names without spaces
inst_files=($(make -s --no-print-directory -C "$ROOT" BUILD="$B" print-install-artefacts 2>/dev/null))
inst_old=()
for inst_f in "${inst_files[@]}"; do inst_old+=(-o "$inst_f"); done
if [ "${#inst_files[@]}" -eq 0 ]; then
    bad "make install" "make print-install-artefacts gave nothing"
else
    make --no-print-directory -C "$ROOT" BUILD="$B" "${inst_old[@]}" install \
        DESTDIR="$INST_STAGE" PREFIX=/usr >"$INST_DIR/install.log" 2>&1
    inst_rc=$?
    if [ "$inst_rc" -eq 0 ]; then
        ok "make install DESTDIR=... PREFIX=/usr"
    else
        bad "make install DESTDIR=... PREFIX=/usr" "exit $inst_rc: $(tail -n 3 "$INST_DIR/install.log" | tr '\n' ' ')"
    fi
    check "make install only copies (compiles and links nothing)" \
        sh -c "! grep -Eq '^ *(CC|LD) |(^| )(cc|gcc|clang) ' '$INST_DIR/install.log'"
fi

for inst_f in bin/fanjian lib/libfanjian.a lib/libfanjian-formats.a include/fanjian-formats.h \
    "lib/libfanjian.so.$INST_VERSION" lib/libfanjian.so.0 \
    lib/libfanjian.so include/fanjian.h share/fanjian/fanjian.fjd share/man/man1/fanjian.1 \
    share/man/man3/fanjian.3 lib/pkgconfig/fanjian.pc lib/pkgconfig/fanjian-opencc.pc \
    lib/fanjian-opencc/libopencc.so.1.1 lib/fanjian-opencc/libopencc.so \
    include/fanjian-opencc/opencc.h lib/libfanjian-marisa.so.0; do
    check "installed: PREFIX/$inst_f" test -f "$INST_USR/$inst_f"
done
# The JavaScript package, when built, for serve's page, its image the one beside it.
if [ -r "$B/js/pkg/browser.mjs" ]; then
    check "installed: the JavaScript package in PREFIX/share/fanjian/js, its image a link to ../fanjian.fjd" \
        sh -c "cmp -s '$B/js/pkg/fanjian.wasm' '$INST_USR/share/fanjian/js/fanjian.wasm' &&
               cmp -s '$B/js/pkg/browser.mjs' '$INST_USR/share/fanjian/js/browser.mjs' &&
               cmp -s '$B/js/pkg/core.mjs' '$INST_USR/share/fanjian/js/core.mjs' &&
               test \"\$(readlink '$INST_USR/share/fanjian/js/fanjian.fjd')\" = ../fanjian.fjd"
fi
# A custom config's own .ocd2: the installed program loads libmarisa through
# the installed shim, found from where the program is.
if [ -r /usr/share/opencc/TWVariants.ocd2 ]; then
    mkdir -p "$INST_DIR/occ"
    cp /usr/share/opencc/TWVariants.ocd2 "$INST_DIR/occ/mine.ocd2"
    printf '{"name":"mine","conversion_chain":[{"dict":{"type":"ocd2","file":"mine.ocd2"}}]}' \
        >"$INST_DIR/occ/mine.json"
    run env -u LD_LIBRARY_PATH "$INST_USR/bin/fanjian" -c "$INST_DIR/occ/mine.json" <<<'着裏'
    check "installed: a config's own .ocd2 is read through PREFIX/lib/libfanjian-marisa.so.0" \
        test "$rc" = 0 -a "$(cat "$TMP/out")" = '著裡'
fi
check "installed: libfanjian.so.0 -> libfanjian.so.$INST_VERSION, libfanjian.so -> libfanjian.so.0" \
    test "$(readlink "$INST_USR/lib/libfanjian.so.0")" = "libfanjian.so.$INST_VERSION" \
    -a "$(readlink "$INST_USR/lib/libfanjian.so")" = libfanjian.so.0
check "installed: the program, the libraries and the dictionary are the build's" \
    sh -c "cmp -s '$FJ' '$INST_USR/bin/fanjian' && cmp -s '$INST_SO' '$INST_USR/lib/libfanjian.so.$INST_VERSION' &&
           cmp -s '$B/fanjian.fjd' '$INST_USR/share/fanjian/fanjian.fjd' &&
           cmp -s '$INST_SHIM' '$INST_USR/lib/fanjian-opencc/libopencc.so.1.1'"
check "installed: modes 755 (program, shared libraries), 644 (the rest)" \
    test "$(stat -c %a "$INST_USR/bin/fanjian" "$INST_USR/lib/libfanjian.so.$INST_VERSION" \
        "$INST_USR/include/fanjian.h" "$INST_USR/share/fanjian/fanjian.fjd" \
        "$INST_USR/lib/pkgconfig/fanjian.pc" | tr '\n' ' ')" = "755 755 644 644 644 "
# shellcheck disable=SC2016 # a literal ${prefix}
check "installed: fanjian.pc is relative to \${prefix}" \
    grep -qx 'libdir=${prefix}/lib' "$INST_USR/lib/pkgconfig/fanjian.pc"

# pkg-config into the staged tree only.
inst_pkgconf() {
    PKG_CONFIG_SYSROOT_DIR=$INST_STAGE PKG_CONFIG_LIBDIR=$INST_USR/lib/pkgconfig \
        PKG_CONFIG_PATH=$INST_USR/lib/pkgconfig pkg-config "$@"
}

if ! command -v pkg-config >/dev/null; then
    skip "pkg-config consumer" "pkg-config is not installed"
elif [ ! -f "$INST_USR/lib/pkgconfig/fanjian.pc" ]; then
    bad "pkg-config consumer" "fanjian.pc was not installed"
else
    check "pkg-config --modversion fanjian is $INST_VERSION" \
        test "$(inst_pkgconf --modversion fanjian)" = "$INST_VERSION"
    inst_dictfile=$(inst_pkgconf --variable=dictfile fanjian)
    check "pkg-config --variable=dictfile fanjian names the installed image" \
        test "${inst_dictfile%/usr/share/fanjian/fanjian.fjd}" != "$inst_dictfile"
    # shellcheck disable=SC2207
    inst_flags=($(inst_pkgconf --cflags --libs fanjian))
    if inst_cc "pkg-config consumer (shared)" "$INST_DIR/consumer" \
        "$ROOT/tests/pkgconfig_consumer.c" "${inst_flags[@]}"; then
        check "pkg-config consumer links libfanjian.so.0" \
            sh -c "readelf -d '$INST_DIR/consumer' | grep -q 'NEEDED.*\[libfanjian\.so\.0\]'"
        LD_LIBRARY_PATH=$INST_USR/lib FANJIAN_DICT=$INST_USR/share/fanjian/fanjian.fjd \
            "$INST_DIR/consumer" >"$TMP/out" 2>"$TMP/err"
        inst_rc=$?
        check "pkg-config consumer (shared, staged lib) converts 头发干了 to 頭髮乾了" \
            test "$inst_rc" -eq 0 -a "$(cat "$TMP/out")" = '頭髮乾了'
        LD_LIBRARY_PATH=$INST_USR/lib LD_DEBUG=libs FANJIAN_DICT=$INST_USR/share/fanjian/fanjian.fjd \
            "$INST_DIR/consumer" >/dev/null 2>"$TMP/err"
        check "pkg-config consumer loads the staged libfanjian.so.0" \
            grep -q "calling init: $INST_USR/lib/libfanjian.so.0" "$TMP/err"
    fi
    # Static: -lfanjian from libfanjian.a, the rest as --static says.
    # shellcheck disable=SC2207
    inst_flags=($(inst_pkgconf --static --cflags --libs fanjian))
    inst_flags=("${inst_flags[@]/#-lfanjian/-Wl,-Bstatic -lfanjian -Wl,-Bdynamic}")
    # shellcheck disable=SC2206
    inst_flags=(${inst_flags[*]})
    if inst_cc "pkg-config consumer (static libfanjian.a)" "$INST_DIR/consumer-static" \
        "$ROOT/tests/pkgconfig_consumer.c" "${inst_flags[@]}"; then
        (unset LD_LIBRARY_PATH; FANJIAN_DICT=$INST_USR/share/fanjian/fanjian.fjd \
            "$INST_DIR/consumer-static" >"$TMP/out" 2>"$TMP/err")
        inst_rc=$?
        check "pkg-config --static consumer: no libfanjian.so needed, converts 头发干了" \
            sh -c "! readelf -d '$INST_DIR/consumer-static' | grep -q 'NEEDED.*libfanjian' &&
                   [ $inst_rc -eq 0 ] && [ \"\$(cat '$TMP/out')\" = '頭髮乾了' ]"
    fi
    if [ -n "$TEST_SAN" ]; then
        skip "pkg-config --static consumer, fully static (-static)" "sanitizer runtimes cannot be linked statically"
    else
        # shellcheck disable=SC2207
        inst_flags=($(inst_pkgconf --static --cflags --libs fanjian))
        if inst_cc "pkg-config --static consumer, fully static (-static)" "$INST_DIR/consumer-allstatic" \
            -static "$ROOT/tests/pkgconfig_consumer.c" "${inst_flags[@]}"; then
            FANJIAN_DICT=$INST_USR/share/fanjian/fanjian.fjd "$INST_DIR/consumer-allstatic" \
                t2s '頭髮乾了' >"$TMP/out" 2>"$TMP/err"
            check "pkg-config --static consumer, fully static (-static): 頭髮乾了 to 头发干了" \
                test "$(cat "$TMP/out")" = '头发干了'
        fi
    fi
    # The example program of fanjian(3), as installed.
    sed -n '/^\.\\" example-begin/,/^\.\\" example-end/p' "$INST_USR/share/man/man3/fanjian.3" |
        sed -e '/^\./d' -e 's/\\e/\\/g' -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" >"$INST_DIR/example.c"
    # shellcheck disable=SC2207
    inst_flags=($(inst_pkgconf --cflags --libs fanjian))
    if [ ! -s "$INST_DIR/example.c" ]; then
        bad "fanjian(3) example" "no example program between the example-begin/end marks"
    elif inst_cc "fanjian(3) example compiles with pkg-config" "$INST_DIR/example" \
        -std=c11 -Wall -Wextra -Werror "$INST_DIR/example.c" "${inst_flags[@]}"; then
        printf '头发干了\n' | LD_LIBRARY_PATH=$INST_USR/lib \
            FANJIAN_DICT=$INST_USR/share/fanjian/fanjian.fjd "$INST_DIR/example" s2tw >"$TMP/out" 2>"$TMP/err"
        check "fanjian(3) example converts standard input (s2tw)" test "$(cat "$TMP/out")" = '頭髮乾了'
    fi

    # The OpenCC API as installed: its own pkg-config file, and the
    # dictionary found from the library's place (no FANJIAN_DICT).
    # shellcheck disable=SC2207
    inst_flags=($(inst_pkgconf --cflags --libs fanjian-opencc))
    if inst_cc "OpenCC consumer built with pkg-config fanjian-opencc" "$INST_DIR/opencc-consumer" \
        -std=c11 "$ROOT/tests/opencc_consumer.c" "${inst_flags[@]}"; then
        (unset FANJIAN_DICT; printf '头发干了\n' | LD_LIBRARY_PATH=$INST_USR/lib/fanjian-opencc \
            "$INST_DIR/opencc-consumer" s2t.json >"$TMP/out" 2>"$TMP/err")
        check "installed libopencc finds PREFIX/share/fanjian/fanjian.fjd by itself" \
            test "$(cat "$TMP/out")" = '頭髮幹了'
    fi
    check "installed: opencc.pc (in lib/fanjian-opencc/pkgconfig) points at the shim" \
        sh -c "PKG_CONFIG_SYSROOT_DIR='$INST_STAGE' PKG_CONFIG_LIBDIR='$INST_USR/lib/fanjian-opencc/pkgconfig' \
               pkg-config --cflags --libs opencc | grep -q 'fanjian-opencc.*-lopencc' &&
               test -f '$INST_USR/include/fanjian-opencc/opencc/opencc.h'"
fi

# The installed CLI finds the installed dictionary by itself, wherever the
# tree is moved (../share/fanjian/ from its executable).
(unset FANJIAN_DICT; printf '头发干了\n' | "$INST_USR/bin/fanjian" -c s2t >"$TMP/out" 2>"$TMP/err")
check "installed CLI finds PREFIX/share/fanjian/fanjian.fjd without FANJIAN_DICT" \
    test "$(cat "$TMP/out")" = '頭髮乾了'
mkdir -p "$INST_DIR/moved"
cp -a "$INST_USR" "$INST_DIR/moved/prefix" 2>/dev/null
(unset FANJIAN_DICT; printf '头发干了\n' | "$INST_DIR/moved/prefix/bin/fanjian" -c s2t >"$TMP/out" 2>"$TMP/err")
check "installed CLI moved to another prefix still finds its dictionary" \
    test "$(cat "$TMP/out")" = '頭髮乾了'
head -c 1000 "$INST_USR/share/fanjian/fanjian.fjd" >"$INST_DIR/moved/prefix/share/fanjian/fanjian.fjd"
(unset FANJIAN_DICT; printf '头发干了\n' | "$INST_DIR/moved/prefix/bin/fanjian" -c s2t >"$TMP/out" 2>"$TMP/err")
inst_rc=$?
check "installed CLI opens that very file (a damaged one there makes it fail)" \
    sh -c "[ $inst_rc -ne 0 ] && [ -s '$TMP/err' ] && ! grep -q 'cannot open' '$TMP/err'"

# ---- manual pages ---------------------------------------------------------------------

for inst_page in man1/fanjian.1 man3/fanjian.3; do
    inst_src=$ROOT/man/${inst_page#*/}
    if ! command -v groff >/dev/null; then
        skip "man page $inst_page" "groff is not installed"
        continue
    fi
    # preconv and a UTF-8 device, as man(1) formats it: the pages hold Chinese.
    groff -k -Tutf8 -man -ww -z "$inst_src" >"$TMP/out" 2>"$TMP/err"
    check "man page ${inst_page#*/}: groff -k -Tutf8 -man -ww -z gives no warning" \
        test "$?" -eq 0 -a ! -s "$TMP/err"
    if command -v man >/dev/null; then
        LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$INST_USR/share/man/$inst_page" >"$TMP/out" 2>"$TMP/err"
        check "man page $inst_page: man -l renders the installed page" \
            sh -c "[ ! -s '$TMP/err' ] && grep -q '^NAME' '$TMP/out' && grep -q '頭髮乾了' '$TMP/out'"
    else
        skip "man page $inst_page: man -l" "man is not installed"
    fi
done
# Every option of --help (and of serve --help) is in fanjian(1).
"$FJ" --help >"$TMP/out" 2>/dev/null
"$FJ" serve --help >>"$TMP/out" 2>/dev/null
inst_missing=
# shellcheck disable=SC2013 # one option a word
for inst_opt in $(grep -oE -- '--[a-z][a-z-]*' "$TMP/out" | sort -u); do
    grep -qF -- "$(printf '%s' "$inst_opt" | sed 's/-/\\-/g')" "$ROOT/man/fanjian.1" ||
        inst_missing="$inst_missing $inst_opt"
done
check "fanjian(1) documents every option of --help${inst_missing:+ (missing:$inst_missing)}" \
    test -z "$inst_missing"
inst_missing=
while read -r inst_fn; do
    grep -q "^\.BI* \"*[a-z_ ]*[ *]$inst_fn(" "$ROOT/man/fanjian.3" || inst_missing="$inst_missing $inst_fn"
done <"$INST_DIR/header.txt"
check "fanjian(3) has every function of fanjian.h in its synopsis${inst_missing:+ (missing:$inst_missing)}" \
    test -z "$inst_missing" -a -s "$INST_DIR/header.txt"

# ---- make uninstall -------------------------------------------------------------------

make --no-print-directory -C "$ROOT" BUILD="$B" uninstall DESTDIR="$INST_STAGE" PREFIX=/usr \
    >"$INST_DIR/uninstall.log" 2>&1
inst_rc=$?
inst_left=$(find "$INST_STAGE" ! -type d | wc -l)
[ "$inst_left" -eq 0 ] && inst_left= || inst_left=" ($inst_left left)"
check "make uninstall removes every installed file$inst_left" \
    test "$inst_rc" -eq 0 -a -z "$inst_left"
