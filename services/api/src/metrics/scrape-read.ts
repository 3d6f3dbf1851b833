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
