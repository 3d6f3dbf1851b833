/**
 * An incremental parser of `text/event-stream` (the WHATWG server-sent events format): feed it
 * bytes as they arrive, in chunks of any size, and it reports events, `retry:` values and comments.
 */

export interface SseEvent {
  /** The `event:` field; `message` when the server sent none. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last `id:` seen on the stream so far (the standard's "last event ID"); '' before any. */
  id: string;
}

export interface SseHandlers {
  onEvent(event: SseEvent): void;
  /** A `retry:` field: the server's suggested reconnection delay in milliseconds. */
  onRetry?(ms: number): void;
  /** A comment line (`: keepalive`), without the colon and the one space after it. */
  onComment?(text: string): void;
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  /** A chunk ended in `\r`: a `\n` starting the next one belongs to the same line break. */
  private skipLeadingLf = false;
  private eventType = '';
  private data: string[] = [];
  private lastEventId = '';

  constructor(private readonly handlers: SseHandlers) {}

  feed(chunk: Uint8Array | string): void {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.skipLeadingLf && text.startsWith('\n')) text = text.slice(1);
    this.skipLeadingLf = false;
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i += 1) {
      const ch = this.buffer[i];
      if (ch !== '\n' && ch !== '\r') continue;
      this.line(this.buffer.slice(start, i));
      if (ch === '\r') {
        if (i + 1 === this.buffer.length) this.skipLeadingLf = true;
        else if (this.buffer[i + 1] === '\n') i += 1;
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) {
      this.handlers.onComment?.(line.slice(line.startsWith(': ') ? 2 : 1));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.handlers.onRetry?.(Number(value));
        break;
      default:
        // Unknown fields are ignored, as the standard says.
        break;
    }
  }

  /** A blank line ends an event; one without data is dropped (its id still counts). */
  private dispatch(): void {
    const type = this.eventType || 'message';
    const data = this.data;
    this.eventType = '';
    this.data = [];
    if (data.length === 0) return;
    this.handlers.onEvent({ event: type, data: data.join('\n'), id: this.lastEventId });
  }
}
