/**
 * The overload scenario's load generator, a process of its own (bench/overload.ts starts it):
 * open-loop arrivals, each request sent at its scheduled time (Poisson arrivals at the phase's
 * rate) whether or not the earlier ones were answered, as independent clients send them. No
 * retries: what the service does with the load is what is measured. Writes one compact record per
 * request to the plan's `out` file and exits.
 *
 * Plan (OVERLOAD_PLAN, JSON): see OverloadPlan.
 */
import fs from 'node:fs';
import http from 'node:http';
import { OUTCOME, type OverloadPlan, type OverloadRecords } from './overload-records';

function outcomeOf(status: number, body: string): number {
  if (status === 200) return OUTCOME.ok;
  if (status !== 503) return OUTCOME.other;
  if (body.includes('The service is overloaded')) return OUTCOME.shed;
  if (body.includes('was not applied')) return OUTCOME.notApplied;
  return OUTCOME.unknown;
}

function send(agent: http.Agent, url: URL, method: string, path: string, apiKey: string, body: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { api_key: apiKey };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request({ agent, host: url.hostname, port: Number(url.port), method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', () => resolve({ status: 0, text: '' }));
    });
    req.setTimeout(60_000, () => req.destroy());
    req.on('error', () => resolve({ status: 0, text: '' }));
    req.end(body);
  });
}

/** Exponential gaps of mean 1/rate (seconds, as ms): Poisson arrivals. */
const gapMs = (perSecond: number) => (-Math.log(1 - Math.random()) / perSecond) * 1000;

async function main(): Promise<void> {
  const plan = JSON.parse(process.env.OVERLOAD_PLAN ?? '') as OverloadPlan;
  const url = new URL(plan.origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 2048 });
  const records: OverloadRecords = { requests: [], polls: [] };
  const pending = new Set<Promise<void>>();
  const track = (work: Promise<void>) => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };
  const body = JSON.stringify({ reason: 'bench' });
  let next = 0;
  const report = (phase: number, phaseStart: number) => {
    const target = plan.targets[next++ % plan.targets.length]!;
    const sent = performance.timeOrigin + performance.now();
    track(
      send(agent, url, 'POST', `${plan.basePath}/orders/${target.number}/failure`, target.apiKey, body).then(({ status, text }) => {
        const now = performance.timeOrigin + performance.now();
        records.requests.push([phase, Math.round(sent - phaseStart), Math.round((now - sent) * 10) / 10, status === 0 ? OUTCOME.failed : outcomeOf(status, text)]);
      }),
    );
  };
  const poll = () => {
    const sent = performance.timeOrigin + performance.now();
    track(
      send(agent, url, 'GET', `${plan.basePath}/orders/location`, plan.poll!.apiKey, undefined).then(({ status }) => {
        const now = performance.timeOrigin + performance.now();
        records.polls.push([Math.round(sent - plan.startAt), Math.round((now - sent) * 10) / 10, status]);
      }),
    );
  };

  const end = plan.startAt + plan.phases.reduce((total, phase) => total + phase.seconds * 1000, 0);
  let nextPoll = plan.startAt;
  let phaseStart = plan.startAt;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, plan.startAt - Date.now())));
  for (const [index, phase] of plan.phases.entries()) {
    const phaseEnd = phaseStart + phase.seconds * 1000;
    let due = phaseStart + gapMs(phase.perSecond);
    while (due < phaseEnd) {
      const now = performance.timeOrigin + performance.now();
      // every request due by now goes out now (a slow tick never thins the load)
      while (due <= now && due < phaseEnd) {
        report(index, phaseStart);
        due += gapMs(phase.perSecond);
      }
      while (plan.poll && nextPoll <= now && nextPoll < end) {
        poll();
        nextPoll += 1000 / plan.poll.perSecond;
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    phaseStart = phaseEnd;
  }
  await Promise.all([...pending]);
  agent.destroy();
  fs.writeFileSync(plan.out, JSON.stringify(records));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`overload client failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
