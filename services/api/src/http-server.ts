import http from 'node:http';
import type { HttpConfig } from '@pos/shared/config';

/**
 * A listener of the node. Idle keep-alive connections are kept for HTTP_KEEPALIVE_TIMEOUT (65 s),
 * longer than the gateway keeps its upstream connections idle (deploy/nginx.conf): the gateway
 * must be the side that closes them. With Node's 5 s default the node closed them first, and the
 * gateway would send a request on a socket the node had just closed (a 502, or the request sent
 * again to another node).
 */
export function createHttpServer(config: Pick<HttpConfig, 'keepAliveTimeoutMs' | 'headersTimeoutMs'>, handler: http.RequestListener): http.Server {
  const server = http.createServer({ headersTimeout: config.headersTimeoutMs }, handler);
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  return server;
}
