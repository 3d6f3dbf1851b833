/**
 * Every environment variable the service reads, as JSON Schema, grouped by the section of the
 * configuration it feeds: the one definition of the configuration. `loadConfig` (config.ts)
 * validates the environment with it and derives its types from it; `docs/configuration.md` is
 * generated from it (scripts/docs/configuration.ts). Each variable carries its description, and
 * either its `default` or, in `unset`, what its absence means.
 */
import type { JSONSchema } from 'json-schema-to-ts';

/** Durations are written `500ms`, `15s`, `10m`, `12h`, `90d`; a bare number is milliseconds. */
export const DURATION_PATTERN = /^([0-9]+)(ms|s|m|h|d)?$/;
const DURATION = DURATION_PATTERN.source;

/** The literal types of a constant, as `as const` gives them (a const type parameter; no assertion). */
const constant = <const T>(value: T): T => value;

/** Switches are written `1` / `0` (or `true` / `false`). */
export const FLAG_VALUES = constant(['0', '1', 'true', 'false']);

/**
 * One variable: its JSON Schema (on the text of the environment; integers are read as integers)
 * with a description, and with either a `default` or `unset`: what leaving it out means, in words
 * (it is shown where the default would be). `minDuration` is a keyword of ours (config.ts): a
 * duration at least this long.
 */
export type ConfigVariable = Exclude<JSONSchema, boolean> & { description: string; minDuration?: string } & (
    | { default: string | number; unset?: never }
    | { default?: never; unset: string }
  );

export interface ConfigSection {
  title: string;
  /** One sentence on what the section sets, above its table. */
  summary: string;
  variables: Record<string, ConfigVariable>;
}

const defineSections = <const T extends Record<string, ConfigSection>>(sections: T): T => sections;

const port = constant({ type: 'integer', minimum: 0, maximum: 65535 });
const name = constant({ type: 'string', pattern: '^[A-Za-z0-9_-]+$' });
const flag = constant({ type: 'string', enum: FLAG_VALUES, default: '0' });

/** The sections, in the order the docs list them; each becomes `config.<section>`. */
export const CONFIG_SECTIONS = defineSections({
  http: {
    title: 'HTTP listeners',
    summary: 'Where the API listens, and how long it keeps connections.',
    variables: {
      PORT: {
        ...port,
        default: 8080,
        description:
          'The register-facing listener of the API: the register interface and the customer app API (and the operator surfaces, unless `ADMIN_PORT` is set). `0` takes a free port.',
      },
      ADMIN_PORT: {
        ...port,
        unset: 'none: the operator surfaces are on `PORT`',
        description:
          'When set, the operator surfaces (admin API, Bull Board, `/metrics`) listen here and no longer on `PORT`: set it wherever `PORT` is reachable from outside. Must differ from `PORT`.',
      },
      HOST: { type: 'string', default: '0.0.0.0', description: "The interface every listener binds to (the API's two, the worker's `/metrics`)." },
      BASE_PATH: {
        type: 'string',
        pattern: '^(/[A-Za-z0-9._~-]+)+$',
        default: '/api/v1',
        description: 'The path of the register and customer interface (`{base_url}`); change it only to match what the registers are set up with.',
      },
      TRUST_PROXY: {
        ...flag,
        description:
          '`1`: believe `X-Forwarded-For`, `-Host` and `-Proto` from the one proxy in front (its own hop only). Set it only behind a proxy that overwrites those headers.',
      },
      BODY_LIMIT: { type: 'integer', minimum: 1024, default: 65536, description: 'The largest request body, in bytes; a larger one is answered 413.' },
      HTTP_KEEPALIVE_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        default: '65s',
        description:
          "How long an API node keeps an idle keep-alive connection. Keep it above the gateway's upstream `keepalive_timeout` (30 s in `deploy/nginx.conf`), so that the gateway is the side that closes idle connections.",
      },
      HTTP_HEADERS_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        minDuration: '1s',
        default: '10s',
        description:
          "How long a request's headers may take to arrive, from its first byte; a client that trickles them slower is cut off (an idle keep-alive connection is not timed by it). At most `HTTP_REQUEST_TIMEOUT`.",
      },
      HTTP_REQUEST_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        minDuration: '1s',
        default: '30s',
        description:
          'How long a whole request (headers and body) may take to arrive; a client that sends it slower is cut off with a 408. An event stream is not timed by it once its request has arrived.',
      },
      HTTP_MAX_CONNECTIONS: {
        type: 'integer',
        minimum: 1,
        unset: '`SSE_MAX_STREAMS` + 1024: every stream, and room for requests',
        description:
          "The connections each listener of an API node holds at once; beyond, a new connection is closed at once (the gateway's retry goes to another node).",
      },
    },
  },
  mongo: {
    title: 'MongoDB',
    summary: 'Where the orders are kept, and how long the API waits for MongoDB.',
    variables: {
      MONGO_URL: {
        type: 'string',
        minLength: 1,
        unset: 'required by the API and the worker; `npm start` starts an in-memory stand-in',
        description: "The MongoDB connection string (a replica set's in production).",
      },
      MONGO_DB: { ...name, default: 'pos', description: 'The database name.' },
      MONGO_WRITE_CONCERN: {
        type: 'string',
        pattern: '^(majority|[1-9][0-9]*)$',
        default: 'majority',
        description:
          'The `w` of every write: `majority`, or a number of replica set members. A write acknowledged by fewer than a majority may be rolled back by an election.',
      },
      MONGO_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        minDuration: '100ms',
        default: '3s',
        description:
          "The API's bound on each phase of a request's MongoDB operation: choosing the server, getting a connection, the reply (an operation the driver retries once takes up to twice this). Keep it under half of `JOB_TIMEOUT`.",
      },
    },
  },
  redis: {
    title: 'Redis',
    summary: 'Where the queues and the pub/sub channels are, and how long the API waits for Redis.',
    variables: {
      REDIS_URL: {
        type: 'string',
        minLength: 1,
        unset: 'required by the API and the worker; `npm start` starts `redis-server`',
        description:
          'The Redis URL (the server needs `maxmemory-policy noeviction`); with `REDIS_CLUSTER=1`, comma-separated seed nodes (`redis://10.0.0.1:6379,redis://10.0.0.2:6379`).',
      },
      REDIS_CLUSTER: {
        ...flag,
        description:
          '`1`: `REDIS_URL` names a Redis Cluster (sharded pub/sub, work queues spread over the masters). Without `REDIS_URL`, `npm start` then starts a local cluster of three masters.',
      },
      REDIS_PREFIX: {
        ...name,
        default: 'pos',
        description: 'The prefix of every Redis key and pub/sub channel of the deployment; deployments that share a Redis need different ones.',
      },
      REDIS_COMMAND_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        minDuration: '100ms',
        default: '1s',
        description: "The API's bound on each Redis command of a request. Keep it well under `JOB_TIMEOUT`.",
      },
    },
  },
  queue: {
    title: 'Work queue',
    summary: 'How the work queue is partitioned, how long a request waits for its job, and what the queue keeps.',
    variables: {
      QUEUE_PARTITIONS: {
        type: 'integer',
        minimum: 1,
        maximum: 1024,
        unset: '`1`; `6` with `REDIS_CLUSTER`',
        description:
          "The work queues the locations' jobs are spread over (each location's in one). The same on every role; to change it, set `QUEUE_DRAIN_PARTITIONS` to the old count meanwhile.",
      },
      QUEUE_DRAIN_PARTITIONS: {
        type: 'integer',
        minimum: 1,
        maximum: 1024,
        unset: 'none',
        description:
          'An earlier `QUEUE_PARTITIONS` whose queues the workers still empty (and Bull Board and `/metrics` show) while the count changes; unset it once they are empty.',
      },
      JOB_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        default: '10s',
        description: 'How long a request waits for a worker before answering 503; every request is answered within this and a second, whatever hangs.',
      },
      JOB_KEEP_FAILED: {
        type: 'integer',
        minimum: 1,
        default: 1000,
        description: 'Failed jobs each work queue partition keeps for inspection: the newest, each for at most 7 days.',
      },
    },
  },
  overload: {
    title: 'Overload',
    summary: 'What an API node admits when more is asked of it than the workers can do (docs/overload.md): the rest is refused at once, the least critical first.',
    variables: {
      QUEUE_WAIT_TARGET: {
        type: 'string',
        pattern: DURATION,
        minDuration: '10ms',
        default: '500ms',
        description:
          "The longest a write should wait for a worker. Each API node admits to a partition of the work queue at most the jobs its workers finished in their best second of the last five, times this; beyond, a write is answered 503 at once (`Retry-After`, not queued). Keep it well under `JOB_TIMEOUT`.",
      },
      QUEUE_ADMISSION_FLOOR: {
        type: 'integer',
        minimum: 1,
        default: 32,
        description: "Jobs each API node may have in flight to a partition whatever its workers' measured pace (a node that has seen none finish yet).",
      },
      HTTP_MAX_IN_FLIGHT: {
        type: 'integer',
        minimum: 1,
        default: 1024,
        description:
          'Requests one API node works on at once; past a share of it, a request is answered 503 at once (`Retry-After`), admin lists first, register writes last. Health probes, polls and event streams are never refused by it.',
      },
    },
  },
  worker: {
    title: 'Worker',
    summary: 'How a worker process runs its jobs.',
    variables: {
      WORKER_CONCURRENCY: { type: 'integer', minimum: 1, default: 16, description: 'Jobs one worker process runs at once on each partition.' },
      JOB_LOCK_DURATION: {
        type: 'string',
        pattern: DURATION,
        default: '30s',
        description: "The lock a worker holds on a running job: a crashed worker's job is taken over after about this long.",
      },
      METRICS_PORT: {
        ...port,
        unset: 'none: the worker serves no `/metrics`',
        description: "The worker's `/metrics` listener (Prometheus). The API serves `/metrics` on its own listeners.",
      },
      FAULT_INJECT: {
        type: 'string',
        enum: ['', 'crash-before-apply', 'crash-after-apply', 'crash-after-answer', 'crash-mid-archive', 'crash-after-overdue-mark', 'crash-after-location-change'],
        default: '',
        description:
          "Tests only: the worker kills itself around its MongoDB write, after its answer went out (before BullMQ recorded the job as done), between a lifecycle run's archive copy and its delete, or between a deadline job's overdue mark (or the presence sweep's change of a location) and its announcement, to prove jobs survive crashes.",
      },
    },
  },
  auth: {
    title: 'Admin token, API keys and sessions',
    summary: 'The secrets the API checks requests against, and how long sessions and replaced keys last.',
    variables: {
      ADMIN_TOKEN: {
        type: 'string',
        minLength: 32,
        unset: 'required by the API; `npm start` generates one',
        description: 'The bearer token of the admin API and Bull Board, at least 32 characters.',
      },
      API_KEY_SECRET: {
        type: 'string',
        minLength: 32,
        // No comma and no space, so that it can move into API_KEY_SECRET_PREVIOUS as it is.
        pattern: '^[^,\\s]*$',
        unset: 'required by the API; `npm start` generates one',
        description:
          'Signs new API keys, and checks every key before it is looked up; at least 32 characters, no comma or space. The same on every API node, and kept across restarts: keys signed under a secret work only while it is listed.',
      },
      API_KEY_SECRET_PREVIOUS: {
        type: 'string',
        unset: 'none',
        description: 'Comma-separated earlier secrets whose keys are still accepted, while a secret rotation is under way.',
      },
      API_KEY_ACCEPT_UNSIGNED: {
        ...flag,
        description: '`1`: keys of the unsigned shape, issued before keys were signed, are accepted, each looked up as before (a migration under way).',
      },
      KEY_ROTATION_GRACE: {
        type: 'string',
        pattern: DURATION,
        default: '10m',
        description: 'How long the key a rotation replaced keeps working (`0`: not at all).',
      },
      CUSTOMER_SESSION_TTL: { type: 'string', pattern: DURATION, default: '12h', description: "The lifetime of a customer session (a customer app's key)." },
      SESSION_CACHE_SIZE: {
        type: 'integer',
        minimum: 0,
        default: 10000,
        description: 'Sessions an API node keeps in memory by key hash; `0`: none, every request reads MongoDB.',
      },
      BULL_BOARD_WRITABLE: { ...flag, description: '`1`: Bull Board may retry, clean, promote and pause jobs; read-only otherwise.' },
    },
  },
  limits: {
    title: 'Limits',
    summary: 'What one key, one customer session or one bad key may cost the service.',
    variables: {
      RATE_LIMIT: {
        type: 'string',
        pattern: '^[1-9][0-9]{0,8}/[0-9]+(s|m|h)$',
        unset: 'none: no limit',
        description:
          'Requests per API key per window, counted across all nodes, as `count/window` (`20/1s`, `600/1m`; the window in whole seconds, minutes or hours); 429 above.',
      },
      API_KEY_MAX_REJECTIONS: {
        type: 'integer',
        minimum: 1,
        default: 1000,
        description: '`api_key` rejections a node holds in their 401 delay at once; beyond, 429 at once.',
      },
      CUSTOMER_MAX_OPEN_ORDERS: {
        type: 'integer',
        minimum: 1,
        default: 5,
        description: 'Open orders (SELECTING, NEW, PLACED or FAILED) one customer session may have at once; 429 beyond.',
      },
      CUSTOMER_MAX_COMMANDS: {
        type: 'integer',
        minimum: 1,
        default: 5,
        description: 'Live (unacknowledged, unexpired) commands one customer session may have at once; 429 beyond.',
      },
    },
  },
  streams: {
    title: 'Event streams',
    summary: 'How the server-sent event streams are kept alive, ended and bounded.',
    variables: {
      SSE_KEEPALIVE: {
        type: 'string',
        pattern: DURATION,
        default: '15s',
        description: 'The interval of `: keepalive` comments on a stream; keep it under the idle timeout of every proxy in front.',
      },
      SSE_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        default: '30m',
        description: 'The server ends a stream after this long, jittered by ±10% per stream; the client reconnects from its last event id.',
      },
      SSE_MAX_BUFFER: { type: 'integer', minimum: 1024, default: 1048576, description: 'Bytes a slow stream client may leave unread before the server drops it.' },
      SSE_MAX_STREAMS_PER_SESSION: {
        type: 'integer',
        minimum: 1,
        default: 4,
        description: "Streams one session (a register's key) holds on a node; a new one ends that session's oldest.",
      },
      SSE_MAX_STREAMS: { type: 'integer', minimum: 1, default: 10000, description: 'Streams one node holds; beyond, a new stream is answered 429 with `Retry-After`.' },
      SSE_MAX_OPERATOR_STREAMS: {
        type: 'integer',
        minimum: 0,
        unset: 'a quarter of `SSE_MAX_STREAMS`',
        description:
          "Operators' streams (boards, the admin API's stream) one node holds in all, out of `SSE_MAX_STREAMS`: the rest is kept for registers, which operators can never lock out. Beyond, an operator's new stream is answered 429.",
      },
      SSE_MAX_STREAMS_PER_OPERATOR: {
        type: 'integer',
        minimum: 1,
        default: 8,
        description: "Streams one operator account (or `ADMIN_TOKEN`) holds on a node; a new one ends that account's oldest.",
      },
    },
  },
  idempotency: {
    title: 'Idempotency keys',
    summary: 'How long the answers to writes with an `Idempotency-Key` are kept, and how many.',
    variables: {
      IDEMPOTENCY_TTL: {
        type: 'string',
        pattern: DURATION,
        default: '24h',
        description: 'How long the answer to a write with an `Idempotency-Key` is kept for its retries.',
      },
      IDEMPOTENCY_MAX_RECORDS: {
        type: 'integer',
        minimum: 1,
        default: 10000,
        description: 'Kept answers one register (SERVICE) session, or the admin token, holds at once; beyond, 429.',
      },
      IDEMPOTENCY_MAX_CUSTOMER_RECORDS: { type: 'integer', minimum: 1, default: 100, description: 'Kept answers one customer session holds at once; beyond, 429.' },
    },
  },
  orders: {
    title: 'Orders and commands',
    summary: 'Defaults of the order and command rules.',
    variables: {
      FAILURE_THRESHOLD: {
        type: 'integer',
        minimum: 1,
        default: 3,
        description: 'The failure count at which an order stays FAILED, for a location created without a threshold of its own.',
      },
      COMMAND_TTL: { type: 'string', pattern: DURATION, default: '10m', description: 'How long an unacknowledged command stays live.' },
    },
  },
  lifecycle: {
    title: 'Order lifecycle',
    summary: 'When finished orders move to the archive, how long the archive keeps them, and when abandoned carts expire.',
    variables: {
      ORDER_ARCHIVE_AFTER: {
        type: 'string',
        pattern: DURATION,
        default: '15m',
        description: 'A COMPLETED or ABORTED order moves to the archive this long after its last change.',
      },
      ORDER_RETENTION: { type: 'string', pattern: DURATION, default: '90d', description: 'How long the archive keeps an order, from its archiving.' },
      SELECTING_TTL: {
        type: 'string',
        pattern: DURATION,
        default: '2h',
        description: 'An order never submitted (SELECTING or NEW) and untouched this long expires: it leaves the hot collection.',
      },
      LIFECYCLE_INTERVAL: {
        type: 'string',
        pattern: DURATION,
        // A scheduler firing every few milliseconds would only spin; a second is the finest useful pace.
        minDuration: '1s',
        default: '1m',
        description: 'How often the lifecycle job (archive, expiry, purges) runs; the same on every worker.',
      },
    },
  },
  presence: {
    title: 'Presence, pause and order deadlines',
    summary: 'When a location counts as online, when customers are refused, and when a PLACED order is overdue or aborted.',
    variables: {
      PRESENCE_WINDOW: {
        type: 'string',
        pattern: DURATION,
        minDuration: '1s',
        default: '60s',
        description:
          'A location is online while one of its register (SERVICE) sessions holds an event stream, or has made a request within this long. Each API node writes what it saw to Redis at most once per session per quarter of it; the worker checks every location seen on the same pace.',
      },
      PAUSE_WHEN_OFFLINE: {
        ...flag,
        description: '`1`: customers are refused (409 `Location not accepting orders`) while their location is not online, as while it is paused.',
      },
      PAUSE_AFTER_FAILED_ORDERS: {
        type: 'integer',
        minimum: 1,
        unset: 'off: failed orders never pause a location',
        description: 'A location whose orders reach FAILED this many times in a row (a COMPLETED order resets the count) pauses, with reason `failed orders`, until an operator resumes it.',
      },
      ORDER_DEADLINE: {
        type: 'string',
        pattern: DURATION,
        unset: 'off, unless a location sets its own `orderDeadline`',
        description: "A PLACED order still PLACED this long after its `orderTime` is overdue: announced once to operators, counted on `pos_orders_overdue_total`. A location's `orderDeadline` overrides it.",
      },
      ORDER_AUTO_ABORT_AFTER: {
        type: 'string',
        pattern: DURATION,
        unset: 'off: PLACED orders wait for their register',
        description: 'A PLACED order still PLACED this long after its `orderTime` is ABORTED by the service, as a register would abort it.',
        },
      },
    },
  telemetry: {
    title: 'Tracing (OpenTelemetry)',
    summary:
      'Traces to an OpenTelemetry collector, set by the standard `OTEL_*` variables, which the OpenTelemetry SDK reads itself ([Tracing](tracing.md) lists the others it honours). With no endpoint, tracing is off and nothing of it is loaded.',
    variables: {
      OTEL_EXPORTER_OTLP_ENDPOINT: {
        type: 'string',
        pattern: '^https?://',
        unset: 'tracing is off',
        description: 'The collector\'s OTLP base URL (`http://collector:4318`; traces go to its `/v1/traces`). Setting it turns tracing on.',
      },
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
        type: 'string',
        pattern: '^https?://',
        unset: 'the base URL\'s `/v1/traces`',
        description: 'The full URL traces are sent to, instead of `OTEL_EXPORTER_OTLP_ENDPOINT`\'s; setting it also turns tracing on.',
      },
      OTEL_EXPORTER_OTLP_PROTOCOL: {
        type: 'string',
        enum: ['http/protobuf', 'http/json', 'grpc'],
        default: 'http/protobuf',
        description: 'How spans are sent to the collector.',
      },
      OTEL_SERVICE_NAME: {
        type: 'string',
        unset: '`pos-api`, `pos-worker`, or `pos` for `npm start`',
        description: 'The `service.name` of every span of the process.',
      },
      OTEL_TRACES_SAMPLER: {
        type: 'string',
        enum: ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'],
        default: 'parentbased_always_on',
        description: 'Which traces are kept: the `parentbased_*` samplers follow the decision of an incoming `traceparent`.',
      },
      OTEL_TRACES_SAMPLER_ARG: {
        type: 'string',
        unset: '1 (with a `traceidratio` sampler: every trace)',
        description: 'The ratio of a `traceidratio` sampler, from `0` to `1`.',
      },
      OTEL_TRACES_EXPORTER: {
        type: 'string',
        enum: ['otlp', 'console', 'none'],
        default: 'otlp',
        description: '`none` keeps tracing off even with an endpoint; `console` prints spans to stdout (a check on a workstation; it turns tracing on without an endpoint).',
        },
      },
    },
  webhooks: {
    title: 'Webhooks',
    summary: "Signed deliveries of the service's events to a chain's own systems (docs/webhooks.md): their retries, their log, the key their secrets are kept under.",
    variables: {
      WEBHOOK_RETRY_SCHEDULE: {
        type: 'string',
        pattern: `^${DURATION.slice(1, -1)}(,${DURATION.slice(1, -1)})*$`,
        default: '5s,5m,30m,2h,5h,10h,10h',
        description:
          'The waits before each retry of a delivery whose first attempt (made at once) failed, comma-separated; once they run out the delivery has failed. The default is the Standard Webhooks recommendation.',
      },
      WEBHOOK_DISABLE_AFTER: {
        type: 'string',
        pattern: DURATION,
        default: '5d',
        description: 'An endpoint whose deliveries have failed for this long without a single success is disabled (a 410 Gone disables it at once).',
      },
      WEBHOOK_LOG_RETENTION: { type: 'string', pattern: DURATION, default: '28d', description: 'How long the delivery log keeps each attempt.' },
      WEBHOOK_TIMEOUT: { type: 'string', pattern: DURATION, default: '10s', description: "How long a delivery waits for the endpoint's answer; a 2xx within it is success." },
      WEBHOOK_CONCURRENCY: { type: 'integer', minimum: 1, default: 20, description: 'Deliveries one worker makes at once (on the webhook queue, never on the work queue).' },
      WEBHOOK_ENDPOINT_CONCURRENCY: {
        type: 'integer',
        minimum: 1,
        default: 2,
        description: "Of those, the deliveries one worker makes at once to one subscription: a slow endpoint holds no more slots than this, and the others' deliveries go on.",
      },
      WEBHOOK_CIRCUIT_FAILURES: {
        type: 'integer',
        minimum: 1,
        default: 5,
        description:
          "Failed attempts in a row (errors, timeouts, non-2xx answers) after which a worker stops sending to a subscription's endpoint: its deliveries wait, unattempted, until one probe after `WEBHOOK_CIRCUIT_COOLDOWN` succeeds.",
      },
      WEBHOOK_CIRCUIT_COOLDOWN: {
        type: 'string',
        pattern: DURATION,
        minDuration: '1s',
        default: '30s',
        description: 'How long an open circuit waits before its probe; each failed probe doubles the wait, up to 10 times this.',
      },
      WEBHOOK_MAX_PENDING: {
        type: 'integer',
        minimum: 1,
        default: 10000,
        description:
          "Deliveries one subscription may have waiting (queued or between retries); beyond, the oldest waiting one is dropped, logged in the delivery log as `dropped` (redeliverable from there) and counted.",
      },
      WEBHOOK_TEST_LIMIT: {
        type: 'string',
        pattern: '^[1-9][0-9]{0,8}/[0-9]+(s|m|h)$',
        default: '10/1m',
        description: 'Test events and redeliveries one subscription may be sent through the admin API, as `count/window`, across all nodes; 429 above.',
      },
      WEBHOOK_ALLOW_PRIVATE: {
        ...flag,
        description: '`1`: endpoints may be on loopback, private, link-local or cloud-metadata addresses (tests, private networks). Refused otherwise, at creation and at each delivery.',
      },
      WEBHOOK_SECRET_KEY: {
        type: 'string',
        minLength: 32,
        unset: 'derived from `API_KEY_SECRET`',
        description:
          'The server secret that endpoint secrets are encrypted under in MongoDB (AES-256-GCM, key by HKDF-SHA256). The same on every API node and worker. Set it apart from `API_KEY_SECRET` to rotate that without losing the webhook secrets.',
        },
      },
    },
  audit: {
    title: 'Operators and audit',
    summary: 'How long the record of operator actions is kept.',
    variables: {
      AUDIT_RETENTION: {
        type: 'string',
        pattern: DURATION,
        default: '400d',
        description: 'How long an audit record (one operator write) is kept, from the write; MongoDB removes older ones, and the lifecycle job too.',
      },
    },
  },
  process: {
    title: 'Processes',
    summary: 'How every process of the service logs and stops.',
    variables: {
      LOG_LEVEL: {
        type: 'string',
        enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
        default: 'info',
        description: 'The pino level of the logs.',
      },
      SHUTDOWN_GRACE: {
        type: 'string',
        pattern: DURATION,
        default: '10s',
        description: 'How long a process, on SIGTERM, lets in-flight requests and running jobs finish before it closes what is left.',
      },
    },
  },
});

export type SectionName = keyof typeof CONFIG_SECTIONS;

/** The environment as one JSON Schema object: every section's variables, and nothing else. */
export const envSchema = constant({
  type: 'object',
  additionalProperties: false,
  properties: {
    ...CONFIG_SECTIONS.http.variables,
    ...CONFIG_SECTIONS.mongo.variables,
    ...CONFIG_SECTIONS.redis.variables,
    ...CONFIG_SECTIONS.queue.variables,
    ...CONFIG_SECTIONS.overload.variables,
    ...CONFIG_SECTIONS.worker.variables,
    ...CONFIG_SECTIONS.auth.variables,
    ...CONFIG_SECTIONS.limits.variables,
    ...CONFIG_SECTIONS.streams.variables,
    ...CONFIG_SECTIONS.idempotency.variables,
    ...CONFIG_SECTIONS.orders.variables,
    ...CONFIG_SECTIONS.lifecycle.variables,
    ...CONFIG_SECTIONS.presence.variables,
    ...CONFIG_SECTIONS.telemetry.variables,
    ...CONFIG_SECTIONS.webhooks.variables,
    ...CONFIG_SECTIONS.audit.variables,
    ...CONFIG_SECTIONS.process.variables,
  },
});
