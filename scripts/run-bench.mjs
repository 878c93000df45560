// `npm run bench [-- FLAGS]` runs the fleet benchmark (bench/fleet.ts; flags in its header), and
// with `--peer …` the peer benchmark (bench/peers.ts: kwave beside OpenKruise and the kubectl loop);
// `npm run bench -- bench/X.ts …` runs the benchmarks named, `npm run bench -- all` every one.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const all = args[0] === 'all';
const named = args.filter((a) => a.endsWith('.ts'));
const files = all
  ? readdirSync('bench')
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `bench/${f}`)
      .sort()
  : named.length
    ? named
    : [args.some((a) => a === '--peer' || a.startsWith('--peer=')) ? 'bench/peers.ts' : 'bench/fleet.ts'];
const passOn = all || named.length ? [] : args;
let failed = 0;
for (const file of files) {
  console.log(`\n== ${file}`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file, ...passOn], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
