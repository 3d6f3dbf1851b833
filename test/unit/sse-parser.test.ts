import { SseEvent, SseParser } from '@pos/shared/clients/sse-parser';

function parse(chunks: (string | Uint8Array)[]) {
  const events: SseEvent[] = [];
  const retries: number[] = [];
  const comments: string[] = [];
  const parser = new SseParser({
    onEvent: (e) => events.push(e),
    onRetry: (ms) => retries.push(ms),
    onComment: (c) => comments.push(c),
  });
  for (const chunk of chunks) parser.feed(chunk);
  return { events, retries, comments };
}

describe('SseParser', () => {
  it('reads events, ids, retry and comments', () => {
    const { events, retries, comments } = parse([
      'retry: 1000\n\n: keepalive\n\nevent: order\nid: 3.0\ndata: {"number":3}\n\n',
    ]);
    expect(retries).toEqual([1000]);
    expect(comments).toEqual(['keepalive']);
    expect(events).toEqual([{ event: 'order', data: '{"number":3}', id: '3.0' }]);
  });

  it('joins data lines and defaults the event type to message', () => {
    const { events } = parse(['data: a\ndata:b\ndata\n\n']);
    expect(events).toEqual([{ event: 'message', data: 'a\nb\n', id: '' }]);
  });

  it('handles any chunking, CRLF split across chunks and multi-byte characters', () => {
    const text = 'event: command\r\nid: 1.2\r\ndata: {"name":"Café ☕"}\r\n\r\nevent: order\rdata: x\r\r';
    const bytes = new TextEncoder().encode(text);
    const whole = parse([text]).events;
    expect(whole).toEqual([
      { event: 'command', data: '{"name":"Café ☕"}', id: '1.2' },
      { event: 'order', data: 'x', id: '1.2' },
    ]);
    for (let size = 1; size <= 7; size += 1) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      expect(parse(chunks).events).toEqual(whole);
    }
  });

  it('keeps an incomplete event until its blank line arrives', () => {
    const events: SseEvent[] = [];
    const parser = new SseParser({ onEvent: (e) => events.push(e) });
    parser.feed('event: order\ndata: {}\n');
    expect(events).toHaveLength(0);
    parser.feed('\n');
    expect(events).toHaveLength(1);
  });

  it('drops events without data and ignores bad retry values and unknown fields', () => {
    const { events, retries } = parse(['event: order\nid: 5.5\n\nretry: soon\nfoo: bar\ndata: y\n\n']);
    expect(retries).toEqual([]);
    expect(events).toEqual([{ event: 'message', data: 'y', id: '5.5' }]);
  });
});
