/**
 * ClientStreams on real HTTP responses, for the unit tests of the stream and the hub: a server
 * whose every request becomes a ClientStream of the reader asked for, and the client reading it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { ClientStream, type StreamReader } from '@pos/api/stream/client-stream';
import type { EndReason } from '@pos/api/stream/end-reasons';
import { OpeningReads } from '@pos/api/stream/opening-reads';
import type { OpeningRepos } from '@pos/api/stream/replay';
import type { SessionsRepo } from '@pos/shared/store/sessions';
import type { StreamClock } from '@pos/api/stream/stream-clock';
import { createLogger } from '@pos/shared/log';
import { TestStream } from './sse-client';

export interface OpenedStream {
  stream: ClientStream;
  client: TestStream;
  /** The reasons the stream ended with (once ended). */
  ends: EndReason[];
  /** How often it asked for its location's re-read. */
  resyncNeeded(): number;
  /** The server's response the stream writes. */
  res: http.ServerResponse;
}

export interface StreamHarness {
  connect(
    reader: StreamReader,
    options?: {
      cursor?: { orderNumber?: number; commandNumber?: number };
      onEnd?(stream: ClientStream): void;
      onResyncNeeded?(stream: ClientStream): void;
    },
  ): Promise<OpenedStream>;
  /** Ends every stream opened (as at shutdown) and closes their clients. */
  endAll(): void;
  close(): Promise<void>;
}

export async function startStreamHarness(
  repos: OpeningRepos & { sessions: Pick<SessionsRepo, 'find'> },
  clock: () => StreamClock,
): Promise<StreamHarness> {
  const responses: ((res: http.ServerResponse) => void)[] = [];
  const opened: OpenedStream[] = [];
  const registry = new Registry();
  const metrics = {
    eventsDelivered: new Counter({ name: 'delivered', help: 'h', labelNames: ['type'], registers: [registry] }),
    streamsEnded: new Counter({ name: 'ended', help: 'h', labelNames: ['reason'], registers: [registry] }),
  };
  const server = http.createServer((_req, res) => responses.shift()?.(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const openings = new OpeningReads(repos);

  const endAll = () => {
    for (const { stream, client } of opened.splice(0)) {
      stream.end('shutdown');
      client.close();
    }
  };
  return {
    async connect(reader, options = {}) {
      const ends: EndReason[] = [];
      let resyncNeeded = 0;
      let response!: http.ServerResponse;
      const made = new Promise<ClientStream>((resolve) =>
        responses.push((res) =>
          resolve(
            new ClientStream({
              reader,
              cursor: options.cursor ?? {},
              res: (response = res),
              openings,
              sessions: repos.sessions,
              streams: { maxBufferBytes: 1 << 20 },
              clock: clock(),
              metrics,
              log: createLogger('silent', 'test'),
              requestId: 'req-1',
              onEnd: (stream) => options.onEnd?.(stream),
              onResyncNeeded: (stream) => {
                resyncNeeded += 1;
                options.onResyncNeeded?.(stream);
              },
            }),
          ),
        ),
      );
      const started = TestStream.start(`${origin}/stream`);
      // a stream never attached (refused, in the tests of the hub) has its connection closed unanswered
      started.opened.catch(() => undefined);
      const client = started.stream;
      const stream = await made;
      void stream.done.then((reason) => ends.push(reason));
      const one = { stream, client, ends, resyncNeeded: () => resyncNeeded, res: response };
      opened.push(one);
      return one;
    },
    endAll,
    async close() {
      endAll();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
