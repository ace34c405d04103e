// The web page of `fanjian serve`, in headless Chromium (tests/suite-serve.sh).
//
//   node tests/browser/page.mjs PLAYWRIGHT_DIR CONFIG_JSON
//
// PLAYWRIGHT_DIR holds node_modules/playwright-core (scripts/fetch-playwright.sh).
// CONFIG_JSON: {"url": "http://127.0.0.1:PORT/", "chromium": "/usr/bin/chromium",
//   "cases": [{"name", "input", "profile", "clean"?, "expected", "marks"}],
//   "file": {"name", "text", "profile", "expected", "expected_name"},
//   "uploads": [{"name", "bytes" (base64), "profile", "text"? (as decoded),
//                "expected" (base64: the CLI's output), "expected_name",
//                "chapter"?: {"entry", "text"}}],
//   "bad_upload": {"name", "bytes", "error"},
//   "diff": {"input", "profile", "del", "ins"},
//   "hint": {"traditional", "simplified"}}
// with the expected texts and files made by the CLI. Prints one line per check,
// "ok NAME" or "not ok NAME: why"; the suite counts them. Waits are for
// states of the page (#output's data-done counter), never for time.
import { readFileSync } from 'node:fs';
import { crc32, inflateRawSync } from 'node:zlib';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [pwDir, configPath] = process.argv.slice(2);
const cfg = JSON.parse(readFileSync(configPath, 'utf8'));
const { chromium } = await import(
  pathToFileURL(join(pwDir, 'node_modules', 'playwright-core', 'index.mjs')).href);

let failures = 0;
const ok = (name) => console.log(`ok ${name}`);
const notOk = (name, why) => {
  failures++;
  console.log(`not ok ${name}: ${String(why).replace(/\s+/g, ' ').slice(0, 400)}`);
};
const check = (name, cond, why) => (cond ? ok(name) : notOk(name, why));
// Runs one named step; an exception fails that step only.
async function step(name, fn) {
  try {
    await fn();
  } catch (e) {
    notOk(name, e && e.message ? e.message : e);
  }
}

// The entries of a zip archive, each checked against its size and CRC-32
// (throws on anything malformed): {name, method, data}.
function readZip(buf) {
  let end = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65535); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) { end = i; break; }
  }
  if (end < 0) throw new Error('no end of central directory');
  const count = buf.readUInt16LE(end + 10);
  const entries = [];
  for (let p = buf.readUInt32LE(end + 16), k = 0; k < count; k++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error(`central directory entry ${k} is malformed`);
    const method = buf.readUInt16LE(p + 10), crc = buf.readUInt32LE(p + 16);
    const csize = buf.readUInt32LE(p + 20), usize = buf.readUInt32LE(p + 24);
    const nlen = buf.readUInt16LE(p + 28), xlen = buf.readUInt16LE(p + 30), clen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nlen);
    if (buf.readUInt32LE(local) !== 0x04034b50) throw new Error(`${name}: no local header`);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + csize);
    const data = method === 0 ? raw : method === 8 ? inflateRawSync(raw) : null;
    if (!data) throw new Error(`${name}: compression method ${method}`);
    if (data.length !== usize || crc32(data) >>> 0 !== crc) throw new Error(`${name}: size or CRC-32 wrong`);
    entries.push({ name, method, data });
    p += 46 + nlen + xlen + clen;
  }
  return entries;
}

const origin = new URL(cfg.url).origin;
const browser = await chromium.launch({
  executablePath: cfg.chromium || '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
const context = await browser.newContext({ acceptDownloads: true });
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
// Offline: every request must go to the server; anything else is refused
// and recorded.
const foreign = [];
await context.route('**/*', (route) => {
  const u = route.request().url();
  if (u.startsWith(origin + '/') || u.startsWith('blob:') || u.startsWith('data:')) return route.continue();
  foreign.push(u);
  return route.abort();
});
const page = await context.newPage();
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
// The browser logs each 4xx answer as an error; the page's own are what count.
page.on('console', (m) => {
  if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text());
});
const requests = [];
page.on('request', (r) => requests.push(r.url()));

const done = () => page.$eval('#output', (el) => Number(el.dataset.done));
// Clicks (or presses) and waits until a conversion has finished or an
// error is shown.
async function convertWith(action) {
  const before = await done();
  await page.$eval('#error', (el) => { el.textContent = ''; });
  await action();
  await page.waitForFunction(
    (n) => Number(document.querySelector('#output').dataset.done) > n ||
      document.querySelector('#error').textContent !== '', before);
  const err = await page.textContent('#error');
  if (err) throw new Error(`the page shows an error: ${err}`);
}
const outputText = () => page.textContent('#output');
const marks = () => page.$$eval('#output mark.chg', (ms) => ms.map((m) => m.textContent));

await step('page loads', async () => {
  const resp = await page.goto(cfg.url);
  check('page loads', resp && resp.status() === 200, `status ${resp && resp.status()}`);
});
await step('profiles are listed', async () => {
  await page.waitForSelector('#profile option[value="s2tw"]', { state: 'attached' });
  const n = await page.$$eval('#profile option', (os) => os.length);
  check('profiles are listed', n >= 16, `${n} options`);
});
await step('controls are labelled', async () => {
  const unlabelled = await page.$$eval('input, select, textarea', (els) =>
    els.filter((el) => !el.labels || el.labels.length === 0).map((el) => el.id || el.tagName));
  check('controls are labelled', unlabelled.length === 0, `no label: ${unlabelled.join(', ')}`);
});

for (const c of cfg.cases) {
  await step(`convert: ${c.name}`, async () => {
    if (c.input.length <= 40) {
      // Typed, key by key, as a person would (long inputs are pasted).
      await page.fill('#input', '');
      await page.locator('#input').pressSequentially(c.input);
    } else {
      await page.fill('#input', c.input);
    }
    await page.selectOption('#profile', c.profile);
    await page.setChecked('#clean', !!c.clean);
    await convertWith(() => page.click('#convert'));
    const got = await outputText();
    check(`convert: ${c.name}`, got === c.expected,
      `expected ${JSON.stringify(c.expected)}, got ${JSON.stringify(got)}`);
  });
  await step(`highlight: ${c.name}`, async () => {
    const ms = await marks();
    const lone = ms.some((m) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(m));
    check(`highlight: ${c.name}`, ms.length > 0 && ms.join('') === c.marks && !lone,
      `expected marks ${JSON.stringify(c.marks)}, got ${JSON.stringify(ms)}`);
  });
}
await page.setChecked('#clean', false);

await step('Ctrl+Enter converts', async () => {
  await page.fill('#input', cfg.cases[0].input);
  await page.selectOption('#profile', cfg.cases[0].profile);
  await page.focus('#input');
  await convertWith(() => page.keyboard.press('Control+Enter'));
  check('Ctrl+Enter converts', (await outputText()) === cfg.cases[0].expected, await outputText());
});

await step('copy', async () => {
  await page.click('#copy');
  await page.waitForFunction(() => document.querySelector('#status').textContent.includes('已複製'));
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  check('copy', clip === cfg.cases[0].expected, `clipboard: ${JSON.stringify(clip)}`);
});

await step('download', async () => {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const path = await dl.path();
  const text = readFileSync(path, 'utf8');
  check('download', text === cfg.cases[0].expected && /\.txt$/.test(dl.suggestedFilename()),
    `${dl.suggestedFilename()}: ${JSON.stringify(text.slice(0, 80))}`);
});

const loadedCount = () => page.$eval('#input', (el) => Number(el.dataset.loaded || 0));
// Chooses a file with the file input and waits for its conversion (or an error).
async function upload(name, buffer, mimeType) {
  await convertWith(() => page.setInputFiles('#file', { name, mimeType: mimeType || 'application/octet-stream', buffer }));
}
async function download() {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  return { name: dl.suggestedFilename(), bytes: readFileSync(await dl.path()) };
}

if (cfg.file) {
  const f = cfg.file;
  await step('file chosen with the file input', async () => {
    await page.fill('#input', '');
    await page.selectOption('#profile', f.profile);
    await upload(f.name, Buffer.from(f.text, 'utf8'), 'text/plain');
    check('file chosen with the file input',
      (await outputText()) === f.expected && (await page.inputValue('#input')) === f.text,
      `output ${JSON.stringify(await outputText())}, input ${JSON.stringify(await page.inputValue('#input'))}`);
  });
  await step('a chosen file is named as the CLI names it', async () => {
    const dl = await download();
    check('a chosen file is named as the CLI names it',
      dl.name === f.expected_name && dl.bytes.toString('utf8') === f.expected,
      `${dl.name}: ${JSON.stringify(dl.bytes.toString('utf8').slice(0, 80))}`);
  });
  await step('file dropped onto the text area', async () => {
    await page.fill('#input', '');
    const loaded = await loadedCount();
    // A drop as the browser delivers it: a DataTransfer holding the file.
    await page.evaluate(({ name, text }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: 'text/plain' }));
      const target = document.querySelector('#input');
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, { name: f.name, text: f.text });
    await page.waitForFunction((n) => Number(document.querySelector('#input').dataset.loaded || 0) > n, loaded);
    check('file dropped onto the text area', (await page.inputValue('#input')) === f.text &&
      (await outputText()) === f.expected, await page.inputValue('#input'));
  });
  await step('editing the text leaves the file', async () => {
    await page.fill('#input', cfg.cases[0].input);
    await page.selectOption('#profile', cfg.cases[0].profile);
    await convertWith(() => page.click('#convert'));
    check('editing the text leaves the file', (await outputText()) === cfg.cases[0].expected &&
      await page.$eval('#file-info', (el) => el.hidden), await outputText());
  });
}

for (const u of cfg.uploads || []) {
  await step(`upload ${u.name}`, async () => {
    await page.selectOption('#profile', u.profile);
    await upload(u.name, Buffer.from(u.bytes, 'base64'));
    if (u.text !== undefined) {
      // The text shows as the server decoded it, converted beside it.
      const want = Buffer.from(u.expected, 'base64').toString('utf8');
      check(`upload ${u.name}: the text is shown, decoded, and converted`,
        (await page.inputValue('#input')) === u.text && (await outputText()) === want,
        `input ${JSON.stringify((await page.inputValue('#input')).slice(0, 80))}, output ${JSON.stringify((await outputText()).slice(0, 80))}`);
    } else {
      check(`upload ${u.name}: converted`, (await outputText()).includes(u.expected_name), await outputText());
    }
  });
  await step(`download ${u.name}`, async () => {
    const dl = await download();
    const want = Buffer.from(u.expected, 'base64');
    check(`download ${u.name}: the CLI's bytes, named ${u.expected_name}`,
      dl.name === u.expected_name && Buffer.compare(dl.bytes, want) === 0,
      `${dl.name}, ${dl.bytes.length} bytes (the CLI's: ${want.length})`);
    if (u.chapter) {
      let entries = [];
      try {
        entries = readZip(dl.bytes);
      } catch (e) {
        notOk(`download ${u.name}: a valid zip`, e.message);
        return;
      }
      const mt = entries[0];
      check(`download ${u.name}: a valid zip, mimetype first and stored`,
        mt && mt.name === 'mimetype' && mt.method === 0 && mt.data.toString() === 'application/epub+zip',
        entries.map((e) => e.name).join(' '));
      const ch = entries.find((e) => e.name === u.chapter.entry);
      check(`download ${u.name}: the chapter is converted`, ch && ch.data.toString('utf8') === u.chapter.text,
        ch ? ch.data.toString('utf8').slice(0, 300) : `no ${u.chapter.entry}`);
    }
  });
}

if (cfg.bad_upload) {
  await step('a malformed upload shows the server\'s error', async () => {
    const b = cfg.bad_upload;
    await page.$eval('#error', (el) => { el.textContent = ''; });
    await page.setInputFiles('#file', { name: b.name, mimeType: 'application/epub+zip', buffer: Buffer.from(b.bytes, 'base64') });
    await page.waitForFunction(() => document.querySelector('#error').textContent !== '');
    const err = await page.textContent('#error');
    check('a malformed upload shows the server\'s error', err.includes(b.error), err);
  });
}

if (cfg.diff) {
  const d = cfg.diff;
  await step('the before/after view shows each change', async () => {
    await page.click('#view-mark');
    await page.fill('#input', d.input);
    await page.selectOption('#profile', d.profile);
    await convertWith(() => page.click('#convert'));
    await page.click('#view-diff');
    const del = await page.$$eval('#output del.old', (es) => es.map((e) => e.textContent));
    const ins = await page.$$eval('#output ins.new', (es) => es.map((e) => e.textContent));
    check('the before/after view shows each change',
      JSON.stringify(del) === JSON.stringify(d.del) && JSON.stringify(ins) === JSON.stringify(d.ins) &&
      (await marks()).length === 0,
      `del ${JSON.stringify(del)}, ins ${JSON.stringify(ins)}`);
  });
  await step('the before/after view shows a dropped line', async () => {
    const c = cfg.cases.find((x) => x.clean);
    await page.fill('#input', c.input);
    await page.selectOption('#profile', c.profile);
    await page.setChecked('#clean', true);
    await convertWith(() => page.click('#convert'));
    await page.setChecked('#clean', false);
    const del = await page.$$eval('#output del.old', (es) => es.map((e) => e.textContent));
    const dropped = c.input.split('\n')[1];
    check('the before/after view shows a dropped line', del.some((x) => x.includes(dropped)), JSON.stringify(del));
  });
  await step('back to highlighting', async () => {
    await page.click('#view-mark');
    const ms = await marks();
    check('back to highlighting', ms.length > 0 && (await page.$$('#output del')).length === 0, JSON.stringify(ms));
  });
}

if (cfg.inspect) {
  // The CLI's --inspect choices: each is a dotted character in the output
  // whose hover text names the other forms, in both views.
  const ins = cfg.inspect;
  const spans = () => page.$$eval('#output span.choice', (es) => es.map((e) => [e.textContent, e.title]));
  const matches = (got) => got.length === ins.choices.length && ins.choices.every((c, i) =>
    got[i][0] === c.chosen && c.alternatives.every((a) => got[i][1].includes(a.form + ' ' + a.margin.toFixed(2))));
  await step('choices: the other forms on hover', async () => {
    await page.click('#view-mark');
    await page.fill('#input', ins.input);
    await page.selectOption('#profile', ins.profile);
    await page.setChecked('#compat', false);
    await convertWith(() => page.click('#convert'));
    const got = await spans();
    const first = page.locator('#output span.choice').first();
    await first.hover();
    const cursor = await first.evaluate((e) => getComputedStyle(e).cursor);
    check('choices: the other forms on hover', matches(got) && (await outputText()) === ins.expected &&
      cursor === 'help' && (await page.textContent('#status')).includes(String(ins.choices.length)),
      `spans ${JSON.stringify(got)}, expected ${JSON.stringify(ins.choices)}`);
  });
  await step('choices: kept in the before/after view', async () => {
    await page.click('#view-diff');
    const inIns = await page.$$eval('#output ins.new span.choice', (es) => es.length);
    check('choices: kept in the before/after view', matches(await spans()) && inIns > 0,
      JSON.stringify(await spans()));
    await page.click('#view-mark');
  });
  await step('choices: none in compat mode', async () => {
    await page.setChecked('#compat', true);
    await convertWith(() => page.click('#convert'));
    const n = (await spans()).length;
    await page.setChecked('#compat', false);
    check('choices: none in compat mode', n === 0, `${n} spans`);
  });
}

if (cfg.hint) {
  const h = cfg.hint;
  // Types text and waits until the page has checked that very text.
  async function hintFor(text, profile) {
    await page.selectOption('#profile', profile);
    await page.fill('#input', text);
    await page.waitForFunction((t) => document.querySelector('#target-hint').checkedText === t, text);
    return page.$eval('#target-hint', (el) => (el.hidden ? '' : el.textContent));
  }
  await step('hint: Traditional input to a Simplified-to-Traditional profile', async () => {
    const got = await hintFor(h.traditional, 's2tw');
    check('hint: Traditional input to a Simplified-to-Traditional profile', got.includes('繁體') && got.includes('s2tw'), got);
  });
  await step('hint: none for Simplified input', async () => {
    const got = await hintFor(h.simplified, 's2tw');
    check('hint: none for Simplified input', got === '', got);
  });
  await step('hint: none for a profile that takes Traditional (t2tw)', async () => {
    const got = await hintFor(h.traditional, 't2tw');
    check('hint: none for a profile that takes Traditional (t2tw)', got === '', got);
  });
  await step('hint: Simplified input to tw2s', async () => {
    const got = await hintFor(h.simplified, 'tw2s');
    check('hint: Simplified input to tw2s', got.includes('簡體'), got);
  });
}

const loaded = () => page.waitForSelector('#profile[data-loaded="1"]', { state: 'attached' });
await step('my own words: phrases, protected terms and -{…}-, kept in the browser', async () => {
  await page.click('#user-box summary');
  await page.fill('#phrases', '头发=頭毛\n鼠标\t滑鼠仔');
  await page.fill('#protect', '张三丰');
  await page.setChecked('#markup', true);
  await page.selectOption('#profile', 's2tw');
  await page.fill('#input', '张三丰的头发和鼠标，-{后}-来');
  await convertWith(() => page.click('#convert'));
  let got = await outputText();
  check('my own words: a phrase wins, a term is kept, -{…}- is honoured',
    got === '张三丰的頭毛和滑鼠仔，后來', got);
  await page.reload();
  await loaded();
  got = await page.evaluate(() => ({
    open: document.querySelector('#user-box').open, phrases: document.querySelector('#phrases').value,
    protect: document.querySelector('#protect').value, markup: document.querySelector('#markup').checked }));
  check('my own words survive a reload', JSON.stringify(got) === JSON.stringify({
    open: true, phrases: '头发=頭毛\n鼠标\t滑鼠仔', protect: '张三丰', markup: true }), JSON.stringify(got));
  // An opened file goes through the same words (/v1/file's query).
  await page.selectOption('#profile', 's2tw');
  await upload('我的词.txt', Buffer.from('张三丰的头发和鼠标，-{后}-来\n', 'utf8'), 'text/plain');
  got = await outputText();
  check('my own words: an opened file goes through them too', got === '张三丰的頭毛和滑鼠仔，后來\n', got);
  await page.click('#file-clear');
  await page.fill('#phrases', 'no separator');
  await page.$eval('#error', (el) => { el.textContent = ''; });
  await page.click('#convert');
  const err = await page.textContent('#error');
  check('a line without = is named', err.includes('第 1 行'), err);
  await page.fill('#phrases', '');
  await page.fill('#protect', '');
  await page.setChecked('#markup', false);
  await page.click('#user-box summary');
});
await step('settings survive a reload', async () => {
  await page.selectOption('#profile', 's2hk');
  await page.selectOption('#quotes', 'cn');
  await page.setChecked('#punct', true);
  await page.setChecked('#thorough', true);
  await page.setChecked('#compat', true);
  await page.click('#view-diff');
  await page.reload();
  await loaded();
  const got = await page.evaluate(() => ({
    profile: document.querySelector('#profile').value, quotes: document.querySelector('#quotes').value,
    punct: document.querySelector('#punct').checked, thorough: document.querySelector('#thorough').checked,
    compat: document.querySelector('#compat').checked, clean: document.querySelector('#clean').checked,
    view: document.querySelector('#view-diff').getAttribute('aria-pressed'),
  }));
  check('settings survive a reload', JSON.stringify(got) === JSON.stringify({
    profile: 's2hk', quotes: 'cn', punct: true, thorough: true, compat: true, clean: false, view: 'true' }),
  JSON.stringify(got));
  await page.selectOption('#quotes', '');
  await page.setChecked('#punct', false);
  await page.setChecked('#thorough', false);
  await page.setChecked('#compat', false);
  await page.click('#view-mark');
});

const uiState = () => page.evaluate(() => ({
  lang: document.documentElement.lang, convert: document.querySelector('#convert').textContent,
  clean: document.querySelector('label[for=clean]').textContent,
  s2tw: document.querySelector('#profile option[value="s2tw"]').textContent,
  placeholder: document.querySelector('#input').placeholder,
}));
await step('the interface in Simplified', async () => {
  await page.click('#ui-hans');
  const got = await uiState();
  check('the interface in Simplified', got.lang === 'zh-Hans' && got.convert === '转换' &&
    got.clean.includes('网站') && got.s2tw.includes('台湾正体') && got.placeholder.includes('粘贴'), JSON.stringify(got));
});
await step('the Simplified interface survives a reload', async () => {
  await page.reload();
  await loaded();
  const got = await uiState();
  check('the Simplified interface survives a reload', got.lang === 'zh-Hans' && got.convert === '转换', JSON.stringify(got));
});
await step('the interface back in Traditional', async () => {
  await page.click('#ui-hant');
  const got = await uiState();
  check('the interface back in Traditional', got.lang === 'zh-Hant' && got.convert === '轉換' &&
    got.clean.includes('網站') && got.s2tw.includes('臺灣正體'), JSON.stringify(got));
});

// ---- in the browser: the package from /js/ (serve --js), with no request ----
if (cfg.offline && cfg.offline.length) {
  const setOptions = async (c) => {
    const o = c.options || {};
    await page.selectOption('#profile', c.profile);
    await page.selectOption('#quotes', o.quotes || '');
    for (const id of ['clean', 'punct', 'thorough', 'compat', 'markup']) await page.setChecked(`#${id}`, !!o[id]);
    await page.$eval('#user-box', (el) => { el.open = true; });
    await page.fill('#phrases', o.phrases || '');
    await page.fill('#protect', o.protect || '');
    await page.fill('#input', c.input);
  };
  const apiCalls = () => requests.filter((u) => u.startsWith(origin + '/v1/')).length;
  await step('offline: offered, as the server has the package', async () => {
    await page.waitForSelector('#offline-field:not([hidden])', { timeout: 10000 });
    ok('offline: offered, as the server has the package');
  });
  await step('offline: the package loads in the page', async () => {
    await page.setChecked('#offline', true);
    await page.waitForFunction(() => document.querySelector('#offline-field').dataset.ready === '1' ||
      document.querySelector('#error').textContent !== '', null, { timeout: 60000 });
    const err = await page.textContent('#error');
    check('offline: the package loads in the page', !err, err);
  });
  for (const c of cfg.offline) {
    await step(`offline: ${c.name}`, async () => {
      await setOptions(c);
      const calls = apiCalls();
      await convertWith(() => page.click('#convert'));
      const got = await outputText(), st = await page.textContent('#status');
      check(`offline: ${c.name} = the CLI, converted in the browser`,
        got === c.expected && st.includes('在瀏覽器中') && apiCalls() === calls,
        `expected ${JSON.stringify(c.expected)}, got ${JSON.stringify(got)}; status ${st}; ${apiCalls() - calls} API calls`);
    });
  }
  await step('offline: converts with the network gone', async () => {
    const c = cfg.offline[0];
    await setOptions(c);
    const before = requests.length;
    await context.setOffline(true);
    try {
      await convertWith(() => page.click('#convert'));
    } finally {
      await context.setOffline(false);
    }
    const got = await outputText();
    check('offline: converts with the network gone, and asks for nothing',
      got === c.expected && requests.length === before,
      `got ${JSON.stringify(got)}; requests ${requests.slice(before).join(' ')}`);
  });
  if (cfg.file) {
    await step('offline: a UTF-8 text file is converted in the browser', async () => {
      const f = cfg.file;
      await setOptions({ input: '', profile: f.profile });
      const calls = apiCalls();
      await upload(f.name, Buffer.from(f.text, 'utf8'), 'text/plain');
      const got = await outputText();
      check('offline: a UTF-8 text file is converted in the browser',
        got === f.expected && (await page.textContent('#status')).includes('在瀏覽器中') && apiCalls() === calls,
        `got ${JSON.stringify(got)}`);
      await page.click('#file-clear');
    });
  }
  await step('offline: an EPUB is left to the server, saying so', async () => {
    await page.$eval('#error', (el) => { el.textContent = ''; });
    await page.setInputFiles('#file', { name: '書.epub', mimeType: 'application/epub+zip', buffer: Buffer.from('PK') });
    await page.waitForFunction(() => document.querySelector('#error').textContent !== '');
    const err = await page.textContent('#error');
    check('offline: an EPUB is left to the server, saying so', err.includes('書.epub') && err.includes('伺服器'), err);
    await page.click('#file-clear');
    await page.$eval('#error', (el) => { el.textContent = ''; });
  });
  await step('offline: the choice survives a reload', async () => {
    await page.reload();
    await loaded();
    await page.waitForFunction(() => document.querySelector('#offline-field').dataset.ready === '1' ||
      document.querySelector('#error').textContent !== '', null, { timeout: 60000 });
    check('offline: the choice survives a reload, and the package loads again',
      await page.isChecked('#offline') && !(await page.textContent('#error')), await page.textContent('#error'));
    await page.setChecked('#offline', false);
    await setOptions({ input: '', profile: 's2t' });
    await page.fill('#phrases', '');
    await page.fill('#protect', '');
    await page.$eval('#user-box', (el) => { el.open = false; });
  });
}

await step('a server error is shown', async () => {
  // A profile the server does not know: its message reaches #error.
  await page.fill('#input', '头发');
  await page.$eval('#profile', (s) => {
    const o = document.createElement('option');
    o.value = 'nonesuch';
    o.textContent = 'nonesuch';
    s.appendChild(o);
    s.value = 'nonesuch';
  });
  await page.click('#convert');
  await page.waitForFunction(() => document.querySelector('#error').textContent !== '');
  const err = await page.textContent('#error');
  check('a server error is shown', err.includes('unknown profile'), err);
});

await step('a zh-CN browser gets the Simplified interface first', async () => {
  const cn = await browser.newContext({ locale: 'zh-CN' });
  await cn.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin + '/')) return route.continue();
    foreign.push(u);
    return route.abort();
  });
  const p = await cn.newPage();
  await p.goto(cfg.url);
  const got = await p.evaluate(() => [document.documentElement.lang, document.querySelector('#convert').textContent]);
  check('a zh-CN browser gets the Simplified interface first', got[0] === 'zh-Hans' && got[1] === '转换',
    JSON.stringify(got));
  await cn.close();
});

await step('no horizontal scrolling at 390 px', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  const widths = [];
  for (const lang of ['hant', 'hans']) {
    await page.click(`#ui-${lang}`);
    // A long line, the longest profile name, a file shown, both views.
    await page.fill('#input', `${'头发干了'.repeat(60)}${'x'.repeat(300)}\n${cfg.cases[0].input}`);
    await page.selectOption('#profile', 's2twp');
    await convertWith(() => page.click('#convert'));
    widths.push(await page.evaluate(() => document.documentElement.scrollWidth));
    await page.click('#view-diff');
    widths.push(await page.evaluate(() => document.documentElement.scrollWidth));
    await page.click('#view-mark');
    if (cfg.file) {
      await upload(cfg.file.name, Buffer.from(cfg.file.text, 'utf8'), 'text/plain');
      widths.push(await page.evaluate(() => document.documentElement.scrollWidth));
    }
  }
  await page.click('#ui-hant');
  check('no horizontal scrolling at 390 px', widths.every((w) => w <= 390), `scrollWidth ${widths.join(', ')}`);
  await page.setViewportSize({ width: 1280, height: 720 });
});

check('no request left the server', foreign.length === 0 &&
  requests.every((u) => u.startsWith(origin + '/') || u.startsWith('blob:') || u.startsWith('data:')),
  [...foreign, ...requests.filter((u) => !u.startsWith(origin + '/'))].join(' '));
check('no script errors', pageErrors.length === 0, pageErrors.join(' | '));

await browser.close();
process.exit(failures ? 1 : 0);
