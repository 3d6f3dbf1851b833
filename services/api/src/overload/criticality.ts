/**
 * How much of a limit each criticality may fill (docs/overload.md): as a limit fills up, the least
 * critical work is refused first, and a register's status update or failure report is refused
 * last. One table, for the node's limit on requests in flight and the queues' admission alike.
 */
import type { Criticality } from '@pos/shared/openapi/operations';

export const SHARES: Record<Exclude<Criticality, 'exempt'>, number> = {
  critical: 1,
  normal: 0.7,
  sheddable: 0.4,
};

/** Whether one more of `criticality` fits: what is in use stays under its share of the limit. */
export function fits(criticality: Criticality, inUse: number, limit: number): boolean {
  return criticality === 'exempt' || inUse < limit * SHARES[criticality];
}
