/** An HTTP server of a bare program on a free loopback port. */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export async function listen(handler: http.RequestListener): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(handler).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}
