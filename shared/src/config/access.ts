/**
 * The sections for who may call and how much: authentication, rate and resource limits, event streams, idempotency.
 */
import { DURATION, defineSections, flag } from './variable';

export const ACCESS_SECTIONS = defineSections({
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
          'Signs new API keys, and checks every key before it is looked up; at least 32 ' +
          'characters, no comma or space. The same on every API node, and kept across ' +
          'restarts: keys signed under a secret work only while it is listed.',
      },
      API_KEY_SECRET_PREVIOUS: {
        type: 'string',
        unset: 'none',
        description:
          'Comma-separated earlier secrets whose keys are still accepted, while a secret rotation is under way.',
      },
      API_KEY_ACCEPT_UNSIGNED: {
        ...flag,
        description:
          '`1`: keys of the unsigned shape, issued before keys were signed, are ' +
          'accepted, each looked up as before (a migration under way).',
      },
      KEY_ROTATION_GRACE: {
        type: 'string',
        pattern: DURATION,
        default: '10m',
        description: 'How long the key a rotation replaced keeps working (`0`: not at all).',
      },
      CUSTOMER_SESSION_TTL: {
        type: 'string',
        pattern: DURATION,
        default: '12h',
        description: "The lifetime of a customer session (a customer app's key).",
      },
      SESSION_CACHE_SIZE: {
        type: 'integer',
        minimum: 0,
        default: 10000,
        description: 'Sessions an API node keeps in memory by key hash; `0`: none, every request reads MongoDB.',
      },
      BULL_BOARD_WRITABLE: {
        ...flag,
        description: '`1`: Bull Board may retry, clean, promote and pause jobs; read-only otherwise.',
      },
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
          'Requests per API key per window, counted across all nodes, as `count/window` (`20/1s`, ' +
          '`600/1m`; the window in whole seconds, minutes or hours); 429 above.',
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
        description:
          'Open orders (SELECTING, NEW, PLACED or FAILED) one customer session may have at once; 429 beyond.',
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
        description:
          'The interval of `: keepalive` comments on a stream; keep it under the idle timeout of every proxy in front.',
      },
      SSE_TIMEOUT: {
        type: 'string',
        pattern: DURATION,
        default: '30m',
        description:
          'The server ends a stream after this long, jittered by ±10% per ' +
          'stream; the client reconnects from its last event id.',
      },
      SSE_MAX_BUFFER: {
        type: 'integer',
        minimum: 1024,
        default: 1048576,
        description: 'Bytes a slow stream client may leave unread before the server drops it.',
      },
      SSE_MAX_STREAMS_PER_SESSION: {
        type: 'integer',
        minimum: 1,
        default: 4,
        description: "Streams one session (a register's key) holds on a node; a new one ends that session's oldest.",
      },
      SSE_MAX_STREAMS: {
        type: 'integer',
        minimum: 1,
        default: 10000,
        description: 'Streams one node holds; beyond, a new stream is answered 429 with `Retry-After`.',
      },
      SSE_MAX_OPERATOR_STREAMS: {
        type: 'integer',
        minimum: 0,
        unset: 'a quarter of `SSE_MAX_STREAMS`',
        description:
          "Operators' streams (boards, the admin API's stream) one node holds in all, out of " +
          '`SSE_MAX_STREAMS`: the rest is kept for registers, which operators can never lock ' +
          "out. Beyond, an operator's new stream is answered 429.",
      },
      SSE_MAX_STREAMS_PER_OPERATOR: {
        type: 'integer',
        minimum: 1,
        default: 8,
        description:
          "Streams one operator account (or `ADMIN_TOKEN`) holds on a node; a new one ends that account's oldest.",
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
        description:
          'How long the answer to a write with an `Idempotency-Key` is kept for its retries; also how ' +
          'long a busy order remembers the jobs that wrote it, whatever Redis loses.',
      },
      IDEMPOTENCY_MAX_RECORDS: {
        type: 'integer',
        minimum: 1,
        default: 10000,
        description: 'Kept answers one register (SERVICE) session, or the admin token, holds at once; beyond, 429.',
      },
      IDEMPOTENCY_MAX_CUSTOMER_RECORDS: {
        type: 'integer',
        minimum: 1,
        default: 100,
        description: 'Kept answers one customer session holds at once; beyond, 429.',
      },
    },
  },
});
