/**
 * What one relay pass takes of what its read of the outboxes found (services/worker/src/outbox/relay.ts,
 * planPass): whole documents, oldest first, up to the pass's cap of events (one document at
 * least, however many it holds), and whether more waits; what waits, and the oldest's age, for the
 * backlog's metrics.
 */
import type { OutboxEntry } from '@pos/shared/store/documents';
import type { HeldEvents } from '@pos/shared/store/outboxes';
import { planPass } from '@pos/worker/outbox/relay';

const doc = (id: string, times: number[]): HeldEvents => ({
  _id: id,
  outbox: times.map((at, i): OutboxEntry => ({
    id: `evt_${id}_${i}`,
    type: 'order.placed',
    locationId: 'loc',
    at: new Date(at),
    rank: [i, 0],
    data: {},
  })),
  count: times.length,
});
const taken = (plan: ReturnType<typeof planPass<string>>) =>
  plan.taken.map(({ outbox, docs }) => [outbox, docs.map((d) => d._id)]);

describe('a relay pass', () => {
  it('takes whole documents, oldest first across the outboxes, up to its cap of events', () => {
    const held = [
      { outbox: 'orders', docs: [doc('o-new', [300, 310]), doc('o-old', [100, 400])] },
      { outbox: 'commands', docs: [doc('c-mid', [200])] },
    ];
    expect(taken(planPass(held, 10, 3))).toEqual([
      ['orders', ['o-old']],
      ['commands', ['c-mid']],
    ]);
    expect(planPass(held, 10, 3)).toMatchObject({ waiting: 5, oldest: 100, more: true });
    const all = planPass(held, 10, 5);
    expect(taken(all)).toEqual([
      ['orders', ['o-old', 'o-new']],
      ['commands', ['c-mid']],
    ]);
    expect(all.more).toBe(false);
  });

  it('takes a document larger than its cap alone, and says more waits when a read filled a batch', () => {
    const big = planPass([{ outbox: 'orders', docs: [doc('hot', [1, 2, 3, 4, 5]), doc('cold', [9])] }], 10, 2);
    expect(taken(big)).toEqual([['orders', ['hot']]]);
    expect(big.more).toBe(true);
    expect(planPass([{ outbox: 'orders', docs: [doc('a', [1]), doc('b', [2])] }], 2, 100).more).toBe(true);
  });

  it('takes documents that hold no event (a count to set back, a due time to clear), and finds none waiting in none', () => {
    const empty = planPass([{ outbox: 'orders', docs: [doc('stale', [])] }], 10, 100);
    expect(taken(empty)).toEqual([['orders', ['stale']]]);
    expect(empty).toMatchObject({ waiting: 0, more: false });
    expect(empty.oldest).toBeUndefined();
    expect(planPass([{ outbox: 'orders', docs: [] }], 10, 100)).toEqual({ taken: [], waiting: 0, more: false });
  });
});
