/**
 * The audit log's hash chain in MongoDB (shared/src/store/audit.ts): writers at once, each record
 * in its place; edits made directly in MongoDB that leave the links whole are found, and retention
 * removes only records it has proven due.
 */
import { randomBytes } from 'node:crypto';
import { Db, MongoClient } from 'mongodb';
import { auditFullHash, AuditRepo, type AuditEntry } from '@pos/shared/store/audit';
import type { AuditAnchorDoc, AuditDoc } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import { ensureIndexes } from '@pos/shared/store/mongo';

const DAY = 86_400_000;
const entry = (purgeInMs = DAY): AuditEntry => ({
  _id: newId(),
  at: new Date(Date.now() - 60_000),
  operatorName: 'root',
  role: 'admin',
  method: 'POST',
  route: '/admin/v1/locations',
  targets: {},
  status: 201,
  requestId: randomBytes(4).toString('hex'),
  purgeAt: new Date(Date.now() + purgeInMs),
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
    const written = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 3 === 2 ? other : one).append(entry())),
    );
    expect(written.map((doc) => doc.seq).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(await one.verify(undefined)).toMatchObject({ intact: true, checked: 60, complete: true });
  });

  it("requires every record's fullHash: one removed with a moved purgeAt, or with an added claimedRequestId, is a break, and retention leaves it", async () => {
    const audit = new AuditRepo(db);
    for (let i = 0; i < 5; i++) await audit.append(entry());
    const records = db.collection<AuditDoc>('audit');
    await records.updateMany(
      { seq: { $lte: 3 } },
      { $unset: { fullHash: '' }, $set: { purgeAt: new Date('2000-01-01T00:00:00Z') } },
    );
    const broken = {
      intact: false,
      checked: 0,
      brokenAt: { seq: 1, reason: expect.stringMatching(/has no fullHash/) },
    };
    expect(await audit.verify(undefined)).toMatchObject(broken);
    expect(await audit.purge(new Date(), 100)).toBe(0);
    expect(await records.countDocuments()).toBe(5);
    expect(await audit.verify(undefined)).toMatchObject(broken);

    const [, , , fourth] = await records.find().sort({ seq: 1 }).toArray();
    await records.updateOne(
      { _id: fourth!._id },
      { $unset: { fullHash: '' }, $set: { claimedRequestId: 'someone-else' } },
    );
    await records.updateMany({ seq: { $lte: 3 } }, { $set: { purgeAt: new Date(Date.now() + DAY) } });
    await Promise.all(
      (await records.find({ seq: { $lte: 3 } }).toArray()).map((doc) =>
        records.updateOne({ _id: doc._id }, { $set: { fullHash: auditFullHash(doc) } }),
      ),
    );
    expect(await audit.verify(undefined)).toMatchObject({
      intact: false,
      checked: 3,
      brokenAt: { seq: 4, id: fourth!._id, reason: expect.stringMatching(/has no fullHash/) },
    });
  });

  it.each([0, -7, null, '9'])('names a record put beside the chain with seq %p', async (seq) => {
    const audit = new AuditRepo(db);
    for (let i = 0; i < 3; i++) await audit.append(entry());
    const records = db.collection<AuditDoc>('audit');
    const copy = {
      ...(await records.findOne({ seq: 2 }))!,
      _id: newId(),
      operatorName: 'someone else',
      seq,
    } as unknown as AuditDoc;
    await records.insertOne(copy);
    expect(await audit.verify(undefined)).toMatchObject({
      intact: false,
      brokenAt: { id: copy._id, reason: expect.stringMatching(/has no place in the chain/) },
    });
    await records.deleteOne({ _id: copy._id });
    expect(await audit.verify(undefined)).toMatchObject({ intact: true, checked: 3 });
  });

  it('names a record put in the chain with a seq that is no place in it (2.5)', async () => {
    const audit = new AuditRepo(db);
    for (let i = 0; i < 3; i++) await audit.append(entry());
    const records = db.collection<AuditDoc>('audit');
    await records.insertOne({ ...(await records.findOne({ seq: 2 }))!, _id: newId(), seq: 2.5 });
    expect(await audit.verify(undefined)).toMatchObject({
      intact: false,
      brokenAt: { seq: 3, reason: 'record 3 is missing: the next is 2.5' },
    });
  });

  it('takes records before the start that a purge proved due and was cut short of removing, and no other', async () => {
    const audit = new AuditRepo(db);
    const written = [];
    for (let i = 0; i < 4; i++) written.push(await audit.append(entry(i < 2 ? -1_000 : DAY)));
    // as a purge that crashed between its two writes leaves them: the start moved on, records 1 and 2 still there
    await db
      .collection<AuditAnchorDoc>('auditAnchors')
      .updateOne({ _id: 'audit' }, { $set: { seq: 2, hash: written[1]!.hash! } }, { upsert: true });
    expect(await audit.verify(undefined)).toMatchObject({ intact: true, checked: 2, firstSeq: 3, lastSeq: 4 });
    // a start moved past records not yet due was not a purge's
    await db
      .collection<AuditAnchorDoc>('auditAnchors')
      .updateOne({ _id: 'audit' }, { $set: { seq: 3, hash: written[2]!.hash! } });
    expect(await audit.verify(undefined)).toMatchObject({
      intact: false,
      brokenAt: { id: written[2]!._id, reason: expect.stringMatching(/has no place in the chain/) },
    });
  });

  it('retention removes the due records it has verified, from the start, and stops at the first that does not verify', async () => {
    const audit = new AuditRepo(db);
    for (let i = 0; i < 5; i++) await audit.append(entry(-1_000));
    const records = db.collection<AuditDoc>('audit');
    await records.updateOne({ seq: 3 }, { $set: { operatorName: 'someone else' } });
    expect(await audit.purge(new Date(), 100)).toBe(2);
    expect((await records.find().sort({ seq: 1 }).toArray()).map((doc) => doc.seq)).toEqual([3, 4, 5]);
    expect(await audit.verify(undefined)).toMatchObject({
      intact: false,
      checked: 0,
      firstSeq: 3,
      brokenAt: { seq: 3, reason: expect.stringMatching(/does not match its hash/) },
    });
  });
});
