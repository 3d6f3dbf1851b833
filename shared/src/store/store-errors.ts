import { Problem, problemOf } from '../domain/problem';

// Down or hung: the driver's timeouts (MONGO_TIMEOUT) end in a network timeout, a connection not
// checked out in time, or a pool cleared under the operation.
const UNREACHABLE_NAMES =
  /^(MongoServerSelectionError|MongoNetworkError|MongoNetworkTimeoutError|MongoNotConnectedError|MongoTopologyClosedError|MongoWaitQueueTimeoutError|MongoPoolClearedError|PoolClearedOnNetworkError)$/;
// `Command timed out` is ioredis' commandTimeout (REDIS_COMMAND_TIMEOUT), `did not answer in` a
// `withTimeout`. The last ones are a Redis Cluster's: a master lost and not yet replaced, a slot
// map being re-read.
const UNREACHABLE_MESSAGES =
  /Connection is closed|ECONNREFUSED|max retries per request|Stream isn't writeable|Command timed out|did not answer in \d+ ms|Too many Cluster redirections|CLUSTERDOWN|TRYAGAIN|Failed to refresh slots cache|None of startup nodes is available|Cluster is (disconnected|disconnecting|ended)/i;
/** MongoDB's error code for a unique index violation. */
export const DUPLICATE_KEY = 11000;

/**
 * The problem an error of MongoDB or Redis stands for, or undefined when it is none of theirs:
 * unreachable or not answering in time (503, temporary), a constraint
 * violation (400), another refused operation (400),
 * as docs/register-interface.md, part 7.2 lists them. The detail never
 * carries the driver's message (it may quote data).
 */
export function storeProblem(err: unknown, errorId: string): Problem | undefined {
  const {
    name = '',
    message = '',
    code,
    codeName,
  } = (err ?? {}) as { name?: string; message?: string; code?: unknown; codeName?: string };
  if (UNREACHABLE_NAMES.test(name) || UNREACHABLE_MESSAGES.test(message)) {
    return problemOf('unavailable', `${errorId}: A backing service did not answer`);
  }
  if (name !== 'MongoServerError' && name !== 'MongoBulkWriteError') return undefined;
  if (code === DUPLICATE_KEY) {
    return problemOf('constraint', `${errorId}: A record with the same key already exists`);
  }
  return problemOf('database', `${errorId}: MongoDB refused the operation (${codeName ?? String(code)})`);
}

/** A write refused because a document with the same unique key (usually `_id`) exists. */
export function isDuplicateKey(err: unknown): boolean {
  const { code, writeErrors } = (err ?? {}) as { code?: unknown; writeErrors?: unknown };
  if (code === DUPLICATE_KEY) return true;
  const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
  return list.some((e) => (e as { code?: unknown }).code === DUPLICATE_KEY);
}
