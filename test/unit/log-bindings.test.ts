/**
 * A long-lived logger's bindings made one string (an event stream's: flattenBindings) log
 * exactly what they did, keys redacted alike, and what is bound after still adds to them.
 */
import { createLogger, flattenBindings } from '@pos/shared/log';

describe('flattened bindings', () => {
  it('give the same lines as the bindings they replace', () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger('info', 'pos', { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const child = log.child({ requestId: 'req-1', apiKey: 'pos_secret' });
    child.setBindings({ sessionId: 'session-1', locationId: 'location-1' });
    child.info({ n: 1 }, 'before');
    flattenBindings(child);
    child.info({ n: 1 }, 'before');
    child.setBindings({ operatorId: 'operator-1' });
    child.info('after');

    const [before, flattened, after] = lines.map(({ time: _time, ...line }) => line);
    expect(flattened).toEqual(before);
    expect(before).toMatchObject({ service: 'pos', requestId: 'req-1', apiKey: '[REDACTED]', sessionId: 'session-1', locationId: 'location-1' });
    expect(after).toMatchObject({ requestId: 'req-1', sessionId: 'session-1', locationId: 'location-1', operatorId: 'operator-1', msg: 'after' });
  });
});
