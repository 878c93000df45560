// Where a webhook gate's or receiver's URL comes from: the plan, an environment variable or a file,
// through the same resolver as bearer tokens; errors name the source, never the value.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readUrl, urlSourceName } from '../../../src/gates/urlSource.js';
import { readSecret } from '../../../src/gates/secretSource.js';

const SLACK = 'https://hooks.slack.com/services/T000/B000/XXXXSECRET';
const files: Record<string, string> = {
  '/run/hook': `${SLACK}\n`,
  '/run/empty': ' \n',
  '/run/ftp': 'ftp://h/XXXXSECRET',
};
const from = {
  env: { HOOK: SLACK, BAD: 'XXXXSECRET not a url', CREDS: 'https://u:XXXXSECRET@h/', BLANK: '' },
  readFile: async (path: string) => {
    const text = files[path];
    if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return text;
  },
};

describe('readUrl', () => {
  test('the plan, an environment variable or a file (trimmed)', async () => {
    assert.deepEqual(await readUrl({ url: SLACK }, from), { url: SLACK });
    assert.deepEqual(await readUrl({ urlEnv: 'HOOK' }, from), { url: SLACK });
    assert.deepEqual(await readUrl({ urlFile: '/run/hook' }, from), { url: SLACK });
  });

  test('a missing, empty or wrong value is an error that never shows the value', async () => {
    const cases: [Parameters<typeof readUrl>[0], RegExp][] = [
      [{ urlEnv: 'UNSET' }, /^url: environment variable UNSET is not set or empty$/],
      [{ urlEnv: 'BLANK' }, /^url: environment variable BLANK is not set or empty$/],
      [{ urlFile: '/run/none' }, /^url: cannot read \/run\/none: ENOENT$/],
      [{ urlFile: '/run/empty' }, /^url: file \/run\/empty is empty$/],
      [{ urlEnv: 'BAD' }, /^url: environment variable BAD does not hold a URL$/],
      [{ urlFile: '/run/ftp' }, /^url: file \/run\/ftp holds a ftp URL, not http:\/\/ or https:\/\/$/],
      [{ urlEnv: 'CREDS' }, /user or password/],
    ];
    for (const [source, expected] of cases) {
      const got = await readUrl(source, from);
      assert.ok('error' in got, JSON.stringify(source));
      assert.match(got.error, expected);
      assert.ok(!got.error.includes('XXXXSECRET'), got.error);
    }
  });

  test('urlSourceName: the redacted URL, or where it will be read from', () => {
    assert.equal(urlSourceName({ url: SLACK }), 'https://hooks.slack.com/…');
    assert.equal(urlSourceName({ urlEnv: 'HOOK' }), 'the URL in $HOOK');
    assert.equal(urlSourceName({ urlFile: '/run/hook' }), 'the URL in /run/hook');
  });
});

describe('readSecret (tokens and URLs alike)', () => {
  test('no source, no value; the label names what is missing', async () => {
    assert.deepEqual(await readSecret({}, 'bearer token', from), {});
    assert.deepEqual(await readSecret({ env: 'UNSET' }, 'bearer token', from), {
      error: 'bearer token: environment variable UNSET is not set or empty',
    });
  });
});
