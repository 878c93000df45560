// The CLI bundled by esbuild from dist/: dist/cli/bundle.js (bin/kwave.js runs it),
// dist/cli/sim-worker.js (the thread `kwave sim` serves from) and the chunks they load,
// dist/cli/chunks/ (each command is loaded when it runs; code they share is a chunk of its own).
// Why: loaded file by file, client-node alone is about 1,000 modules (its generated API and
// models): 0.8 s of CPU and 75 MB before kwave does anything, at every start.
// Bundled, with only the parts of client-node kwave uses, `kwave --version` takes 0.28 s and
// 66 MB. The library (dist/index.js) stays unbundled.
// The dependencies are bundled in; those written as CommonJS call require(), given here through
// createRequire (resolved from dist/cli/chunks/, so a require() left dynamic still finds node_modules).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// client-node's package declares no `sideEffects`, so esbuild keeps every module its index
// re-exports, and the kubeconfig's module imports its generated index: 4 MB of API classes and
// models kwave never calls (its requests are wire.ts's). Its modules only declare things, so
// they are marked free of side effects and what kwave does not use is left out. Code splitting
// is what lets that work: in one file, each lazily imported command is wrapped as a whole, and
// client-node's `export *` chains are then kept whole too.
const clientNodeTreeShaken = {
  name: 'client-node-tree-shaken',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.resolving) return undefined;
      const resolved = await b.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        importer: args.importer,
        pluginData: { resolving: true },
      });
      // Anything else (an optional require() that does not resolve, too) is left to esbuild.
      if (resolved.errors.length || !resolved.path.includes('/node_modules/@kubernetes/client-node/')) return undefined;
      return { ...resolved, sideEffects: false };
    });
  },
};

// The `yaml` package's ES module build (the one its package.json gives every runtime but Node), in
// place of its CommonJS build for Node: the same parser, but the Node build reads
// process.env.LOG_TOKENS for every token it parses (a call into the environment each time:
// 416,000 of them, a fifth of the parse, for a 1 MiB plan), and, being CommonJS, reaches the
// bundle through getters that every `isMap()` of kwave's goes through.
const yamlAsModule = {
  name: 'yaml-as-module',
  setup(b) {
    b.onResolve({ filter: /^yaml$/ }, () => ({
      path: fileURLToPath(import.meta.resolve('yaml/package.json').replace(/package\.json$/, 'browser/index.js')),
    }));
  },
};

// Chunks are named by their content's hash: those of an earlier build go first.
rmSync('dist/cli/chunks', { recursive: true, force: true });

const { metafile } = await build({
  // The CLI, and the worker thread `kwave sim` serves its clusters from (src/cli/simThread.ts).
  entryPoints: { bundle: 'dist/cli/main.js', 'sim-worker': 'dist/cli/simWorker.js' },
  outdir: 'dist/cli',
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  plugins: [clientNodeTreeShaken, yamlAsModule],
  banner: {
    js: "import { createRequire as kwaveCreateRequire } from 'node:module'; const require = kwaveCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  metafile: true,
});

// V8 keeps each loaded chunk's source text for as long as the process runs (functions are
// compiled lazily, from it), and holds it in two bytes a character if any character is not
// Latin-1. esbuild writes code in ASCII, escaping the rest, but keeps some comments as they are
// (an em dash or a "−" in a JSDoc of client-node's or ours), and `kwave run`'s 2.9 MB of
// sources would take 5.8 MB. Escaping those characters too changes no code (in a comment it is text, in a
// string, regular expression or identifier the same character) and keeps the sources in one byte.
// Only the files this build wrote: dist/cli also holds tsc's output, which the bundle replaces.
for (const file of Object.keys(metafile.outputs)) {
  const text = readFileSync(file, 'utf8');
  const ascii = text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (ascii !== text) writeFileSync(file, ascii);
}
