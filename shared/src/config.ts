import Ajv from 'ajv';

/** Durations are written `500ms`, `15s`, `10m`, `12h`, `90d`; a bare number is milliseconds. */
const DURATION = '^[0-9]+(ms|s|m|h|d)?$';

const envSchema = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    HOST: { type: 'string', default: '0.0.0.0' },
    BASE_PATH: { type: 'string', pattern: '^(/[A-Za-z0-9._~-]+)+$', default: '/api/v1' },
    MONGO_URL: { type: 'string', minLength: 1 },
    MONGO_DB: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', default: 'pos' },
    REDIS_URL: { type: 'string', minLength: 1 },
    REDIS_PREFIX: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', default: 'pos' },
    ADMIN_TOKEN: { type: 'string', minLength: 16 },
    FAILURE_THRESHOLD: { type: 'integer', minimum: 1, default: 3 },
    COMMAND_TTL: { type: 'string', pattern: DURATION, default: '10m' },
    CUSTOMER_SESSION_TTL: { type: 'string', pattern: DURATION, default: '12h' },
    SSE_KEEPALIVE: { type: 'string', pattern: DURATION, default: '15s' },
    SSE_TIMEOUT: { type: 'string', pattern: DURATION, default: '30m' },
    SSE_MAX_BUFFER: { type: 'integer', minimum: 1024, default: 1048576 },
    JOB_TIMEOUT: { type: 'string', pattern: DURATION, default: '10s' },
    JOB_LOCK_DURATION: { type: 'string', pattern: DURATION, default: '30s' },
    WORKER_CONCURRENCY: { type: 'integer', minimum: 1, default: 16 },
    SHUTDOWN_GRACE: { type: 'string', pattern: DURATION, default: '10s' },
    BODY_LIMIT: { type: 'integer', minimum: 1024, default: 65536 },
    ORDER_ARCHIVE_AFTER: { type: 'string', pattern: DURATION, default: '15m' },
    ORDER_RETENTION: { type: 'string', pattern: DURATION, default: '90d' },
    SELECTING_TTL: { type: 'string', pattern: DURATION, default: '2h' },
    LIFECYCLE_INTERVAL: { type: 'string', pattern: DURATION, default: '1m' },
    LOG_LEVEL: {
      type: 'string',
      enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
    },
    FAULT_INJECT: { type: 'string', enum: ['', 'crash-before-apply', 'crash-after-apply', 'crash-mid-archive'], default: '' },
  },
} as const;

export interface Config {
  port: number;
  host: string;
  basePath: string;
  mongoUrl: string | undefined;
  mongoDb: string;
  redisUrl: string | undefined;
  redisPrefix: string;
  adminToken: string | undefined;
  failureThreshold: number;
  commandTtlMs: number;
  customerSessionTtlMs: number;
  sseKeepaliveMs: number;
  sseTimeoutMs: number;
  /** Bytes a slow stream client may leave unread before the server drops it. */
  sseMaxBufferBytes: number;
  jobTimeoutMs: number;
  jobLockDurationMs: number;
  workerConcurrency: number;
  shutdownGraceMs: number;
  bodyLimitBytes: number;
  /** A COMPLETED or ABORTED order leaves the hot collection for the archive this long after it finished. */
  orderArchiveAfterMs: number;
  /** How long the archive keeps an order. */
  orderRetentionMs: number;
  /** A SELECTING order (a cart) untouched this long expires: it leaves the hot collection. */
  selectingTtlMs: number;
  /** How often the lifecycle job (archive, expiry, purges) runs. */
  lifecycleIntervalMs: number;
  logLevel: string;
  /** Test-only: makes a worker die around its MongoDB write (or mid-archive), to prove jobs survive crashes. */
  faultInject: '' | 'crash-before-apply' | 'crash-after-apply' | 'crash-mid-archive';
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  const match = /^([0-9]+)(ms|s|m|h|d)?$/.exec(text);
  if (!match) throw new Error(`not a duration: ${text}`);
  return Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!;
}

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
  // A scheduler firing every few milliseconds would only spin; a second is the finest useful pace.
  if (parseDuration(v.LIFECYCLE_INTERVAL as string) < 1000) throw new ConfigError('invalid configuration: LIFECYCLE_INTERVAL must be at least 1s');
  return {
    port: v.PORT as number,
    host: v.HOST as string,
    basePath: v.BASE_PATH as string,
    mongoUrl: v.MONGO_URL as string | undefined,
    mongoDb: v.MONGO_DB as string,
    redisUrl: v.REDIS_URL as string | undefined,
    redisPrefix: v.REDIS_PREFIX as string,
    adminToken: v.ADMIN_TOKEN as string | undefined,
    failureThreshold: v.FAILURE_THRESHOLD as number,
    commandTtlMs: parseDuration(v.COMMAND_TTL as string),
    customerSessionTtlMs: parseDuration(v.CUSTOMER_SESSION_TTL as string),
    sseKeepaliveMs: parseDuration(v.SSE_KEEPALIVE as string),
    sseTimeoutMs: parseDuration(v.SSE_TIMEOUT as string),
    sseMaxBufferBytes: v.SSE_MAX_BUFFER as number,
    jobTimeoutMs: parseDuration(v.JOB_TIMEOUT as string),
    jobLockDurationMs: parseDuration(v.JOB_LOCK_DURATION as string),
    workerConcurrency: v.WORKER_CONCURRENCY as number,
    shutdownGraceMs: parseDuration(v.SHUTDOWN_GRACE as string),
    bodyLimitBytes: v.BODY_LIMIT as number,
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
