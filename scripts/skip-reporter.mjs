// A node:test reporter that writes every skipped test or suite as one JSON line:
// {file, name, type, reason}. run-tests.mjs reads them back and prints the skips in the run's last
// lines, so a suite that skips itself can never vanish from the totals unnoticed.
export default async function* skipReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, name, file, details } = event.data;
    if (skip === undefined || skip === false) continue;
    yield `${JSON.stringify({ file: file ?? '', name, type: details?.type ?? 'test', reason: skip === true ? '' : String(skip) })}\n`;
  }
}
