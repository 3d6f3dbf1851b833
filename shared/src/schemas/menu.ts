/**
 * The menu's shapes (docs/menu.md): the menu document a register or an operator uploads, the menu
 * as answered (with its version and each product's availability), a snooze, a publish to many
 * locations, and a customer's rows priced from a menu. The menu document is checked with every
 * error at once (each with its JSON pointer: domain/menu.ts adds the rules no schema says).
 */
import Ajv, { type ErrorObject } from 'ajv';
import type { FromSchema } from 'json-schema-to-ts';
import { addFormats, block, LIMITS, line } from './text';
import { timestamp } from './shared-shapes';

const text = line(LIMITS.textLength);
const productId = line(LIMITS.productIdLength);
const price = {
  type: 'integer',
  minimum: 0,
  maximum: LIMITS.unitPrice,
  description: 'Price in minor currency units',
} as const;
const count = { type: 'integer', minimum: 0, maximum: LIMITS.quantity } as const;

const optionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['productId', 'name', 'price'],
  properties: { productId, name: text, price },
} as const;

const groupSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'min', 'max', 'options'],
  properties: {
    id: productId,
    name: text,
    min: { ...count, description: 'The fewest options an item of this group takes (quantities summed)' },
    max: { ...count, minimum: 1, description: 'The most options an item of this group takes (quantities summed)' },
    options: { type: 'array', minItems: 1, items: optionSchema },
  },
} as const;

const itemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['productId', 'name', 'price'],
  properties: {
    productId,
    name: text,
    price,
    category: text,
    description: block(LIMITS.notesLength),
    modifierGroupIds: {
      type: 'array',
      uniqueItems: true,
      items: productId,
      description: 'The modifier groups the item takes, by id',
    },
  },
} as const;

/**
 * A menu as uploaded: what a location sells and at what price. Its
 * limits are MENU_MAX_* (domain/menu.ts checks them).
 */
export const menuDocumentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    currency: { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217 code of the prices' },
    items: { type: 'array', items: itemSchema },
    modifierGroups: { type: 'array', items: groupSchema },
  },
} as const;

/** Present on an item or option while snoozed (86ed); the answered menu's own fields. */
const availability = {
  available: { type: 'boolean', description: 'false while the product is snoozed' },
  unavailableUntil: { ...timestamp, description: 'While snoozed with an end: when it is available again' },
  unavailableReason: { type: 'string', description: 'While snoozed with a reason' },
} as const;

/** The menu as answered: the document, its version, where it came from, and each product's availability now. */
export const menuViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'source', 'publishedAt', 'items', 'modifierGroups'],
  properties: {
    version: {
      type: 'integer',
      minimum: 1,
      description: "The location's menu version: higher for every accepted menu",
    },
    source: { type: 'string', enum: ['register', 'operator'] },
    publishedAt: timestamp,
    currency: menuDocumentSchema.properties.currency,
    items: {
      type: 'array',
      items: {
        ...itemSchema,
        required: [...itemSchema.required, 'available'],
        properties: { ...itemSchema.properties, ...availability },
      },
    },
    modifierGroups: {
      type: 'array',
      items: {
        ...groupSchema,
        properties: {
          ...groupSchema.properties,
          options: {
            type: 'array',
            items: {
              ...optionSchema,
              required: [...optionSchema.required, 'available'],
              properties: { ...optionSchema.properties, ...availability },
            },
          },
        },
      },
    },
  },
} as const;

/** A snooze (86) of an item or option, or its lift: `available: true`. */
export const availabilitySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['available'],
  properties: {
    available: { type: 'boolean' },
    until: {
      type: 'string',
      maxLength: LIMITS.timestampLength,
      format: 'date-time',
      description: 'A snooze ends by itself at this instant (RFC 3339, in the future)',
    },
    reason: text,
  },
} as const;

export const availabilityViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['productId', 'available'],
  properties: {
    productId: { type: 'string' },
    available: { type: 'boolean' },
    until: timestamp,
    reason: { type: 'string' },
  },
} as const;

/** One menu to many locations. */
export const menuPublishSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['locationIds', 'menu'],
  properties: {
    locationIds: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.publishLocations,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 64 },
    },
    menu: { type: 'object', description: 'The menu document (see MenuDocument)' },
  },
} as const;

export const menuPublishViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['results'],
  properties: {
    results: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['locationId', 'version'],
        properties: { locationId: { type: 'string' }, version: { type: 'integer', minimum: 1 } },
      },
    },
  },
} as const;

/** A chosen modifier: an option of one of the item's groups. */
const modifierInput = {
  type: 'object',
  additionalProperties: false,
  required: ['productId'],
  properties: { productId, quantity: { type: 'integer', minimum: 1, maximum: LIMITS.quantity } },
} as const;

/**
 * A row of a location with a menu: the service names and prices it; `name` and `unitPrice` are the app's expectation.
 */
export const menuRowSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['productId', 'quantity'],
  properties: {
    productId,
    quantity: { type: 'integer', minimum: 1, maximum: LIMITS.quantity },
    notes: block(LIMITS.notesLength),
    modifiers: { type: 'array', maxItems: LIMITS.modifiersPerRow, items: modifierInput },
    name: text,
    unitPrice: price,
  },
} as const;

const menuRowsSchema = { type: 'array', minItems: 1, maxItems: LIMITS.rowsPerOrder, items: menuRowSchema } as const;

/** A customer's (or a counter) order at a location with a menu. */
export const menuOrderSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rows'],
  properties: { rows: menuRowsSchema, tableNumber: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
} as const;

export const menuRowsBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rows'],
  properties: { rows: menuRowsSchema },
} as const;

export type MenuDocument = FromSchema<typeof menuDocumentSchema>;
export type MenuOrderInput = FromSchema<typeof menuOrderSchema>;
export type MenuRowsInput = FromSchema<typeof menuRowsBodySchema>;
export type MenuView = FromSchema<typeof menuViewSchema>;
export type AvailabilityInput = FromSchema<typeof availabilitySchema>;
export type AvailabilityView = FromSchema<typeof availabilityViewSchema>;
export type MenuPublishInput = FromSchema<typeof menuPublishSchema>;
export type MenuPublishView = FromSchema<typeof menuPublishViewSchema>;
export type MenuRowInput = FromSchema<typeof menuRowSchema>;

/** One error of a menu: where (a JSON pointer into the document) and what. */
export interface MenuError {
  pointer: string;
  detail: string;
}

// the document with every error (a 422 lists them all); the other bodies with their first (a 400, as elsewhere)
const validateDocument = addFormats(new Ajv({ allErrors: true, strict: true })).compile<MenuDocument>(
  menuDocumentSchema,
);
const firstFault = addFormats(new Ajv({ allErrors: false, strict: true }));
const compile = <T>(schema: object) => firstFault.compile<T>(schema);

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

function menuErrorOf(error: ErrorObject): MenuError {
  if (error.keyword === 'additionalProperties') {
    const field = String(error.params.additionalProperty);
    return { pointer: `${error.instancePath}/${escapePointer(field)}`, detail: 'is not a field of the menu' };
  }
  if (error.keyword === 'required')
    return { pointer: `${error.instancePath}/${String(error.params.missingProperty)}`, detail: 'is required' };
  if (error.keyword === 'format')
    return { pointer: error.instancePath, detail: 'must be text without control characters or bidirectional controls' };
  return { pointer: error.instancePath, detail: error.message ?? 'is invalid' };
}

/** A menu document's shape: the document, or every error of its shape. */
export function checkMenuShape(body: unknown): { menu: MenuDocument } | { errors: MenuError[] } {
  if (validateDocument(body)) return { menu: body };
  return { errors: (validateDocument.errors ?? []).map(menuErrorOf) };
}

/** The menu's request bodies but the document (checked whole, above): the first fault is a 400, as elsewhere. */
export const menuValidators = {
  order: compile<MenuOrderInput>(menuOrderSchema),
  rows: compile<MenuRowsInput>(menuRowsBodySchema),
  availability: compile<AvailabilityInput>(availabilitySchema),
  publish: compile<MenuPublishInput>(menuPublishSchema),
};
