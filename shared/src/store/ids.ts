import { v7 } from 'uuid';

/**
 * Ids of new locations and sessions: UUIDv7, which begin with their creation time, so that
 * ordering by `_id` (the cursor of the admin lists) is ordering by creation.
 */
export function newId(): string {
  return v7();
}
