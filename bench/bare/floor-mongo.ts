/**
 * What the floors share: a MongoDB client counting its commands the way the service does (pool
 * check-outs: see connectMongo), and a /metrics listener giving that count under the service's
 * name, so that the bench's cost probe reads floors and service alike.
 */
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Db, MongoClient } from 'mongodb';

export async function floorMongo(): Promise<{ db: Db; client: MongoClient; commands(): number }> {
  const client = new MongoClient(process.env.MONGO_URL!, { ignoreUndefined: true, writeConcern: { w: 'majority' } });
  let commands = 0;
  client.on('connectionCheckedOut', () => (commands += 1));
  await client.connect();
  return { client, db: client.db(process.env.MONGO_DB!), commands: () => commands };
}

/** `GET /metrics` with `pos_mongo_commands_total`; resolves with its port. */
export async function serveCommandCount(commands: () => number): Promise<number> {
  const server = http.createServer((_req, res) => res.end(`pos_mongo_commands_total ${commands()}\n`));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}
