# shellcheck shell=bash
# The ABI of libfanjian.so against the stored baseline abi/libfanjian.abi
# (Debian's abigail-tools; `make abi-baseline` rewrites it after a deliberate
# change). A function or type of the baseline that is gone or changed fails;
# added functions do not. Sourced by tests/run.sh, which provides ok, bad,
# skip and B, TMP, ROOT. Every name defined here starts with abi_ / ABI_.

ABI_VERSION=$(sed -n 's/^#define FJ_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/include/fanjian.h")
ABI_SO=$B/libfanjian.so.$ABI_VERSION
ABI_DIR=$TMP/abi
mkdir -p "$ABI_DIR"

if ! command -v abidw >/dev/null || ! command -v abidiff >/dev/null; then
    skip "ABI against abi/libfanjian.abi" "abigail-tools is not installed (scripts/install-deps.sh installs it)"
elif grep -qa __asan_init "$ABI_SO" 2>/dev/null; then
    skip "ABI against abi/libfanjian.abi" "a sanitizer build; the plain run checks it"
elif [ ! -e "$ABI_SO" ]; then
    bad "ABI against abi/libfanjian.abi" "$ABI_SO not built"
else
    # As mk/install.mk's abi-baseline writes it.
    abidw --headers-dir "$ROOT/include" --drop-private-types --no-corpus-path --no-show-locs \
        --drop-undefined-syms --out-file "$ABI_DIR/current.abi" "$ABI_SO" 2>"$ABI_DIR/abidw.err"
    abi_rc=$?
    if [ "$abi_rc" -ne 0 ]; then
        bad "ABI: abidw reads $ABI_SO" "exit $abi_rc: $(head -c 300 "$ABI_DIR/abidw.err")"
    else
        (cd "$ROOT" && abidiff --no-added-syms abi/libfanjian.abi "$ABI_DIR/current.abi") \
            >"$ABI_DIR/report.txt" 2>&1
        abi_rc=$?
        if [ "$abi_rc" -eq 0 ]; then
            ok "ABI: libfanjian.so keeps every function and type of abi/libfanjian.abi"
        else
            bad "ABI: libfanjian.so keeps every function and type of abi/libfanjian.abi" \
                "abidiff exit $abi_rc: $(grep -m 8 -E 'Removed|Changed|\[[DC]\]|changed' "$ABI_DIR/report.txt" | tr '\n' ' ')"
        fi
        # The check itself: a baseline with a function the library lacks fails.
        sed "s|<elf-symbol name='fj_version' |<elf-symbol name='fj_gone' |" \
            "$ROOT/abi/libfanjian.abi" >"$ABI_DIR/doctored.abi"
        (cd "$ROOT" && abidiff --no-added-syms "$ABI_DIR/doctored.abi" "$ABI_DIR/current.abi") \
            >"$ABI_DIR/doctored.txt" 2>&1
        abi_rc=$?
        if [ "$abi_rc" -ne 0 ] && grep -q "Removed" "$ABI_DIR/doctored.txt"; then
            ok "ABI: a baseline function the library lacks is reported (abidiff exit $abi_rc)"
        else
            bad "ABI: a baseline function the library lacks is reported" \
                "abidiff exit $abi_rc: $(head -c 300 "$ABI_DIR/doctored.txt")"
        fi
    fi
fi
