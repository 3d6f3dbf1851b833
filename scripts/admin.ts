/**
 * The admin command-line tool: the admin API from a shell. Prints JSON answers on stdout.
 *   POS_URL=http://localhost:8080 POS_ADMIN_TOKEN=... npm run admin -- <command> [args]
 * (POS_ADMIN, then POS, and ADMIN_TOKEN, as the README's tour exports them, serve as well.)
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { ApiError, UnreachableError } from '@pos/shared/clients/errors';
import { COMMAND_KINDS, CommandKind } from '@pos/shared/domain/commands';
import { isOrderState, ORDER_STATES } from '@pos/shared/domain/order-state';
import { historyCursorOf } from '@pos/shared/schemas/history-cursor';
import type { MenuDocument } from '@pos/shared/schemas/menu';
import type { RowInput } from '@pos/shared/schemas/requests';

const USAGE = `usage: npm run admin -- <command> [args] [options]

commands:
  create-location <name> [--failure-threshold N]
  list-locations [--limit N] [--after ID] [--online true|false]
  get-location <locationId>
  update-location <locationId> [--name NAME] [--failure-threshold N] [--order-deadline DURATION]
  presence <locationId>                                    online, since, the registers seen
  pause <locationId> [--until ISO-8601] [--reason TEXT]    customers refused (409) until then, or until resumed
  resume <locationId>
  create-service-session <locationId> <deviceId> [--expires-at ISO-8601]
  create-customer-session <locationId> <userNumber> [--table N]
  list-sessions <locationId> [--limit N] [--after ID]       never a key
  rotate-key <sessionId>                                   the new key, shown once; the old one works for KEY_ROTATION_GRACE
  close-session <sessionId>
  create-order <locationId> <rows as JSON> [--table N]     a counter order, created PLACED
  get-menu <locationId>                                    the menu, with each product's availability
  put-menu <locationId> <menu.json> [--if-match ETAG]      replaces it; its registers are asked to fetch it
  publish-menu <menu.json> <locationId,locationId,...>     one menu to up to 1,000 locations, all or none
  snooze <locationId> <productId> [--until ISO-8601] [--reason TEXT]
                                                           86 an item or an option (customers refused it)
  unsnooze <locationId> <productId>
  create-command <locationId> <${COMMAND_KINDS.join('|')}> [--table N]
  list-commands <locationId> [--limit N] [--after N]       live commands
  list-orders <locationId> <state> [--limit N] [--after N] [--overdue true|false]
  recover-order <locationId> <orderNumber>
  history <locationId> [--from ISO-8601] [--to ISO-8601] [--limit N] [--after CURSOR] [--all]
                                                           archived finished orders by completion time;
                                                           a page with its next cursor, or with --all
                                                           every page's orders in one list
  create-webhook <url> <type,type,...> [--locations ID,ID,...] [--description TEXT]
                                                           the secret, shown once
  list-webhooks [--limit N] [--after ID]
  get-webhook <subscriptionId>
  update-webhook <subscriptionId> [--url URL] [--events T,T] [--locations ID,ID|all] [--description TEXT] [--enable]
  delete-webhook <subscriptionId>
  rotate-webhook-secret <subscriptionId>                   the new secret, shown once; the old one signs too for KEY_ROTATION_GRACE
  test-webhook <subscriptionId>                            queues a webhook.test delivery
  webhook-deliveries <subscriptionId> [--limit N] [--after ID]
                                                           the delivery log, newest first
  redeliver <subscriptionId> <deliveryId>
  create-operator <name> <viewer|manager|admin> [--locations ID,ID]
                                                           its token, shown once; without --locations: all
  list-operators [--limit N] [--after ID]
  get-operator <operatorId>
  update-operator <operatorId> [--name NAME] [--role ROLE] [--locations ID,ID | --all-locations]
  rotate-operator-token <operatorId>                       the new token, shown once; the old one stops at once
  delete-operator <operatorId>
  events [--after EVENT_ID] [--location ID] [--types T,T] [--limit N] [--all]
                                                           the event feed, oldest first; --all: every page
                                                           from --after to the end (catching up)
  audit [--location ID] [--operator ID] [--from ISO-8601] [--to ISO-8601] [--limit N] [--after ID]
                                                           operator writes, newest first
  audit verify                                             checks the log's hash chain, oldest first; names the
                                                           first broken link and exits 1 if there is one

Lists print one page (default 100 items); a full page names the next one on stderr (--after ...).

options: --token TOKEN   the bearer token: ADMIN_TOKEN or an operator's (else POS_ADMIN_TOKEN, then ADMIN_TOKEN;
                        the environment keeps it out of the process list and the shell history)

environment: POS_URL, else POS_ADMIN, else POS (default http://localhost:8080; with ADMIN_PORT set, the operator listener's), POS_ADMIN_TOKEN or ADMIN_TOKEN`;

const ROLES = ['viewer', 'manager', 'admin'] as const;

function role(value: string | undefined): (typeof ROLES)[number] {
  if (!(ROLES as readonly (string | undefined)[]).includes(value))
    throw new UsageError(`role must be one of ${ROLES.join(', ')}`);
  return value as (typeof ROLES)[number];
}

class UsageError extends Error {}

/** The usage of one command (its line and those continuing it), or undefined for none of them. */
function usageOf(command: string | undefined): string | undefined {
  const lines = USAGE.split('\n');
  if (command === undefined) return undefined;
  const at = lines.findIndex((line) => line.startsWith(`  ${command} `) || line === `  ${command}`);
  if (at < 0) return undefined;
  const more = lines.slice(at + 1).findIndex((line) => !/^ {10,}/.test(line));
  return lines.slice(at, more < 0 ? undefined : at + 1 + more).join('\n');
}

function int(value: string | undefined, what: string): number {
  if (!value || !/^[0-9]+$/.test(value)) throw new UsageError(`${what} must be a whole number`);
  return Number(value);
}

function bool(value: string | undefined, what: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new UsageError(`${what} must be true or false`);
  return value === 'true';
}

/** A comma-separated list option; undefined when absent. */
function list(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
}

/** A page as printed: the items on stdout, and on stderr where the next page starts when this one is full. */
function page<T>(items: T[], limit: number | undefined, cursorOf: (item: T) => string | number): T[] {
  const last = items.at(-1);
  if (last !== undefined && items.length >= (limit ?? 100))
    process.stderr.write(`next page: --after ${cursorOf(last)}\n`);
  return items;
}

/** A menu document from a file (the service checks it: a 422 lists every error). */
function menuFile(file: string): MenuDocument {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as MenuDocument;
  } catch (err) {
    throw new UsageError(`cannot read a menu from ${file}: ${(err as Error).message}`);
  }
}

type Options = Record<string, string | undefined> & { all?: boolean; enable?: boolean; 'all-locations'?: boolean };

async function run(admin: AdminClient, command: string | undefined, args: string[], opts: Options) {
  const [a, b] = args;
  const need = (n: number) => {
    if (args.length < n) throw new UsageError(`${command} needs ${n} argument(s)`);
  };
  const table = opts.table === undefined ? undefined : int(opts.table, '--table');
  const threshold =
    opts['failure-threshold'] === undefined ? undefined : int(opts['failure-threshold'], '--failure-threshold');
  const limit = opts.limit === undefined ? undefined : int(opts.limit, '--limit');
  const afterId = opts.after;
  const afterNumber = () => (opts.after === undefined ? undefined : int(opts.after, '--after'));
  switch (command) {
    case 'create-location':
      need(1);
      return admin.createLocation(a!, threshold);
    case 'list-locations':
      return page(
        await admin.listLocations({ limit, after: afterId, online: bool(opts.online, '--online') }),
        limit,
        (l) => l.id,
      );
    case 'get-location':
      need(1);
      return admin.getLocation(a!);
    case 'update-location':
      need(1);
      if (opts.name === undefined && threshold === undefined && opts['order-deadline'] === undefined) {
        throw new UsageError('update-location needs --name, --failure-threshold or --order-deadline');
      }
      return admin.updateLocation(a!, {
        name: opts.name,
        failureThreshold: threshold,
        orderDeadline: opts['order-deadline'],
      });
    case 'presence':
      need(1);
      return admin.getPresence(a!);
    case 'pause':
      need(1);
      return admin.pauseLocation(a!, { until: opts.until, reason: opts.reason });
    case 'resume':
      need(1);
      return admin.resumeLocation(a!);
    case 'list-sessions':
      need(1);
      return page(await admin.listSessions(a!, { limit, after: afterId }), limit, (s) => s.sessionId);
    case 'rotate-key':
      need(1);
      return admin.rotateKey(a!);
    case 'list-commands':
      need(1);
      return page(await admin.listCommands(a!, { limit, after: afterNumber() }), limit, (c) => c.number);
    case 'create-service-session':
      need(2);
      return admin.createServiceSession(a!, b!, opts['expires-at']);
    case 'create-customer-session':
      need(2);
      return admin.createCustomerSession(a!, int(b, 'userNumber'), table);
    case 'close-session':
      need(1);
      await admin.closeSession(a!);
      return { closed: a };
    case 'create-order':
      need(2);
      return admin.createOrder(a!, JSON.parse(b!) as RowInput[], table);
    case 'get-menu':
      need(1);
      return admin.getMenu(a!);
    case 'put-menu':
      need(2);
      return admin.putMenu(a!, menuFile(b!), opts['if-match']);
    case 'publish-menu':
      need(2);
      return admin.publishMenu(list(b)!, menuFile(a!));
    case 'snooze':
      need(2);
      return admin.setAvailability(a!, b!, { available: false, until: opts.until, reason: opts.reason });
    case 'unsnooze':
      need(2);
      return admin.setAvailability(a!, b!, { available: true });
    case 'create-command':
      need(2);
      if (!(COMMAND_KINDS as readonly string[]).includes(b!))
        throw new UsageError(`kind must be one of ${COMMAND_KINDS.join(', ')}`);
      return admin.createCommand(a!, b as CommandKind, table);
    case 'list-orders':
      need(2);
      if (!isOrderState(b!)) throw new UsageError(`unknown state ${b}: the states are ${ORDER_STATES.join(', ')}`);
      return page(
        await admin.listOrders(a!, b, { limit, after: afterNumber(), overdue: bool(opts.overdue, '--overdue') }),
        limit,
        (o) => o.number,
      );
    case 'recover-order':
      need(2);
      return admin.recoverOrder(a!, int(b, 'orderNumber'));
    case 'history': {
      need(1);
      const query = { from: opts.from, to: opts.to };
      if (opts.all) return admin.allHistory(a!, query);
      return page(await admin.orderHistory(a!, { ...query, limit, after: opts.after }), limit, historyCursorOf);
    }
    case 'create-webhook':
      need(2);
      return admin.createWebhook({
        url: a!,
        events: list(b)!,
        locationIds: list(opts.locations),
        description: opts.description,
      });
    case 'list-webhooks':
      return page(await admin.listWebhooks({ limit, after: afterId }), limit, (w) => w.id);
    case 'get-webhook':
      need(1);
      return admin.getWebhook(a!);
    case 'update-webhook': {
      need(1);
      const locationIds = opts.locations === 'all' ? [] : list(opts.locations);
      const changes = {
        url: opts.url,
        events: list(opts.events),
        locationIds,
        description: opts.description,
        ...(opts.enable ? { enabled: true as const } : {}),
      };
      if (Object.values(changes).every((v) => v === undefined))
        throw new UsageError('update-webhook needs --url, --events, --locations, --description or --enable');
      return admin.updateWebhook(a!, changes);
    }
    case 'delete-webhook':
      need(1);
      await admin.deleteWebhook(a!);
      return { deleted: a };
    case 'rotate-webhook-secret':
      need(1);
      return admin.rotateWebhookSecret(a!);
    case 'test-webhook':
      need(1);
      return admin.testWebhook(a!);
    case 'webhook-deliveries':
      need(1);
      return page(await admin.listWebhookDeliveries(a!, { limit, after: afterId }), limit, (d) => d.id);
    case 'redeliver':
      need(2);
      return admin.redeliverWebhook(a!, b!);
    case 'create-operator':
      need(2);
      return admin.createOperator({ name: a!, role: role(b), locationIds: list(opts.locations) });
    case 'list-operators':
      return page(await admin.listOperators({ limit, after: afterId }), limit, (o) => o.id);
    case 'get-operator':
      need(1);
      return admin.getOperator(a!);
    case 'update-operator':
      need(1);
      return admin.updateOperator(a!, {
        name: opts.name,
        role: opts.role === undefined ? undefined : role(opts.role),
        locationIds: list(opts.locations),
        allLocations: opts['all-locations'] ? true : undefined,
      });
    case 'rotate-operator-token':
      need(1);
      return admin.rotateOperatorToken(a!);
    case 'delete-operator':
      need(1);
      await admin.deleteOperator(a!);
      return { deleted: a };
    case 'events': {
      const filter = { locationId: opts.location, types: list(opts.types) };
      if (opts.all) return admin.allEvents({ ...filter, after: afterId });
      return page(await admin.listEvents({ ...filter, limit, after: afterId }), limit, (e) => e.id);
    }
    case 'audit':
      if (a === 'verify') {
        const result = await admin.verifyAuditChain();
        if (!result.intact) process.exitCode = 1;
        return result;
      }
      if (a !== undefined) throw new UsageError(`unknown audit command ${a}`);
      return page(
        await admin.listAudit({
          locationId: opts.location,
          operatorId: opts.operator,
          from: opts.from,
          to: opts.to,
          limit,
          after: afterId,
        }),
        limit,
        (r) => r.id,
      );
    default:
      throw new UsageError(command ? `unknown command ${command}` : 'no command given');
  }
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      'failure-threshold': { type: 'string' },
      name: { type: 'string' },
      limit: { type: 'string' },
      after: { type: 'string' },
      'expires-at': { type: 'string' },
      table: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      all: { type: 'boolean' },
      online: { type: 'string' },
      overdue: { type: 'string' },
      'order-deadline': { type: 'string' },
      until: { type: 'string' },
      'if-match': { type: 'string' },
      reason: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      locations: { type: 'string' },
      description: { type: 'string' },
      enable: { type: 'boolean' },
      token: { type: 'string' },
      role: { type: 'string' },
      'all-locations': { type: 'boolean' },
      location: { type: 'string' },
      operator: { type: 'string' },
      types: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const token = values.token || process.env.POS_ADMIN_TOKEN || process.env.ADMIN_TOKEN;
  if (!token) throw new UsageError('no token: pass --token, or set POS_ADMIN_TOKEN (or ADMIN_TOKEN)');
  // POS_ADMIN (the operator listener) and POS as the README's tour exports them
  const admin = new AdminClient(
    process.env.POS_URL || process.env.POS_ADMIN || process.env.POS || 'http://localhost:8080',
    token,
  );
  const [command, ...args] = positionals;
  const result = await run(admin, command, args, values as Options);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return Number(process.exitCode ?? 0);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      const one = usageOf(process.argv.slice(2).find((arg) => !arg.startsWith('-')));
      process.stderr.write(
        one
          ? `${err.message}\n\nusage (npm run admin -- <command>; --help for every command):\n${one}\n`
          : `${err.message}\n\n${USAGE}\n`,
      );
    } else if (err instanceof ApiError) {
      process.stderr.write(`error: ${err.message}\n`);
      // an invalid menu's or a cart's every error
      for (const each of err.problem?.errors ?? []) process.stderr.write(`  ${JSON.stringify(each)}\n`);
    } else if (err instanceof UnreachableError) {
      process.stderr.write(
        `error: ${err.message}: is the service running there? This tool calls POS_URL, else POS_ADMIN, else ` +
          `POS (now ${new URL(err.url).origin}); with ADMIN_PORT set, the operator listener's\n`,
      );
    } else process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
