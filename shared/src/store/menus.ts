/**
 * Menus (docs/menu.md), storage only. A menu document is stored once, by its hash, in `menus`,
 * however many locations serve it; each location points at the one it serves (`menu`: the
 * document's id and the location's version of it) and holds its own snoozes. Both are written on
 * the location with its revision guard and the change's events, so an event always names what
 * its write left.
 */
import type { AnyBulkWriteOperation, Db } from 'mongodb';
import type { MenuCounts, Snooze } from '../domain/menu-types';
import type { MenuDocument } from '../schemas/menu';
import type { LocationDoc, MenuDoc, MenuPointer, OutboxEntry } from './documents';
import { newId } from './ids';
import type { LocationsRepo } from './locations';
import { collections } from './mongo';
import { guardedRetry, RACED } from './guarded-retry';
import { type EventsOf, withOutbox } from './outboxes';
import { asString } from './query-values';
import { isDuplicateKey } from './store-errors';

/**
 * Locations one write of a publish points at its menu: each command's reply stays
 * well inside MONGO_TIMEOUT however many locations a call names.
 */
const PUBLISH_BATCH = 100;

/** What a publish writes on each location, beside the version it draws there. */
export interface Publication {
  id: string;
  source: MenuPointer['source'];
  counts: MenuCounts;
}

/** What a publish reads of a location, and what its events are built from. */
export type MenuHolder = Pick<LocationDoc, '_id' | 'rev' | 'menu'>;

export class MenusRepo {
  private readonly menus;
  private readonly locations;

  constructor(
    db: Db,
    private readonly locationsRepo: Pick<LocationsRepo, 'change'>,
  ) {
    const c = collections(db);
    this.menus = c.menus;
    this.locations = c.locations;
  }

  /** Stores a menu document under its id; storing it again (another location, another upload) writes nothing. */
  async store(id: string, menu: MenuDocument, now: Date): Promise<void> {
    try {
      await this.menus.updateOne({ _id: id }, { $setOnInsert: { menu, createdAt: now } }, { upsert: true });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // two upserts of one id at once: the other stored it
    }
  }

  async document(id: string): Promise<MenuDocument | null> {
    const doc = await this.menus.findOne<Pick<MenuDoc, 'menu'>>({ _id: id }, { projection: { menu: 1 } });
    return doc?.menu ?? null;
  }

  /**
   * Points each location at a stored menu under its next version, with the events of each, in
   * guarded writes of PUBLISH_BATCH locations each (a location changed meanwhile is read and
   * written again). The version each location drew, by id; a location that does not exist is
   * absent, and so is one whose menu is not at `expected` when that is given (its version read,
   * then the write guarded by the revision read with it).
   */
  async publish(
    locationIds: readonly string[],
    publication: Publication,
    now: Date,
    events: (after: MenuHolder) => OutboxEntry[],
    expected?: number,
  ): Promise<Map<string, number>> {
    const versions = new Map<string, number>();
    const ids = locationIds.map((id) => asString(id, 'locationId'));
    for (let from = 0; from < ids.length; from += PUBLISH_BATCH) {
      for (const [id, version] of await this.publishBatch(
        ids.slice(from, from + PUBLISH_BATCH),
        publication,
        now,
        events,
        expected,
      ))
        versions.set(id, version);
    }
    return versions;
  }

  private async publishBatch(
    ids: string[],
    publication: Publication,
    now: Date,
    events: (after: MenuHolder) => OutboxEntry[],
    expected?: number,
  ): Promise<Map<string, number>> {
    const versions = new Map<string, number>();
    const at = (docs: MenuHolder[]) =>
      expected === undefined ? docs : docs.filter((doc) => (doc.menu?.version ?? 0) === expected);
    let held = at(await this.holders(ids));
    if (held.length === 0) return versions;
    await guardedRetry(async () => {
      // each upload has its own mark: two at once of one menu tell which of them a location took
      const mark = newId();
      const planned = new Map<string, number>();
      const writes: AnyBulkWriteOperation<LocationDoc>[] = held.map((doc) => {
        const menu: MenuPointer = { ...publication, version: (doc.menu?.version ?? 0) + 1, publishedAt: now, mark };
        const rev = (doc.rev ?? 0) + 1;
        planned.set(doc._id, menu.version);
        return {
          updateOne: {
            filter: { _id: doc._id, rev: doc.rev ?? { $exists: false } },
            update: withOutbox({ $set: { menu, rev } }, events({ _id: doc._id, rev, menu })),
          },
        };
      });
      const { matchedCount } = await this.locations.bulkWrite(writes, { ordered: false });
      if (matchedCount === writes.length) {
        for (const [id, version] of planned) versions.set(id, version);
        return versions;
      }
      // the locations that changed meanwhile: those this upload's mark is not on are tried again
      const after = await this.holders([...planned.keys()]);
      for (const doc of after) if (doc.menu?.mark === mark) versions.set(doc._id, doc.menu.version);
      held = at(after.filter((doc) => !versions.has(doc._id)));
      return held.length === 0 ? versions : RACED;
    });
    return versions;
  }

  /**
   * A product snoozed (with `until` and `reason`) or lifted (`snooze` absent),
   * pruning snoozes that ended; null when nothing changed.
   */
  setAvailability(
    locationId: string,
    productId: string,
    snooze: Omit<Snooze, 'productId'> | undefined,
    now: Date,
    events: EventsOf<LocationDoc>,
  ): Promise<LocationDoc | null> {
    return this.locationsRepo.change(
      locationId,
      (doc) => {
        const kept = (doc.snoozes ?? []).filter((s) => s.productId !== productId && (!s.until || s.until > now));
        const had = (doc.snoozes ?? []).some((s) => s.productId === productId && (!s.until || s.until > now));
        if (!snooze && !had) return undefined;
        const next: Snooze = {
          productId,
          ...(snooze?.until && { until: snooze.until }),
          ...(snooze?.reason !== undefined && { reason: snooze.reason }),
        };
        return { set: { snoozes: snooze ? [...kept, next] : kept } };
      },
      events,
    );
  }

  /**
   * A timed snooze came to its end: removed, if it is still the one with that
   * `until`; null when it was changed or lifted meanwhile.
   */
  endSnooze(
    locationId: string,
    productId: string,
    until: Date,
    events: EventsOf<LocationDoc>,
  ): Promise<LocationDoc | null> {
    return this.locationsRepo.change(
      locationId,
      (doc) => {
        const snoozes = doc.snoozes ?? [];
        const ending = snoozes.find((s) => s.productId === productId && s.until?.getTime() === until.getTime());
        return ending ? { set: { snoozes: snoozes.filter((s) => s !== ending) } } : undefined;
      },
      events,
    );
  }

  private holders(ids: readonly string[]): Promise<MenuHolder[]> {
    return this.locations.find<MenuHolder>({ _id: { $in: [...ids] } }, { projection: { rev: 1, menu: 1 } }).toArray();
  }
}
