/**
 * The overload scenario's load generator, a process of its own (bench/overload.ts starts it with
 * OVERLOAD_PLAN): open-loop Poisson arrivals, each request sent at its time whether or not the
 * earlier ones were answered, as independent clients send them, with no retries. Writes one
 * record per request to the plan's `out` file and exits.
 */
import fs from 'node:fs';
import { httpRequest, keepAliveTarget } from './load';

export interface OverloadPlan {
  origin: string;
  /** The orders failure reports go to, in turn (each with its register's key). */
  targets: { apiKey: string; number: number }[];
  /** Polls of another location at a steady rate, all along (its latency under the others' overload). */
  poll?: { apiKey: string; perSecond: number };
  phases: { name: string; perSecond: number; seconds: number }[];
  /** Epoch ms at which the first phase starts. */
  startAt: number;
  out: string;
}

export const OUTCOME = { ok: 0, shed: 1, notApplied: 2, unknown: 3, other: 4, failed: 5 } as const;

/** One record per request: phase index, ms from the phase's start to sending, ms to the answer, outcome. */
export type RequestRecord = [phase: number, sentMs: number, latencyMs: number, outcome: number];

export interface OverloadRecords {
  requests: RequestRecord[];
  /** Polls: ms from the first phase's start, ms to the answer, status (0: no answer). */
  polls: [sentMs: number, latencyMs: number, status: number][];
}

function outcomeOf(status: number, body: string): number {
  if (status === 0) return OUTCOME.failed;
  if (status === 200) return OUTCOME.ok;
  if (status !== 503) return OUTCOME.other;
  if (body.includes('The service is overloaded')) return OUTCOME.shed;
  return body.includes('was not applied') ? OUTCOME.notApplied : OUTCOME.unknown;
}

/** Exponential gaps of mean 1/rate (seconds, as ms): Poisson arrivals. */
const gapMs = (perSecond: number) => (-Math.log(1 - Math.random()) / perSecond) * 1000;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const plan = JSON.parse(process.env.OVERLOAD_PLAN ?? '') as OverloadPlan;
  const target = keepAliveTarget(plan.origin, Infinity);
  const records: OverloadRecords = { requests: [], polls: [] };
  const pending = new Set<Promise<void>>();
  const send = (
    path: string,
    apiKey: string,
    body: string | undefined,
    record: (status: number, text: string, sent: number) => void,
  ) => {
    const sent = now();
    const work = httpRequest(target, body ? 'POST' : 'GET', `/api/v1${path}`, {
      headers: { api_key: apiKey },
      body,
      timeoutMs: 60_000,
    }).then(({ status, text }) => record(status, text, sent));
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };
  const body = JSON.stringify({ reason: 'bench' });
  let next = 0;
  const report = (phase: number, phaseStart: number) => {
    const { number, apiKey } = plan.targets[next++ % plan.targets.length]!;
    send(`/orders/${number}/failure`, apiKey, body, (status, text, sent) =>
      records.requests.push([
        phase,
        Math.round(sent - phaseStart),
        Math.round((now() - sent) * 10) / 10,
        outcomeOf(status, text),
      ]),
    );
  };
  const poll = () =>
    send('/orders/location', plan.poll!.apiKey, undefined, (status, _, sent) =>
      records.polls.push([Math.round(sent - plan.startAt), Math.round((now() - sent) * 10) / 10, status]),
    );

  const end = plan.startAt + plan.phases.reduce((total, phase) => total + phase.seconds * 1000, 0);
  let nextPoll = plan.startAt;
  let phaseStart = plan.startAt;
  await sleep(Math.max(0, plan.startAt - Date.now()));
  for (const [index, phase] of plan.phases.entries()) {
    const phaseEnd = phaseStart + phase.seconds * 1000;
    let due = phaseStart + gapMs(phase.perSecond);
    while (due < phaseEnd) {
      // every request due by now goes out now (a slow tick never thins the load)
      for (; due <= now() && due < phaseEnd; due += gapMs(phase.perSecond)) report(index, phaseStart);
      for (; plan.poll && nextPoll <= now() && nextPoll < end; nextPoll += 1000 / plan.poll.perSecond) poll();
      await sleep(1);
    }
    phaseStart = phaseEnd;
  }
  await Promise.all([...pending]);
  target.agent.destroy();
  fs.writeFileSync(plan.out, JSON.stringify(records));
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`overload client failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
