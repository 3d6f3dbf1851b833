/**
 * Menus (docs/menu.md): customer orders priced from a 2,000-item menu against the same orders at a
 * location without one, in alternating slices on one deployment (so both meet the same processes
 * and phases); the customer's menu read answered in full and as a 304; and one menu published to a
 * thousand locations, with the bytes the service sent MongoDB counted on the wire.
 */
import { largeMenu } from '../scripts/embedded/sample-menu';
import { SAMPLE_ROWS } from '../scripts/embedded/sample-rows';
import { TcpProxy } from '../scripts/embedded/tcp-proxy';
import type { Backends, Deployment } from './deployment';
import { deploy, scrapeMetrics } from './deployment';
import {
  httpCall,
  httpRequest,
  keepAliveTarget,
  type LoadBounds,
  type LoadResult,
  runAlternating,
  runHttp,
  type Side,
} from './load';
import { round } from './statistics';
import { inBatches, registers } from './service-load';

export const MENU_ITEMS = 2_000;
/** Customers reading the menu at once (the bench's headline concurrency). */
const READ_CLIENTS = 16;

export interface MenuOrdersRow extends LoadResult {
  /** The same orders, at the same concurrency, by a location without a menu. */
  withoutMenu: LoadResult;
  /**
   * Menu documents the API nodes read from MongoDB during both runs
   * (`pos_menu_document_reads_total`): 0 when each node holds the menu.
   */
  menuDocumentReads: number;
}

export interface MenuRead {
  items: number;
  /** The answer's size. */
  bytes200: number;
  /**
   * The API's CPU per request, ms, in full and as a 304 to its ETag, at the
   * headline concurrency (many customers at once).
   */
  concurrency: number;
  cpuMs200: number;
  cpuMs304: number;
  rps200: number;
  rps304: number;
  /** The same at one client, where a 304 costs what any authenticated read with one MongoDB read does. */
  oneClient: { cpuMs200: number; cpuMs304: number };
}

export interface MenuPublish {
  locations: number;
  items: number;
  /** The menu's JSON. */
  menuBytes: number;
  /** The call's answer time, and every byte the service's processes sent MongoDB for it (its events included). */
  seconds: number;
  bytesWritten: number;
  /** Another menu of the same size to one location: what the document costs once. */
  oneLocation: { seconds: number; bytesWritten: number };
  /** What each location beyond the first added: a copy of the menu per location would be menuBytes. */
  bytesPerLocation: number;
}

export interface MenuScenario {
  menuOrders: MenuOrdersRow[];
  menuRead: MenuRead;
  menuPublish: MenuPublish;
}

/** The customer's rows: products named by a location with a menu, named and priced by one without. */
const MENU_ROWS = SAMPLE_ROWS.map(({ productId, quantity, notes }) => ({
  productId,
  quantity,
  ...(notes !== undefined && { notes }),
}));
const COMPLETE = JSON.stringify({ newState: 'COMPLETED' });
/** Finished orders leave the hot collection soon, so that neither side's runs slow with the others' orders. */
const LIFECYCLE_ENV = { ORDER_ARCHIVE_AFTER: '5s', LIFECYCLE_INTERVAL: '5s' };
/**
 * The publish's bounds: the stand-in's write of one location grows with the collection (about 9 ms
 * each at a thousand locations, against well under one on a mongod), which the defaults would
 * answer with a 503 part way; the call is timed as it is.
 */
const PUBLISH_ENV = { MONGO_TIMEOUT: '60s', JOB_TIMEOUT: '300s' };
const PUBLISH_TIMEOUT_MS = 310_000;

interface Shop {
  locationId: string;
  registerKey: string;
  customerKeys: string[];
}

async function shop(deployment: Deployment, name: string, customers: number, menu: boolean): Promise<Shop> {
  const [{ locationId, apiKey }] = (await registers(deployment.admin, 1, name)) as [
    { locationId: string; apiKey: string },
  ];
  if (menu) await deployment.admin.putMenu(locationId, largeMenu(MENU_ITEMS));
  const customerKeys = await inBatches(
    customers,
    4,
    async (i) => (await deployment.admin.createCustomerSession(locationId, i + 1)).apiKey,
  );
  return { locationId, registerKey: apiKey, customerKeys };
}

/**
 * One side of the order runs: a customer creates an order, finishes and submits it (three
 * requests); between slices the register completes what was submitted (outside the measure).
 */
function orderSide(deployment: Deployment, shop: Shop, rows: unknown, concurrency: number): Side & { close(): void } {
  const target = keepAliveTarget(deployment.apis[0]!.origin, concurrency);
  const register = keepAliveTarget(deployment.apis[0]!.origin, 8);
  const body = JSON.stringify({ rows });
  const submitted: number[] = [];
  return {
    op: async (client) => {
      const headers = { api_key: shop.customerKeys[client]! };
      const created = await httpRequest(target, 'POST', '/api/v1/customer/orders', { headers, body });
      if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text.slice(0, 120)}`);
      const { number } = JSON.parse(created.text) as { number: number };
      await httpCall(target, 'POST', `/api/v1/customer/orders/${number}/finish`, { headers });
      await httpCall(target, 'POST', `/api/v1/customer/orders/${number}/submit`, { headers });
      submitted.push(number);
    },
    probe: deployment.probe(),
    between: async () => {
      const numbers = submitted.splice(0);
      await inBatches(numbers.length, 8, (i) =>
        httpCall(register, 'PUT', `/api/v1/orders/${numbers[i]!}/statusupdate`, {
          headers: { api_key: shop.registerKey },
          body: COMPLETE,
        }),
      );
    },
    close: () => [target, register].forEach((t) => t.agent.destroy()),
  };
}

/** Menu documents the deployment's API nodes have read from MongoDB since they started. */
async function menuDocumentReads(deployment: Deployment): Promise<number> {
  const scrapes = await Promise.all(deployment.apis.map((api) => scrapeMetrics(api.origin)));
  return scrapes.reduce((sum, samples) => sum + (samples.get('pos_menu_document_reads_total') ?? NaN), 0);
}

async function measureOrders(
  deployment: Deployment,
  options: { concurrencies: number[]; bounds: LoadBounds; say(line: string): void },
): Promise<MenuOrdersRow[]> {
  const customers = Math.max(...options.concurrencies);
  const [withMenu, without] = [
    await shop(deployment, 'Bench menu', customers, true),
    await shop(deployment, 'Bench no menu', customers, false),
  ];
  const rows: MenuOrdersRow[] = [];
  for (const c of options.concurrencies) {
    const sides = [orderSide(deployment, withMenu, MENU_ROWS, c), orderSide(deployment, without, SAMPLE_ROWS, c)];
    try {
      // (three requests an order: a quarter of the warm-up's operations warm as many requests)
      const bounds = { ...options.bounds, warmupOps: Math.ceil((options.bounds.warmupOps ?? 0) / 4) };
      const readsBefore = await menuDocumentReads(deployment);
      const [menu, withoutMenu] = await runAlternating(c, [sides[0]!, sides[1]!], bounds);
      const reads = (await menuDocumentReads(deployment)) - readsBefore;
      options.say(
        `menu orders c=${c}: ${menu.rps} orders/s, p50 ${menu.p50Ms} ms, errors ${menu.errors}; without a menu: ` +
          `${withoutMenu.rps} orders/s, p50 ${withoutMenu.p50Ms} ms, errors ${withoutMenu.errors}`,
      );
      rows.push({ ...menu, withoutMenu, menuDocumentReads: reads });
    } finally {
      sides.forEach((side) => side.close());
    }
  }
  return rows;
}

/** The customer's GET /customer/menu: in full, and with If-None-Match of its ETag; the API's CPU per request. */
export async function measureRead(
  deployment: Deployment,
  bounds: LoadBounds,
  say: (line: string) => void,
): Promise<MenuRead> {
  const { locationId } = (await registers(deployment.admin, 1, 'Bench menu read'))[0]!;
  await deployment.admin.putMenu(locationId, largeMenu(MENU_ITEMS));
  const keys = await inBatches(
    READ_CLIENTS,
    4,
    async (i) => (await deployment.admin.createCustomerSession(locationId, i + 1)).apiKey,
  );
  const origin = deployment.apis[0]!.origin;
  const first = await fetch(`${origin}/api/v1/customer/menu`, { headers: { api_key: keys[0]! } });
  const [etag, bytes200] = [first.headers.get('etag')!, Buffer.byteLength(await first.text())];
  const read = (extra: Record<string, string>, status: number) => (client: number) => ({
    method: 'GET',
    path: '/api/v1/customer/menu',
    headers: { api_key: keys[client]!, ...extra },
    status,
  });
  const api = (run: LoadResult) => round(run.cost?.cpuMs.api1 ?? 0, 3);
  // one after the other, not in slices: a slice of 304s would pay for the collection of the 200s' garbage
  const runs = async (c: number) => {
    const full = await runHttp(origin, c, read({}, 200), bounds, deployment.probe());
    const notModified = await runHttp(origin, c, read({ 'if-none-match': etag }, 304), bounds, deployment.probe());
    say(
      `menu read, ${MENU_ITEMS} items (${bytes200} bytes), c=${c}: ${api(full)} ms of API CPU for a 200, ` +
        `${api(notModified)} ms for a 304 (errors ${full.errors + notModified.errors})`,
    );
    return { cpuMs200: api(full), cpuMs304: api(notModified), rps200: full.rps, rps304: notModified.rps };
  };
  const headline = await runs(READ_CLIENTS);
  const { cpuMs200, cpuMs304 } = await runs(1);
  return { items: MENU_ITEMS, bytes200, concurrency: READ_CLIENTS, ...headline, oneClient: { cpuMs200, cpuMs304 } };
}

/** MONGO_URL with its (first) host replaced by the proxy's, connecting to that server alone. */
function throughProxy(mongoUrl: string, proxy: TcpProxy): string {
  const url = mongoUrl.replace(/^(mongodb:\/\/(?:[^@/]*@)?)[^/?]+/, `$1127.0.0.1:${proxy.port}`);
  return `${url}${url.includes('?') ? '&' : url.includes('/', 'mongodb://'.length) ? '?' : '/?'}directConnection=true`;
}

/**
 * One publish, timed, with the bytes sent to MongoDB until its events are in the log (at
 * least one a location, then none for a second; at most 60 s).
 */
async function timedPublish(
  deployment: Deployment,
  proxy: TcpProxy,
  locationIds: string[],
  menu: ReturnType<typeof largeMenu>,
) {
  const worker = `http://127.0.0.1:${deployment.worker.ready[1]}`;
  const recorded = async () => (await scrapeMetrics(worker)).get('pos_events_recorded_total') ?? 0;
  const [events, bytes] = [await recorded(), proxy.bytesFromClients];
  const target = keepAliveTarget(deployment.apis[0]!.origin, 1);
  const started = performance.now();
  const body = JSON.stringify({ locationIds, menu });
  const { status, text } = await httpRequest(target, 'POST', '/admin/v1/menus/publish', {
    headers: { authorization: `Bearer ${deployment.adminToken}` },
    body,
    timeoutMs: PUBLISH_TIMEOUT_MS,
  });
  target.agent.destroy();
  if (status !== 200) throw new Error(`publish: ${status} ${text.slice(0, 200)}`);
  const seconds = round((performance.now() - started) / 1000, 3);
  const until = Date.now() + 60_000;
  for (
    let last = -1, now = await recorded();
    (now < events + locationIds.length || now !== last) && Date.now() < until;
  ) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    [last, now] = [now, await recorded()];
  }
  return { seconds, bytesWritten: proxy.bytesFromClients - bytes };
}

export async function measurePublish(
  backends: Backends,
  locations: number,
  say: (line: string) => void,
): Promise<MenuPublish> {
  const url = /^mongodb:\/\/(?:[^@/]*@)?([^/?,]+)/.exec(backends.mongoUrl)?.[1];
  if (!url) throw new Error('the publish scenario counts bytes through a proxy to a mongodb:// URL');
  const proxy = await TcpProxy.start(`tcp://${url}`);
  const deployment = await deploy(
    'menu-publish',
    { ...backends, mongoUrl: throughProxy(backends.mongoUrl, proxy) },
    { env: PUBLISH_ENV },
  );
  try {
    const ids = (await inBatches(locations, 8, (i) => deployment.admin.createLocation(`Bench publish ${i + 1}`))).map(
      (l) => l.id,
    );
    const menu = largeMenu(MENU_ITEMS);
    const menuBytes = Buffer.byteLength(JSON.stringify(menu));
    const many = await timedPublish(deployment, proxy, ids, menu);
    // another document (other prices), so that it is stored again
    const other = { ...menu, items: menu.items.map((item) => ({ ...item, price: item.price + 1 })) };
    const oneLocation = await timedPublish(deployment, proxy, ids.slice(0, 1), other);
    const bytesPerLocation = round((many.bytesWritten - oneLocation.bytesWritten) / (locations - 1), 0);
    say(
      `menu publish, ${MENU_ITEMS} items (${menuBytes} bytes) to ${locations} locations: ` +
        `${many.seconds} s, ${many.bytesWritten} bytes to MongoDB (${bytesPerLocation} a ` +
        `location); to one: ${oneLocation.seconds} s, ${oneLocation.bytesWritten} bytes`,
    );
    return { locations, items: MENU_ITEMS, menuBytes, ...many, oneLocation, bytesPerLocation };
  } finally {
    await deployment.stop();
    await proxy.close();
  }
}

export async function measureMenus(
  backends: Backends,
  options: { concurrencies: number[]; publishLocations: number; bounds: LoadBounds; say(line: string): void },
): Promise<MenuScenario> {
  const deployment = await deploy('menus', backends, { env: LIFECYCLE_ENV });
  let orders: Pick<MenuScenario, 'menuOrders' | 'menuRead'>;
  try {
    orders = {
      menuOrders: await measureOrders(deployment, options),
      menuRead: await measureRead(deployment, options.bounds, options.say),
    };
  } finally {
    await deployment.stop();
  }
  return { ...orders, menuPublish: await measurePublish(backends, options.publishLocations, options.say) };
}
