/**
 * Token bucket for a credential's submit rate: `rate` tokens a second, holding at most `burst` (one second's
 * worth by default). The clock is passed in so tests can stop time.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly rate: number,
    readonly burst: number = rate,
    now: number = Date.now(),
  ) {
    if (!(rate > 0) || !(burst > 0)) throw new RangeError(`rate and burst must be positive, got ${rate}/${burst}`);
    this.tokens = burst;
    this.last = now;
  }

  tryTake(n = 1, now: number = Date.now()): boolean {
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
      this.last = now;
    }
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }
}
