#!/usr/bin/env node
// The installed entry point. V8 flags for the CLI only, each unless the user gave one (why and what they
// buy: bench/README.md, "Why the CLI sets V8 flags"); then the bundled CLI (scripts/bundle-cli.mjs).
import { setFlagsFromString } from 'node:v8';
const userFlags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
const heapGrowth = process.argv[2] === 'plan' ? 100 : 50; // old space grows to 2× (plan) or 1.5× its live data
if (!userFlags.includes('--heap-growing-percent')) setFlagsFromString(`--heap-growing-percent=${heapGrowth}`);
if (!/--(no-)?(liftoff|wasm)/.test(userFlags)) setFlagsFromString('--liftoff-only'); // llhttp (wasm): no tier-up
const { main } = await import('../dist/cli/bundle.js');
process.exitCode = await main(process.argv.slice(2));
