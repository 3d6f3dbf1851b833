import { OrderState, isVisibleToRegisters } from '@pos/shared/domain/order-state';
import { type CommandRecord, type OrderRecord, withFailureCount } from '@pos/shared/domain/records';
import type { LocationChange, Announcement } from '@pos/shared/events/announcements';
import type { LocationView } from '@pos/shared/schemas/responses';
import { dataLines, eventFrame } from './sse-writer';

/** What a stream writes of an event: the record as JSON, and that JSON framed as `data:` lines. */
export interface EventData {
  /** The record as JSON (shared serialiser); also what tells two states of an order apart. */
  data: string;
  /** `data` framed as SSE `data:` lines, so that each stream only adds its id and the type. */
  dataLines: string;
  /** The whole frame by id, built once for all the streams that send it with that id. */
  frames?: Map<string, Buffer>;
}

/** The event's frame with this id for an audience: the same Buffer for every such stream at the same position. */
export function encodeFrame(event: StreamFrame, id: string, audience: Audience = 'register'): Buffer {
  const form = dataFor(event, audience);
  let frame = form.frames?.get(id);
  if (!frame) {
    frame = Buffer.from(eventFrame(event.type, id, form.dataLines));
    (form.frames ??= new Map()).set(id, frame);
  }
  return frame;
}

/** Who reads a stream: a register (the interface's records) or an operator (orders with their failure count). */
export type Audience = 'register' | 'operator';

/** An event as streams send it: the record serialised once, however many streams get it. */
export interface StreamFrame extends EventData {
  /** `location`: a location's presence or pause, for operators alone. */
  type: 'order' | 'command' | 'location';
  number: number;
  /** The order's state; absent on commands. */
  state?: OrderState;
  /** The order's version (its write count) when known: a later state has a higher one. */
  version?: number;
  /** An order with its failure count (and overdue mark): what the operator's form is made of. */
  counted?: { record: OrderRecord; failureCount: number; overdue?: boolean };
  /**
   * For operators' streams alone: a location event, or the announcement that an order is overdue
   * (its record, for a register, is one it already has).
   */
  operatorOnly?: boolean;
  /**
   * The operator's form of a counted order (with its `failureCount`), made when an operator's
   * stream first sends it: most events reach register streams only. Streams still tell two
   * states of an order apart by `data`: the count never changes without a timestamp changing.
   */
  operator?: EventData;
}

function framed(data: string): EventData {
  return { data, dataLines: dataLines(data) };
}

/** The data an audience gets of an event: a command, or an order without its count, is the same for both. */
export function dataFor(event: StreamFrame, audience: Audience): EventData {
  const { counted } = event;
  if (audience === 'register' || !counted) return event;
  return (event.operator ??= framed(
    JSON.stringify(withFailureCount(counted.record, counted.failureCount, counted.overdue)),
  ));
}

/** What a stream knows of an order beyond its record: from the stored order, or the pub/sub message. */
export interface OrderFacts {
  failureCount?: number;
  version?: number;
  overdue?: boolean;
}

/**
 * An order's event. Without a failure count (a message from an older node) the operator form is
 * the register's.
 */
export function orderFrame(record: OrderRecord, { failureCount, version, overdue }: OrderFacts = {}): StreamFrame {
  const event: StreamFrame = {
    type: 'order',
    number: record.number,
    state: record.state,
    ...framed(JSON.stringify(record)),
  };
  if (failureCount !== undefined)
    event.counted = overdue === true ? { record, failureCount, overdue } : { record, failureCount };
  if (version !== undefined) event.version = version;
  return event;
}

export function commandFrame(record: CommandRecord): StreamFrame {
  return { type: 'command', number: record.number, ...framed(JSON.stringify(record)) };
}

/** A location's event as operators' streams send it (`event: location`): the location and what changed. */
export function locationFrame(location: LocationView, change: LocationChange): StreamFrame {
  return { type: 'location', number: 0, operatorOnly: true, ...framed(JSON.stringify({ location, change })) };
}

/** A pub/sub message, or undefined when it is unreadable. */
export function parseAnnouncement(message: string): Announcement | undefined {
  try {
    const event = JSON.parse(message) as Announcement;
    return event && typeof event === 'object' && typeof event.type === 'string' ? event : undefined;
  } catch {
    return undefined;
  }
}

/** The stream event of a location event; undefined for what streams do not carry. */
export function frameOfAnnouncement(event: Announcement): StreamFrame | undefined {
  if (event.type === 'order') {
    if (!isVisibleToRegisters(event.record.state)) return undefined;
    const work = orderFrame(event.record, {
      failureCount: typeof event.failureCount === 'number' ? event.failureCount : undefined,
      version: typeof event.version === 'number' ? event.version : undefined,
      overdue: event.overdue === true,
    });
    if (event.operatorOnly === true) work.operatorOnly = true;
    return work;
  }
  if (event.type === 'command') return commandFrame(event.record);
  if (event.type === 'location') return locationFrame(event.location, event.change);
  return undefined;
}
