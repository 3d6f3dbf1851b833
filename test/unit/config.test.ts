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
      sseKeepaliveMs: 15_000,
      sseTimeoutMs: 30 * 60_000,
      bodyLimitBytes: 65_536,
    });
    expect(config.mongoUrl).toBeUndefined();
  });

  it('reads durations with units; a bare number is milliseconds', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('15s')).toBe(15_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('250')).toBe(250);
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
});
