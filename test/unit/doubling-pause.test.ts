/**
 * The doubling pause of a poll that finds nothing (util/doubling-pause.ts): the
 * event relay's passes and its reads of the outboxes.
 */
import { DoublingPause } from '@pos/shared/util/doubling-pause';

describe('doubling pause', () => {
  it('starts at its first bound and doubles each time it is taken, up to its last', () => {
    const pause = new DoublingPause([50, 1_000]);
    expect(Array.from({ length: 7 }, () => pause.take())).toEqual([50, 100, 200, 400, 800, 1_000, 1_000]);
  });

  it('starts over at its first bound when reset', () => {
    const pause = new DoublingPause([50, 1_000]);
    pause.take();
    pause.take();
    pause.reset();
    expect([pause.take(), pause.take()]).toEqual([50, 100]);
  });
});
