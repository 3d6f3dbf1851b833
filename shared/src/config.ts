/**
 * The configuration: the environment, validated against its schema (config-schema.ts), read into
 * one section per part of the service (`config.http`, `config.mongo`, ...). The types derive from
 * the schema: each section is what `readSections` makes of the schema's typed variables.
 */
import Ajv, { type KeywordDefinition, type SchemaValidateFunction } from 'ajv';
import type { FromSchema } from 'json-schema-to-ts';
import { DURATION_PATTERN, envSchema, type SectionName } from './config-schema';

export class ConfigError extends Error {}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  const match = DURATION_PATTERN.exec(text);
  const unit = match ? UNIT_MS[match[2] ?? 'ms'] : undefined;
  if (!match || unit === undefined) throw new Error(`not a duration: ${text}`);
  return Number(match[1]) * unit;
}

export interface RateLimit {
  points: number;
  /** Whole seconds (the window of a Redis-backed counter). */
  windowSeconds: number;
}

const RATE_LIMIT_PATTERN = /^([0-9]+)\/(.+)$/;

/** `20/1s`: 20 requests per second; windows are whole seconds, minutes or hours. `name`: the variable, for errors. */
export function parseRateLimit(text: string | undefined, name = 'RATE_LIMIT'): RateLimit | undefined {
  if (text === undefined) return undefined;
  const match = RATE_LIMIT_PATTERN.exec(text);
  if (!match?.[1] || !match[2]) throw new ConfigError(`invalid configuration: ${name} must be count/window`);
  const windowSeconds = parseDuration(match[2]) / 1000;
  if (windowSeconds < 1) throw new ConfigError(`invalid configuration: ${name} window must be at least 1s`);
  return { points: Number(match[1]), windowSeconds };
}

/**
 * Partitions on a cluster unless QUEUE_PARTITIONS says otherwise: evenly spread over 2, 3 or 6
 * masters (each partition's slot lies in its own sixth of the slot space). One Redis gets one.
 */
export const CLUSTER_QUEUE_PARTITIONS = 6;

/** Comma-separated secrets, each at least 32 characters (spaces around commas allowed); never echoed in an error. */
export function parseSecretList(text: string | undefined): string[] {
  if (text === undefined) return [];
  const secrets = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (secrets.some((s) => s.length < 32 || /\s/.test(s))) {
    throw new ConfigError(
      'invalid configuration: API_KEY_SECRET_PREVIOUS must list secrets of at ' +
        'least 32 characters (no spaces), separated by commas',
    );
  }
  return secrets;
}

const isOn = (flag: string): boolean => flag === '1' || flag === 'true';

/** MONGO_WRITE_CONCERN as the driver's `w`. */
const writeConcern = (text: string): 'majority' | number => (text === 'majority' ? text : Number(text));

/**
 * `minDuration`: a duration at least this long (config-schema.ts). A value that is no duration
 * passes here: its `pattern` reports it.
 */
const atLeast: SchemaValidateFunction = (min: string, value: string) => {
  if (!DURATION_PATTERN.test(value) || parseDuration(value) >= parseDuration(min)) return true;
  atLeast.errors = [{ keyword: 'minDuration', message: `must be at least ${min}`, params: { limit: min } }];
  return false;
};
const minDuration: KeywordDefinition = {
  keyword: 'minDuration',
  type: 'string',
  schemaType: 'string',
  validate: atLeast,
};

/** `unset`: what leaving a variable out means, for the docs; it checks nothing. */
const unset: KeywordDefinition = { keyword: 'unset', schemaType: 'string' };

/** The environment as the schema reads it: integers as numbers, absent variables at their defaults. */
type Env = FromSchema<typeof envSchema>;

const validateEnv = new Ajv({
  coerceTypes: true,
  useDefaults: true,
  allErrors: true,
  keywords: [minDuration, unset],
}).compile<Env>(envSchema);

/** The schema's variables from `env` (an empty one counts as absent), checked; throws naming every bad one. */
function readEnv(env: NodeJS.ProcessEnv): Env {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(envSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  if (!validateEnv(raw)) {
    const problems = (validateEnv.errors ?? []).map((e) => `${e.instancePath.slice(1)} ${e.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return raw;
}

/**
 * The sections of the configuration, each read from its variables by a function of its own;
 * `Config` is their type.
 */
const SECTIONS = {
  http: (env: Env) => ({
    port: env.PORT,
    adminPort: env.ADMIN_PORT,
    host: env.HOST,
    basePath: env.BASE_PATH,
    trustProxy: isOn(env.TRUST_PROXY),
    bodyLimitBytes: env.BODY_LIMIT,
    keepAliveTimeoutMs: parseDuration(env.HTTP_KEEPALIVE_TIMEOUT),
    headersTimeoutMs: parseDuration(env.HTTP_HEADERS_TIMEOUT),
    requestTimeoutMs: parseDuration(env.HTTP_REQUEST_TIMEOUT),
    maxConnections: env.HTTP_MAX_CONNECTIONS ?? env.SSE_MAX_STREAMS + 1024,
  }),
  mongo: (env: Env) => ({
    url: env.MONGO_URL,
    db: env.MONGO_DB,
    writeConcern: writeConcern(env.MONGO_WRITE_CONCERN),
    timeoutMs: parseDuration(env.MONGO_TIMEOUT),
  }),
  redis: (env: Env) => ({
    url: env.REDIS_URL,
    cluster: isOn(env.REDIS_CLUSTER),
    prefix: env.REDIS_PREFIX,
    commandTimeoutMs: parseDuration(env.REDIS_COMMAND_TIMEOUT),
  }),
  queue: (env: Env) => ({
    partitions: env.QUEUE_PARTITIONS ?? (isOn(env.REDIS_CLUSTER) ? CLUSTER_QUEUE_PARTITIONS : 1),
    drainPartitions: env.QUEUE_DRAIN_PARTITIONS,
    jobTimeoutMs: parseDuration(env.JOB_TIMEOUT),
    jobKeepFailed: env.JOB_KEEP_FAILED,
  }),
  overload: (env: Env) => ({
    queueWaitTargetMs: parseDuration(env.QUEUE_WAIT_TARGET),
    queueAdmissionFloor: env.QUEUE_ADMISSION_FLOOR,
    maxInFlight: env.HTTP_MAX_IN_FLIGHT,
  }),
  worker: (env: Env) => ({
    concurrency: env.WORKER_CONCURRENCY,
    jobLockDurationMs: parseDuration(env.JOB_LOCK_DURATION),
    metricsPort: env.METRICS_PORT,
    faultInject: env.FAULT_INJECT,
  }),
  auth: (env: Env) => ({
    adminToken: env.ADMIN_TOKEN,
    apiKeySecret: env.API_KEY_SECRET,
    apiKeySecretPrevious: parseSecretList(env.API_KEY_SECRET_PREVIOUS),
    apiKeyAcceptUnsigned: isOn(env.API_KEY_ACCEPT_UNSIGNED),
    keyRotationGraceMs: parseDuration(env.KEY_ROTATION_GRACE),
    customerSessionTtlMs: parseDuration(env.CUSTOMER_SESSION_TTL),
    sessionCacheSize: env.SESSION_CACHE_SIZE,
    bullBoardWritable: isOn(env.BULL_BOARD_WRITABLE),
  }),
  limits: (env: Env) => ({
    rateLimit: parseRateLimit(env.RATE_LIMIT),
    apiKeyMaxRejections: env.API_KEY_MAX_REJECTIONS,
    customerMaxOpenOrders: env.CUSTOMER_MAX_OPEN_ORDERS,
    customerMaxCommands: env.CUSTOMER_MAX_COMMANDS,
  }),
  streams: (env: Env) => ({
    keepaliveMs: parseDuration(env.SSE_KEEPALIVE),
    timeoutMs: parseDuration(env.SSE_TIMEOUT),
    maxBufferBytes: env.SSE_MAX_BUFFER,
    maxStreamsPerSession: env.SSE_MAX_STREAMS_PER_SESSION,
    maxStreams: env.SSE_MAX_STREAMS,
    maxOperatorStreams: env.SSE_MAX_OPERATOR_STREAMS ?? Math.floor(env.SSE_MAX_STREAMS / 4),
    maxStreamsPerOperator: env.SSE_MAX_STREAMS_PER_OPERATOR,
  }),
  idempotency: (env: Env) => ({
    ttlMs: parseDuration(env.IDEMPOTENCY_TTL),
    maxRecords: env.IDEMPOTENCY_MAX_RECORDS,
    maxCustomerRecords: env.IDEMPOTENCY_MAX_CUSTOMER_RECORDS,
  }),
  orders: (env: Env) => ({
    failureThreshold: env.FAILURE_THRESHOLD,
    commandTtlMs: parseDuration(env.COMMAND_TTL),
  }),
  lifecycle: (env: Env) => ({
    archiveAfterMs: parseDuration(env.ORDER_ARCHIVE_AFTER),
    retentionMs: parseDuration(env.ORDER_RETENTION),
    selectingTtlMs: parseDuration(env.SELECTING_TTL),
    intervalMs: parseDuration(env.LIFECYCLE_INTERVAL),
  }),
  presence: (env: Env) => ({
    windowMs: parseDuration(env.PRESENCE_WINDOW),
    pauseWhenOffline: isOn(env.PAUSE_WHEN_OFFLINE),
    pauseAfterFailedOrders: env.PAUSE_AFTER_FAILED_ORDERS,
  }),
  menus: (env: Env) => ({
    bodyLimitBytes: env.MENU_BODY_LIMIT,
    limits: { items: env.MENU_MAX_ITEMS, groups: env.MENU_MAX_GROUPS, options: env.MENU_MAX_OPTIONS },
  }),
  orderDeadlines: (env: Env) => ({
    orderDeadlineMs: env.ORDER_DEADLINE === undefined ? undefined : parseDuration(env.ORDER_DEADLINE),
    autoAbortAfterMs: env.ORDER_AUTO_ABORT_AFTER === undefined ? undefined : parseDuration(env.ORDER_AUTO_ABORT_AFTER),
  }),
  telemetry: (env: Env) => ({
    // On when spans have somewhere to go; the SDK reads these variables (and the others it knows) itself.
    tracing:
      env.OTEL_TRACES_EXPORTER === 'console' ||
      (env.OTEL_TRACES_EXPORTER === 'otlp' &&
        Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)),
    endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT,
    protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL,
    exporter: env.OTEL_TRACES_EXPORTER,
    serviceName: env.OTEL_SERVICE_NAME,
    sampler: env.OTEL_TRACES_SAMPLER,
    samplerArg: env.OTEL_TRACES_SAMPLER_ARG,
  }),
  webhooks: (env: Env) => ({
    retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE.split(',').map(parseDuration),
    disableAfterMs: parseDuration(env.WEBHOOK_DISABLE_AFTER),
    logRetentionMs: parseDuration(env.WEBHOOK_LOG_RETENTION),
    eventRetentionMs: parseDuration(env.EVENT_RETENTION),
    timeoutMs: parseDuration(env.WEBHOOK_TIMEOUT),
    concurrency: env.WEBHOOK_CONCURRENCY,
    endpointConcurrency: env.WEBHOOK_ENDPOINT_CONCURRENCY,
    circuitFailures: env.WEBHOOK_CIRCUIT_FAILURES,
    circuitCooldownMs: parseDuration(env.WEBHOOK_CIRCUIT_COOLDOWN),
    maxPending: env.WEBHOOK_MAX_PENDING,
    testLimit: parseRateLimit(env.WEBHOOK_TEST_LIMIT, 'WEBHOOK_TEST_LIMIT')!,
    allowPrivate: isOn(env.WEBHOOK_ALLOW_PRIVATE),
    // Unset: the roles use API_KEY_SECRET (webhookSecretKey below).
    secretKey: env.WEBHOOK_SECRET_KEY,
  }),
  audit: (env: Env) => ({
    retentionMs: parseDuration(env.AUDIT_RETENTION),
  }),
  process: (env: Env) => ({
    logLevel: env.LOG_LEVEL,
    logFlushMs: parseDuration(env.LOG_FLUSH_INTERVAL),
    shutdownGraceMs: parseDuration(env.SHUTDOWN_GRACE),
  }),
} satisfies Record<SectionName, (env: Env) => object>;

type Sections = { [S in SectionName]: ReturnType<(typeof SECTIONS)[S]> };

function readSections(env: Env): Sections {
  return Object.fromEntries(Object.entries(SECTIONS).map(([name, read]) => [name, read(env)])) as Sections;
}

export type Config = Sections;
export type HttpConfig = Config['http'];
export type MongoConfig = Config['mongo'];
export type RedisConfig = Config['redis'];
export type QueueConfig = Config['queue'];
export type OverloadConfig = Config['overload'];
export type WorkerConfig = Config['worker'];
export type AuthConfig = Config['auth'];
export type LimitsConfig = Config['limits'];
export type StreamsConfig = Config['streams'];
export type IdempotencyConfig = Config['idempotency'];
export type OrdersConfig = Config['orders'];
export type LifecycleConfig = Config['lifecycle'];
export type PresenceConfig = Config['presence'];
export type OrderDeadlinesConfig = Config['orderDeadlines'];
export type TelemetryConfig = Config['telemetry'];
export type WebhooksConfig = Config['webhooks'];
export type AuditConfig = Config['audit'];
export type ProcessConfig = Config['process'];

/** What no one variable's schema can say: how the listeners' settings go together. */
function checkListeners(http: HttpConfig): void {
  if (http.adminPort !== undefined && http.adminPort !== 0 && http.adminPort === http.port) {
    throw new ConfigError('invalid configuration: ADMIN_PORT must differ from PORT');
  }
  // Node refuses a headers timeout over its whole-request timeout.
  if (http.headersTimeoutMs > http.requestTimeoutMs)
    throw new ConfigError('invalid configuration: HTTP_HEADERS_TIMEOUT must be at most HTTP_REQUEST_TIMEOUT');
}

/** The server secret webhook secrets are sealed under: WEBHOOK_SECRET_KEY, else API_KEY_SECRET. */
export function webhookSecretKey(config: {
  webhooks: Pick<WebhooksConfig, 'secretKey'>;
  auth: Pick<AuthConfig, 'apiKeySecret'>;
}): string | undefined {
  return config.webhooks.secretKey ?? config.auth.apiKeySecret;
}

/** Reads the environment once; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const config = readSections(readEnv(env));
  checkListeners(config.http);
  return config;
}

/** The URLs a role needs; the embedded launcher fills them in before the roles start. */
export function requireUrls(config: { mongo: Pick<MongoConfig, 'url'>; redis: Pick<RedisConfig, 'url'> }): {
  mongoUrl: string;
  redisUrl: string;
} {
  const mongoUrl = config.mongo.url;
  const redisUrl = config.redis.url;
  if (mongoUrl && redisUrl) return { mongoUrl, redisUrl };
  const missing = [!mongoUrl && 'MONGO_URL', !redisUrl && 'REDIS_URL'].filter(Boolean);
  throw new ConfigError(`${missing.join(' and ')} must be set (or use npm start for the embedded default)`);
}
