import { ConfigError, loadConfig, parseDuration, requireUrls, webhookSecretKey } from '@pos/shared/config';
import { CONFIG_SECTIONS, envSchema } from '@pos/shared/config-schema';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      http: { port: 8080, basePath: '/api/v1', bodyLimitBytes: 65_536 },
      orders: { failureThreshold: 3, commandTtlMs: 600_000 },
      auth: { customerSessionTtlMs: 12 * 3_600_000, keyRotationGraceMs: 10 * 60_000 },
      streams: { keepaliveMs: 15_000, timeoutMs: 30 * 60_000 },
      lifecycle: {
        archiveAfterMs: 15 * 60_000,
        retentionMs: 90 * 86_400_000,
        selectingTtlMs: 2 * 3_600_000,
        intervalMs: 60_000,
      },
      audit: { retentionMs: 400 * 86_400_000 },
    });
    expect(config.mongo.url).toBeUndefined();
  });

  it('reads durations with units; a bare number is milliseconds', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('15s')).toBe(15_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('250')).toBe(250);
    expect(parseDuration('90d')).toBe(90 * 86_400_000);
  });

  it('keeps idle HTTP connections longer than the gateway does (65 s); a request has 10 s for its headers, 30 s in all', () => {
    expect(loadConfig({}).http).toMatchObject({
      keepAliveTimeoutMs: 65_000,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      maxConnections: 11_024,
    });
    expect(loadConfig({ HTTP_KEEPALIVE_TIMEOUT: '2m' }).http).toMatchObject({
      keepAliveTimeoutMs: 120_000,
      headersTimeoutMs: 10_000,
    });
    expect(loadConfig({ HTTP_HEADERS_TIMEOUT: '30s', HTTP_REQUEST_TIMEOUT: '1m' }).http).toMatchObject({
      headersTimeoutMs: 30_000,
      requestTimeoutMs: 60_000,
    });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT: '31s' })).toThrow(
      /HTTP_HEADERS_TIMEOUT must be at most HTTP_REQUEST_TIMEOUT/,
    );
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT: '500ms' })).toThrow(/HTTP_HEADERS_TIMEOUT must be at least 1s/);
    // room for every stream, and for requests
    expect(loadConfig({ SSE_MAX_STREAMS: '100' }).http.maxConnections).toBe(1_124);
    expect(loadConfig({ HTTP_MAX_CONNECTIONS: '50' }).http.maxConnections).toBe(50);
  });

  it("keeps a quarter of a node's streams for operators, and the rest for registers", () => {
    expect(loadConfig({}).streams).toMatchObject({
      maxStreams: 10_000,
      maxOperatorStreams: 2_500,
      maxStreamsPerOperator: 8,
    });
    expect(loadConfig({ SSE_MAX_STREAMS: '12' }).streams.maxOperatorStreams).toBe(3);
    expect(loadConfig({ SSE_MAX_OPERATOR_STREAMS: '0' }).streams.maxOperatorStreams).toBe(0);
  });

  it('gives webhook endpoints a share: 2 attempts at once, a circuit after 5 failures in a row, 10,000 waiting; 10 tests a minute', () => {
    expect(loadConfig({}).webhooks).toMatchObject({
      endpointConcurrency: 2,
      circuitFailures: 5,
      circuitCooldownMs: 30_000,
      maxPending: 10_000,
      testLimit: { points: 10, windowSeconds: 60 },
    });
    expect(() => loadConfig({ WEBHOOK_TEST_LIMIT: '5/0s' })).toThrow(/WEBHOOK_TEST_LIMIT window must be at least 1s/);
  });

  it('keeps presence, pause and deadlines off but for a 60 s presence window', () => {
    const unset = loadConfig({});
    expect(unset.presence).toEqual({ windowMs: 60_000, pauseWhenOffline: false, pauseAfterFailedOrders: undefined });
    expect(unset.orderDeadlines).toEqual({ orderDeadlineMs: undefined, autoAbortAfterMs: undefined });
    const set = loadConfig({ ORDER_DEADLINE: '90s', ORDER_AUTO_ABORT_AFTER: '15m', PAUSE_AFTER_FAILED_ORDERS: '2' });
    expect(set.orderDeadlines).toEqual({ orderDeadlineMs: 90_000, autoAbortAfterMs: 900_000 });
    expect(set.presence.pauseAfterFailedOrders).toBe(2);
    expect(() => loadConfig({ PRESENCE_WINDOW: '500ms' })).toThrow(/PRESENCE_WINDOW must be at least 1s/);
  });

  it('reads the webhook settings: the retry schedule, disabling, the log, the secret key', () => {
    expect(loadConfig({}).webhooks).toMatchObject({
      retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      disableAfterMs: 5 * 86_400_000,
      logRetentionMs: 28 * 86_400_000,
      timeoutMs: 10_000,
      allowPrivate: false,
      secretKey: undefined,
    });
    const secret = 'k'.repeat(32);
    expect(
      loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1s,2s,4s', WEBHOOK_ALLOW_PRIVATE: '1', API_KEY_SECRET: secret }).webhooks,
    ).toMatchObject({
      retryScheduleMs: [1_000, 2_000, 4_000],
      allowPrivate: true,
    });
    expect(webhookSecretKey(loadConfig({ API_KEY_SECRET: secret }))).toBe(secret);
    expect(webhookSecretKey(loadConfig({ API_KEY_SECRET: secret, WEBHOOK_SECRET_KEY: 'w'.repeat(32) }))).toBe(
      'w'.repeat(32),
    );
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1s,,2s' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY: 'short' })).toThrow(/WEBHOOK_SECRET_KEY/);
  });

  it('refuses a lifecycle interval under a second', () => {
    expect(() => loadConfig({ LIFECYCLE_INTERVAL: '500ms' })).toThrow(/LIFECYCLE_INTERVAL must be at least 1s/);
    expect(loadConfig({ LIFECYCLE_INTERVAL: '1s' }).lifecycle.intervalMs).toBe(1000);
  });

  it('bounds what one key can make Redis keep, and the failed jobs kept', () => {
    expect(loadConfig({})).toMatchObject({
      idempotency: { maxRecords: 10_000, maxCustomerRecords: 100 },
      queue: { jobKeepFailed: 1000 },
    });
    expect(
      loadConfig({ IDEMPOTENCY_MAX_RECORDS: '50', IDEMPOTENCY_MAX_CUSTOMER_RECORDS: '5', JOB_KEEP_FAILED: '10' }),
    ).toMatchObject({
      idempotency: { maxRecords: 50, maxCustomerRecords: 5 },
      queue: { jobKeepFailed: 10 },
    });
    expect(() => loadConfig({ IDEMPOTENCY_MAX_CUSTOMER_RECORDS: '0' })).toThrow(/IDEMPOTENCY_MAX_CUSTOMER_RECORDS/);
    expect(() => loadConfig({ JOB_KEEP_FAILED: '0' })).toThrow(/JOB_KEEP_FAILED/);
  });

  it('bounds the Redis commands and MongoDB operations, not below 100 ms', () => {
    expect(loadConfig({})).toMatchObject({
      queue: { jobTimeoutMs: 10_000 },
      redis: { commandTimeoutMs: 1_000 },
      mongo: { timeoutMs: 3_000 },
    });
    expect(loadConfig({ REDIS_COMMAND_TIMEOUT: '250ms', MONGO_TIMEOUT: '2s' })).toMatchObject({
      redis: { commandTimeoutMs: 250 },
      mongo: { timeoutMs: 2_000 },
    });
    expect(() => loadConfig({ REDIS_COMMAND_TIMEOUT: '0' })).toThrow(/REDIS_COMMAND_TIMEOUT must be at least 100ms/);
    expect(() => loadConfig({ MONGO_TIMEOUT: '50ms' })).toThrow(/MONGO_TIMEOUT must be at least 100ms/);
  });

  it('caches sessions by default, serves no worker metrics unless asked', () => {
    expect(loadConfig({})).toMatchObject({ auth: { sessionCacheSize: 10_000 }, worker: { metricsPort: undefined } });
    expect(loadConfig({ SESSION_CACHE_SIZE: '0', METRICS_PORT: '9091' })).toMatchObject({
      auth: { sessionCacheSize: 0 },
      worker: { metricsPort: 9091 },
    });
  });

  it('has the documented security defaults', () => {
    expect(loadConfig({})).toMatchObject({
      http: { adminPort: undefined, trustProxy: false },
      auth: { bullBoardWritable: false },
      streams: { maxStreamsPerSession: 4, maxStreams: 10_000 },
      limits: { customerMaxOpenOrders: 5, customerMaxCommands: 5, apiKeyMaxRejections: 1000 },
    });
    expect(loadConfig({ TRUST_PROXY: '1', BULL_BOARD_WRITABLE: 'true', ADMIN_PORT: '9090' })).toMatchObject({
      http: { trustProxy: true, adminPort: 9090 },
      auth: { bullBoardWritable: true },
    });
    expect(loadConfig({ TRUST_PROXY: '0' }).http.trustProxy).toBe(false);
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY/);
  });

  it('wants an admin token of at least 32 characters', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'x'.repeat(31) })).toThrow(
      /ADMIN_TOKEN must NOT have fewer than 32 characters/,
    );
    expect(loadConfig({ ADMIN_TOKEN: 'x'.repeat(32) }).auth.adminToken).toBe('x'.repeat(32));
  });

  it('reads the API key secrets: at least 32 characters, no comma or space; earlier ones comma-separated; unsigned keys refused by default', () => {
    expect(loadConfig({}).auth).toMatchObject({
      apiKeySecret: undefined,
      apiKeySecretPrevious: [],
      apiKeyAcceptUnsigned: false,
    });
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(40);
    expect(
      loadConfig({ API_KEY_SECRET: a, API_KEY_SECRET_PREVIOUS: `${b}, ${a}`, API_KEY_ACCEPT_UNSIGNED: '1' }).auth,
    ).toMatchObject({
      apiKeySecret: a,
      apiKeySecretPrevious: [b, a],
      apiKeyAcceptUnsigned: true,
    });
    expect(loadConfig({ API_KEY_SECRET_PREVIOUS: `${b},` }).auth.apiKeySecretPrevious).toEqual([b]);
    expect(() => loadConfig({ API_KEY_SECRET: 'x'.repeat(31) })).toThrow(
      /API_KEY_SECRET must NOT have fewer than 32 characters/,
    );
    expect(() => loadConfig({ API_KEY_SECRET: `${a},${b}` })).toThrow(/API_KEY_SECRET must match pattern/);
    expect(() => loadConfig({ API_KEY_SECRET: `${a} ${b}` })).toThrow(/API_KEY_SECRET must match pattern/);
    const short = 'short-secret-9f3k';
    expect(() => loadConfig({ API_KEY_SECRET_PREVIOUS: `${b},${short}` })).toThrow(
      /API_KEY_SECRET_PREVIOUS must list secrets of at least 32 characters/,
    );
    // an error names the variable, never a secret
    expect(() => loadConfig({ API_KEY_SECRET_PREVIOUS: `${b},${short}` })).not.toThrow(new RegExp(short));
    expect(() => loadConfig({ API_KEY_ACCEPT_UNSIGNED: 'yes' })).toThrow(/API_KEY_ACCEPT_UNSIGNED/);
  });

  it('refuses an ADMIN_PORT that is PORT', () => {
    expect(() => loadConfig({ PORT: '8080', ADMIN_PORT: '8080' })).toThrow(/ADMIN_PORT must differ from PORT/);
    expect(() => loadConfig({ ADMIN_PORT: '8080' })).toThrow(/ADMIN_PORT must differ from PORT/);
    expect(loadConfig({ PORT: '0', ADMIN_PORT: '0' }).http.adminPort).toBe(0);
  });

  it('names every bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', COMMAND_TTL: 'soon' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty', COMMAND_TTL: 'soon' })).toThrow(/PORT.*COMMAND_TTL|COMMAND_TTL.*PORT/);
  });

  it('reads the cluster and scale settings: one Redis and one partition by default, six partitions on a cluster', () => {
    expect(loadConfig({})).toMatchObject({
      redis: { cluster: false },
      queue: { partitions: 1, drainPartitions: undefined },
      mongo: { writeConcern: 'majority' },
    });
    expect(loadConfig({ REDIS_CLUSTER: '1', REDIS_URL: 'redis://a:7000,redis://b:7001' })).toMatchObject({
      redis: { cluster: true, url: 'redis://a:7000,redis://b:7001' },
      queue: { partitions: 6 },
    });
    expect(
      loadConfig({ REDIS_CLUSTER: 'true', QUEUE_PARTITIONS: '3', QUEUE_DRAIN_PARTITIONS: '2' }).queue,
    ).toMatchObject({ partitions: 3, drainPartitions: 2 });
    expect(loadConfig({ QUEUE_PARTITIONS: '4' })).toMatchObject({
      redis: { cluster: false },
      queue: { partitions: 4 },
    });
    expect(loadConfig({ MONGO_WRITE_CONCERN: '2' }).mongo.writeConcern).toBe(2);
    expect(() => loadConfig({ REDIS_CLUSTER: 'yes', QUEUE_PARTITIONS: '0', MONGO_WRITE_CONCERN: '0' })).toThrow(
      /REDIS_CLUSTER.*QUEUE_PARTITIONS.*MONGO_WRITE_CONCERN|MONGO_WRITE_CONCERN.*REDIS_CLUSTER/,
    );
  });

  it('names bad durations, including those under their least, with the other bad variables', () => {
    expect(() => loadConfig({ PORT: 'eighty', LIFECYCLE_INTERVAL: '500ms', MONGO_TIMEOUT: '50ms' })).toThrow(
      /PORT must be integer.*MONGO_TIMEOUT must be at least 100ms.*LIFECYCLE_INTERVAL must be at least 1s/,
    );
    expect(() => loadConfig({ LIFECYCLE_INTERVAL: 'soon' })).toThrow(/LIFECYCLE_INTERVAL must match pattern/);
    expect(() => loadConfig({ LIFECYCLE_INTERVAL: 'soon' })).not.toThrow(/at least/);
  });

  it('reads the rate limit as points per whole-second window', () => {
    expect(loadConfig({}).limits.rateLimit).toBeUndefined();
    expect(loadConfig({ RATE_LIMIT: '20/1s' }).limits.rateLimit).toEqual({ points: 20, windowSeconds: 1 });
    expect(loadConfig({ RATE_LIMIT: '600/1m' }).limits.rateLimit).toEqual({ points: 600, windowSeconds: 60 });
    expect(() => loadConfig({ RATE_LIMIT: '20/0s' })).toThrow(/RATE_LIMIT window must be at least 1s/);
    expect(() => loadConfig({ RATE_LIMIT: '20 per second' })).toThrow(/RATE_LIMIT must match pattern/);
  });

  it('takes an empty variable for an unset one, and ignores variables it does not know', () => {
    expect(loadConfig({ MONGO_URL: '', PORT: '', HOME: '/root' })).toMatchObject({
      mongo: { url: undefined },
      http: { port: 8080 },
    });
    expect(() => requireUrls(loadConfig({ REDIS_URL: 'redis://r:6379' }))).toThrow(/^MONGO_URL must be set/);
    expect(() => requireUrls(loadConfig({}))).toThrow(/MONGO_URL and REDIS_URL must be set/);
    expect(requireUrls(loadConfig({ MONGO_URL: 'mongodb://m', REDIS_URL: 'redis://r:6379' }))).toEqual({
      mongoUrl: 'mongodb://m',
      redisUrl: 'redis://r:6379',
    });
  });

  it('refuses values outside their enums: log level, fault injection', () => {
    expect(loadConfig({ LOG_LEVEL: 'debug', FAULT_INJECT: 'crash-after-apply' })).toMatchObject({
      process: { logLevel: 'debug' },
      worker: { faultInject: 'crash-after-apply' },
    });
    expect(() => loadConfig({ LOG_LEVEL: 'verbose', FAULT_INJECT: 'crash-always' })).toThrow(
      /FAULT_INJECT must be equal to one of the allowed values.*LOG_LEVEL must be equal to one of the allowed values/,
    );
  });

  it('traces only when spans have somewhere to go: an OTLP endpoint, or the console exporter', () => {
    expect(loadConfig({}).telemetry).toMatchObject({
      tracing: false,
      protocol: 'http/protobuf',
      sampler: 'parentbased_always_on',
      exporter: 'otlp',
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).telemetry).toMatchObject({
      tracing: true,
      endpoint: 'http://c:4318',
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }).telemetry.tracing).toBe(true);
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).telemetry.tracing,
    ).toBe(false);
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).telemetry.tracing).toBe(true);
    expect(() =>
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http' }),
    ).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT[\s\S]*OTEL_EXPORTER_OTLP_PROTOCOL/);
  });

  describe('sections', () => {
    /** A valid value other than the default, for each variable. */
    const SAMPLES: Record<string, string> = {
      PORT: '8081',
      ADMIN_PORT: '9090',
      HOST: '127.0.0.1',
      BASE_PATH: '/pos/v2',
      TRUST_PROXY: '1',
      BODY_LIMIT: '4096',
      HTTP_KEEPALIVE_TIMEOUT: '70s',
      HTTP_HEADERS_TIMEOUT: '20s',
      HTTP_REQUEST_TIMEOUT: '1m',
      HTTP_MAX_CONNECTIONS: '500',
      MONGO_URL: 'mongodb://db.internal:27017',
      MONGO_DB: 'orders',
      MONGO_WRITE_CONCERN: '2',
      MONGO_TIMEOUT: '2s',
      REDIS_URL: 'redis://cache.internal:6379',
      REDIS_CLUSTER: 'true',
      REDIS_PREFIX: 'pos2',
      REDIS_COMMAND_TIMEOUT: '500ms',
      QUEUE_PARTITIONS: '3',
      QUEUE_DRAIN_PARTITIONS: '2',
      JOB_TIMEOUT: '5s',
      JOB_KEEP_FAILED: '10',
      QUEUE_WAIT_TARGET: '250ms',
      QUEUE_ADMISSION_FLOOR: '8',
      HTTP_MAX_IN_FLIGHT: '100',
      WORKER_CONCURRENCY: '4',
      JOB_LOCK_DURATION: '1m',
      METRICS_PORT: '9091',
      FAULT_INJECT: 'crash-before-apply',
      ADMIN_TOKEN: 'a'.repeat(32),
      API_KEY_SECRET: 'k'.repeat(32),
      API_KEY_SECRET_PREVIOUS: 'p'.repeat(32),
      API_KEY_ACCEPT_UNSIGNED: '1',
      KEY_ROTATION_GRACE: '0',
      CUSTOMER_SESSION_TTL: '1h',
      SESSION_CACHE_SIZE: '0',
      BULL_BOARD_WRITABLE: '1',
      RATE_LIMIT: '20/1s',
      API_KEY_MAX_REJECTIONS: '10',
      CUSTOMER_MAX_OPEN_ORDERS: '2',
      CUSTOMER_MAX_COMMANDS: '2',
      SSE_KEEPALIVE: '5s',
      SSE_TIMEOUT: '1h',
      SSE_MAX_BUFFER: '2048',
      SSE_MAX_STREAMS_PER_SESSION: '2',
      SSE_MAX_STREAMS: '100',
      SSE_MAX_OPERATOR_STREAMS: '10',
      SSE_MAX_STREAMS_PER_OPERATOR: '3',
      IDEMPOTENCY_TTL: '1h',
      IDEMPOTENCY_MAX_RECORDS: '50',
      IDEMPOTENCY_MAX_CUSTOMER_RECORDS: '5',
      FAILURE_THRESHOLD: '5',
      COMMAND_TTL: '1m',
      MENU_BODY_LIMIT: '1048576',
      MENU_MAX_ITEMS: '100',
      MENU_MAX_GROUPS: '10',
      MENU_MAX_OPTIONS: '5',
      ORDER_ARCHIVE_AFTER: '1h',
      ORDER_RETENTION: '30d',
      SELECTING_TTL: '30m',
      LIFECYCLE_INTERVAL: '10s',
      PRESENCE_WINDOW: '30s',
      PAUSE_WHEN_OFFLINE: '1',
      PAUSE_AFTER_FAILED_ORDERS: '3',
      ORDER_DEADLINE: '10m',
      ORDER_AUTO_ABORT_AFTER: '30m',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'pos-api-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
      OTEL_TRACES_EXPORTER: 'none',
      WEBHOOK_RETRY_SCHEDULE: '1s,1m',
      WEBHOOK_DISABLE_AFTER: '1d',
      WEBHOOK_LOG_RETENTION: '7d',
      EVENT_RETENTION: '7d',
      WEBHOOK_TIMEOUT: '5s',
      WEBHOOK_CONCURRENCY: '5',
      WEBHOOK_ENDPOINT_CONCURRENCY: '1',
      WEBHOOK_CIRCUIT_FAILURES: '3',
      WEBHOOK_CIRCUIT_COOLDOWN: '1m',
      WEBHOOK_MAX_PENDING: '100',
      WEBHOOK_TEST_LIMIT: '1/1s',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_SECRET_KEY: 'w'.repeat(32),
      AUDIT_RETENTION: '30d',
      LOG_LEVEL: 'warn',
      LOG_FLUSH_INTERVAL: '1s',
      SHUTDOWN_GRACE: '30s',
    };
    /**
     * Besides its own section: a cluster takes six queue partitions by
     * default; a node's connections follow its streams.
     */
    const ALSO_CHANGES: Record<string, string[]> = { REDIS_CLUSTER: ['queue'], SSE_MAX_STREAMS: ['http'] };

    it("are the schema's sections", () => {
      expect(Object.keys(loadConfig({}))).toEqual(Object.keys(CONFIG_SECTIONS));
    });

    it('each variable changes its own section of the configuration, and no other', () => {
      expect(Object.keys(SAMPLES).sort()).toEqual(Object.keys(envSchema.properties).sort());
      const defaults = new Map(
        Object.entries(loadConfig({})).map(([section, values]) => [section, JSON.stringify(values)]),
      );
      for (const [section, { variables }] of Object.entries(CONFIG_SECTIONS)) {
        for (const name of Object.keys(variables)) {
          const config = loadConfig({ [name]: SAMPLES[name] });
          const changed = Object.entries(config)
            .filter(([key, values]) => JSON.stringify(values) !== defaults.get(key))
            .map(([key]) => key);
          expect({ name, changed: changed.sort() }).toEqual({
            name,
            changed: [section, ...(ALSO_CHANGES[name] ?? [])].sort(),
          });
        }
      }
    });
  });
});
