import { RESYNC_ATTEMPTS, ResyncState } from '@pos/api/stream/resync-state';

describe("ResyncState: a stream's part in its location's re-reads after a Redis loss", () => {
  it('keeps the earliest loss until a read begins, and hands it to that read', () => {
    const state = new ResyncState();
    expect(state.uncovered).toBe(false);
    state.noteLoss(2_000);
    state.noteLoss(1_000);
    state.noteLoss(3_000);
    expect(state.uncovered).toBe(true);
    expect(state.awaitsRead).toBe(true);
    expect(state.begin(9_000)).toBe(1_000);
    expect(state.uncovered).toBe(false);
    expect(state.awaitsRead).toBe(false);
    expect(state.take()).toBe(1_000);
    expect(state.take()).toBeUndefined();
  });

  it('a loss seen while a read is in flight waits for a read of its own', () => {
    const state = new ResyncState();
    state.noteLoss(1_000);
    state.begin(1_500);
    state.noteLoss(2_000);
    expect(state.awaitsRead).toBe(false); // one read at a time
    expect(state.take()).toBe(1_000);
    expect(state.uncovered).toBe(true);
    expect(state.begin(3_000)).toBe(2_000);
  });

  it(`a failed read puts its loss back; the ${RESYNC_ATTEMPTS}rd failure in a row gives up, and a read that comes in resets the count`, () => {
    const state = new ResyncState();
    state.noteLoss(1_000);
    state.begin(1_000);
    expect(state.failed()).toBe('retry');
    expect(state.begin(5_000)).toBe(1_000);
    expect(state.failed()).toBe('retry');
    state.begin(5_000);
    expect(state.take()).toBe(1_000);
    // counted afresh
    state.noteLoss(6_000);
    for (let i = 1; i < RESYNC_ATTEMPTS; i++) {
      state.begin(6_000);
      expect(state.failed()).toBe('retry');
    }
    state.begin(6_000);
    expect(state.failed()).toBe('give-up');
    expect(state.failed()).toBeUndefined(); // no read in flight
  });

  it('what is sent is remembered from the earliest loss still to be covered', () => {
    const state = new ResyncState();
    expect(state.rememberFrom(10_000)).toBe(10_000);
    state.noteLoss(4_000);
    expect(state.rememberFrom(10_000)).toBe(4_000);
    state.begin(10_000);
    expect(state.rememberFrom(10_000)).toBe(4_000);
    state.take();
    expect(state.rememberFrom(10_000)).toBe(10_000);
    state.noteLoss(7_000);
    state.clear();
    expect(state.uncovered).toBe(false);
    expect(state.rememberFrom(10_000)).toBe(10_000);
  });
});
