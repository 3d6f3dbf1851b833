import type { Db } from 'mongodb';
import { collections } from '../store/mongo';
import { TEST_EVENT_TYPE } from '../webhooks/event-types';
import { bodyLocation } from '../webhooks/fan-out';
import { fillIn } from './fill-in';
import type { Migration } from './runner';

/**
 * 0.5.0 judges each attempt of the delivery log by its event's location (docs/webhooks.md#the-delivery-log):
 * attempts logged before carry none, and bound operators do not see them until it is filled in,
 * from each body's `data.locationId`. Test events have none to fill in.
 */
export const deliveryLogLocations: Migration = {
  id: '0.5.0-delivery-log-locations',
  description: 'each delivery attempt logged before 0.5.0 gets its event location',
  up: (db: Db, _log, lease) =>
    fillIn(
      collections(db).webhookDeliveries,
      {
        unfilled: { locationId: { $exists: false }, type: { $ne: TEST_EVENT_TYPE } },
        field: 'locationId',
        valueOf: (doc) => bodyLocation(doc.body),
      },
      lease,
    ),
};
