import type { Config } from '@pos/shared/config';
import { generateAdminToken, generateApiKeySecret } from '@pos/shared/auth/keys';
import type { Logger } from '@pos/shared/log';
import { startApi } from '@pos/api/server';
import { startWorker } from '@pos/worker/worker';
import { startJongodb } from './jongodb';
import { startRedisCluster } from './redis-cluster';
import { startRedisServer } from './redis-server';

/**
 * API and worker in one process on the embedded default: redis-server unless REDIS_URL is set
 * (with REDIS_CLUSTER=1, a Redis Cluster of three masters from redis-server),
 * the in-memory MongoDB stand-in unless MONGO_URL is set, a generated admin token unless
 * ADMIN_TOKEN is set, a generated API key secret unless API_KEY_SECRET is set. `close()` stops
 * whatever has started, in reverse order, and may be called while `start()` is still under way
 * (a signal during start-up).
 */
export class EmbeddedService {
  private readonly stops: Array<() => Promise<void>> = [];
  private closing = false;
  /** Set when this process made up the admin token (so it must be shown once). */
  generatedToken: string | undefined;
  port = 0;
  /** The operator listener's port, when ADMIN_PORT is set. */
  adminPort: number | undefined;

  constructor(
    readonly config: Config,
    private readonly log: Logger,
  ) {}

  get origin(): string {
    return `http://localhost:${this.port}`;
  }

  /** Where the admin API, Bull Board and /metrics are: ADMIN_PORT's listener, else the one origin. */
  get operatorOrigin(): string {
    return this.adminPort === undefined ? this.origin : `http://localhost:${this.adminPort}`;
  }

  get baseUrl(): string {
    return `${this.origin}${this.config.http.basePath}`;
  }

  /** Resolves once the API listens, or early (with `closed` true) when close() came first. */
  async start(): Promise<void> {
    const { config, log } = this;
    const keepsData = Boolean(config.mongo.url);
    if (!config.redis.url && config.redis.cluster) {
      const cluster = await this.adopt(startRedisCluster({ replicas: 0 }), (c) => c.stop());
      config.redis.url = cluster.url;
      log.info({ redisUrl: cluster.url }, 'started an embedded Redis Cluster of three masters');
    } else if (!config.redis.url) {
      const redis = await this.adopt(startRedisServer(), (r) => r.stop());
      config.redis.url = redis.url;
      log.info({ redisUrl: redis.url }, 'started embedded redis-server');
    }
    if (!config.mongo.url && !this.closed) {
      const mongo = await this.adopt(startJongodb(), (m) => m.stop());
      config.mongo.url = mongo.url;
      log.warn({ mongoUrl: mongo.url }, 'no MONGO_URL: using the in-memory MongoDB stand-in; data is not kept');
    }
    if (!config.auth.adminToken) config.auth.adminToken = this.generatedToken = generateAdminToken();
    if (!config.auth.apiKeySecret) {
      config.auth.apiKeySecret = generateApiKeySecret();
      // Keys are signed under it: with data that outlives the process, they would not outlive it.
      if (keepsData)
        log.warn(
          'no API_KEY_SECRET: generated one for this run; the API keys issued now stop ' +
            'working when the service restarts (set API_KEY_SECRET to keep them)',
        );
    }
    if (this.closed) return;
    await this.adopt(startWorker(config, log.child({ role: 'worker' })), (w) => w.close());
    if (this.closed) return;
    const api = await this.adopt(startApi(config, log.child({ role: 'api' })), (a) => a.close());
    this.port = api.port;
    this.adminPort = api.adminPort;
  }

  get closed(): boolean {
    return this.closing;
  }

  async close(): Promise<void> {
    this.closing = true;
    while (this.stops.length > 0) await this.stops.pop()!();
  }

  /** Registers what started; if close() has begun meanwhile, stops it at once. */
  private async adopt<T>(starting: Promise<T>, stop: (started: T) => Promise<void>): Promise<T> {
    const started = await starting;
    if (this.closing) await stop(started);
    else this.stops.push(() => stop(started));
    return started;
  }
}
