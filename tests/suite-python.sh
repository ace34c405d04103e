# The Python module's tests: tests/python/test_*.py with the system's
# python3 against $B/python (make python). Sourced by tests/run.sh, which
# provides ok/bad/check/skip/run/err1 and FJ, TMP, B, ROOT, FANJIAN_DICT,
# FANJIAN_SHARED. Each line a test file prints is one test (see
# tests/python/fjtest.py); a file that dies without reporting a failure
# (a crash, a sanitizer report) counts as one failure. FANJIAN_PYTHON names
# another interpreter (the module must then be built with make PYTHON=...).
#
# In the sanitizer build the module is built with ASan+UBSan while
# /usr/bin/python3 is not: the ASan runtime is preloaded, leak detection
# is off (the interpreter keeps memory to the end) and PYTHONMALLOC=malloc
# puts Python's own objects under ASan too.

py_suite() {
    local py=${FANJIAN_PYTHON:-/usr/bin/python3}
    local dir=$ROOT/tests/python
    if [ ! -x "$py" ]; then
        skip "python module" "$py not found"
        return
    fi
    local mod
    mod=$B/python/fanjian$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    if [ ! -e "$mod" ]; then
        # The build asks the interpreter itself (mk/python.mk): what it lacks
        # is Python.h.
        if ! "$py" -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
            skip "python module" "Python.h not found for $py: install python3-dev (scripts/install-deps.sh)"
        else
            bad "python module: $B/python/fanjian*.so not built (make python)"
        fi
        return
    fi
    local -a envs=(PYTHONPATH="$B/python" PYTHONDONTWRITEBYTECODE=1 PYTHONIOENCODING=utf-8
                   FJ="$FJ" B="$B" ROOT="$ROOT" TMP="$TMP" FANJIAN_DICT="$FANJIAN_DICT"
                   FANJIAN_SHARED="$FANJIAN_SHARED" FANJIAN_CASES="${FANJIAN_CASES:-$ROOT/tests/cases}"
                   FANJIAN_TEST_QUICK="${FANJIAN_TEST_QUICK:-0}" FJ_PYTHON="$py")
    local sanitized=0
    if grep -qa __asan_init "$mod"; then
        local asan
        asan=$(${CC:-cc} -print-file-name=libasan.so 2>/dev/null)
        if [ -z "$asan" ] || [ ! -e "$asan" ] || [ "$asan" = libasan.so ]; then
            skip "python module (ASan build)" "the ASan runtime (libasan.so) was not found to preload into $py"
            return
        fi
        sanitized=1
        envs+=(LD_PRELOAD="$asan" PYTHONMALLOC=malloc FJ_SANITIZED=1
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:${ASAN_OPTIONS:-}"
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}")
    fi
    echo "== python module: $mod ($py$([ $sanitized = 1 ] && echo ', ASan runtime preloaded'))"
    local f name status tag tname details line
    for f in "$dir"/test_*.py; do
        [ -e "$f" ] || { bad "python: no tests in $dir"; return; }
        name=$(basename "$f")
        env "${envs[@]}" "$py" "$f" >"$TMP/py.out" 2>"$TMP/py.err" </dev/null
        status=$?
        local failed=0 reported=0
        while IFS= read -r line; do
            tag=${line%%$'\t'*}
            [ "$tag" = "$line" ] && continue
            line=${line#*$'\t'}
            tname=${line%%$'\t'*}
            details=
            [ "$tname" != "$line" ] && details=${line#*$'\t'}
            case $tag in
            PASS) ok "$tname"; reported=$((reported + 1)) ;;
            FAIL) bad "$tname" "${details//$'\t'/ / }"; failed=$((failed + 1)); reported=$((reported + 1)) ;;
            SKIP) skip "$tname" "$details"; reported=$((reported + 1)) ;;
            esac
        done <"$TMP/py.out"
        if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
            bad "python $name exited with status $status after $reported tests" \
                "$(grep -v '^ *$' "$TMP/py.err" | head -n 12 | tr '\n' '|' | head -c 1500)"
        elif [ "$reported" -eq 0 ]; then
            bad "python $name reported no tests" "$(head -c 500 "$TMP/py.err")"
        fi
    done
}
py_suite
