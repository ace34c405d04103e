#!/usr/bin/env python3
"""Helpers for tests/suite-repair-auto.sh, ours.

  repair-damage.py damage OPENCC_DATA < TSV    column 1 converted the careless
      way (first value in STCharacters, then in TWVariants, one character at
      a time, as bench/accuracy.py's damage()), one line each
  repair-damage.py gold < TSV                  column 2
  repair-damage.py errors GOLD OUTPUT          characters that differ, line by line
  repair-damage.py trickle SEED < FILE         copies stdin to stdout in pieces of
      1 to 97 bytes, each flushed, so that the reader sees many short reads
"""
import os
import random
import sys
import time


def first_values(path):
    table = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            parts = line.rstrip('\n').split('\t')
            if len(parts) == 2 and len(parts[0]) == 1 and parts[1]:
                table[parts[0]] = parts[1].split(' ')[0]
    return table


def main():
    what = sys.argv[1]
    if what == 'damage':
        d = os.path.join(sys.argv[2], 'dictionary')
        st = first_values(os.path.join(d, 'STCharacters.txt'))
        tw = first_values(os.path.join(d, 'TWVariants.txt'))
        for line in sys.stdin:
            src = line.rstrip('\n').split('\t')[0]
            print(''.join(tw.get(c, c) for c in (st.get(c, c) for c in src)))
    elif what == 'gold':
        for line in sys.stdin:
            print(line.rstrip('\n').split('\t')[1])
    elif what == 'errors':
        with open(sys.argv[2], encoding='utf-8') as g, open(sys.argv[3], encoding='utf-8') as o:
            gold, out = g.read().split('\n'), o.read().split('\n')
        if len(gold) != len(out):
            print('lines differ: %d against %d' % (len(gold), len(out)))
            sys.exit(1)
        print(sum(sum(1 for a, b in zip(x, y) if a != b) + abs(len(x) - len(y))
                  for x, y in zip(gold, out)))
    elif what == 'trickle':
        rng = random.Random(int(sys.argv[2]))
        data = sys.stdin.buffer.read()
        out = sys.stdout.buffer
        i = 0
        while i < len(data):
            n = rng.randint(1, 97)
            out.write(data[i:i + n])
            out.flush()
            i += n
            if rng.random() < 0.01:
                time.sleep(0.001)
    else:
        sys.exit('unknown command ' + what)


main()
