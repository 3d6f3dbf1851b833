/**
 * The wire records of stored orders and commands (store/documents.ts). The one serialiser of
 * orders and commands: absent values are absent keys (never null), timestamps are ISO-8601 UTC
 * with milliseconds. The record types are derived from their JSON schemas (schemas/responses.ts).
 */
import type {
  CommandRecord,
  LocationChangeView,
  LocationView,
  OperatorOrderRecord,
  OrderRecord,
  OrderRow,
  PresenceView,
} from '../schemas/responses';
import type { CommandDoc, OrderDoc } from '../store/documents';
import type { CommandKind } from './commands';

export type { CommandRecord, CommandDoc, OperatorOrderRecord, OrderDoc, OrderRecord, OrderRow };
/** The operator's records of a location (presence-and-deadlines): for the board, which reads them. */
export type { LocationChangeView, LocationView, PresenceView };
// the menu as answered and a snooze, for the board (which reads no schema module)
export type { AvailabilityInput, MenuView } from '../schemas/menu';

/** What an order's record is made of: reads for records fetch only these fields. */
export type OrderFields = Pick<
  OrderDoc,
  | 'number'
  | 'state'
  | 'tableNumber'
  | 'userNumber'
  | 'rows'
  | 'guestCount'
  | 'orderTime'
  | 'completeTime'
  | 'failedTime'
>;

/** What a command's record is made of. */
export type CommandFields = Pick<CommandDoc, 'number' | 'kind' | 'tableNumber'>;

export type WorkRecord = OrderRecord | CommandRecord;

export function isOrderRecord(record: WorkRecord): record is OrderRecord {
  return 'rows' in record;
}

const iso = (date: Date | undefined): string | undefined => date?.toISOString();

/*
 * The serialisers build each record key by key, leaving out absent values (undefined or null:
 * never a null on the wire). They run for every record of every poll and event, so they copy
 * nothing else.
 */

export function toRowRecord(row: OrderRow): OrderRow {
  const record: OrderRow = {
    rowNumber: row.rowNumber,
    productId: row.productId,
    name: row.name,
    quantity: row.quantity,
    unitPrice: row.unitPrice,
  };
  if (row.notes != null) record.notes = row.notes;
  if (row.modifiers != null)
    record.modifiers = row.modifiers.map((m) => ({
      productId: m.productId,
      name: m.name,
      quantity: m.quantity,
      unitPrice: m.unitPrice,
    }));
  return record;
}

export function toOrderRecord(doc: OrderFields): OrderRecord {
  const record = { number: doc.number, state: doc.state } as OrderRecord;
  if (doc.tableNumber != null) record.tableNumber = doc.tableNumber;
  if (doc.userNumber != null) record.userNumber = doc.userNumber;
  record.rows = doc.rows.map(toRowRecord);
  record.guestCount = doc.guestCount;
  if (doc.orderTime != null) record.orderTime = iso(doc.orderTime);
  if (doc.completeTime != null) record.completeTime = iso(doc.completeTime);
  if (doc.failedTime != null) record.failedTime = iso(doc.failedTime);
  return record;
}

export function toCommandRecord(doc: CommandFields): CommandRecord {
  const record: CommandRecord = { number: doc.number, state: 'PLACED' };
  if (doc.tableNumber != null) record.tableNumber = doc.tableNumber;
  return Object.assign(record, commandKindFields(doc.kind));
}

/** The operator's form of an order record: the record's fields, then `failureCount`, then `overdue` when it is. */
export function withFailureCount(record: OrderRecord, failureCount: number, overdue?: boolean): OperatorOrderRecord {
  return overdue === true ? { ...record, failureCount, overdue } : { ...record, failureCount };
}

export function toOperatorOrderRecord(
  doc: OrderFields & Pick<OrderDoc, 'failureCount' | 'overdue'>,
): OperatorOrderRecord {
  return withFailureCount(toOrderRecord(doc), doc.failureCount, doc.overdue);
}

function commandKindFields(
  kind: CommandKind,
): Pick<CommandRecord, 'readTableState' | 'paymentNumber' | 'exportMainData'> {
  switch (kind) {
    case 'READ_TABLE_STATE':
      return { readTableState: true };
    case 'REQUEST_BILL':
      return { paymentNumber: 1 };
    case 'EXPORT_DATA':
    case 'FETCH_REMOTE_MENU':
      return { exportMainData: true };
  }
}
