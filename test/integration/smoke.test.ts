import { call, sampleRows, statusUpdate } from '../support/http';
import { useStack } from '../support/stack';

describe('smoke', () => {
  const stack = useStack();

  it('creates, lists and completes an order', async () => {
    const loc = await stack.admin.createLocation('Smoke');
    const key = (await stack.admin.createServiceSession(loc.id, 'reg-1')).apiKey;
    const order = await stack.admin.createOrder(loc.id, sampleRows, 4);
    const list = await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key });
    expect(list.status).toBe(200);
    expect(list.json()).toEqual([order]);
    const done = await statusUpdate(stack.baseUrl, key, order.number, 'COMPLETED');
    expect(done.status).toBe(200);
    expect(done.json().state).toBe('COMPLETED');
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json()).toEqual([]);
  });
});
