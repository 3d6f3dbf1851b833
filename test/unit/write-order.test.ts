/**
 * The order the relay records a pass's events in (services/worker/src/outbox/relay.ts,
 * inWriteOrder): each document's events in the order of its writes, the documents' merged by the
 * writers' clocks. It must be what taking the earliest of the documents' next events, again and
 * again, gives (the definition, written out here), whatever the clocks say.
 */
import type { OutboxEntry } from '@pos/shared/store/documents';
import type { HeldEvents } from '@pos/shared/store/outboxes';
import { inWriteOrder } from '@pos/worker/outbox/relay';

const entry = (doc: number, i: number, at: number): OutboxEntry => ({
  id: `evt_${doc}_${i}`,
  type: 'order.placed',
  locationId: 'loc',
  at: new Date(at),
  rank: [i, 0],
  data: {},
});
const held = (doc: number, times: number[]): HeldEvents => ({
  _id: `doc-${doc}`,
  outbox: times.map((at, i) => entry(doc, i, at)),
  count: times.length,
});

/** The definition: the earliest next event of any document (the first document's on a tie), until none is left. */
function earliestFirst(docs: HeldEvents[]): OutboxEntry[] {
  const queues = docs.map((doc) => [...doc.outbox]);
  const merged: OutboxEntry[] = [];
  for (;;) {
    let next: OutboxEntry[] | undefined;
    for (const queue of queues) if (queue.length > 0 && (!next || queue[0]!.at < next[0]!.at)) next = queue;
    if (!next) return merged;
    merged.push(next.shift()!);
  }
}

const ids = (entries: OutboxEntry[]) => entries.map((e) => e.id);

describe('the order of a pass’s events', () => {
  it('keeps each document’s events in the order of its writes, even when its writers’ clocks disagree', () => {
    // doc 0's second write has an earlier clock than doc 1's first: it still follows its own first
    const docs = [held(0, [30, 10]), held(1, [20]), held(2, [30, 40])];
    expect(ids(inWriteOrder(docs))).toEqual(['evt_1_0', 'evt_0_0', 'evt_0_1', 'evt_2_0', 'evt_2_1']);
  });

  it('is the earliest-first merge for any documents and clocks, ties included', () => {
    // a fixed sequence (a 32-bit linear congruential generator, its high bits): the same cases every run
    let seed = 7;
    const random = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16) % n;
    for (let round = 0; round < 500; round++) {
      const docs = Array.from({ length: 1 + random(8) }, (_, d) =>
        held(
          d,
          Array.from({ length: random(5) }, () => random(6)),
        ),
      );
      expect(ids(inWriteOrder(docs))).toEqual(ids(earliestFirst(docs)));
    }
  });
});
