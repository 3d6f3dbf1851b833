import { Collection, Db, Filter, MongoClient } from 'mongodb';
import type { MongoConfig } from '../config';
import type {
  AppliedJobsDoc,
  MigrationDoc,
  ArchivedOrderDoc,
  AuditAnchorDoc,
  AuditDoc,
  CommandDoc,
  EventDoc,
  LeaseDoc,
  LocationDoc,
  MenuDoc,
  OperatorDoc,
  OrderDoc,
  SessionDoc,
  WebhookDeliveryDoc,
  WebhookDoc,
} from './documents';
import { asInteger, asString } from './query-values';

export interface Store {
  client: MongoClient;
  db: Db;
  /** MongoDB commands (round trips) this process has sent so far; see `connectMongo`. */
  commandCount(): number;
  /** `force`: closes the sockets at once, not waiting on operations in flight. */
  close(force?: boolean): Promise<void>;
}

/**
 * `boundOperations`: MONGO_TIMEOUT bounds each phase of every operation (see `operationBounds`),
 * for a client whose every operation is on a request path (the API's). Without it, a hung server
 * holds an operation until the driver's monitor gives up on the server (10 to 15 s).
 */
export interface ConnectOptions {
  boundOperations: boolean;
}

/**
 * The bounds of one operation against a server that stopped answering, each `ms`: choosing a
 * server, getting a pooled connection (which may mean opening one, whose handshake then waits),
 * and the reply on the socket. This driver ignores CSOT's `timeoutMS` (deprecated, a no-op);
 * `maxTimeMS` is enforced by the server, which a hung server never reaches; an AbortSignal is taken
 * by reads only. The socket timeout bounds writes too. A write that timed out may still be
 * applied once the server wakes: its outcome is unknown.
 */
function operationBounds(ms: number) {
  return { serverSelectionTimeoutMS: ms, waitQueueTimeoutMS: ms, connectTimeoutMS: ms, socketTimeoutMS: ms };
}

/** `url`: MONGO_URL, which the caller has made sure of (see requireUrls). */
export async function connectMongo(
  url: string,
  mongo: Pick<MongoConfig, 'db' | 'writeConcern' | 'timeoutMs'>,
  options: ConnectOptions,
): Promise<Store> {
  const client = new MongoClient(url, {
    // Fail fast so that a request answers 503 instead of waiting out the driver's 30 s default.
    serverSelectionTimeoutMS: 5_000,
    connectTimeoutMS: 5_000,
    ...(options.boundOperations ? operationBounds(mongo.timeoutMs) : {}),
    appName: 'pos-ordering-service',
    // An absent optional field is left out of the document, never stored as null.
    ignoreUndefined: true,
    // A write or read cut by a primary election is retried once on the new primary; the server
    // knows a retried write by its transaction number and applies it at most once. (The drivers'
    // default, spelled out because the service relies on it.)
    retryWrites: true,
    retryReads: true,
    // A write acknowledged before it reached a majority could be rolled back by an election.
    writeConcern: { w: mongo.writeConcern },
  });
  // Every command (a find, an update, a cursor's getMore) takes a connection from the pool for
  // its round trip, so the pool's check-outs count the commands. The driver's command monitoring
  // (monitorCommands) would name them, but it decodes every reply in full for its events, which
  // costs more than the reads themselves.
  let commands = 0;
  client.on('connectionCheckedOut', () => (commands += 1));
  await client.connect();
  const db = client.db(mongo.db);
  return { client, db, commandCount: () => commands, close: (force = false) => client.close(force) };
}

/** Orders and commands are keyed by location and number: the two per-location sequences. */
export const recordId = (locationId: string, number: number): string =>
  `${asString(locationId, 'locationId')}:${asInteger(number, 'number')}`;

export function collections(db: Db) {
  return {
    locations: db.collection<LocationDoc>('locations'),
    sessions: db.collection<SessionDoc>('sessions'),
    orders: db.collection<OrderDoc>('orders'),
    commands: db.collection<CommandDoc>('commands'),
    /** Orders that left `orders`: finished ones and expired carts (store/archive.ts). */
    orderArchive: db.collection<ArchivedOrderDoc>('orderArchive'),
    webhooks: db.collection<WebhookDoc>('webhooks'),
    /** The webhook delivery log (store/webhooks.ts). */
    webhookDeliveries: db.collection<WebhookDeliveryDoc>('webhookDeliveries'),
    operators: db.collection<OperatorDoc>('operators'),
    /** One record per operator write (store/audit.ts). */
    audit: db.collection<AuditDoc>('audit'),
    /** Where the audit log's hash chain starts once retention removed its oldest records. */
    auditAnchors: db.collection<AuditAnchorDoc>('auditAnchors'),
    /** The event log: the feed, and the source of webhook deliveries (store/event-log.ts). */
    events: db.collection<EventDoc>('events'),
    /** Applied job ids orders moved out of their documents (store/applied-jobs.ts). */
    appliedJobs: db.collection<AppliedJobsDoc>('appliedJobs'),
    /** The migrations this deployment has run (migrations/runner.ts). */
    migrations: db.collection<MigrationDoc>('migrations'),
    /** Menu documents by hash, each stored once however many locations serve it (store/menus.ts). */
    menus: db.collection<MenuDoc>('menus'),
    /** Which process holds a one-at-a-time job (store/leases.ts). */
    leases: db.collection<LeaseDoc>('leases'),
  };
}

/**
 * Idempotent; run by every process at start so that any role can come up first. Orders and
 * commands are sharded on `{ locationId: 1, number: 1 }` (docs/deployment.md#shard-key): every
 * query of theirs names `locationId`, and each index here starts with it.
 */
export async function ensureIndexes(db: Db): Promise<void> {
  const c = collections(db);
  await dropAuditTtl(c.audit);
  await keepCommandsAfterExpiry(c.commands);
  await Promise.all([...workIndexes(c), ...logIndexes(c)]);
}

type Collections = ReturnType<typeof collections>;

/** The indexes of the work: locations, sessions, orders, commands and their outboxes. */
function workIndexes(c: Collections): Promise<string>[] {
  return [
    c.sessions.createIndex({ keyHash: 1 }, { unique: true }),
    // the presence sweep's and gauges' reads: locations online, timed pauses due
    c.locations.createIndex({ online: 1 }, { partialFilterExpression: { online: true } }),
    c.locations.createIndex({ pausedUntil: 1 }, { sparse: true }),
    // the sweep's changes not yet announced (a sweep died between its write and its announcement)
    c.locations.createIndex({ unannounced: 1 }, { sparse: true }),
    // the key a rotation replaced, looked up beside keyHash while it is in its grace period
    c.sessions.createIndex({ previousKeyHash: 1 }, { sparse: true }),
    // a location's sessions, page by page (the admin list)
    c.sessions.createIndex({ locationId: 1, _id: 1 }),
    // The shard key's index.
    c.orders.createIndex({ locationId: 1, number: 1 }),
    // the register's work, the replay, and the admin's pages of orders by state
    c.orders.createIndex({ locationId: 1, state: 1, number: 1 }),
    c.orders.createIndex(
      { locationId: 1, sessionId: 1, state: 1, number: 1 },
      { partialFilterExpression: { sessionId: { $exists: true } } },
    ),
    // streams re-reading what changed while their subscription was down
    c.orders.createIndex({ locationId: 1, updatedAt: 1 }),
    // The lifecycle job's scan: finished orders and carts untouched since a cut-off.
    c.orders.createIndex({ state: 1, updatedAt: 1 }),
    c.commands.createIndex({ locationId: 1, number: 1 }),
    // a customer session's live commands (capped per session)
    c.commands.createIndex(
      { locationId: 1, sessionId: 1, expiresAt: 1 },
      { partialFilterExpression: { sessionId: { $exists: true } } },
    ),
    // a retried create (same Idempotency-Key) finds what its first attempt created
    ...[c.orders, c.commands].map((records) =>
      records.createIndex(
        { locationId: 1, idempotencyId: 1 },
        { unique: true, partialFilterExpression: { idempotencyId: { $exists: true } } },
      ),
    ),
    // MongoDB removes commands a day after they expired (their events
    // relayed long before); reads filter on expiresAt.
    c.commands.createIndex({ purgeAt: 1 }, { expireAfterSeconds: 0 }),
    // the outboxes: documents holding events left to the relay, and those whose events a transition took over
    ...[c.orders, c.commands, c.locations, c.orderArchive].flatMap((outbox) => [
      outbox.createIndex({ outboxCount: 1 }, { partialFilterExpression: { outboxCount: { $gt: 0 } } }),
      outbox.createIndex({ outboxDue: 1 }, { partialFilterExpression: { outboxDue: { $exists: true } } }),
    ]),
  ];
}

/** The indexes of the logs: events, the archive, deliveries, applied jobs, operators and the audit. */
function logIndexes(c: Collections): Promise<string>[] {
  return [
    // The event log: its place is `_id`; each event once; the feed by location and by type; the
    // events still owing deliveries; retention by age.
    c.events.createIndex({ eventId: 1 }, { unique: true }),
    c.events.createIndex({ locationId: 1, _id: 1 }),
    c.events.createIndex({ type: 1, _id: 1 }),
    c.events.createIndex({ pendingDeliveries: 1 }, { partialFilterExpression: { pendingDeliveries: { $gt: 0 } } }),
    c.events.createIndex({ recordedAt: 1 }),
    // History pages: a location's finished orders by completion time (number breaks ties).
    c.orderArchive.createIndex({ locationId: 1, completeTime: 1, number: 1 }),
    // MongoDB removes archived orders past their retention; the lifecycle job's purge does the
    // same where no TTL monitor runs, and both are harmless to each other.
    c.orderArchive.createIndex({ purgeAt: 1 }, { expireAfterSeconds: 0 }),
    // an endpoint's delivery log, newest first; dropped after
    // WEBHOOK_LOG_RETENTION (TTL, and the lifecycle job's purge)
    c.webhookDeliveries.createIndex({ subscriptionId: 1, _id: -1 }),
    c.webhookDeliveries.createIndex({ purgeAt: 1 }, { expireAfterSeconds: 0 }),
    // whether an order's moved entries hold a job; kept for IDEMPOTENCY_TTL (TTL, and the lifecycle job's purge)
    c.appliedJobs.createIndex({ orderId: 1, jobs: 1 }),
    c.appliedJobs.createIndex({ expireAt: 1 }, { expireAfterSeconds: 0 }),
    c.operators.createIndex({ tokenHash: 1 }, { unique: true }),
    // The audit log newest first: all of it, by location (a manager's read), by operator.
    c.audit.createIndex({ locationId: 1, _id: -1 }),
    c.audit.createIndex({ operatorId: 1, _id: -1 }),
    // The hash chain: one writer per place; retention reads the oldest, and (seq absent, null in
    // the index) the records from before the chain by their purgeAt.
    c.audit.createIndex({ seq: 1 }, { unique: true, partialFilterExpression: { seq: { $exists: true } } }),
    c.audit.createIndex({ seq: 1, purgeAt: 1 }),
  ];
}

/**
 * The audit log was once removed by a TTL index on `purgeAt`, which takes records out of the
 * middle of the hash chain when AUDIT_RETENTION is shortened: retention is the lifecycle job's
 * now, oldest first (store/audit.ts). Dropped where an earlier version made it.
 */
async function dropAuditTtl(audit: Collection<AuditDoc>): Promise<void> {
  const indexes = await audit.indexes().catch(() => []);
  const ttl = indexes.find((index) => index.key.purgeAt === 1 && index.expireAfterSeconds !== undefined);
  // another process starting at the same time may have dropped it first
  if (ttl?.name) await audit.dropIndex(ttl.name).catch(() => undefined);
}

/**
 * Commands were once removed by a TTL index on `expiresAt`, the moment they expired: now they are
 * kept a day longer (`purgeAt`), so that their events are relayed whatever happens meanwhile. The
 * old index is dropped, and commands from before get their `purgeAt`.
 */
async function keepCommandsAfterExpiry(commands: Collection<CommandDoc>): Promise<void> {
  const indexes = await commands.indexes().catch(() => []);
  const ttl = indexes.find(
    (index) =>
      index.key.expiresAt === 1 && Object.keys(index.key).length === 1 && index.expireAfterSeconds !== undefined,
  );
  if (ttl?.name) await commands.dropIndex(ttl.name).catch(() => undefined);
  await commands.updateMany(
    { purgeAt: { $exists: false } },
    { $set: { purgeAt: new Date(Date.now() + 24 * 60 * 60 * 1000) } },
  );
}

/**
 * Removes up to `limit` documents whose `field` date has passed (the range read by its index,
 * then deleted by id with the date checked again): what a TTL index does, for where no TTL
 * monitor runs. Returns how many were removed.
 */
export async function deleteDue<T extends { _id: string }>(
  collection: Collection<T>,
  field: keyof T & string,
  now: Date,
  limit: number,
): Promise<number> {
  const due = (await collection
    .find({ [field]: { $lte: now } } as Filter<T>, { projection: { _id: 1 } })
    .limit(limit)
    .toArray()) as { _id: string }[];
  if (due.length === 0) return 0;
  const { deletedCount } = await collection.deleteMany({
    _id: { $in: due.map((d) => d._id) },
    [field]: { $lte: now },
  } as Filter<T>);
  return deletedCount;
}

export async function pingMongo(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}
