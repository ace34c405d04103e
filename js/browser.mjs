// fanjian in the browser: `const fanjian = await load()` fetches the module
// and the dictionary image (about 20 MB; the browser caches it) from beside
// this file, or from the URLs given, or takes their bytes; nothing leaves the
// page. The object has the API of require('fanjian') in Node.
import createFanjian from './core.mjs';

async function bytesOf(source) {
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  const response = await fetch(source);
  if (!response.ok) throw new Error('fanjian: ' + source + ': HTTP ' + response.status);
  return response.arrayBuffer();
}

export async function load(options = {}) {
  const wasm = options.wasm || new URL('./fanjian.wasm', import.meta.url);
  const dict = options.dict || new URL('./fanjian.fjd', import.meta.url);
  const [wasmBytes, dictBytes] = await Promise.all([bytesOf(wasm), bytesOf(dict)]);
  const { instance } = await WebAssembly.instantiate(wasmBytes, createFanjian.imports());
  return createFanjian(instance, dictBytes);
}

export default load;
