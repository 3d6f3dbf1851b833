/**
 * Stored documents and their wire records. The one serialiser of orders and commands:
 * absent values are absent keys (never null), timestamps are ISO-8601 UTC with milliseconds.
 * The record types are derived from their JSON schemas (schemas/responses.ts).
 */
import type { CommandRecord, OperatorOrderRecord, OrderRecord, OrderRow } from '../schemas/responses';
import type { OrderState } from './order-state';
import type { CommandKind } from './commands';

export type { CommandRecord, OperatorOrderRecord, OrderRecord, OrderRow };

export interface OrderDoc {
  _id: string;
  locationId: string;
  number: number;
  state: OrderState;
  /** Grows by one with every write; writes are conditional on the version read. */
  version: number;
  failureCount: number;
  /** Ids of the last jobs applied, so a job re-run after a crash is applied once. */
  appliedJobs: string[];
  rows: OrderRow[];
  guestCount: number;
  tableNumber?: number;
  userNumber?: number;
  /** The customer session that created the order; absent for counter orders. */
  sessionId?: string;
  /** The creating request's identity under an Idempotency-Key, so that its retry finds this order. */
  idempotencyId?: string;
  orderTime?: Date;
  completeTime?: Date;
  failedTime?: Date;
  createdAt: Date;
  updatedAt: Date;
}

export interface CommandDoc {
  _id: string;
  locationId: string;
  number: number;
  kind: CommandKind;
  tableNumber?: number;
  /** The customer session that asked for it (its commands are capped); never on the wire. */
  sessionId?: string;
  /** The creating request's identity under an Idempotency-Key, so that its retry finds this command. */
  idempotencyId?: string;
  createdAt: Date;
  /** A command is live until acknowledged (deleted) or until this moment. */
  expiresAt: Date;
}

export type WorkRecord = OrderRecord | CommandRecord;

export function isOrderRecord(record: WorkRecord): record is OrderRecord {
  return 'rows' in record;
}

/** Copies only the keys whose values are present; called with the record type, so a key the schema lacks does not compile. */
function present<T extends object>(record: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out as T;
}

const iso = (date: Date | undefined): string | undefined => date?.toISOString();

export function toRowRecord(row: OrderRow): OrderRow {
  return present<OrderRow>({
    rowNumber: row.rowNumber,
    productId: row.productId,
    name: row.name,
    quantity: row.quantity,
    unitPrice: row.unitPrice,
    notes: row.notes,
  });
}

export function toOrderRecord(doc: OrderDoc): OrderRecord {
  return present<OrderRecord>({
    number: doc.number,
    state: doc.state,
    tableNumber: doc.tableNumber,
    userNumber: doc.userNumber,
    rows: doc.rows.map(toRowRecord),
    guestCount: doc.guestCount,
    orderTime: iso(doc.orderTime),
    completeTime: iso(doc.completeTime),
    failedTime: iso(doc.failedTime),
  });
}

/** The operator's form of an order record: the record's fields, then `failureCount`. */
export function withFailureCount(record: OrderRecord, failureCount: number): OperatorOrderRecord {
  return { ...record, failureCount };
}

export function toOperatorOrderRecord(doc: OrderDoc): OperatorOrderRecord {
  return withFailureCount(toOrderRecord(doc), doc.failureCount);
}

export function toCommandRecord(doc: CommandDoc): CommandRecord {
  return present<CommandRecord>({
    number: doc.number,
    state: 'PLACED' as const,
    tableNumber: doc.tableNumber,
    ...commandKindFields(doc.kind),
  });
}

function commandKindFields(kind: CommandKind): Pick<CommandRecord, 'readTableState' | 'paymentNumber' | 'exportMainData'> {
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
