/**
 * Dispatch order: two lanes — OTP and TRANSACTIONAL messages before MARKETING ones — and, within a lane, fair turns
 * between organisations (fair queuing). Each message gets a rank in a virtual time that advances as messages are
 * claimed: an organisation's messages are spaced `spacing` apart from the later of its previous one and the rank
 * being served now. A tenant queueing 100,000 messages at once gets ranks stretching far ahead; another tenant's
 * message queued a moment later ranks at the front, next to what is being sent. Claims take the lowest due ranks.
 */
export type Lane = 0 | 1;

export const HIGH_LANE: Lane = 0;
export const LOW_LANE: Lane = 1;

/** A lane as stored (an integer column). */
export function toLane(value: number): Lane {
  return value === LOW_LANE ? LOW_LANE : HIGH_LANE;
}

/** The lane of a channel's messages. */
export function laneOf(flow: string): Lane {
  return flow === 'MARKETING' ? LOW_LANE : HIGH_LANE;
}

/** Share of each claimed batch kept for the low lane when the high lane has more than enough: it never starves. */
export const LOW_LANE_SHARE = 0.1;

/** Of a batch of `limit`, how many places the high lane leaves to the low one when it has more than enough. */
export function lowLaneReserve(limit: number): number {
  return Math.min(limit, Math.max(1, Math.ceil(limit * LOW_LANE_SHARE)));
}

export class FairQueue {
  private readonly last = new Map<string, number>();
  /** The highest rank claimed so far (null until the first claim: the clock stands in for it). */
  private serving: number | null = null;

  constructor(
    /** Virtual time between two messages of one organisation. */
    private readonly spacing = 1,
    /** Organisations remembered; the least recently seen are forgotten (they start afresh). */
    private readonly capacity = 100_000,
  ) {}

  /** Messages up to `rank` were claimed: later ones are ranked from there. */
  served(rank: number): void {
    if (this.serving === null || rank > this.serving) this.serving = rank;
  }

  /** The rank of an organisation's next message (due at `dueAt`), as of `now`. */
  rank(organisationId: string, dueAt: number, now: number): number {
    const floor = this.serving ?? now;
    const previous = this.last.get(organisationId);
    const rank = previous === undefined ? floor : Math.max(floor, previous + this.spacing);
    // A message scheduled for later takes no turn: its due time holds it back, and when due it is at the front.
    if (dueAt > now) return floor;
    this.last.delete(organisationId);
    this.last.set(organisationId, rank);
    if (this.last.size > this.capacity) this.last.delete(this.last.keys().next().value!);
    return rank;
  }
}
