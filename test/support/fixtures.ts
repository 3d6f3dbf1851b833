import { MongoClient } from 'mongodb';
import type { OrderDoc } from '@pos/shared/domain/records';
import type { Stack, StackEnv } from './stack';

/** A location with one register (SERVICE) key. */
export async function registerAt(stack: Pick<Stack, 'admin'>, name = 'Main Street', failureThreshold?: number) {
  const location = await stack.admin.createLocation(name, failureThreshold);
  const session = await stack.admin.createServiceSession(location.id, `register-${name}`);
  return { location, locationId: location.id, key: session.apiKey, sessionId: session.sessionId };
}

/** Direct reads of a stack's database, for what the wire does not show (version, failure count). */
export async function openDb(env: StackEnv) {
  const client = await new MongoClient(env.MONGO_URL!).connect();
  const db = client.db(env.MONGO_DB);
  return {
    db,
    order: (locationId: string, number: number) => db.collection<OrderDoc>('orders').findOne({ _id: `${locationId}:${number}` }),
    close: () => client.close(),
  };
}
