import type { LocationDoc } from '../store/documents';

/** Paused now: a pause is in place and its `until`, if any, has not come (it ends by itself). */
export function isPaused(doc: Pick<LocationDoc, 'pausedAt' | 'pausedUntil'>, now: Date): boolean {
  return doc.pausedAt !== undefined && (doc.pausedUntil === undefined || doc.pausedUntil > now);
}
