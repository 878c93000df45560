// The Status an API-server operation refuses with (it throws ApiError); fails if it does not.
import assert from 'node:assert/strict';
import { ApiError, type Status } from '../../../../src/sim/apiserver/status.js';

export function refusal(fn: () => unknown): Status {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e.status;
    throw e;
  }
  assert.fail('expected a refusal');
}
