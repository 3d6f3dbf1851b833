import { Db, MongoClient } from 'mongodb';
import type { CommandDoc, OrderDoc } from '../domain/records';
import type { ArchivedOrderDoc } from './archive';
import type { LocationDoc } from './locations';
import type { SessionDoc } from './sessions';

export interface Store {
  client: MongoClient;
  db: Db;
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
  await client.connect();
  const db = client.db(dbName);
  return { client, db, close: () => client.close() };
}

/** Orders and commands are keyed by location and number: the two per-location sequences. */
export const recordId = (locationId: string, number: number): string => `${locationId}:${number}`;

export function collections(db: Db) {
  return {
    locations: db.collection<LocationDoc>('locations'),
    sessions: db.collection<SessionDoc>('sessions'),
    orders: db.collection<OrderDoc>('orders'),
    commands: db.collection<CommandDoc>('commands'),
    /** Orders that left `orders`: finished ones and expired carts (store/archive.ts). */
    orderArchive: db.collection<ArchivedOrderDoc>('orderArchive'),
  };
}

/** Idempotent; run by every process at start so that any role can come up first. */
export async function ensureIndexes(db: Db): Promise<void> {
  const c = collections(db);
  await Promise.all([
    c.sessions.createIndex({ keyHash: 1 }, { unique: true }),
    c.orders.createIndex({ locationId: 1, state: 1, number: 1 }),
    c.orders.createIndex({ sessionId: 1, state: 1 }, { sparse: true }),
    // The lifecycle job's scan: finished orders and carts untouched since a cut-off.
    c.orders.createIndex({ state: 1, updatedAt: 1 }),
    c.commands.createIndex({ locationId: 1, number: 1 }),
    // MongoDB removes expired commands in the background; reads still filter on expiresAt.
    c.commands.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
    // History pages: a location's finished orders by completion time (number breaks ties).
    c.orderArchive.createIndex({ locationId: 1, completeTime: 1, number: 1 }),
    // MongoDB removes archived orders past their retention; the lifecycle job's purge does the
    // same where no TTL monitor runs, and both are harmless to each other.
    c.orderArchive.createIndex({ purgeAt: 1 }, { expireAfterSeconds: 0 }),
  ]);
}

export async function pingMongo(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}
