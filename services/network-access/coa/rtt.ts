/**
 * Retransmission timeout from the measured round trip (Jacobson/Karels, as TCP's RFC 6298), per
 * NAS: a router that answers in 30 ms is retried after tens of milliseconds, not after a fixed
 * second, and one that answers in 300 ms is not flooded with duplicates.
 */
export interface RtoBounds {
  /** Timeout before the first reply of a NAS was measured. */
  initialMs: number;
  minMs: number;
  maxMs: number;
}

export const DEFAULT_RTO: RtoBounds = { initialMs: 1000, minMs: 20, maxMs: 5000 };

export class RttEstimator {
  private srtt = 0;
  private rttvar = 0;
  samples = 0;

  constructor(private readonly bounds: RtoBounds = DEFAULT_RTO) {}

  /** One round trip of a request sent once (Karn: a retransmitted request's reply is ambiguous). */
  sample(ms: number): void {
    const r = Math.max(0, ms);
    if (this.samples === 0) {
      this.srtt = r;
      this.rttvar = r / 2;
    } else {
      this.rttvar = 0.75 * this.rttvar + 0.25 * Math.abs(this.srtt - r);
      this.srtt = 0.875 * this.srtt + 0.125 * r;
    }
    this.samples++;
  }

  get smoothedMs(): number {
    return this.srtt;
  }

  /**
   * srtt + 4 x rttvar, but never under 1.5 x srtt: on a steady link the variance decays towards
   * zero, and the event loop's own jitter would then turn every reply into a retransmission.
   */
  rtoMs(): number {
    if (this.samples === 0) return this.bounds.initialMs;
    const rto = Math.max(this.srtt + 4 * this.rttvar, 1.5 * this.srtt);
    return Math.min(this.bounds.maxMs, Math.max(this.bounds.minMs, Math.round(rto)));
  }
}
