// The installed package in headless Chromium (tests/suite-js.sh): a page on a
// local server imports fanjian/browser.mjs, which fetches the module and the
// image from beside it; every other request is refused (offline). The page's
// output must equal OpenCC 1.4.2's on the 16 profiles in compat mode and
// Node's for the default mode and detect. One line per check: "PASS name" or
// "FAIL name\tdetail".
//   node test-browser.mjs PLAYWRIGHT_DIR PACKAGE_DIR CHROMIUM COMPAT_DIR
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync, existsSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { pathToFileURL } from 'node:url';

const [pwDir, pkgDir, chromiumBin, compatDir] = process.argv.slice(2);
const { chromium } = await import(pathToFileURL(join(pwDir, 'node_modules', 'playwright-core', 'index.mjs')).href);
const say = (ok, name, detail) => console.log((ok ? 'PASS ' : 'FAIL ') + name + (ok || !detail ? '' : '\t' + String(detail).replace(/\s+/g, ' ').slice(0, 400)));

const page = `<!doctype html><meta charset="utf-8"><title>fanjian</title>
<script type="module">
import { load } from '/pkg/browser.mjs';
load().then((fj) => { window.fj = fj; window.state = 'ready'; }, (e) => { window.state = 'error: ' + e.message; });
</script>`;
const types = { '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return res.end(page);
  }
  const file = normalize(join(pkgDir, url.pathname.replace(/^\/pkg\//, '/')));
  if (!url.pathname.startsWith('/pkg/') || !file.startsWith(normalize(pkgDir)) || !existsSync(file)) {
    res.writeHead(404);
    return res.end();
  }
  res.writeHead(200, { 'content-type': types[file.slice(file.lastIndexOf('.'))] || 'application/octet-stream' });
  res.end(readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = 'http://127.0.0.1:' + server.address().port;

const browser = await chromium.launch({ executablePath: chromiumBin, args: ['--no-sandbox'] });
try {
  const context = await browser.newContext();
  const refused = [];
  await context.route('**/*', (route) => {
    if (route.request().url().startsWith(origin + '/')) return route.continue();
    refused.push(route.request().url());
    return route.abort();
  });
  const tab = await context.newPage();
  await tab.goto(origin + '/');
  await tab.waitForFunction(() => window.state !== undefined, null, { timeout: 120000 });
  const state = await tab.evaluate(() => window.state);
  say(state === 'ready', 'js browser: load() fetches the module and the image beside browser.mjs', state);
  if (state === 'ready') {
    const node = createRequire(import.meta.url)(join(pkgDir, 'index.js'));
    const input = readFileSync(join(compatDir, 'input.txt'), 'utf8');
    const profiles = await tab.evaluate(() => window.fj.profiles());
    say(profiles.length === 16, 'js browser: 16 profiles', profiles.join(' '));
    let bad = [];
    for (const p of profiles) {
      const got = await tab.evaluate(([t, p]) => window.fj.convert(t, p, { compat: true }), [input, p]);
      if (got !== readFileSync(join(compatDir, p + '.txt'), 'utf8')) bad.push(p);
    }
    say(!bad.length, 'js browser: compat = OpenCC 1.4.2 on all 16 profiles', 'differ: ' + bad.join(' '));
    const sample = input.slice(0, 20000);
    bad = [];
    for (const [from, to] of [['cn', 'tw'], ['cn', 'twp'], ['cn', 'hk'], ['tw', 'cn'], ['t', 'jp']]) {
      const got = await tab.evaluate(([t, from, to]) => window.fj.Converter({ from, to })(t), [sample, from, to]);
      if (got !== node.Converter({ from, to })(sample)) bad.push(from + '->' + to);
    }
    const target = await tab.evaluate((t) => window.fj.convert(t, { to: 'tw' }), sample);
    if (target !== node.convert(sample, { to: 'tw' })) bad.push('to tw');
    const det = await tab.evaluate((t) => JSON.stringify(window.fj.detect(t)), sample);
    if (det !== JSON.stringify(node.detect(sample))) bad.push('detect');
    say(!bad.length, 'js browser: default mode, Converter, --to and detect = Node', 'differ: ' + bad.join(' '));
  }
  say(!refused.length, 'js browser: no request leaves the local server', refused.slice(0, 3).join(' '));
} finally {
  await browser.close();
  server.close();
}
