/**
 * A load-generator process of the streams level (forked by bench/streams.ts, several at once):
 * it holds thousands of raw TCP connections, either event streams of the API (an HTTP GET, its
 * answer read as bytes) or bare connections to the floor server, and reports when each one
 * received a given marker (an event's bytes), as epoch milliseconds. Raw sockets rather than the
 * register client: the point is the server, and ten thousand parsers would drown this machine.
 */
import net from 'node:net';

export type ClientCommand =
  | { cmd: 'open'; port: number; count: number; /** HTTP request per connection; none for the floor */ requests?: string[] }
  | { cmd: 'expect'; marker: string; timeoutMs: number }
  /** From now on, note the arrival of every `"productId":"<prefix>…"` on every connection (the chain level's events). */
  | { cmd: 'watch'; prefix: string }
  /** Stop noting; the arrivals by marker (epoch ms, one per connection that saw it). */
  | { cmd: 'collect' }
  | { cmd: 'close' };

export type ClientReply =
  | { opened: number; failed: number; errors: string[] }
  | { arrivals: number[]; missed: number }
  | { seen: Record<string, number[]> }
  | { closed: true };

const epochNow = () => performance.timeOrigin + performance.now();

interface Conn {
  socket: net.Socket;
  /** The end of the bytes seen so far, so that a marker split over two reads is still found. */
  tail: string;
  arrivedAt?: number;
}

const conns: Conn[] = [];
let expecting: { marker: string; arrivals: number[]; done(): void } | undefined;
let watching: { pattern: RegExp; seen: Map<string, number[]> } | undefined;

function onData(conn: Conn, chunk: Buffer): void {
  if (watching) {
    // An event's frame is one write on the server: whole in one chunk but for a rare split, which counts as a miss.
    const at = epochNow();
    for (const match of chunk.toString('latin1').matchAll(watching.pattern)) {
      const list = watching.seen.get(match[1]!) ?? [];
      list.push(at);
      watching.seen.set(match[1]!, list);
    }
    return;
  }
  const watch = expecting;
  if (!watch || conn.arrivedAt !== undefined) return;
  const text = conn.tail + chunk.toString('latin1');
  if (text.includes(watch.marker)) {
    conn.arrivedAt = epochNow();
    watch.arrivals.push(conn.arrivedAt);
    if (watch.arrivals.length === conns.length) watch.done();
  }
  conn.tail = text.slice(-watch.marker.length);
}

/** Opens one connection; resolves once the HTTP answer's head (or, for the floor, the connection) is there. */
function open(port: number, request: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const conn: Conn = { socket, tail: '' };
    let head = '';
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.once('error', fail);
    socket.once('connect', () => {
      if (!request) {
        socket.off('error', fail);
        socket.on('error', () => undefined);
        conns.push(conn);
        socket.on('data', (chunk: Buffer) => onData(conn, chunk));
        resolve();
        return;
      }
      socket.write(request);
      const onHead = (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        socket.off('data', onHead);
        if (!head.startsWith('HTTP/1.1 200')) {
          fail(new Error(head.split('\r\n')[0]));
          return;
        }
        socket.off('error', fail);
        socket.on('error', () => undefined);
        conns.push(conn);
        socket.on('data', (data: Buffer) => onData(conn, data));
        resolve();
      };
      socket.on('data', onHead);
    });
  });
}

async function handle(command: ClientCommand): Promise<ClientReply> {
  switch (command.cmd) {
    case 'open': {
      let opened = 0;
      const errors: string[] = [];
      let next = 0;
      // 50 at a time: the server answers each stream after a replay read
      await Promise.all(
        Array.from({ length: Math.min(50, command.count) }, async () => {
          while (next < command.count) {
            const i = next++;
            try {
              await open(command.port, command.requests?.[i % command.requests.length]);
              opened += 1;
            } catch (err) {
              if (errors.length < 3) errors.push((err as Error).message);
            }
          }
        }),
      );
      return { opened, failed: command.count - opened, errors };
    }
    case 'expect': {
      for (const conn of conns) {
        conn.arrivedAt = undefined;
        conn.tail = '';
      }
      const arrivals: number[] = [];
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, command.timeoutMs);
        expecting = {
          marker: command.marker,
          arrivals,
          done: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      });
      expecting = undefined;
      return { arrivals, missed: conns.length - arrivals.length };
    }
    case 'watch':
      watching = { pattern: new RegExp(`"productId":"(${command.prefix}[0-9]+)"`, 'g'), seen: new Map() };
      return { seen: {} };
    case 'collect': {
      const seen = Object.fromEntries(watching?.seen ?? []);
      watching = undefined;
      return { seen };
    }
    case 'close':
      for (const conn of conns.splice(0)) conn.socket.destroy();
      return { closed: true };
  }
}

process.on('message', (command: ClientCommand) => {
  handle(command).then(
    (reply) => process.send!(reply),
    (err: Error) => process.send!({ opened: 0, failed: 0, errors: [err.message] }),
  );
});
process.on('disconnect', () => process.exit(0));
