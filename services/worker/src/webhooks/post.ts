/**
 * One delivery's HTTP POST, to the address the SSRF guard checked (never a second DNS answer),
 * bounded as a whole by `timeoutMs`. The answer's body is read and dropped (up to a bound).
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CheckedUrl } from '@pos/shared/webhooks/url-guard';

const MAX_ANSWER_BYTES = 64 * 1024;

export class DeliveryTimeout extends Error {}

export function postTo(target: CheckedUrl, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
  const lookup: LookupFunction = (_host, options, callback) => {
    // Node asks for every address when it may try several families; it gets the checked one.
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'pos-webhooks/1', ...headers },
      lookup,
      agent: false,
    });
    const timer = setTimeout(() => request.destroy(new DeliveryTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs);
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
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
