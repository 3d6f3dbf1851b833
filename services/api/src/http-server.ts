import http from 'node:http';
import type { Config } from '@pos/shared/config';

/**
 * A listener of the node. Idle keep-alive connections are kept for HTTP_KEEPALIVE_TIMEOUT (65 s),
 * longer than the gateway keeps its upstream connections idle (deploy/nginx.conf): the gateway
 * must be the side that closes them. With Node's 5 s default the node closed them first, and the
 * gateway would send a request on a socket the node had just closed (a 502, or the request sent
 * again to another node).
 */
export function createHttpServer(config: Pick<Config, 'httpKeepAliveTimeoutMs' | 'httpHeadersTimeoutMs'>, handler: http.RequestListener): http.Server {
  const server = http.createServer({ headersTimeout: config.httpHeadersTimeoutMs }, handler);
  server.keepAliveTimeout = config.httpKeepAliveTimeoutMs;
  return server;
}
