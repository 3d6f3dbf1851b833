import { RetryBudget } from '@pos/shared/clients/retry-budget';

describe('the retry budget', () => {
  let now = 1_000_000;
  const budget = () => new RetryBudget({ windowMs: 10_000, percent: 0.1, minPerSecond: 0.2, now: () => now });

  it('allows two retries per 10 s whatever the load, and a tenth of the requests on top', () => {
    const b = budget();
    expect([b.tryWithdraw(), b.tryWithdraw(), b.tryWithdraw()]).toEqual([true, true, false]);
    for (let i = 0; i < 30; i++) b.deposit();
    expect([b.tryWithdraw(), b.tryWithdraw(), b.tryWithdraw(), b.tryWithdraw()]).toEqual([true, true, true, false]);
  });

  it('adds at most about 10 % to a flood of failing requests', () => {
    const b = budget();
    let requests = 0;
    let retries = 0;
    for (let i = 0; i < 1_000; i++) {
      now += 10; // 100 requests a second, every one failing
      b.deposit();
      requests += 1;
      while (b.tryWithdraw()) retries += 1;
    }
    // 10 s of requests: 10 % of them, and the two a window allows
    expect(retries / requests).toBeLessThanOrEqual(0.11);
    expect(retries).toBeGreaterThanOrEqual(95);
  });

  it('forgets what is older than its window', () => {
    const b = budget();
    for (let i = 0; i < 100; i++) b.deposit();
    expect(b.balance()).toBeCloseTo(12);
    now += 11_000;
    expect(b.balance()).toBeCloseTo(2);
    while (b.tryWithdraw());
    now += 11_000;
    expect(b.balance()).toBeCloseTo(2);
  });
});
