/**
 * A load balancer in front of API nodes, as a Kubernetes Service or nginx would be: each request
 * goes to the next node in turn; a node taken out (before its SIGTERM, as endpoints are updated
 * before a pod is stopped) gets no new request, and a connection refused is tried on the next
 * node (nothing was received). No keep-alive to the nodes: a draining node's connections close.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export class Balancer {
  private readonly nodes: string[] = [];
  private turn = 0;
  private readonly server: http.Server;

  private constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.forward(req, res, Buffer.concat(chunks), this.nodes.length));
    });
  }

  static async start(): Promise<Balancer> {
    const balancer = new Balancer();
    await new Promise<void>((resolve) => balancer.server.listen(0, '127.0.0.1', resolve));
    return balancer;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  add(origin: string): void {
    if (!this.nodes.includes(origin)) this.nodes.push(origin);
  }

  remove(origin: string): void {
    const at = this.nodes.indexOf(origin);
    if (at >= 0) this.nodes.splice(at, 1);
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, triesLeft: number): void {
    const node = this.nodes[this.turn++ % Math.max(1, this.nodes.length)];
    if (!node) {
      res.writeHead(502).end();
      return;
    }
    const upstream = http.request(
      `${node}${req.url}`,
      { method: req.method, headers: { ...req.headers, connection: 'close' }, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        res.on('close', () => answer.destroy());
      },
    );
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED' && triesLeft > 1 && !res.headersSent)
        return this.forward(req, res, body, triesLeft - 1);
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    upstream.end(body);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
