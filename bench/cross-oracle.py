#!/usr/bin/python3
"""Does another native gold predict this one's forms?

usage: cross-oracle.py FIT_DIR TEST_DIR [DIRECTION]

FIT_DIR and TEST_DIR are set directories of `make accuracy`
(build/accuracy/tune, build/accuracy/report). From FIT_DIR's gold and input
the script learns, for each input character with both neighbours (else with
the one before, else with the one after), the form that gold writes most
often. On TEST_DIR it writes that form wherever the context was seen, and
fanjian's default output elsewhere, then counts errors the way make accuracy
does (after folding, positions of lines whose lengths agree). If the forms
translators choose carried over from one set of packages to another, this
would make fewer errors than fanjian; it measures how much a model learnt
from other native text could gain. Prints: errors of fanjian, errors of the
fitted forms, positions scored.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fjscore  # noqa: E402


def read(d, name):
    with open(os.path.join(d, name), encoding='utf-8') as f:
        return f.read().split('\n')


def contexts(x, k):
    return ((x[k], x[max(0, k - 1):k + 2], k > 0), (x[k], 'b', x[max(0, k - 1):k + 1]),
            (x[k], 'a', x[k:k + 2]))


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    fit, test = argv[1], argv[2]
    d = argv[3] if len(argv) == 4 else 's2tw'
    gold_name = 'gold-cn.txt' if d == 't2s' else 'gold-tw.txt'
    table = {}
    for x, g in zip(read(fit, f'{d}.in.txt'), read(fit, gold_name)):
        g = fjscore.fold(g)
        if len(g) != len(x):
            continue
        for k, form in enumerate(g):
            for ctx in contexts(x, k):
                c = table.setdefault(ctx, {})
                c[form] = c.get(form, 0) + 1
    ours = fitted = n = 0
    for x, g, h in zip(read(test, f'{d}.in.txt'), read(test, gold_name),
                       read(test, f'{d}.default.txt')):
        g, h = fjscore.fold(g), fjscore.fold(h)
        if not (len(g) == len(x) == len(h)):
            continue
        for k, form in enumerate(g):
            guess = h[k]
            for ctx in contexts(x, k):
                if ctx in table:
                    c = table[ctx]
                    guess = max(c, key=c.get)
                    break
            ours += h[k] != form
            fitted += guess != form
            n += 1
    print(f'{d}: fanjian {ours} errors, forms fitted on {fit}: {fitted} errors, '
          f'{n} positions')


if __name__ == '__main__':
    main(sys.argv)
