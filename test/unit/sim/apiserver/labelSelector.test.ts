import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesLabels, parseLabelSelector, SelectorParseError } from '../../../../src/sim/apiserver/labelSelector.js';

const matches = (selector: string, labels: Record<string, string>) =>
  matchesLabels(parseLabelSelector(selector), labels);

describe('label selectors', () => {
  const web = { app: 'web', tier: 'front', version: '3' };
  const cases: [string, Record<string, string>, boolean][] = [
    ['', web, true],
    ['app=web', web, true],
    ['app==web', web, true],
    ['app=db', web, false],
    ['app!=db', web, true],
    ['missing!=x', web, true],
    ['app in (web, db)', web, true],
    ['app in (db)', web, false],
    ['app notin (db)', web, true],
    ['missing notin (db)', web, true],
    ['app notin (web)', web, false],
    ['tier', web, true],
    ['missing', web, false],
    ['!missing', web, true],
    ['!tier', web, false],
    ['app=web,tier in (front,back),!canary', web, true],
    ['app=web,tier in (back)', web, false],
    ['version>2', web, true],
    ['version<2', web, false],
    ['missing in (a,)', { missing: '' }, true],
    ['app=', { app: '' }, true],
  ];
  for (const [selector, labels, expected] of cases) {
    test(`"${selector}" ${expected ? 'matches' : 'does not match'} ${JSON.stringify(labels)}`, () => {
      assert.equal(matches(selector, labels), expected);
    });
  }

  test('objects without labels match only selectors that allow absence', () => {
    assert.equal(matchesLabels(parseLabelSelector('!a'), undefined), true);
    assert.equal(matchesLabels(parseLabelSelector('a'), undefined), false);
  });

  for (const bad of [
    'app in web',
    'app in ()',
    '=x',
    'app=(x)',
    'version>x',
    'bad key!=1x',
    'app=has space',
    'x/y/z=1',
  ]) {
    test(`"${bad}" is refused`, () => {
      assert.throws(() => parseLabelSelector(bad), SelectorParseError);
    });
  }
});
