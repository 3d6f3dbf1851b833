import DataLoader from 'dataloader';

/**
 * Calls gathered into one round trip (group commit): the calls made while the previous batch is
 * in flight wait for it and go together as the next, up to `maxBatch`. Idle, a call waits one
 * turn of the event loop (the calls of that turn join it). Under load the batches grow with the
 * load, so that concurrent jobs share a command instead of paying one each; each socket write
 * costs tens to hundreds of microseconds of CPU.
 *
 * `send` answers each key in order, with an Error for a key that failed; a rejection fails them
 * all. Nothing is cached: every call is sent.
 */
export function groupCommit<K, V>(
  send: (keys: readonly K[]) => Promise<(V | Error)[]>,
  maxBatch: number,
): GroupCommit<K, V> {
  let inFlight: Promise<unknown> = Promise.resolve();
  return new DataLoader<K, V>(
    (keys) => {
      const sent = send(keys);
      inFlight = sent.catch(() => undefined);
      return sent;
    },
    {
      cache: false,
      maxBatchSize: maxBatch,
      batchScheduleFn: (dispatch) => void setImmediate(() => void inFlight.then(dispatch)),
    },
  );
}

/** A group commit's handle: `load(key)` for one call. */
export type GroupCommit<K, V> = DataLoader<K, V>;

/** How many calls one batch carries at most: a worker's concurrency and then some. */
export const GROUP_COMMIT_MAX = 64;
