import { OrderState, isVisibleToRegisters } from '@pos/shared/domain/order-state';
import type { CommandRecord, OrderRecord } from '@pos/shared/domain/records';
import type { LocationEvent } from '@pos/shared/events/location-events';
import { dataLines, eventFrame } from './sse-writer';

/** An event as streams send it: the record serialised once, however many streams get it. */
export interface WorkEvent {
  type: 'order' | 'command';
  number: number;
  /** The order's state; absent on commands. */
  state?: OrderState;
  /** The record as JSON (shared serialiser); also what tells two states of an order apart. */
  data: string;
  /** `data` framed as SSE `data:` lines, so that each stream only adds its id and the type. */
  dataLines: string;
  /** The whole frame by id, built once for all the streams that send it with that id. */
  frames?: Map<string, Buffer>;
}

/** The event's frame with this id: the same Buffer for every stream at the same position. */
export function frameOf(event: WorkEvent, id: string): Buffer {
  let frame = event.frames?.get(id);
  if (!frame) {
    frame = Buffer.from(eventFrame(event.type, id, event.dataLines));
    (event.frames ??= new Map()).set(id, frame);
  }
  return frame;
}

export function orderEvent(record: OrderRecord): WorkEvent {
  const data = JSON.stringify(record);
  return { type: 'order', number: record.number, state: record.state, data, dataLines: dataLines(data) };
}

export function commandEvent(record: CommandRecord): WorkEvent {
  const data = JSON.stringify(record);
  return { type: 'command', number: record.number, data, dataLines: dataLines(data) };
}

/** A pub/sub message, or undefined when it is unreadable. */
export function parseLocationEvent(message: string): LocationEvent | undefined {
  try {
    const event = JSON.parse(message) as LocationEvent;
    return event && typeof event === 'object' && typeof event.type === 'string' ? event : undefined;
  } catch {
    return undefined;
  }
}

/** The stream event of a location event; undefined for what registers do not see. */
export function workEventOf(event: LocationEvent): WorkEvent | undefined {
  if (event.type === 'order') return isVisibleToRegisters(event.record.state) ? orderEvent(event.record) : undefined;
  if (event.type === 'command') return commandEvent(event.record);
  return undefined;
}
