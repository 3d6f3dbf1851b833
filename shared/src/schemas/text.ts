/**
 * The text rules and sizes every request schema shares (requests.ts, menu.ts), with no other
 * dependency: the menu's schemas are read by the stored documents' types.
 */
import type Ajv from 'ajv';
import { INSTANT_FORMAT } from './instants';

/**
 * Text that reaches register screens and kitchen printers carries no control characters
 * (escape sequences, NUL), no bidirectional embeddings, overrides or isolates (which reorder
 * what a screen shows), and no lone surrogates (which no printer can encode).
 * A line has no control character at all; a text block (notes, reasons) may hold tabs and newlines.
 */
const UNSAFE_IN_LINE = /[\p{Cc}\p{Cs}\u202A-\u202E\u2066-\u2069]/u;
const UNSAFE_IN_BLOCK = /[\p{Cs}\u202A-\u202E\u2066-\u2069]|(?![\t\n])\p{Cc}/u;
export const TEXT_FORMATS = { line: 'single-line-text', block: 'multi-line-text' } as const;

/** The service's formats (text, instants) on an ajv instance: the request schemas' (requests.ts) and the menu's (menu.ts). */
export function addFormats(on: Ajv): Ajv {
  on.addFormat('date-time', INSTANT_FORMAT);
  on.addFormat(TEXT_FORMATS.line, { type: 'string', validate: (value: string) => !UNSAFE_IN_LINE.test(value) });
  on.addFormat(TEXT_FORMATS.block, { type: 'string', validate: (value: string) => !UNSAFE_IN_BLOCK.test(value) });
  return on;
}

export const LIMITS = {
  rowsPerOrder: 200,
  quantity: 999,
  unitPrice: 100_000_000,
  notesLength: 500,
  textLength: 200,
  productIdLength: 64,
  reasonLength: 1000,
  timestampLength: 40,
  failureThreshold: 1000,
  /** Modifiers of one row, and the locations of one menu publish. */
  modifiersPerRow: 100,
  publishLocations: 1000,
  /** Items on one page of an admin list: when `limit` is absent, and at most. */
  pageDefault: 100,
  pageMax: 1000,
} as const;

/** One line of text, 1 to `maxLength` characters. */
export const line = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength, format: TEXT_FORMATS.line }) as const;
/** Free text over lines, up to `maxLength` characters. */
export const block = (maxLength: number) => ({ type: 'string', maxLength, format: TEXT_FORMATS.block }) as const;
