/** A node's /metrics as numbers, for tests that count what the node did. */
import { call } from './http';

/** The value of one sample on `origin`'s /metrics (0 when absent, as a counter not yet counted). */
export async function metricValue(origin: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = (await call('GET', `${origin}/metrics`)).text;
  const wanted = Object.entries(labels);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = new Map([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, key, value]) => [key!, value!]));
    if (wanted.every(([key, value]) => found.get(key) === value)) return Number(match[3]);
  }
  return 0;
}
