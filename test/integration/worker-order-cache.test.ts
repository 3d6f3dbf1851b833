/**
 * The worker's order cache (services/worker/src/transitions/order-cache.ts): an order the worker last
 * wrote is tried without a read, but only a successful version-guarded write may act on it.
 * Here another writer (standing in for a second worker) changes the order in MongoDB behind the
 * worker's back; the worker's answers must be those of the order as it is, not as it cached it.
 */
import { MongoClient } from 'mongodb';
import type { OrderDoc, OrderRecord } from '@pos/shared/domain/records';
import { customerAt } from '../support/customer';
import { adminHeader, call, sampleRows } from '../support/http';
import { useStack } from '../support/stack';

describe("the worker's order cache against another writer", () => {
  const stack = useStack();
  let mongo: MongoClient;
  let locationId: string;
  let key: string;

  beforeAll(async () => {
    mongo = await new MongoClient(stack.env.MONGO_URL!).connect();
    locationId = (await stack.admin.createLocation('Order cache', 2)).id;
    key = (await stack.admin.createServiceSession(locationId, 'register')).apiKey;
  });
  afterAll(async () => {
    await mongo?.close();
  });

  const orders = () => mongo.db(stack.env.MONGO_DB).collection<OrderDoc>('orders');
  const status = (number: number, newState: string) =>
    call('PUT', `${stack.baseUrl}/orders/${number}/statusupdate`, { apiKey: key, body: { newState } });
  const failure = (number: number) =>
    call('POST', `${stack.baseUrl}/orders/${number}/failure`, { apiKey: key, body: {} });

  /** What a second worker would write: the next version, in another state. */
  async function writeBehindTheWorker(number: number, set: Partial<OrderDoc>): Promise<void> {
    const { modifiedCount } = await orders().updateOne(
      { _id: `${locationId}:${number}` },
      { $set: { ...set, updatedAt: new Date() }, $inc: { version: 1 } },
    );
    expect(modifiedCount).toBe(1);
  }

  it('a change decided on a stale order is refused by its version and decided again', async () => {
    const order = await stack.admin.createOrder(locationId, sampleRows);
    // the worker writes the order (and so caches it): one failure, back in PLACED
    expect((await failure(order.number)).json<OrderRecord>()).toMatchObject({ state: 'PLACED' });
    await writeBehindTheWorker(order.number, { state: 'COMPLETED', completeTime: new Date() });
    // cached, the order is PLACED and could be aborted; as it is, it is COMPLETED
    const aborted = await status(order.number, 'ABORTED');
    expect(aborted.status).toBe(409);
    expect(aborted.json().detail).toContain('COMPLETED');
    expect(await orders().findOne({ _id: `${locationId}:${order.number}` })).toMatchObject({
      state: 'COMPLETED',
      version: 2,
    });
  });

  it('an answer without a write (conflict, unchanged) is never given from the cached order', async () => {
    const order = await stack.admin.createOrder(locationId, sampleRows);
    expect((await failure(order.number)).json<OrderRecord>()).toMatchObject({ state: 'PLACED' });
    // another worker took the order to FAILED at the threshold
    await writeBehindTheWorker(order.number, { state: 'FAILED', failedTime: new Date(), failureCount: 2 });
    // cached, the order is PLACED and a recovery would be a conflict; as it is, it recovers
    const recovered = await call(
      'POST',
      `${stack.origin}/admin/v1/locations/${locationId}/orders/${order.number}/recover`,
      {
        headers: adminHeader(stack.env),
      },
    );
    expect(recovered.status).toBe(200);
    expect(recovered.json<OrderRecord>().state).toBe('PLACED');

    // and the other way: cached COMPLETED, an abort would be a conflict; as it is (PLACED again), it aborts
    const other = await stack.admin.createOrder(locationId, sampleRows);
    expect((await status(other.number, 'COMPLETED')).json<OrderRecord>().state).toBe('COMPLETED');
    await writeBehindTheWorker(other.number, { state: 'PLACED', completeTime: undefined });
    await orders().updateOne({ _id: `${locationId}:${other.number}` }, { $unset: { completeTime: '' } });
    const aborted = await status(other.number, 'ABORTED');
    expect(aborted.status).toBe(200);
    expect(aborted.json<OrderRecord>().state).toBe('ABORTED');
  });

  it("a customer's submit of an order it knows still reads the session: a closed one places nothing", async () => {
    const customer = await customerAt(stack, locationId, 1);
    const created = await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows: sampleRows } });
    const number = created.json<OrderRecord>().number;
    // the worker writes the order NEW (and so caches it)
    expect(
      (await call('POST', `${customer.url}/orders/${number}/finish`, { apiKey: customer.key })).json<OrderRecord>()
        .state,
    ).toBe('NEW');
    // the session closed behind everyone's back: no fence on the order, no word to the API's session cache
    const sessions = mongo.db(stack.env.MONGO_DB).collection<{ _id: string; closedAt?: Date }>('sessions');
    expect(
      (await sessions.updateOne({ _id: customer.sessionId }, { $set: { closedAt: new Date() } })).modifiedCount,
    ).toBe(1);
    const submitted = await call('POST', `${customer.url}/orders/${number}/submit`, { apiKey: customer.key });
    expect(submitted.status).toBe(409);
    expect(submitted.json().detail).toBe('Session is closed; cannot submit');
    expect(await orders().findOne({ _id: `${locationId}:${number}` })).toMatchObject({ state: 'NEW', version: 1 });
  });

  it('keeps applying changes to an order it knows, each against the current version', async () => {
    const order = await stack.admin.createOrder(locationId, sampleRows);
    expect((await failure(order.number)).json<OrderRecord>()).toMatchObject({ state: 'PLACED' });
    expect((await failure(order.number)).json<OrderRecord>()).toMatchObject({ state: 'FAILED' });
    const stored = await orders().findOne({ _id: `${locationId}:${order.number}` });
    expect(stored).toMatchObject({ state: 'FAILED', failureCount: 2, version: 2 });
    expect(stored!.appliedJobs).toHaveLength(2);
  });
});
