import { MongoClient } from 'mongodb';
import type { OrderDoc } from '@pos/shared/domain/records';
import { type Stack, type StackEnv, useBeforeAll } from './stack';

/** A location with one register (SERVICE) key. */
export async function registerAt(stack: Pick<Stack, 'admin'>, name = 'Main Street', failureThreshold?: number) {
  const location = await stack.admin.createLocation(name, failureThreshold);
  const session = await stack.admin.createServiceSession(location.id, `register-${name}`);
  return { location, locationId: location.id, key: session.apiKey, sessionId: session.sessionId };
}

/**
 * A register key whose session has expired: issued for later (an expiry in the past is refused),
 * then moved into the past in MongoDB before the key is first used.
 */
export async function expiredSession(stack: Pick<Stack, 'admin' | 'env'>, locationId: string, deviceId: string) {
  const issued = await stack.admin.createServiceSession(
    locationId,
    deviceId,
    new Date(Date.now() + 60_000).toISOString(),
  );
  const db = await openDb(stack.env);
  try {
    await db.db
      .collection('sessions')
      .updateOne({ _id: issued.sessionId as never }, { $set: { expiresAt: new Date(Date.now() - 60_000) } });
  } finally {
    await db.close();
  }
  return issued;
}

/** Direct reads of a stack's database, for what the wire does not show (version, failure count). */
export async function openDb(env: StackEnv) {
  const client = await new MongoClient(env.MONGO_URL!).connect();
  const db = client.db(env.MONGO_DB);
  return {
    db,
    order: (locationId: string, number: number) =>
      db.collection<OrderDoc>('orders').findOne({ _id: `${locationId}:${number}` }),
    close: () => client.close(),
  };
}

/** The stack's database (openDb), open for the tests of the enclosing `describe` (useBeforeAll). */
export function useDb(stack: Pick<Stack, 'env'>): Awaited<ReturnType<typeof openDb>> {
  return useBeforeAll(
    'the database',
    () => openDb(stack.env),
    (db) => db.close(),
  );
}
