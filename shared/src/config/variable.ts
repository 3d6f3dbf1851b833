/**
 * What every section of the configuration schema is made of: a variable (its JSON Schema, with
 * its description and its default or what leaving it out means), a section, and the shapes and
 * formats several sections share.
 */
import type { JSONSchema } from 'json-schema-to-ts';

/** Durations are written `500ms`, `15s`, `10m`, `12h`, `90d`; a bare number is milliseconds. */
export const DURATION_PATTERN = /^([0-9]+)(ms|s|m|h|d)?$/;
export const DURATION = DURATION_PATTERN.source;

/** The literal types of a constant, as `as const` gives them (a const type parameter; no assertion). */
export const constant = <const T>(value: T): T => value;

/** Switches are written `1` / `0` (or `true` / `false`). */
export const FLAG_VALUES = constant(['0', '1', 'true', 'false']);

/**
 * One variable: its JSON Schema (on the text of the environment; integers are read as integers)
 * with a description, and with either a `default` or `unset`: what leaving it out means, in words
 * (it is shown where the default would be). `minDuration` is a keyword of ours (config.ts): a
 * duration at least this long.
 */
export type ConfigVariable = Exclude<JSONSchema, boolean> & { description: string; minDuration?: string } & (
    { default: string | number; unset?: never } | { default?: never; unset: string }
  );

export interface ConfigSection {
  title: string;
  /** One sentence on what the section sets, above its table. */
  summary: string;
  variables: Record<string, ConfigVariable>;
}

export const defineSections = <const T extends Record<string, ConfigSection>>(sections: T): T => sections;

export const port = constant({ type: 'integer', minimum: 0, maximum: 65535 });
export const name = constant({ type: 'string', pattern: '^[A-Za-z0-9_-]+$' });
export const flag = constant({ type: 'string', enum: FLAG_VALUES, default: '0' });
