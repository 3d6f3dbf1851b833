/**
 * A TCP proxy a test can cut, restore and point elsewhere: what sits between one node and Redis,
 * so that the node alone loses Redis while the rest of the deployment goes on; a door in front
 * of an API node that a test sends to another node once it killed that one; or between a
 * gateway and a node, counting the connections the gateway opens; or between the service and
 * MongoDB, counting the bytes it sends (the benchmark's bytes written).
 */
import net from 'node:net';

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  /** Connections accepted so far: how often the client connected. */
  accepted = 0;
  /** Bytes the clients sent through it so far (what the target received). */
  bytesFromClients = 0;

  private constructor(
    private target: { host: string; port: number },
    readonly port: number,
  ) {}

  /** Listens on a free loopback port and forwards every connection to `targetUrl` (host:port of a URL). */
  static async start(targetUrl: string): Promise<TcpProxy> {
    const url = new URL(targetUrl);
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const proxy = new TcpProxy({ host: url.hostname, port: Number(url.port) }, port);
    await proxy.restore();
    return proxy;
  }

  /** The target URL with the proxy's port, e.g. `redis://127.0.0.1:<port>`. */
  url(scheme = 'redis'): string {
    return `${scheme}://127.0.0.1:${this.port}`;
  }

  /** New connections go to `targetUrl` (host:port of a URL) from now on; open ones stay where they are. */
  retarget(targetUrl: string): void {
    const url = new URL(targetUrl);
    this.target = { host: url.hostname, port: Number(url.port) };
  }

  /** Drops every connection and refuses new ones until `restore`. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      this.accepted += 1;
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          this.sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk: Buffer) => (this.bytesFromClients += chunk.length));
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  close(): Promise<void> {
    return this.cut();
  }
}
