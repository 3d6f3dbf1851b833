/**
 * Webhook subscriptions and their delivery log. A subscription's `secret` is sealed
 * (webhooks/secrets.ts); the view never shows it.
 */
import type { Db, Filter } from 'mongodb';
import type { WebhookDeliveryDoc, WebhookDoc } from './documents';
import { collections, deleteDue } from './mongo';
import type { Page } from './page';
import { asString, withinLocations } from './query-values';
import { TEST_EVENT_TYPE } from '../webhooks/event-types';

/** What a subscription's fan-out needs: no secret. */
export type WebhookTarget = Pick<WebhookDoc, '_id' | 'events' | 'locationIds'>;

export type WebhookChanges = Partial<Pick<WebhookDoc, 'url' | 'events' | 'description'>> & {
  locationIds?: string[];
  enabled?: true;
};

export class WebhooksRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).webhooks;
  }

  async create(doc: WebhookDoc): Promise<WebhookDoc> {
    await this.c.insertOne(doc);
    return doc;
  }

  find(id: string): Promise<WebhookDoc | null> {
    return this.c.findOne({ _id: id });
  }

  /** One page by id; `within`: only subscriptions whose locations all lie within these (a bound reader's). */
  list(page: Page<string>, within?: readonly string[]): Promise<WebhookDoc[]> {
    const filter: Filter<WebhookDoc> = {};
    if (page.after !== undefined) filter._id = { $gt: asString(page.after, 'after') };
    if (within) filter.locationIds = withinLocations(within);
    return this.c.find(filter).sort({ _id: 1 }).limit(page.limit).toArray();
  }

  /** Every enabled subscription, for the fan-out's cache (a deployment has a handful). */
  enabledTargets(): Promise<WebhookTarget[]> {
    return this.c
      .find({ disabledAt: { $exists: false } }, { projection: { _id: 1, events: 1, locationIds: 1 } })
      .toArray();
  }

  update(id: string, changes: WebhookChanges, now: Date): Promise<WebhookDoc | null> {
    const { locationIds, enabled, ...fields } = changes;
    const set: Partial<WebhookDoc> = { ...fields, updatedAt: now };
    const unset: Record<string, ''> = {};
    if (locationIds !== undefined) {
      if (locationIds.length > 0) set.locationIds = locationIds;
      else unset.locationIds = '';
    }
    if (enabled) Object.assign(unset, { disabledAt: '', disabledReason: '', failingSince: '' });
    return this.c.findOneAndUpdate(
      { _id: id },
      { $set: set, ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}) },
      { returnDocument: 'after' },
    );
  }

  async remove(id: string): Promise<boolean> {
    return (await this.c.deleteOne({ _id: id })).deletedCount === 1;
  }

  /** A new sealed secret; the current one stays valid until `previousExpiresAt`. */
  rotate(
    id: string,
    secret: string,
    previousSecret: string,
    previousExpiresAt: Date,
    now: Date,
  ): Promise<WebhookDoc | null> {
    return this.c.findOneAndUpdate(
      { _id: id, secret: previousSecret },
      { $set: { secret, previousSecret, previousSecretExpiresAt: previousExpiresAt, updatedAt: now } },
      { returnDocument: 'after' },
    );
  }

  async succeeded(id: string): Promise<void> {
    await this.c.updateOne({ _id: id, failingSince: { $exists: true } }, { $unset: { failingSince: '' } });
  }

  /** Records a failure; returns since when the endpoint has been failing (null: it is gone). */
  async failed(id: string, now: Date): Promise<Date | null> {
    await this.c.updateOne({ _id: id, failingSince: { $exists: false } }, { $set: { failingSince: now } });
    const doc = await this.c.findOne({ _id: id }, { projection: { failingSince: 1 } });
    return doc?.failingSince ?? null;
  }

  /** Disables the endpoint (once: the first reason stands). */
  async disable(id: string, reason: string, now: Date): Promise<void> {
    await this.c.updateOne(
      { _id: id, disabledAt: { $exists: false } },
      { $set: { disabledAt: now, disabledReason: reason, updatedAt: now } },
    );
  }
}

/**
 * The attempts a reader bound to `within` may see: those of its locations' events, and test
 * events. An attempt is judged by its own event, not by its subscription's locations now.
 * Compat: one logged by a release before 0.5.0 (a worker of the release before, during a roll)
 * carries no location until a migration fills it in: its body names it, first of its data
 * (eventBody). Goes in the release after 0.5.0, with a migration that runs that one's `up` again.
 */
function readableBy(within: readonly string[] | undefined): Filter<WebhookDeliveryDoc> {
  if (!within) return {};
  const ids = within.map((id) => asString(id, 'locationId'));
  const named = ids.map((id) => id.replace(/[^A-Za-z0-9-]/g, (c) => `\\${c}`)).join('|');
  return {
    $or: [
      { locationId: { $in: ids } },
      { type: TEST_EVENT_TYPE },
      ...(ids.length > 0
        ? [{ locationId: { $exists: false }, body: { $regex: `"data":\\{"locationId":"(${named})"` } }]
        : []),
    ],
  };
}

export class WebhookDeliveriesRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).webhookDeliveries;
  }

  async record(doc: WebhookDeliveryDoc): Promise<void> {
    await this.c.insertOne(doc);
  }

  /** Several attempts in one command. */
  async recordAll(docs: WebhookDeliveryDoc[]): Promise<void> {
    if (docs.length > 0) await this.c.insertMany(docs, { ordered: false });
  }

  /**
   * An endpoint's attempts, newest first; `after` is the last id of the previous page. With
   * `within` (a bound reader's locations), only the attempts whose event is of one of them, and
   * test events (they carry no location's data).
   */
  list(subscriptionId: string, page: Page<string>, within?: readonly string[]): Promise<WebhookDeliveryDoc[]> {
    const filter: Filter<WebhookDeliveryDoc> = {
      subscriptionId: asString(subscriptionId, 'subscriptionId'),
      ...readableBy(within),
    };
    if (page.after !== undefined) filter._id = { $lt: asString(page.after, 'after') };
    return this.c.find(filter).sort({ subscriptionId: 1, _id: -1 }).limit(page.limit).toArray();
  }

  /** One attempt of the endpoint, if `within` (as for `list`) may read it. */
  find(subscriptionId: string, id: string, within?: readonly string[]): Promise<WebhookDeliveryDoc | null> {
    return this.c.findOne({
      _id: asString(id, 'deliveryId'),
      subscriptionId: asString(subscriptionId, 'subscriptionId'),
      ...readableBy(within),
    });
  }

  /** What the TTL index does, where no TTL monitor runs (the lifecycle job calls it). */
  purge(now: Date, limit: number): Promise<number> {
    return deleteDue(this.c, 'purgeAt', now, limit);
  }
}
