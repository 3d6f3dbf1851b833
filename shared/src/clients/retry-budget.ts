/**
 * A retry budget, as Finagle's and gRPC's (retry throttling) keep one: retries may add at most
 * `percent` of the requests made over the last `windowMs`, plus `minPerSecond` a second whatever the
 * load. A fleet of clients whose every request fails then sends about 10 % more requests, not four
 * times as many: an overload is not turned into a retry storm, and a healthy client's occasional
 * retry is always allowed.
 */
export interface RetryBudgetOptions {
  /** Default 10 s. */
  windowMs?: number;
  /** Default 0.1: retries add at most a tenth of the requests. */
  percent?: number;
  /** Default 0.2: two retries in a 10 s window, however few the requests. */
  minPerSecond?: number;
  now?(): number;
}

/** The window is counted in this many slices. */
const SLICES = 10;

export class RetryBudget {
  private readonly sliceMs: number;
  private readonly allowance: number;
  private readonly percent: number;
  private readonly now: () => number;
  private readonly deposits = new Float64Array(SLICES);
  private readonly withdrawals = new Float64Array(SLICES);
  private head = 0;
  private headSlice = 0;

  constructor(options: RetryBudgetOptions = {}) {
    const windowMs = options.windowMs ?? 10_000;
    this.sliceMs = windowMs / SLICES;
    this.percent = options.percent ?? 0.1;
    this.allowance = (options.minPerSecond ?? 0.2) * (windowMs / 1000);
    this.now = options.now ?? Date.now;
  }

  /** A request is made (its first attempt): it earns `percent` of a retry. */
  deposit(): void {
    this.advance();
    this.deposits[this.head]! += 1;
  }

  /** Whether a retry may be sent now; when it may, it is counted against the budget. */
  tryWithdraw(): boolean {
    this.advance();
    if (this.balance() < 1) return false;
    this.withdrawals[this.head]! += 1;
    return true;
  }

  /** The retries the budget holds now. */
  balance(): number {
    this.advance();
    return this.allowance + this.percent * sum(this.deposits) - sum(this.withdrawals);
  }

  private advance(): void {
    const slice = Math.floor(this.now() / this.sliceMs);
    const steps = Math.min(slice - this.headSlice, SLICES);
    for (let i = 0; i < steps; i++) {
      this.head = (this.head + 1) % SLICES;
      this.deposits[this.head] = 0;
      this.withdrawals[this.head] = 0;
    }
    if (steps > 0) this.headSlice = slice;
  }
}

const sum = (values: Float64Array): number => values.reduce((total, value) => total + value, 0);
