import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { collections } from '../store/mongo';
import type { WebhookDeliveryDoc } from '../store/documents';
import { TEST_EVENT_TYPE } from '../webhooks/event-types';
import { bodyLocation } from '../webhooks/fan-out';
import type { Migration } from './runner';

const BATCH = 500;

/**
 * 0.5.0 judges each attempt of the delivery log by its event's location (docs/webhooks.md#the-delivery-log):
 * attempts logged before carry none, and bound operators do not see them until it is filled in,
 * from each body's `data.locationId`. Test events have none to fill in.
 */
export const deliveryLogLocations: Migration = {
  id: '0.5.0-delivery-log-locations',
  description: 'each delivery attempt logged before 0.5.0 gets its event location',
  async up(db: Db, _log, lease) {
    const log = collections(db).webhookDeliveries;
    let changed = 0;
    const unlocated = { locationId: { $exists: false }, type: { $ne: TEST_EVENT_TYPE } };
    for (let after = ''; ;) {
      const batch = await log
        .find({ ...unlocated, _id: { $gt: after } }, { projection: { _id: 1, body: 1 } })
        .sort({ _id: 1 })
        .limit(BATCH)
        .toArray();
      const updates: AnyBulkWriteOperation<WebhookDeliveryDoc>[] = [];
      for (const { _id, body } of batch) {
        const locationId = bodyLocation(body);
        if (locationId !== undefined)
          updates.push({
            updateOne: { filter: { _id, locationId: { $exists: false } }, update: { $set: { locationId } } },
          });
      }
      if (updates.length > 0) {
        lease.check();
        changed += (await log.bulkWrite(updates, { ordered: false })).modifiedCount;
      }
      if (batch.length < BATCH) return changed;
      after = batch.at(-1)!._id;
    }
  },
};
