/**
 * The operation table's types and what its parts share (operations/*.ts): each part declares its
 * operations by id, what each takes and answers beyond what its access and traits bring (see
 * document.ts), its access, role and criticality. The API mounts its routes from the same entries
 * (services/api/src/routes/mount.ts).
 */
import type { Role } from '../../auth/roles';
import type { BoundAccess } from '../../auth/scope';
import { problems, Problem } from '../../domain/problem';
import { commandEventSchema, HeaderName, JsonObject } from '../components';
import { EXAMPLE_IDS, examples } from '../examples';

export type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** Who may call: each brings its 401 (and the session look-up brings the store's answers). */
export type Access = 'public' | 'register' | 'customer' | 'admin' | 'board';

/** What an operation does on the way; each brings the responses it can cause (TRAITS in document.ts). */
export type Trait = 'store' | 'queued' | 'jsonBody' | 'jsonOnly' | 'paged' | 'idempotent' | 'rateLimited';

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

/**
 * How much an operation matters when the service must shed load (docs/overload.md): the least
 * critical is refused first. `exempt` is never shed: health probes, the register's poll and the
 * event streams, the documents.
 */
export type Criticality = 'exempt' | 'critical' | 'normal' | 'sheddable';

/** An operation as the table declares it, under its id. */
export interface OperationInput {
  method: Method;
  /** `{base}` stands for BASE_PATH. */
  path: string;
  tag: Tag;
  summary: string;
  description?: string;
  access: Access;
  criticality: Criticality;
  /** The least operator role that may call it (auth/roles.ts); every `admin` and `board` operation has one. */
  role?: Role;
  /**
   * What an operator bound to locations may do with it (auth/scope.ts); every `admin` and `board`
   * operation says. `boundNote`: how `locations` applies, where it is more than the location its path names.
   */
  bound?: BoundAccess;
  boundNote?: string;
  traits?: Trait[];
  /** A `queued` operation's job goes to its location's partition, or its session's: a session close (routingKey). */
  partitionBy?: 'session';
  params?: ParamSpec[];
  /** An object schema whose properties are the query parameters (the one the route validates with). */
  query?: { properties: object; required?: readonly string[] };
  body?: { schema: object; example?: unknown; required?: boolean };
  /**
   * A menu upload: a body up to MENU_BODY_LIMIT instead of BODY_LIMIT, and no `Idempotency-Key`:
   * its answer (the menu) would be megabytes kept in Redis, and a repeat is harmless by itself
   * (the document is stored once, by its hash, and served under the next version).
   */
  upload?: 'menu';
  ok: Success;
  /** A conditional read: the 304 it answers while `If-None-Match` names the current ETag. */
  notModified?: string;
  /** Problems it answers beyond those of its access and traits; each is also an example. */
  problems?: Problem[];
}

export const json = (schema: unknown, example?: unknown): Record<string, MediaSpec> => ({
  'application/json': example === undefined ? { schema } : { schema, example },
});

export const arrayOf = (items: unknown) => ({ type: 'array', items });

export const P = {
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
  locationId: {
    name: 'id',
    in: 'path',
    description: "The location's id",
    schema: { type: 'string' },
    example: EXAMPLE_IDS.location,
  },
  webhookId: {
    name: 'id',
    in: 'path',
    description: "The webhook subscription's id",
    schema: { type: 'string' },
    example: EXAMPLE_IDS.webhook,
  },
  deliveryId: {
    name: 'deliveryId',
    in: 'path',
    description: 'The id of a delivery attempt in the log',
    schema: { type: 'string' },
    example: EXAMPLE_IDS.delivery,
  },
  operatorId: {
    name: 'operatorId',
    in: 'path',
    description: "The operator's id",
    schema: { type: 'string' },
    example: EXAMPLE_IDS.operator,
  },
  sessionId: {
    name: 'sessionId',
    in: 'path',
    description: "The session's id",
    schema: { type: 'string' },
    example: EXAMPLE_IDS.session,
  },
  lastEventId: {
    name: 'Last-Event-ID',
    in: 'header',
    description:
      'The last event id received (`<orderNumber>.<commandNumber>`), as a browser ' +
      'EventSource sends it; wins over the query parameters. Empty counts as absent.',
    schema: { type: 'string', pattern: '^[0-9]+\\.[0-9]+$' },
    required: false,
    example: '12.3',
  },
} satisfies Record<string, ParamSpec>;

/** The stream's reconnection cursor, in the query (docs/register-interface.md, part 4.3). */
export const streamCursorQuery = {
  properties: {
    orderNumber: {
      type: 'integer',
      minimum: 0,
      description: 'The last processed order number; the replay starts above it',
    },
    commandNumber: {
      type: 'integer',
      minimum: 0,
      description: 'The last processed command number; the replay starts above it',
    },
  },
};

export const html = { 'text/html': { schema: { type: 'string' } } };

/**
 * A stream's answer: server-sent events, orders in the given form (the register's or the
 * operator's). The body is a string, as OpenAPI 3.1 reads a `schema` (the whole body); the sequence
 * of its events is the string's `contentSchema`, an annotation that validators do not assert and
 * the contract check reads (3.2's `itemSchema` would hold each event).
 */
export const eventStream = (orderEvent: object, order: object, more: object[] = []): Success => ({
  status: 200,
  description: 'The event stream (`Cache-Control: no-store`, `X-Accel-Buffering: no`)',
  content: {
    'text/event-stream': {
      schema: {
        type: 'string',
        description:
          'Server-sent events, each `id`, `event` and `data` (one JSON record): `order` and ' +
          '`command` (and, for operators, `location`); `contentSchema` gives each shape.',
        contentMediaType: 'text/event-stream',
        contentSchema: arrayOf({ oneOf: [orderEvent, commandEventSchema, ...more] }),
      },
      example:
        `retry: 742\n\nid: 7.0\nevent: order\ndata: ${JSON.stringify(order)}\n\nid: ` +
        `7.3\nevent: command\ndata: ${JSON.stringify(examples.command)}\n\n`,
    },
  },
});

/** What a stream's request may answer besides its events: a bad cursor, Redis not answering. */
export const STREAM_PROBLEMS = [
  problems.illegalArgument('orderNumber must be a non-negative integer'),
  problems.illegalArgument('Last-Event-ID must be <orderNumber>.<commandNumber>, two non-negative integers'),
  problems.unavailable('Redis did not answer in time'),
];
export const paged = 'One page of the list: at most `limit` items after `after`.';

/** The files the docs page names: Swagger UI's (from the swagger-ui-dist package) and its start script. */
export const DOCS_FILES = [
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
  'docs.js',
] as const;

/**
 * A part of the table: operations by id; the ids stay literal, so that a handler table can be checked against them.
 */
export const defineOperations = <T extends Record<string, OperationInput>>(operations: T): T => operations;

/** An operation with its id, as the document and the routes read the table. */
export interface OperationSpec extends OperationInput {
  id: string;
}

export const TRANSITION_DESCRIPTION =
  'A transition, applied by a worker. Repeating it answers 200 and changes nothing; any other move is a 409, ' +
  'and so is a move applied after the session was closed (a close that ' +
  'answered leaves no order of the session PLACED).';
