/**
 * The one reach into Node's HTTP internals (`_header` and `_headerSent` of lib/_http_outgoing.js);
 * test/unit/library-internals.test.ts fails when Node changes what this relies on.
 */
import type { ServerResponse } from 'node:http';

const SENT_HEAD = 'HTTP/1.1 200 OK\r\n\r\n';

/**
 * Node keeps the head it sent on the response (`_header`, some 330 bytes for a stream's) for the
 * response's life, and once it is sent (`_headerSent`) reads it only as "headers were sent". A
 * stream would hold its copy for hours: one shared string takes its place. Returns whether it
 * could (false: this Node names these fields otherwise, and the response is left as it is).
 */
export function releaseSentHead(res: ServerResponse): boolean {
  const outgoing = res as ServerResponse & { _header?: unknown; _headerSent?: unknown };
  if (outgoing._headerSent !== true || typeof outgoing._header !== 'string') return false;
  outgoing._header = SENT_HEAD;
  return true;
}
