// fanjian in Node as an ES module: the same instance as require('fanjian').
import { createRequire } from 'module';

const fanjian = createRequire(import.meta.url)('./index.js');
export default fanjian;
export const { Converter, convert, converter, detect, clean, profiles, targets, close, heapUsed, version } = fanjian;
