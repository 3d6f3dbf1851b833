import http from 'node:http';
import type { HttpConfig } from '@pos/shared/config';

/**
 * How often Node looks for requests past their headers or request timeout (its
 * default, 30 s, would let a trickle run that much longer).
 */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/**
 * A listener of the node. Idle keep-alive connections are kept for HTTP_KEEPALIVE_TIMEOUT (65 s),
 * longer than the gateway keeps its upstream connections idle (deploy/nginx.conf): the gateway
 * must be the side that closes them. With Node's 5 s default the node closed them first, and the
 * gateway would send a request on a socket the node had just closed (a 502, or the request sent
 * again to another node). A slow client is cut off: its headers within HTTP_HEADERS_TIMEOUT of
 * its first byte, its whole request within HTTP_REQUEST_TIMEOUT; and the listener holds at most
 * HTTP_MAX_CONNECTIONS connections (docs/security.md#slow-clients).
 */
export function createHttpServer(
  config: Pick<HttpConfig, 'keepAliveTimeoutMs' | 'headersTimeoutMs' | 'requestTimeoutMs' | 'maxConnections'>,
  handler: http.RequestListener,
): http.Server {
  const server = http.createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    handler,
  );
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  server.maxConnections = config.maxConnections;
  return server;
}
