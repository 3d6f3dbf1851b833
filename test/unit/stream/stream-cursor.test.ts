import { ProblemError } from '@pos/shared/domain/problem';
import { parseCursor } from '@pos/api/stream/cursor';
import { cursorQuery, formatEventId, furthest, parseEventId, startOf } from '@pos/shared/events/stream-cursor';

function problemOf(fn: () => unknown): ProblemError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error('no problem thrown');
}

describe('stream cursor', () => {
  it('is empty (replay everything) without parameters or header', () => {
    expect(parseCursor({}, '')).toEqual({});
    expect(startOf({})).toEqual({ orderNumber: 0, commandNumber: 0 });
  });

  it('reads orderNumber and commandNumber, each optional', () => {
    expect(parseCursor({ orderNumber: '12', commandNumber: '0' }, '')).toEqual({ orderNumber: 12, commandNumber: 0 });
    expect(parseCursor({ orderNumber: '3' }, '')).toEqual({ orderNumber: 3 });
    expect(parseCursor({ commandNumber: '4' }, '')).toEqual({ commandNumber: 4 });
  });

  it('reads Last-Event-ID, which wins over the query', () => {
    expect(parseCursor({}, '7.2')).toEqual({ orderNumber: 7, commandNumber: 2 });
    expect(parseCursor({ orderNumber: '1', commandNumber: '1' }, '9.5')).toEqual({ orderNumber: 9, commandNumber: 5 });
  });

  it.each([
    [{ orderNumber: '-1' }, 'orderNumber'],
    [{ orderNumber: 'abc' }, 'orderNumber'],
    [{ orderNumber: '1.5' }, 'orderNumber'],
    [{ orderNumber: '' }, 'orderNumber'],
    [{ commandNumber: '1e3' }, 'commandNumber'],
    [{ commandNumber: ['1', '2'] }, 'commandNumber'],
    [{ orderNumber: '99999999999999999999' }, 'orderNumber'],
  ])('rejects %j with a 400 naming %s', (query, name) => {
    const err = problemOf(() => parseCursor(query, ''));
    expect(err.problem.status).toBe(400);
    expect(err.problem.title).toBe('Illegal argument');
    expect(err.problem.detail).toContain(name);
  });

  it.each(['x', '3', '3.', '.3', '-1.2', '1.-2', '1.2.3', '1.5e1'])('rejects Last-Event-ID %j', (id) => {
    const err = problemOf(() => parseCursor({}, id));
    expect(err.problem.status).toBe(400);
    expect(err.problem.detail).toContain('Last-Event-ID');
  });

  it('formats positions as <orderNumber>.<commandNumber>', () => {
    expect(formatEventId({ orderNumber: 12, commandNumber: 3 })).toBe('12.3');
    expect(formatEventId(startOf({ commandNumber: 2 }))).toBe('0.2');
  });

  it('reads an event id back as the position it formats, and nothing else as one', () => {
    expect(parseEventId(formatEventId({ orderNumber: 12, commandNumber: 3 }))).toEqual({
      orderNumber: 12,
      commandNumber: 3,
    });
    for (const id of ['', '3', '1.2.3', ' 1.2', '-1.2', '1.5e1', '1234567890123456.1'])
      expect(parseEventId(id)).toBeUndefined();
  });

  it('reconnects with a query the API reads back as the same cursor', () => {
    expect(cursorQuery(undefined)).toBe('');
    expect(cursorQuery({ orderNumber: 7, commandNumber: 0 })).toBe('?orderNumber=7&commandNumber=0');
    const query = cursorQuery({ orderNumber: 7, commandNumber: 4 });
    expect(query).toBe('?orderNumber=7&commandNumber=4');
    expect(startOf(parseCursor(Object.fromEntries(new URLSearchParams(query)), ''))).toEqual({
      orderNumber: 7,
      commandNumber: 4,
    });
  });

  it('only ever moves forward, number by number', () => {
    expect(furthest(undefined, { orderNumber: 2, commandNumber: 1 })).toEqual({ orderNumber: 2, commandNumber: 1 });
    expect(furthest({ orderNumber: 5, commandNumber: 1 }, { orderNumber: 2, commandNumber: 3 })).toEqual({
      orderNumber: 5,
      commandNumber: 3,
    });
  });
});
