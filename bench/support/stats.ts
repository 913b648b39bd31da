// Summary statistics and a plain-text table for the benchmarks; no imports, so workerd and Node can both use it.

export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
}

/** The nearest-rank percentile (p in 0..100) of `values`. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function summarize(values: readonly number[]): Summary {
  const total = values.reduce((sum, v) => sum + v, 0);
  return {
    count: values.length,
    mean: values.length > 0 ? total / values.length : Number.NaN,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    min: values.length > 0 ? Math.min(...values) : Number.NaN,
    max: values.length > 0 ? Math.max(...values) : Number.NaN,
  };
}

/** A number with `digits` decimals, or "-" when it is not finite. */
export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "-";
}

/** "3.41x" */
export function ratio(value: number, baseline: number): string {
  return baseline > 0 && Number.isFinite(value) ? `${(value / baseline).toFixed(2)}x` : "-";
}

/** A Markdown-compatible table: the first column left-aligned, the others right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ")} |`;
  const rule = `| ${widths.map((w, i) => (i === 0 ? "-".repeat(w) : `${"-".repeat(Math.max(w - 1, 1))}:`)).join(" | ")} |`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}
