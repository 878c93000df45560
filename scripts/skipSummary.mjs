// What a test run skipped and why, for the last lines of `npm test`: node's runner reports a skip
// deep inside its output, where nobody reads it. Pure: TAP text in, lines out.

/** Install commands for the reasons our suites skip, matched on the reason's text. */
const REMEDIES = [
  { when: /\bprometheus(-pushgateway)? is not on PATH/, command: 'apt-get install prometheus prometheus-pushgateway' },
  { when: /\bkubectl\b/, command: 'apt-get install kubernetes-client (or any kubectl on PATH)' },
];

/**
 * The skipped tests of a TAP report, grouped by reason (first seen first).
 * @param {string} tap
 * @returns {{ reason: string, tests: string[] }[]}
 */
export function skippedTests(tap) {
  const groups = new Map();
  for (const line of tap.split('\n')) {
    const m = /^\s*ok \d+ - (.*?) # SKIP(?: (.*))?$/.exec(line);
    if (!m) continue;
    const reason = (m[2] ?? '').trim() || 'no reason given';
    if (!groups.has(reason)) groups.set(reason, []);
    groups.get(reason).push(m[1]);
  }
  return [...groups].map(([reason, tests]) => ({ reason, tests }));
}

/**
 * The closing lines: nothing when nothing was skipped; else each reason with its count and the
 * command that installs what is missing (`.ci/run` installs all of it).
 * @param {string} tap
 * @returns {string[]}
 */
export function skipSummary(tap) {
  const groups = skippedTests(tap);
  if (groups.length === 0) return [];
  const total = groups.reduce((n, g) => n + g.tests.length, 0);
  const out = [`skipped ${total} test${total === 1 ? '' : 's'} (or suites):`];
  const commands = new Set();
  for (const g of groups) {
    const shown = g.tests.slice(0, 3).join('; ') + (g.tests.length > 3 ? `; … ${g.tests.length - 3} more` : '');
    out.push(`  ${g.tests.length} × ${g.reason}: ${shown}`);
    for (const r of REMEDIES) if (r.when.test(g.reason)) commands.add(r.command);
  }
  if (commands.size > 0) out.push(`to run them: ${[...commands].join('; ')} — or .ci/run, which installs everything the tests use`);
  return out;
}
