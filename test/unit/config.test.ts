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

  it('refuses a lifecycle interval under a second', () => {
    expect(() => loadConfig({ LIFECYCLE_INTERVAL: '500ms' })).toThrow(/LIFECYCLE_INTERVAL must be at least 1s/);
    expect(loadConfig({ LIFECYCLE_INTERVAL: '1s' }).lifecycleIntervalMs).toBe(1000);
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
