// Maintenance windows through the real `kwave run` (real time, UTC): one that opens while the run
// waits — no pod is touched before it opens (the pods' own state annotation says when each was
// patched); one that does not open while the user waits — what they see (the wait event, `kwave
// status`), and Ctrl-C leaves every pod untouched.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { endOf, exitOf, planYaml, startFleet, type Fleet } from './helpers/rolloutCli.js';
import { NEW_ID, OLD_ID } from './helpers/images.js';

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

async function windowPlan(fleet: Fleet, name: string, allow: string): Promise<string> {
  const doc = parse(planYaml({ name, waves: '["100%"]' })) as { spec: Record<string, unknown> };
  doc.spec.window = { timezone: 'UTC', allow: [allow] };
  return fleet.writePlan(`${name}.yaml`, stringify(doc));
}

describe('kwave run: maintenance windows', () => {
  test('a window that opens while the run waits: it waits, then upgrades, and no pod is patched before the opening', async () => {
    const fleet = await startFleet({ pods: 3 });
    try {
      // The next whole minute, or the one after when this one is nearly over (kwave must start
      // before the window opens for the wait to be seen).
      const now = Date.now();
      const opens = Math.floor(now / 60_000) * 60_000 + (now % 60_000 > 40_000 ? 120_000 : 60_000);
      const plan = await windowPlan(fleet, 'opens', `Sun-Sat ${hhmm(opens)}-${hhmm(opens + 30 * 60_000)}`);
      const run = fleet.start(['run', plan]);
      const wait = await run.waitFor((e) => e.event === 'window-wait', 'the window wait');
      assert.equal(wait.event === 'window-wait' && Date.parse(wait.opensAt), opens);
      assert.equal((await exitOf(run)).code, 0, run.stderr());
      assert.equal(endOf(run).phase, 'Completed');
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.imageID, NEW_ID, name);
        const state = JSON.parse(p.annotation ?? '{}') as { startedAt?: string };
        assert.ok(
          Date.parse(state.startedAt ?? '') >= opens,
          `${name} patched at ${state.startedAt}, not before the window opened at ${new Date(opens).toISOString()}`,
        );
      }
    } finally {
      await fleet.close();
    }
  });

  test('a window that does not open while the user waits: the wait and its opening are shown, and Ctrl-C leaves every pod untouched (exit 4)', async () => {
    const fleet = await startFleet({ pods: 3 });
    try {
      // Opens in about 12 hours, whatever the time of day now.
      const opens = Math.floor(Date.now() / 60_000) * 60_000 + 12 * 3_600_000;
      const plan = await windowPlan(fleet, 'later', `Sun-Sat ${hhmm(opens)}-${hhmm(opens + 60 * 60_000)}`);
      const run = fleet.start(['run', plan]);
      const wait = await run.waitFor((e) => e.event === 'window-wait', 'the window wait');
      assert.equal(wait.event === 'window-wait' && Date.parse(wait.opensAt), opens);
      const status = await fleet.kwave(['status', plan]);
      assert.equal(status.code, 0, status.stderr);
      assert.match(
        status.stdout,
        new RegExp(
          `waiting for the window before wave 1: opens in \\S+ \\(at ${new Date(opens).toISOString().slice(0, 16)}`,
        ),
      );
      run.child.kill('SIGINT');
      assert.equal((await exitOf(run)).code, 4, run.stderr());
      for (const [name, p] of await fleet.pods()) {
        assert.equal(p.imageID, OLD_ID, name);
        assert.equal(p.restartCount, 0, name);
        assert.equal(p.gate, 'True', `${name} in service`);
        assert.equal(p.annotation, undefined, `${name} never touched`);
      }
    } finally {
      await fleet.close();
    }
  });
});
