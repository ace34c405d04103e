"""Builds the Python package fanjian for pip (pyproject.toml, python/README.md):

    python3 -m venv env && env/bin/pip install --no-build-isolation --no-index .

The package is a directory fanjian/ whose __init__ is the extension module
(python/fanjianmodule.c with the C library's and the formats library's
sources and the formats library's C++ shim over libmarisa, which `make
python-sources` lists: the lists live in the Makefile only), the dictionary
image fanjian.fjd beside it (where the module looks first after
$FANJIAN_DICT), __main__.py (python -m fanjian), dask.py (fanjian.dask,
which needs Dask only when imported) and the stubs.

The image: $FANJIAN_BUILD_DICT names a prebuilt one to bundle; else the
repository's `make` builds build/fanjian.fjd, as `make` alone does (nothing
to do when it is up to date and was built with the same flags), which needs
the third-party data scripts/fetch-*.sh fetch once and keep in
~/.cache/fanjian.

Debian 12's venv has pip and setuptools but not the `wheel` package, which
setuptools 66 needs for its bdist_wheel; without it, the wheel is made by
the small OwnWheel command below.
"""
import base64
import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

from setuptools import Command, Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
# setuptools' own work, and make's for the generated sources, out of the way
# of make's build/ (whose objects a change of flags would rebuild).
SETUPTOOLS_BUILD = "build/setuptools"
MAKE_BUILD = SETUPTOOLS_BUILD + "/make"
IMAGE_MAGIC = b"FJDICT\x1a\n"  # src/image_format.h


def make(*targets, quiet=False):
    cmd = ["make", "--no-print-directory", "-C", ROOT, *targets]
    if quiet:
        cmd.insert(1, "-s")
    try:
        return subprocess.run(cmd, check=True, stdout=subprocess.PIPE if quiet else None,
                              universal_newlines=True).stdout
    except FileNotFoundError:
        sys.exit("setup.py: `make` is needed to build fanjian (apt-get install make)")
    except subprocess.CalledProcessError as e:
        sys.exit("setup.py: %s failed (exit status %d)" % (" ".join(cmd), e.returncode))


def make_lists(*args):
    """What mk/python.mk's python-sources prints: {"lib": [...], "formats": [...], ...}."""
    lists = {}
    for line in make(*args, "python-sources", quiet=True).splitlines():
        key, _, rest = line.partition(" ")
        lists[key] = rest.split()
    return lists


def version():
    with open(os.path.join(ROOT, "include", "fanjian.h"), encoding="utf-8") as f:
        m = re.search(r'#define FJ_VERSION_STRING "([^"]+)"', f.read())
    if not m:
        sys.exit("setup.py: no FJ_VERSION_STRING in include/fanjian.h")
    return m.group(1)


LISTS = make_lists("BUILD=" + MAKE_BUILD)


class BuildPy(build_py):
    """The Python files, the stubs, and the dictionary image."""

    def check_package(self, package, package_dir):
        # Its __init__ is the extension module: there is no __init__.py.
        return None

    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "fanjian")
        self.mkpath(pkg)
        self.copy_file(os.path.join(ROOT, "python", "fanjian.pyi"), os.path.join(pkg, "__init__.pyi"))
        # Copied whatever the times say: the image given this time may be older
        # than the one bundled last time.
        image, dst = self.image(), os.path.join(pkg, "fanjian.fjd")
        self.announce("copying %s -> %s" % (image, dst), 2)
        shutil.copyfile(image, dst + ".tmp")
        os.replace(dst + ".tmp", dst)

    def image(self):
        given = os.environ.get("FANJIAN_BUILD_DICT")
        if given:
            path, what = os.path.abspath(given), "$FANJIAN_BUILD_DICT"
        else:
            # make's own image, in its usual build directory.
            (dict_target,) = make_lists()["dict"]
            make(dict_target)
            path, what = os.path.join(ROOT, dict_target), "make"
        try:
            with open(path, "rb") as f:
                magic = f.read(len(IMAGE_MAGIC))
        except OSError as e:
            sys.exit("setup.py: %s (from %s): %s" % (path, what, e.strerror))
        if magic != IMAGE_MAGIC:
            sys.exit("setup.py: %s (from %s) is not a fanjian dictionary image" % (path, what))
        return path


class BuildExt(build_ext):
    """Generates the library's sources that make writes, then compiles in parallel."""

    def run(self):
        make("BUILD=" + MAKE_BUILD, "python-gen")
        super().run()

    def build_extensions(self):
        jobs = self.parallel if isinstance(self.parallel, int) and self.parallel > 0 else (os.cpu_count() or 1)
        compiler = self.compiler

        def compile_parallel(sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                             extra_preargs=None, extra_postargs=None, depends=None):
            macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)

            def one(obj):
                src, ext = build[obj]
                compiler._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)
            with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
                list(pool.map(one, [o for o in objects if o in build]))
            return objects

        if jobs > 1:
            compiler.compile = compile_parallel
        # The C++ shim over libmarisa (formats/marisa_shim.cc), compiled as
        # C++ and linked in as an object: the C flags above are not for it.
        ext = self.extensions[0]
        ext.extra_objects = list(ext.extra_objects or []) + compiler.compile(
            LISTS["cxx"], output_dir=self.build_temp, include_dirs=["include", "src"],
            extra_postargs=["-std=c++17", "-fvisibility=hidden"])
        super().build_extensions()
        # A symbol the lists missed shows only when the module loads: here,
        # not after the install.
        path = self.get_ext_fullpath(self.extensions[0].name)
        check = ("import importlib.util as u, sys; s = u.spec_from_file_location('fanjian', sys.argv[1]); "
                 "s.loader.exec_module(u.module_from_spec(s))")
        p = subprocess.run([sys.executable, "-c", check, path], stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            sys.exit("setup.py: the module built does not load: %s" % (p.stderr.strip().splitlines() or ["?"])[-1])


class OwnWheel(Command):
    """bdist_wheel without the `wheel` package: what `build` made, installed
    into a directory, with its .dist-info (METADATA, WHEEL, RECORD), zipped."""

    description = "build a wheel (PEP 427) without the wheel package"
    user_options = [("dist-dir=", "d", "directory for the wheel"),
                    ("bdist-dir=", "b", "temporary directory to put it together in")]

    def initialize_options(self):
        self.dist_dir = None
        self.bdist_dir = None

    def finalize_options(self):
        self.dist_dir = self.dist_dir or "dist"
        if self.bdist_dir is None:
            self.bdist_dir = os.path.join(self.get_finalized_command("bdist").bdist_base, "own-wheel")

    @staticmethod
    def egg2dist(egg_info_dir, dist_info_dir):
        """The .dist-info of an .egg-info (setuptools' dist_info command calls it)."""
        os.makedirs(dist_info_dir, exist_ok=True)
        shutil.copyfile(os.path.join(egg_info_dir, "PKG-INFO"), os.path.join(dist_info_dir, "METADATA"))
        entry_points = os.path.join(egg_info_dir, "entry_points.txt")
        if os.path.exists(entry_points):
            shutil.copyfile(entry_points, os.path.join(dist_info_dir, "entry_points.txt"))

    @staticmethod
    def tag():
        soabi = sysconfig.get_config_var("SOABI") or ""  # cpython-311-x86_64-linux-gnu
        if sys.implementation.name != "cpython" or not soabi.startswith("cpython-"):
            sys.exit("setup.py: a wheel without the wheel package is made for CPython only")
        abi = "cp" + soabi.split("-")[1]
        python = "cp%d%d" % sys.version_info[:2]
        platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
        return "%s-%s-%s" % (python, abi, platform)

    def run(self):
        self.run_command("build")
        if os.path.isdir(self.bdist_dir):
            shutil.rmtree(self.bdist_dir)
        install_lib = self.reinitialize_command("install_lib")
        install_lib.install_dir = self.bdist_dir
        install_lib.compile = 0
        install_lib.optimize = 0
        install_lib.skip_build = 1
        self.run_command("install_lib")
        self.run_command("egg_info")
        egg_info = self.get_finalized_command("egg_info")
        name = re.sub(r"[^\w.]+", "_", self.distribution.get_name())
        ver = self.distribution.get_version()
        dist_info = os.path.join(self.bdist_dir, "%s-%s.dist-info" % (name, ver))
        self.egg2dist(egg_info.egg_info, dist_info)
        tag = self.tag()
        with open(os.path.join(dist_info, "WHEEL"), "w", encoding="utf-8") as f:
            f.write("Wheel-Version: 1.0\nGenerator: fanjian setup.py\nRoot-Is-Purelib: false\n"
                    "Tag: %s\n" % tag)
        files = []
        for top, dirs, names in os.walk(self.bdist_dir):
            dirs.sort()
            files += [os.path.join(top, n) for n in sorted(names)]
        record_name = os.path.relpath(os.path.join(dist_info, "RECORD"), self.bdist_dir)
        lines = []
        for path in files:
            with open(path, "rb") as f:
                data = f.read()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            lines.append("%s,sha256=%s,%d" % (os.path.relpath(path, self.bdist_dir), digest, len(data)))
        lines.append("%s,," % record_name)
        record = os.path.join(self.bdist_dir, record_name)
        with open(record, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        files.append(record)
        # The .dist-info last, as PEP 427 recommends.
        files.sort(key=lambda p: (os.path.relpath(p, self.bdist_dir).startswith(os.path.basename(dist_info)), p))
        self.mkpath(self.dist_dir)
        wheel = os.path.join(self.dist_dir, "%s-%s-%s.whl" % (name, ver, tag))
        with zipfile.ZipFile(wheel + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
            for path in files:
                z.write(path, os.path.relpath(path, self.bdist_dir))
        os.replace(wheel + ".tmp", wheel)
        self.announce("wrote %s" % wheel, 2)


commands = {"build_py": BuildPy, "build_ext": BuildExt}
try:
    import wheel.bdist_wheel  # noqa: F401 - setuptools' bdist_wheel uses it
except ImportError:
    commands["bdist_wheel"] = OwnWheel

HEADERS = [os.path.join(d, f) for d in ("include", "src", "formats")
           for f in sorted(os.listdir(os.path.join(ROOT, d))) if f.endswith(".h")]

setup(
    version=version(),
    packages=["fanjian"],
    package_dir={"fanjian": "python/fanjian"},
    package_data={"fanjian": ["py.typed"]},
    ext_modules=[Extension(
        "fanjian.__init__",
        sources=["python/fanjianmodule.c"] + LISTS["lib"] + LISTS["formats"] + LISTS["gen"],
        depends=HEADERS,
        include_dirs=["include", "src"],
        # The Makefile's language and feature flags; the library's symbols
        # stay inside the module; assertions as in make's build.
        extra_compile_args=["-std=c11", "-D_DEFAULT_SOURCE", "-D_POSIX_C_SOURCE=200809L",
                            "-fvisibility=hidden", "-UNDEBUG"],
        libraries=[lib[2:] for lib in LISTS["libs"] if lib.startswith("-l")],
    )],
    cmdclass=commands,
    options={"build": {"build_base": SETUPTOOLS_BUILD},
             "egg_info": {"egg_base": SETUPTOOLS_BUILD}},
    zip_safe=False,
)
