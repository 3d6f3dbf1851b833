/**
 * Each role's environment, by the names the configuration schema defines
 * (shared/src/config-schema.ts): a variable renamed there and not here is a type error, and
 * test/shipped/kubernetes.test.ts checks the rendered manifests the same way. Secrets are
 * referenced from the Secret SITE.secret, never written here.
 */
import type { IEnvVar as EnvVar } from 'kubernetes-models/v1/EnvVar';
import type { envSchema } from '@pos/shared/config-schema';
import { type Shape, SITE } from './site.mjs';

export type EnvName = keyof typeof envSchema.properties;

/** The listeners, and what they are called in the pods' ports. */
export const PORTS = { http: 8080, admin: 9090, metrics: 9464 } as const;

/** SHUTDOWN_GRACE: what a process gives in-flight requests and running jobs on SIGTERM. */
export const SHUTDOWN_GRACE_SECONDS = 10;

/** The variables read from the Secret, by role: the worker needs no admin token and signs no key. */
const SECRETS = {
  api: ['MONGO_URL', 'REDIS_URL', 'ADMIN_TOKEN', 'API_KEY_SECRET', 'WEBHOOK_SECRET_KEY'],
  worker: ['MONGO_URL', 'REDIS_URL', 'WEBHOOK_SECRET_KEY'],
} as const satisfies Record<string, readonly EnvName[]>;
/** Read from the Secret when it has them: the earlier key secrets, during a rotation (docs/security.md#api-keys). */
const OPTIONAL_SECRETS = { api: ['API_KEY_SECRET_PREVIOUS'], worker: [] } as const satisfies Record<
  string,
  readonly EnvName[]
>;

function common(shape: Shape): Partial<Record<EnvName, string>> {
  return {
    LOG_LEVEL: 'info',
    SHUTDOWN_GRACE: `${SHUTDOWN_GRACE_SECONDS}s`,
    ...(shape.redisCluster ? { REDIS_CLUSTER: '1' } : {}),
  };
}

const values = (vars: Partial<Record<EnvName, string>>): EnvVar[] =>
  Object.entries(vars).map(([name, value]) => ({ name, value }));
const fromSecret = (names: readonly EnvName[], optional: boolean): EnvVar[] =>
  names.map((name) => ({
    name,
    valueFrom: { secretKeyRef: { name: SITE.secret, key: name, ...(optional ? { optional: true } : {}) } },
  }));

export function apiEnv(shape: Shape): EnvVar[] {
  return [
    ...values({
      ...common(shape),
      PORT: String(PORTS.http),
      // the operator surfaces (admin API, Bull Board, /metrics) on a port the ingress never reaches
      ADMIN_PORT: String(PORTS.admin),
      // the ingress controller is the one proxy in front
      TRUST_PROXY: '1',
    }),
    ...fromSecret(SECRETS.api, false),
    ...fromSecret(OPTIONAL_SECRETS.api, true),
  ];
}

export function workerEnv(shape: Shape): EnvVar[] {
  return [
    ...values({ ...common(shape), METRICS_PORT: String(PORTS.metrics) }),
    ...fromSecret(SECRETS.worker, false),
    ...fromSecret(OPTIONAL_SECRETS.worker, true),
  ];
}
