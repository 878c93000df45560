// What the benchmark's client scripts (bare-client.mjs, minimal-client.mjs) share: the pods in name
// order through the waves, `concurrency` at a time within each, and the line bench/fleet.ts reads.

/** Upgrades `names` wave by wave (each wave's pods in turn, `concurrency` at once); the number upgraded. */
export async function throughWaves(names, waveSizes, concurrency, upgrade) {
  let upgraded = 0;
  let start = 0;
  for (const size of waveSizes) {
    const wave = names.slice(start, start + size);
    start += size;
    let next = 0;
    const worker = async () => {
      while (next < wave.length) {
        await upgrade(wave[next++]);
        upgraded++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, wave.length) }, worker));
  }
  return upgraded;
}

/** The one JSON line bench/fleet.ts reads: pods upgraded, and the process's own CPU seconds. */
export function report(upgraded) {
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({ upgraded, cpuSeconds: (cpu.user + cpu.system) / 1e6 }));
}
