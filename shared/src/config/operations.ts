/** The sections for running the service: tracing, webhooks, the audit log, the process. */
import { DURATION, defineSections, flag } from './variable';

export const OPERATIONS_SECTIONS = defineSections({
  telemetry: {
    title: 'Tracing (OpenTelemetry)',
    summary:
      'Traces to an OpenTelemetry collector, set by the standard `OTEL_*` variables, which the ' +
      'OpenTelemetry SDK reads itself ([Tracing](tracing.md) lists the others it honours). ' +
      'With no endpoint, tracing is off and nothing of it is loaded.',
    variables: {
      OTEL_EXPORTER_OTLP_ENDPOINT: {
        type: 'string',
        pattern: '^https?://',
        unset: 'tracing is off',
        description:
          "The collector's OTLP base URL (`http://collector:4318`; traces go to its `/v1/traces`). Setting it turns tracing on.",
      },
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
        type: 'string',
        pattern: '^https?://',
        unset: "the base URL's `/v1/traces`",
        description:
          "The full URL traces are sent to, instead of `OTEL_EXPORTER_OTLP_ENDPOINT`'s; setting it also turns tracing on.",
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
        enum: [
          'always_on',
          'always_off',
          'traceidratio',
          'parentbased_always_on',
          'parentbased_always_off',
          'parentbased_traceidratio',
        ],
        default: 'parentbased_always_on',
        description:
          'Which traces are kept: the `parentbased_*` samplers follow the decision of an incoming `traceparent`.',
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
        description:
          '`none` keeps tracing off even with an endpoint; `console` prints spans to stdout (a ' +
          'check on a workstation; it turns tracing on without an endpoint).',
      },
    },
  },
  webhooks: {
    title: 'Webhooks and the event feed',
    summary:
      "Signed deliveries of the service's events to a chain's own systems, and the feed they catch up " +
      'from (docs/webhooks.md): the retries, the logs, the key the secrets are kept under.',
    variables: {
      WEBHOOK_RETRY_SCHEDULE: {
        type: 'string',
        pattern: `^${DURATION.slice(1, -1)}(,${DURATION.slice(1, -1)})*$`,
        default: '5s,5m,30m,2h,5h,10h,10h',
        description:
          'The waits before each retry of a delivery whose first attempt (made at once) failed, comma-separated; ' +
          'once they run out the delivery has failed. The default is the Standard Webhooks recommendation.',
      },
      WEBHOOK_DISABLE_AFTER: {
        type: 'string',
        pattern: DURATION,
        default: '5d',
        description:
          'An endpoint whose deliveries have failed for this long without a single ' +
          'success is disabled (a 410 Gone disables it at once).',
      },
      WEBHOOK_LOG_RETENTION: {
        type: 'string',
        pattern: DURATION,
        default: '28d',
        description: 'How long the delivery log keeps each attempt.',
      },
      EVENT_RETENTION: {
        type: 'string',
        pattern: DURATION,
        minDuration: '1m',
        default: '30d',
        description:
          'How long the event feed (`GET /admin/v1/events`) keeps each event, from its recording; the lifecycle ' +
          'job removes older ones. A consumer away longer than this catches up from the start of what is kept.',
      },
      WEBHOOK_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        default: '10s',
        description: "How long a delivery waits for the endpoint's answer; a 2xx within it is success.",
      },
      WEBHOOK_CONCURRENCY: {
        type: 'integer',
        minimum: 1,
        default: 20,
        description: 'Deliveries one worker makes at once (on the webhook queue, never on the transition queue).',
      },
      WEBHOOK_ENDPOINT_CONCURRENCY: {
        type: 'integer',
        minimum: 1,
        default: 2,
        description:
          'Of those, the deliveries one worker makes at once to one subscription: a slow ' +
          "endpoint holds no more slots than this, and the others' deliveries go on.",
      },
      WEBHOOK_CIRCUIT_FAILURES: {
        type: 'integer',
        minimum: 1,
        default: 5,
        description:
          'Failed attempts in a row (errors, timeouts, non-2xx answers) after which a worker ' +
          "stops sending to a subscription's endpoint: its deliveries wait, unattempted, " +
          'until one probe after `WEBHOOK_CIRCUIT_COOLDOWN` succeeds.',
      },
      WEBHOOK_CIRCUIT_COOLDOWN: {
        type: 'string',
        pattern: DURATION,
        minDuration: '1s',
        default: '30s',
        description:
          'How long an open circuit waits before its probe; each failed probe doubles the wait, up to 10 times this.',
      },
      WEBHOOK_MAX_PENDING: {
        type: 'integer',
        minimum: 1,
        default: 10000,
        description:
          'Deliveries one subscription may have waiting (queued or between retries); beyond, the oldest waiting one is dropped, logged in the delivery log as `dropped` (redeliverable from there) and counted.',
      },
      WEBHOOK_TEST_LIMIT: {
        type: 'string',
        pattern: '^[1-9][0-9]{0,8}/[0-9]+(s|m|h)$',
        default: '10/1m',
        description:
          'Test events and redeliveries one subscription may be sent through the ' +
          'admin API, as `count/window`, across all nodes; 429 above.',
      },
      WEBHOOK_ALLOW_PRIVATE: {
        ...flag,
        description:
          '`1`: endpoints may be on loopback, private or other non-global addresses (tests, private ' +
          'networks). Refused otherwise, at creation and at each delivery. A cloud metadata or ' +
          'platform address (169.254.0.0/16, fd00:ec2::/32, 168.63.129.16, 100.100.100.200, and IPv6 ' +
          'forms that carry them) is refused either way. `npm start` (one machine trying the service) ' +
          'sets it unless it is set, and logs that it did.',
      },
      WEBHOOK_SECRET_KEY: {
        type: 'string',
        minLength: 32,
        unset: 'derived from `API_KEY_SECRET`',
        description:
          'The server secret that endpoint secrets are encrypted under in MongoDB (AES-256-GCM, ' +
          'key by HKDF-SHA256). The same on every API node and worker. Set it apart from ' +
          '`API_KEY_SECRET` to rotate that without losing the webhook secrets.',
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
        description:
          'How long an audit record (one operator write) is kept, from the write; ' +
          'MongoDB removes older ones, and the lifecycle job too.',
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
      LOG_FLUSH_INTERVAL: {
        type: 'string',
        pattern: DURATION,
        default: '200ms',
        description:
          'How long a log line may wait in the process to be written with others (at most 4 KiB wait; ' +
          'every line is written on exit and shutdown). `0ms` writes each line at once: one write per ' +
          'line, which under load costs more CPU than the request it logs.',
      },
      SHUTDOWN_GRACE: {
        type: 'string',
        pattern: DURATION,
        default: '10s',
        description:
          'How long a process, on SIGTERM, lets in-flight requests and ' +
          'running jobs finish before it closes what is left.',
      },
    },
  },
});
