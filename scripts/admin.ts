/**
 * The admin command-line tool: the admin API from a shell. Prints JSON answers on stdout.
 *   POS_URL=http://localhost:8080 POS_ADMIN_TOKEN=... npm run admin -- <command> [args]
 */
import { parseArgs } from 'node:util';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { ApiError } from '@pos/shared/clients/errors';
import { COMMAND_KINDS, CommandKind } from '@pos/shared/domain/commands';
import { isOrderState } from '@pos/shared/domain/order-state';
import { historyCursorOf } from '@pos/shared/schemas/history';
import type { RowInput } from '@pos/shared/schemas/requests';

const USAGE = `usage: npm run admin -- <command> [args] [options]

commands:
  create-location <name> [--failure-threshold N]
  list-locations [--limit N] [--after ID]
  get-location <locationId>
  update-location <locationId> [--name NAME] [--failure-threshold N]
  create-service-session <locationId> <deviceId> [--expires-at ISO-8601]
  create-customer-session <locationId> <userNumber> [--table N]
  list-sessions <locationId> [--limit N] [--after ID]       never a key
  rotate-key <sessionId>                                   the new key, shown once; the old one works for KEY_ROTATION_GRACE
  close-session <sessionId>
  create-order <locationId> <rows as JSON> [--table N]     a counter order, created PLACED
  create-command <locationId> <${COMMAND_KINDS.join('|')}> [--table N]
  list-commands <locationId> [--limit N] [--after N]       live commands
  list-orders <locationId> <state> [--limit N] [--after N]
  recover-order <locationId> <orderNumber>
  history <locationId> [--from ISO-8601] [--to ISO-8601] [--limit N] [--after CURSOR] [--all]
                                                           archived finished orders by completion time;
                                                           a page with its next cursor, or with --all
                                                           every page's orders in one list
  create-operator <name> <viewer|manager|admin> [--locations ID,ID]
                                                           its token, shown once; without --locations: all
  list-operators [--limit N] [--after ID]
  get-operator <operatorId>
  update-operator <operatorId> [--name NAME] [--role ROLE] [--locations ID,ID | --all-locations]
  rotate-operator-token <operatorId>                       the new token, shown once; the old one stops at once
  delete-operator <operatorId>
  audit [--location ID] [--operator ID] [--from ISO-8601] [--to ISO-8601] [--limit N] [--after ID]
                                                           operator writes, newest first

Lists print one page (default 100 items); a full page names the next one on stderr (--after ...).

options: --token TOKEN   the bearer token: ADMIN_TOKEN or an operator's (else POS_ADMIN_TOKEN, then ADMIN_TOKEN;
                        the environment keeps it out of the process list and the shell history)

environment: POS_URL (default http://localhost:8080; with ADMIN_PORT set, the operator listener's), POS_ADMIN_TOKEN or ADMIN_TOKEN`;

const ROLES = ['viewer', 'manager', 'admin'] as const;

function role(value: string | undefined): (typeof ROLES)[number] {
  if (!(ROLES as readonly (string | undefined)[]).includes(value)) throw new UsageError(`role must be one of ${ROLES.join(', ')}`);
  return value as (typeof ROLES)[number];
}

/** `--locations A,B` as a list; undefined when absent. */
function locationList(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').filter((id) => id !== '');
}

class UsageError extends Error {}

function int(value: string | undefined, what: string): number {
  if (!value || !/^[0-9]+$/.test(value)) throw new UsageError(`${what} must be a whole number`);
  return Number(value);
}

/** A page as printed: the items on stdout, and on stderr where the next page starts when this one is full. */
function page<T>(items: T[], limit: number | undefined, cursorOf: (item: T) => string | number): T[] {
  const last = items.at(-1);
  if (last !== undefined && items.length >= (limit ?? 100)) process.stderr.write(`next page: --after ${cursorOf(last)}\n`);
  return items;
}

type Options = Record<string, string | undefined> & { all?: boolean; 'all-locations'?: boolean };

async function run(admin: AdminClient, command: string | undefined, args: string[], opts: Options) {
  const [a, b] = args;
  const need = (n: number) => {
    if (args.length < n) throw new UsageError(`${command} needs ${n} argument(s)`);
  };
  const table = opts.table === undefined ? undefined : int(opts.table, '--table');
  const threshold = opts['failure-threshold'] === undefined ? undefined : int(opts['failure-threshold'], '--failure-threshold');
  const limit = opts.limit === undefined ? undefined : int(opts.limit, '--limit');
  const afterId = opts.after;
  const afterNumber = () => (opts.after === undefined ? undefined : int(opts.after, '--after'));
  switch (command) {
    case 'create-location':
      need(1);
      return admin.createLocation(a!, threshold);
    case 'list-locations':
      return page(await admin.listLocations({ limit, after: afterId }), limit, (l) => l.id);
    case 'get-location':
      need(1);
      return admin.getLocation(a!);
    case 'update-location':
      need(1);
      if (opts.name === undefined && threshold === undefined) throw new UsageError('update-location needs --name or --failure-threshold');
      return admin.updateLocation(a!, { name: opts.name, failureThreshold: threshold });
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
    case 'create-command':
      need(2);
      if (!(COMMAND_KINDS as readonly string[]).includes(b!)) throw new UsageError(`kind must be one of ${COMMAND_KINDS.join(', ')}`);
      return admin.createCommand(a!, b as CommandKind, table);
    case 'list-orders':
      need(2);
      if (!isOrderState(b!)) throw new UsageError(`unknown state ${b}`);
      return page(await admin.listOrders(a!, b, { limit, after: afterNumber() }), limit, (o) => o.number);
    case 'recover-order':
      need(2);
      return admin.recoverOrder(a!, int(b, 'orderNumber'));
    case 'history': {
      need(1);
      const query = { from: opts.from, to: opts.to };
      if (opts.all) return admin.allHistory(a!, query);
      return page(await admin.orderHistory(a!, { ...query, limit, after: opts.after }), limit, historyCursorOf);
    }
    case 'create-operator':
      need(2);
      return admin.createOperator({ name: a!, role: role(b), locationIds: locationList(opts.locations) });
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
        locationIds: locationList(opts.locations),
        allLocations: opts['all-locations'] ? true : undefined,
      });
    case 'rotate-operator-token':
      need(1);
      return admin.rotateOperatorToken(a!);
    case 'delete-operator':
      need(1);
      await admin.deleteOperator(a!);
      return { deleted: a };
    case 'audit':
      return page(await admin.listAudit({ locationId: opts.location, operatorId: opts.operator, from: opts.from, to: opts.to, limit, after: afterId }), limit, (r) => r.id);
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
      token: { type: 'string' },
      role: { type: 'string' },
      locations: { type: 'string' },
      'all-locations': { type: 'boolean' },
      location: { type: 'string' },
      operator: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const token = values.token || process.env.POS_ADMIN_TOKEN || process.env.ADMIN_TOKEN;
  if (!token) throw new UsageError('no token: pass --token, or set POS_ADMIN_TOKEN (or ADMIN_TOKEN)');
  const admin = new AdminClient(process.env.POS_URL ?? 'http://localhost:8080', token);
  const [command, ...args] = positionals;
  const result = await run(admin, command, args, values as Options);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    else if (err instanceof ApiError) process.stderr.write(`error: ${err.message}\n`);
    else process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
