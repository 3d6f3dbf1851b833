/** The fan-out's floor: a bare process writing the same frame to every connection it holds in one loop, timed. */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

const sockets = new Set<net.Socket>();
const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  socket.on('error', () => undefined);
  sockets.add(socket);
  socket.once('close', () => sockets.delete(socket));
  socket.resume();
});

export type FloorCommand = { cmd: 'write'; frame: string };
export type FloorReply = { port: number } | { sockets: number; startedAt: number; loopMs: number };

server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));

process.on('message', (command: FloorCommand) => {
  const frame = Buffer.from(command.frame);
  const startedAt = performance.timeOrigin + performance.now();
  const t0 = performance.now();
  for (const socket of sockets) socket.write(frame);
  const loopMs = performance.now() - t0;
  process.send!({ sockets: sockets.size, startedAt, loopMs });
});
process.on('disconnect', () => process.exit(0));
