import { randomFillSync } from 'node:crypto';

/** Marks handed out per refill of the pool. */
export const MARKS_PER_FILL = 512;

/**
 * Random marks of `bytes` bytes each, base64url, drawn from a pool filled in one call (as Node's
 * `randomUUID` does): a call into OpenSSL per mark costs a system call (its fork check) on a job's
 * path, more than the mark itself. For marks that must differ, never for secrets.
 */
export function randomMarks(bytes: number): () => string {
  const pool = Buffer.alloc(bytes * MARKS_PER_FILL);
  let next = pool.length;
  return () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    const mark = pool.toString('base64url', next, next + bytes);
    next += bytes;
    return mark;
  };
}
