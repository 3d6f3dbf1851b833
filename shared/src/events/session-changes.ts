/**
 * Session changes, published on one channel of the deployment that every API node listens to:
 * whatever a node cached of a session that closed (or whose key changed) is dropped when the
 * change arrives. Published before the change is answered, so that every node has it by then.
 */

export const sessionsChannel = (prefix: string): string => `${prefix}:sessions`;

/** The message: which session changed (what changed is read again from MongoDB when needed). */
export interface SessionChange {
  sessionId: string;
}

/** An operator account changed (deleted, its token rotated, its role or scope): the same channel, the same rule. */
export interface OperatorChange {
  operatorId: string;
}

/** The operator a change message names; undefined for a session's change or an unreadable one. */
export function operatorIdOf(message: string): string | undefined {
  try {
    const { operatorId } = JSON.parse(message) as Partial<OperatorChange>;
    return typeof operatorId === 'string' ? operatorId : undefined;
  } catch {
    return undefined;
  }
}
