/**
 * The sections for what happens to orders over time: failures, the
 * lifecycle job, presence and pause, order deadlines.
 */
import { DURATION, defineSections, flag } from './variable';

export const ORDERS_SECTIONS = defineSections({
  orders: {
    title: 'Orders and commands',
    summary: 'Defaults of the order and command rules.',
    variables: {
      FAILURE_THRESHOLD: {
        type: 'integer',
        minimum: 1,
        default: 3,
        description:
          'The failure count at which an order stays FAILED, for a location created without a threshold of its own.',
      },
      COMMAND_TTL: {
        type: 'string',
        pattern: DURATION,
        default: '10m',
        description: 'How long an unacknowledged command stays live.',
      },
    },
  },
  lifecycle: {
    title: 'Order lifecycle',
    summary:
      'When finished orders move to the archive, how long the archive keeps them, and when abandoned carts expire.',
    variables: {
      ORDER_ARCHIVE_AFTER: {
        type: 'string',
        pattern: DURATION,
        default: '15m',
        description: 'A COMPLETED or ABORTED order moves to the archive this long after its last change.',
      },
      ORDER_RETENTION: {
        type: 'string',
        pattern: DURATION,
        default: '90d',
        description: 'How long the archive keeps an order, from its archiving.',
      },
      SELECTING_TTL: {
        type: 'string',
        pattern: DURATION,
        default: '2h',
        description:
          'An order never submitted (SELECTING or NEW) and untouched this long expires: it leaves the hot collection.',
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
    title: 'Presence and pause',
    summary: 'When a location counts as online, and when its customers are refused.',
    variables: {
      PRESENCE_WINDOW: {
        type: 'string',
        pattern: DURATION,
        minDuration: '1s',
        default: '60s',
        description:
          'A location is online while one of its register (SERVICE) sessions holds an event stream, or has ' +
          'made a request within this long. Each API node writes what it saw to Redis at most once per session ' +
          'per quarter of it; the worker checks every location seen on the same pace.',
      },
      PAUSE_WHEN_OFFLINE: {
        ...flag,
        description:
          '`1`: customers are refused (409 `Location not accepting orders`) while ' +
          'their location is not online, as while it is paused.',
      },
      PAUSE_AFTER_FAILED_ORDERS: {
        type: 'integer',
        minimum: 1,
        unset: 'off: failed orders never pause a location',
        description:
          'A location whose orders reach FAILED this many times in a row (a COMPLETED order resets the ' +
          'count) pauses, with reason `failed orders`, until an operator resumes it.',
      },
    },
  },
  menus: {
    title: 'Menus',
    summary: 'How large a menu may be (docs/menu.md); a larger one is a 422 `Invalid menu`, a larger upload a 413.',
    variables: {
      MENU_BODY_LIMIT: {
        type: 'integer',
        minimum: 65536,
        default: 4194304,
        description:
          'The largest menu upload (`PUT .../menu`, `POST ' +
          '/admin/v1/menus/publish`), in bytes; every other ' +
          'request keeps `BODY_LIMIT`.',
      },
      MENU_MAX_ITEMS: { type: 'integer', minimum: 1, default: 5000, description: 'The most items a menu holds.' },
      MENU_MAX_GROUPS: {
        type: 'integer',
        minimum: 1,
        default: 500,
        description: 'The most modifier groups a menu holds.',
      },
      MENU_MAX_OPTIONS: {
        type: 'integer',
        minimum: 1,
        default: 50,
        description: 'The most options a modifier group holds.',
      },
    },
  },
  orderDeadlines: {
    title: 'Order deadlines',
    summary: 'When a PLACED order is overdue, and when the service aborts it.',
    variables: {
      ORDER_DEADLINE: {
        type: 'string',
        pattern: DURATION,
        unset: 'off, unless a location sets its own `orderDeadline`',
        description:
          'A PLACED order still PLACED this long after its `orderTime` is overdue: announced once to operators, ' +
          "counted on `pos_orders_overdue_total`. A location's `orderDeadline` overrides it.",
      },
      ORDER_AUTO_ABORT_AFTER: {
        type: 'string',
        pattern: DURATION,
        unset: 'off: PLACED orders wait for their register',
        description:
          'A PLACED order still PLACED this long after its `orderTime` is ' +
          'ABORTED by the service, as a register would abort it.',
      },
    },
  },
});
