/**
 * The HTTP side of an event stream: its head, written once, and the SSE writer on the response's
 * socket. One stream per connection, so the body needs no chunked framing and ends with the
 * connection.
 */
import type { ServerResponse } from 'node:http';
import { releaseSentHead } from '@pos/shared/internals/node-sent-head';
import { SECURITY_HEADERS } from '../middleware/security-headers';
import { SseWriter, type SseWriterOptions } from './sse-writer';

/** The head of every stream, besides its X-Request-Id. */
const STREAM_HEAD = {
  ...SECURITY_HEADERS,
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-store',
  'X-Accel-Buffering': 'no',
};

/**
 * Writes the head and returns the writer on the socket; undefined when the client is gone already
 * (perhaps before its 'close' could be listened to).
 */
export function openStreamResponse(
  res: ServerResponse,
  requestId: string,
  options: SseWriterOptions,
): SseWriter | undefined {
  if (res.destroyed || !res.socket || res.socket.destroyed) return undefined;
  const socket = res.socket;
  res.shouldKeepAlive = false; // a finished stream closes its connection: nothing waits on it at shutdown
  // Frames go to the socket itself: one write each, as a bare socket would.
  res.useChunkedEncodingByDefault = false;
  // The whole head in one object, not kept by the response (the middleware
  // set no headers before; see SECURITY_HEADERS)
  res.writeHead(200, { ...STREAM_HEAD, 'X-Request-Id': requestId });
  res.flushHeaders();
  releaseSentHead(res);
  socket.setNoDelay(true);
  return new SseWriter(socket, options, res);
}
