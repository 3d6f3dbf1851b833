import { Writable } from 'node:stream';
import { dataLines, SseWriter } from '@pos/api/stream/sse-writer';
import { eventually, pause } from '../../support/wait';

/**
 * A Writable with a small buffer, like a socket: it takes `chunk` at a time when told to
 * (`read`), so that the writer must wait for its 'drain'.
 */
function slowSink(highWaterMark = 1024) {
  const chunks: string[] = [];
  const pending: (() => void)[] = [];
  const stream = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      chunks.push(chunk);
      pending.push(callback);
    },
  });
  return {
    stream,
    text: () => chunks.join(''),
    /** The client reads: every write so far completes. */
    read: () => {
      for (const done of pending.splice(0)) done();
    },
  };
}

/** A real Writable that accepts and keeps everything, or (stalled) never finishes a write. */
function sink(stalled = false) {
  const chunks: string[] = [];
  const stream = new Writable({
    highWaterMark: 1 << 30,
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      if (!stalled) callback();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('SseWriter', () => {
  it('frames the preamble, events and comments, and splits data lines', () => {
    const out = sink();
    const writer = new SseWriter(out.stream, {
      keepaliveMs: 60_000,
      maxBufferBytes: 1 << 20,
      onOverflow: () => undefined,
    });
    writer.retry(1000);
    writer.event('order', '3.1', dataLines('{"number":3}'));
    writer.event('note', '3.1', dataLines('a\nb'));
    writer.comment('hello');
    writer.end();
    expect(out.text()).toBe(
      'retry: 1000\n\nid: 3.1\nevent: order\ndata: {"number":3}\n\nid: 3.1\nevent: note\ndata: a\ndata: b\n\n: hello\n\n',
    );
    expect(writer.event('order', '4.1', dataLines('{}'))).toBe(false);
    expect(dataLines('a\r\nb\rc')).toBe('data: a\ndata: b\ndata: c\n');
  });

  it('writes a keepalive comment on every tick of the node clock until it ends', async () => {
    const out = sink();
    const writer = new SseWriter(out.stream, { keepaliveMs: 20, maxBufferBytes: 1 << 20, onOverflow: () => undefined });
    writer.retry(1000);
    const clock = setInterval(() => writer.tick(), 20);
    const keepalives = () => out.text().split(': keepalive\n\n').length - 1;
    try {
      await eventually(() => keepalives() >= 2, 'two keepalives');
      writer.end();
      const count = keepalives();
      // three ticks of the clock with the writer ended: the idle time is what is tested
      await pause(60);
      expect(keepalives()).toBe(count);
    } finally {
      clearInterval(clock);
    }
  });

  it('drops a client that leaves more than the limit unread, once', () => {
    const out = sink(true);
    const overflow = jest.fn();
    const writer = new SseWriter(out.stream, { keepaliveMs: 60_000, maxBufferBytes: 2048, onOverflow: overflow });
    writer.retry(1000);
    const data = dataLines(JSON.stringify({ notes: 'x'.repeat(500) }));
    let written = 0;
    while (writer.event('order', '1.0', data)) written += 1;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(10);
    expect(overflow).toHaveBeenCalledTimes(1);
    expect(out.stream.destroyed).toBe(true);
    expect(writer.isClosed).toBe(true);
    expect(writer.comment('late')).toBe(false);
    expect(overflow).toHaveBeenCalledTimes(1);
  });

  it('does not count a burst (the replay) against the limit until the backlog drains', () => {
    const out = sink(true);
    const overflow = jest.fn();
    const writer = new SseWriter(out.stream, { keepaliveMs: 60_000, maxBufferBytes: 2048, onOverflow: overflow });
    writer.retry(1000);
    const data = dataLines(JSON.stringify({ notes: 'x'.repeat(500) }));
    writer.burst(() => {
      for (let i = 0; i < 20; i += 1) expect(writer.event('order', `${i}.0`, data)).toBe(true);
    });
    expect(out.stream.writableLength).toBeGreaterThan(10_000);
    expect(overflow).not.toHaveBeenCalled();
    // a stalled client still gets dropped once it leaves the limit unread on top of the burst
    let written = 0;
    while (writer.event('order', '21.0', data)) written += 1;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(10);
    expect(overflow).toHaveBeenCalledTimes(1);
  });

  it('writes a burst page by page as the client reads it, and live events behind it in order', async () => {
    const out = slowSink();
    const overflow = jest.fn();
    const writer = new SseWriter(out.stream, { keepaliveMs: 60_000, maxBufferBytes: 1024, onOverflow: overflow });
    writer.retry(1000);
    const data = dataLines(JSON.stringify({ notes: 'x'.repeat(500) }));
    writer.burst(() => {
      for (let i = 1; i <= 50; i += 1) writer.event('order', `${i}.0`, data);
    });
    writer.event('command', '50.1', dataLines('{"number":1}'));
    // what the sink holds is a page, not the burst
    expect(out.stream.writableLength).toBeLessThan(4096);
    for (let i = 0; i < 100 && !out.text().includes('id: 50.1'); i += 1) {
      out.read();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const ids = [...out.text().matchAll(/^id: (.*)$/gm)].map((m) => m[1]);
    expect(ids).toEqual([...Array.from({ length: 50 }, (_, i) => `${i + 1}.0`), '50.1']);
    expect(overflow).not.toHaveBeenCalled();
    writer.end();
  });

  describe('on the clock', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
    afterEach(() => jest.useRealTimers());
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const data = dataLines(JSON.stringify({ notes: 'x'.repeat(500) }));
    /**
     * A writer on a slow client, ticked by the node's clock every keepalive
     * interval (40 ms), with `events` frames waiting for it.
     */
    function writerWithWaiting(events: number) {
      const out = slowSink();
      const overflow = jest.fn();
      const writer = new SseWriter(out.stream, { keepaliveMs: 40, maxBufferBytes: 1024, onOverflow: overflow });
      writer.retry(1000);
      setInterval(() => writer.tick(), 40); // the node's clock (fake timers: gone with them)
      writer.burst(() => {
        for (let i = 1; i <= events; i += 1) writer.event('order', `${i}.0`, data);
      });
      return { out, overflow, writer };
    }

    it('drops a client that takes nothing for a keepalive interval while frames wait for it', async () => {
      const { out, overflow } = writerWithWaiting(20);
      jest.advanceTimersByTime(39);
      expect(overflow).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1); // a keepalive interval without progress
      expect(overflow).toHaveBeenCalledTimes(1);
      expect(out.stream.destroyed).toBe(true);
    });

    it('keeps a client that reads slowly, some of it in every keepalive interval', async () => {
      const { out, overflow, writer } = writerWithWaiting(6);
      for (let i = 0; i < 12; i += 1) {
        jest.advanceTimersByTime(30);
        out.read();
        await settle();
      }
      expect(overflow).not.toHaveBeenCalled();
      expect([...out.text().matchAll(/^id: (.*)$/gm)].length).toBe(6);
      writer.end();
    });
  });
});
