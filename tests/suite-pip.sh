# shellcheck shell=bash
# shellcheck disable=SC2154 # rc is set by run.sh's run()
# The Python package as pip users install it (pyproject.toml, setup.py):
# a clone of the committed tree, the issue's own command in a fresh virtual
# environment, conversions, `python -m fanjian`, pip uninstall, a wheel
# installed into a second fresh environment, and python/install.sh (make
# python-install) into a third. Offline: pip gets --no-index; for `pip
# install .` the clone's make builds the image from the data the build
# fetched (~/.cache/fanjian), as for a user; `pip wheel` bundles the build's
# image instead ($FANJIAN_DICT as $FANJIAN_BUILD_DICT), the other way.
#
# Sourced by tests/run.sh, which provides ok, bad, check, skip, run, err1 and
# FJ, TMP, B, ROOT, FANJIAN_DICT. Every name defined here starts with pip_ /
# PIP_. It runs in the plain build only: setuptools compiles with Python's
# flags, not the build's, so the sanitizer run would repeat it exactly.

pip_suite() {
    local py=/usr/bin/python3
    local f
    for f in "$B/tests/unit" "$B"/python/fanjian*.so; do
        grep -qa __asan_init "$f" 2>/dev/null || continue
        skip "pip install ." "run in the plain build only (setuptools' flags are the same in both)"
        return
    done
    if [ ! -x "$py" ] || ! "$py" -c 'import ensurepip, venv' 2>/dev/null; then
        skip "pip install ." "$py with venv and ensurepip (python3-venv) not installed"
        return
    fi
    if ! git -C "$ROOT" rev-parse --verify -q HEAD >/dev/null; then
        skip "pip install ." "$ROOT is not a git repository with a commit to clone"
        return
    fi
    local w=$TMP/pip dict=$FANJIAN_DICT
    case $dict in /*) ;; *) dict=$ROOT/$dict ;; esac
    rm -rf "$w"
    mkdir -p "$w/data"
    local -a pipenv=(env -u FANJIAN_DICT -u FANJIAN_BUILD_DICT PIP_NO_CACHE_DIR=1 PIP_CONFIG_FILE=/dev/null
                     PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1)
    # Conversions run with no $FANJIAN_DICT, away from the clone.
    local -a noenv=(env -u FANJIAN_DICT PYTHONDONTWRITEBYTECODE=1)

    if ! git clone -q "$ROOT" "$w/src" 2>"$w/clone.err"; then
        bad "pip: git clone of $ROOT" "$(head -c 300 "$w/clone.err")"
        return
    fi
    local start
    start=$(now)
    # -- the issue's command, word for word, in the clone --------------------------
    if ! (cd "$w/src" && "$py" -m venv env && "${pipenv[@]}" env/bin/pip install --no-build-isolation \
            --no-index .) >"$w/install.log" 2>&1; then
        bad "pip: python3 -m venv env && env/bin/pip install --no-build-isolation --no-index . (clean clone)" \
            "$(grep -v '^ *$' "$w/install.log" | tail -n 12 | tr '\n' '|' | head -c 1500)"
        return
    fi
    ok "pip: python3 -m venv env && env/bin/pip install --no-build-isolation --no-index . (clean clone, $(elapsed "$start") s)"
    local a=$w/src/env
    local venv_has
    venv_has=$("$a/bin/python" -c 'import importlib.util as u; print(" ".join(m for m in ("setuptools", "wheel") if u.find_spec(m)))')
    echo "     (the fresh venv has: pip $venv_has)"
    # Apart from env/ and what .gitignore ignores (build/), the clone is as it was.
    local dirty
    dirty=$(git -C "$w/src" status --porcelain | grep -v -e '^?? env/$')
    if [ -z "$dirty" ]; then
        ok "pip: the build writes only under build/ (the clone's files as committed)"
    else
        bad "pip: the build left files in the clone" "$(echo "$dirty" | head -n 5 | tr '\n' ' ')"
    fi

    # -- converting with the installed package ---------------------------------------
    local site
    site=$("$a/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
    printf '这是只有一个人的世界，头发干了，“鼠标”和打印机。\n' >"$w/data/in.txt"
    (cd / && "${noenv[@]}" "$a/bin/python" -c '
import sys, fanjian, fanjian.opencc
text = open(sys.argv[1], encoding="utf-8").read()
print(fanjian.Converter().dict_path)
sys.stdout.write(fanjian.convert(text, "s2twp"))
sys.stdout.write(fanjian.opencc.OpenCC("s2t").convert(text.encode("utf-8")))
' "$w/data/in.txt") >"$w/py.out" 2>"$w/py.err"
    local want
    want=$(printf '%s\n' "$site/fanjian/fanjian.fjd"; "$FJ" -c s2twp "$w/data/in.txt"; "$FJ" --compat -c s2t "$w/data/in.txt")
    if [ "$(cat "$w/py.out")" = "$want" ]; then
        ok "pip: import fanjian with no FANJIAN_DICT: the image inside the package; convert = CLI, OpenCC = CLI --compat"
    else
        bad "pip: import fanjian with no FANJIAN_DICT" "got: $(head -c 400 "$w/py.out")" \
            "expected: $want" "$(tail -n 3 "$w/py.err")"
    fi

    # -- python -m fanjian -------------------------------------------------------------
    (cd "$w/data" && "${noenv[@]}" "$a/bin/python" -m fanjian -c s2t -i in.txt -o out.txt) 2>"$w/m.err"
    "$FJ" -c s2t "$w/data/in.txt" >"$w/data/cli.txt"
    if cmp -s "$w/data/out.txt" "$w/data/cli.txt"; then
        ok "pip: python -m fanjian -c s2t -i in.txt -o out.txt = the CLI's output"
    else
        bad "pip: python -m fanjian -c s2t -i in.txt -o out.txt" "$(head -c 300 "$w/m.err")"
    fi
    # GBK in, detected as the CLI detects it; standard input to standard output.
    printf '头发干了，鼠标和打印机。\n' | iconv -f UTF-8 -t GBK >"$w/data/gbk.txt"
    "${noenv[@]}" "$a/bin/python" -m fanjian --to twp "$w/data/gbk.txt" >"$w/data/m-gbk.txt" 2>"$w/m.err"
    "$FJ" --to twp "$w/data/gbk.txt" >"$w/data/cli-gbk.txt"
    "${noenv[@]}" "$a/bin/python" -m fanjian -c s2twp --compat <"$w/data/in.txt" >"$w/data/m-stdin.txt" 2>>"$w/m.err"
    "$FJ" -c s2twp --compat <"$w/data/in.txt" >"$w/data/cli-stdin.txt"
    if [ -s "$w/data/m-gbk.txt" ] && cmp -s "$w/data/m-gbk.txt" "$w/data/cli-gbk.txt" &&
       cmp -s "$w/data/m-stdin.txt" "$w/data/cli-stdin.txt"; then
        ok "pip: python -m fanjian: a GBK file to standard output, standard input to standard output = CLI"
    else
        bad "pip: python -m fanjian: GBK file, standard input" "$(head -c 300 "$w/m.err")"
    fi
    run "${noenv[@]}" "$a/bin/python" -m fanjian -c s2t -i "$w/data/nonesuch.txt" -o "$w/data/none.out"
    local rc_missing=$rc err_missing
    err_missing=$(err1)
    run "${noenv[@]}" "$a/bin/python" -m fanjian -i "$w/data/in.txt"
    "$FJ" -i "$w/data/in.txt" >"$w/data/cli-default.txt"
    if [ "$rc_missing" -eq 1 ] && [[ $err_missing == *nonesuch.txt* ]] && [ ! -e "$w/data/none.out" ] &&
       [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$w/data/cli-default.txt"; then
        ok "pip: python -m fanjian: a missing input (exit 1, named); no profile is s2t, as the CLI"
    else
        bad "pip: python -m fanjian errors" "missing input: exit $rc_missing: $err_missing" "no profile: exit $rc: $(err1)"
    fi

    # -- make python with a virtual environment's interpreter (no python3-config in it) --
    # -n: what it would do (the recipe of the error is printed, not run).
    run make -n --no-print-directory -C "$ROOT" BUILD="$B" python PYTHON="$a/bin/python"
    if [ "$rc" -eq 0 ] && ! grep -q python3-dev "$TMP/out" "$TMP/err"; then
        ok "pip: make python PYTHON=venv/bin/python is planned (no 'install python3-dev')"
    else
        bad "pip: make -n python PYTHON=venv/bin/python: exit $rc" "$(err1)"
    fi
    run make --no-print-directory -C "$ROOT" BUILD="$B" python PYTHON="$w/nonesuch/python"
    if [ "$rc" -ne 0 ] && grep -q "does not run as Python 3" "$TMP/err"; then
        ok "pip: make python PYTHON=(not a Python): says so"
    else
        bad "pip: make python PYTHON=(not a Python): exit $rc" "$(err1)"
    fi

    # -- a wheel, then pip uninstall -----------------------------------------------------
    start=$(now)
    if (cd "$w/src" && "${pipenv[@]}" FANJIAN_BUILD_DICT="$dict" env/bin/pip wheel --no-build-isolation \
            --no-index -w "$w/wheels" .) >"$w/wheel.log" 2>&1 &&
       [ "$(find "$w/wheels" -name 'fanjian-*.whl' | wc -l)" -eq 1 ]; then
        ok "pip: FANJIAN_BUILD_DICT=(the build's image) pip wheel --no-build-isolation --no-index . makes one wheel ($(elapsed "$start") s)"
    else
        bad "pip: pip wheel --no-build-isolation --no-index ." \
            "$(grep -v '^ *$' "$w/wheel.log" | tail -n 8 | tr '\n' '|' | head -c 1000)"
    fi
    run "$a/bin/pip" uninstall -y fanjian
    local left
    left=$(find "$site" -maxdepth 1 -iname 'fanjian*')
    if [ "$rc" -eq 0 ] && [ -z "$left" ] &&
       ! "${noenv[@]}" "$a/bin/python" -c 'import fanjian' 2>/dev/null; then
        ok "pip: pip uninstall fanjian removes the package (import fails, nothing left in site-packages)"
    else
        bad "pip: pip uninstall fanjian: exit $rc" "left: $left" "$(err1)"
    fi

    # -- the wheel into a second fresh environment, the clone gone -----------------------
    rm -rf "$w/src"
    local whl
    whl=$(find "$w/wheels" -name 'fanjian-*.whl' | head -n 1)
    if [ -n "$whl" ] && "$py" -m venv "$w/b" && "${pipenv[@]}" "$w/b/bin/pip" install --no-index "$whl" \
            >"$w/b.log" 2>&1; then
        local got bsite
        got=$(cd / && "${noenv[@]}" "$w/b/bin/python" -m fanjian -c s2tw <"$w/data/in.txt" 2>&1)
        bsite=$("$w/b/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
        if [ "$got" = "$("$FJ" -c s2tw "$w/data/in.txt")" ] && cmp -s "$bsite/fanjian/fanjian.fjd" "$dict"; then
            ok "pip: the wheel (with the build's image) installs into a second fresh venv (the clone removed) and converts"
        else
            bad "pip: the wheel in a second venv converts" "$got"
        fi
    else
        bad "pip: the wheel installs into a second fresh venv" "$(tail -n 5 "$w/b.log" 2>/dev/null | tr '\n' '|')"
    fi

    # -- make python-install's script into a third venv ----------------------------------
    local ext
    ext=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    if [ ! -e "$B/python/fanjian$ext" ]; then
        bad "pip: python/install.sh: $B/python/fanjian$ext not built (make python)"
        return
    fi
    "$py" -m venv --without-pip "$w/c"
    local csite
    csite=$("$w/c/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
    run env PYTHON="$w/c/bin/python" EXT="$ext" "$ROOT/python/install.sh" install "$B/python/fanjian$ext" \
        "$dict" "$ROOT/python/fanjian/__main__.py" "$ROOT/python/fanjian.pyi"
    got=$(cd / && "${noenv[@]}" "$w/c/bin/python" -m fanjian -c s2tw <"$w/data/in.txt" 2>&1)
    if [ "$rc" -eq 0 ] && [ "$got" = "$("$FJ" -c s2tw "$w/data/in.txt")" ] && [ -e "$csite/fanjian/fanjian.fjd" ]; then
        ok "pip: make python-install's python/install.sh into a venv: import and python -m fanjian"
    else
        bad "pip: python/install.sh install into a venv: exit $rc" "$(err1)" "$got"
    fi
    run env PYTHON="$w/c/bin/python" EXT="$ext" "$ROOT/python/install.sh" uninstall
    if [ "$rc" -eq 0 ] && [ ! -e "$csite/fanjian" ] && ! "$w/c/bin/python" -c 'import fanjian' 2>/dev/null; then
        ok "pip: make python-uninstall's python/install.sh removes it all"
    else
        bad "pip: python/install.sh uninstall: exit $rc" "$(err1)" "$(ls "$csite/fanjian" 2>&1)"
    fi
    # Where pip installed it, pip uninstalls it.
    run env PYTHON="$w/b/bin/python" EXT="$ext" "$ROOT/python/install.sh" install "$B/python/fanjian$ext" \
        "$dict" "$ROOT/python/fanjian/__main__.py" "$ROOT/python/fanjian.pyi"
    if [ "$rc" -ne 0 ] && grep -q "pip uninstall fanjian" "$TMP/err"; then
        ok "pip: python/install.sh refuses a venv where pip installed fanjian"
    else
        bad "pip: python/install.sh over pip's install: exit $rc" "$(err1)"
    fi
    rm -rf "$w"
}
pip_suite
