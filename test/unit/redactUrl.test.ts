// The one way kwave shows a URL it was given: scheme://host[:port], then /… when anything was left out.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hideUrlIn, redactUrl } from '../../src/redactUrl.js';

const SLACK = 'https://hooks.slack.com/services/T000/B000/XXXXSECRET';

describe('redactUrl', () => {
  test('keeps scheme, host and port; leaves out path, query, fragment and userinfo', () => {
    assert.equal(redactUrl(SLACK), 'https://hooks.slack.com/…');
    assert.equal(redactUrl('http://10.0.0.1:8080/check?token=abc'), 'http://10.0.0.1:8080/…');
    assert.equal(redactUrl('https://ci.example?secret=1'), 'https://ci.example/…');
    assert.equal(redactUrl('https://ci.example/#frag'), 'https://ci.example/…');
    assert.equal(redactUrl('https://user:pw@ci.example/'), 'https://ci.example/…');
    assert.equal(redactUrl('http://[::1]:9/x'), 'http://[::1]:9/…');
  });

  test('a bare origin hides nothing and is shown whole; a non-URL is not echoed', () => {
    assert.equal(redactUrl('https://ci.example'), 'https://ci.example');
    assert.equal(redactUrl('https://ci.example/'), 'https://ci.example');
    assert.equal(redactUrl('not a url XXXXSECRET'), '(invalid URL)');
  });
});

describe('hideUrlIn', () => {
  test('removes the URL and its secret parts from text that echoes them', () => {
    const echoed = `404 page not found: POST /services/T000/B000/XXXXSECRET at ${SLACK}`;
    const out = hideUrlIn(echoed, SLACK);
    assert.ok(!out.includes('XXXXSECRET'), out);
    assert.match(out, /https:\/\/hooks\.slack\.com\/…/);
    assert.ok(!hideUrlIn('bad query ?token=abcdef123', 'https://h/x?token=abcdef123').includes('abcdef123'));
    assert.ok(!hideUrlIn('user s3cr3tpass', 'https://bob:s3cr3tpass@h/').includes('s3cr3tpass'));
  });

  test('leaves text alone without a URL, and short pieces that are ordinary words', () => {
    assert.equal(hideUrlIn('answered 500 at /', 'https://h/'), 'answered 500 at /');
    assert.equal(hideUrlIn('see /x', 'https://h/x'), 'see /x');
    assert.equal(hideUrlIn('text', undefined), 'text');
  });
});
