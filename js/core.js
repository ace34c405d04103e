// fanjian for JavaScript: the API over the WebAssembly build of the library
// (js/glue.c). No Node or browser API here: index.js (Node) and browser.mjs
// hand it an instantiated module and the dictionary image's bytes. `make js`
// appends the export line for CommonJS (core.cjs) and for ES modules
// (core.mjs).

// The module's only import: a grown memory needs no action, the views are
// taken afresh on every call.
function fanjianImports() {
  return { env: { emscripten_notify_memory_growth() {} } };
}

const COMPAT = 1, REPAIR = { auto: 0, thorough: 2, careful: 4, off: 8 };
const QUOTES = { profile: -1, keep: 0, corner: 1, curly: 2 };
// FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH: punct: true, as the CLI's --punct.
const PUNCT = 3;

// opencc-js 1.4.2's locales: a pair names an OpenCC config (its getConfigName);
// a pair without one goes through OpenCC's standard Traditional, as opencc-js
// chains its from- and to-dictionaries, here by two fanjian profiles.
const LOCALES = ['cn', 'tw', 'twp', 'hk', 'hkp', 'jp', 't'];
const TO_STANDARD = { cn: 's2t', tw: 'tw2t', hk: 'hk2t', jp: 'jp2t', t: null };
const FROM_STANDARD = { cn: 't2s', tw: 't2tw', hk: 't2hk', jp: 't2jp', t: null };

function configName(from, to) {
  if (from === 'cn') return 's2' + to;
  if (to === 'cn') return from === 'hkp' ? 'hk2sp' : from === 'twp' ? 'tw2sp' : from + '2s';
  return from + '2' + to;
}

// utf16: (ArrayBuffer, byte offset, units) -> string, the fastest way the
// platform has (index.js: Node's Buffer); by default TextDecoder's.
function createFanjian(instance, dictBytes, utf16) {
  const w = instance.exports;
  if (w._initialize) w._initialize();
  const encoder = new TextEncoder();
  // ignoreBOM: a byte-order mark is text the user did not ask to remove.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const utf16Decoder = new TextDecoder('utf-16le', { ignoreBOM: true });
  utf16 = utf16 || ((buffer, offset, units) => utf16Decoder.decode(new Uint16Array(buffer, offset, units)));
  const heap = () => new Uint8Array(w.memory.buffer);
  const u32 = () => new Uint32Array(w.memory.buffer);

  function cString(ptr) {
    const h = heap();
    let end = ptr;
    while (h[end]) end++;
    return decoder.decode(h.subarray(ptr, end));
  }
  function fail(what) {
    throw new Error('fanjian: ' + what + ': ' + cString(w.fjjs_last_error()));
  }
  function alloc(size) {
    const p = w.fjjs_alloc(size);
    if (!p) throw new Error('fanjian: out of memory (' + size + ' bytes)');
    return p;
  }
  // A NUL-terminated UTF-8 copy of a name or user entry in the heap (freed by the caller).
  function name(s) {
    const bytes = encoder.encode(s);
    const p = alloc(bytes.length + 1);
    heap().set(bytes, p);
    heap()[p + bytes.length] = 0;
    return p;
  }
  // The UTF-8 of a string in the heap: [pointer, length] (freed by the caller).
  function text(s) {
    s = String(s);
    const p = alloc(s.length * 3 + 1);
    const { written } = encoder.encodeInto(s, heap().subarray(p, p + s.length * 3));
    return [p, written];
  }

  // The image is copied into the heap once and stays there with the
  // dictionary, until close().
  const image = dictBytes instanceof Uint8Array ? dictBytes : new Uint8Array(dictBytes);
  let imagePtr = alloc(image.length);
  heap().set(image, imagePtr);
  let dict = w.fjjs_dict_open(imagePtr, image.length);
  if (!dict) {
    w.fjjs_release(imagePtr);
    fail('dictionary');
  }

  const profileNames = [], targetNames = [];
  for (let i = 0, n = w.fj_dict_profile_count(dict); i < n; i++) profileNames.push(cString(w.fj_dict_profile_name(dict, i)));
  for (let i = 0, t; (t = w.fj_target_name(i)); i++) targetNames.push(cString(t));

  // One converter per profile or target and options, kept until close():
  // opening one builds tables, and a program uses few combinations.
  const converters = new Map();
  function open(profile, target, flags, quotes, extra) {
    const key = JSON.stringify([profile, target, flags, quotes, extra]);
    let conv = converters.get(key);
    if (conv) return conv;
    if (!dict) throw new Error('fanjian: closed');
    const owned = [];
    const str = (s) => {
      const p = name(s);
      owned.push(p);
      return p;
    };
    const pointers = (list) => {
      if (!list.length) return 0;
      const strings = list.map(str); // before the view: an allocation may grow the memory
      const p = alloc(list.length * 4);
      owned.push(p);
      u32().set(strings, p >>> 2);
      return p;
    };
    try {
      conv = w.fjjs_converter_open(dict, profile ? str(profile) : 0, target ? str(target) : 0, flags, quotes,
        extra.punct ? PUNCT : 0, extra.clean ? 1 : 0, extra.markup ? 1 : 0, pointers(extra.phrases.flat()), extra.phrases.length,
        pointers(extra.protect), extra.protect.length);
    } finally {
      for (const p of owned) w.fjjs_release(p);
    }
    if (!conv) fail(profile ? 'profile ' + profile : target ? 'target ' + target : 'clean');
    converters.set(key, conv);
    return conv;
  }
  // A string gives a string; a Uint8Array, its bytes as they are (bytes that
  // are not UTF-8 pass through), gives a Uint8Array.
  function run(conv, s) {
    if (!dict) throw new Error('fanjian: closed');
    let p, len;
    const bytes = s instanceof Uint8Array;
    if (bytes) {
      len = s.length;
      p = alloc(len);
      heap().set(s, p);
    } else {
      [p, len] = text(s);
    }
    const lenPtr = alloc(4);
    const out = w.fjjs_convert(conv, p, len, lenPtr);
    w.fjjs_release(p);
    const outLen = u32()[lenPtr >>> 2];
    w.fjjs_release(lenPtr);
    if (!out) fail('convert');
    let result;
    try {
      if (bytes) {
        result = heap().slice(out, out + outLen);
      } else if (outLen === 0) {
        result = '';
      } else {
        const units = alloc(outLen * 2);
        result = utf16(w.memory.buffer, units, w.fjjs_utf16(out, outLen, units));
        w.fjjs_release(units);
      }
    } finally {
      w.fj_free(conv, out);
    }
    return result;
  }

  // User entries: phrases as { from: to } or [[from, to], ...], protect as
  // [term, ...], markup for -{...}-, clean for the default clean-up rules,
  // punct for the punctuation of Chinese text.
  function extraOf(options) {
    let phrases = options.phrases || [];
    if (!Array.isArray(phrases)) phrases = Object.entries(phrases);
    phrases = phrases.map(([from, to]) => [String(from), String(to)]);
    const protect = (options.protect || []).map(String);
    return { phrases, protect, markup: !!options.markup, clean: !!options.clean, punct: !!options.punct };
  }
  function flagsOf(options) {
    const repair = options.repair === undefined ? 'auto' : options.repair;
    if (!(repair in REPAIR)) throw new Error("fanjian: repair must be 'auto', 'careful', 'thorough' or 'off', not " + repair);
    const quotes = options.quotes === undefined ? 'profile' : options.quotes;
    if (!(quotes in QUOTES)) throw new Error("fanjian: quotes must be 'profile', 'keep', 'corner' or 'curly', not " + quotes);
    return [(options.compat ? COMPAT : 0) | REPAIR[repair], QUOTES[quotes]];
  }
  // convert's and converter's options: { to } or a profile (null: none, for
  // clean alone), compat, repair, quotes and the user entries.
  function converterFor(profile, options) {
    if (profile && typeof profile === 'object') {
      options = profile;
      profile = undefined;
    }
    options = options || {};
    const [flags, quotes] = flagsOf(options);
    const extra = extraOf(options);
    if (options.to !== undefined) {
      if (options.compat) throw new Error('fanjian: a target (to) has no compat mode');
      return open(null, String(options.to), flags, quotes, extra);
    }
    if (profile === null) return open(null, null, flags, quotes, extra);
    return open(String(profile === undefined ? 's2t' : profile), null, flags, quotes, extra);
  }

  const api = {
    // fanjian.convert(text, 's2twp', { compat, repair, quotes }) or
    // fanjian.convert(text, { to: 'tw' }).
    convert(s, profile, options) {
      return run(converterFor(profile, options), s);
    },
    // The same as a function of the text.
    converter(profile, options) {
      const conv = converterFor(profile, options);
      return (s) => run(conv, s);
    },
    // opencc-js's Converter({ from, to }), plus compat, repair and quotes.
    Converter(options) {
      for (const side of ['from', 'to']) {
        if (!options || typeof options[side] !== 'string') throw new Error('Please provide the `' + side + '` option');
        if (!LOCALES.includes(options[side])) throw new Error('Unknown `' + side + '` locale: ' + options[side]);
      }
      const { from, to } = options;
      const mode = Object.assign({}, options);
      delete mode.from;
      delete mode.to;
      const profile = configName(from, to);
      if (profileNames.includes(profile)) return api.converter(profile, mode);
      if (!(from in TO_STANDARD) || !(to in FROM_STANDARD)) throw new Error('fanjian: no conversion from ' + from + ' to ' + to);
      const steps = [TO_STANDARD[from], FROM_STANDARD[to]].filter(Boolean).map((p) => api.converter(p, mode));
      return (s) => steps.reduce((t, step) => step(t), String(s));
    },
    // { script, confidence, han, simplified, traditional, damage, spans:
    // [{ offset, length, script }] } with offsets and lengths in the string's
    // UTF-16 units (fj_detect counts bytes).
    // A Uint8Array's spans count its bytes.
    detect(s) {
      if (!dict) throw new Error('fanjian: closed');
      let p, len;
      const isBytes = s instanceof Uint8Array;
      if (isBytes) {
        len = s.length;
        p = alloc(len);
        heap().set(s, p);
      } else {
        [p, len] = text(s);
      }
      const json = w.fjjs_detect(dict, p, len);
      let units = (b) => b;
      if (json && !isBytes) {
        const bytes = heap().slice(p, p + len);
        units = (b) => decoder.decode(bytes.subarray(0, b)).length;
      }
      w.fjjs_release(p);
      if (!json) fail('detect');
      const result = JSON.parse(cString(json));
      w.fjjs_release(json);
      result.spans = (result.spans || []).map((sp) => {
        const start = units(sp.offset);
        return { offset: start, length: units(sp.offset + sp.length) - start, script: sp.script };
      });
      return result;
    },
    // The text without the boilerplate of scraped pages (fanjian clean).
    clean(s) {
      return run(converterFor(null, { clean: true }), s);
    },
    // The image's profiles and the targets, as the library lists them.
    profiles() {
      return profileNames.slice();
    },
    targets() {
      return targetNames.slice();
    },
    version: '',
    // Bytes in use in the module's heap (for leak checks).
    heapUsed() {
      return w.fjjs_heap_used();
    },
    // Frees the dictionary and every converter; the API then throws.
    close() {
      for (const conv of converters.values()) w.fj_converter_close(conv);
      converters.clear();
      w.fjjs_clean_close();
      if (dict) w.fj_dict_close(dict);
      if (imagePtr) w.fjjs_release(imagePtr);
      dict = 0;
      imagePtr = 0;
    },
  };
  api.version = cString(w.fj_version());
  return api;
}

createFanjian.imports = fanjianImports;
