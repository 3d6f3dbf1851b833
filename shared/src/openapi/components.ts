/**
 * The named parts of the OpenAPI document: schemas (the very objects the code validates and
 * serialises with, by name), the event-stream item schemas, the security schemes and headers.
 */
import {
  availabilitySchema,
  availabilityViewSchema,
  menuDocumentSchema,
  menuOrderSchema,
  menuPublishSchema,
  menuPublishViewSchema,
  menuRowSchema,
  menuRowsBodySchema,
  menuViewSchema,
} from '../schemas/menu';
import { SESSION_NOT_VALID_BODY } from '../auth/session-rules';
import {
  commandBodySchema,
  customerCommandBodySchema,
  customerSessionSchema,
  failureReportSchema,
  locationSchema,
  locationUpdateSchema,
  orderSchema,
  pauseSchema,
  rowSchema,
  rowsBodySchema,
  serviceSessionSchema,
  statusUpdateSchema,
} from '../schemas/requests';
import {
  commandRecordSchema,
  healthSchema,
  issuedSessionSchema,
  locationChangeSchema,
  locationViewSchema,
  operatorOrderRecordSchema,
  presenceRegisterSchema,
  presenceSchema,
  orderRecordSchema,
  orderRowSchema,
  problemBodySchema,
  readinessSchema,
  rotatedSessionSchema,
  sessionViewSchema,
} from '../schemas/responses';

export type JsonObject = Record<string, unknown>;

/** The stream's event id: the cursor `<orderNumber>.<commandNumber>`. */
const eventId = {
  type: 'string',
  pattern: '^[0-9]+\\.[0-9]+$',
  description: 'The cursor `<orderNumber>.<commandNumber>`: the highest of each announced so far on this stream',
};

const sseEvent = (name: string, record: string, description: string) => ({
  type: 'object',
  description,
  additionalProperties: false,
  required: ['event', 'id', 'data'],
  properties: {
    event: { type: 'string', const: name },
    id: eventId,
    data: {
      type: 'string',
      description: `The ${record} as JSON, on one \`data:\` line`,
      contentMediaType: 'application/json',
      contentSchema: { $ref: `#/components/schemas/${record}` },
    },
  },
});

export const orderEventSchema = sseEvent(
  'order',
  'OrderRecord',
  "Sent whenever one of the location's orders changes state (it becomes PLACED, or leaves PLACED): react to `state`.",
);
export const commandEventSchema = sseEvent('command', 'CommandRecord', 'Sent once, when a command is created.');
/** The operator's stream: the same events, each order with its failure count. */
export const operatorOrderEventSchema = sseEvent(
  'order',
  'OperatorOrderRecord',
  "Sent whenever one of the location's orders changes state; the order with its failure count.",
);

/** Operators' streams only: a location's presence or pause changed. */
export const locationEventSchema = sseEvent(
  'location',
  'LocationChange',
  "Operators' streams only: the location went online or offline, paused or resumed (docs/presence-and-deadlines.md).",
);

/** The JSON 401: a recognised key whose session expired or is of the wrong type. */
export const unauthorizedBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['message', 'uid'],
  properties: { message: { type: 'string', const: 'Unauthorized' }, uid: { type: 'null' } },
};

/** The text/plain 401: a missing, empty, unknown, revoked or retired key. The body is this exact text. */
export const sessionNotValidBodySchema = { type: 'string', const: SESSION_NOT_VALID_BODY };

/** Component schemas by name. Wherever one of these objects appears in the document, it is a $ref. */
export const NAMED_SCHEMAS: [string, object][] = [
  ['OrderRecord', orderRecordSchema],
  ['OperatorOrderRecord', operatorOrderRecordSchema],
  ['OrderRow', orderRowSchema],
  ['CommandRecord', commandRecordSchema],
  ['OrderEvent', orderEventSchema],
  ['OperatorOrderEvent', operatorOrderEventSchema],
  ['CommandEvent', commandEventSchema],
  ['LocationEvent', locationEventSchema],
  ['Location', locationViewSchema],
  ['LocationChange', locationChangeSchema],
  ['Presence', presenceSchema],
  ['PresenceRegister', presenceRegisterSchema],
  ['PauseInput', pauseSchema],
  ['Session', sessionViewSchema],
  ['IssuedSession', issuedSessionSchema],
  ['RotatedSession', rotatedSessionSchema],
  ['Problem', problemBodySchema],
  ['UnauthorizedBody', unauthorizedBodySchema],
  ['Health', healthSchema],
  ['Readiness', readinessSchema],
  ['StatusUpdate', statusUpdateSchema],
  ['FailureReport', failureReportSchema],
  ['RowInput', rowSchema],
  ['OrderInput', orderSchema],
  ['RowsInput', rowsBodySchema],
  ['CommandInput', commandBodySchema],
  ['CustomerCommandInput', customerCommandBodySchema],
  ['LocationInput', locationSchema],
  ['LocationUpdate', locationUpdateSchema],
  ['ServiceSessionInput', serviceSessionSchema],
  ['CustomerSessionInput', customerSessionSchema],
  ['MenuDocument', menuDocumentSchema],
  ['Menu', menuViewSchema],
  ['MenuRowInput', menuRowSchema],
  ['MenuOrderInput', menuOrderSchema],
  ['MenuRowsInput', menuRowsBodySchema],
  ['AvailabilityInput', availabilitySchema],
  ['Availability', availabilityViewSchema],
  ['MenuPublishInput', menuPublishSchema],
  ['MenuPublishResults', menuPublishViewSchema],
];

const byIdentity = new Map<object, string>(NAMED_SCHEMAS.map(([name, schema]) => [schema, name]));

export const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });

/**
 * A plain copy of `value` for the document, in which every named schema (other than `self`) is
 * a $ref to its component: one definition of each shape, in the code and in the document.
 */
export function withRefs(value: unknown, self?: object): unknown {
  if (Array.isArray(value)) return value.map((item) => withRefs(item));
  if (value === null || typeof value !== 'object') return value;
  const name = value !== self ? byIdentity.get(value) : undefined;
  if (name) return ref(name);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withRefs(item)]));
}

export function componentSchemas(): JsonObject {
  return Object.fromEntries(NAMED_SCHEMAS.map(([name, schema]) => [name, withRefs(schema, schema)]));
}

export const SECURITY_SCHEMES = {
  registerKey: {
    type: 'apiKey',
    in: 'header',
    name: 'api_key',
    description:
      "A SERVICE session's key (a register integration), issued by `POST /admin/v1/locations/{id}/service-sessions`.",
  },
  registerKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'api_key',
    description: 'The same key as a query parameter, used only when the header is absent.',
  },
  customerKey: {
    type: 'apiKey',
    in: 'header',
    name: 'api_key',
    description:
      "A CUSTOMER session's key (a customer app), issued by `POST /admin/v1/locations/{id}/customer-sessions`.",
  },
  customerKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'api_key',
    description: 'The same key as a query parameter, used only when the header is absent.',
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      "The deployment's `ADMIN_TOKEN` (root: an admin of every location), or an operator's " +
      "token (its role and locations; see each operation's `x-roles`).",
  },
  adminBasic: {
    type: 'http',
    scheme: 'basic',
    description:
      "Bull Board in a browser: any user name, the admin token (or an admin operator's token) as the password.",
  },
} as const;

/** Response headers: the name on the wire, and the header object. */
const header = (wire: string, description: string, schema: JsonObject, required = true) => ({
  wire,
  object: { description, required, schema },
});

export const HEADERS = {
  XRequestId: header(
    'X-Request-Id',
    "The request's id, a UUID of the service's own. Every log line of the request carries it; a caller's " +
      '`X-Request-Id` (1 to 100 of `A-Za-z0-9._-`) is logged beside it as `claimedRequestId`.',
    { type: 'string' },
  ),
  RetryAfter: header('Retry-After', 'Seconds to wait before retrying', { type: 'string', pattern: '^[0-9]+$' }),
  AdminChallenge: header('WWW-Authenticate', 'The admin token is asked for as a bearer token', {
    type: 'string',
    const: 'Bearer realm="pos-admin"',
  }),
  BoardChallenge: header(
    'WWW-Authenticate',
    'A browser is asked for Basic credentials (the admin token as the password)',
    {
      type: 'string',
      const: 'Basic realm="pos-admin"',
    },
  ),
  Allow: header('Allow', 'The methods the path has', { type: 'string' }),
  RetryAfterOutstanding: header(
    'Retry-After',
    'On the 409 of an outstanding Idempotency-Key: seconds before asking again',
    { type: 'string', pattern: '^[0-9]+$' },
    false,
  ),
  IdempotentReplayed: header(
    'Idempotent-Replayed',
    '`true` on the kept answer to an earlier request with the same Idempotency-Key',
    { type: 'string', const: 'true' },
    false,
  ),
  RateLimitPolicy: header(
    'RateLimit-Policy',
    'With `RATE_LIMIT` set: the per-key policy, `"per-key";q=<requests>;w=<seconds>`',
    { type: 'string' },
    false,
  ),
  RateLimit: header(
    'RateLimit',
    'With `RATE_LIMIT` set: what is left, `"per-key";r=<remaining>;t=<seconds to reset>`',
    { type: 'string' },
    false,
  ),
  ETag: header(
    'ETag',
    "The menu's version as answered (docs/menu.md): send it back in " +
      '`If-None-Match` (a 304 while it holds) or `If-Match`',
    { type: 'string' },
  ),
  Link: header(
    'Link',
    'On a full page, the next one: `<path?…&after=…>; rel="next"`. A shorter page is the last.',
    { type: 'string' },
    false,
  ),
};

export type HeaderName = keyof typeof HEADERS;

/** The `headers` of a response: X-Request-Id (every answer has one) and the given ones, by wire name. */
export function responseHeaders(names: HeaderName[]): JsonObject {
  return Object.fromEntries(
    (['XRequestId', ...names] as HeaderName[]).map((name) => [
      HEADERS[name].wire,
      { $ref: `#/components/headers/${name}` },
    ]),
  );
}

export function componentHeaders(): JsonObject {
  return Object.fromEntries(Object.entries(HEADERS).map(([name, { object }]) => [name, object]));
}
