// A stacked bar chart (uPlot): one bar per day, one colour per series, its own legend and hover readout.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";

/** A series: its name and one value per x label. */
export interface StackSeries {
  readonly name: string;
  readonly values: readonly number[];
  /** Its values are not known (an unpriced model's cost): the legend says so instead of a number. */
  readonly unpriced?: boolean;
}

const PALETTE = ["#3b6fd8", "#e0873a", "#3aa876", "#c0506a", "#8a63c9", "#2fa3b5", "#b59a2f", "#6b7a8f", "#d062b7", "#5c8c3a"];

/** The colour of the i-th series. */
export const colorOf = (i: number): string => PALETTE[i % PALETTE.length]!;

export function StackedBars(props: { labels: readonly string[]; series: readonly StackSeries[]; format: (n: number) => string; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const [hover, setHover] = useState<number | null>(null);
  const { labels, series, format } = props;
  useEffect(() => {
    const el = box.current;
    if (!el || labels.length === 0) return;
    const xs = labels.map((_, i) => i);
    // Cumulative sums, drawn from the top of the stack down so each lower part paints over.
    const cum: number[][] = [];
    series.forEach((s, i) => cum.push(s.values.map((v, j) => v + (i ? cum[i - 1]![j]! : 0))));
    const order = series.map((_, i) => i).reverse();
    const bars = uPlot.paths.bars!({ size: [0.7, 48], gap: 2 });
    const step = Math.max(1, Math.ceil(labels.length / 12));
    const opts: uPlot.Options = {
      width: el.clientWidth || 800,
      height: props.height ?? 260,
      legend: { show: false },
      cursor: { points: { show: false }, drag: { x: false, y: false } },
      scales: { x: { time: false, range: [-0.6, labels.length - 0.4] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1] } },
      axes: [
        { stroke: "#5b6472", grid: { show: false }, splits: () => xs.filter((i) => i % step === 0), values: (_u, splits) => splits.map((i) => labels[i]?.slice(5) ?? "") },
        { stroke: "#5b6472", grid: { stroke: "#eceff3" }, size: 64, values: (_u, splits) => splits.map((v) => format(v)) },
      ],
      series: [{}, ...order.map((i) => ({ label: series[i]!.name, fill: colorOf(i), stroke: colorOf(i), width: 0, paths: bars, points: { show: false } }))],
      hooks: { setCursor: [(u: uPlot) => setHover(u.cursor.idx ?? null)] },
    };
    const plot = new uPlot(opts, [xs, ...order.map((i) => cum[i]!)] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: props.height ?? 260 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [labels, series]);
  // The legend shows the hovered day, else the whole range.
  const value = (s: StackSeries) => (hover === null ? s.values.reduce((a, v) => a + v, 0) : (s.values[hover] ?? 0));
  return (
    <div class="chart">
      <div ref={box} class="plot" />
      <div class="legend">
        {labels.length > 0 && <span class="legend-day">{hover === null ? "all days" : labels[hover]}</span>}
        {series.map((s, i) => (
          <span class="legend-item">
            <i style={{ background: colorOf(i) }} />
            {s.name} <b>{s.unpriced ? "unpriced" : format(value(s))}</b>
          </span>
        ))}
      </div>
    </div>
  );
}
