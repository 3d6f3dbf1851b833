/** The typed clients' one error family: how an answer that is not a success becomes its error. */
import { ApiAuthError, ApiError, ApiProblemError, errorFromResponse } from '@pos/shared/clients/errors';
import { RegisterApiError, RegisterAuthError, RegisterProblemError } from '@pos/shared/clients/register/client';

const problem = { type: 'about:blank', title: 'Service unavailable', status: 503, detail: 'Try again', instance: '/x' };

describe('client errors', () => {
  it('reads either 401 of the api_key authentication as an auth error', () => {
    const plain = errorFromResponse(401, 'text/plain; charset=utf-8', '{"error":"Session not valid"}');
    expect(plain).toBeInstanceOf(ApiAuthError);
    expect((plain as ApiAuthError).failure).toBe('session-not-valid');
    const json = errorFromResponse(401, 'application/json', '{"message":"Unauthorized","uid":null}');
    expect((json as ApiAuthError).failure).toBe('unauthorized');
    expect(json.status).toBe(401);
  });

  it('reads a problem body, with Retry-After in milliseconds', () => {
    const error = errorFromResponse(503, 'application/problem+json', JSON.stringify(problem), '2');
    expect(error).toBeInstanceOf(ApiProblemError);
    expect(error).toMatchObject({
      status: 503,
      problem,
      retryAfterMs: 2000,
      message: '503 Service unavailable: Try again',
    });
  });

  it('keeps anything else as it came, with its status', () => {
    const error = errorFromResponse(502, 'text/html', '<h1>Bad gateway</h1>');
    expect(error.constructor).toBe(ApiError);
    expect(error).toMatchObject({ status: 502, text: '<h1>Bad gateway</h1>', problem: undefined });
  });

  it('is the family every client throws: the register client names the same classes', () => {
    expect(RegisterApiError).toBe(ApiError);
    expect(RegisterAuthError).toBe(ApiAuthError);
    expect(RegisterProblemError).toBe(ApiProblemError);
    expect(new ApiAuthError('unauthorized', '')).toBeInstanceOf(ApiError);
  });
});
