/**
 * Every operation of the HTTP surface, one entry each: what it takes and what it answers beyond
 * what its access and traits bring (see document.ts). The route tests prove this table and the
 * routers agree, path for path and method for method.
 */
import type { Role } from '../auth/roles';
import type { BoundAccess } from '../auth/scope';
import { problems, Problem } from '../domain/problem';
import { historyQuerySchema } from '../schemas/history';
import {
  commandBodySchema,
  customerCommandBodySchema,
  customerSessionSchema,
  failureReportSchema,
  idPageQuerySchema,
  locationListQuerySchema,
  locationSchema,
  locationUpdateSchema,
  numberPageQuerySchema,
  orderListQuerySchema,
  operatorSchema,
  operatorUpdateSchema,
  auditQuerySchema,
  auditVerifyQuerySchema,
  orderSchema,
  pauseSchema,
  rowsBodySchema,
  serviceSessionSchema,
  statusUpdateSchema,
  webhookSchema,
  webhookUpdateSchema,
} from '../schemas/requests';
import {
  commandRecordSchema,
  healthSchema,
  issuedWebhookSchema,
  queuedDeliverySchema,
  webhookDeliverySchema,
  webhookViewSchema,
  issuedSessionSchema,
  locationViewSchema,
  operatorOrderRecordSchema,
  operatorViewSchema,
  issuedOperatorSchema,
  auditRecordSchema,
  auditVerificationSchema,
  currentOperatorSchema,
  orderRecordSchema,
  presenceSchema,
  readinessSchema,
  rotatedSessionSchema,
  sessionViewSchema,
} from '../schemas/responses';
import { commandEventSchema, HeaderName, JsonObject, locationEventSchema, operatorOrderEventSchema, orderEventSchema } from './components';
import { EXAMPLE_IDS, exampleProblems as ex, examples } from './examples';

export type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** Who may call: each brings its 401 (and the session look-up brings the store's answers). */
export type Access = 'public' | 'register' | 'customer' | 'admin' | 'board';

/** What an operation does on the way; each brings the responses it can cause (TRAITS in document.ts). */
export type Trait = 'store' | 'queued' | 'jsonBody' | 'paged' | 'idempotent' | 'rateLimited';

export type Tag = 'Register' | 'Event stream' | 'Customer app' | 'Admin' | 'Operations' | 'Documentation';

export interface MediaSpec {
  schema: unknown;
  example?: unknown;
}

export interface Success {
  status: 200 | 201 | 202 | 204;
  description: string;
  /** By media type; absent for an empty body. */
  content?: Record<string, MediaSpec>;
  headers?: HeaderName[];
}

export interface ParamSpec {
  name: string;
  in: 'path' | 'header';
  description: string;
  schema: JsonObject;
  required?: boolean;
  example?: unknown;
}

export interface OperationSpec {
  id: string;
  method: Method;
  /** `{base}` stands for BASE_PATH. */
  path: string;
  tag: Tag;
  summary: string;
  description?: string;
  access: Access;
  /** The least operator role that may call it (auth/roles.ts); every `admin` and `board` operation has one. */
  role?: Role;
  /**
   * What an operator bound to locations may do with it (auth/scope.ts); every `admin` and `board`
   * operation says. `boundNote`: how `locations` applies, where it is more than the location its path names.
   */
  bound?: BoundAccess;
  boundNote?: string;
  traits?: Trait[];
  params?: ParamSpec[];
  /** An object schema whose properties are the query parameters (the one the route validates with). */
  query?: { properties: object; required?: readonly string[] };
  body?: { schema: object; example?: unknown; required?: boolean };
  ok: Success;
  /** Problems it answers beyond those of its access and traits; each is also an example. */
  problems?: Problem[];
}

export const json = (schema: unknown, example?: unknown): Record<string, MediaSpec> => ({
  'application/json': example === undefined ? { schema } : { schema, example },
});

const arrayOf = (items: unknown) => ({ type: 'array', items });

const P = {
  orderNumber: {
    name: 'number',
    in: 'path',
    description: "The order's number (a positive integer; anything else is a 400)",
    schema: { type: 'integer', minimum: 1 },
    example: 7,
  },
  commandNumber: {
    name: 'number',
    in: 'path',
    description: "The command's number (a positive integer; anything else is a 400)",
    schema: { type: 'integer', minimum: 1 },
    example: 3,
  },
  locationId: { name: 'id', in: 'path', description: "The location's id", schema: { type: 'string' }, example: EXAMPLE_IDS.location },
  webhookId: { name: 'id', in: 'path', description: "The webhook subscription's id", schema: { type: 'string' }, example: EXAMPLE_IDS.webhook },
  deliveryId: { name: 'deliveryId', in: 'path', description: 'The id of a delivery attempt in the log', schema: { type: 'string' }, example: EXAMPLE_IDS.delivery },
  operatorId: { name: 'operatorId', in: 'path', description: "The operator's id", schema: { type: 'string' }, example: EXAMPLE_IDS.operator },
  sessionId: { name: 'sessionId', in: 'path', description: "The session's id", schema: { type: 'string' }, example: EXAMPLE_IDS.session },
  lastEventId: {
    name: 'Last-Event-ID',
    in: 'header',
    description: 'The last event id received (`<orderNumber>.<commandNumber>`), as a browser EventSource sends it; wins over the query parameters. Empty counts as absent.',
    schema: { type: 'string', pattern: '^[0-9]+\\.[0-9]+$' },
    required: false,
    example: '12.3',
  },
} satisfies Record<string, ParamSpec>;

/** The stream's reconnection cursor, in the query (docs/register-interface.md, part 4.3). */
const streamCursorQuery = {
  properties: {
    orderNumber: { type: 'integer', minimum: 0, description: 'The last processed order number; the replay starts above it' },
    commandNumber: { type: 'integer', minimum: 0, description: 'The last processed command number; the replay starts above it' },
  },
};

const html = { 'text/html': { schema: { type: 'string' } } };

/** A stream's answer: the sequence of its events, orders in the given form (the register's or the operator's). */
const eventStream = (orderEvent: object, order: object, more: object[] = []): Success => ({
  status: 200,
  description: 'The event stream (`Cache-Control: no-cache`, `X-Accel-Buffering: no`)',
  content: {
    'text/event-stream': {
      schema: arrayOf({ oneOf: [orderEvent, commandEventSchema, ...more] }),
      example: [
        { event: 'order', id: '7.0', data: JSON.stringify(order) },
        { event: 'command', id: '7.3', data: JSON.stringify(examples.command) },
      ],
    },
  },
});

/** What a stream's request may answer besides its events: a bad cursor, Redis not answering. */
const STREAM_PROBLEMS = [
  problems.illegalArgument('orderNumber must be a non-negative integer'),
  problems.illegalArgument('Last-Event-ID must be <orderNumber>.<commandNumber>, two non-negative integers'),
  problems.unavailable('Redis did not answer in time'),
];
const paged = 'One page of the list: at most `limit` items after `after`.';

/** The files the docs page names: Swagger UI's (from the swagger-ui-dist package) and its start script. */
export const DOCS_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png', 'docs.js'] as const;

export const OPERATIONS: OperationSpec[] = [
  // ---- Register (docs/register-interface.md, part 4) ----
  {
    id: 'listWork',
    method: 'get',
    path: '{base}/orders/location',
    tag: 'Register',
    summary: "List the location's work",
    description: 'A bare array: the PLACED orders by ascending number, then the live commands by ascending number (a record with `rows` is an order).',
    access: 'register',
    ok: {
      status: 200,
      description: 'The work',
      content: json(arrayOf({ oneOf: [orderRecordSchema, commandRecordSchema] }), [examples.placedOrder, examples.command]),
    },
  },
  {
    id: 'updateOrderStatus',
    method: 'put',
    path: '{base}/orders/{number}/statusupdate',
    tag: 'Register',
    summary: 'Update the status of an order',
    description:
      'COMPLETED and ABORTED from PLACED (`completeTime` set); FAILED is a failure report; PLACED from FAILED is operator recovery. ' +
      'Repeating the current state answers 200 and changes nothing; any other move is a 409 naming the current state.',
    access: 'register',
    traits: ['jsonBody', 'queued'],
    params: [P.orderNumber],
    body: { schema: statusUpdateSchema, example: { newState: 'COMPLETED' } },
    ok: { status: 200, description: 'The updated order', content: json(orderRecordSchema, examples.completedOrder) },
    problems: [problems.noEnumConstant('EATEN'), problems.orderNotFound(), ex.orderNumber, problems.conflict('Order is COMPLETED; cannot move to ABORTED')],
  },
  {
    id: 'reportOrderFailure',
    method: 'post',
    path: '{base}/orders/{number}/failure',
    tag: 'Register',
    summary: 'Report a processing failure',
    description:
      "Adds one to the order's failure count and sets `failedTime`. Below the location's failure threshold the order goes back to PLACED " +
      '(and is announced again); at the threshold it stays FAILED until an operator recovers it. A report on a FAILED order changes nothing.',
    access: 'register',
    traits: ['jsonBody', 'queued'],
    params: [P.orderNumber],
    body: { schema: failureReportSchema, example: { reason: 'printer jam' }, required: false },
    ok: { status: 200, description: 'The order after the report', content: json(orderRecordSchema, examples.placedOrder) },
    problems: [problems.orderNotFound(), ex.orderNumber, problems.conflict('Order is COMPLETED; cannot report a failure')],
  },
  {
    id: 'acknowledgeCommand',
    method: 'delete',
    path: '{base}/commands/{number}',
    tag: 'Register',
    summary: 'Acknowledge a command',
    description: 'Removes a live command; it no longer appears in the work or the replay.',
    access: 'register',
    params: [P.commandNumber],
    ok: { status: 200, description: 'The acknowledged command', content: json(commandRecordSchema, examples.command) },
    problems: [problems.commandNotFound(), problems.illegalArgument('Command number must be a positive integer')],
  },
  {
    id: 'streamWork',
    method: 'get',
    path: '{base}/notifications/service/stream',
    tag: 'Event stream',
    summary: "Follow the location's work as server-sent events",
    description:
      'Starts with `retry: 1000`, replays the PLACED orders above `orderNumber` and the live commands above `commandNumber` (all when absent), ' +
      'then streams live events with no gap and no repeat. Events: `order` (the order record, whenever an order becomes PLACED or leaves it) and ' +
      '`command` (the command record, when created); each id is the cursor `<orderNumber>.<commandNumber>`. A `: keepalive` comment comes every ' +
      '`SSE_KEEPALIVE` (15 s). The server ends the stream after `SSE_TIMEOUT` (30 min), when the session is closed or expires, when the key ' +
      "it was opened with is retired by a rotation, and at shutdown: reconnect with the cursor, then poll the work (part 6.2).\n\n" +
      'The body is described as the sequence of its events (as OpenAPI 3.2 describes sequential media types): each item is one event, ' +
      'its `data` the record as JSON.',
    access: 'register',
    params: [P.lastEventId],
    query: streamCursorQuery,
    ok: eventStream(orderEventSchema, examples.placedOrder),
    problems: STREAM_PROBLEMS,
  },

  // ---- Customer app ----
  {
    id: 'createCustomerOrder',
    method: 'post',
    path: '{base}/customer/orders',
    tag: 'Customer app',
    summary: 'Open an order (SELECTING)',
    description:
      'Registers do not see it until it is submitted. `userNumber` comes from the session, `tableNumber` from the body or else the session. ' +
      'A session has at most `CUSTOMER_MAX_OPEN_ORDERS` (5) open orders (SELECTING, NEW, PLACED or FAILED); beyond, a 429.',
    access: 'customer',
    traits: ['jsonBody'],
    body: { schema: orderSchema, example: { rows: [{ productId: 'sku-1', name: 'Burger', quantity: 2, unitPrice: 1290 }] } },
    ok: { status: 201, description: 'The order, SELECTING', content: json(orderRecordSchema, examples.selectingOrder) },
    problems: [
      ex.locationNotFound,
      problems.tooManyRequests('This session already has 5 open orders; another can be opened once one is completed or aborted'),
      ex.notAccepting,
    ],
  },
  {
    id: 'getCustomerOrder',
    method: 'get',
    path: '{base}/customer/orders/{number}',
    tag: 'Customer app',
    summary: 'Read one of the session’s orders',
    access: 'customer',
    params: [P.orderNumber],
    ok: { status: 200, description: 'The order', content: json(orderRecordSchema, examples.placedOrder) },
    problems: [problems.orderNotFound(), ex.orderNumber],
  },
  {
    id: 'replaceOrderRows',
    method: 'put',
    path: '{base}/customer/orders/{number}/rows',
    tag: 'Customer app',
    summary: 'Replace the rows of a SELECTING order',
    access: 'customer',
    traits: ['jsonBody'],
    params: [P.orderNumber],
    body: { schema: rowsBodySchema, example: { rows: [{ productId: 'sku-1', name: 'Burger', quantity: 1, unitPrice: 1290, notes: 'no onions' }] } },
    ok: { status: 200, description: 'The order with its new rows', content: json(orderRecordSchema) },
    problems: [problems.orderNotFound(), ex.orderNumber, problems.conflict('Order is NEW; cannot replace rows'), problems.concurrentModification()],
  },
  ...(['finish', 'submit'] as const).map(
    (kind): OperationSpec => ({
      id: `${kind}Order`,
      method: 'post',
      path: `{base}/customer/orders/{number}/${kind}`,
      tag: 'Customer app',
      summary: kind === 'finish' ? 'Finish adding items (SELECTING to NEW)' : 'Submit the order (NEW to PLACED, announced to the registers)',
      description:
        'A transition, applied by a worker. Repeating it answers 200 and changes nothing; any other move is a 409, ' +
        'and so is a move applied after the session was closed (a close that answered leaves no order of the session PLACED).',
      access: 'customer',
      traits: ['queued'],
      params: [P.orderNumber],
      ok: { status: 200, description: 'The order after the transition', content: json(orderRecordSchema) },
      problems: [
        problems.orderNotFound(),
        ex.orderNumber,
        problems.conflict(`Order is SELECTING; cannot ${kind}`),
        problems.conflict(`Session is closed; cannot ${kind}`),
        ...(kind === 'submit' ? [ex.notAccepting] : []),
      ],
    }),
  ),
  {
    id: 'createCustomerCommand',
    method: 'post',
    path: '{base}/customer/commands',
    tag: 'Customer app',
    summary: 'Ask for the table state or the bill',
    access: 'customer',
    traits: ['jsonBody'],
    body: { schema: customerCommandBodySchema, example: { kind: 'REQUEST_BILL' } },
    ok: { status: 201, description: 'The command', content: json(commandRecordSchema, examples.command) },
    problems: [problems.validation('kind must be one of READ_TABLE_STATE, REQUEST_BILL'), ex.locationNotFound],
  },
  {
    id: 'closeOwnSession',
    method: 'delete',
    path: '{base}/customer/session',
    tag: 'Customer app',
    summary: "Close the caller's own session",
    description: 'Its PLACED orders are aborted; its key then answers the text/plain 401.',
    access: 'customer',
    traits: ['queued'],
    ok: { status: 204, description: 'Closed' },
  },

  // ---- Admin ----
  {
    id: 'listLocations',
    method: 'get',
    path: '/admin/v1/locations',
    tag: 'Admin',
    summary: 'List locations',
    description: `${paged} In creation order (by id); \`?online=false\` lists the dark ones (presence as last announced).`,
    access: 'admin',
    role: 'viewer',
    bound: 'locations',
    boundNote: 'lists its own locations only',
    traits: ['paged'],
    query: locationListQuerySchema,
    ok: { status: 200, description: 'A page of locations', content: json(arrayOf(locationViewSchema), [examples.location]) },
  },
  {
    id: 'createLocation',
    method: 'post',
    path: '/admin/v1/locations',
    tag: 'Admin',
    summary: 'Create a location',
    access: 'admin',
    role: 'admin',
    bound: 'chain',
    traits: ['jsonBody'],
    body: { schema: locationSchema, example: { name: 'Main Street', failureThreshold: 3 } },
    ok: { status: 201, description: 'The location', content: json(locationViewSchema, examples.location) },
  },
  {
    id: 'getLocation',
    method: 'get',
    path: '/admin/v1/locations/{id}',
    tag: 'Admin',
    summary: 'Read a location',
    access: 'admin',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    ok: { status: 200, description: 'The location', content: json(locationViewSchema, examples.location) },
    problems: [ex.locationNotFound],
  },
  {
    id: 'updateLocation',
    method: 'patch',
    path: '/admin/v1/locations/{id}',
    tag: 'Admin',
    summary: 'Change a location’s name, failure threshold or order deadline',
    description:
      'A new threshold holds from the next failure report on, on every worker, without a restart; orders already FAILED stay FAILED until recovered. ' +
      'A new `orderDeadline` (over `ORDER_DEADLINE`; `0`: none) holds from the next placement on.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: locationUpdateSchema, example: { failureThreshold: 5 } },
    ok: { status: 200, description: 'The location as changed', content: json(locationViewSchema, { ...examples.location, failureThreshold: 5 }) },
    problems: [ex.locationNotFound, problems.validation('body must have at least 1 field(s)')],
  },
  {
    id: 'getLocationPresence',
    method: 'get',
    path: '/admin/v1/locations/{id}/presence',
    tag: 'Admin',
    summary: "A location's presence: online, since when, and the registers seen",
    description:
      'Online while a register (SERVICE) session holds an event stream on any node, or made a request within `PRESENCE_WINDOW`. ' +
      'Read from Redis as the API nodes wrote it (each at most once per session per quarter window); `since` is the announced state\'s start.',
    access: 'admin',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    ok: { status: 200, description: 'The presence', content: json(presenceSchema, examples.presence) },
    problems: [ex.locationNotFound],
  },
  {
    id: 'pauseLocation',
    method: 'put',
    path: '/admin/v1/locations/{id}/pause',
    tag: 'Admin',
    summary: 'Pause a location: customers are refused until `until` (or until resumed)',
    description:
      "Customers' creates and submits answer 409 `Location not accepting orders` while it holds; registers, operators and counter orders work as before. " +
      'A pause with `until` ends by itself at that time. Announced as a `location` event.',
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: pauseSchema, example: { until: '2026-11-21T09:00:00.000Z', reason: 'kitchen closed' } },
    ok: { status: 200, description: 'The location, paused', content: json(locationViewSchema, examples.pausedLocation) },
    problems: [ex.locationNotFound, problems.validation('until must be in the future')],
  },
  {
    id: 'resumeLocation',
    method: 'delete',
    path: '/admin/v1/locations/{id}/pause',
    tag: 'Admin',
    summary: 'Resume a paused location',
    description: 'Customers are accepted again. Resuming a location that is not paused changes nothing.',
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    params: [P.locationId],
    ok: { status: 200, description: 'The location', content: json(locationViewSchema, examples.location) },
    problems: [ex.locationNotFound],
  },
  {
    id: 'listSessions',
    method: 'get',
    path: '/admin/v1/locations/{id}/sessions',
    tag: 'Admin',
    summary: "List a location's sessions",
    description: `${paged} In creation order (by id), open and closed. Never a key, never a key's hash.`,
    access: 'admin',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    traits: ['paged'],
    query: idPageQuerySchema,
    ok: { status: 200, description: 'A page of sessions', content: json(arrayOf(sessionViewSchema), [examples.session]) },
    problems: [ex.locationNotFound],
  },
  {
    id: 'createServiceSession',
    method: 'post',
    path: '/admin/v1/locations/{id}/service-sessions',
    tag: 'Admin',
    summary: 'Issue a register key (SERVICE session)',
    description: 'The key is shown this once. The session does not expire unless `expiresAt` is given.',
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: serviceSessionSchema, example: { deviceId: 'register-1' } },
    ok: { status: 201, description: 'The session and its key', content: json(issuedSessionSchema, { ...examples.session, apiKey: examples.apiKey }) },
    problems: [ex.locationNotFound],
  },
  {
    id: 'createCustomerSession',
    method: 'post',
    path: '/admin/v1/locations/{id}/customer-sessions',
    tag: 'Admin',
    summary: 'Issue a customer app key (CUSTOMER session)',
    description: 'The key is shown this once; the session expires after `CUSTOMER_SESSION_TTL` (12 h).',
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: customerSessionSchema, example: { userNumber: 1001, tableNumber: 4 } },
    ok: { status: 201, description: 'The session and its key', content: json(issuedSessionSchema) },
    problems: [ex.locationNotFound],
  },
  {
    id: 'rotateSessionKey',
    method: 'post',
    path: '/admin/v1/sessions/{sessionId}/rotate-key',
    tag: 'Admin',
    summary: "Rotate a session's key",
    description:
      'A new key, shown this once, opens the session from now on. The key it replaces keeps working for `KEY_ROTATION_GRACE` (10 min), ' +
      'then answers exactly as a revoked key (the text/plain 401), and streams opened with it end. Rotating again ends an earlier key at once.',
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    params: [P.sessionId],
    ok: {
      status: 200,
      description: 'The session with its new key',
      content: json(rotatedSessionSchema, {
        ...examples.session,
        keyRotatedAt: '2026-11-21T08:00:00.000Z',
        previousKeyExpiresAt: '2026-11-21T08:10:00.000Z',
        apiKey: examples.apiKey,
      }),
    },
    problems: [ex.sessionNotFound, problems.conflict('Session is closed; its key cannot be rotated')],
  },
  {
    id: 'closeSession',
    method: 'delete',
    path: '/admin/v1/sessions/{sessionId}',
    tag: 'Admin',
    summary: 'Close (revoke) a session',
    description: "Its keys then answer the text/plain 401 and its streams end; a customer session's PLACED orders are aborted.",
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    traits: ['queued'],
    params: [P.sessionId],
    ok: { status: 204, description: 'Closed' },
    problems: [ex.sessionNotFound],
  },
  {
    id: 'createWebhook',
    method: 'post',
    path: '/admin/v1/webhooks',
    tag: 'Admin',
    summary: 'Subscribe an endpoint to webhooks',
    description:
      'Deliveries are signed POSTs (Standard Webhooks; docs/webhooks.md). The secret is shown this once. ' +
      'A URL that is not http(s), or whose host resolves to a loopback, private, link-local or metadata address, is refused (unless `WEBHOOK_ALLOW_PRIVATE=1`).',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only with `locationIds`, each within its own (403 otherwise)',
    traits: ['jsonBody'],
    body: { schema: webhookSchema, example: { url: 'https://hq.example.com/pos-events', events: ['order.placed', 'order.completed'] } },
    ok: { status: 201, description: 'The subscription and its secret', content: json(issuedWebhookSchema, { ...examples.webhook, secret: examples.webhookSecret }) },
    problems: [problems.validation("url's host resolves to 127.0.0.1, a loopback, private, link-local or metadata address")],
  },
  {
    id: 'listWebhooks',
    method: 'get',
    path: '/admin/v1/webhooks',
    tag: 'Admin',
    summary: 'List webhook subscriptions',
    description: `${paged} In creation order (by id). Never a secret.`,
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'lists the subscriptions whose `locationIds` are all within its own',
    traits: ['paged'],
    query: idPageQuerySchema,
    ok: { status: 200, description: 'A page of subscriptions', content: json(arrayOf(webhookViewSchema), [examples.webhook]) },
  },
  {
    id: 'getWebhook',
    method: 'get',
    path: '/admin/v1/webhooks/{id}',
    tag: 'Admin',
    summary: 'Read a webhook subscription',
    description: 'A disabled endpoint shows when and why (`disabledAt`, `disabledReason`).',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    ok: { status: 200, description: 'The subscription', content: json(webhookViewSchema, examples.webhook) },
    problems: [ex.webhookNotFound],
  },
  {
    id: 'updateWebhook',
    method: 'patch',
    path: '/admin/v1/webhooks/{id}',
    tag: 'Admin',
    summary: 'Change a webhook subscription',
    description: '`locationIds: []` covers every location again; `enabled: true` re-enables a disabled endpoint.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one); new `locationIds` within its own, never `[]` (every location)',
    traits: ['jsonBody'],
    params: [P.webhookId],
    body: { schema: webhookUpdateSchema, example: { events: ['order.placed'] } },
    ok: { status: 200, description: 'The subscription as changed', content: json(webhookViewSchema, { ...examples.webhook, events: ['order.placed'] }) },
    problems: [ex.webhookNotFound],
  },
  {
    id: 'deleteWebhook',
    method: 'delete',
    path: '/admin/v1/webhooks/{id}',
    tag: 'Admin',
    summary: 'Remove a webhook subscription',
    description: 'Its pending deliveries are dropped; its delivery log expires with `WEBHOOK_LOG_RETENTION`.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    ok: { status: 204, description: 'Removed' },
    problems: [ex.webhookNotFound],
  },
  {
    id: 'rotateWebhookSecret',
    method: 'post',
    path: '/admin/v1/webhooks/{id}/rotate-secret',
    tag: 'Admin',
    summary: "Rotate a webhook subscription's secret",
    description:
      'A new secret, shown this once. For `KEY_ROTATION_GRACE` (10 min) every delivery carries two signatures in `webhook-signature`, the new secret’s and the old one’s; then only the new one.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    ok: {
      status: 200,
      description: 'The subscription with its new secret',
      content: json(issuedWebhookSchema, { ...examples.webhook, previousSecretExpiresAt: '2026-11-21T08:10:00.000Z', secret: examples.webhookSecret }),
    },
    problems: [ex.webhookNotFound],
  },
  {
    id: 'testWebhook',
    method: 'post',
    path: '/admin/v1/webhooks/{id}/test',
    tag: 'Admin',
    summary: 'Send a `webhook.test` event',
    description: 'Queued like any delivery (retried, logged); `data` holds the subscription id.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    ok: { status: 202, description: 'The delivery, queued', content: json(queuedDeliverySchema, { webhookId: examples.webhookMessageId, type: 'webhook.test' }) },
    problems: [ex.webhookNotFound],
  },
  {
    id: 'listWebhookDeliveries',
    method: 'get',
    path: '/admin/v1/webhooks/{id}/deliveries',
    tag: 'Admin',
    summary: "A webhook subscription's delivery log",
    description: `${paged} Newest first: each attempt, kept for \`WEBHOOK_LOG_RETENTION\` (28 days).`,
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    traits: ['paged'],
    query: idPageQuerySchema,
    ok: { status: 200, description: 'A page of delivery attempts', content: json(arrayOf(webhookDeliverySchema), [examples.webhookDelivery]) },
    problems: [ex.webhookNotFound],
  },
  {
    id: 'redeliverWebhook',
    method: 'post',
    path: '/admin/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver',
    tag: 'Admin',
    summary: 'Send a logged delivery again',
    description: 'The same body and `webhook-id`, freshly signed, on a retry schedule of its own; sent even to a disabled endpoint.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId, P.deliveryId],
    ok: { status: 202, description: 'The delivery, queued', content: json(queuedDeliverySchema, { webhookId: examples.webhookMessageId, type: 'order.placed' }) },
    problems: [ex.webhookNotFound, problems.notFound('Delivery does not exist')],
  },
  {
    id: 'createCounterOrder',
    method: 'post',
    path: '/admin/v1/locations/{id}/orders',
    tag: 'Admin',
    summary: 'Create a counter order (PLACED, no user)',
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: orderSchema, example: { tableNumber: 4, rows: [{ productId: 'sku-1', name: 'Burger', quantity: 2, unitPrice: 1290 }] } },
    ok: { status: 201, description: 'The order, PLACED and announced', content: json(orderRecordSchema) },
    problems: [ex.locationNotFound],
  },
  {
    id: 'listOrders',
    method: 'get',
    path: '/admin/v1/locations/{id}/orders',
    tag: 'Admin',
    summary: "List a location's orders in a state",
    description: `${paged} By ascending number, each order with its failure count (the operator's view).`,
    access: 'admin',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    traits: ['paged'],
    query: orderListQuerySchema,
    ok: { status: 200, description: 'A page of orders', content: json(arrayOf(operatorOrderRecordSchema), [examples.operatorOrder]) },
    problems: [ex.locationNotFound, problems.required('state'), problems.noEnumConstant('EATEN')],
  },
  {
    id: 'recoverOrder',
    method: 'post',
    path: '/admin/v1/locations/{id}/orders/{number}/recover',
    tag: 'Admin',
    summary: 'Recover a FAILED order (back to PLACED, failure count reset)',
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    traits: ['queued'],
    params: [P.locationId, P.orderNumber],
    ok: { status: 200, description: 'The order, PLACED again and announced', content: json(orderRecordSchema) },
    problems: [ex.locationNotFound, problems.orderNotFound(), ex.orderNumber, problems.conflict('Order is COMPLETED; cannot recover')],
  },
  {
    id: 'createCommand',
    method: 'post',
    path: '/admin/v1/locations/{id}/commands',
    tag: 'Admin',
    summary: 'Create a command',
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: commandBodySchema, example: { kind: 'FETCH_REMOTE_MENU' } },
    ok: { status: 201, description: 'The command, announced', content: json(commandRecordSchema) },
    problems: [ex.locationNotFound],
  },
  {
    id: 'listCommands',
    method: 'get',
    path: '/admin/v1/locations/{id}/commands',
    tag: 'Admin',
    summary: "List a location's live commands",
    description: `${paged} By ascending number; acknowledged and expired commands are gone.`,
    access: 'admin',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    traits: ['paged'],
    query: numberPageQuerySchema,
    ok: { status: 200, description: 'A page of commands', content: json(arrayOf(commandRecordSchema), [examples.command]) },
    problems: [ex.locationNotFound],
  },

  {
    id: 'orderHistory',
    method: 'get',
    path: '/admin/v1/locations/{id}/history',
    tag: 'Admin',
    summary: "A location's finished orders, from the archive",
    description:
      'COMPLETED and ABORTED orders once archived (`ORDER_ARCHIVE_AFTER`, 15 min, after they finished), by completion time, then number; ' +
      'completed in [`from`, `to`). A bare array like the other lists: a page that has a next one names it in `Link: <…>; rel="next"`, whose ' +
      '`after` is an opaque cursor.',
    access: 'admin',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    query: historyQuerySchema,
    ok: { status: 200, description: 'A page of finished orders', content: json(arrayOf(orderRecordSchema), [examples.completedOrder]), headers: ['Link'] },
    problems: [
      ex.locationNotFound,
      problems.illegalArgument('limit must be an integer from 1 to 1000'),
      problems.illegalArgument('from must be an ISO-8601 date-time'),
      problems.illegalArgument('after must be the cursor after an order of a previous page'),
    ],
  },
  {
    id: 'updateOrderStatusForLocation',
    method: 'put',
    path: '/admin/v1/locations/{id}/orders/{number}/statusupdate',
    tag: 'Admin',
    summary: "Update the status of an order on the location's behalf",
    description: "The register's status update (same queue, same state machine, same answers), for the operator's board.",
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody', 'queued'],
    params: [P.locationId, P.orderNumber],
    body: { schema: statusUpdateSchema, example: { newState: 'COMPLETED' } },
    ok: { status: 200, description: 'The updated order', content: json(orderRecordSchema, examples.completedOrder) },
    problems: [
      ex.locationNotFound,
      problems.noEnumConstant('EATEN'),
      problems.orderNotFound(),
      ex.orderNumber,
      problems.conflict('Order is COMPLETED; cannot move to ABORTED'),
    ],
  },
  {
    id: 'acknowledgeCommandForLocation',
    method: 'delete',
    path: '/admin/v1/locations/{id}/commands/{number}',
    tag: 'Admin',
    summary: "Acknowledge a command on the location's behalf",
    description: "As a register's acknowledgement: the command is no longer live.",
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    params: [P.locationId, P.commandNumber],
    ok: { status: 200, description: 'The acknowledged command', content: json(commandRecordSchema, examples.command) },
    problems: [ex.locationNotFound, problems.commandNotFound(), problems.illegalArgument('Command number must be a positive integer')],
  },
  {
    id: 'streamLocationWork',
    method: 'get',
    path: '/admin/v1/locations/{id}/stream',
    tag: 'Event stream',
    summary: "Follow a location's work as server-sent events, as an operator",
    description:
      "The register stream's events, cursor, replay, keepalives, timeout and end at shutdown, for the admin token; each order carries " +
      'its `failureCount` (and `overdue: true` once its placement is overdue, announced once as an order event of its own). ' +
      '`location` events announce presence and pause changes (they leave the cursor as it is). It has no session to close or expire: the token is checked when it opens.',
    access: 'admin',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId, P.lastEventId],
    query: streamCursorQuery,
    ok: eventStream(operatorOrderEventSchema, examples.operatorOrder, [locationEventSchema]),
    problems: [ex.locationNotFound, ...STREAM_PROBLEMS, problems.tooManyRequests('This node holds its limit of 2500 operator streams; the rest is kept for registers')],
  },

  // ---- The location board ----
  {
    id: 'boardPage',
    method: 'get',
    path: '/board',
    tag: 'Documentation',
    summary: 'The live location board (a page for kitchens and operators)',
    description:
      'Needs no token to load: it signs in with a register key or the admin token, which it sends in headers. 503 with a page saying how ' +
      'to build it when its files are missing.',
    access: 'public',
    ok: { status: 200, description: 'The page', content: html },
    problems: [problems.unavailable('The board is not built')],
  },
  {
    id: 'boardAsset',
    method: 'get',
    path: '/board/assets/{file}',
    tag: 'Documentation',
    summary: "The board's script, style sheet and icon (hashed names, cached for good)",
    access: 'public',
    params: [{ name: 'file', in: 'path', description: 'A file the page names', schema: { type: 'string' }, example: 'index-B1x2y3.js' }],
    ok: {
      status: 200,
      description: 'The file',
      content: {
        'text/javascript': { schema: { type: 'string' } },
        'text/css': { schema: { type: 'string' } },
        'image/svg+xml': { schema: { type: 'string' } },
      },
    },
    problems: [problems.notFound('No route for GET /board/assets/missing.js')],
  },

  // ---- Operations ----
  {
    id: 'liveness',
    method: 'get',
    path: '/healthz',
    tag: 'Operations',
    summary: 'Liveness: the process answers',
    access: 'public',
    ok: { status: 200, description: 'Alive', content: json(healthSchema, { status: 'ok' }) },
  },
  {
    id: 'readiness',
    method: 'get',
    path: '/readyz',
    tag: 'Operations',
    summary: 'Readiness: MongoDB and Redis answer, and the node is not shutting down',
    access: 'public',
    ok: { status: 200, description: 'Ready', content: json(readinessSchema, { status: 'ready', mongo: 'ok', redis: 'ok' }) },
    problems: [problems.unavailable('MongoDB ok, Redis unreachable'), problems.unavailable('Shutting down')],
  },
  {
    id: 'metrics',
    method: 'get',
    path: '/metrics',
    tag: 'Operations',
    summary: "The node's Prometheus metrics",
    description: 'Prometheus text format 0.0.4 (`text/plain; version=0.0.4`). No keys, ids or order data. The worker\'s `METRICS_PORT` serves its own, unauthenticated.',
    access: 'admin',
    role: 'admin',
    bound: 'chain',
    ok: { status: 200, description: 'The metrics', content: { 'text/plain': { schema: { type: 'string' } } } },
  },
  {
    id: 'bullBoard',
    method: 'get',
    path: '/admin/queues',
    tag: 'Operations',
    summary: 'Bull Board: the work queue',
    description:
      'The dashboard of the `order-work` queue. Its pages, assets and JSON API live under `/admin/queues/`, all behind the admin token; ' +
      'they are Bull Board’s own, not part of this contract.',
    access: 'board',
    role: 'admin',
    bound: 'chain',
    ok: { status: 200, description: 'The page', content: html },
  },

  // ---- Operators and audit (docs/operators.md) ----
  {
    id: 'getCurrentOperator',
    method: 'get',
    path: '/admin/v1/me',
    tag: 'Admin',
    summary: 'Who this token is',
    description: "The token's operator: `root` for `ADMIN_TOKEN`; its role and, when bound, its locations. What the board reads to offer only what the role allows.",
    access: 'admin',
    role: 'viewer',
    bound: 'locations',
    ok: { status: 200, description: 'The operator', content: json(currentOperatorSchema, { id: EXAMPLE_IDS.operator, name: 'Main Street manager', role: 'manager', locationIds: [EXAMPLE_IDS.location] }) },
  },
  {
    id: 'createOperator',
    method: 'post',
    path: '/admin/v1/operators',
    tag: 'Admin',
    summary: 'Create an operator account',
    description: 'Its bearer token is in this answer only; only its hash is stored. Without `locationIds` it covers every location.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'grants at most its own role, and only `locationIds` within its own (403 otherwise)',
    traits: ['jsonBody'],
    body: { schema: operatorSchema, example: { name: 'Main Street manager', role: 'manager', locationIds: [EXAMPLE_IDS.location] } },
    ok: { status: 201, description: 'The operator, with its token', content: json(issuedOperatorSchema, { ...examples.operator, token: examples.apiKey }) },
  },
  {
    id: 'listOperators',
    method: 'get',
    path: '/admin/v1/operators',
    tag: 'Admin',
    summary: 'List operator accounts',
    description: `${paged} In creation order (by id). Never a token.`,
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'lists the operators whose `locationIds` are all within its own',
    traits: ['paged'],
    query: idPageQuerySchema,
    ok: { status: 200, description: 'A page of operators', content: json(arrayOf(operatorViewSchema), [examples.operator]) },
  },
  {
    id: 'getOperator',
    method: 'get',
    path: '/admin/v1/operators/{operatorId}',
    tag: 'Admin',
    summary: 'Get an operator account',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only operators whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.operatorId],
    ok: { status: 200, description: 'The operator', content: json(operatorViewSchema, examples.operator) },
    problems: [ex.operatorNotFound],
  },
  {
    id: 'updateOperator',
    method: 'patch',
    path: '/admin/v1/operators/{operatorId}',
    tag: 'Admin',
    summary: "Change an operator's name, role or locations",
    description: '`allLocations: true` makes it cover every location. Holds on every node before it answers.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only operators whose `locationIds` are all within its own (another answers 404, as a missing one); grants at most its own role and locations, and never changes its own role or locations (403)',
    traits: ['jsonBody'],
    params: [P.operatorId],
    body: { schema: operatorUpdateSchema, example: { role: 'viewer' } },
    ok: { status: 200, description: 'The operator as changed', content: json(operatorViewSchema, examples.operator) },
    problems: [ex.operatorNotFound, problems.validation('body must not have both locationIds and allLocations')],
  },
  {
    id: 'rotateOperatorToken',
    method: 'post',
    path: '/admin/v1/operators/{operatorId}/rotate-token',
    tag: 'Admin',
    summary: "Replace an operator's token",
    description: 'The old token stops at once, on every node. The new one is in this answer only.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only operators whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.operatorId],
    ok: { status: 200, description: 'The operator, with its new token', content: json(issuedOperatorSchema, { ...examples.operator, token: examples.apiKey }) },
    problems: [ex.operatorNotFound],
  },
  {
    id: 'deleteOperator',
    method: 'delete',
    path: '/admin/v1/operators/{operatorId}',
    tag: 'Admin',
    summary: 'Delete an operator account',
    description: 'Its token stops at once, on every node.',
    access: 'admin',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only operators whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.operatorId],
    ok: { status: 204, description: 'Deleted' },
    problems: [ex.operatorNotFound],
  },
  {
    id: 'listAudit',
    method: 'get',
    path: '/admin/v1/audit',
    tag: 'Admin',
    summary: 'Read the audit log',
    description:
      `${paged} Newest first. One record per operator write (every admin call but GET and HEAD, Bull Board actions), refusals included; ` +
      'never a key, token or secret. An operator bound to locations reads those locations\' records only. Kept `AUDIT_RETENTION` (400 days).',
    access: 'admin',
    role: 'manager',
    bound: 'locations',
    boundNote: 'reads its locations\' records only',
    traits: ['paged'],
    query: auditQuerySchema,
    ok: { status: 200, description: 'A page of audit records', content: json(arrayOf(auditRecordSchema), [examples.auditRecord]) },
  },
  {
    id: 'verifyAudit',
    method: 'get',
    path: '/admin/v1/audit/verify',
    tag: 'Admin',
    summary: "Check the audit log's hash chain",
    description:
      'Checks that each record, oldest first, matches its `hash` and carries the hash of the one before it, from where the chain starts ' +
      '(its oldest records removed by retention) or after `after`, at most `limit` records. `complete: false`: call again with `after=lastSeq`. ' +
      'The first broken link (a record changed, removed or replaced in MongoDB) is named in `brokenAt`. CLI: `npm run admin -- audit verify`.',
    access: 'admin',
    role: 'admin',
    bound: 'chain',
    query: auditVerifyQuerySchema,
    ok: {
      status: 200,
      description: 'What the check found',
      content: json(auditVerificationSchema, { intact: true, checked: 1200, firstSeq: 1, lastSeq: 1200, complete: true }),
    },
  },

  // ---- Documentation ----
  {
    id: 'landingPage',
    method: 'get',
    path: '/',
    tag: 'Documentation',
    summary: "The service's name, version and links",
    access: 'public',
    ok: { status: 200, description: 'The page', content: html },
  },
  {
    id: 'getOpenApiDocument',
    method: 'get',
    path: '{base}/openapi.json',
    tag: 'Documentation',
    summary: 'This document',
    access: 'public',
    ok: {
      status: 200,
      description: 'OpenAPI 3.1',
      content: json({
        type: 'object',
        required: ['openapi', 'info', 'paths'],
        properties: { openapi: { type: 'string', const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } },
      }),
    },
  },
  {
    id: 'docsPage',
    method: 'get',
    path: '/docs',
    tag: 'Documentation',
    summary: 'This document, rendered (Swagger UI, served from this node)',
    access: 'public',
    ok: { status: 200, description: 'The page', content: html },
  },
  {
    id: 'docsFile',
    method: 'get',
    path: '/docs/{file}',
    tag: 'Documentation',
    summary: 'The files of the docs page',
    access: 'public',
    params: [{ name: 'file', in: 'path', description: 'A file the page names', schema: { type: 'string', enum: [...DOCS_FILES] }, example: 'swagger-ui.css' }],
    ok: {
      status: 200,
      description: 'The file',
      content: {
        'text/css': { schema: { type: 'string' } },
        'text/javascript': { schema: { type: 'string' } },
        'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
      },
    },
    problems: [problems.notFound('No route for GET /docs/index.html')],
  },
];
