/**
 * The sections for where the service listens and what it connects to: HTTP, MongoDB,
 * Redis, the transition queue, overload admission, the worker.
 */
import { DURATION, defineSections, flag, name, port } from './variable';

export const SERVING_SECTIONS = defineSections({
  http: {
    title: 'HTTP listeners',
    summary: 'Where the API listens, and how long it keeps connections.',
    variables: {
      PORT: {
        ...port,
        default: 8080,
        description:
          'The register-facing listener of the API: the register interface and the customer app API (and ' +
          'the operator surfaces, unless `ADMIN_PORT` is set). `0` takes a free port.',
      },
      ADMIN_PORT: {
        ...port,
        unset: 'none: the operator surfaces are on `PORT`',
        description:
          'When set, the operator surfaces (admin API, Bull Board, `/metrics`) listen here and no longer on ' +
          '`PORT`: set it wherever `PORT` is reachable from outside. Must differ from `PORT`.',
      },
      HOST: {
        type: 'string',
        default: '0.0.0.0',
        description:
          "The interface every listener binds to (the API's two, the worker's " +
          '`/metrics`). `npm start` binds `127.0.0.1` unless it is set.',
      },
      BASE_PATH: {
        type: 'string',
        pattern: '^(/[A-Za-z0-9._~-]+)+$',
        default: '/api/v1',
        description:
          'The path of the register and customer interface (`{base_url}`); change ' +
          'it only to match what the registers are set up with.',
      },
      TRUST_PROXY: {
        ...flag,
        description:
          '`1`: believe `X-Forwarded-For`, `-Host` and `-Proto` from the one proxy in front (its ' +
          'own hop only). Set it only behind a proxy that overwrites those headers.',
      },
      BODY_LIMIT: {
        type: 'integer',
        minimum: 1024,
        default: 65536,
        description: 'The largest request body, in bytes; a larger one is answered 413.',
      },
      HTTP_KEEPALIVE_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        default: '65s',
        description:
          'How long an API node keeps an idle keep-alive connection. Keep it above the ' +
          "gateway's upstream `keepalive_timeout` (30 s in `deploy/nginx.conf`), so that " +
          'the gateway is the side that closes idle connections.',
      },
      HTTP_HEADERS_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        minDuration: '1s',
        default: '10s',
        description:
          "How long a request's headers may take to arrive, from its first byte; a client that trickles them " +
          'slower is cut off (an idle keep-alive connection is not timed by it). At most `HTTP_REQUEST_TIMEOUT`.',
      },
      HTTP_REQUEST_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        minDuration: '1s',
        default: '30s',
        description:
          'How long a whole request (headers and body) may take to arrive; a client that sends it slower is cut ' +
          'off with a 408. An event stream is not timed by it once its request has arrived.',
      },
      HTTP_MAX_CONNECTIONS: {
        type: 'integer',
        minimum: 1,
        unset: '`SSE_MAX_STREAMS` + 1024: every stream, and room for requests',
        description:
          'The connections each listener of an API node holds at once; beyond, a new ' +
          "connection is closed at once (the gateway's retry goes to another node).",
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
          'The `w` of every write: `majority`, or a number of replica set members. A write ' +
          'acknowledged by fewer than a majority may be rolled back by an election.',
      },
      MONGO_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        minDuration: '100ms',
        default: '3s',
        description:
          "The API's bound on each phase of a request's MongoDB operation: choosing the " +
          'server, getting a connection, the reply (an operation the driver retries once ' +
          'takes up to twice this). Keep it under half of `JOB_TIMEOUT`.',
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
          'The Redis URL (the server needs `maxmemory-policy noeviction`); with `REDIS_CLUSTER=1`, ' +
          'comma-separated seed nodes (`redis://10.0.0.1:6379,redis://10.0.0.2:6379`).',
      },
      REDIS_CLUSTER: {
        ...flag,
        description:
          '`1`: `REDIS_URL` names a Redis Cluster (sharded pub/sub, transition queues spread over the ' +
          'masters). Without `REDIS_URL`, `npm start` then starts a local cluster of three masters.',
      },
      REDIS_PREFIX: {
        ...name,
        default: 'pos',
        description:
          'The prefix of every Redis key and pub/sub channel of the deployment; ' +
          'deployments that share a Redis need different ones.',
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
    title: 'Transition queue',
    summary: 'How the transition queue is partitioned, how long a request waits for its job, and what the queue keeps.',
    variables: {
      QUEUE_PARTITIONS: {
        type: 'integer',
        minimum: 1,
        maximum: 1024,
        unset: '`1`; `6` with `REDIS_CLUSTER`',
        description:
          "The transition queues the locations' jobs are spread over (each location's in one). The same on " +
          'every role; to change it, set `QUEUE_DRAIN_PARTITIONS` to the old count meanwhile.',
      },
      QUEUE_DRAIN_PARTITIONS: {
        type: 'integer',
        minimum: 1,
        maximum: 1024,
        unset: 'none',
        description:
          'An earlier `QUEUE_PARTITIONS` whose queues the workers still empty (and Bull Board and ' +
          '`/metrics` show) while the count changes; unset it once they are empty.',
      },
      JOB_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        default: '10s',
        description:
          'How long a request waits for a worker before answering 503; every request ' +
          'is answered within this and a second, whatever hangs.',
      },
      JOB_KEEP_FAILED: {
        type: 'integer',
        minimum: 1,
        default: 1000,
        description:
          'Failed jobs each transition queue partition keeps for inspection: the newest, each for at most 7 days.',
      },
    },
  },
  overload: {
    title: 'Overload',
    summary:
      'What an API node admits when more is asked of it than the workers can do ' +
      '(docs/overload.md): the rest is refused at once, the least critical first.',
    variables: {
      QUEUE_WAIT_TARGET: {
        type: 'string',
        pattern: DURATION,
        minDuration: '10ms',
        default: '500ms',
        description:
          'The longest a write should wait for a worker. Each API node admits to a partition of the transition queue at most the jobs its workers finished in their best second of the last five, times this; beyond, a write is answered 503 at once (`Retry-After`, not queued). Keep it well under `JOB_TIMEOUT`.',
      },
      QUEUE_ADMISSION_FLOOR: {
        type: 'integer',
        minimum: 1,
        default: 32,
        description:
          'Jobs each API node may have in flight to a partition whatever its ' +
          "workers' measured pace (a node that has seen none finish yet).",
      },
      HTTP_MAX_IN_FLIGHT: {
        type: 'integer',
        minimum: 1,
        default: 1024,
        description:
          'Requests one API node works on at once; past a share of it, a request is answered ' +
          '503 at once (`Retry-After`), admin lists first, register writes last. Health ' +
          'probes, polls and event streams are never refused by it.',
      },
    },
  },
  worker: {
    title: 'Worker',
    summary: 'How a worker process runs its jobs.',
    variables: {
      WORKER_CONCURRENCY: {
        type: 'integer',
        minimum: 1,
        default: 16,
        description: 'Jobs one worker process runs at once on each partition.',
      },
      JOB_LOCK_DURATION: {
        type: 'string',
        pattern: DURATION,
        default: '30s',
        description:
          "The lock a worker holds on a running job: a crashed worker's job is taken over after about this long.",
      },
      METRICS_PORT: {
        ...port,
        unset: 'none: the worker serves no `/metrics`',
        description: "The worker's `/metrics` listener (Prometheus). The API serves `/metrics` on its own listeners.",
      },
      FAULT_INJECT: {
        type: 'string',
        enum: [
          '',
          'crash-before-apply',
          'crash-after-apply',
          'crash-after-answer',
          'crash-mid-archive',
          'crash-after-overdue-mark',
          'crash-after-location-change',
        ],
        default: '',
        description:
          'Tests only: the worker kills itself around its MongoDB write, after its answer went out ' +
          "(before BullMQ recorded the job as done), between a lifecycle run's archive copy and its " +
          "delete, or between an order deadline job's overdue mark (or the presence sweep's change of a " +
          'location) and its announcement, to prove jobs survive crashes.',
      },
    },
  },
});
