/** Calls `fire` when not re-armed within `ms`: the stream's "nothing arrived for too long". */
export class Watchdog {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly fire: () => void,
  ) {
    this.arm();
  }

  arm(): void {
    // refresh() is cheap, and there is one per chunk on every open stream.
    if (this.timer) this.timer.refresh();
    else this.timer = setTimeout(this.fire, this.ms);
  }

  disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
