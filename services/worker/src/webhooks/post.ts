/**
 * One delivery's HTTP POST, to the address the SSRF guard checked (never a second DNS answer),
 * bounded as a whole by `timeoutMs`. The answer's body is read and dropped (up to a bound).
 *
 * Connections are kept alive between deliveries: a connection per POST would cost the worker (and
 * the receiver) a handshake and a close for every event. The pool is keyed by the checked address
 * (it is the request's host; the URL's host goes in the Host header and TLS's server name), so a
 * kept connection only ever serves the address a check gave. A kept connection the endpoint
 * closed just as it was reused fails before anything was answered: that POST is sent once more,
 * on a new connection.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { CheckedUrl } from '@pos/shared/webhooks/url-guard';

const MAX_ANSWER_BYTES = 64 * 1024;
/** How long a kept connection may idle (the endpoint's own `Keep-Alive: timeout` hint, when shorter, wins). */
const IDLE_MS = 4_000;

const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: IDLE_MS, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, timeout: IDLE_MS, scheduling: 'lifo' }),
};

export class DeliveryTimeout extends Error {}

/** Errors of a kept connection the endpoint had closed: the request never reached it. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE']);

export async function postTo(
  target: CheckedUrl,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  try {
    return await postOnce(target, headers, body, timeoutMs, true);
  } catch (err) {
    if (!(err instanceof StaleConnection)) throw err;
    return postOnce(target, headers, body, Math.max(1, deadline - Date.now()), false);
  }
}

class StaleConnection extends Error {}

function postOnce(
  target: CheckedUrl,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  mayReuse: boolean,
): Promise<number> {
  const { url } = target;
  const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve, reject) => {
    const request = (protocol === 'https:' ? https : http).request({
      protocol,
      host: target.address,
      family: target.family,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: {
        host: url.host,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'pos-webhooks/1',
        ...headers,
      },
      ...(protocol === 'https:' && isIP(hostname) === 0 ? { servername: hostname } : {}),
      agent: mayReuse ? agents[protocol] : false,
    });
    const timer = setTimeout(() => request.destroy(new DeliveryTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs);
    request.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        request.reusedSocket && err.code && STALE_CONNECTION.has(err.code) ? new StaleConnection(err.message) : err,
      );
    });
    request.on('response', (response) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) response.destroy();
      });
      const done = () => {
        clearTimeout(timer);
        resolve(response.statusCode ?? 0);
      };
      response.on('end', done);
      response.on('close', done);
    });
    request.end(body);
  });
}
