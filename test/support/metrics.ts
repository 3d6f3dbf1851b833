/** A node's /metrics as numbers, for tests that count what the node did. */
import { call } from './http';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition, sample lines only; a line that is neither a sample nor a comment fails. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The first sample of `name` whose labels include `labels`; undefined when there is none. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/** The ADMIN_TOKEN of each API origin the stacks started: an API node's /metrics needs an admin credential. */
const adminTokens = new Map<string, string>();

/** Records the admin token of an API origin (stack.ts does, for every node it starts). */
export function adminTokenAt(origin: string, token: string | undefined): void {
  if (token !== undefined) adminTokens.set(origin, token);
}

/**
 * The headers that open `origin`'s /metrics: its admin token when it is an
 * API node (a worker's METRICS_PORT needs none).
 */
export function metricsHeaders(origin: string): Record<string, string> {
  const token = adminTokens.get(origin);
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/** `origin`'s /metrics, as text; a failure to answer 200 fails. */
export async function metricsText(origin: string): Promise<string> {
  const res = await call('GET', `${origin}/metrics`, { headers: metricsHeaders(origin) });
  if (res.status !== 200) throw new Error(`${origin}/metrics answered ${res.status}`);
  return res.text;
}

/** The samples of `origin`'s /metrics. */
export async function scrapeMetrics(origin: string): Promise<Sample[]> {
  return parseMetrics(await metricsText(origin));
}

/** The value of one sample on `origin`'s /metrics (0 when absent, as a counter not yet counted). */
export async function metricValue(origin: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  return valueOf(await scrapeMetrics(origin), name, labels) ?? 0;
}

/**
 * The MongoDB commands `origin` sent for `action` (pos_mongo_commands_total), less those of a
 * scrape itself (pos_order_documents and other gauges read MongoDB at scrape time).
 */
export async function mongoCommandsFor(origin: string, action: () => Promise<unknown>): Promise<number> {
  const commands = async () => {
    const value = valueOf(await scrapeMetrics(origin), 'pos_mongo_commands_total');
    if (value === undefined) throw new Error(`${origin}/metrics has no pos_mongo_commands_total`);
    return value;
  };
  // A scrape's own reads (the readiness ping, the presence gauges) are counted by a later scrape,
  // sometimes one late on a loaded machine: take a scrape's cost once two in a row agree, and read
  // the action's count once the scrapes after it cost that again.
  const before = [await commands(), await commands(), await commands()];
  while (before.at(-1)! - before.at(-2)! !== before.at(-2)! - before.at(-3)!) {
    if (before.length > 12) throw new Error(`${origin}: a scrape's MongoDB cost never settled (${before.join(', ')})`);
    before.push(await commands());
  }
  const cost = before.at(-1)! - before.at(-2)!;
  await action();
  const after = [await commands(), await commands()];
  while (after.at(-1)! - after.at(-2)! !== cost) {
    if (after.length > 10)
      throw new Error(`${origin}: a scrape's MongoDB cost never settled after the action (${after.join(', ')})`);
    after.push(await commands());
  }
  // Each scrape since the last one before the action added its own cost.
  return after.at(-1)! - before.at(-1)! - after.length * cost;
}
