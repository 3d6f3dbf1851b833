/**
 * A closed-loop load generator: `concurrency` virtual clients, each starting its next operation
 * when the previous one finishes, until a count or a time bound.
 */
import http from 'node:http';
import type { Cost, CostProbe } from './cost';
import { percentile, round } from './statistics';

export interface LoadResult {
  concurrency: number;
  /** Operations that succeeded, and those that failed (the first few described). */
  ops: number;
  errors: number;
  errorSamples: string[];
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** What each operation cost the processes behind it (when the run had a probe). */
  cost?: Cost;
}

export interface LoadBounds {
  maxOps: number;
  maxMs: number;
  /** Operations run first and not recorded (JIT, connection set-up, caches). */
  warmupOps?: number;
}

/** An operation: resolves on success, throws on failure. */
export type Operation = (client: number, iteration: number) => Promise<void>;

async function loop(concurrency: number, op: Operation, maxOps: number, maxMs: number) {
  const latencies: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let started = 0;
  const start = performance.now();
  const client = async (id: number) => {
    for (let iteration = 0; started < maxOps && performance.now() < start + maxMs; iteration++) {
      started += 1;
      const t0 = performance.now();
      try {
        await op(id, iteration);
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors += 1;
        if (errorSamples.length < 3) errorSamples.push(String((err as Error).message ?? err).slice(0, 200));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, id) => client(id)));
  return { latencies: latencies.sort((a, b) => a - b), errors, errorSamples, seconds: (performance.now() - start) / 1000 };
}

/** Warms up, then measures; with a probe, also what the measured operations cost. `onMeasure` is called as the measured part starts. */
export async function runLoad(concurrency: number, op: Operation, bounds: LoadBounds, probe?: CostProbe, onMeasure?: () => void): Promise<LoadResult> {
  if (bounds.warmupOps) await loop(concurrency, op, bounds.warmupOps, bounds.maxMs);
  await probe?.start();
  onMeasure?.();
  const { latencies, errors, errorSamples, seconds } = await loop(concurrency, op, bounds.maxOps, bounds.maxMs);
  const cost = await probe?.stop(latencies.length + errors);
  return {
    concurrency,
    ops: latencies.length,
    errors,
    errorSamples,
    seconds: round(seconds, 3),
    rps: round(latencies.length / seconds, 1),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxMs: round(latencies.at(-1) ?? 0),
    ...(cost ? { cost } : {}),
  };
}

export interface HttpRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** A cheap check that a 200 is the answer asked for (a list: `[`), not an error body. */
  startsWith?: string;
}

/** A closed-loop run of one HTTP request per operation over keep-alive sockets, one per client. */
export async function runHttp(origin: string, concurrency: number, request: (client: number, iteration: number) => HttpRequest, bounds: LoadBounds, probe?: CostProbe, onMeasure?: () => void): Promise<LoadResult> {
  const target = keepAliveTarget(origin, concurrency);
  const op: Operation = async (client, iteration) => {
    const { method, path, startsWith, ...options } = request(client, iteration);
    const text = await httpCall(target, method, path, options);
    if (startsWith !== undefined && !text.startsWith(startsWith)) throw new Error(`${method} ${path}: not what was asked for`);
  };
  return runLoad(concurrency, op, bounds, probe, onMeasure).finally(() => target.agent.destroy());
}

export interface HttpTarget {
  agent: http.Agent;
  host: string;
  port: number;
}

export function keepAliveTarget(origin: string, concurrency: number): HttpTarget {
  const url = new URL(origin);
  return { agent: new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: Math.min(concurrency, 2048) }), host: url.hostname, port: Number(url.port) };
}

/** One request over the target's agent, its whole body read: its status and text (0 and the error: no answer within timeoutMs). */
export function httpRequest(target: HttpTarget, method: string, path: string, options: { headers?: Record<string, string>; body?: string; timeoutMs?: number } = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(options.body) });
    const failed = (err: Error) => resolve({ status: 0, text: err.message });
    const req = http.request({ agent: target.agent, host: target.host, port: target.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', failed);
    });
    req.setTimeout(options.timeoutMs ?? 30_000, () => req.destroy(new Error(`no answer in ${(options.timeoutMs ?? 30_000) / 1000} s`)));
    req.on('error', failed);
    req.end(options.body);
  });
}

export async function httpCall(target: HttpTarget, method: string, path: string, options: { headers?: Record<string, string>; body?: string } = {}): Promise<string> {
  const { status, text } = await httpRequest(target, method, path, options);
  if (status !== 200) throw new Error(`${method} ${path}: ${status} ${text.slice(0, 120)}`);
  return text;
}
