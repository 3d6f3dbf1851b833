import { withTimeout } from '@pos/shared/util/timeout';

/** How long a scrape waits for any one read: a read late or failed leaves its metrics out of that scrape. */
export const SCRAPE_READ_TIMEOUT_MS = 1_000;

/** `read` bounded to SCRAPE_READ_TIMEOUT_MS; undefined when it failed or came late. */
export function boundedRead<T>(read: Promise<T>, what: string): Promise<T | undefined> {
  return withTimeout(read, SCRAPE_READ_TIMEOUT_MS, what).catch(() => undefined);
}

/**
 * One read shared by the metrics of a scrape. prom-client starts every metric's `collect` at once
 * when a scrape begins (`Registry.metrics` maps them all before awaiting any), so the metrics of
 * one scrape share the read in flight. It is forgotten as soon as it settles: the next scrape
 * reads anew. (Forgetting it a tick later instead let a scrape that arrived in between reuse the
 * last one's answer on a loaded machine.)
 */
export function scrapeRead<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= read().finally(() => {
      pending = undefined;
    }));
}
