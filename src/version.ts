// kwave's version, from its package.json: what `kwave --version` prints and what every request
// kwave sends names itself with (cluster/wireConnection.ts).
import { readFileSync } from 'node:fs';
import { packagePath } from './packageRoot.js';

let version: string | undefined;

export function kwaveVersion(): string {
  version ??= (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
  return version;
}
