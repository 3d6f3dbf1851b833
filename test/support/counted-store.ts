/**
 * The repositories on a database of their own (the stand-in, or MONGO_URL), with a count of the
 * commands sent: for tests that show how many round trips a batch takes.
 */
import { MongoClient } from 'mongodb';
import { ensureIndexes } from '@pos/shared/store/mongo';
import { createRepos, type Repos } from '@pos/shared/store/repos';

export interface CountedStore {
  repos: Repos;
  /** Commands sent since the last reset. */
  commands(): number;
  resetCount(): void;
  /** Empties the collections named and disconnects. */
  close(collections: string[]): Promise<void>;
}

export async function countedStore(db: string): Promise<CountedStore> {
  const mongo = await MongoClient.connect(process.env.TEST_MONGO_URL!);
  let commands = 0;
  mongo.on('connectionCheckedOut', () => (commands += 1));
  await ensureIndexes(mongo.db(db));
  return {
    repos: createRepos(mongo.db(db)),
    commands: () => commands,
    resetCount: () => (commands = 0),
    async close(collections) {
      for (const name of collections) await mongo.db(db).collection(name).deleteMany({});
      await mongo.close();
    },
  };
}
