/** Nearest-rank percentile of sorted values, and the rounding of the reports. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;
