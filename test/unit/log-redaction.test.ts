/**
 * The service's log never carries a key: pino replaces the fields that may hold one, at the top
 * of a line, within the objects logged whole, in credential headers, and in a child's bindings.
 */
import { createLogger } from '@pos/shared/log';

function logged(write: (log: ReturnType<typeof createLogger>) => void): Record<string, unknown> {
  const lines: string[] = [];
  write(createLogger('info', 'pos', { write: (line: string) => lines.push(line) }));
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('the log', () => {
  it('replaces keys and tokens wherever the service may log them, and leaves the rest', () => {
    const line = logged((log) =>
      log.child({ requestId: 'req-1', apiKey: 'pos_child' }).warn(
        {
          api_key: 'pos_top',
          adminToken: 'admin-top',
          audit: { action: 'session.create', apiKey: 'pos_audit' },
          err: { message: 'refused', apiKeySecret: 'secret-err' },
          config: { apiKeySecretPrevious: ['secret-old'] },
          headers: { authorization: 'Bearer admin-header', accept: 'text/event-stream' },
          req: { headers: { api_key: 'pos_header' } },
          orderNumber: 7,
        },
        'something happened',
      ),
    );
    const text = JSON.stringify(line);
    for (const secret of [
      'pos_child',
      'pos_top',
      'admin-top',
      'pos_audit',
      'secret-err',
      'secret-old',
      'admin-header',
      'pos_header',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(line).toMatchObject({
      requestId: 'req-1',
      apiKey: '[REDACTED]',
      api_key: '[REDACTED]',
      audit: { action: 'session.create', apiKey: '[REDACTED]' },
      err: { message: 'refused' },
      headers: { authorization: '[REDACTED]', accept: 'text/event-stream' },
      orderNumber: 7,
      msg: 'something happened',
    });
  });
});
