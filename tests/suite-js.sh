# The JavaScript package (js/, `make js`): installed from its tarball into a
# fresh directory with npm (no registry: the package has no dependencies),
# then, in Node, every case file and OpenCC 1.4.2's compat outputs against
# the CLI (js/test-cases.js). Sourced by tests/run.sh (its run sets rc).
# shellcheck disable=SC2154
js_suite() {
    # The glue natively, under the sanitizers in the ASan run.
    if [ -x "$B/js/glue-check" ] && [ -r "$FANJIAN_SHARED/opencc/compat/input.txt" ]; then
        run "$B/js/glue-check" "$FANJIAN_DICT" "$FANJIAN_SHARED/opencc/compat/input.txt"
        if [ "$rc" -eq 0 ] && grep -q '^PASS' "$TMP/out"; then
            ok "js glue: js/glue.c natively on the compat input ($B)"
        else
            bad "js glue: js/glue.c natively (exit $rc)" "$(grep -v '^PASS' "$TMP/out" | head -n 3)" "$(head -n 5 "$TMP/err")"
        fi
    elif [ ! -x "$B/js/glue-check" ]; then
        bad "js glue: $B/js/glue-check not built (make $B/js/glue-check)"
    else
        skip "js glue" "$FANJIAN_SHARED/opencc/compat not found (no ../shared)"
    fi
    if ! command -v emcc >/dev/null || ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        skip "js package" "emcc, node or npm not installed (scripts/install-deps.sh installs them)"
        return
    fi
    local log=$TMP/js-build.log tgz dir=$TMP/js-install line status name detail
    # make check builds it (CHECK_DEPS); alone: make js.
    for tgz in "$B"/js/fanjian-*.tgz; do break; done
    if [ ! -e "$tgz" ]; then
        bad "js package: $B/js/fanjian-*.tgz not built (make js)"
        return
    fi
    case $tgz in /*) ;; *) tgz=$ROOT/$tgz ;; esac
    # Its own package.json: npm installs here, not into a node_modules above.
    mkdir -p "$dir" && printf '{ "private": true }\n' >"$dir/package.json"
    if (cd "$dir" && npm install --offline --no-audit --no-fund --no-package-lock "$tgz") >"$log" 2>&1 &&
        [ -f "$dir/node_modules/fanjian/fanjian.wasm" ]; then
        ok "js package: npm install ./$(basename "$tgz") into a fresh directory"
    else
        bad "js package: npm install $tgz" "$(tail -n 3 "$log")"
        return
    fi
    local fj_abs=$FJ
    case $fj_abs in /*) ;; *) fj_abs=$ROOT/$fj_abs ;; esac
    cp "$ROOT/js/test-cases.js" "$dir/"
    (cd "$dir" && node test-cases.js "$fj_abs" "$(cd "$ROOT" && realpath "$FANJIAN_DICT")" "$FANJIAN_CASES" \
        "$FANJIAN_SHARED" "$TMP") \
        >"$TMP/js-tests.out" 2>"$TMP/js-tests.err"
    status=$?
    while IFS= read -r line; do
        name=${line#* }
        detail=
        case $name in *$'\t'*) detail=${name#*$'\t'}; name=${name%%$'\t'*} ;; esac
        case $line in
        PASS*) ok "$name" ;;
        SKIP*) skip "$name" "$detail" ;;
        FAIL*) bad "$name" "$detail" ;;
        esac
    done <"$TMP/js-tests.out"
    if [ "$status" -ne 0 ]; then bad "js tests: node exited $status" "$(head -c 600 "$TMP/js-tests.err")"; fi
    # ES modules: the same API by import.
    if (cd "$dir" && FANJIAN_DICT='' node --input-type=module -e \
        "import fj, { Converter } from 'fanjian'; if (Converter({ from: 'cn', to: 'tw' })('汉语') !== '漢語' || typeof fj.detect !== 'function') process.exit(1);") \
        >"$log" 2>&1; then
        ok "js package: import from an ES module"
    else
        bad "js package: import from an ES module" "$(tail -n 3 "$log")"
    fi
    # The browser: the package's page in headless Chromium, offline (js/test-browser.mjs).
    local chromium_bin=${CHROMIUM:-/usr/bin/chromium} pw_dir
    if [ ! -x "$chromium_bin" ]; then
        skip "js package in Chromium" "$chromium_bin is not installed"
    elif [ ! -r "$FANJIAN_SHARED/opencc/compat/input.txt" ]; then
        skip "js package in Chromium" "$FANJIAN_SHARED/opencc/compat not found (no ../shared)"
    elif ! pw_dir=$("$ROOT/scripts/fetch-playwright.sh" 2>"$log"); then
        skip "js package in Chromium" "npm could not fetch playwright-core: $(tail -n 1 "$log")"
    else
        FANJIAN_DICT='' node "$ROOT/js/test-browser.mjs" "$pw_dir" "$dir/node_modules/fanjian" "$chromium_bin" \
            "$FANJIAN_SHARED/opencc/compat" >"$TMP/js-browser.out" 2>"$TMP/js-browser.err"
        status=$?
        while IFS= read -r line; do
            name=${line#* }
            detail=
            case $name in *$'\t'*) detail=${name#*$'\t'}; name=${name%%$'\t'*} ;; esac
            case $line in
            PASS*) ok "$name" ;;
            FAIL*) bad "$name" "$detail" ;;
            esac
        done <"$TMP/js-browser.out"
        if [ "$status" -ne 0 ]; then bad "js browser: node exited $status" "$(head -c 600 "$TMP/js-browser.err")"; fi
    fi
}
js_suite
