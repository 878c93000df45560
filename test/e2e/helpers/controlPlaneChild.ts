// A parent that starts a control plane, prints its components' pids as one JSON line, and waits
// to be killed: the orphan test SIGKILLs it and checks that every component ends too.
import { startControlPlane } from '../../../src/sim/controlPlane/index.js';

const cp = await startControlPlane({ controllers: process.argv.includes('--controllers') });
process.stdout.write(`${JSON.stringify({ pids: cp.pids(), dir: cp.dir })}\n`);
setInterval(() => undefined, 60_000);
