/**
 * The poll's floor: Koa and its router, one `find` of the location's PLACED orders on the
 * `{locationId, state, number}` index, out through the service's record serialiser.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { toOrderRecord } from '@pos/shared/domain/records';
import type { OrderDoc } from '@pos/shared/store/documents';
import { floorMongo, serveCommandCount } from './floor-mongo';
import { listen } from './listen';

const RECORD_FIELDS = {
  _id: 0,
  number: 1,
  state: 1,
  tableNumber: 1,
  userNumber: 1,
  rows: 1,
  guestCount: 1,
  orderTime: 1,
  completeTime: 1,
  failedTime: 1,
};

async function main(): Promise<void> {
  const mongo = await floorMongo();
  const orders = mongo.db.collection<OrderDoc>('orders');
  const app = new Koa();
  const router = new Router();
  router.get('/orders/location', async (ctx) => {
    ctx.body = (
      await orders
        .find(
          { locationId: String(ctx.query.locationId), state: 'PLACED' },
          { projection: RECORD_FIELDS, sort: { number: 1 } },
        )
        .toArray()
    ).map(toOrderRecord);
  });
  app.use(router.routes());
  const { server, port } = await listen(app.callback());
  const metricsPort = await serveCommandCount(mongo.commands);
  process.stdout.write(`${JSON.stringify({ msg: 'poll floor listening', port, metricsPort })}\n`);
  process.on('SIGTERM', () => server.close(() => void mongo.client.close().then(() => process.exit(0))));
}

void main();
