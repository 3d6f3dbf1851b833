/**
 * The event feed's item, which is also every webhook body (docs/webhooks.md): apart from the
 * other responses, since it takes its types from the webhook table (which reads the records).
 */
import type { FromSchema } from 'json-schema-to-ts';
import { EVENT_ID_PATTERN, WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { locationViewSchema } from './admin-views';
import { commandRecordSchema, operatorOrderRecordSchema } from './responses';
import { timestamp } from './shared-shapes';

/**
 * An event as the feed lists it and a webhook body carries it: its `id` (the same for every
 * subscription and attempt), `type`, `timestamp` (when its change was written) and `data`
 * (`locationId`, and the order, command or location as operators see it, or the menu's change).
 */
export const eventSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'timestamp', 'data'],
  properties: {
    id: {
      type: 'string',
      pattern: EVENT_ID_PATTERN,
      description: "The event's id: the cursor of the feed, the same in every webhook body of the event",
    },
    type: { type: 'string', enum: WEBHOOK_EVENT_TYPES },
    timestamp: { ...timestamp, description: 'When the change was written' },
    data: {
      type: 'object',
      additionalProperties: false,
      required: ['locationId'],
      description: '`locationId`, and by type (docs/webhooks.md) the order, the command or the location',
      properties: {
        locationId: { type: 'string' },
        order: {
          ...operatorOrderRecordSchema,
          description:
            "The operator's form of the order, with `version`, its write count (a later state has a higher one)",
          properties: { ...operatorOrderRecordSchema.properties, version: { type: 'integer', minimum: 0 } },
        },
        command: commandRecordSchema,
        location: locationViewSchema,
        version: { type: 'integer', minimum: 1, description: "`menu.published`: the location's new menu version" },
        source: {
          type: 'string',
          enum: ['register', 'operator'],
          description: '`menu.published`: who uploaded the menu',
        },
        counts: {
          type: 'object',
          additionalProperties: false,
          required: ['items', 'modifierGroups', 'options'],
          description: '`menu.published`: what the menu holds',
          properties: {
            items: { type: 'integer', minimum: 0 },
            modifierGroups: { type: 'integer', minimum: 0 },
            options: { type: 'integer', minimum: 0 },
          },
        },
        productId: { type: 'string', description: '`menu.item_availability_changed`: the item or option' },
        available: {
          type: 'boolean',
          description: '`menu.item_availability_changed`: false when snoozed, true when available again',
        },
        until: { ...timestamp, description: '`menu.item_availability_changed`: when a snooze ends by itself' },
        reason: { type: 'string', description: "`menu.item_availability_changed`: the snooze's reason" },
      },
    },
  },
} as const;

export type FeedEvent = FromSchema<typeof eventSchema>;
