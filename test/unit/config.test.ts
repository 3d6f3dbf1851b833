import { ConfigError, loadConfig, parseDuration } from '@pos/shared/config';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      basePath: '/api/v1',
      failureThreshold: 3,
      commandTtlMs: 600_000,
      customerSessionTtlMs: 12 * 3_600_000,
      keyRotationGraceMs: 10 * 60_000,
      sseKeepaliveMs: 15_000,
      sseTimeoutMs: 30 * 60_000,
      bodyLimitBytes: 65_536,
      orderArchiveAfterMs: 15 * 60_000,
      orderRetentionMs: 90 * 86_400_000,
      selectingTtlMs: 2 * 3_600_000,
      lifecycleIntervalMs: 60_000,
    });
    expect(config.mongoUrl).toBeUndefined();
  });

  it('reads durations with units; a bare number is milliseconds', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('15s')).toBe(15_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('250')).toBe(250);
    expect(parseDuration('90d')).toBe(90 * 86_400_000);
  });

  it('keeps idle HTTP connections longer than the gateway does (65 s), the headers timeout above that', () => {
    expect(loadConfig({})).toMatchObject({ httpKeepAliveTimeoutMs: 65_000, httpHeadersTimeoutMs: 66_000 });
    expect(loadConfig({ HTTP_KEEPALIVE_TIMEOUT: '2m' })).toMatchObject({ httpKeepAliveTimeoutMs: 120_000, httpHeadersTimeoutMs: 121_000 });
    expect(loadConfig({ HTTP_KEEPALIVE_TIMEOUT: '10s', HTTP_HEADERS_TIMEOUT: '30s' })).toMatchObject({ httpKeepAliveTimeoutMs: 10_000, httpHeadersTimeoutMs: 30_000 });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT: '65s' })).toThrow(/HTTP_HEADERS_TIMEOUT must be longer than HTTP_KEEPALIVE_TIMEOUT/);
    expect(() => loadConfig({ HTTP_KEEPALIVE_TIMEOUT: '5m' })).toThrow(/must be at most 5m/);
  });

  it('refuses a lifecycle interval under a second', () => {
    expect(() => loadConfig({ LIFECYCLE_INTERVAL: '500ms' })).toThrow(/LIFECYCLE_INTERVAL must be at least 1s/);
    expect(loadConfig({ LIFECYCLE_INTERVAL: '1s' }).lifecycleIntervalMs).toBe(1000);
  });

  it('bounds what one key can make Redis keep, and the failed jobs kept', () => {
    expect(loadConfig({})).toMatchObject({ idempotencyMaxRecords: 10_000, idempotencyMaxCustomerRecords: 100, jobKeepFailed: 1000 });
    expect(loadConfig({ IDEMPOTENCY_MAX_RECORDS: '50', IDEMPOTENCY_MAX_CUSTOMER_RECORDS: '5', JOB_KEEP_FAILED: '10' })).toMatchObject({
      idempotencyMaxRecords: 50,
      idempotencyMaxCustomerRecords: 5,
      jobKeepFailed: 10,
    });
    expect(() => loadConfig({ IDEMPOTENCY_MAX_CUSTOMER_RECORDS: '0' })).toThrow(/IDEMPOTENCY_MAX_CUSTOMER_RECORDS/);
    expect(() => loadConfig({ JOB_KEEP_FAILED: '0' })).toThrow(/JOB_KEEP_FAILED/);
  });

  it('bounds the Redis commands and MongoDB operations, not below 100 ms', () => {
    expect(loadConfig({})).toMatchObject({ jobTimeoutMs: 10_000, redisCommandTimeoutMs: 1_000, mongoTimeoutMs: 3_000 });
    expect(loadConfig({ REDIS_COMMAND_TIMEOUT: '250ms', MONGO_TIMEOUT: '2s' })).toMatchObject({ redisCommandTimeoutMs: 250, mongoTimeoutMs: 2_000 });
    expect(() => loadConfig({ REDIS_COMMAND_TIMEOUT: '0' })).toThrow(/REDIS_COMMAND_TIMEOUT must be at least 100ms/);
    expect(() => loadConfig({ MONGO_TIMEOUT: '50ms' })).toThrow(/MONGO_TIMEOUT must be at least 100ms/);
  });

  it('caches sessions by default, serves no worker metrics unless asked', () => {
    expect(loadConfig({})).toMatchObject({ sessionCacheSize: 10_000, metricsPort: undefined });
    expect(loadConfig({ SESSION_CACHE_SIZE: '0', METRICS_PORT: '9091' })).toMatchObject({ sessionCacheSize: 0, metricsPort: 9091 });
  });

  it('has the documented security defaults', () => {
    expect(loadConfig({})).toMatchObject({
      adminPort: undefined,
      trustProxy: false,
      bullBoardWritable: false,
      sseMaxStreamsPerSession: 4,
      sseMaxStreams: 10_000,
      customerMaxOpenOrders: 5,
      customerMaxCommands: 5,
      apiKeyMaxRejections: 1000,
    });
    expect(loadConfig({ TRUST_PROXY: '1', BULL_BOARD_WRITABLE: 'true', ADMIN_PORT: '9090' })).toMatchObject({ trustProxy: true, bullBoardWritable: true, adminPort: 9090 });
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY/);
  });

  it('wants an admin token of at least 32 characters', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'x'.repeat(31) })).toThrow(/ADMIN_TOKEN must NOT have fewer than 32 characters/);
    expect(loadConfig({ ADMIN_TOKEN: 'x'.repeat(32) }).adminToken).toBe('x'.repeat(32));
  });

  it('reads the API key secrets: at least 32 characters, no comma or space; earlier ones comma-separated; unsigned keys refused by default', () => {
    expect(loadConfig({})).toMatchObject({ apiKeySecret: undefined, apiKeySecretPrevious: [], apiKeyAcceptUnsigned: false });
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(40);
    expect(loadConfig({ API_KEY_SECRET: a, API_KEY_SECRET_PREVIOUS: `${b}, ${a}`, API_KEY_ACCEPT_UNSIGNED: '1' })).toMatchObject({
      apiKeySecret: a,
      apiKeySecretPrevious: [b, a],
      apiKeyAcceptUnsigned: true,
    });
    expect(loadConfig({ API_KEY_SECRET_PREVIOUS: `${b},` }).apiKeySecretPrevious).toEqual([b]);
    expect(() => loadConfig({ API_KEY_SECRET: 'x'.repeat(31) })).toThrow(/API_KEY_SECRET must NOT have fewer than 32 characters/);
    expect(() => loadConfig({ API_KEY_SECRET: `${a},${b}` })).toThrow(/API_KEY_SECRET must match pattern/);
    expect(() => loadConfig({ API_KEY_SECRET: `${a} ${b}` })).toThrow(/API_KEY_SECRET must match pattern/);
    const short = 'short-secret-9f3k';
    expect(() => loadConfig({ API_KEY_SECRET_PREVIOUS: `${b},${short}` })).toThrow(/API_KEY_SECRET_PREVIOUS must list secrets of at least 32 characters/);
    // an error names the variable, never a secret
    expect(() => loadConfig({ API_KEY_SECRET_PREVIOUS: `${b},${short}` })).not.toThrow(new RegExp(short));
    expect(() => loadConfig({ API_KEY_ACCEPT_UNSIGNED: 'yes' })).toThrow(/API_KEY_ACCEPT_UNSIGNED/);
  });

  it('refuses an ADMIN_PORT that is PORT', () => {
    expect(() => loadConfig({ PORT: '8080', ADMIN_PORT: '8080' })).toThrow(/ADMIN_PORT must differ from PORT/);
    expect(() => loadConfig({ ADMIN_PORT: '8080' })).toThrow(/ADMIN_PORT must differ from PORT/);
    expect(loadConfig({ PORT: '0', ADMIN_PORT: '0' }).adminPort).toBe(0);
  });

  it('names every bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', COMMAND_TTL: 'soon' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty', COMMAND_TTL: 'soon' })).toThrow(/PORT.*COMMAND_TTL|COMMAND_TTL.*PORT/);
  });

  it('reads the cluster and scale settings: one Redis and one partition by default, six partitions on a cluster', () => {
    expect(loadConfig({})).toMatchObject({ redisCluster: false, queuePartitions: 1, queueDrainPartitions: undefined, mongoWriteConcern: 'majority' });
    expect(loadConfig({ REDIS_CLUSTER: '1', REDIS_URL: 'redis://a:7000,redis://b:7001' })).toMatchObject({
      redisCluster: true,
      redisUrl: 'redis://a:7000,redis://b:7001',
      queuePartitions: 6,
    });
    expect(loadConfig({ REDIS_CLUSTER: 'true', QUEUE_PARTITIONS: '3', QUEUE_DRAIN_PARTITIONS: '2' })).toMatchObject({ queuePartitions: 3, queueDrainPartitions: 2 });
    expect(loadConfig({ QUEUE_PARTITIONS: '4' })).toMatchObject({ redisCluster: false, queuePartitions: 4 });
    expect(loadConfig({ MONGO_WRITE_CONCERN: '2' }).mongoWriteConcern).toBe(2);
    expect(() => loadConfig({ REDIS_CLUSTER: 'yes', QUEUE_PARTITIONS: '0', MONGO_WRITE_CONCERN: '0' })).toThrow(/REDIS_CLUSTER.*QUEUE_PARTITIONS.*MONGO_WRITE_CONCERN|MONGO_WRITE_CONCERN.*REDIS_CLUSTER/);
  });
});
