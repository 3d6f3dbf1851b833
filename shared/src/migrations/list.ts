/**
 * Every migration, in the order they run (docs/upgrades.md#migrations). A new one goes last; none
 * is ever removed or changed once released (a deployment records each by its id).
 */
import { auditFullHashes } from './audit-full-hashes';
import { deliveryLogLocations } from './delivery-log-locations';
import type { Migration } from './runner';

export const MIGRATIONS: readonly Migration[] = [deliveryLogLocations, auditFullHashes];
