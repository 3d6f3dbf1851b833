/**
 * The OpenAPI 3.1 document of the whole HTTP surface, built from the operation table and the
 * schemas the code validates and serialises with. What an operation can answer is its own
 * success and problems, plus what its access and its traits bring: adding a kind of answer to
 * many operations (an `Idempotency-Key` with its 409/422, a 429 with `Retry-After`) is one
 * entry in TRAITS (and STATUS_HEADERS), and the trait's name on the operations it applies to.
 */
import { STATUS_CODES } from 'node:http';
import type { ErrorObject } from 'ajv';
import { Role, rolesFrom } from '../auth/roles';
import { BoundAccess, CHAIN_WIDE_DETAIL } from '../auth/scope';
import { Problem, problemBody, problems } from '../domain/problem';
import { LIMITS, problemFromSchemaError, TEXT_PATTERNS } from '../schemas/requests';
import {
  componentHeaders,
  componentSchemas,
  HeaderName,
  JsonObject,
  ref,
  responseHeaders,
  SECURITY_SCHEMES,
  sessionNotValidBodySchema,
  withRefs,
} from './components';
import { EXAMPLE_IDS, exampleProblems as ex, examples } from './examples';
import { Access, DOCS_FILES, OPERATIONS, OperationSpec, ParamSpec, Tag, Trait } from './operations';

export { DOCS_FILES };

export interface DocumentOptions {
  /** BASE_PATH, the `{base_url}` path of the register and customer interface. */
  basePath: string;
  version: string;
  /** BODY_LIMIT, for the 413's example. */
  bodyLimitBytes?: number;
  /** MENU_BODY_LIMIT (a menu upload's). */
  menuBodyLimitBytes?: number;
}

interface Contribution {
  problems: Problem[];
  parameters?: JsonObject[];
  /** Headers the answers of a status may carry (the success answer's under its status). */
  headers?: Partial<Record<number | 'ok', HeaderName[]>>;
}

/** The problem the code makes of a schema fault, as a body validator would report it. */
const schemaProblem = (keyword: string, params: Record<string, unknown>, instancePath = '', message = ''): Problem =>
  problemFromSchemaError({ keyword, params, instancePath, schemaPath: '', message } as ErrorObject);

/** What each trait adds to an operation's answers (and, later, parameters). */
const TRAITS: Record<Trait, (options: DocumentOptions, spec: OperationSpec) => Contribution> = {
  /** It reads or writes MongoDB (or Redis): unreachable is a 503, a refused write a 400. */
  store: () => ({ problems: [ex.storeUnreachable, ex.constraint, ex.database] }),
  /** It waits for a worker: past JOB_TIMEOUT, a 503 that says whether the job may yet run. */
  queued: () => ({ problems: [ex.jobTimeout, ex.jobNotQueued] }),
  /** A paged list: `limit` and `after` out of their range; the next page's `Link`. */
  paged: () => ({
    problems: [
      schemaProblem('maximum', {}, '/limit', `must be <= ${LIMITS.pageMax}`),
      schemaProblem('type', {}, '/after', 'must be integer'),
    ],
    headers: { ok: ['Link'] },
  }),
  /** A write: safe to retry under an `Idempotency-Key` (the API's middleware/idempotency.ts). */
  idempotent: () => ({
    parameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Makes the write safe to retry (IETF draft "The Idempotency-Key HTTP Header ' +
          'Field"): the first request with a key that passes its ' +
          'checks is processed and its final answer kept for `IDEMPOTENCY_TTL` ' +
          '(24 h); the same request again gets that answer with ' +
          '`Idempotent-Replayed: true`. A request refused by its checks (a ' +
          '400) keeps nothing. Each caller holds at most ' +
          '`IDEMPOTENCY_MAX_RECORDS` (10,000; a customer session ' +
          '`IDEMPOTENCY_MAX_CUSTOMER_RECORDS`, 100) kept answers ' +
          'at once; beyond, a 429 ' +
          'with `Retry-After`. 1 to 255 printable ASCII characters; a fresh one (a UUID) per write.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
        example: '8e0b6a55-6c2f-4f8e-9a51-3c4f7e2d1b90',
      },
    ],
    problems: [
      problems.idempotencyKeyOutstanding(),
      problems.idempotencyKeyReused(),
      problems.validation('Idempotency-Key must be 1 to 255 printable ASCII characters'),
      problems.idempotencyRecordsExhausted(100, 3600),
    ],
    headers: { ok: ['IdempotentReplayed'], 409: ['RetryAfterOutstanding'] },
  }),
  /** Counted against `RATE_LIMIT` per API key, when it is set. */
  rateLimited: () => ({
    problems: [problems.tooManyRequests('More than 20 requests in 1 s with this API key; retry after 1 s')],
    headers: { ok: ['RateLimitPolicy', 'RateLimit'], 429: ['RateLimitPolicy', 'RateLimit'] },
  }),
  /**
   * A write of the admin or customer API: a body of another type than JSON is
   * a 415 (the register interface's is read as none).
   */
  jsonOnly: () => ({ problems: [problems.bodyNotJson('text/plain')] }),
  /** It reads a JSON body: malformed, too large, or not what its schema says. */
  jsonBody: (options, spec) => {
    type BodySchema = { required?: readonly string[]; additionalProperties?: boolean; anyOf?: BodySchema[] };
    const body = (spec.body?.schema ?? {}) as BodySchema;
    // a body of either of two shapes (a cart with or without a menu): what each refuses
    const shapes = body.anyOf ?? [body];
    return {
      problems: [
        ex.malformedJson,
        problems.payloadTooLarge(
          spec.upload ? (options.menuBodyLimitBytes ?? 4_194_304) : (options.bodyLimitBytes ?? 65_536),
        ),
        ...shapes.flatMap((schema) =>
          schema.required?.[0] ? [schemaProblem('required', { missingProperty: schema.required[0] })] : [],
        ),
        ...(shapes.some((schema) => schema.additionalProperties === false)
          ? [schemaProblem('additionalProperties', { additionalProperty: 'colour' })]
          : []),
      ],
    };
  },
};

/** Headers that every answer of a status carries. */
const STATUS_HEADERS: Partial<Record<number, HeaderName[]>> = { 429: ['RetryAfter'], 503: ['RetryAfter'] };

const responseRef = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });

/**
 * What the caller's access brings: to every operation (`traits`), and to its writes, every method but GET (`writes`).
 */
const ACCESS: Record<Access, { security: JsonObject[]; unauthorized?: string; traits: Trait[]; writes: Trait[] }> = {
  public: { security: [], traits: [], writes: [] },
  register: {
    security: [{ registerKey: [] }, { registerKeyQuery: [] }],
    unauthorized: 'SessionRejected',
    traits: ['store', 'rateLimited'],
    writes: ['idempotent'],
  },
  customer: {
    security: [{ customerKey: [] }, { customerKeyQuery: [] }],
    unauthorized: 'SessionRejected',
    traits: ['store', 'rateLimited'],
    writes: ['idempotent', 'jsonOnly'],
  },
  admin: {
    security: [{ adminToken: [] }],
    unauthorized: 'AdminUnauthorized',
    traits: ['store'],
    writes: ['idempotent', 'jsonOnly'],
  },
  board: {
    security: [{ adminToken: [] }, { adminBasic: [] }],
    unauthorized: 'BoardUnauthorized',
    traits: [],
    writes: [],
  },
};

const TAGS: Record<Tag, string> = {
  Register: 'The register interface (docs/register-interface.md, part 4): a SERVICE key in `api_key`.',
  'Event stream': "The register's server-sent events (docs/register-interface.md, part 6).",
  'Customer app': 'The customer app: a CUSTOMER key in `api_key`.',
  Admin:
    "Operators: `Authorization: Bearer <token>`, the deployment's `ADMIN_TOKEN` (an admin of every location) or an operator's token (a role, and maybe locations: docs/operators.md). Keep it off the public edge.",
  Operations: 'Health, metrics and the transition queue, for operators.',
  Documentation: 'This document and its pages.',
};

const DESCRIPTION = `The back end that restaurant registers poll and stream from to receive customer orders and service commands, and report back on.

- **Records** are JSON (\`application/json; charset=utf-8\`). No field is ever \`null\` (the JSON 401's \`uid\` aside): an absent value is an absent key. Timestamps are ISO-8601 UTC with milliseconds.
- **Keys.** The register and customer interfaces take a session's key in the \`api_key\` header, or \`?api_key=\` when the header is absent. Both 401s of the interface come after a random 500 to 1499 ms delay: \`text/plain\` \`{"error":"Session not valid"}\` for a missing, empty, unknown, revoked or retired key, \`application/json\` \`{"message":"Unauthorized","uid":null}\` for an expired session or a key of the wrong type. Branch on the status before parsing the body.
- **Errors** are problem details (\`application/problem+json\`, RFC 7807); \`instance\` is the path without the query string. A path this document does not list answers 404, a method a path does not list 405 with an \`Allow\` header (both problems: \`#/components/responses/UnknownRoute\`, \`#/components/responses/MethodNotAllowed\`). A body over \`BODY_LIMIT\` is a 413; MongoDB, Redis or a worker not answering in time a 503 with \`Retry-After\`, by \`JOB_TIMEOUT\` and a second at the latest, whose detail says what is known of a write: not queued (nothing of it will be applied), or its outcome unknown (retry with the same \`Idempotency-Key\`; without one, read before retrying); anything unexpected a 500 whose detail starts with an id that is also in the log.
- **Retries.** Every write takes an \`Idempotency-Key\`: a retry with the same key gets the first answer back instead of doing the work twice (409 while the first is still processed, 422 for the same key on another request, 429 when the caller holds its quota of kept answers). With \`RATE_LIMIT\` set, each API key may make that many requests per window; above, a 429 with \`Retry-After\`.
- **Lists** of the admin API are paged with \`limit\` (1 to 1000, default 100) and \`after\` (the id or number of the last item of the previous page); a full page names the next in a \`Link\` header, a shorter page is the last.
- **X-Request-Id**: every answer carries one, the service's own; every log line of the request carries it too (and the caller's, when it sent one, as \`claimedRequestId\`).`;

function statusText(status: number): string {
  return STATUS_CODES[status] ?? String(status);
}

const exampleKey = (problem: Problem): string =>
  problem.detail
    .replace(EXAMPLE_IDS.error, 'id')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);

/**
 * A problem response of one status: the titles it can carry, and examples (problems the code
 * makes; by default, all of them).
 */
function problemResponse(
  status: number,
  list: Problem[],
  instance: string,
  extraHeaders: HeaderName[] = [],
  exampled = list,
): JsonObject {
  const titles = [...new Set(list.map((p) => p.title))];
  return {
    description: `${statusText(status)}: ${titles.join('; ')}`,
    headers: responseHeaders([...(STATUS_HEADERS[status] ?? []), ...extraHeaders]),
    content: {
      'application/problem+json': {
        schema: {
          allOf: [
            ref('Problem'),
            { type: 'object', properties: { status: { const: status }, title: { enum: titles } } },
          ],
        },
        examples: Object.fromEntries(
          exampled.map((p) => [exampleKey(p), { summary: p.detail, value: problemBody(p, instance) }]),
        ),
      },
    },
  };
}

function parameter(spec: ParamSpec): JsonObject {
  const { required = spec.in === 'path', ...rest } = spec;
  return { ...rest, required };
}

function queryParameters(query: NonNullable<OperationSpec['query']>): JsonObject[] {
  return Object.entries(query.properties).map(([name, schema]) => {
    const { description, ...rest } = schema as JsonObject & { description?: string };
    return {
      name,
      in: 'query',
      required: query.required?.includes(name) ?? false,
      description,
      schema: withRefs(rest),
    };
  });
}

/** `{number}` and friends filled in with their examples: the `instance` of the problem examples. */
function examplePath(spec: OperationSpec, path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    String(spec.params?.find((p) => p.name === name)?.example ?? name),
  );
}

/**
 * Answers many operations share, by status: an operation refers to one when it has nothing of
 * its own at that status and its titles there are the shared response's.
 */
function commonProblems(options: DocumentOptions): Record<number, { name: string; problems: Problem[] }> {
  return {
    400: { name: 'StoreRefused', problems: [ex.constraint, ex.database] },
    413: { name: 'PayloadTooLarge', problems: [problems.payloadTooLarge(options.bodyLimitBytes ?? 65_536)] },
    500: { name: 'InternalError', problems: [ex.internal] },
    503: { name: 'Unavailable', problems: [ex.storeUnreachable, ex.jobTimeout] },
  };
}

const sameTitles = (a: Problem[], b: Problem[]) => {
  const titles = new Set(a.map((p) => p.title));
  return b.every((p) => titles.has(p.title)) && a.every((p) => b.some((q) => q.title === p.title));
};

/** Problems grouped by status, without repeats. */
function byStatus(list: Problem[]): Map<number, Problem[]> {
  const grouped = new Map<number, Problem[]>();
  for (const problem of list) {
    const group = grouped.get(problem.status) ?? [];
    if (!group.some((p) => p.title === problem.title && p.detail === problem.detail)) group.push(problem);
    grouped.set(problem.status, group);
  }
  return grouped;
}

/** What a bound operator may do, in words (the description's line and `x-bound`). */
function boundLine(spec: OperationSpec): string {
  if (spec.bound === 'chain') return 'Chain-wide: an operator bound to locations is refused (403).';
  const what =
    spec.boundNote ??
    (/\{(id|sessionId)\}/.test(spec.path)
      ? 'its own locations only; another location answers the same 404 as a missing one'
      : 'within its own locations');
  return `An operator bound to locations: ${what}.`;
}

/**
 * What an operation's role and scope add: who may call it (`x-roles`), what an operator bound to
 * locations may do with it (`x-bound`), a line of its description for each, and the 403s.
 */
function roleOf(spec: OperationSpec): { roles?: Role[]; bound?: BoundAccess; note?: string; problems: Problem[] } {
  if (spec.access !== 'admin' && spec.access !== 'board') return { problems: [] };
  if (!spec.role || !spec.bound) throw new Error(`operation ${spec.id} has no role or bound access`);
  const roles = rolesFrom(spec.role);
  return {
    roles,
    bound: spec.bound,
    note: `Roles: ${roles.map((role) => `\`${role}\``).join(', ')} (docs/operators.md). ${boundLine(spec)}`,
    problems: [
      ...(spec.role === 'viewer'
        ? []
        : [problems.forbidden(`This needs the ${spec.role} role; this token is a viewer`)]),
      ...(spec.bound === 'chain' ? [problems.forbidden(CHAIN_WIDE_DETAIL)] : []),
    ],
  };
}

/** An operation's answers by status: its success, then each problem (a shared response where it is the same). */
function operationResponses(
  spec: OperationSpec,
  path: string,
  options: DocumentOptions,
  contributions: Contribution[],
): JsonObject {
  const access = ACCESS[spec.access];
  const role = roleOf(spec);
  const extraHeaders = (status: number | 'ok') => [...new Set(contributions.flatMap((c) => c.headers?.[status] ?? []))];
  const own = byStatus([...(spec.problems ?? []), ...role.problems]);
  const generic = byStatus([...contributions.flatMap((c) => c.problems), ex.internal]);
  const common = commonProblems(options);

  const responses: JsonObject = {
    [spec.ok.status]: {
      description: spec.ok.description,
      headers: responseHeaders([...(spec.ok.headers ?? []), ...extraHeaders('ok')]),
      ...(spec.ok.content && {
        content: Object.fromEntries(
          Object.entries(spec.ok.content).map(([type, media]) => [
            type,
            { schema: withRefs(media.schema), ...(media.example !== undefined && { example: media.example }) },
          ]),
        ),
      }),
    },
  };
  if (spec.notModified) responses['304'] = { description: spec.notModified, headers: responseHeaders(['ETag']) };
  if (access.unauthorized) responses['401'] = responseRef(access.unauthorized);
  const instance = examplePath(spec, path);
  for (const status of new Set([...own.keys(), ...generic.keys()])) {
    const mine = own.get(status) ?? [];
    const theirs = generic.get(status) ?? [];
    const shared = common[status];
    if (mine.length === 0 && shared && sameTitles(theirs, shared.problems) && extraHeaders(status).length === 0)
      responses[status] = responseRef(shared.name);
    else
      responses[status] = problemResponse(
        status,
        [...mine, ...theirs],
        instance,
        extraHeaders(status),
        mine.length > 0 ? mine : theirs,
      );
  }
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}

function operation(spec: OperationSpec, path: string, options: DocumentOptions): JsonObject {
  const access = ACCESS[spec.access];
  const role = roleOf(spec);
  // a menu upload's answer is not kept (spec.ts `upload`)
  const writes = spec.method === 'get' ? [] : access.writes.filter((trait) => !(trait === 'idempotent' && spec.upload));
  const contributions = [...new Set([...access.traits, ...writes, ...(spec.traits ?? [])])].map((trait) =>
    TRAITS[trait](options, spec),
  );
  const parameters = [
    ...(spec.params ?? []).map(parameter),
    ...(spec.query ? queryParameters(spec.query) : []),
    ...contributions.flatMap((c) => c.parameters ?? []),
  ];
  return {
    operationId: spec.id,
    summary: spec.summary,
    ...((spec.description || role.note) && { description: [spec.description, role.note].filter(Boolean).join('\n\n') }),
    tags: [spec.tag],
    security: access.security,
    ...(role.roles && { 'x-roles': role.roles }),
    ...(role.bound && { 'x-bound': role.bound }),
    ...(parameters.length > 0 && { parameters }),
    ...(spec.body && {
      requestBody: {
        required: spec.body.required ?? true,
        content: {
          'application/json': {
            schema: withRefs(spec.body.schema),
            ...(spec.body.example !== undefined && { example: spec.body.example }),
          },
        },
      },
    }),
    responses: operationResponses(spec, path, options, contributions),
  };
}

/**
 * Answers that are not one operation's: both 401 shapes, the admin 401s, the common problems,
 * and what unknown routes and methods get.
 */
function sharedResponses(options: DocumentOptions): JsonObject {
  const common = Object.values(commonProblems(options)).map(({ name, problems: list }) => [
    name,
    problemResponse(list[0]!.status, list, '/api/v1/orders/location'),
  ]);
  return {
    ...Object.fromEntries(common),
    SessionRejected: {
      description:
        'The interface’s two 401s (part 5), each after a random 500 to 1499 ms delay. ' +
        '`text/plain` `{"error":"Session not valid"}`: the key is ' +
        'missing, empty, unknown, revoked (its session closed) or retired ' +
        '(replaced by a rotation longer than `KEY_ROTATION_GRACE` ago). ' +
        '`application/json` `{"message":"Unauthorized","uid":null}`: the ' +
        'session is recognised but expired, or of the wrong type.',
      headers: responseHeaders([]),
      content: {
        'text/plain': { schema: sessionNotValidBodySchema, example: examples.sessionNotValid },
        'application/json': { schema: ref('UnauthorizedBody'), example: examples.unauthorized },
      },
    },
    AdminUnauthorized: problemResponse(
      401,
      [problems.unauthorized('A valid admin token is required')],
      '/admin/v1/locations',
      ['AdminChallenge'],
    ),
    BoardUnauthorized: problemResponse(
      401,
      [problems.unauthorized('A valid admin token is required')],
      '/admin/queues',
      ['BoardChallenge'],
    ),
    UnknownRoute: problemResponse(404, [problems.notFound('No route for GET /api/v1/nowhere')], '/api/v1/nowhere'),
    MethodNotAllowed: problemResponse(
      405,
      [problems.methodNotAllowed('PATCH', '/api/v1/orders/location')],
      '/api/v1/orders/location',
      ['Allow'],
    ),
  };
}

/**
 * `value` with a `pattern` beside each text format (schemas/text.ts): what
 * other tools check, they do not know our formats.
 */
function withTextPatterns<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withTextPatterns) as T;
  if (typeof value !== 'object' || value === null) return value;
  const out = Object.fromEntries(
    Object.entries(value).map(([key, child]) => [key, withTextPatterns(child)]),
  ) as JsonObject;
  const pattern = typeof out.format === 'string' ? TEXT_PATTERNS[out.format] : undefined;
  if (pattern !== undefined && out.pattern === undefined) out.pattern = pattern;
  return out as T;
}

export function buildOpenApiDocument(options: DocumentOptions): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const spec of OPERATIONS) {
    const path = spec.path.replace('{base}', options.basePath);
    paths[path] = { ...paths[path], [spec.method]: operation(spec, path, options) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'POS ordering service',
      version: options.version,
      description: DESCRIPTION,
      license: { name: 'Proprietary (UNLICENSED)', identifier: 'LicenseRef-UNLICENSED' },
    },
    servers: [{ url: '/', description: 'This node' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: withTextPatterns(paths),
    components: {
      schemas: withTextPatterns(componentSchemas()),
      responses: sharedResponses(options),
      headers: componentHeaders(),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
