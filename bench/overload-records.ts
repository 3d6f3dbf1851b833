/** What the overload scenario's load generator (overload-client.ts) is told, and what it writes back. */

export interface OverloadPlan {
  origin: string;
  basePath: string;
  /** The orders failure reports go to, in turn (each with its register's key). */
  targets: { apiKey: string; number: number }[];
  /** Polls of another location at a steady rate, all along (its latency under the others' overload). */
  poll?: { apiKey: string; perSecond: number };
  phases: { name: string; perSecond: number; seconds: number }[];
  /** Epoch ms at which the first phase starts. */
  startAt: number;
  out: string;
}

/** What became of one request. */
export const OUTCOME = { ok: 0, shed: 1, notApplied: 2, unknown: 3, other: 4, failed: 5 } as const;

/** One record per request: phase index, ms from the phase's start to sending, ms to the answer, outcome. */
export type RequestRecord = [phase: number, sentMs: number, latencyMs: number, outcome: number];

export interface OverloadRecords {
  requests: RequestRecord[];
  /** Polls: ms from the first phase's start, ms to the answer, status (0: no answer). */
  polls: [sentMs: number, latencyMs: number, status: number][];
}
