/**
 * Changes to a location's settings that workers act on (its failure threshold), published on one
 * channel of the deployment that every worker listens to: whatever a worker cached of the
 * location is dropped when the change arrives. Published before the change is answered, so that
 * every worker has it by then (pubsub/change-cache.ts).
 */

export const locationsChannel = (prefix: string): string => `${prefix}:locations`;

/** The message: which location changed (what changed is read again from MongoDB when needed). */
export interface LocationSettingsChange {
  locationId: string;
}
