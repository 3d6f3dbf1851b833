/**
 * AWS's "full jitter": a wait drawn uniformly from 0 to `ceilingMs`, so that clients cut off or
 * failing together (a node's streams ending at shutdown, a fleet after an outage) do not come
 * back together, in lockstep, again and again.
 */
export function fullJitter(ceilingMs: number, random: () => number = Math.random): number {
  return Math.round(random() * ceilingMs);
}
