// An error as a person reads it: `kwave: file:line:col CODE path: message`, the place only when known.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderError } from '../../../src/cli/render.js';
import { ExitCode, KwaveError } from '../../../src/errors.js';

test('with a place: file, line and column, then the field path', () => {
  const err = new KwaveError('FIXTURE', 'expected a number', ExitCode.BAD_INPUT, {
    file: 'world.yaml',
    line: 3,
    col: 7,
    path: 'nodes.0.zone',
  });
  assert.equal(renderError(err), 'kwave: world.yaml:3:7 FIXTURE nodes.0.zone: expected a number');
});

test('a place without a path has no empty path; no place, the message alone', () => {
  assert.equal(
    renderError(
      new KwaveError('FIXTURE', 'invalid YAML', ExitCode.BAD_INPUT, { file: 'w.yaml', line: 1, col: 1, path: '' }),
    ),
    'kwave: w.yaml:1:1 FIXTURE invalid YAML',
  );
  assert.equal(renderError(new KwaveError('USAGE', 'unknown command "rnu"')), 'kwave: USAGE unknown command "rnu"');
});
