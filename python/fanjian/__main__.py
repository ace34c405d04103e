"""python -m fanjian: one input converted as the CLI converts it.

    python -m fanjian -c s2t -i in.txt -o out.txt
    python -m fanjian -c s2twp < in.txt > out.txt
    python -m fanjian --to tw book.epub -o book.tw.epub

The options are the fanjian CLI's for one file (its trees, clean, detect and
serve are the C program's). A file is converted by fanjian.convert_file, so
its encoding is detected and its format follows its extension (or --format);
the output replaces OUTPUT whole or not at all. Standard input is text unless
--format says otherwise.
"""
import argparse
import os
import shutil
import sys
import tempfile

import fanjian

PROG = "python -m fanjian"


def parse(argv):
    p = argparse.ArgumentParser(
        prog=PROG, description="Converts Chinese text between Simplified and Traditional script "
        "and their regional standards (one input; the fanjian CLI for more).")
    p.add_argument("file", nargs="?", metavar="FILE", help="input file (default: standard input)")
    p.add_argument("-c", "--config", metavar="PROFILE",
                   help="s2t t2s s2tw tw2s s2twp tw2sp s2hk hk2s s2hkp hk2sp t2tw tw2t t2hk "
                   "hk2t t2jp jp2t (OpenCC names like s2t.json are accepted; default: s2t)")
    p.add_argument("--to", metavar="TARGET",
                   help="instead of -c: any input to one standard: tw twp hk hkp hant cn hans")
    p.add_argument("-i", "--input", metavar="FILE", help="input file (same as FILE; - is standard input)")
    p.add_argument("-o", "--output", metavar="FILE", help="output file (default: standard output)")
    p.add_argument("--compat", action="store_true", help="OpenCC 1.4.2-identical output")
    p.add_argument("--repair", metavar="LEVEL", choices=("auto", "careful", "thorough", "off"),
                   default="auto", help="auto (default), careful, thorough or off")
    p.add_argument("--clean", action="store_true", help="remove site boilerplate before converting")
    p.add_argument("--quotes", metavar="STYLE", choices=("tw", "hk", "cn", "keep"),
                   help="quotation marks: tw, cn or keep (default: the profile's)")
    p.add_argument("--punct", action="store_true", help="。。。 -> …… and full-width , ! ? : ;")
    p.add_argument("--from-encoding", metavar="ENC", help="the input's encoding (default: detected)")
    p.add_argument("--to-encoding", metavar="ENC", help="write ENC instead of UTF-8")
    p.add_argument("--lossy", action="store_true",
                   help="bytes that do not decode become U+FFFD, characters ENC cannot hold '?'")
    p.add_argument("--format", metavar="FMT",
                   help="text html xhtml markdown srt ass vtt epub (default: by extension)")
    p.add_argument("--dict", metavar="IMAGE", help="dictionary image (default: the package's)")
    p.add_argument("--list", action="store_true", help="list the profiles")
    p.add_argument("--version", action="version", version="fanjian " + fanjian.__version__)
    args = p.parse_args(argv)
    if args.file and args.input:
        p.error("give the input once: FILE or -i FILE")
    if not args.config and not args.to:
        args.config = "s2t"  # as the CLI and OpenCC: s2t when none is given
    if args.config and args.to:
        p.error("-c and --to do not go together")
    return args


def options(args):
    return dict(profile=None if args.to else args.config, to=args.to, compat=args.compat,
                repair=args.repair, clean=args.clean, quotes=args.quotes, punct=args.punct,
                to_encoding=args.to_encoding, lossy=args.lossy, dict=args.dict)


def convert(args):
    src = args.input or args.file
    if src == "-":
        src = None
    opts = options(args)
    if src is None:
        data = sys.stdin.buffer.read()
        fmt = args.format or "text"
        if args.output is None:
            out = fanjian.convert_bytes(data, encoding=args.from_encoding, format=fmt, **opts)
            sys.stdout.buffer.write(out)
            sys.stdout.buffer.flush()
            return
        # Through a file, so that the output is written as convert_file writes it.
        with tempfile.TemporaryDirectory(prefix="fanjian-") as tmp:
            path = os.path.join(tmp, "stdin")
            with open(path, "wb") as f:
                f.write(data)
            fanjian.convert_file(path, args.output, format=fmt, from_encoding=args.from_encoding, **opts)
        return
    if args.output is not None:
        fanjian.convert_file(src, args.output, format=args.format, from_encoding=args.from_encoding,
                             **opts)
        return
    with tempfile.TemporaryDirectory(prefix="fanjian-") as tmp:
        path = os.path.join(tmp, "out")
        fanjian.convert_file(src, path, format=args.format, from_encoding=args.from_encoding, **opts)
        with open(path, "rb") as f:
            shutil.copyfileobj(f, sys.stdout.buffer)
        sys.stdout.buffer.flush()


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        if args.list:
            for name in fanjian.profiles(dict=args.dict):
                print(name)
            return 0
        convert(args)
    except OSError as e:
        where = e.filename if e.filename is not None else ""
        print("%s: %s%s" % (PROG, "%s: " % where if where else "", e.strerror or e), file=sys.stderr)
        return 1
    except ValueError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        # The reader went away: say nothing more, as the CLI does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
