/** Why a stream ended (the `stream ended` line's `reason`, `pos_streams_ended_total`'s label). */
export const END_REASONS = [
  'client-gone',
  'timeout',
  'session-closed',
  'session-expired',
  'replaced',
  'key-retired',
  'operator-changed',
  'slow-client',
  'shutdown',
  'resync-failed',
  'failed',
] as const;

export type EndReason = (typeof END_REASONS)[number];
