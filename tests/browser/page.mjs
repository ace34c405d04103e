// The web page of `fanjian serve`, in headless Chromium (tests/suite-serve.sh).
//
//   node tests/browser/page.mjs PLAYWRIGHT_DIR CONFIG_JSON
//
// PLAYWRIGHT_DIR holds node_modules/playwright-core (scripts/fetch-playwright.sh).
// CONFIG_JSON: {"url": "http://127.0.0.1:PORT/", "chromium": "/usr/bin/chromium",
//   "cases": [{"name", "input", "profile", "clean"?, "expected", "marks"}],
//   "file": {"name", "text", "profile", "expected"}}
// with the expected texts made by the CLI. Prints one line per check,
// "ok NAME" or "not ok NAME: why"; the suite counts them. Waits are for
// states of the page (#output's data-done counter), never for time.
import { readFileSync } from 'node:fs';
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

if (cfg.file) {
  const f = cfg.file;
  await step('file chosen with the file input', async () => {
    await page.fill('#input', '');
    await page.setInputFiles('#file', {
      name: f.name, mimeType: 'text/plain', buffer: Buffer.from(f.text, 'utf8'),
    });
    await page.waitForFunction((t) => document.querySelector('#input').value === t, f.text);
    await page.selectOption('#profile', f.profile);
    await convertWith(() => page.click('#convert'));
    check('file chosen with the file input', (await outputText()) === f.expected, await outputText());
  });
  await step('download is named after the file', async () => {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    const want = f.name.replace(/\.txt$/, '') + '.' + f.profile + '.txt';
    check('download is named after the file', dl.suggestedFilename() === want, dl.suggestedFilename());
  });
  await step('file dropped onto the text area', async () => {
    await page.fill('#input', '');
    const loaded = await page.$eval('#input', (el) => Number(el.dataset.loaded || 0));
    // A drop as the browser delivers it: a DataTransfer holding the file.
    await page.evaluate(({ name, text }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: 'text/plain' }));
      const target = document.querySelector('#input');
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, { name: f.name, text: f.text });
    await page.waitForFunction((n) => Number(document.querySelector('#input').dataset.loaded || 0) > n, loaded);
    check('file dropped onto the text area', (await page.inputValue('#input')) === f.text,
      await page.inputValue('#input'));
  });
  await step('a file that is not UTF-8 is refused', async () => {
    await page.setInputFiles('#file', {
      name: 'gbk.txt', mimeType: 'text/plain', buffer: Buffer.from([0xc4, 0xe3, 0xba, 0xc3]),
    });
    await page.waitForFunction(() => document.querySelector('#error').textContent !== '');
    check('a file that is not UTF-8 is refused', (await page.textContent('#error')).includes('UTF-8'),
      await page.textContent('#error'));
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

check('no request left the server', foreign.length === 0 &&
  requests.every((u) => u.startsWith(origin + '/') || u.startsWith('blob:') || u.startsWith('data:')),
  [...foreign, ...requests.filter((u) => !u.startsWith(origin + '/'))].join(' '));
check('no script errors', pageErrors.length === 0, pageErrors.join(' | '));

await browser.close();
process.exit(failures ? 1 : 0);
