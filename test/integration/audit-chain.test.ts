/** The audit log's hash chain in MongoDB (shared/src/store/audit.ts): writers at once, each record in its place. */
import { randomBytes } from 'node:crypto';
import { Db, MongoClient } from 'mongodb';
import { AuditRepo, type AuditEntry } from '@pos/shared/store/audit';
import { newId } from '@pos/shared/store/ids';
import { ensureIndexes } from '@pos/shared/store/mongo';

const entry = (): AuditEntry => ({
  _id: newId(),
  at: new Date(),
  operatorName: 'root',
  role: 'admin',
  method: 'POST',
  route: '/admin/v1/locations',
  targets: {},
  status: 201,
  requestId: randomBytes(4).toString('hex'),
  purgeAt: new Date(Date.now() + 86_400_000),
});

describe('the audit chain', () => {
  let client: MongoClient;
  let db: Db;

  beforeAll(async () => {
    client = await new MongoClient(process.env.TEST_MONGO_URL!).connect();
  });
  afterAll(() => client.close());
  beforeEach(async () => {
    // (a database per test: the stand-in has no dropDatabase)
    db = client.db(`t${randomBytes(5).toString('hex')}`);
    await ensureIndexes(db);
  });

  it('gives every one of a burst of writes a place, from one process and from two at once', async () => {
    // two repos stand for two API processes on one database
    const [one, other] = [new AuditRepo(db), new AuditRepo(db)];
    const written = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 3 === 2 ? other : one).append(entry())));
    expect(written.map((doc) => doc.seq).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(await one.verify(undefined)).toMatchObject({ intact: true, checked: 60, complete: true });
  });
});
