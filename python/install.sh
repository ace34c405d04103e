#!/usr/bin/env bash
# make python-install / python-uninstall (mk/python.mk): the package fanjian/
# into $PYTHON's virtual environment (its site-packages), or into the user's
# site-packages for a Python outside one.
#   PYTHON=... EXT=.cpython-311-x86_64-linux-gnu.so python/install.sh install MODULE IMAGE MAIN STUBS
#   PYTHON=... EXT=... python/install.sh uninstall
# Each file is written beside its place and renamed: a running process may
# have the old one mapped.
set -euo pipefail
mode=${1:?usage: install.sh install|uninstall ...}
shift
: "${PYTHON:?}" "${EXT:?}"
site=$("$PYTHON" -c 'import site, sys, sysconfig
print(sysconfig.get_path("platlib") if sys.prefix != sys.base_prefix else site.getusersitepackages())')
pkg=$site/fanjian
# The package's files, and what an older python-install put in site-packages itself.
files=("__init__$EXT" fanjian.fjd __main__.py dask.py __init__.pyi py.typed)
flat=("fanjian$EXT" fanjian.fjd fanjian.pyi)

shopt -s nullglob
by_pip=("$site"/fanjian-*.dist-info)
if [ ${#by_pip[@]} -gt 0 ]; then
    echo "python-$mode: pip installed fanjian in $site ($(basename "${by_pip[0]}")):" \
         "$PYTHON -m pip uninstall fanjian" >&2
    exit 1
fi

case $mode in
install)
    [ $# -eq 4 ] || { echo "usage: install.sh install MODULE IMAGE MAIN STUBS" >&2; exit 2; }
    install -d "$pkg"
    put() { # MODE SOURCE NAME
        install -m "$1" "$2" "$pkg/$3.tmp"
        mv -f "$pkg/$3.tmp" "$pkg/$3"
        echo "  $pkg/$3"
    }
    put 755 "$1" "__init__$EXT"
    put 644 "$2" fanjian.fjd
    put 644 "$3" __main__.py
    # fanjian.dask, beside __main__.py in the source (python/fanjian/).
    put 644 "$(dirname "$3")/dask.py" dask.py
    put 644 "$4" __init__.pyi
    put 644 /dev/null py.typed
    for f in "${flat[@]}"; do rm -f "${site:?}/$f"; done
    echo "installed: $PYTHON -c 'import fanjian'; $PYTHON -m fanjian -c s2t (from $pkg)"
    ;;
uninstall)
    for f in "${files[@]}"; do rm -f "$pkg/$f"; done
    rm -f "$pkg"/__pycache__/__main__.*.pyc "$pkg"/__pycache__/dask.*.pyc
    rmdir "$pkg/__pycache__" 2>/dev/null || true
    for f in "${flat[@]}"; do rm -f "${site:?}/$f"; done
    if [ -d "$pkg" ] && ! rmdir "$pkg" 2>/dev/null; then
        echo "python-uninstall: $pkg holds files python-install did not put there; left as it is" >&2
    fi
    echo "uninstalled fanjian from $site"
    ;;
*)
    echo "usage: install.sh install|uninstall" >&2
    exit 2
    ;;
esac
