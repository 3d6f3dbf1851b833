/**
 * The audit log: one document per operator write, read newest first, kept until `purgeAt`
 * (AUDIT_RETENTION after it). Ids are UUIDv7, so `_id` order is time order.
 *
 * The log is a hash chain, so that a record changed or removed in MongoDB is found: each record
 * has the next `seq` and carries `prevHash` (the record before's `hash`) and `hash`, SHA-256 of
 * `prevHash`, a newline and the record as the API shows it without `hash`, in RFC 8785's
 * canonical JSON, without the fields the chain's first release did not have; those (`purgeAt`,
 * `claimedRequestId`) are under `fullHash`, SHA-256 of `hash` and them, since 0.5.0. So a release
 * that knows only `hash` still verifies every record (a rollback), and every stored field is
 * under a hash. A writer reads the newest record and inserts the next `seq`, which a unique
 * index gives to one writer only; the others read again; then it moves the chain's head anchor
 * forward, so that a removed newest record is missed. Retention removes the oldest records only,
 * in `seq` order, and first records where the chain now starts (the start anchor).
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { Collection, Db, Filter, MongoServerError } from 'mongodb';
import pLimit from 'p-limit';
import type { Logger } from '../log';
import type { AuditVerification } from '../schemas/responses';
import type { AuditAnchorDoc, AuditDoc } from './documents';
import { collections } from './mongo';
import type { Page } from './page';
import { asString } from './query-values';
import { raceBackoff } from './guarded-retry';
import { toAuditRecord } from '../domain/views';

export type { AuditDoc };

/** What a writer gives: the record without its place in the chain and its form. */
export type AuditEntry = Omit<AuditDoc, 'seq' | 'prevHash' | 'hash' | 'fullHash'>;

/** Where the chain starts (after retention) and its newest link, in `auditAnchors`. */
const START = 'audit';
const HEAD = 'head';

export interface AuditFilter {
  locationId?: string;
  operatorId?: string;
  from?: Date;
  to?: Date;
  /** The reader's scope: records of these locations only (a scoped manager). Absent: all. */
  withinLocations?: readonly string[];
}

/** The `prevHash` of the first record. */
export const GENESIS_HASH = '0'.repeat(64);
/** Writers racing for the same `seq` read again; past this many tries the write is reported failed. */
const APPEND_TRIES = 20;
/** The most records one verification reads. */
export const VERIFY_MAX = 10_000;
/** The records before the chain's start one verification reads (a purge cut short leaves at most a batch). */
const BESIDE_READ = 1_000;

/** The hash a record must carry: over `prevHash` and the record as served, but for the fields `fullHash` covers. */
export function auditHash(doc: AuditDoc): string {
  const {
    hash: _hash,
    fullHash: _full,
    purgeAt: _purgeAt,
    claimedRequestId: _claimed,
    ...content
  } = toAuditRecord(doc);
  return createHash('sha256')
    .update(`${doc.prevHash ?? ''}\n${canonicalize(content)}`)
    .digest('hex');
}

/** The `fullHash` a record written since 0.5.0 carries: over its `hash` and the fields `hash` leaves out. */
export function auditFullHash(doc: AuditDoc): string {
  const rest = {
    purgeAt: doc.purgeAt.toISOString(),
    ...(doc.claimedRequestId !== undefined && { claimedRequestId: doc.claimedRequestId }),
  };
  return createHash('sha256')
    .update(`${doc.hash ?? ''}\n${canonicalize(rest)}`)
    .digest('hex');
}

const isDuplicateKey = (err: unknown): boolean => err instanceof MongoServerError && err.code === 11000;

/** What is wrong with a record on its own: its hashes (both required), its retention. */
function selfFault(doc: AuditDoc): string | undefined {
  if (doc.hash === undefined || auditHash(doc) !== doc.hash)
    return 'its content does not match its hash: it was changed after it was written';
  if (doc.fullHash === undefined)
    return 'it has no fullHash: it was removed, so its purgeAt or claimedRequestId may have been changed';
  if (auditFullHash(doc) !== doc.fullHash)
    return 'its purgeAt or claimedRequestId does not match its fullHash: it was changed after it was written';
  if (!(doc.purgeAt >= doc.at)) return 'its purgeAt is before it was written';
  return undefined;
}

type Link = { seq: number; hash: string };
type BrokenAt = NonNullable<AuditVerification['brokenAt']>;

/**
 * Walks records in `seq` order from the link `from` expects: how many link up, the link after them, the first fault.
 */
function walkChain(records: AuditDoc[], from: Link): { checked: number; next: Link; brokenAt?: BrokenAt } {
  let next = from;
  let checked = 0;
  for (const doc of records) {
    const fault = linkFault(doc, next);
    if (fault)
      return {
        checked,
        next,
        brokenAt: { seq: next.seq, ...(doc.seq === next.seq && { id: doc._id }), reason: fault },
      };
    checked += 1;
    next = { seq: next.seq + 1, hash: doc.hash! };
  }
  return { checked, next };
}

/** What is wrong with `doc` as the chain's link `expected` (its place, the link before it, itself). */
function linkFault(doc: AuditDoc, expected: { seq: number; hash: string }): string | undefined {
  if (doc.seq !== expected.seq) return `record ${expected.seq} is missing: the next is ${doc.seq}`;
  if (doc.prevHash !== expected.hash)
    return `its prevHash is not the hash of record ${expected.seq - 1}: a record before it was changed or replaced`;
  return selfFault(doc);
}

export class AuditRepo {
  private readonly c: Collection<AuditDoc>;
  private readonly anchors: Collection<AuditAnchorDoc>;
  /** The link this process appended last. */
  private last?: { seq: number; hash: string };
  /**
   * One append at a time: writers of one process racing for each `seq` would each lose to all
   * the others in turn, and a burst of operator writes ran out of tries (records lost).
   */
  private readonly oneAtATime = pLimit(1);

  constructor(db: Db) {
    this.c = collections(db).audit;
    this.anchors = collections(db).auditAnchors;
  }

  /**
   * Appends the record to the chain; returns it as stored. Concurrent writers each get their own
   * `seq`. The link this process wrote last is tried first (one insert, no read, when no other
   * process wrote since); a taken `seq` reads the newest link and tries again after a jittered pause.
   */
  append(entry: AuditEntry): Promise<AuditDoc> {
    return this.oneAtATime(() => this.appendNow(entry));
  }

  private async appendNow(entry: AuditEntry): Promise<AuditDoc> {
    for (let tries = 1; ; tries += 1) {
      const last = this.last ?? (await this.newest());
      const doc: AuditDoc = { ...entry, seq: (last?.seq ?? 0) + 1, prevHash: last?.hash ?? GENESIS_HASH };
      doc.hash = auditHash(doc);
      doc.fullHash = auditFullHash(doc);
      try {
        await this.c.insertOne(doc);
      } catch (err) {
        this.last = undefined;
        if (!isDuplicateKey(err) || tries >= APPEND_TRIES) throw err;
        await raceBackoff(tries);
        continue;
      }
      this.last = { seq: doc.seq!, hash: doc.hash };
      await this.moveAnchor(HEAD, this.last);
      return doc;
    }
  }

  /** Moves an anchor forward to `link` (never back: a slower writer may come second). */
  private async moveAnchor(id: typeof START | typeof HEAD, link: { seq: number; hash: string }): Promise<void> {
    try {
      await this.anchors.updateOne({ _id: id, seq: { $lt: link.seq } }, { $set: link }, { upsert: true });
    } catch (err) {
      // another writer's upsert of a later link came first
      if (!isDuplicateKey(err)) throw err;
    }
  }

  /** One page, newest first; `after` is the id of the last record of the previous page. */
  list(filter: AuditFilter, page: Page<string>): Promise<AuditDoc[]> {
    const query: Filter<AuditDoc> = {};
    if (filter.locationId !== undefined) query.locationId = asString(filter.locationId, 'locationId');
    if (filter.withinLocations) {
      const within = filter.withinLocations.map((id) => asString(id, 'locationId'));
      query.locationId =
        filter.locationId === undefined
          ? { $in: within }
          : within.includes(query.locationId as string)
            ? query.locationId
            : { $in: [] };
    }
    if (filter.operatorId !== undefined) query.operatorId = asString(filter.operatorId, 'operatorId');
    if (filter.from || filter.to)
      query.at = { ...(filter.from && { $gte: filter.from }), ...(filter.to && { $lt: filter.to }) };
    if (page.after !== undefined) query._id = { $lt: asString(page.after, 'after') };
    return this.c.find(query).sort({ _id: -1 }).limit(page.limit).toArray();
  }

  /**
   * Checks the chain from the record after `afterSeq` (absent: from where it starts), at most
   * `limit` records: each follows the one before it and matches its hashes. Names the first broken
   * link, or a record the list shows that the chain does not hold.
   */
  async verify(afterSeq: number | undefined, limit = VERIFY_MAX, now = new Date()): Promise<AuditVerification> {
    const start = await this.start();
    const beside = await this.besideTheChain(start, now);
    if (beside)
      return {
        intact: false,
        checked: 0,
        complete: true,
        brokenAt: {
          id: beside._id,
          reason:
            `record ${beside._id} has no place in the chain (its seq is ` +
            `${JSON.stringify(beside.seq ?? null)}): it was added beside it`,
        },
      };
    let expected = start;
    if (afterSeq !== undefined) {
      const previous = await this.c.findOne({ seq: afterSeq });
      if (!previous?.hash)
        return {
          intact: false,
          checked: 0,
          complete: true,
          brokenAt: { seq: afterSeq, reason: `record ${afterSeq} does not exist` },
        };
      expected = { seq: afterSeq + 1, hash: previous.hash };
    }
    const records = await this.c
      .find({ seq: { $gte: expected.seq } })
      .sort({ seq: 1 })
      .limit(Math.min(limit, VERIFY_MAX) + 1)
      .toArray();
    const firstSeq = expected.seq;
    const { checked, next, brokenAt } = walkChain(records.slice(0, limit), expected);
    if (brokenAt)
      return {
        intact: false,
        checked,
        firstSeq,
        ...(checked > 0 && { lastSeq: next.seq - 1 }),
        complete: true,
        brokenAt,
      };
    const complete = records.length <= limit;
    const stretch = { checked, ...(checked > 0 && { firstSeq, lastSeq: next.seq - 1 }) };
    const headBroken = complete ? await this.headFault(next) : undefined;
    return headBroken
      ? { intact: false, ...stretch, complete: true, brokenAt: headBroken }
      : { intact: true, ...stretch, complete };
  }

  /** At the end of the chain: it reaches the newest record ever written (the head moves only forward). */
  private async headFault(next: Link): Promise<BrokenAt | undefined> {
    const head = await this.anchors.findOne({ _id: HEAD });
    if (head && head.seq >= next.seq)
      return { seq: next.seq, reason: `record ${next.seq} is missing: records up to ${head.seq} were written` };
    if (head && head.seq === next.seq - 1 && head.hash !== next.hash)
      return { seq: head.seq, reason: `the newest record is not the one written as record ${head.seq}` };
    return undefined;
  }

  /** The first link the chain now expects: the one after the start anchor (retention's last removal). */
  private async start(): Promise<{ seq: number; hash: string }> {
    const anchor = await this.anchors.findOne({ _id: START });
    return { seq: (anchor?.seq ?? 0) + 1, hash: anchor?.hash ?? GENESIS_HASH };
  }

  /**
   * A record the list shows that a walk from `start` never reaches: no `seq`, or one that is not a
   * number at or after the start (`0`, `-7`, `null`, `"9"`). The only ones allowed are records a
   * purge had proven due and not yet removed when it stopped (a crash between its two writes).
   */
  private async besideTheChain(start: { seq: number }, now: Date): Promise<AuditDoc | undefined> {
    const [all, walked] = await Promise.all([
      this.c.countDocuments({}),
      this.c.countDocuments({ seq: { $gte: start.seq } }),
    ]);
    if (all === walked) return undefined;
    const others = await this.c
      .find({ seq: { $not: { $gte: start.seq } } })
      .limit(BESIDE_READ)
      .toArray();
    return others.find(
      (doc) =>
        !(
          Number.isInteger(doc.seq) &&
          doc.seq! >= 1 &&
          doc.seq! < start.seq &&
          doc.purgeAt <= now &&
          selfFault(doc) === undefined
        ),
    );
  }

  /**
   * Removes up to `limit` records past their retention, oldest first in the chain, stopping at
   * the first one not yet due. Each removal is proven first: the record follows the start anchor's
   * link and matches its hashes, so a record whose `purgeAt` was moved (or its `fullHash` removed
   * with it) stays, and verify names it. Where the chain now starts is recorded before the
   * removal, so that a crash in between leaves records before the anchor, never a gap after it.
   * Records from before the chain go by their `purgeAt`.
   */
  async purge(now: Date, limit: number, log?: Logger): Promise<number> {
    let expected = await this.start();
    const oldest = await this.c
      .find({ seq: { $gte: expected.seq } })
      .sort({ seq: 1 })
      .limit(limit)
      .toArray();
    let last: AuditDoc | undefined;
    for (const doc of oldest) {
      if (doc.purgeAt > now) break;
      const fault = linkFault(doc, expected);
      if (fault) {
        log?.error(
          { seq: expected.seq, id: doc._id, reason: fault },
          'audit retention stopped: a record due for removal does not verify; it stays for `audit verify` to name',
        );
        break;
      }
      last = doc;
      expected = { seq: doc.seq! + 1, hash: doc.hash! };
    }
    let removed = 0;
    // Forward only: a slower purge that read an older stretch must not move the anchor back.
    if (last) await this.moveAnchor(START, { seq: last.seq!, hash: last.hash! });
    // what this pass proved, and what a pass cut short after moving the anchor had proved before it
    if (expected.seq > 1)
      removed += (await this.c.deleteMany({ seq: { $gte: 1, $lt: expected.seq }, purgeAt: { $lte: now } }))
        .deletedCount;
    // Compat: records from before the chain; goes once a migration finds none left.
    const legacy = await this.c
      .find({ seq: { $exists: false }, purgeAt: { $lte: now } }, { projection: { _id: 1 } })
      .limit(limit)
      .toArray();
    if (legacy.length > 0)
      removed += (await this.c.deleteMany({ _id: { $in: legacy.map((doc) => doc._id) }, seq: { $exists: false } }))
        .deletedCount;
    return removed;
  }

  /** The chain's last link: its newest record, or, once retention removed them all, the anchor. */
  private async newest(): Promise<{ seq: number; hash: string } | undefined> {
    // majority: a record a failover could still roll back must not be built upon
    const doc = await this.c.findOne(
      { seq: { $exists: true } },
      { sort: { seq: -1 }, readConcern: { level: 'majority' } },
    );
    if (doc?.seq !== undefined && doc.hash !== undefined) return { seq: doc.seq, hash: doc.hash };
    return (await this.anchors.findOne({ _id: START })) ?? undefined;
  }
}
