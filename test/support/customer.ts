/** Helpers of the customer-app tests: sessions, an order walked to PLACED, location events. */
import Redis from 'ioredis';
import { Announcement, locationChannel } from '@pos/shared/events/announcements';
import type { OrderRecord } from '@pos/shared/domain/records';
import { call, sampleRows } from './http';
import type { Stack } from './stack';
import { eventually, EVENTUALLY_MS } from './wait';

export interface Customer {
  key: string;
  sessionId: string;
  url: string;
}

export async function customerAt(
  stack: Pick<Stack, 'admin' | 'baseUrl'>,
  locationId: string,
  userNumber: number,
  tableNumber?: number,
): Promise<Customer> {
  const session = await stack.admin.createCustomerSession(locationId, userNumber, tableNumber);
  return { key: session.apiKey, sessionId: session.sessionId, url: `${stack.baseUrl}/customer` };
}

/** Creates, finishes and submits an order through the customer API; returns it PLACED. */
export async function placeOrder(customer: Customer, rows: unknown = sampleRows): Promise<OrderRecord> {
  const created = await call('POST', `${customer.url}/orders`, { apiKey: customer.key, body: { rows } });
  expect(created.status).toBe(201);
  const number = created.json<OrderRecord>().number;
  expect((await call('POST', `${customer.url}/orders/${number}/finish`, { apiKey: customer.key })).status).toBe(200);
  const submitted = await call('POST', `${customer.url}/orders/${number}/submit`, { apiKey: customer.key });
  expect(submitted.status).toBe(200);
  expect(submitted.json().state).toBe('PLACED');
  return submitted.json<OrderRecord>();
}

/** Everything published on a location's channel while the listener is open. */
export async function listenToLocation(prefix: string, locationId: string) {
  const redis = new Redis(process.env.TEST_REDIS_URL!);
  const events: Announcement[] = [];
  redis.on('message', (_channel: string, message: string) => void events.push(JSON.parse(message) as Announcement));
  await redis.subscribe(locationChannel(prefix, locationId));
  return {
    events,
    /** Waits until `predicate` holds for the events so far (or fails after `timeoutMs`). */
    async until(predicate: (events: Announcement[]) => boolean, timeoutMs = EVENTUALLY_MS): Promise<Announcement[]> {
      await eventually(
        () => predicate(events),
        'the location events to match',
        timeoutMs,
        () => `got ${JSON.stringify(events)}`,
      );
      return events;
    },
    close: () => redis.quit().then(() => undefined),
  };
}
