/**
 * A job context for unit tests of the worker's handlers (@pos/worker/transitions/context): in-memory
 * stand-ins for the few repository calls the handlers make, a recording event publisher and
 * recorded crash points. Only for the handlers' logic; the repositories themselves are tested
 * against MongoDB by the integration tests.
 */
import { NO_FOLLOW_UPS, type JobContext } from '@pos/worker/transitions/context';
import { OrderCache } from '@pos/worker/transitions/order-cache';
import type { CrashPoint } from '@pos/worker/fault-injection';
import type { OrderChange } from '@pos/shared/domain/order-state';
import { Announcer, Announcement } from '@pos/shared/events/announcements';
import { createLogger } from '@pos/shared/log';
import type { ArchivedOrderDoc, OrderDoc, SessionDoc } from '@pos/shared/store/documents';
import { recordId } from '@pos/shared/store/mongo';
import { hasApplied, type OrderScope, type OrdersRepo } from '@pos/shared/store/orders';
import { type EventsOf, NO_EVENTS, outboxAfter } from '@pos/shared/store/outboxes';
import { OrderWriter } from '@pos/worker/outbox/order-writer';

export const LOCATION = 'loc-1';

/** A stored order: PLACED at LOCATION unless `fields` say otherwise. */
export function orderDoc(number: number, fields: Partial<OrderDoc> = {}): OrderDoc {
  const at = new Date('2026-11-21T07:00:00.000Z');
  const locationId = fields.locationId ?? LOCATION;
  return {
    _id: recordId(locationId, number),
    locationId,
    number,
    state: 'PLACED',
    version: 0,
    failureCount: 0,
    appliedJobs: [],
    rows: [{ rowNumber: 1, productId: 'p-1', name: 'Soup', quantity: 1, unitPrice: 450 }],
    guestCount: 1,
    orderTime: at,
    createdAt: at,
    updatedAt: at,
    ...fields,
  };
}

/**
 * The orders collection as the handlers use it: reads of copies, and writes guarded by the version
 * read, whose outbox fields are those the store's own function gives (outboxAfter).
 */
export class FakeOrders implements Pick<
  OrdersRepo,
  'find' | 'applyChange' | 'appliedEver' | 'touchOpenOfSession' | 'placedOfSession'
> {
  readonly docs = new Map<string, OrderDoc>();
  readonly calls = { find: 0, applyChange: 0 };
  /** Runs before each guarded write: a test moves the version on here, as another worker's write would. */
  beforeWrite: ((stored: OrderDoc) => void) | undefined;

  put(...orders: OrderDoc[]): void {
    for (const order of orders) this.docs.set(order._id, structuredClone(order));
  }

  stored(number: number, locationId = LOCATION): OrderDoc | undefined {
    return this.docs.get(recordId(locationId, number));
  }

  async find(scope: OrderScope, number: number): Promise<OrderDoc | null> {
    this.calls.find += 1;
    const doc = this.docs.get(recordId(scope.locationId, number));
    if (!doc || (scope.sessionId !== undefined && doc.sessionId !== scope.sessionId)) return null;
    return structuredClone(doc);
  }

  async applyChange(
    order: OrderDoc,
    change: OrderChange,
    jobId: string,
    now: Date,
    events: EventsOf<OrderDoc> = NO_EVENTS,
  ): Promise<OrderDoc | null> {
    this.calls.applyChange += 1;
    const stored = this.docs.get(order._id);
    if (stored) this.beforeWrite?.(stored);
    if (!stored || stored.version !== order.version) return null;
    const after: OrderDoc = {
      ...order,
      ...change,
      appliedJobs: [...order.appliedJobs, jobId],
      updatedAt: now,
      version: order.version + 1,
    };
    const updated: OrderDoc = { ...after, ...outboxAfter(order, events(after)) };
    this.docs.set(order._id, structuredClone(updated));
    return updated;
  }

  /** Every applied job id is kept on the document here: there is no ledger to read. */
  async appliedEver(order: Pick<OrderDoc, 'appliedJobs'>, jobId: string): Promise<boolean> {
    return hasApplied(order, jobId);
  }

  async touchOpenOfSession(locationId: string, sessionId: string, now: Date): Promise<number> {
    let touched = 0;
    for (const doc of this.docs.values()) {
      if (
        doc.locationId !== locationId ||
        doc.sessionId !== sessionId ||
        (doc.state !== 'SELECTING' && doc.state !== 'NEW')
      )
        continue;
      doc.version += 1;
      doc.updatedAt = now;
      touched += 1;
    }
    return touched;
  }

  async placedOfSession(locationId: string, sessionId: string): Promise<Pick<OrderDoc, 'number'>[]> {
    return [...this.docs.values()]
      .filter((doc) => doc.locationId === locationId && doc.sessionId === sessionId && doc.state === 'PLACED')
      .map(({ number }) => ({ number }))
      .sort((a, b) => a.number - b.number);
  }
}

/** The archive as the handlers use it: read only, when the hot collection misses. */
export class FakeArchive implements Pick<JobContext['archive'], 'find'> {
  readonly docs = new Map<string, ArchivedOrderDoc>();

  put(...orders: OrderDoc[]): void {
    const archivedAt = new Date();
    for (const order of orders)
      this.docs.set(order._id, {
        ...structuredClone(order),
        archivedAt,
        purgeAt: new Date(archivedAt.getTime() + 86_400_000),
      });
  }

  async find(scope: OrderScope, number: number): Promise<ArchivedOrderDoc | null> {
    const doc = this.docs.get(recordId(scope.locationId, number));
    if (!doc || (scope.sessionId !== undefined && doc.sessionId !== scope.sessionId)) return null;
    return structuredClone(doc);
  }
}

export class FakeSessions implements Pick<JobContext['sessions'], 'find' | 'isOpen' | 'close'> {
  readonly docs = new Map<string, SessionDoc>();

  put(session: SessionDoc): void {
    this.docs.set(session._id, structuredClone(session));
  }

  async find(id: string): Promise<SessionDoc | null> {
    const doc = this.docs.get(id);
    return doc ? structuredClone(doc) : null;
  }

  async isOpen(id: string): Promise<boolean> {
    const doc = this.docs.get(id);
    return doc !== undefined && doc.closedAt === undefined;
  }

  async close(id: string, now: Date): Promise<boolean> {
    const doc = this.docs.get(id);
    if (!doc || doc.closedAt) return false;
    doc.closedAt = now;
    return true;
  }
}

export interface FakeJobContext extends JobContext {
  orders: FakeOrders;
  sessions: FakeSessions;
  archive: FakeArchive;
  /** The location events the job published, in order. */
  published: Announcement[];
  /** The session changes the job published at once, not held for its reply (JobContext.nodes). */
  sessionChanges: string[];
  /** The crash points the job passed. */
  passed: CrashPoint[];
}

export function fakeJobContext(
  options: { jobId?: string; answered?: boolean; runBefore?: boolean; threshold?: number } = {},
): FakeJobContext {
  const orders = new FakeOrders();
  const published: Announcement[] = [];
  const sessionChanges: string[] = [];
  const passed: CrashPoint[] = [];
  const announcer = new Announcer(
    {
      publish: async (channel, message) => {
        // held for the reply: only what streams show; a session change must not wait for the reply
        if (!channel.includes(':loc:')) throw new Error(`held for the reply: ${message}`);
        published.push(JSON.parse(message));
      },
    },
    'test',
  );
  const nodes = new Announcer({ publish: async (_channel, message) => sessionChanges.push(message) }, 'test');
  return {
    jobId: options.jobId ?? 'job-1',
    answered: options.answered ?? false,
    runBefore: options.runBefore ?? options.answered ?? false,
    log: createLogger('silent', 'test'),
    orders,
    archive: new FakeArchive(),
    orderCache: new OrderCache(),
    writer: new OrderWriter(orders),
    sessions: new FakeSessions(),
    failureThreshold: async () => options.threshold ?? 3,
    announcer,
    nodes,
    followUps: NO_FOLLOW_UPS,
    published,
    sessionChanges,
    passed,
    checkpoint: (point) => void passed.push(point),
  };
}
