/**
 * The operator surfaces' response bodies (locations, presence, sessions, webhooks, operators, the
 * audit log), as JSON Schema, with their TypeScript types derived from them (json-schema-to-ts);
 * the views of domain/views.ts produce them. The register interface's records are in responses.ts.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { positiveInt, timestamp } from './shared-shapes';

const duration = {
  type: 'string',
  pattern: '^[0-9]+(ms|s|m|h|d)?$',
  description: 'A duration: `90s`, `15m`, `2h` (a bare number is milliseconds)',
} as const;

/** A location as the operator sees it, with its presence and pause (what `location` events carry). */
export const locationViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'failureThreshold', 'online', 'since', 'paused'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    failureThreshold: { ...positiveInt, description: 'Failure count at which an order stays FAILED until recovered' },
    online: {
      type: 'boolean',
      description: 'A register holds an event stream, or made a request within PRESENCE_WINDOW',
    },
    since: {
      ...timestamp,
      description: 'When the current `online` state began (the creation time, for a location never seen)',
    },
    paused: { type: 'boolean', description: 'Customers are refused (409 `Location not accepting orders`)' },
    pausedUntil: { ...timestamp, description: 'When the pause ends by itself; absent for a pause without end' },
    pauseReason: { type: 'string', description: 'Why the location is paused, when it is' },
    orderDeadline: {
      ...duration,
      description: "The location's own order deadline, overriding ORDER_DEADLINE (`0`: none)",
    },
  },
} as const;

/** What an operator's stream sends as a `location` event: the location as it is now, and what changed. */
export const locationChangeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['location', 'change'],
  properties: {
    location: locationViewSchema,
    change: { type: 'string', enum: ['online', 'offline', 'paused', 'resumed'] },
  },
} as const;

/** A register seen within the presence window. */
export const presenceRegisterSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sessionId', 'deviceId', 'lastSeenAt', 'streams'],
  properties: {
    sessionId: { type: 'string' },
    deviceId: { type: 'string' },
    lastSeenAt: {
      ...timestamp,
      description:
        'Its last request, or now while it holds a stream (to the write-behind pace: a quarter of PRESENCE_WINDOW)',
    },
    streams: { type: 'integer', minimum: 0, description: 'Event streams it holds, across the API nodes' },
  },
} as const;

export const presenceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['online', 'since', 'registers'],
  properties: {
    online: { type: 'boolean' },
    since: { ...timestamp, description: 'When the current state began' },
    registers: {
      type: 'array',
      items: presenceRegisterSchema,
      description: 'Register (SERVICE) sessions seen within PRESENCE_WINDOW',
    },
  },
} as const;

const sessionViewProperties = {
  sessionId: { type: 'string' },
  type: { type: 'string', enum: ['SERVICE', 'CUSTOMER'] },
  locationId: { type: 'string' },
  deviceId: { type: 'string', description: 'SERVICE sessions: the register device' },
  userNumber: { ...positiveInt, description: "CUSTOMER sessions: the customer's user number" },
  tableNumber: { ...positiveInt, description: 'CUSTOMER sessions: the table, when given' },
  createdAt: timestamp,
  expiresAt: { ...timestamp, description: 'Absent when the session does not expire' },
  closedAt: { ...timestamp, description: 'Set when the session was closed; its keys then answer as unknown keys' },
  keyRotatedAt: { ...timestamp, description: 'When the key was last rotated' },
  previousKeyExpiresAt: { ...timestamp, description: 'Until when the key replaced by the last rotation kept working' },
} as const;

/** A session as the admin API shows it: never its key, never the key's hash. */
export const sessionViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sessionId', 'type', 'locationId', 'createdAt'],
  properties: sessionViewProperties,
} as const;

/** The issued shape (auth/keys.ts API_KEY_SHAPE): 32 random bytes and a MAC under the deployment's secret. */
const apiKey = {
  type: 'string',
  pattern: '^pos_[A-Za-z0-9_-]{64}$',
  description:
    'The API key, shown this once; only its hash is stored. `pos_` and 64 base64url ' +
    "characters: 32 random bytes and a MAC under the deployment's `API_KEY_SECRET`",
} as const;

/** A session just created, with its key. */
export const issuedSessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sessionId', 'type', 'locationId', 'createdAt', 'apiKey'],
  properties: { ...sessionViewProperties, apiKey },
} as const;

/** A session whose key was just rotated: the new key, and until when the old one still works. */
export const rotatedSessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sessionId', 'type', 'locationId', 'createdAt', 'apiKey', 'keyRotatedAt', 'previousKeyExpiresAt'],
  properties: { ...sessionViewProperties, apiKey },
} as const;

const webhookViewProperties = {
  id: { type: 'string', description: 'The subscription id' },
  url: { type: 'string', description: 'http(s) URL of the endpoint' },
  events: { type: 'array', items: { type: 'string' }, description: 'The event types delivered' },
  locationIds: {
    type: 'array',
    items: { type: 'string' },
    description: 'The locations whose events are delivered; absent: every location',
  },
  description: { type: 'string' },
  createdAt: timestamp,
  updatedAt: timestamp,
  previousSecretExpiresAt: {
    ...timestamp,
    description: 'Until when the secret replaced by the last rotation still signs deliveries (beside the new one)',
  },
  disabledAt: {
    ...timestamp,
    description: 'Set when deliveries stopped: after WEBHOOK_DISABLE_AFTER of failures, or a 410 Gone',
  },
  disabledReason: { type: 'string', description: 'Why the endpoint was disabled' },
  failingSince: { ...timestamp, description: 'The first failed attempt since the last success, while failures last' },
} as const;

/** A webhook subscription as the admin API shows it: never its secret. */
export const webhookViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url', 'events', 'createdAt', 'updatedAt'],
  properties: webhookViewProperties,
} as const;

const webhookSecret = {
  type: 'string',
  pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
  description:
    'The signing secret, shown this once: `whsec_` and base64 of 32 ' +
    'random bytes; stored encrypted under the server key',
} as const;

/** A subscription just created, or whose secret was just rotated: with its secret. */
export const issuedWebhookSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url', 'events', 'createdAt', 'updatedAt', 'secret'],
  properties: { ...webhookViewProperties, secret: webhookSecret },
} as const;

/** One delivery attempt in the log. */
export const webhookDeliverySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'webhookId', 'type', 'attempt', 'outcome', 'durationMs', 'at'],
  properties: {
    id: { type: 'string', description: 'The attempt, for redelivery' },
    webhookId: {
      type: 'string',
      description: 'The `webhook-id` header: the same on every attempt of one event to one endpoint',
    },
    type: { type: 'string', description: 'The event type' },
    attempt: { ...positiveInt, description: 'The attempt number (a redelivery starts again at 1)' },
    outcome: {
      type: 'string',
      enum: ['delivered', 'retrying', 'failed', 'disabled', 'dropped'],
      description:
        '`dropped`: taken out unattempted, the subscription having more than ' +
        '`WEBHOOK_MAX_PENDING` deliveries waiting (redeliverable)',
    },
    statusCode: { type: 'integer', minimum: 100, maximum: 599, description: "The endpoint's answer, when it answered" },
    error: { type: 'string', description: 'Why no answer came (timeout, refused address, connection error)' },
    durationMs: { type: 'integer', minimum: 0 },
    at: timestamp,
    nextRetryAt: { ...timestamp, description: 'When the next attempt is due (outcome `retrying`)' },
    redelivery: { type: 'boolean', const: true, description: 'Sent by a redeliver request' },
  },
} as const;

/** A delivery queued (a test event, a redelivery). */
export const queuedDeliverySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['webhookId', 'type'],
  properties: { webhookId: webhookDeliverySchema.properties.webhookId, type: webhookDeliverySchema.properties.type },
} as const;

const role = {
  type: 'string',
  enum: ['viewer', 'manager', 'admin'],
  description: 'viewer reads; manager also acts on its locations; admin does everything',
} as const;
const locationIds = {
  type: 'array',
  items: { type: 'string' },
  minItems: 1,
  description: 'The locations it covers; absent: all locations',
} as const;

const operatorViewProperties = {
  id: { type: 'string' },
  name: { type: 'string' },
  role,
  locationIds,
  createdAt: timestamp,
  tokenRotatedAt: { ...timestamp, description: 'When its token was last replaced' },
} as const;

/** An operator account as the admin API shows it: never its token, never the token's hash. */
export const operatorViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'role', 'createdAt'],
  properties: operatorViewProperties,
} as const;

/** An operator just created, or whose token was just replaced: with its token, shown this once. */
export const issuedOperatorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'role', 'createdAt', 'token'],
  properties: {
    ...operatorViewProperties,
    token: {
      ...apiKey,
      description: 'The bearer token, shown this once; only its hash is stored. The shape of an API key.',
    },
  },
} as const;

/** Who a token is: what the board reads to offer only what the role allows. */
export const currentOperatorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'role'],
  properties: {
    id: { type: 'string', description: 'Absent for the root credential (`ADMIN_TOKEN`)' },
    name: { type: 'string', description: '`root` for `ADMIN_TOKEN`' },
    role,
    locationIds,
  },
} as const;

/** A value an audit record names: an id, a name, a role, a URL, a switch, a list of ids or types. */
const auditValue = {
  oneOf: [{ type: 'string' }, { type: 'integer' }, { type: 'boolean' }, { type: 'array', items: { type: 'string' } }],
} as const;
const auditFields = {
  type: 'object',
  additionalProperties: auditValue,
  description:
    "Fields by name: `role`, `locationIds` or `allLocations: true`, a subscription's `url` (query values redacted), `events`, ...",
} as const;

/** What a write changed, cleaned of secrets (never a key, token or webhook secret). */
export const auditChangeSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'The id (or number) of what the write created' },
    before: { ...auditFields, description: `The changed or removed fields as they were. ${auditFields.description}` },
    after: {
      ...auditFields,
      description: `The created or changed fields as the write left them. ${auditFields.description}`,
    },
  },
} as const;

/** One record of the audit log: an operator write. Never a key, token or secret. */
export const auditRecordSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'at', 'operatorName', 'role', 'method', 'route', 'targets', 'status', 'requestId'],
  properties: {
    id: { type: 'string' },
    at: timestamp,
    operatorId: { type: 'string', description: 'Absent for the root credential (`ADMIN_TOKEN`)' },
    operatorName: { type: 'string', description: '`root` for `ADMIN_TOKEN`' },
    role,
    method: { type: 'string' },
    route: { type: 'string', description: 'The route pattern, e.g. `/admin/v1/locations/:id/orders/:number/recover`' },
    targets: {
      type: 'object',
      description: 'The ids the path named, by parameter (`id` a location, `number`, `sessionId`, `operatorId`, ...)',
      additionalProperties: { type: 'string' },
    },
    locationId: { type: 'string', description: 'The location the write concerns, when one' },
    status: { type: 'integer', description: 'The status of the answer' },
    requestId: {
      type: 'string',
      description:
        "The service's id of the request: the `X-Request-Id` of its answer, and the `requestId` of its log lines",
    },
    claimedRequestId: {
      type: 'string',
      description: 'The `X-Request-Id` the caller sent, when it sent one: what the caller claims, kept apart',
    },
    change: auditChangeSchema,
    purgeAt: { ...timestamp, description: 'When retention removes the record (`AUDIT_RETENTION` after it)' },
    seq: {
      type: 'integer',
      minimum: 1,
      description: "The record's place in the log's hash chain (absent on records written before the chain)",
    },
    prevHash: {
      type: 'string',
      pattern: '^[0-9a-f]{64}$',
      description: 'The `hash` of the record before it (`seq` - 1), or 64 zeros for the first',
    },
    hash: {
      type: 'string',
      pattern: '^[0-9a-f]{64}$',
      description:
        'SHA-256, in hex, of `prevHash`, a newline, and this record as JSON without ' +
        '`hash`, `fullHash`, `purgeAt` and `claimedRequestId` (RFC 8785 canonical ' +
        'form): `npm run admin -- audit verify` checks the chain',
    },
    fullHash: {
      type: 'string',
      pattern: '^[0-9a-f]{64}$',
      description:
        'SHA-256, in hex, of `hash`, a newline, and `{purgeAt, claimedRequestId}` as canonical ' +
        'JSON: every stored field is under a hash (records written since 0.5.0)',
    },
  },
} as const;

/** The outcome of a check of the audit log's hash chain, over one stretch of it. */
export const auditVerificationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['intact', 'checked', 'complete'],
  properties: {
    intact: {
      type: 'boolean',
      description: 'Whether every record checked matches its hash and follows the one before it',
    },
    checked: { type: 'integer', minimum: 0, description: 'Records checked in this stretch' },
    firstSeq: { type: 'integer', description: 'The first record checked' },
    lastSeq: {
      type: 'integer',
      description: 'The last record checked and found intact: the `after` of the next stretch',
    },
    complete: {
      type: 'boolean',
      description:
        'Whether the check reached the newest record (or a broken link); `false`: call again with `after=lastSeq`',
    },
    brokenAt: {
      type: 'object',
      additionalProperties: false,
      required: ['reason'],
      description: 'The first broken link',
      properties: {
        seq: { type: 'integer', description: 'Where the chain breaks; absent for a record that has no place in it' },
        id: { type: 'string', description: 'The record found there, when one is' },
        reason: { type: 'string' },
      },
    },
  },
} as const;

export type LocationView = FromSchema<typeof locationViewSchema>;
export type PresenceView = FromSchema<typeof presenceSchema>;
export type LocationChangeView = FromSchema<typeof locationChangeSchema>;
export type PresenceRegister = FromSchema<typeof presenceRegisterSchema>;
export type SessionView = FromSchema<typeof sessionViewSchema>;
export type IssuedSession = FromSchema<typeof issuedSessionSchema>;
export type RotatedSession = FromSchema<typeof rotatedSessionSchema>;
export type WebhookView = FromSchema<typeof webhookViewSchema>;
export type IssuedWebhook = FromSchema<typeof issuedWebhookSchema>;
export type WebhookDelivery = FromSchema<typeof webhookDeliverySchema>;
export type QueuedDelivery = FromSchema<typeof queuedDeliverySchema>;
export type OperatorView = FromSchema<typeof operatorViewSchema>;
export type IssuedOperator = FromSchema<typeof issuedOperatorSchema>;
export type AuditRecord = FromSchema<typeof auditRecordSchema>;
export type AuditChange = FromSchema<typeof auditChangeSchema>;
export type AuditVerification = FromSchema<typeof auditVerificationSchema>;
export type CurrentOperator = FromSchema<typeof currentOperatorSchema>;
