// The fastest a rollout can go on the simulator: the kubelet's pace, with kwave costing nothing.
// Pure. A wave of n pods at parallelism p takes ceil(n / p) rounds of one pod's kubelet time
// (stop the old container, start the new one, become ready); a round in which some node pulls
// the new image for the first time takes the pull longer; waves follow each other, plus the
// pauses between them. Worked example, 1,000 pods at parallelism 100 over 3 nodes, pod 500 ms,
// pull 200 ms, waves [1, "10%", "50%", "100%"] = 1, 99, 400, 500 pods: wave 1 is 1 round with a
// pull (node 1), wave 2's first round pulls on the other two nodes, so
// (1 + 1 + 4 + 5) × 500 + 2 × 200 = 5,900 ms.

export interface IdealInput {
  /** Pods per wave, in order (not cumulative). */
  waveSizes: number[];
  /** Pods upgraded at once: min(concurrency, unavailability budget). */
  parallelism: number;
  /** One pod's kubelet time once the image is on its node. */
  podMs: number;
  /** Extra time of a pod whose node pulls the new image first. */
  pullMs: number;
  /** Nodes the pods are spread over, round-robin in upgrade order. */
  nodes: number;
  /** Pause after each wave (missing = 0). */
  pausesMs?: number[];
}

export interface Ideal {
  ms: number;
  /** Rounds of `parallelism` pods, all waves together. */
  rounds: number;
  /** Rounds that include a first pull on some node. */
  pullRounds: number;
}

export function idealTime(input: IdealInput): Ideal {
  const { waveSizes, parallelism, podMs, pullMs, nodes } = input;
  if (!(parallelism >= 1)) throw new RangeError(`parallelism must be at least 1, got ${parallelism}`);
  let rounds = 0;
  let pullRounds = 0;
  let nodesWithoutImage = Math.max(0, nodes);
  let pausesMs = 0;
  waveSizes.forEach((size, i) => {
    let left = size;
    while (left > 0) {
      const batch = Math.min(parallelism, left);
      rounds++;
      if (nodesWithoutImage > 0) {
        pullRounds++;
        nodesWithoutImage -= Math.min(nodesWithoutImage, batch);
      }
      left -= batch;
    }
    if (i < waveSizes.length - 1) pausesMs += input.pausesMs?.[i] ?? 0;
  });
  return { ms: rounds * podMs + pullRounds * pullMs + pausesMs, rounds, pullRounds };
}
