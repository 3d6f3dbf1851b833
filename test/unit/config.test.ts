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

  it('names every bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', COMMAND_TTL: 'soon' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty', COMMAND_TTL: 'soon' })).toThrow(/PORT.*COMMAND_TTL|COMMAND_TTL.*PORT/);
  });
});
