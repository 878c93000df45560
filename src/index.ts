// Library entry point: the pieces of kwave that other programs may use.
export * from './errors.js';
