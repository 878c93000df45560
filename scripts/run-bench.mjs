// Runs every benchmark under bench/ (or those named) one after another and prints their figures.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const named = process.argv.slice(2);
const files = (named.length ? named : readdirSync('bench').filter((f) => f.endsWith('.ts')).map((f) => `bench/${f}`)).sort();
let failed = 0;
for (const file of files) {
  console.log(`\n== ${file}`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
