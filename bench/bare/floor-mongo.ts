/** The floors' MongoDB client, counting its commands as the service does, on a /metrics of its own. */
import { Db, MongoClient } from 'mongodb';
import { listen } from './listen';

export async function floorMongo(): Promise<{ db: Db; client: MongoClient; commands(): number }> {
  const client = new MongoClient(process.env.MONGO_URL!, { ignoreUndefined: true, writeConcern: { w: 'majority' } });
  let commands = 0;
  client.on('connectionCheckedOut', () => (commands += 1));
  await client.connect();
  return { client, db: client.db(process.env.MONGO_DB!), commands: () => commands };
}

/** `GET /metrics` with `pos_mongo_commands_total`; resolves with its port. */
export const serveCommandCount = async (commands: () => number) =>
  (await listen((_req, res) => res.end(`pos_mongo_commands_total ${commands()}\n`))).port;
