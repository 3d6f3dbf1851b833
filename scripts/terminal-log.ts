/**
 * Where `npm start` writes its log: on a terminal, one readable line per entry (pino-pretty);
 * anywhere else (a pipe, a file, CI, a container), pino's JSON lines, as the roles write them.
 */
import { prettyFactory } from 'pino-pretty';
import type { LogDestination } from '@pos/shared/log';

/** The output stream, as much of it as the choice needs. */
export interface LogOutput {
  isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * A pretty destination when `out` is a terminal; undefined otherwise, so that the logger keeps
 * pino's own JSON writer. Formatting happens in this process, line by line, and nothing is
 * buffered: a fatal line written just before `process.exit` is still shown.
 */
export function terminalLog(out: LogOutput = process.stdout): LogDestination | undefined {
  if (!out.isTTY) return undefined;
  // One process, one service: its pid and name would only repeat on every line.
  const pretty = prettyFactory({ translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', singleLine: true });
  return { write: (line: string) => void out.write(pretty(line)) };
}
