/**
 * The events of the orders this worker changes, recorded by it at once instead of by the relay.
 * A transition's write takes over the events its order holds (store/outboxes.ts, withOwnOutbox);
 * this records them right after, before the job answers, and remembers which it recorded, so that
 * the order's next write removes them: one write per change, where the relay would add a second.
 * The events of jobs finishing together go in one record (a group commit). When recording fails,
 * the events stay where they are, and the relay records them once they are due.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from '@pos/shared/log';
import type { OrderDoc } from '@pos/shared/store/documents';
import { GROUP_COMMIT_MAX, groupCommit } from '@pos/shared/store/group-commit';
import { inRankOrder } from '@pos/shared/store/outboxes';
import { recordEvents, type RecordingDeps } from './recording';

/** Event ids remembered as recorded: those of the orders changed in the last minutes, and then some. */
const REMEMBERED = 20_000;

export class OwnEvents {
  private readonly recorded = new LRUCache<string, true>({ max: REMEMBERED });
  private readonly batches;

  constructor(deps: RecordingDeps) {
    this.batches = groupCommit<OrderDoc['outbox'] & object, true>(async (outboxes) => {
      await recordEvents(deps, outboxes.flatMap((outbox) => inRankOrder(outbox).filter((entry) => !this.recorded.has(entry.id))));
      return outboxes.map(() => true);
    }, GROUP_COMMIT_MAX);
  }

  /** Those of the order's events this worker knows are in the event log: its next write removes them. */
  recordedOf(order: OrderDoc): string[] {
    return Object.keys(order.outbox ?? {}).filter((id) => this.recorded.has(id));
  }

  /** Records the events the order holds (those not known recorded), in the order of its writes; false, logged, when that failed. */
  async record(order: OrderDoc, log: Logger): Promise<boolean> {
    const outbox = order.outbox ?? {};
    if (Object.keys(outbox).every((id) => this.recorded.has(id))) return true;
    try {
      await this.batches.load(outbox);
    } catch (err) {
      log.warn({ err, orderNumber: order.number }, "recording the order's events failed; the relay records them once they are due");
      return false;
    }
    for (const id of Object.keys(outbox)) this.recorded.set(id, true);
    return true;
  }
}
