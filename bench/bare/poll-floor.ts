/**
 * The poll's floor: the thinnest correct program built from the service's parts. Koa and its
 * router, one `find` of the location's PLACED orders on the `{locationId, state, number}` index,
 * projected to what a record shows, and out as the interface's records (the service's own
 * serialiser). No authentication, no commands: what a poll cannot do without.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { toOrderRecord } from '@pos/shared/domain/records';
import type { OrderDoc } from '@pos/shared/store/documents';
import { floorMongo, serveCommandCount } from './floor-mongo';

const RECORD_FIELDS = { _id: 0, number: 1, state: 1, tableNumber: 1, userNumber: 1, rows: 1, guestCount: 1, orderTime: 1, completeTime: 1, failedTime: 1 };

async function main(): Promise<void> {
  const mongo = await floorMongo();
  const orders = mongo.db.collection<OrderDoc>('orders');
  const app = new Koa();
  const router = new Router();
  router.get('/orders/location', async (ctx) => {
    const docs = await orders
      .find({ locationId: String(ctx.query.locationId), state: 'PLACED' }, { projection: RECORD_FIELDS, sort: { number: 1 } })
      .toArray();
    ctx.body = docs.map(toOrderRecord);
  });
  app.use(router.routes());
  const server = http.createServer(app.callback());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const metricsPort = await serveCommandCount(mongo.commands);
  process.stdout.write(`${JSON.stringify({ msg: 'poll floor listening', port: (server.address() as AddressInfo).port, metricsPort })}\n`);
  process.on('SIGTERM', () => server.close(() => void mongo.client.close().then(() => process.exit(0))));
}

void main();
