import { partitionLayout, partitionOf, partitionSlots } from '@pos/shared/queue/partitions';
import { layoutPartitions, routingKey } from '@pos/shared/queue/transition-queue';
import { slotOf } from '@pos/shared/redis';

describe('transition queue partitions', () => {
  it('keeps the plain prefix for the one queue on one Redis: the keys of a deployment from before partitions', () => {
    expect(partitionLayout('pos', 1, false)).toEqual([{ index: 0, count: 1, prefix: 'pos', label: '' }]);
  });

  it('tags every partition, each in its own share of the slots, so that n partitions spread over n/k evenly split masters', () => {
    // The shares line up with the masters' ranges of `redis-cli --cluster create` (3 masters:
    // 0-5460, 5461-10922, 10923-16383), two partitions of six in each.
    const six = Array.from({ length: 6 }, (_, i) => partitionSlots(i, 6));
    expect([0, 1, 2].map((m) => [six[2 * m]![0], six[2 * m + 1]![1] - 1])).toEqual([
      [0, 5460],
      [5461, 10922],
      [10923, 16383],
    ]);
    for (const count of [1, 2, 3, 4, 6, 12]) {
      const layout = partitionLayout('pos', count, true);
      expect(layout.map((p) => p.label)).toEqual(Array.from({ length: count }, (_, i) => `p${i}of${count}`));
      for (const partition of layout) {
        expect(partition.prefix).toMatch(new RegExp(`^pos:\\{${partition.label}(-[0-9]+)?\\}$`));
        const slot = slotOf(`${partition.prefix}:order-work:wait`);
        expect(slot).toBe(slotOf(partition.prefix));
        const [low, high] = partitionSlots(partition.index, count);
        expect(slot).toBeGreaterThanOrEqual(low);
        expect(slot).toBeLessThan(high);
      }
    }
    // The layout is a function of its inputs alone: every node and every restart computes the same.
    expect(partitionLayout('pos', 6, true)).toEqual(partitionLayout('pos', 6, true));
    expect(partitionLayout('pos', 3, false).map((p) => p.prefix)).toEqual(
      partitionLayout('pos', 3, true).map((p) => p.prefix),
    );
  });

  it('maps a location to one partition, the same everywhere and across releases, and spreads locations evenly', () => {
    // Pinned (the first 4 bytes of the id's SHA-256, big-endian, modulo the count): a different
    // hash would move live locations to other queues mid-deployment.
    expect([1, 2, 3, 6].map((count) => partitionOf('0b7f5d3e-1c2a-4e8b-9f00-5a6b7c8d9e0f', count))).toEqual([
      0, 0, 2, 2,
    ]);
    const counts = new Array<number>(6).fill(0);
    for (let i = 0; i < 6000; i++) counts[partitionOf(`location-${i}`, 6)]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });

  it('routes an order’s transitions by location and a session closing by session; a drained layout shares no queue with the current one', () => {
    expect(routingKey('location', { locationId: 'L', sessionId: 'S' })).toBe('L');
    expect(routingKey('session', { locationId: 'L', sessionId: 'S' })).toBe('S');
    expect(routingKey('location', { sessionId: 'S' })).toBeUndefined();
    const { current, draining } = layoutPartitions({
      redisPrefix: 'pos',
      cluster: true,
      partitions: 3,
      drainPartitions: 2,
    });
    expect(current.map((p) => p.label)).toEqual(['p0of3', 'p1of3', 'p2of3']);
    expect(draining.map((p) => p.label)).toEqual(['p0of2', 'p1of2']);
    expect(layoutPartitions({ redisPrefix: 'pos', cluster: true, partitions: 3, drainPartitions: 3 }).draining).toEqual(
      [],
    );
    expect(
      layoutPartitions({ redisPrefix: 'pos', cluster: false, partitions: 2, drainPartitions: 1 }).draining.map(
        (p) => p.prefix,
      ),
    ).toEqual(['pos']);
  });
});
