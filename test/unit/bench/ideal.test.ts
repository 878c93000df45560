import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { idealTime } from '../../../bench/fleet/ideal.js';

describe('idealTime (the kubelet-limited time of a rollout on the simulator)', () => {
  it('counts rounds per wave and the rounds in which a node first pulls', () => {
    // 1,000 pods, waves [1, "10%", "50%", "100%"], parallelism 100, 3 nodes.
    const r = idealTime({ waveSizes: [1, 99, 400, 500], parallelism: 100, podMs: 500, pullMs: 200, nodes: 3 });
    assert.deepEqual(r, { ms: 11 * 500 + 2 * 200, rounds: 11, pullRounds: 2 });
  });

  it('rounds a partial round up, per wave (a wave does not share rounds with the next)', () => {
    const r = idealTime({ waveSizes: [1, 999, 4000, 5000], parallelism: 500, podMs: 500, pullMs: 0, nodes: 3 });
    assert.equal(r.rounds, 1 + 2 + 8 + 10);
    assert.equal(r.ms, 21 * 500);
  });

  it('adds the pauses between waves, not after the last', () => {
    const r = idealTime({ waveSizes: [2, 2], parallelism: 2, podMs: 100, pullMs: 0, nodes: 1, pausesMs: [1000, 5000] });
    assert.equal(r.ms, 2 * 100 + 1000);
  });

  it('a single node pulls once; pulls spread over rounds smaller than the node count', () => {
    assert.equal(idealTime({ waveSizes: [10], parallelism: 5, podMs: 100, pullMs: 50, nodes: 1 }).pullRounds, 1);
    assert.equal(idealTime({ waveSizes: [6], parallelism: 2, podMs: 100, pullMs: 50, nodes: 5 }).pullRounds, 3);
  });

  it('refuses a parallelism below 1', () => {
    assert.throws(() => idealTime({ waveSizes: [1], parallelism: 0, podMs: 1, pullMs: 0, nodes: 1 }), RangeError);
  });
});
