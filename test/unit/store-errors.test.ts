import { storeProblem } from '@pos/shared/store/store-errors';

describe('store errors as problems', () => {
  it('answers 503 for a Redis Cluster caught between a lost master and its replica', () => {
    for (const message of [
      'Too many Cluster redirections. Last error: ReplyError: MOVED 5949 127.0.0.1:7001',
      'CLUSTERDOWN The cluster is down',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      'Failed to refresh slots cache.',
      'None of startup nodes is available',
    ]) {
      expect(storeProblem(new Error(message), 'id')).toMatchObject({ status: 503, title: 'Service unavailable' });
    }
    expect(storeProblem(new Error('something else'), 'id')).toBeUndefined();
  });

  it('answers 503 for a Redis command or a MongoDB operation that timed out (a hung server)', () => {
    expect(storeProblem(new Error('Command timed out'), 'id')).toMatchObject({
      status: 503,
      detail: 'id: A backing service did not answer',
    });
    expect(storeProblem(new Error('job look-up did not answer in 250 ms'), 'id')).toMatchObject({ status: 503 });
    for (const name of [
      'MongoNetworkTimeoutError',
      'MongoWaitQueueTimeoutError',
      'MongoServerSelectionError',
      'PoolClearedOnNetworkError',
    ]) {
      expect(storeProblem(Object.assign(new Error('timed out'), { name }), 'id')).toMatchObject({ status: 503 });
    }
  });
});
