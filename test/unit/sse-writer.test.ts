import { Writable } from 'node:stream';
import { dataLines, SseWriter } from '@pos/api/stream/sse-writer';

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
    const writer = new SseWriter(out.stream, { keepaliveMs: 60_000, maxBufferBytes: 1 << 20, onOverflow: () => undefined });
    writer.start(1000);
    writer.event('order', '3.1', dataLines('{"number":3}'));
    writer.event('note', '3.1', dataLines('a\nb'));
    writer.comment('hello');
    writer.end();
    expect(out.text()).toBe('retry: 1000\n\nid: 3.1\nevent: order\ndata: {"number":3}\n\nid: 3.1\nevent: note\ndata: a\ndata: b\n\n: hello\n\n');
    expect(writer.event('order', '4.1', dataLines('{}'))).toBe(false);
    expect(dataLines('a\r\nb\rc')).toBe('data: a\ndata: b\ndata: c\n');
  });

  it('writes a keepalive comment every interval until it ends', async () => {
    const out = sink();
    const writer = new SseWriter(out.stream, { keepaliveMs: 20, maxBufferBytes: 1 << 20, onOverflow: () => undefined });
    writer.start(1000);
    await new Promise((resolve) => setTimeout(resolve, 110));
    writer.end();
    const count = out.text().split(': keepalive\n\n').length - 1;
    expect(count).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(out.text().split(': keepalive\n\n').length - 1).toBe(count);
  });

  it('drops a client that leaves more than the limit unread, once', () => {
    const out = sink(true);
    const overflow = jest.fn();
    const writer = new SseWriter(out.stream, { keepaliveMs: 60_000, maxBufferBytes: 2048, onOverflow: overflow });
    writer.start(1000);
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
    writer.start(1000);
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
});
