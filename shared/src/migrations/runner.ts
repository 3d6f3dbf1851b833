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
import type { Db } from 'mongodb';
import { buildInfo } from '../build-info';
import type { Logger } from '../log';
import { collections } from '../store/mongo';
import type { LeasesRepo } from '../store/leases';

export interface Migration {
  /** Sortable and unique: `<release>-<what>`. */
  id: string;
  description: string;
  /** Idempotent: run again after a crash, it finishes what was left. */
  up(db: Db, log: Logger): Promise<void>;
}

export interface MigrationOptions {
  leases: Pick<LeasesRepo, 'hold' | 'release'>;
  log: Logger;
  /** How long the lease lasts unrenewed (a holder that died frees it then). */
  leaseMs?: number;
  /** How long a process waits for another's migrations before it fails to start. */
  waitMs?: number;
}

const LEASE = 'migrations';
const POLL_MS = 500;

/** The ids of the migrations this deployment has run. */
export async function appliedMigrations(db: Db): Promise<Set<string>> {
  return new Set((await collections(db).migrations.find({}, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id));
}

/** Runs the pending migrations of `list` (or waits while another process does); the ids it ran. */
export async function runMigrations(db: Db, list: readonly Migration[], options: MigrationOptions): Promise<string[]> {
  const { leases, log, leaseMs = 60_000, waitMs = 10 * 60_000 } = options;
  const holder = randomUUID();
  const giveUpAt = Date.now() + waitMs;
  for (;;) {
    const applied = await appliedMigrations(db);
    const pending = list.filter((migration) => !applied.has(migration.id));
    if (pending.length === 0) return [];
    if (await leases.hold(LEASE, holder, new Date(), new Date(Date.now() + leaseMs))) return runHolding(db, pending, holder, { ...options, leaseMs });
    if (Date.now() > giveUpAt) throw new Error(`migrations ${pending.map((m) => m.id).join(', ')} are still held by another process after ${waitMs} ms`);
    log.info({ pending: pending.map((m) => m.id) }, 'another process runs the migrations; waiting');
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function runHolding(db: Db, pending: readonly Migration[], holder: string, options: MigrationOptions & { leaseMs: number }): Promise<string[]> {
  const { leases, log, leaseMs } = options;
  // renewed while the migrations run, however long one takes
  const renewal = setInterval(() => void leases.hold(LEASE, holder, new Date(), new Date(Date.now() + leaseMs)).catch(() => undefined), leaseMs / 3);
  const ran: string[] = [];
  try {
    for (const migration of pending) {
      const started = Date.now();
      await migration.up(db, log.child({ migration: migration.id }));
      await collections(db).migrations.updateOne({ _id: migration.id }, { $setOnInsert: { appliedAt: new Date(), release: buildInfo().version } }, { upsert: true });
      log.info({ migration: migration.id, ms: Date.now() - started }, `migration done: ${migration.description}`);
      ran.push(migration.id);
    }
    return ran;
  } finally {
    clearInterval(renewal);
    await leases.release(LEASE, holder).catch(() => undefined);
  }
}
