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

/** `from`: each client's first iteration (a run measured in slices goes on where its last slice stopped). */
async function loop(concurrency: number, op: Operation, maxOps: number, maxMs: number, from = 0) {
  const latencies: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let started = 0;
  const start = performance.now();
  const client = async (id: number) => {
    for (let iteration = from; started < maxOps && performance.now() < start + maxMs; iteration++) {
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
  return {
    latencies: latencies.sort((a, b) => a - b),
    errors,
    errorSamples,
    seconds: (performance.now() - start) / 1000,
    started,
  };
}

/**
 * Warms up, then measures; with a probe, also what the measured operations
 * cost. `onMeasure` is called as the measured part starts.
 */
export async function runLoad(
  concurrency: number,
  op: Operation,
  bounds: LoadBounds,
  probe?: CostProbe,
  onMeasure?: () => void,
): Promise<LoadResult> {
  if (bounds.warmupOps) await loop(concurrency, op, bounds.warmupOps, bounds.maxMs);
  await probe?.start();
  onMeasure?.();
  const { latencies, errors, errorSamples, seconds } = await loop(concurrency, op, bounds.maxOps, bounds.maxMs);
  const cost = await probe?.stop(latencies.length + errors);
  return loadResult(concurrency, latencies, errors, errorSamples, seconds, cost);
}

function loadResult(
  concurrency: number,
  sorted: number[],
  errors: number,
  errorSamples: string[],
  seconds: number,
  cost: Cost | undefined,
): LoadResult {
  return {
    concurrency,
    ops: sorted.length,
    errors,
    errorSamples,
    seconds: round(seconds, 3),
    rps: round(sorted.length / seconds, 1),
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1) ?? 0),
    ...(cost ? { cost } : {}),
  };
}

/** One side of an alternating run: its operation and the probe of its processes. */
export interface Side {
  op: Operation;
  probe?: CostProbe;
  /**
   * Run after its warm-up and after each of its slices, outside its measure
   * (e.g. a register clearing what a slice made).
   */
  between?: () => Promise<void>;
}

/** How long each slice of an alternating run lasts. */
export const SLICE_MS = 500;

/**
 * Two closed loops measured in alternating slices of SLICE_MS (A B, B A, A B, ...), each side
 * `bounds.maxMs` in all, after each side's warm-up: both sides then run through the same phases
 * of the machine, which a run of one after the other does not (docs/benchmark-method.md). Each
 * side's probe counts its slices alone.
 */
export async function runAlternating(
  concurrency: number,
  sides: [Side, Side],
  bounds: LoadBounds,
): Promise<[LoadResult, LoadResult]> {
  for (const { op, between } of sides) {
    if (bounds.warmupOps) await loop(concurrency, op, bounds.warmupOps, bounds.maxMs);
    await between?.();
  }
  const runs = sides.map(() => ({
    latencies: [] as number[],
    errors: 0,
    errorSamples: [] as string[],
    seconds: 0,
    iterations: 0,
  }));
  for (const { probe } of sides) {
    await probe?.start();
    await probe?.pause();
  }
  const slices = Math.max(1, Math.round(bounds.maxMs / SLICE_MS));
  for (let slice = 0; slice < slices; slice++) {
    for (const i of slice % 2 === 0 ? [0, 1] : [1, 0]) {
      const [{ op, probe, between }, run] = [sides[i]!, runs[i]!];
      const left = bounds.maxOps - run.latencies.length - run.errors;
      if (left <= 0) continue;
      await probe?.resume();
      const measured = await loop(concurrency, op, left, SLICE_MS, run.iterations);
      await probe?.pause();
      await between?.();
      run.latencies.push(...measured.latencies);
      run.errors += measured.errors;
      run.errorSamples.push(...measured.errorSamples.slice(0, 3 - run.errorSamples.length));
      run.seconds += measured.seconds;
      run.iterations += Math.ceil(measured.started / concurrency);
    }
  }
  const results = [];
  for (const [i, run] of runs.entries()) {
    const cost = await sides[i]!.probe?.stop(run.latencies.length + run.errors);
    results.push(
      loadResult(
        concurrency,
        run.latencies.sort((x, y) => x - y),
        run.errors,
        run.errorSamples,
        run.seconds,
        cost,
      ),
    );
  }
  return [results[0]!, results[1]!];
}

export interface HttpRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** A cheap check that a 200 is the answer asked for (a list: `[`), not an error body. */
  startsWith?: string;
  /** The status that answers it (200 unless said). */
  status?: number;
}

/** A closed-loop run of one HTTP request per operation over keep-alive sockets, one per client. */
export async function runHttp(
  origin: string,
  concurrency: number,
  request: (client: number, iteration: number) => HttpRequest,
  bounds: LoadBounds,
  probe?: CostProbe,
  onMeasure?: () => void,
): Promise<LoadResult> {
  const target = keepAliveTarget(origin, concurrency);
  return runLoad(concurrency, httpOperation(target, request), bounds, probe, onMeasure).finally(() =>
    target.agent.destroy(),
  );
}

/** A side of `alternateHttp`: its origin, its requests and its probe. */
export interface HttpSide {
  origin: string;
  request: (client: number, iteration: number) => HttpRequest;
  probe?: CostProbe;
}

/** `runAlternating` over HTTP: each side's requests over keep-alive sockets of its own, one per client. */
export async function alternateHttp(
  concurrency: number,
  sides: [HttpSide, HttpSide],
  bounds: LoadBounds,
): Promise<[LoadResult, LoadResult]> {
  const targets = sides.map(({ origin }) => keepAliveTarget(origin, concurrency));
  const [a, b] = sides.map(({ request, probe }, i): Side => ({ op: httpOperation(targets[i]!, request), probe }));
  return runAlternating(concurrency, [a!, b!], bounds).finally(() =>
    targets.forEach((target) => target.agent.destroy()),
  );
}

/** An operation that sends a request and checks its answer. */
function httpOperation(target: HttpTarget, request: (client: number, iteration: number) => HttpRequest): Operation {
  return async (client, iteration) => {
    const { method, path, startsWith, status, ...options } = request(client, iteration);
    const text = await httpCall(target, method, path, options, status);
    if (startsWith !== undefined && !text.startsWith(startsWith))
      throw new Error(`${method} ${path}: not what was asked for`);
  };
}

export interface HttpTarget {
  agent: http.Agent;
  host: string;
  port: number;
}

export function keepAliveTarget(origin: string, concurrency: number): HttpTarget {
  const url = new URL(origin);
  return {
    agent: new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: Math.min(concurrency, 2048) }),
    host: url.hostname,
    port: Number(url.port),
  };
}

/**
 * One request over the target's agent, its whole body read: its status and
 * text (0 and the error: no answer within timeoutMs).
 */
export function httpRequest(
  target: HttpTarget,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined)
      Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(options.body) });
    const failed = (err: Error) => resolve({ status: 0, text: err.message });
    const req = http.request(
      { agent: target.agent, host: target.host, port: target.port, method, path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', failed);
      },
    );
    req.setTimeout(options.timeoutMs ?? 30_000, () =>
      req.destroy(new Error(`no answer in ${(options.timeoutMs ?? 30_000) / 1000} s`)),
    );
    req.on('error', failed);
    req.end(options.body);
  });
}

export async function httpCall(
  target: HttpTarget,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string } = {},
  expected = 200,
): Promise<string> {
  const { status, text } = await httpRequest(target, method, path, options);
  if (status !== expected) throw new Error(`${method} ${path}: ${status} ${text.slice(0, 120)}`);
  return text;
}
