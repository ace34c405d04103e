// Throughput in Node: the fanjian package (make js) next to opencc-js 1.4.2 on
// the same text in the same run. A Markdown table on stdout.
//   node bench/js.mjs PACKAGE_DIR OPENCC_JS_DIR [TEXT [MIN_BYTES]]
// TEXT (default ../shared/opencc/compat/input.txt) is repeated to at least
// MIN_BYTES (default 4 MiB). Each converter runs once on the first 64 KiB
// (start-up and JIT warm-up, not timed), then RUNS times (default 3) on the
// whole text; MB/s is input bytes / 10^6 over the best run's wall time, and
// in brackets over its CPU time (the process's user + system: less moved by
// other load on the machine).
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';
import { fileURLToPath } from 'url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [pkgDir, occDir, textArg, minArg] = process.argv.slice(2);
if (!pkgDir || !occDir) {
  console.error('usage: node bench/js.mjs PACKAGE_DIR OPENCC_JS_DIR [TEXT [MIN_BYTES]]');
  process.exit(2);
}
const textFile = textArg || path.join(here, '..', '..', 'shared', 'opencc', 'compat', 'input.txt');
const minBytes = Number(minArg || 4 << 20);
const runs = Number(process.env.RUNS || 3);

const require = createRequire(import.meta.url);
let t0 = performance.now();
const fanjian = require(path.resolve(pkgDir, 'index.js'));
const fanjianLoad = performance.now() - t0;
t0 = performance.now();
const OpenCC = require(path.resolve(occDir, 'dist', 'umd', 'full.js'));
const occLoad = performance.now() - t0;

const piece = fs.readFileSync(textFile, 'utf8');
let text = piece;
while (Buffer.byteLength(text) < minBytes) text += piece;
const bytes = Buffer.byteLength(text);
const warm = text.slice(0, 65536);

function measure(label, make) {
  const start = performance.now();
  const conv = make();
  conv(warm);
  const setup = performance.now() - start;
  let best = Infinity, bestCpu = Infinity, out;
  for (let i = 0; i < runs; i++) {
    const t = performance.now(), c = process.cpuUsage();
    out = conv(text);
    const used = process.cpuUsage(c);
    best = Math.min(best, performance.now() - t);
    bestCpu = Math.min(bestCpu, (used.user + used.system) / 1000);
  }
  return { label, mbs: bytes / 1e6 / (best / 1000), cpu: bytes / 1e6 / (bestCpu / 1000), setup, out };
}

const pairs = [
  ['s2t', { from: 'cn', to: 't' }],
  ['s2tw', { from: 'cn', to: 'tw' }],
  ['s2twp', { from: 'cn', to: 'twp' }],
];
const rows = [];
for (const [profile, pair] of pairs) {
  const occ = measure('opencc-js 1.4.2 ' + JSON.stringify(pair), () => OpenCC.Converter(pair));
  const compat = measure('fanjian compat', () => fanjian.Converter({ ...pair, compat: true }));
  const dflt = measure('fanjian default', () => fanjian.Converter(pair));
  rows.push({ profile, occ, compat, dflt, identical: compat.out === occ.out });
}

const f1 = (x) => x.toFixed(1);
console.log('Node ' + process.version + ', fanjian ' + fanjian.version + ' (WebAssembly), ' + bytes + ' bytes of ' +
  path.basename(textFile) + ' repeated; best of ' + runs + ' runs after a warm-up on 64 KiB. Load: fanjian ' +
  f1(fanjianLoad) + ' ms (module and image), opencc-js ' + f1(occLoad) + ' ms.');
console.log('');
console.log('| profile | opencc-js MB/s | fanjian compat MB/s | ratio | fanjian default MB/s | ratio | compat output = opencc-js |');
console.log('|---|---:|---:|---:|---:|---:|---|');
for (const r of rows) {
  const v = (m) => f1(m.mbs) + ' (' + f1(m.cpu) + ')';
  const x = (m) => f1(m.mbs / r.occ.mbs) + '× (' + f1(m.cpu / r.occ.cpu) + '×)';
  console.log('| ' + [r.profile, v(r.occ), v(r.compat), x(r.compat), v(r.dflt), x(r.dflt), r.identical ? 'yes' : 'no']
    .join(' | ') + ' |');
}
