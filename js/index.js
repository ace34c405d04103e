// fanjian in Node (CommonJS): the module and the dictionary image beside this
// file, loaded synchronously on first require, as opencc-js's API is
// synchronous. FANJIAN_DICT names another image.
'use strict';
const fs = require('fs');
const path = require('path');
const createFanjian = require('./core.cjs');

const wasm = new WebAssembly.Module(fs.readFileSync(path.join(__dirname, 'fanjian.wasm')));
const instance = new WebAssembly.Instance(wasm, createFanjian.imports());
const dictPath = process.env.FANJIAN_DICT || path.join(__dirname, 'fanjian.fjd');
// Strings from the module's UTF-16 by Buffer: a copy, where TextDecoder is slower.
const utf16 = (buffer, offset, units) => Buffer.from(buffer, offset, units * 2).toString('utf16le');
module.exports = createFanjian(instance, fs.readFileSync(dictPath), utf16);
