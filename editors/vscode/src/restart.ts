/** Restart a crashed server at most `maxRestarts` times within `windowMs`. */
export class RestartPolicy {
  private readonly times: number[] = [];

  constructor(
    readonly maxRestarts = 4,
    readonly windowMs = 3 * 60_000,
  ) {}

  /** Record a crash at `now`; true when another restart is allowed. */
  allow(now = Date.now()): boolean {
    this.times.push(now);
    while (this.times.length && now - this.times[0] > this.windowMs) this.times.shift();
    return this.times.length <= this.maxRestarts;
  }
}
