/**
 * A process holding thousands of raw TCP connections (API event streams, or a floor server's),
 * reporting when each received a marker (epoch ms). Raw sockets, not the register client: the
 * point is the server, and ten thousand parsers would drown this machine.
 */
import net from 'node:net';

/** A connection to open: the HTTP request to send on it, none for a floor server. */
export interface Target {
  port: number;
  request?: string;
}

export type ClientCommand =
  | { cmd: 'open'; targets: Target[] }
  | { cmd: 'expect'; marker: string; timeoutMs: number }
  /** From now on, note every `"productId":"<prefix>…"` arrival on every connection. */
  | { cmd: 'watch'; prefix: string }
  /** Stop noting; the arrivals by marker (epoch ms, one per connection that saw it). */
  | { cmd: 'collect' }
  | { cmd: 'close' };

export type ClientReply =
  | { opened: number; errors: string[] }
  | { arrivals: number[]; missed: number }
  | { seen: Record<string, number[]> }
  | { closed: true };

const epochNow = () => performance.timeOrigin + performance.now();

interface Conn {
  socket: net.Socket;
  /** The end of the bytes seen so far, so that a marker split over two reads is still found. */
  tail: string;
  arrived: boolean;
}

const conns: Conn[] = [];
let expecting: { marker: string; arrivals: number[]; done(): void } | undefined;
let watching: { pattern: RegExp; seen: Map<string, number[]> } | undefined;

function onData(conn: Conn, chunk: Buffer): void {
  if (watching) {
    // An event's frame is one write on the server: whole in one chunk but for a rare split, which counts as a miss.
    const at = epochNow();
    for (const match of chunk.toString('latin1').matchAll(watching.pattern))
      watching.seen.set(match[1]!, [...(watching.seen.get(match[1]!) ?? []), at]);
    return;
  }
  const watch = expecting;
  if (!watch || conn.arrived) return;
  const text = conn.tail + chunk.toString('latin1');
  if (text.includes(watch.marker)) {
    conn.arrived = true;
    watch.arrivals.push(epochNow());
    if (watch.arrivals.length === conns.length) watch.done();
  }
  conn.tail = text.slice(-watch.marker.length);
}

/** Resolves once the HTTP answer's head (for a floor server, the connection) is there. */
function open({ port, request }: Target): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const conn: Conn = { socket, tail: '', arrived: false };
    const ready = () => {
      socket
        .removeAllListeners('data')
        .removeAllListeners('error')
        .on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => onData(conn, chunk));
      conns.push(conn);
      resolve();
    };
    socket.once('error', (err) => reject(err));
    socket.once('connect', () => {
      if (!request) return ready();
      socket.write(request);
      let head = '';
      socket.on('data', (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        if (head.startsWith('HTTP/1.1 200')) return ready();
        socket.destroy();
        reject(new Error(head.split('\r\n')[0]));
      });
    });
  });
}

async function handle(command: ClientCommand): Promise<ClientReply> {
  switch (command.cmd) {
    case 'open': {
      let opened = 0;
      let next = 0;
      const errors: string[] = [];
      // 50 at a time: the server answers each stream after a replay read
      const opener = async () => {
        while (next < command.targets.length)
          await open(command.targets[next++]!).then(
            () => (opened += 1),
            (err: Error) => errors.length < 3 && errors.push(err.message),
          );
      };
      await Promise.all(Array.from({ length: 50 }, opener));
      return { opened, errors };
    }
    case 'expect': {
      for (const conn of conns) Object.assign(conn, { arrived: false, tail: '' });
      const arrivals: number[] = [];
      await new Promise<void>((resolve) => {
        if (conns.length === 0) return resolve();
        const timer = setTimeout(resolve, command.timeoutMs);
        expecting = { marker: command.marker, arrivals, done: () => (clearTimeout(timer), resolve()) };
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
    (err: Error) => process.send!({ opened: 0, errors: [err.message] }),
  );
});
process.on('disconnect', () => process.exit(0));
