import type { OrderRecord } from '@pos/shared/domain/records';
import { unseenBuffered } from '@pos/api/stream/replay';
import { commandFrame, orderFrame, frameOfAnnouncement } from '@pos/api/stream/stream-frame';

const order = (number: number, state: OrderRecord['state'], extra: Partial<OrderRecord> = {}) =>
  orderFrame({
    number,
    state,
    rows: [{ rowNumber: 1, productId: 'p', name: 'P', quantity: 1, unitPrice: 100 }],
    guestCount: 1,
    ...extra,
  });
const command = (number: number) => commandFrame({ number, state: 'PLACED', readTableState: true });

describe('buffered events against the replay', () => {
  it('drops commands the replay holds, whatever their order, and keeps the others', () => {
    const replay = { orders: [], commands: [command(3), command(5)] };
    // 4 was created before 5 but announced after it: it is not covered by "<= 5"
    expect(unseenBuffered([command(5), command(4), command(6), command(3)], replay)).toEqual([command(4), command(6)]);
  });

  it('drops order events up to the one identical to the replayed record, keeps the later ones', () => {
    const placed = order(7, 'PLACED');
    const refailed = order(7, 'PLACED', { failedTime: '2026-01-01T00:00:00.000Z' });
    const completed = order(7, 'COMPLETED', { completeTime: '2026-01-01T00:00:01.000Z' });
    const replay = { orders: [refailed], commands: [] };
    expect(unseenBuffered([placed, refailed, completed], replay)).toEqual([completed]);
    // the replay read before the failure report: everything buffered came after it
    expect(unseenBuffered([refailed, completed], { orders: [placed], commands: [] })).toEqual([refailed, completed]);
  });

  it('keeps every event of orders the replay does not hold', () => {
    const events = [order(1, 'COMPLETED'), order(9, 'PLACED'), order(9, 'ABORTED')];
    expect(unseenBuffered(events, { orders: [order(2, 'PLACED')], commands: [] })).toEqual(events);
  });
});

describe('location events as stream events', () => {
  it('hides orders a customer is still composing and passes the rest', () => {
    const record = JSON.parse(order(1, 'SELECTING').data) as OrderRecord;
    expect(frameOfAnnouncement({ type: 'order', record })).toBeUndefined();
    expect(frameOfAnnouncement({ type: 'order', record: { ...record, state: 'NEW' } })).toBeUndefined();
    expect(frameOfAnnouncement({ type: 'order', record: { ...record, state: 'PLACED' } })).toEqual(order(1, 'PLACED'));
    expect(frameOfAnnouncement({ type: 'session-closed', sessionId: 's' })).toBeUndefined();
    expect(
      frameOfAnnouncement({ type: 'command', record: { number: 2, state: 'PLACED', paymentNumber: 1 } })?.data,
    ).toBe('{"number":2,"state":"PLACED","paymentNumber":1}');
  });
});
