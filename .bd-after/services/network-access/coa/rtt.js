"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RttEstimator = exports.DEFAULT_RTO = void 0;
exports.DEFAULT_RTO = { initialMs: 1000, minMs: 20, maxMs: 5000 };
class RttEstimator {
    bounds;
    srtt = 0;
    rttvar = 0;
    samples = 0;
    constructor(bounds = exports.DEFAULT_RTO) {
        this.bounds = bounds;
    }
    /** One round trip of a request sent once (Karn: a retransmitted request's reply is ambiguous). */
    sample(ms) {
        const r = Math.max(0, ms);
        if (this.samples === 0) {
            this.srtt = r;
            this.rttvar = r / 2;
        }
        else {
            this.rttvar = 0.75 * this.rttvar + 0.25 * Math.abs(this.srtt - r);
            this.srtt = 0.875 * this.srtt + 0.125 * r;
        }
        this.samples++;
    }
    get smoothedMs() {
        return this.srtt;
    }
    /**
     * srtt + 4 x rttvar, but never under 1.5 x srtt: on a steady link the variance decays towards
     * zero, and the event loop's own jitter would then turn every reply into a retransmission.
     */
    rtoMs() {
        if (this.samples === 0)
            return this.bounds.initialMs;
        const rto = Math.max(this.srtt + 4 * this.rttvar, 1.5 * this.srtt);
        return Math.min(this.bounds.maxMs, Math.max(this.bounds.minMs, Math.round(rto)));
    }
}
exports.RttEstimator = RttEstimator;
//# sourceMappingURL=rtt.js.map