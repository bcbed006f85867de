// Injectable clock: time rules (restore window, purge) are tested by moving this, not by waiting.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Wall time shifted by an offset the tests control: `advance(8 * DAY_MS)` is "eight days later". */
export class ShiftedClock implements Clock {
  private offsetMs = 0;
  now() {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number) {
    this.offsetMs += ms;
  }
  reset() {
    this.offsetMs = 0;
  }
}

export const DAY_MS = 24 * 60 * 60 * 1000;
