/**
 * A queued write refused under overload, as it goes on the wire: the one rendering of the app's
 * admission (overload/admitted.ts) and of the refusal in front of the app (early-refusal.ts), so
 * that the two answer byte for byte alike but for the request id, which each path adds last.
 */
import { problemBody, problems } from '@pos/shared/domain/problem';
import { PROBLEM_TYPE } from '../middleware/problems';
import { SECURITY_HEADERS } from '../middleware/security-headers';
import { retryAfterOf } from './shed';

export interface Refusal {
  status: 503;
  /** In the order they are written (the request id after them). */
  headers: Record<string, string>;
  body: string;
}

export function queueRefusal(path: string, retryAfterSeconds: number): Refusal {
  const seconds = retryAfterOf(retryAfterSeconds);
  const body = JSON.stringify(problemBody(problems.overloaded('queued', seconds), path));
  return {
    status: 503,
    headers: {
      'Content-Type': PROBLEM_TYPE,
      'Content-Length': String(Buffer.byteLength(body)),
      'Retry-After': String(seconds),
      ...SECURITY_HEADERS,
    },
    body,
  };
}
