/**
 * The MongoDB migrations (docs/upgrades.md#migrations): each runs once per deployment, in order,
 * under the `migrations` lease, and is recorded in the `migrations` collection when it is done. A
 * worker runs the pending ones as it starts, before it takes a job (`npm run migrate` does the
 * same from a shell); another process that finds the lease held waits for them. Each migration is
 * idempotent (a holder that died mid-way leaves it to the next), and expands only: the release
 * before still runs beside it.
 *
 * Not migrate-mongo: its lock is a check then an insert with no unique key (two workers starting
 * together both run the migrations), it throws where a starting worker should wait, and it loads
 * migrations from files found at run time by the working directory (TypeScript sources here,
 * compiled files in the images); this is a list in the code on the service's own lease.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Db } from 'mongodb';
import { buildInfo } from '../build-info';
import type { Logger } from '../log';
import { collections } from '../store/mongo';
import type { LeasesRepo } from '../store/leases';

export interface Migration {
  /** Sortable and unique: `<release>-<what>`. */
  id: string;
  description: string;
  /**
   * Idempotent: run again after a crash, it finishes what was left. Calls `lease.check()` before
   * each write. Returns how many documents it changed (0: there was nothing to do).
   */
  up(db: Db, log: Logger, lease: MigrationLease): Promise<number>;
}

export interface MigrationOptions {
  leases: Pick<LeasesRepo, 'hold' | 'release'>;
  log: Logger;
  /** How long the lease lasts unrenewed (a holder that died or stalled loses it then). */
  leaseMs?: number;
  /** How long a process waits for another's migrations before it fails to start. */
  waitMs?: number;
}

const LEASE = 'migrations';
const POLL_MS = 500;

/** Thrown by `check()` once the lease may have passed to another process. */
export class LeaseLostError extends Error {}

/**
 * The migrations lease as its holder sees it: held until a time of its own monotonic clock,
 * moved on by each renewal. Writes stop a quarter of a lease before that, so that a write sent
 * just before lands before any other process could take the lease over.
 */
export class MigrationLease {
  private lost = false;

  constructor(
    private until: number,
    private readonly leaseMs: number,
  ) {}

  renewed(until: number | undefined): void {
    if (until === undefined) this.lost = true;
    else this.until = Math.max(this.until, until);
  }

  check(): void {
    if (this.lost || performance.now() > this.until - this.leaseMs / 4)
      throw new LeaseLostError(
        'the migrations lease was lost (this process stalled or could not renew it); another process goes on with them',
      );
  }
}

/** The ids of the migrations this deployment has run. */
export async function appliedMigrations(db: Db): Promise<Set<string>> {
  return new Set(
    (
      await collections(db)
        .migrations.find({}, { projection: { _id: 1 } })
        .toArray()
    ).map((doc) => doc._id),
  );
}

/** Runs the pending migrations of `list` (or waits while another process does); the ids it ran. */
export async function runMigrations(db: Db, list: readonly Migration[], options: MigrationOptions): Promise<string[]> {
  const { leases, log, leaseMs = 60_000, waitMs = 10 * 60_000 } = options;
  const holder = randomUUID();
  const giveUpAt = Date.now() + waitMs;
  const ran: string[] = [];
  for (;;) {
    const applied = await appliedMigrations(db);
    const pending = list.filter((migration) => !applied.has(migration.id));
    if (pending.length === 0) return ran;
    const until = await leases.hold(LEASE, holder, leaseMs);
    if (until !== undefined) {
      try {
        await runHolding(db, pending, holder, new MigrationLease(until, leaseMs), ran, { ...options, leaseMs });
        return ran;
      } catch (err) {
        if (!(err instanceof LeaseLostError)) throw err;
        log.warn(err.message);
      }
    } else log.info({ pending: pending.map((m) => m.id) }, 'another process runs the migrations; waiting');
    if (Date.now() > giveUpAt)
      throw new Error(
        `migrations ${pending.map((m) => m.id).join(', ')} are still held by another process after ${waitMs} ms`,
      );
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Runs `pending` while the lease holds, adding each to `ran` as it is recorded. */
async function runHolding(
  db: Db,
  pending: readonly Migration[],
  holder: string,
  lease: MigrationLease,
  ran: string[],
  options: MigrationOptions & { leaseMs: number },
): Promise<void> {
  const { leases, log, leaseMs } = options;
  // renewed while the migrations run, however long one takes; a renewal refused ends the holding
  const renewal = setInterval(
    () =>
      void leases.hold(LEASE, holder, leaseMs).then(
        (until) => lease.renewed(until),
        () => undefined,
      ),
    leaseMs / 3,
  );
  try {
    for (const migration of pending) {
      const started = Date.now();
      lease.check();
      const changed = await migration.up(db, log.child({ migration: migration.id }), lease);
      lease.check();
      await collections(db).migrations.updateOne(
        { _id: migration.id },
        { $setOnInsert: { appliedAt: new Date(), release: buildInfo().version } },
        { upsert: true },
      );
      const ms = Date.now() - started;
      if (changed === 0)
        log.info({ migration: migration.id, ms }, `migration had nothing to do: ${migration.description}`);
      else log.info({ migration: migration.id, ms, changed }, `migration done: ${migration.description}`);
      ran.push(migration.id);
    }
  } finally {
    clearInterval(renewal);
    await leases.release(LEASE, holder).catch(() => undefined);
  }
}
