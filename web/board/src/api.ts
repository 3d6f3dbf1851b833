/**
 * The two ways the board talks to the service. A kitchen uses only the register interface,
 * with its location's SERVICE key in `api_key`; an operator only the admin API, with the admin
 * token as a bearer. The secret goes in headers, never in a URL.
 */
import { type CommandRecord, isOrderRecord } from '@pos/shared/domain/records';
import { cursorQuery, type StreamCursor } from '@pos/shared/events/stream-cursor';
import type { LocationView, PresenceView } from '@pos/shared/domain/records';
import type { BoardOrder, WorkRead } from './board-state';
import { request, requestAll } from './http';

export type Mode = 'kitchen' | 'operator';

export interface Credentials {
  mode: Mode;
  /** The SERVICE key (kitchen) or the admin token (operator). */
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
  acknowledge(commandNumber: number): Promise<CommandRecord>;
  /** Operators only: the location (presence and pause) and the registers seen. */
  readStatus?(): Promise<LocationStatus>;
  /** Operators only: pauses the location (customers refused) until `until`, or until resumed. */
  pause?(until?: string): Promise<LocationView>;
  resume?(): Promise<LocationView>;
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
  const call = <T>(method: string, path: string, body?: unknown) => request<T>(method, `${base}${path}`, headers, body).then((a) => a.body);
  const readWork = async (): Promise<WorkRead> => {
    const work = await call<(BoardOrder | CommandRecord)[]>('GET', '/orders/location');
    return {
      placed: work.filter(isOrderRecord),
      commands: work.filter((record): record is CommandRecord => !isOrderRecord(record)),
    };
  };
  return {
    mode: 'kitchen',
    signIn: async () => {
      await readWork();
      return 'Location board';
    },
    stream: (cursor) => ({ url: `${base}/notifications/service/stream${cursorQuery(cursor)}`, headers }),
    readWork,
    setStatus: (n, newState) => call('PUT', `/orders/${n}/statusupdate`, { newState }),
    acknowledge: (n) => call('DELETE', `/commands/${n}`),
  };
}

/** An operator: the admin API, for the chosen location. */
export function operatorApi(secret: string, locationId: string): BoardApi {
  const headers = { authorization: `Bearer ${secret}` };
  const at = `${ADMIN_PREFIX}/locations/${encodeURIComponent(locationId)}`;
  const call = <T>(method: string, path: string, body?: unknown) => request<T>(method, `${at}${path}`, headers, body).then((a) => a.body);
  return {
    mode: 'operator',
    signIn: async () => (await call<{ name: string }>('GET', '')).name,
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
      const [location, presence] = await Promise.all([call<LocationView>('GET', ''), call<PresenceView>('GET', '/presence')]);
      return { location, presence };
    },
    pause: (until) => call('PUT', '/pause', until === undefined ? {} : { until }),
    resume: () => call('DELETE', '/pause'),
  };
}

export function apiFor(credentials: Credentials): BoardApi {
  return credentials.mode === 'kitchen' ? kitchenApi(credentials.secret) : operatorApi(credentials.secret, credentials.locationId ?? '');
}
