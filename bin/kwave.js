#!/usr/bin/env node
// The installed entry point: runs the CLI bundled into one file (dist/cli/bundle.js, built by
// `npm ci` through `prepare`; scripts/bundle-cli.mjs says why).
import { setFlagsFromString } from 'node:v8';

// V8 lets the heap grow to up to 4× what survived the last full collection before it collects
// again; kwave's live data is small (about 66 MB at 10,000 pods) but its garbage is plentiful, so
// most of its peak RSS was that headroom. Capped at 1.5×: `kwave run` at 10,000 pods peak RSS
// 458 → 304 MB at 2× and 311 → 278 MB at 1.5× for 1–3 % more CPU, at 50,000 pods 680 → 559 MB;
// `kwave sim` serving 50,000 pods 1,045 → 852 MB for the same CPU (bench/README.md). Set here,
// for the CLI only: a program that imports kwave as a library keeps its own heap settings, and a
// user's own flag (node --heap-growing-percent=N) wins.
// Not for `kwave plan`, which lists every pod and exits: what fills its old generation is each
// page's text (~0.7 MB, a large object, dead once parsed), so at 1.5× of its small live data it
// ran a full collection every ~8 pages. At 2×, 50,000 pods: 2.0 -> 1.8 s, 2.0 -> 1.6 s of CPU,
// +2 MB peak RSS (bench/README.md).
const userFlags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
const heapGrowth = process.argv[2] === 'plan' ? 100 : 50;
if (!userFlags.includes('--heap-growing-percent')) setFlagsFromString(`--heap-growing-percent=${heapGrowth}`);

// undici parses HTTP with llhttp compiled to WebAssembly. V8 compiles it with its baseline
// compiler (Liftoff) first and then again, on a background thread, with its optimizing one
// (TurboFan): llhttp's parser is one very large function, and that second compile alone peaked at
// about 36 MB of the process's memory and 50-80 ms of CPU at every start of a command that
// connects. Liftoff's code is slower, but parsing the headers of a few requests a pod is a small
// part of any command: `kwave plan` with no pods 113 -> 77 MB, 0.29 -> 0.22 s of CPU
// (bench/README.md). A user's own --liftoff or --wasm flag wins.
if (!/--(no-)?(liftoff|wasm)/.test(userFlags)) setFlagsFromString('--liftoff-only');

const { main } = await import('../dist/cli/bundle.js');
process.exitCode = await main(process.argv.slice(2));
