/** The statistics every part of the benchmark uses for its figures. */

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** `value` to `digits` decimal places (figures in reports). */
export const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;
