/**
 * When a contender takes over another's lease (store/leases.ts `contend`): only after it has seen
 * the same holder, token and `until` for a whole lease by its own clock. No MongoDB.
 */
import { contend } from '@pos/shared/store/leases';

const LEASE_MS = 10_000;

describe('contend', () => {
  it('waits on a lease it sees for the first time, and starts counting then', () => {
    expect(contend(undefined, 'a', 500, LEASE_MS)).toEqual({ take: false, seen: { key: 'a', since: 500 } });
  });

  it('waits while the same lease has been seen for less than a whole lease, then takes it over', () => {
    const seen = { key: 'a', since: 500 };
    expect(contend(seen, 'a', 500 + LEASE_MS - 1, LEASE_MS)).toEqual({ take: false, seen });
    expect(contend(seen, 'a', 500 + LEASE_MS, LEASE_MS)).toEqual({ take: true });
  });

  it('starts again on a renewal (a new token or until), however long it has waited', () => {
    expect(contend({ key: 'a', since: 0 }, 'b', 60_000, LEASE_MS)).toEqual({
      take: false,
      seen: { key: 'b', since: 60_000 },
    });
  });
});
