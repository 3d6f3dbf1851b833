/**
 * A closed-loop load generator: `concurrency` virtual clients, each starting its next operation
 * when the previous one finishes, until a count or a time bound. Records every latency.
 */
import http from 'node:http';
import type { Cost, CostProbe } from './cost';
import { percentile, round } from './statistics';

export interface LoadResult {
  concurrency: number;
  /** Operations that succeeded. */
  ops: number;
  errors: number;
  seconds: number;
  /** Successful operations per second. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** First few error descriptions, for the report. */
  errorSamples: string[];
  /** What each operation cost the processes behind it (when the run had a probe). */
  cost?: Cost;
}

export interface LoadBounds {
  maxOps: number;
  maxMs: number;
  /** Operations run first and not recorded (JIT, connection set-up, caches). */
  warmupOps?: number;
}

/** An operation: resolves on success, throws (or rejects) on failure. */
export type Operation = (client: number, iteration: number) => Promise<void>;

export function summarise(concurrency: number, latencies: number[], errors: number, seconds: number, errorSamples: string[] = []): LoadResult {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    concurrency,
    ops: sorted.length,
    errors,
    seconds: round(seconds, 3),
    rps: round(sorted.length / seconds, 1),
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted[sorted.length - 1] ?? 0),
    errorSamples,
  };
}

async function loop(concurrency: number, op: Operation, maxOps: number, maxMs: number, record: boolean) {
  const latencies: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let started = 0;
  const start = performance.now();
  const deadline = start + maxMs;
  const client = async (id: number) => {
    let iteration = 0;
    while (started < maxOps && performance.now() < deadline) {
      started += 1;
      const t0 = performance.now();
      try {
        await op(id, iteration);
        if (record) latencies.push(performance.now() - t0);
      } catch (err) {
        errors += 1;
        if (errorSamples.length < 3) errorSamples.push(String((err as Error).message ?? err).slice(0, 200));
      }
      iteration += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, id) => client(id)));
  return { latencies, errors, errorSamples, seconds: (performance.now() - start) / 1000 };
}

/**
 * Warms up, then measures; with a probe, also what the measured operations cost. `onMeasure` is
 * called as the measured part starts.
 */
export async function runLoad(concurrency: number, op: Operation, bounds: LoadBounds, probe?: CostProbe, onMeasure?: () => void): Promise<LoadResult> {
  if (bounds.warmupOps) await loop(concurrency, op, bounds.warmupOps, bounds.maxMs, false);
  await probe?.start();
  onMeasure?.();
  const { latencies, errors, errorSamples, seconds } = await loop(concurrency, op, bounds.maxOps, bounds.maxMs, true);
  const cost = await probe?.stop(latencies.length + errors);
  return { ...summarise(concurrency, latencies, errors, seconds, errorSamples), ...(cost ? { cost } : {}) };
}

export interface HttpTarget {
  agent: http.Agent;
  host: string;
  port: number;
}

/** A keep-alive agent with one socket per virtual client. */
export function keepAliveTarget(origin: string, concurrency: number): HttpTarget {
  const url = new URL(origin);
  return {
    agent: new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency }),
    host: url.hostname,
    port: Number(url.port),
  };
}

/** One request over the target's agent; throws unless the status is `expect`. Reads the whole body. */
export function httpCall(
  target: HttpTarget,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; expect?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(options.headers ?? {}) };
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(options.body);
    }
    const req = http.request({ agent: target.agent, host: target.host, port: target.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode !== (options.expect ?? 200)) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 120)}`));
        else resolve(text);
      });
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
