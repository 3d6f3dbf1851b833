import { Db, MongoClient } from 'mongodb';
import type { CommandDoc, OrderDoc } from '../domain/records';
import type { LocationDoc } from './locations';
import { asInteger, asString } from './query-values';
import type { SessionDoc } from './sessions';

export interface Store {
  client: MongoClient;
  db: Db;
  /** MongoDB commands (round trips) this process has sent so far; see `connectMongo`. */
  commandCount(): number;
  close(): Promise<void>;
}

export async function connectMongo(url: string, dbName: string): Promise<Store> {
  const client = new MongoClient(url, {
    // Fail fast so that a request answers 503 instead of waiting out the driver's 30 s default.
    serverSelectionTimeoutMS: 5_000,
    connectTimeoutMS: 5_000,
    appName: 'pos-ordering-service',
    // An absent optional field is left out of the document, never stored as null.
    ignoreUndefined: true,
  });
  // Every command (a find, an update, a cursor's getMore) takes a connection from the pool for
  // its round trip, so the pool's check-outs count the commands. The driver's command monitoring
  // (monitorCommands) would name them, but it decodes every reply in full for its events, which
  // costs more than the reads themselves.
  let commands = 0;
  client.on('connectionCheckedOut', () => (commands += 1));
  await client.connect();
  const db = client.db(dbName);
  return { client, db, commandCount: () => commands, close: () => client.close() };
}

/** Orders and commands are keyed by location and number: the two per-location sequences. */
export const recordId = (locationId: string, number: number): string => `${asString(locationId, 'locationId')}:${asInteger(number, 'number')}`;

export function collections(db: Db) {
  return {
    locations: db.collection<LocationDoc>('locations'),
    sessions: db.collection<SessionDoc>('sessions'),
    orders: db.collection<OrderDoc>('orders'),
    commands: db.collection<CommandDoc>('commands'),
  };
}

/** Idempotent; run by every process at start so that any role can come up first. */
export async function ensureIndexes(db: Db): Promise<void> {
  const c = collections(db);
  await Promise.all([
    c.sessions.createIndex({ keyHash: 1 }, { unique: true }),
    c.orders.createIndex({ locationId: 1, state: 1, number: 1 }),
    c.orders.createIndex({ sessionId: 1, state: 1 }, { sparse: true }),
    // streams re-reading what changed while their subscription was down
    c.orders.createIndex({ locationId: 1, updatedAt: 1 }),
    c.commands.createIndex({ locationId: 1, number: 1 }),
    c.commands.createIndex({ sessionId: 1, expiresAt: 1 }),
    // a retried create (same Idempotency-Key) finds what its first attempt created
    ...[c.orders, c.commands].map((records) =>
      records.createIndex({ locationId: 1, idempotencyId: 1 }, { unique: true, partialFilterExpression: { idempotencyId: { $exists: true } } }),
    ),
    // MongoDB removes expired commands in the background; reads still filter on expiresAt.
    c.commands.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
  ]);
}

export async function pingMongo(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}
