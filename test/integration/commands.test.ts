import type { CommandDoc } from '@pos/shared/domain/records';
import { registerAt, useDb } from '../support/fixtures';
import { call } from '../support/http';
import { useStack } from '../support/stack';

describe('commands', () => {
  const TTL_MS = 10 * 60_000;
  const stack = useStack({ COMMAND_TTL: '10m' });
  const db = useDb(stack);

  const list = async (key: string) => (await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).json();

  it('each kind carries its field, has its own sequence, and reports PLACED', async () => {
    const { location, key } = await registerAt(stack, 'Kinds');
    const kinds = ['READ_TABLE_STATE', 'REQUEST_BILL', 'EXPORT_DATA', 'FETCH_REMOTE_MENU'] as const;
    const created = [];
    for (const kind of kinds) created.push(await stack.admin.createCommand(location.id, kind, 5));
    expect(created).toEqual([
      { number: 1, state: 'PLACED', tableNumber: 5, readTableState: true },
      { number: 2, state: 'PLACED', tableNumber: 5, paymentNumber: 1 },
      { number: 3, state: 'PLACED', tableNumber: 5, exportMainData: true },
      { number: 4, state: 'PLACED', tableNumber: 5, exportMainData: true },
    ]);
    expect(await list(key)).toEqual(created);
    for (const record of created) expect(record).not.toHaveProperty('rows');
  });

  it('an acknowledged command leaves the list; acknowledging again is 404', async () => {
    const { location, key } = await registerAt(stack, 'Ack');
    const command = await stack.admin.createCommand(location.id, 'REQUEST_BILL');
    const ack = await call('DELETE', `${stack.baseUrl}/commands/${command.number}`, { apiKey: key });
    expect(ack.status).toBe(200);
    expect(ack.json()).toEqual(command);
    expect(await list(key)).toEqual([]);
    const again = await call('DELETE', `${stack.baseUrl}/commands/${command.number}`, { apiKey: key });
    expect(again.status).toBe(404);
    expect(again.json().detail).toBe('Command does not exist');
  });

  it('concurrent acknowledgements: exactly one wins', async () => {
    const { location, key } = await registerAt(stack, 'Race');
    const command = await stack.admin.createCommand(location.id, 'READ_TABLE_STATE');
    const results = await Promise.all(
      Array.from({ length: 6 }, () => call('DELETE', `${stack.baseUrl}/commands/${command.number}`, { apiKey: key })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404, 404, 404, 404]);
  });

  it('a command expires after COMMAND_TTL', async () => {
    const { location, key } = await registerAt(stack, 'Expiry');
    const command = await stack.admin.createCommand(location.id, 'EXPORT_DATA');
    expect(await list(key)).toEqual([command]);
    // Its expiry is COMMAND_TTL after its creation; moved back in time by that much, it has expired.
    const commands = db.db.collection<CommandDoc>('commands');
    const stored = (await commands.findOne({ locationId: location.id, number: command.number }))!;
    expect(stored.expiresAt.getTime() - stored.createdAt.getTime()).toBe(TTL_MS);
    const back = (date: Date) => new Date(date.getTime() - TTL_MS - 1_000);
    await commands.updateOne(
      { _id: stored._id },
      { $set: { createdAt: back(stored.createdAt), expiresAt: back(stored.expiresAt) } },
    );
    expect(await list(key)).toEqual([]);
    expect((await call('DELETE', `${stack.baseUrl}/commands/${command.number}`, { apiKey: key })).status).toBe(404);
  });

  it('an unknown command kind is a 400 problem', async () => {
    const { location } = await registerAt(stack, 'Bad kind');
    await expect(stack.admin.createCommand(location.id, 'MAKE_COFFEE' as never)).rejects.toMatchObject({ status: 400 });
  });
});
