/**
 * The text rules and sizes every request schema shares (requests.ts, menu.ts), with no other
 * dependency: the menu's schemas are read by the stored documents' types.
 */
import type Ajv from 'ajv';
import { INSTANT_FORMAT } from './instants';

/**
 * Text that reaches register screens and kitchen printers carries no control characters
 * (escape sequences, NUL), no bidirectional marks, embeddings, overrides or isolates (which
 * reorder what a screen shows), and no lone surrogates (which no printer can encode).
 * A line has no control character and no line or paragraph separator (U+2028, U+2029) at all;
 * a text block (notes, reasons) may hold tabs and newlines.
 */
const BIDI = '\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069';
export const TEXT_FORMATS = { line: 'single-line-text', block: 'multi-line-text' } as const;
/**
 * What each text format allows, as a JSON Schema `pattern` (ECMA-262 with the `u` flag): the
 * formats' check here, and beside each format in the OpenAPI document, so that a client's own
 * validator refuses what the service refuses.
 */
export const TEXT_PATTERNS: Record<string, string> = {
  [TEXT_FORMATS.line]: `^[^\\p{Cc}\\p{Cs}\\u2028\\u2029${BIDI}]*$`,
  [TEXT_FORMATS.block]: `^(?:[\\t\\n]|[^\\p{Cc}\\p{Cs}${BIDI}])*$`,
};

/**
 * The service's formats (text, instants) on an ajv instance: the request
 * schemas' (requests.ts) and the menu's (menu.ts).
 */
export function addFormats(on: Ajv): Ajv {
  on.addFormat('date-time', INSTANT_FORMAT);
  for (const [format, pattern] of Object.entries(TEXT_PATTERNS)) {
    const allowed = new RegExp(pattern, 'u');
    on.addFormat(format, { type: 'string', validate: (value: string) => allowed.test(value) });
  }
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
export const line = (maxLength: number) =>
  ({ type: 'string', minLength: 1, maxLength, format: TEXT_FORMATS.line }) as const;
/** Free text over lines, up to `maxLength` characters. */
export const block = (maxLength: number) => ({ type: 'string', maxLength, format: TEXT_FORMATS.block }) as const;
