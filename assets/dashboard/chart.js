// The chart of one gate: its measurements over time (uPlot), with the success and failure
// thresholds drawn as dashed lines across the plot when the conditions compare `result` with a
// number. Kept per gate and updated in place, so a new measurement does not rebuild the chart.
'use strict';

window.kwaveGateChart = (function () {
  const charts = new Map();

  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function dataOf(gate) {
    return [gate.measurements.map((m) => Date.parse(m.at) / 1000), gate.measurements.map((m) => m.value)];
  }

  function thresholds(gate) {
    return [
      gate.success && { value: gate.success.value, colour: css('--ok'), label: `success: ${gate.successCondition}` },
      gate.failure && { value: gate.failure.value, colour: css('--bad'), label: `failure: ${gate.failureCondition}` },
    ].filter(Boolean);
  }

  function build(el, gate) {
    const opts = {
      width: Math.max(280, Math.min(el.clientWidth || 560, 720)),
      height: 220,
      // Ranges are set from the data (ranges below), not by uPlot's guess for a single point.
      scales: { x: { time: true, auto: false }, y: { auto: false } },
      axes: [
        { stroke: css('--fg'), grid: { stroke: css('--grid') } },
        { stroke: css('--fg'), grid: { stroke: css('--grid') }, size: 60 },
      ],
      series: [{}, { label: 'result', stroke: css('--accent'), width: 2, points: { show: true, size: 8 } }],
      hooks: {
        draw: [
          (u) => {
            const ctx = u.ctx;
            ctx.save();
            ctx.setLineDash([8, 6]);
            ctx.lineWidth = 2;
            ctx.font = `${12 * devicePixelRatio}px system-ui, sans-serif`;
            for (const t of thresholds(gate)) {
              const y = u.valToPos(t.value, 'y', true);
              ctx.strokeStyle = t.colour;
              ctx.fillStyle = t.colour;
              ctx.beginPath();
              ctx.moveTo(u.bbox.left, y);
              ctx.lineTo(u.bbox.left + u.bbox.width, y);
              ctx.stroke();
              ctx.fillText(t.label, u.bbox.left + u.bbox.width - ctx.measureText(t.label).width - 6, y - 4);
            }
            ctx.restore();
          },
        ],
      },
    };
    return new uPlot(opts, dataOf(gate), el);
  }

  /** Twenty seconds around the measurements at least; from 0 (or below) to above the values and thresholds. */
  function ranges(gate) {
    const [xs, ys] = dataOf(gate);
    const first = Math.min(...xs);
    const last = Math.max(...xs);
    const pad = Math.max(2, (20 - (last - first)) / 2);
    const values = [...ys, ...thresholds(gate).map((t) => t.value)].filter((v) => v !== null && isFinite(v));
    const lo = Math.min(0, ...values);
    const hi = Math.max(lo + 1e-9, ...values);
    return { x: { min: first - pad, max: last + pad }, y: { min: lo, max: hi * 1.2 } };
  }

  function rescale(plot, gate) {
    const r = ranges(gate);
    plot.batch(() => {
      plot.setScale('x', r.x);
      plot.setScale('y', r.y);
    });
  }

  /** Draws (or updates) the chart of `gate` inside `el`; `key` names the gate across views. */
  function draw(el, key, gate) {
    const known = charts.get(key);
    if (known && known.el === el) {
      known.plot.setData(dataOf(gate), false);
      rescale(known.plot, gate);
      return;
    }
    if (known) known.plot.destroy();
    el.textContent = '';
    el.setAttribute('role', 'img');
    el.setAttribute(
      'aria-label',
      `measurements of gate ${gate.gate} against its conditions; the table below lists them`,
    );
    const plot = build(el, gate);
    rescale(plot, gate);
    charts.set(key, { el, plot });
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
