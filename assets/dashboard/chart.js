// The chart of one gate: its measurements over time (uPlot), with the success and failure
// thresholds as lines when the conditions compare `result` with a number. Kept per gate and
// updated in place, so a new measurement does not rebuild the chart.
'use strict';

window.kwaveGateChart = (function () {
  const charts = new Map();

  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function dataOf(gate) {
    const xs = gate.measurements.map((m) => Date.parse(m.at) / 1000);
    const ys = gate.measurements.map((m) => m.value);
    const line = (t) => xs.map(() => (t ? t.value : null));
    return [xs, ys, line(gate.success), line(gate.failure)];
  }

  function build(el, gate) {
    const opts = {
      width: Math.max(280, Math.min(el.clientWidth || 560, 720)),
      height: 200,
      legend: { show: true },
      axes: [
        { stroke: css('--fg'), grid: { stroke: css('--grid') } },
        { stroke: css('--fg'), grid: { stroke: css('--grid') } },
      ],
      series: [
        {},
        { label: 'result', stroke: css('--accent'), width: 2, points: { show: true, size: 7 } },
        { label: gate.successCondition || 'success', stroke: css('--ok'), dash: [6, 4] },
        { label: gate.failureCondition || 'failure', stroke: css('--bad'), dash: [6, 4] },
      ],
    };
    return new uPlot(opts, dataOf(gate), el);
  }

  /** Draws (or updates) the chart of `gate` inside `el`; `key` names the gate across views. */
  function draw(el, key, gate) {
    const known = charts.get(key);
    if (known && known.el === el) {
      known.plot.setData(dataOf(gate));
      return;
    }
    if (known) known.plot.destroy();
    el.textContent = '';
    charts.set(key, { el, plot: build(el, gate) });
  }

  /** Drops the charts whose keys are not in `keep`. */
  function prune(keep) {
    for (const [key, c] of charts) {
      if (!keep.has(key) || !document.body.contains(c.el)) {
        c.plot.destroy();
        charts.delete(key);
      }
    }
  }

  return { draw, prune };
})();
