import Ajv from 'ajv';

/** Durations are written `500ms`, `15s`, `10m`, `12h`, `90d`; a bare number is milliseconds. */
const DURATION_PATTERN = /^([0-9]+)(ms|s|m|h|d)?$/;
const DURATION = DURATION_PATTERN.source;
/** Switches are written `1` / `0` (or `true` / `false`). */
const FLAG = { type: 'string', enum: ['0', '1', 'true', 'false'], default: '0' } as const;

const envSchema = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    ADMIN_PORT: { type: 'integer', minimum: 0, maximum: 65535 },
    METRICS_PORT: { type: 'integer', minimum: 0, maximum: 65535 },
    HOST: { type: 'string', default: '0.0.0.0' },
    BASE_PATH: { type: 'string', pattern: '^(/[A-Za-z0-9._~-]+)+$', default: '/api/v1' },
    MONGO_URL: { type: 'string', minLength: 1 },
    MONGO_DB: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', default: 'pos' },
    MONGO_WRITE_CONCERN: { type: 'string', pattern: '^(majority|[1-9][0-9]*)$', default: 'majority' },
    REDIS_URL: { type: 'string', minLength: 1 },
    REDIS_CLUSTER: FLAG,
    REDIS_PREFIX: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', default: 'pos' },
    QUEUE_PARTITIONS: { type: 'integer', minimum: 1, maximum: 1024 },
    QUEUE_DRAIN_PARTITIONS: { type: 'integer', minimum: 1, maximum: 1024 },
    ADMIN_TOKEN: { type: 'string', minLength: 32 },
    // No comma and no space, so that it can move into API_KEY_SECRET_PREVIOUS as it is.
    API_KEY_SECRET: { type: 'string', minLength: 32, pattern: '^[^,\\s]*$' },
    API_KEY_SECRET_PREVIOUS: { type: 'string' },
    API_KEY_ACCEPT_UNSIGNED: FLAG,
    TRUST_PROXY: FLAG,
    BULL_BOARD_WRITABLE: FLAG,
    FAILURE_THRESHOLD: { type: 'integer', minimum: 1, default: 3 },
    COMMAND_TTL: { type: 'string', pattern: DURATION, default: '10m' },
    CUSTOMER_SESSION_TTL: { type: 'string', pattern: DURATION, default: '12h' },
    KEY_ROTATION_GRACE: { type: 'string', pattern: DURATION, default: '10m' },
    SSE_KEEPALIVE: { type: 'string', pattern: DURATION, default: '15s' },
    SSE_TIMEOUT: { type: 'string', pattern: DURATION, default: '30m' },
    SSE_MAX_BUFFER: { type: 'integer', minimum: 1024, default: 1048576 },
    SSE_MAX_STREAMS_PER_SESSION: { type: 'integer', minimum: 1, default: 4 },
    SSE_MAX_STREAMS: { type: 'integer', minimum: 1, default: 10000 },
    CUSTOMER_MAX_OPEN_ORDERS: { type: 'integer', minimum: 1, default: 5 },
    CUSTOMER_MAX_COMMANDS: { type: 'integer', minimum: 1, default: 5 },
    API_KEY_MAX_REJECTIONS: { type: 'integer', minimum: 1, default: 1000 },
    SESSION_CACHE_SIZE: { type: 'integer', minimum: 0, default: 10000 },
    JOB_TIMEOUT: { type: 'string', pattern: DURATION, default: '10s' },
    REDIS_COMMAND_TIMEOUT: { type: 'string', pattern: DURATION, default: '1s' },
    MONGO_TIMEOUT: { type: 'string', pattern: DURATION, default: '3s' },
    JOB_LOCK_DURATION: { type: 'string', pattern: DURATION, default: '30s' },
    JOB_KEEP_FAILED: { type: 'integer', minimum: 1, default: 1000 },
    WORKER_CONCURRENCY: { type: 'integer', minimum: 1, default: 16 },
    SHUTDOWN_GRACE: { type: 'string', pattern: DURATION, default: '10s' },
    BODY_LIMIT: { type: 'integer', minimum: 1024, default: 65536 },
    HTTP_KEEPALIVE_TIMEOUT: { type: 'string', pattern: DURATION, default: '65s' },
    HTTP_HEADERS_TIMEOUT: { type: 'string', pattern: DURATION },
    IDEMPOTENCY_TTL: { type: 'string', pattern: DURATION, default: '24h' },
    IDEMPOTENCY_MAX_RECORDS: { type: 'integer', minimum: 1, default: 10000 },
    IDEMPOTENCY_MAX_CUSTOMER_RECORDS: { type: 'integer', minimum: 1, default: 100 },
    RATE_LIMIT: { type: 'string', pattern: '^[1-9][0-9]{0,8}/[0-9]+(s|m|h)$' },
    ORDER_ARCHIVE_AFTER: { type: 'string', pattern: DURATION, default: '15m' },
    ORDER_RETENTION: { type: 'string', pattern: DURATION, default: '90d' },
    SELECTING_TTL: { type: 'string', pattern: DURATION, default: '2h' },
    LIFECYCLE_INTERVAL: { type: 'string', pattern: DURATION, default: '1m' },
    LOG_LEVEL: {
      type: 'string',
      enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
    },
    FAULT_INJECT: { type: 'string', enum: ['', 'crash-before-apply', 'crash-after-apply', 'crash-after-answer', 'crash-mid-archive'], default: '' },
  },
} as const;

export interface Config {
  port: number;
  /** When set, the operator surfaces (admin API, Bull Board, /metrics) listen here and not on `port`. */
  adminPort: number | undefined;
  /** The worker's /metrics listener, when set (the API serves /metrics on its own listeners). */
  metricsPort: number | undefined;
  host: string;
  basePath: string;
  mongoUrl: string | undefined;
  mongoDb: string;
  /** `w` of every write: `majority`, or a number of members. */
  mongoWriteConcern: 'majority' | number;
  /** One Redis URL, or (with `redisCluster`) comma-separated seed nodes of a Redis Cluster. */
  redisUrl: string | undefined;
  redisCluster: boolean;
  redisPrefix: string;
  /** Work queue partitions this deployment adds to and consumes. */
  queuePartitions: number;
  /** The partition count of an earlier layout whose queues are still drained (consumed, never added to). */
  queueDrainPartitions: number | undefined;
  adminToken: string | undefined;
  /** Signs new API keys, and verifies keys before any lookup; required by the API. */
  apiKeySecret: string | undefined;
  /** Earlier secrets whose keys are still accepted (a secret rotation under way). */
  apiKeySecretPrevious: string[];
  /** Keys issued before keys were signed are looked up too (a migration under way). */
  apiKeyAcceptUnsigned: boolean;
  /** Believe X-Forwarded-For/-Proto/-Host (one proxy in front); off by default. */
  trustProxy: boolean;
  /** Bull Board may retry, clean, promote and pause; read-only otherwise. */
  bullBoardWritable: boolean;
  failureThreshold: number;
  commandTtlMs: number;
  customerSessionTtlMs: number;
  /** How long the key a rotation replaced keeps working. */
  keyRotationGraceMs: number;
  sseKeepaliveMs: number;
  sseTimeoutMs: number;
  /** Bytes a slow stream client may leave unread before the server drops it. */
  sseMaxBufferBytes: number;
  /** Streams one session may hold on a node; a new one ends the session's oldest. */
  sseMaxStreamsPerSession: number;
  /** Streams one node holds; beyond, new streams get a 429. */
  sseMaxStreams: number;
  /** Open orders (SELECTING, NEW, PLACED, FAILED) one customer session may have at once. */
  customerMaxOpenOrders: number;
  /** Live (unacknowledged, unexpired) commands one customer session may have at once. */
  customerMaxCommands: number;
  /** api_key rejections a node holds in their 401 delay at once; beyond, a 429 at once. */
  apiKeyMaxRejections: number;
  /** Sessions an API node keeps in memory by key hash (0: none; every request reads MongoDB). */
  sessionCacheSize: number;
  /** How long a request waits for a worker; every request is answered by this plus a second. */
  jobTimeoutMs: number;
  /** The API's bound on one Redis command of a request (ioredis `commandTimeout`). */
  redisCommandTimeoutMs: number;
  /** The API's bound on each phase of one MongoDB operation: server selection, a connection, the reply. */
  mongoTimeoutMs: number;
  jobLockDurationMs: number;
  /** Failed jobs each work queue partition keeps (besides their 7-day age bound). */
  jobKeepFailed: number;
  workerConcurrency: number;
  shutdownGraceMs: number;
  bodyLimitBytes: number;
  /**
   * How long an API node keeps an idle keep-alive connection: longer than the gateway keeps its
   * upstream connections (deploy/nginx.conf), so that the gateway is the side that closes them.
   */
  httpKeepAliveTimeoutMs: number;
  /** How long a request's headers may take to arrive; above the keep-alive timeout (default: it plus 1 s). */
  httpHeadersTimeoutMs: number;
  /** How long the answer to a request with an Idempotency-Key is kept for its retries. */
  idempotencyTtlMs: number;
  /** Idempotency records one SERVICE session, or the admin token, may hold at once. */
  idempotencyMaxRecords: number;
  /** Idempotency records one CUSTOMER session may hold at once. */
  idempotencyMaxCustomerRecords: number;
  /** Requests per API key per window, counted across all nodes; absent: no limit. */
  rateLimit: RateLimit | undefined;
  /** A COMPLETED or ABORTED order leaves the hot collection for the archive this long after it finished. */
  orderArchiveAfterMs: number;
  /** How long the archive keeps an order. */
  orderRetentionMs: number;
  /** A SELECTING or NEW order (not yet submitted) untouched this long expires: it leaves the hot collection. */
  selectingTtlMs: number;
  /** How often the lifecycle job (archive, expiry, purges) runs. */
  lifecycleIntervalMs: number;
  logLevel: string;
  /** Test-only: makes a worker die around its MongoDB write (or mid-archive), to prove jobs survive crashes. */
  faultInject: '' | 'crash-before-apply' | 'crash-after-apply' | 'crash-after-answer' | 'crash-mid-archive';
}

export interface RateLimit {
  points: number;
  /** Whole seconds (the window of a Redis-backed counter). */
  windowSeconds: number;
}

/** `20/1s`: 20 requests per second; windows are whole seconds, minutes or hours. */
export function parseRateLimit(text: string | undefined): RateLimit | undefined {
  if (text === undefined) return undefined;
  const [points, window] = text.split('/') as [string, string];
  const windowSeconds = parseDuration(window) / 1000;
  if (windowSeconds < 1) throw new ConfigError(`invalid configuration: RATE_LIMIT window must be at least 1s`);
  return { points: Number(points), windowSeconds };
}

/**
 * Partitions on a cluster unless QUEUE_PARTITIONS says otherwise: evenly spread over 2, 3 or 6
 * masters (each partition's slot lies in its own sixth of the slot space). One Redis gets one.
 */
export const CLUSTER_QUEUE_PARTITIONS = 6;

/** Comma-separated secrets, each at least 32 characters (spaces around commas allowed); never echoed in an error. */
export function parseSecretList(text: string | undefined): string[] {
  if (text === undefined) return [];
  const secrets = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (secrets.some((s) => s.length < 32 || /\s/.test(s))) {
    throw new ConfigError('invalid configuration: API_KEY_SECRET_PREVIOUS must list secrets of at least 32 characters (no spaces), separated by commas');
  }
  return secrets;
}

/** Node's default `requestTimeout`: the longest a request may take to arrive whole. */
const HTTP_REQUEST_TIMEOUT_MS = 300_000;

/** The least REDIS_COMMAND_TIMEOUT and MONGO_TIMEOUT. */
const MIN_CALL_TIMEOUT_MS = 100;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  const match = DURATION_PATTERN.exec(text);
  if (!match) throw new Error(`not a duration: ${text}`);
  return Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!;
}

const isOn = (flag: string): boolean => flag === '1' || flag === 'true';

export class ConfigError extends Error {}

/** Reads the environment once; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(envSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true });
  const validate = ajv.compile(envSchema);
  if (!validate(raw)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath.slice(1)} ${e.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const v = raw as Record<string, string | number | undefined>;
  if (v.ADMIN_PORT !== undefined && v.ADMIN_PORT !== 0 && v.ADMIN_PORT === v.PORT) {
    throw new ConfigError('invalid configuration: ADMIN_PORT must differ from PORT');
  }
  const redisCluster = isOn(v.REDIS_CLUSTER as string);
  const writeConcern = v.MONGO_WRITE_CONCERN as string;
  // A scheduler firing every few milliseconds would only spin; a second is the finest useful pace.
  if (parseDuration(v.LIFECYCLE_INTERVAL as string) < 1000) throw new ConfigError('invalid configuration: LIFECYCLE_INTERVAL must be at least 1s');
  const httpKeepAliveTimeoutMs = parseDuration(v.HTTP_KEEPALIVE_TIMEOUT as string);
  const httpHeadersTimeoutMs = v.HTTP_HEADERS_TIMEOUT === undefined ? httpKeepAliveTimeoutMs + 1000 : parseDuration(v.HTTP_HEADERS_TIMEOUT as string);
  // Above it, as load balancer guides ask (Node before 18 ran the headers timer on idle kept connections).
  if (httpHeadersTimeoutMs <= httpKeepAliveTimeoutMs) throw new ConfigError('invalid configuration: HTTP_HEADERS_TIMEOUT must be longer than HTTP_KEEPALIVE_TIMEOUT');
  // Node refuses a headers timeout over its whole-request timeout (5 min).
  if (httpHeadersTimeoutMs > HTTP_REQUEST_TIMEOUT_MS) throw new ConfigError('invalid configuration: HTTP_HEADERS_TIMEOUT (or HTTP_KEEPALIVE_TIMEOUT + 1s) must be at most 5m');
  // Below this a busy but healthy Redis or MongoDB would be taken for a hung one.
  for (const name of ['REDIS_COMMAND_TIMEOUT', 'MONGO_TIMEOUT'] as const) {
    if (parseDuration(v[name] as string) < MIN_CALL_TIMEOUT_MS) throw new ConfigError(`invalid configuration: ${name} must be at least ${MIN_CALL_TIMEOUT_MS}ms`);
  }
  return {
    port: v.PORT as number,
    adminPort: v.ADMIN_PORT as number | undefined,
    metricsPort: v.METRICS_PORT as number | undefined,
    host: v.HOST as string,
    basePath: v.BASE_PATH as string,
    mongoUrl: v.MONGO_URL as string | undefined,
    mongoDb: v.MONGO_DB as string,
    mongoWriteConcern: writeConcern === 'majority' ? 'majority' : Number(writeConcern),
    redisUrl: v.REDIS_URL as string | undefined,
    redisCluster,
    redisPrefix: v.REDIS_PREFIX as string,
    queuePartitions: (v.QUEUE_PARTITIONS as number | undefined) ?? (redisCluster ? CLUSTER_QUEUE_PARTITIONS : 1),
    queueDrainPartitions: v.QUEUE_DRAIN_PARTITIONS as number | undefined,
    adminToken: v.ADMIN_TOKEN as string | undefined,
    apiKeySecret: v.API_KEY_SECRET as string | undefined,
    apiKeySecretPrevious: parseSecretList(v.API_KEY_SECRET_PREVIOUS as string | undefined),
    apiKeyAcceptUnsigned: isOn(v.API_KEY_ACCEPT_UNSIGNED as string),
    trustProxy: isOn(v.TRUST_PROXY as string),
    bullBoardWritable: isOn(v.BULL_BOARD_WRITABLE as string),
    failureThreshold: v.FAILURE_THRESHOLD as number,
    commandTtlMs: parseDuration(v.COMMAND_TTL as string),
    customerSessionTtlMs: parseDuration(v.CUSTOMER_SESSION_TTL as string),
    keyRotationGraceMs: parseDuration(v.KEY_ROTATION_GRACE as string),
    sseKeepaliveMs: parseDuration(v.SSE_KEEPALIVE as string),
    sseTimeoutMs: parseDuration(v.SSE_TIMEOUT as string),
    sseMaxBufferBytes: v.SSE_MAX_BUFFER as number,
    sseMaxStreamsPerSession: v.SSE_MAX_STREAMS_PER_SESSION as number,
    sseMaxStreams: v.SSE_MAX_STREAMS as number,
    customerMaxOpenOrders: v.CUSTOMER_MAX_OPEN_ORDERS as number,
    customerMaxCommands: v.CUSTOMER_MAX_COMMANDS as number,
    apiKeyMaxRejections: v.API_KEY_MAX_REJECTIONS as number,
    sessionCacheSize: v.SESSION_CACHE_SIZE as number,
    jobTimeoutMs: parseDuration(v.JOB_TIMEOUT as string),
    redisCommandTimeoutMs: parseDuration(v.REDIS_COMMAND_TIMEOUT as string),
    mongoTimeoutMs: parseDuration(v.MONGO_TIMEOUT as string),
    jobLockDurationMs: parseDuration(v.JOB_LOCK_DURATION as string),
    jobKeepFailed: v.JOB_KEEP_FAILED as number,
    workerConcurrency: v.WORKER_CONCURRENCY as number,
    shutdownGraceMs: parseDuration(v.SHUTDOWN_GRACE as string),
    bodyLimitBytes: v.BODY_LIMIT as number,
    httpKeepAliveTimeoutMs,
    httpHeadersTimeoutMs,
    idempotencyTtlMs: parseDuration(v.IDEMPOTENCY_TTL as string),
    idempotencyMaxRecords: v.IDEMPOTENCY_MAX_RECORDS as number,
    idempotencyMaxCustomerRecords: v.IDEMPOTENCY_MAX_CUSTOMER_RECORDS as number,
    rateLimit: parseRateLimit(v.RATE_LIMIT as string | undefined),
    orderArchiveAfterMs: parseDuration(v.ORDER_ARCHIVE_AFTER as string),
    orderRetentionMs: parseDuration(v.ORDER_RETENTION as string),
    selectingTtlMs: parseDuration(v.SELECTING_TTL as string),
    lifecycleIntervalMs: parseDuration(v.LIFECYCLE_INTERVAL as string),
    logLevel: v.LOG_LEVEL as string,
    faultInject: v.FAULT_INJECT as Config['faultInject'],
  };
}

/** The URLs a role needs; the embedded launcher fills them in before the roles start. */
export function requireUrls(config: Config): { mongoUrl: string; redisUrl: string } {
  const missing = [!config.mongoUrl && 'MONGO_URL', !config.redisUrl && 'REDIS_URL'].filter(Boolean);
  if (missing.length > 0) throw new ConfigError(`${missing.join(' and ')} must be set (or use npm start for the embedded default)`);
  return { mongoUrl: config.mongoUrl!, redisUrl: config.redisUrl! };
}
