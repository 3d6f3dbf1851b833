/**
 * What a slow or greedy client can hold of an API node (docs/security.md#slow-clients): a request
 * whose header lines trickle in is cut off (HTTP_HEADERS_TIMEOUT, 10 s by default) however steady
 * the trickle; a body that trickles is cut off at HTTP_REQUEST_TIMEOUT; an idle keep-alive
 * connection is not a slow request; and a listener holds at most HTTP_MAX_CONNECTIONS connections.
 */
import net from 'node:net';
import { useStack } from '../support/stack';
import { eventually, pause } from '../support/wait';

/** Opens a connection and reports when the node closes it. */
function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let closedAt: number | undefined;
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('close', () => (closedAt = Date.now()));
  socket.on('error', () => undefined);
  return { socket, closedAt: () => closedAt, received: () => received };
}

describe('slow clients, with the default timeouts', () => {
  const stack = useStack({}, { worker: false });

  it('cuts off a request whose header lines trickle in every 4 s, within 30 s', async () => {
    const client = connect(stack.api.port);
    const started = Date.now();
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    const trickle = setInterval(() => client.socket.write(`X-Trickle-${Date.now()}: 1\r\n`), 4_000);
    try {
      await eventually(() => client.closedAt() !== undefined, 'the node closing the connection', 30_000);
    } finally {
      clearInterval(trickle);
      client.socket.destroy();
    }
    const heldMs = client.closedAt()! - started;
    // HTTP_HEADERS_TIMEOUT (10 s), found by a check every second
    expect(heldMs).toBeGreaterThanOrEqual(9_000);
    expect(heldMs).toBeLessThan(30_000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  }, 40_000);

  it('keeps an idle keep-alive connection past the headers timeout: only a request in progress is timed', async () => {
    const client = connect(stack.api.port);
    try {
      client.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await eventually(() => client.received().includes('"status":"ok"'), 'the first answer');
      // idle for longer than HTTP_HEADERS_TIMEOUT: the idleness is the subject
      await pause(11_500);
      expect(client.closedAt()).toBeUndefined();
      client.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await eventually(
        () => client.received().split('"status":"ok"').length === 3,
        'the second answer on the same connection',
      );
    } finally {
      client.socket.destroy();
    }
  }, 30_000);
});

describe('slow clients, with short timeouts and few connections', () => {
  const stack = useStack(
    { HTTP_HEADERS_TIMEOUT: '1s', HTTP_REQUEST_TIMEOUT: '3s', HTTP_MAX_CONNECTIONS: '5' },
    { worker: false },
  );

  it('cuts off a body that trickles past HTTP_REQUEST_TIMEOUT', async () => {
    const client = connect(stack.api.port);
    const started = Date.now();
    client.socket.write(
      `POST /admin/v1/locations HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${stack.env.ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{"name":"`,
    );
    const trickle = setInterval(() => client.socket.write('a'), 500);
    try {
      await eventually(() => client.closedAt() !== undefined, 'the node closing the connection', 10_000);
    } finally {
      clearInterval(trickle);
      client.socket.destroy();
    }
    expect(client.closedAt()! - started).toBeGreaterThanOrEqual(2_500);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('holds at most HTTP_MAX_CONNECTIONS connections: the next is closed at once', async () => {
    const held = Array.from({ length: 5 }, () => connect(stack.api.port));
    try {
      await Promise.all(held.map((c) => new Promise((resolve) => c.socket.once('connect', resolve))));
      const extra = connect(stack.api.port);
      await eventually(() => extra.closedAt() !== undefined, 'the sixth connection closed');
      expect(extra.received()).toBe('');
      expect(held.every((c) => c.closedAt() === undefined)).toBe(true);
    } finally {
      for (const c of held) c.socket.destroy();
    }
  });
});
