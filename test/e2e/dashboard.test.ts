// `kwave dashboard` in a real browser (Debian's chromium, headless, driven by playwright-core)
// during a rollout like `kwave demo --gate`: an approval gate after the canary wave and a
// Prometheus error-rate gate (a real Prometheus scraping the simulator's app metrics) after the
// second, which `nginx:errors` fails, so the rollout halts and rolls back. What is checked is
// what a person sees: the waves' bars and texts, the approval button, the refusal of an approval
// the API server forbids (shown as it came), an approval from the page that the runner obeys
// (from its own events), the gate's chart, the halt and the rollback. Screenshots (light and
// dark) go to test-output/dashboard/ (KWAVE_TEST_OUTPUT).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { BACKEND } from './helpers/backend.js';
import { launchBrowser, startDashboard, testOutput } from './helpers/dashboard.js';
import { missing } from './helpers/prerequisites.js';
import { startPrometheus, type PrometheusServer } from './helpers/prometheus.js';
import { exitOf, planYaml, startFleet } from './helpers/rolloutCli.js';
import { errorRateQuery } from './helpers/metricsRun.js';
import { refusedUser } from './helpers/dashboardRefusal.js';

const skip = missing('chromium') || missing('prometheus');
const OUT = () => testOutput('dashboard', BACKEND);

/** Waits until the page's text contains `text` (the view arrives by server-sent events). */
async function seen(page: Page, text: string | RegExp, timeout = 120_000): Promise<void> {
  await page.getByText(text).first().waitFor({ timeout });
}

describe('kwave dashboard in chromium during a gated rollout', () => {
  test(
    'waves, approval refused then given from the page, the runner going on, the gate chart, the halt and rollback',
    { skip },
    async () => {
      const fleet = await startFleet({ pods: 20, timeScale: 4 });
      let prometheus: PrometheusServer | undefined;
      const browser = await launchBrowser();
      try {
        prometheus = await startPrometheus({ targets: [new URL(fleet.sim.metricsUrl).host], scrapeIntervalSeconds: 1 });
        const plan = await fleet.writePlan(
          'web.yaml',
          planYaml({
            name: 'web',
            image: 'nginx:errors',
            waves: '[1, "20%", "100%"]',
            concurrency: 2,
            maxUnavailable: 2,
            podTimeout: '120s',
            rollback: 'all',
            gates: [
              { name: 'sign-off', afterWaves: [1], approval: true },
              {
                name: 'error-rate',
                afterWaves: [2],
                prometheus: {
                  address: prometheus.url,
                  query: errorRateQuery(new URL(fleet.sim.metricsUrl).host),
                  successCondition: 'result < 0.02',
                  failureCondition: 'result >= 0.04',
                  initialDelay: '6s',
                  interval: '1s',
                  count: 3,
                  // Three measurements before it fails: the chart shows a line, not a point.
                  failureLimit: 2,
                  noData: 'inconclusive',
                },
              },
            ],
          }),
        );
        const dashboard = await startDashboard(fleet.kubeconfig);
        const run = fleet.start(['run', plan]);
        const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(dashboard.url);

        // The canary done, the approval gate waiting: the bar of wave 1 full, the others left.
        await seen(page, 'waiting for approval of wave 1 (gate sign-off)');
        await seen(page, '1/1 · 1 at target · done');
        await seen(page, '0/3 · 3 left · next');
        await page.screenshot({ path: join(OUT(), '1-waiting-for-approval.png'), fullPage: true });

        // A person the API server refuses (real: RBAC; embedded: an admission webhook's 403) sees the
        // refusal as it came, and nothing is approved.
        const refused = await refusedUser(fleet, 'kwave-web');
        const viewerDashboard = await startDashboard(refused.kubeconfig);
        const viewer = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
        viewer.on('pageerror', (e) => errors.push(e.message));
        await viewer.goto(viewerDashboard.url);
        await seen(viewer, 'waiting for approval of wave 1 (gate sign-off)');
        await viewer.getByRole('button', { name: 'Approve' }).click();
        await viewer.getByRole('dialog').getByRole('button', { name: 'Approve' }).click();
        const refusal = viewer.getByRole('alert');
        await refusal.waitFor({ timeout: 60_000 });
        assert.match(
          await refusal.innerText(),
          BACKEND === 'real'
            ? /forbidden: .*cannot create resource "configmaps"/
            : /denied the request: create of configmaps/,
        );
        await viewer.screenshot({ path: join(OUT(), '2-approval-refused.png'), fullPage: true });
        assert.equal(run.events.filter((e) => e.event === 'gate-end' && e.gate === 'sign-off').length, 0);
        assert.equal(await viewerDashboard.stop(), 0, viewerDashboard.stderr());
        await viewer.close();
        await refused.lift();

        // The approval from the page, by keyboard: the runner's own events show it going on.
        await page.getByRole('button', { name: 'Approve' }).focus();
        await page.keyboard.press('Enter');
        await page.getByRole('dialog').getByRole('button', { name: 'Approve' }).focus();
        await page.screenshot({ path: join(OUT(), '3-confirm-approval.png') });
        await page.keyboard.press('Enter');
        await seen(page, /approved wave 1 of plan web/);
        await run.waitFor(
          (e) => e.event === 'gate-end' && e.gate === 'sign-off' && e.result === 'passed',
          'the approval',
        );
        await run.waitFor((e) => e.event === 'wave-start' && e.wave === 2, 'wave 2');
        await seen(page, /wave 2 of 3/);
        await page.locator('.wave-running').first().waitFor({ timeout: 60_000 });
        await page.screenshot({ path: join(OUT(), '4-wave-2-moving.png'), fullPage: true });

        // The error-rate gate measures, fails and halts; the chart plots its measurements.
        await page.locator('.gate .chart canvas').first().waitFor({ timeout: 120_000 });
        await seen(page, 'success: result < 0.02 · failure: result >= 0.04');
        await page.screenshot({ path: join(OUT(), '5-gate-chart.png'), fullPage: true });
        const exit = await exitOf(run);
        assert.equal(exit.code, 3, run.stderr());
        await seen(page, /error-rate after wave 2: failed/);
        await seen(page, /rolling back 3 pods \(all\)|rolling back \d+ pods? \(all\)/);
        await seen(page, 'free (no runner)');
        await page.screenshot({ path: join(OUT(), '6-halted-rolled-back.png'), fullPage: true });
        const dark = await browser.newPage({ viewport: { width: 1280, height: 1100 }, colorScheme: 'dark' });
        await dark.goto(`${dashboard.url}#/default/web`);
        await seen(dark, /error-rate after wave 2: failed/);
        await dark.screenshot({ path: join(OUT(), '7-halted-dark.png'), fullPage: true });
        assert.deepEqual(errors, []);
        assert.equal(await dashboard.stop(), 0, dashboard.stderr());
      } finally {
        await browser.close();
        await prometheus?.stop();
        await fleet.close();
      }
    },
  );
});
