import { redactUrl } from '@pos/shared/log';

describe('redactUrl', () => {
  it.each([
    ['/api/v1/orders/location?api_key=pos_secret', '/api/v1/orders/location?api_key=[REDACTED]'],
    ['/x?a=1&api_key=pos_secret&b=2', '/x?a=1&api_key=[REDACTED]&b=2'],
    ['/x?api%5Fkey=pos_secret', '/x?api%5Fkey=[REDACTED]'],
    ['/x?API_KEY=pos_secret&api_key=other', '/x?API_KEY=[REDACTED]&api_key=[REDACTED]'],
    ['/x?api_key', '/x?api_key=[REDACTED]'],
    ['/x?api_keys=not-a-key', '/x?api_keys=not-a-key'],
    ['/x?bad=%E0%A4%A', '/x?bad=%E0%A4%A'],
    ['/x', '/x'],
  ])('%s', (url, logged) => {
    expect(redactUrl(url)).toBe(logged);
  });
});
