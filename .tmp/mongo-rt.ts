import { MongoClient } from 'mongodb';
import { startJongodb } from '../scripts/embedded/jongodb';
import { WorkRepo } from '@pos/shared/store/work';
(async () => {
  const j = await startJongodb();
  const c = await new MongoClient(j.url).connect();
  const db = c.db('rt');
  const rows = [{ rowNumber: 1, productId: 'sku-1', name: 'Burger', quantity: 2, unitPrice: 1290 }, { rowNumber: 2, productId: 'sku-2', name: 'Fries', quantity: 1, unitPrice: 390 }];
  await db.collection('orders').insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: `l:${i + 1}`, locationId: 'l', number: i + 1, state: 'PLACED', rows, guestCount: 1, version: 0, appliedJobs: [], orderTime: new Date() })) as never[]);
  const work = new WorkRepo(db);
  const coll = db.collection('orders');
  for (const [name, op] of [['ping', () => db.command({ ping: 1 })], ['findOne', () => coll.findOne({ _id: 'l:1' as never })], ['work.list (10 orders)', () => work.list('l', new Date())]] as const) {
    for (let i = 0; i < 300; i++) await op();
    const t = process.cpuUsage();
    const N = 2000;
    for (let i = 0; i < N; i++) await op();
    const u = process.cpuUsage(t);
    console.log(name, 'client CPU per call µs', ((u.user + u.system) / N).toFixed(0), 'sys', (u.system / N).toFixed(0));
  }
  await c.close(); await j.stop();
})();
