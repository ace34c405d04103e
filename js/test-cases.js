// The installed package against the case files and OpenCC 1.4.2's output,
// next to the CLI (tests/suite-js.sh runs it from a directory where
// `npm install ./fanjian-*.tgz` put the package). One line per test:
// "PASS name", "FAIL name\tdetail" or "SKIP name\treason".
//   node test-cases.js CLI CLI_DICT CASES_DIR SHARED_DIR TMP_DIR
// The package uses its own image; the CLI, CLI_DICT.
'use strict';
const fs = require('fs');
const path = require('path');
const childProcess = require('child_process');

const [cli, cliDict, casesDir, sharedDir, tmp] = process.argv.slice(2);
delete process.env.FANJIAN_DICT;
const fanjian = require('fanjian');
const cliEnv = Object.assign({}, process.env, { FANJIAN_DICT: path.resolve(cliDict) });
const execFileSync = (file, args, options) => childProcess.execFileSync(file, args, Object.assign({ env: cliEnv }, options));
const say = (status, name, detail) => console.log(status + ' ' + name + (detail ? '\t' + detail : ''));

function test(name, body) {
  try {
    const skipped = body();
    if (typeof skipped === 'string') say('SKIP', name, skipped);
    else say('PASS', name);
  } catch (e) {
    say('FAIL', name, String(e && e.message || e).replace(/\s+/g, ' ').slice(0, 600));
  }
}

// A case file's field (escapes \t \n \r \\ \xHH) as bytes, as tests/run.sh's printf %b.
function unescapeBytes(field) {
  const raw = Buffer.from(field, 'utf8'), out = [];
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0x5c && i + 1 < raw.length) {
      const n = String.fromCharCode(raw[i + 1]);
      if (n === 't') { out.push(9); i++; continue; }
      if (n === 'n') { out.push(10); i++; continue; }
      if (n === 'r') { out.push(13); i++; continue; }
      if (n === '\\') { out.push(0x5c); i++; continue; }
      if (n === 'x' && i + 3 < raw.length) { out.push(parseInt(raw.subarray(i + 2, i + 4).toString(), 16)); i += 3; continue; }
    }
    out.push(raw[i]);
  }
  return Buffer.from(out);
}

function runCli(args, input, viaStdin) {
  if (viaStdin) return execFileSync(cli, args, { input, stdio: ['pipe', 'pipe', 'pipe'] });
  const file = path.join(tmp, 'js-case.in');
  fs.writeFileSync(file, input);
  return execFileSync(cli, [...args, file], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
}

const same = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
const show = (b) => JSON.stringify(Buffer.from(b).toString('utf8').slice(0, 80));
const isUtf8 = (b) => { try { new TextDecoder('utf-8', { fatal: true }).decode(b); return true; } catch (e) { return false; } };
const asString = (b) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(b);

// tests/cases/*.tsv (and ../shared/cases), in the mode the first line names,
// as tests/run.sh runs them through the CLI.
function caseFile(file, label, forceMode) {
  test('js cases ' + label + ': package = expected = CLI', () => {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const mode = forceMode || { '# mode: default': 'default', '# mode: thorough': 'thorough' }[lines[0]] || 'compat';
    const optLine = lines.find((l) => l.startsWith('# cli: '));
    const cliOpts = optLine ? optLine.slice(7).split(/\s+/).filter(Boolean) : [];
    const failures = [];
    let n = 0;
    lines.forEach((line, i) => {
      if (!line || line.startsWith('#')) return;
      const f = line.split('\t');
      if (f.length !== 3) { failures.push('line ' + (i + 1) + ': not three fields'); return; }
      const [profile, input, expected] = [f[0], unescapeBytes(f[1]), f[2]];
      const where = 'line ' + (i + 1) + ' ' + profile;
      n++;
      try {
        if (profile === 'detect') {
          const got = fanjian.detect(input).script;
          const byCli = runCli(['detect'], input, true).toString().trim().replace(/ \([^()]*\)$/, '');
          if (got !== expected || got !== byCli) failures.push(where + ': ' + got + ', expected ' + expected + ', CLI ' + byCli);
          return;
        }
        let got, want, byCli;
        if (profile === 'clean' || profile === 'cleaned') {
          got = fanjian.clean(input);
          want = profile === 'cleaned' ? unescapeBytes(expected) : expected === 'drop' ? Buffer.alloc(0) : input;
          byCli = runCli(['clean'], input);
        } else {
          const repairCase = profile === 'repair';
          const prof = repairCase ? 't2tw' : profile;
          const cmode = repairCase ? 'default' : mode;
          const options = { compat: cmode === 'compat', repair: cmode === 'thorough' ? 'thorough' : 'auto' };
          const which = prof.startsWith('to:') ? ['--to', prof.slice(3)] : ['-c', prof];
          if (prof.startsWith('to:')) { options.to = prof.slice(3); delete options.compat; }
          got = fanjian.convert(input, prof.startsWith('to:') ? options : prof, options);
          want = unescapeBytes(expected);
          const modeArgs = { compat: ['--compat'], thorough: ['--repair=thorough'] }[cmode] || [];
          byCli = runCli([...modeArgs, ...(repairCase ? [] : cliOpts), ...which], input);
          // The string API gives the same, where a string holds the input.
          if (isUtf8(input)) {
            const asText = fanjian.convert(asString(input), prof.startsWith('to:') ? options : prof, options);
            if (!same(Buffer.from(asText, 'utf8'), got)) failures.push(where + ': string ' + show(Buffer.from(asText)) + ' but bytes ' + show(got));
          }
        }
        if (!same(got, want) || !same(got, byCli)) failures.push(where + ': got ' + show(got) + ', expected ' + show(want) + ', CLI ' + show(byCli));
      } catch (e) {
        failures.push(where + ': ' + e.message);
      }
    });
    if (n === 0) throw new Error('no cases in ' + file);
    if (failures.length) throw new Error(failures.length + ' of ' + n + ' cases differ: ' + failures.slice(0, 6).join('; '));
  });
}

// tests/cases/user/*.tsv: "#phrase FROM TO" and "#protect TERM" lines apply
// to every case, with markup on (as tests/python/test_user.py runs them).
function userFile(file, label) {
  test('js user cases ' + label + ': package = expected = CLI', () => {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const compat = lines[0] !== '# mode: default';
    const unescape = (s) => s.replace(/\\(.)/g, (m, c) => ({ t: '\t', n: '\n', r: '\r' })[c] || c);
    const phrases = [], protect = [], cases = [];
    lines.forEach((line, i) => {
      const f = line.split('\t');
      if (f[0] === '#phrase') phrases.push([f[1], f[2]]);
      else if (f[0] === '#protect') protect.push(f[1]);
      else if (line && !line.startsWith('#')) cases.push([i + 1, f[0], unescape(f[1]), unescape(f[2])]);
    });
    const ph = path.join(tmp, 'js-user.phrases'), pr = path.join(tmp, 'js-user.protect');
    fs.writeFileSync(ph, phrases.map((p) => p.join('\t') + '\n').join(''));
    fs.writeFileSync(pr, protect.map((t) => t + '\n').join(''));
    const failures = [];
    for (const [n, profile, input, want] of cases) {
      const got = fanjian.convert(input, profile, { compat, phrases, protect, markup: true });
      const byCli = runCli(['-c', profile, '--phrases', ph, '--protect', pr, '--markup', ...(compat ? ['--compat'] : [])],
        Buffer.from(input)).toString('utf8');
      if (got !== want || got !== byCli) failures.push('line ' + n + ': got ' + JSON.stringify(got) + ', expected ' + JSON.stringify(want) + ', CLI ' + JSON.stringify(byCli));
    }
    if (cases.length < 5) throw new Error('only ' + cases.length + ' cases');
    if (failures.length) throw new Error(failures.length + ' of ' + cases.length + ' differ: ' + failures.slice(0, 6).join('; '));
  });
}

const top = fs.readdirSync(casesDir).filter((f) => f.endsWith('.tsv')).sort();
if (!top.length) say('FAIL', 'js cases', 'no .tsv files in ' + casesDir);
for (const f of top) caseFile(path.join(casesDir, f), f);
const userDir = path.join(casesDir, 'user');
for (const f of fs.existsSync(userDir) ? fs.readdirSync(userDir).filter((x) => x.endsWith('.tsv')).sort() : []) {
  userFile(path.join(userDir, f), 'user/' + f);
}
for (const f of ['s2tw.tsv', 't2s.tsv', 'repair.tsv', 'detect.tsv', 'clean.tsv']) {
  const file = path.join(sharedDir, 'cases', f);
  if (fs.existsSync(file)) caseFile(file, 'shared/cases/' + f, 'default');
  else say('SKIP', 'js cases shared/cases/' + f, file + ' not found (no ../shared)');
}

// OpenCC 1.4.2's own output on the shared input, in compat mode: by profile
// and through opencc-js's Converter({ from, to }) for the same config.
const PAIRS = {
  s2t: ['cn', 't'], s2tw: ['cn', 'tw'], s2twp: ['cn', 'twp'], s2hk: ['cn', 'hk'], s2hkp: ['cn', 'hkp'],
  t2s: ['t', 'cn'], tw2s: ['tw', 'cn'], tw2sp: ['twp', 'cn'], hk2s: ['hk', 'cn'], hk2sp: ['hkp', 'cn'],
  t2tw: ['t', 'tw'], t2hk: ['t', 'hk'], tw2t: ['tw', 't'], hk2t: ['hk', 't'], jp2t: ['jp', 't'], t2jp: ['t', 'jp'],
};
const compatDir = path.join(sharedDir, 'opencc', 'compat');
test('js profiles: the 16 of the image, each with its opencc-js pair', () => {
  const got = fanjian.profiles().slice().sort().join(' '), want = Object.keys(PAIRS).sort().join(' ');
  if (got !== want) throw new Error('profiles ' + got + ', expected ' + want);
});
for (const profile of Object.keys(PAIRS).sort()) {
  test('js compat ' + profile + ' = OpenCC 1.4.2 = CLI --compat (convert and Converter({from: ' + PAIRS[profile].join(', to: ') + '}))', () => {
    const inputFile = path.join(compatDir, 'input.txt');
    if (!fs.existsSync(inputFile)) return inputFile + ' not found (no ../shared)';
    const input = fs.readFileSync(inputFile, 'utf8');
    const expected = fs.readFileSync(path.join(compatDir, profile + '.txt'));
    const [from, to] = PAIRS[profile];
    const results = {
      'convert(compat)': Buffer.from(fanjian.convert(input, profile, { compat: true }), 'utf8'),
      'Converter(compat)': Buffer.from(fanjian.Converter({ from, to, compat: true })(input), 'utf8'),
      'CLI --compat': execFileSync(cli, ['--compat', '-c', profile, inputFile], { maxBuffer: 1 << 28 }),
    };
    for (const [what, got] of Object.entries(results)) {
      if (!same(got, expected)) {
        let i = 0;
        while (i < got.length && got[i] === expected[i]) i++;
        throw new Error(what + ' differs from OpenCC 1.4.2 at byte ' + i + ': ' + show(got.subarray(i)) + ' vs ' + show(expected.subarray(i)));
      }
    }
  });
}

// Punctuation and quotes, as the CLI's --punct and --quotes.
test('js punct and quotes: the same as the CLI --punct --quotes', () => {
  const input = '他说:"好,走吧..."然后走了。。。。\n“还是‘不’？”abc, def...\n';
  for (const [profile, quotes] of [['s2t', 'corner'], ['s2twp', 'profile'], ['t2s', 'curly'], ['s2hk', 'keep']]) {
    const got = fanjian.convert(input, profile, { punct: true, quotes });
    const cliQuotes = { corner: ['--quotes', 'tw'], curly: ['--quotes', 'cn'], keep: ['--quotes', 'keep'], profile: [] }[quotes];
    const byCli = runCli(['--punct', ...cliQuotes, '-c', profile], Buffer.from(input)).toString('utf8');
    if (got !== byCli) throw new Error(profile + ' quotes ' + quotes + ': ' + JSON.stringify(got) + ', CLI ' + JSON.stringify(byCli));
  }
  if (fanjian.convert(input, 's2t', { punct: true }) === fanjian.convert(input, 's2t')) throw new Error('punct changed nothing');
});

// The API's edges.
test('js Converter: default mode is the CLI default; bad locales and options are errors', () => {
  const input = '我的头发干了，鼠标在桌上。';
  const got = fanjian.Converter({ from: 'cn', to: 'twp' })(input);
  const byCli = runCli(['-c', 's2twp'], Buffer.from(input)).toString('utf8');
  if (got !== byCli) throw new Error('Converter cn->twp ' + got + ', CLI ' + byCli);
  const throws = (f, re) => {
    try { f(); } catch (e) { if (!re.test(e.message)) throw new Error('message ' + e.message); return; }
    throw new Error('no error for ' + f);
  };
  throws(() => fanjian.Converter({ from: 'xx', to: 'tw' }), /Unknown `from` locale: xx/);
  throws(() => fanjian.Converter({ from: 'cn' }), /Please provide the `to` option/);
  throws(() => fanjian.convert('x', 'nope'), /profile nope/);
  throws(() => fanjian.convert('x', 's2t', { repair: 'some' }), /repair must be/);
  throws(() => fanjian.convert('x', { to: 'tw', compat: true }), /no compat mode/);
  throws(() => fanjian.Converter({ from: 'twp', to: 'hk' }), /no conversion from twp to hk/);
});
test('js Converter: a pair without an OpenCC config goes through standard Traditional (tw -> hk = tw2t, then t2hk)', () => {
  const input = '台灣的裡面，著名的衛生紙。';
  const via = fanjian.convert(fanjian.convert(input, 'tw2t', { compat: true }), 't2hk', { compat: true });
  const got = fanjian.Converter({ from: 'tw', to: 'hk', compat: true })(input);
  if (got !== via) throw new Error(got + ' vs ' + via);
  if (fanjian.Converter({ from: 't', to: 't' })(input) !== input) throw new Error('t -> t changed the text');
});
test('js detect: script, counts and spans in UTF-16 units', () => {
  const s = '這是𠀀一個問題，還有這個。这是一个问题。';
  const d = fanjian.detect(s);
  if (d.script !== 'mixed' || d.spans.length !== 1 || d.han !== 17 || d.spans[0].offset !== 14) throw new Error(JSON.stringify(d));
  const span = s.substr(d.spans[0].offset, d.spans[0].length);
  if (span !== '这是一个问题。' || d.spans[0].script !== 'simplified') throw new Error('span ' + JSON.stringify(span));
});
test('js strings: every kind of character survives a conversion that changes nothing (UTF-8 in, UTF-16 out)', () => {
  const points = [0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xfeff, 0x4e2d, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x20000, 0x10ffff];
  let s = '';
  for (let i = 0; i < 5000; i++) s += String.fromCodePoint(points[(i * 7919) % points.length]);
  const got = fanjian.convert(s, null);
  if (got !== s) {
    let i = 0;
    while (got[i] === s[i]) i++;
    throw new Error('differs at unit ' + i);
  }
  // A lone surrogate cannot be UTF-8: it becomes U+FFFD, as TextEncoder writes it.
  if (fanjian.convert('a\ud800b', null) !== 'a\ufffdb') throw new Error('lone surrogate');
});

test('js user entries: thousands of phrases; an empty key is an error that names it', () => {
  const phrases = {};
  for (let i = 0; i < 20000; i++) phrases['词' + i + '号'.repeat(50)] = '詞' + i;
  phrases['头发'] = '頭毛';
  const got = fanjian.convert('她的头发', 's2tw', { phrases, protect: ['她'] });
  if (got !== '她的頭毛') throw new Error(got);
  try { fanjian.convert('x', 's2tw', { phrases: { '': 'y' } }); } catch (e) {
    if (/phrase/.test(e.message)) return;
    throw new Error('message: ' + e.message);
  }
  throw new Error('no error for an empty key');
});
test('js memory: conversions, detection and converters give back what they take from the heap', () => {
  const text = fs.readFileSync(path.join(casesDir, 'default.tsv'), 'utf8').repeat(20);
  const bytes = Buffer.from(text);
  const round = () => {
    fanjian.convert(text, 's2twp');
    fanjian.convert(bytes, 't2s', { compat: true });
    fanjian.Converter({ from: 'tw', to: 'hk' })(text);
    fanjian.convert(text, { to: 'hk' });
    fanjian.detect(text);
    fanjian.clean(text);
    try { fanjian.convert(text, 'nope'); } catch (e) { /* the failed open frees its strings too */ }
  };
  round();
  const before = fanjian.heapUsed();
  for (let i = 0; i < 30; i++) round();
  const after = fanjian.heapUsed();
  if (after !== before) throw new Error('heap in use ' + before + ' bytes, after 30 more rounds ' + after);
  // close() gives back the image and every converter.
  fanjian.close();
  if (fanjian.heapUsed() > 65536) throw new Error('after close ' + fanjian.heapUsed() + ' bytes still in use');
});
test('js close: frees the dictionary; the API then throws', () => {
  try { fanjian.convert('头发'); } catch (e) { if (/closed/.test(e.message)) return; throw e; }
  throw new Error('convert after close did not throw');
});
