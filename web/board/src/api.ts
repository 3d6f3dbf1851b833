/**
 * The two ways the board talks to the service. A kitchen uses only the register interface,
 * with its location's SERVICE key in `api_key`; an operator only the admin API, with its token
 * (an operator's, or ADMIN_TOKEN) as a bearer. The secret goes in headers, never in a URL.
 */
import { type CommandRecord, isOrderRecord } from '@pos/shared/domain/records';
import { cursorQuery, type StreamCursor } from '@pos/shared/events/stream-cursor';
import type { LocationView, PresenceView } from '@pos/shared/domain/records';
import type { AvailabilityInput, MenuView } from '@pos/shared/domain/records';
import type { BoardOrder, WorkRead } from './board-state';
import { request, requestAll, RequestError } from './http';

export type Mode = 'kitchen' | 'operator';

/** What `GET /admin/v1/me` answers (the OpenAPI document's CurrentOperator): who the token is. */
interface CurrentOperator {
  name: string;
  role: 'viewer' | 'manager' | 'admin';
  locationIds?: string[];
}

export interface Credentials {
  mode: Mode;
  /** The SERVICE key (kitchen) or an operator's token (ADMIN_TOKEN or an operator account's). */
  secret: string;
  /** The operator's chosen location; a kitchen's key names its own. */
  locationId?: string;
}

/** Where the stream is read from, with the cursor it reconnects with. */
export interface StreamTarget {
  url: string;
  headers: Record<string, string>;
}

export interface BoardApi {
  readonly mode: Mode;
  /** Checks the credentials; the board's title (the location's name; a register key cannot read it). */
  signIn(): Promise<string>;
  stream(cursor: StreamCursor | undefined): StreamTarget;
  readWork(): Promise<WorkRead>;
  setStatus(orderNumber: number, newState: 'COMPLETED' | 'ABORTED'): Promise<BoardOrder>;
  /** Operators only. */
  recover?(orderNumber: number): Promise<BoardOrder>;
  /**
   * Whether the buttons that change things are offered: a kitchen and a
   * manager or admin, not a viewer (once signed in).
   */
  readonly canAct: boolean;
  /** The operator's role, once signed in (docs/operators.md). */
  readonly role?: CurrentOperator['role'];
  acknowledge(commandNumber: number): Promise<CommandRecord>;
  /** Operators only: the location (presence and pause) and the registers seen. */
  readStatus?(): Promise<LocationStatus>;
  /** Operators only: pauses the location (customers refused) until `until`, or until resumed. */
  pause?(until?: string): Promise<LocationView>;
  resume?(): Promise<LocationView>;
  /** The location's menu with each product's availability; undefined when it has none (docs/menu.md). */
  readMenu(): Promise<MenuView | undefined>;
  /** Snoozes a product of the menu, or lifts its snooze. */
  setAvailability(productId: string, availability: AvailabilityInput): Promise<void>;
}

/** A menu read: a 404 is a location without one. */
async function menuOrNone(read: () => Promise<MenuView>): Promise<MenuView | undefined> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof RequestError && err.status === 404) return undefined;
    throw err;
  }
}

export interface LocationStatus {
  location: LocationView;
  presence: PresenceView;
}

/** The admin API's prefix (services/api/src/routes/admin.ts). */
const ADMIN_PREFIX = '/admin/v1';

/** The register interface's base path, which the API writes into the page. */
export function basePath(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="pos-base-path"]')?.content || '/api/v1';
}

/** A kitchen: the register interface, as a register integration uses it. */
export function kitchenApi(secret: string, base = basePath()): BoardApi {
  const headers = { api_key: secret };
  const call = <T>(method: string, path: string, body?: unknown) =>
    request<T>(method, `${base}${path}`, headers, body).then((a) => a.body);
  const readWork = async (): Promise<WorkRead> => {
    const work = await call<(BoardOrder | CommandRecord)[]>('GET', '/orders/location');
    return {
      placed: work.filter(isOrderRecord),
      commands: work.filter((record): record is CommandRecord => !isOrderRecord(record)),
    };
  };
  return {
    mode: 'kitchen',
    canAct: true,
    signIn: async () => {
      await readWork();
      return 'Location board';
    },
    stream: (cursor) => ({ url: `${base}/notifications/service/stream${cursorQuery(cursor)}`, headers }),
    readWork,
    setStatus: (n, newState) => call('PUT', `/orders/${n}/statusupdate`, { newState }),
    acknowledge: (n) => call('DELETE', `/commands/${n}`),
    readMenu: () => menuOrNone(() => call('GET', '/menu')),
    setAvailability: async (productId, availability) => {
      await call('PUT', `/menu/items/${encodeURIComponent(productId)}/availability`, availability);
    },
  };
}

/** An operator: the admin API, for the chosen location. */
export function operatorApi(secret: string, locationId: string): BoardApi {
  const headers = { authorization: `Bearer ${secret}` };
  const at = `${ADMIN_PREFIX}/locations/${encodeURIComponent(locationId)}`;
  const call = <T>(method: string, path: string, body?: unknown) =>
    request<T>(method, `${at}${path}`, headers, body).then((a) => a.body);
  let role: CurrentOperator['role'] | undefined;
  return {
    mode: 'operator',
    get canAct() {
      return role === 'manager' || role === 'admin';
    },
    get role() {
      return role;
    },
    // The location (a 404 outside the token's scope, as a missing one) and who the token is.
    signIn: async () => {
      const [location, me] = await Promise.all([
        call<{ name: string }>('GET', ''),
        request<CurrentOperator>('GET', `${ADMIN_PREFIX}/me`, headers),
      ]);
      role = me.body.role;
      return location.name;
    },
    stream: (cursor) => ({ url: `${at}/stream${cursorQuery(cursor)}`, headers }),
    readWork: async () => {
      const [placed, failed, commands] = await Promise.all([
        requestAll<BoardOrder>(`${at}/orders?state=PLACED`, headers),
        requestAll<BoardOrder>(`${at}/orders?state=FAILED`, headers),
        requestAll<CommandRecord>(`${at}/commands`, headers),
      ]);
      return { placed, failed, commands };
    },
    setStatus: (n, newState) => call('PUT', `/orders/${n}/statusupdate`, { newState }),
    recover: (n) => call('POST', `/orders/${n}/recover`),
    acknowledge: (n) => call('DELETE', `/commands/${n}`),
    readStatus: async () => {
      const [location, presence] = await Promise.all([
        call<LocationView>('GET', ''),
        call<PresenceView>('GET', '/presence'),
      ]);
      return { location, presence };
    },
    pause: (until) => call('PUT', '/pause', until === undefined ? {} : { until }),
    resume: () => call('DELETE', '/pause'),
    readMenu: () => menuOrNone(() => call('GET', '/menu')),
    setAvailability: async (productId, availability) => {
      await call('PUT', `/menu/items/${encodeURIComponent(productId)}/availability`, availability);
    },
  };
}

/** The locations an operator's token may open (its scope; the first 1000), for the sign-in's choices. */
export async function operatorLocations(secret: string): Promise<{ id: string; name: string }[]> {
  return (
    await request<{ id: string; name: string }[]>('GET', `${ADMIN_PREFIX}/locations?limit=1000`, {
      authorization: `Bearer ${secret}`,
    })
  ).body;
}

export function apiFor(credentials: Credentials): BoardApi {
  return credentials.mode === 'kitchen'
    ? kitchenApi(credentials.secret)
    : operatorApi(credentials.secret, credentials.locationId ?? '');
}
